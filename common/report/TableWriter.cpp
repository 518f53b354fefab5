#include "report/ReportUtil.h"

#include <fmt/format.h>

#include <algorithm>

namespace rsb {

namespace {

std::string PhaseText(const std::string& phase) {
  return phase == "prepare" ? "untimed, before each run" : "untimed, before the validated run";
}

// The indented lines under a case in the table: each kernel (time in the median run, share of
// the median span, GB/s and utilisation from its own traffic, launches), then the gaps, aligned
// with the case's columns (the share under Gelem/s).
void WriteBreakdownLines(std::ostream& out, const Result& r) {
  const Breakdown& b = r.breakdown;
  for (const auto& k : b.kernels)
    out << fmt::format("  {:<70} {:>11.4f} {:>6} {:>8.1f}% {:>8.1f} {:>5} {:>8}\n", k.kernel,
                       k.timeMs, "", 100 * k.share, k.gbytesS,
                       k.bandwidthUtil > 0
                           ? UtilText(k.bandwidthUtil, k.utilisationSuspect.empty() ? "" : "?")
                           : "-",
                       k.launches);
  const double span = r.timeMs.median;
  out << fmt::format("  {:<70} {:>11.4f} {:>6} {:>8.1f}% {:>8} {:>5}\n",
                     "gaps (queue idle between commands)", b.gapsMs, "",
                     span > 0 ? 100 * b.gapsMs / span : 0.0, "-", "-");
  for (const auto& u : b.untimed)
    out << fmt::format("  {:<70} {:>11.4f} {:>6} {:>9} {:>8} {:>5} {:>8}\n",
                       fmt::format("{} ({})", u.command, PhaseText(u.phase)), u.timeMs, "", "-",
                       "-", "-", u.launches);
}

}  // namespace

void WriteTable(std::ostream& out, const RunInfo& info, const std::vector<Result>& all,
                bool breakdown) {
  for (size_t d = 0; d < info.devices.size(); ++d) {
    const std::vector<Result> results = ResultsOn(info, all, d);
    if (d)
      out << "\n";
    out << DeviceLine(info, d) << "\n";
    if (d == 0 && !info.kernelDir.empty())
      out << "kernels: " << info.kernelDir << "\n";
    if (info.devices[d].ceilings.Known())
      out << CeilingsLine(info.devices[d].ceilings) << "\n";
    if (info.devices[d].ceilings.timer.Unusable())
      out << TimerLine(info.devices[d]) << "\n";
    if (info.cold)
      out << "cold: the last-level cache flushed before every timed run\n";
    out << "\n";
    // Left-aligned text, right-aligned numbers; widths as before plus the interval.
    // The task column as wide as the longest task name; the last one, params, only if any.
    std::vector<int> width = {-10, -14, -6, -4, -9, 10, 5, -7, 11, 6, 9, 8, 5, 8, 0};
    for (const auto& r : results)
      width[0] = std::min(width[0], -int(r.task.size()));
    const bool params = AnyParams(results);
    auto line = [&](const std::vector<std::string>& cells) { out << AlignedRow(width, cells); };
    line(Columns(params));
    bool anyBreakdown = false;
    for (const auto& r : results) {
      line(Cells(r, params));
      if (breakdown && r.status == Status::Passed && r.iterations > 0 && !r.breakdown.Empty()) {
        WriteBreakdownLines(out, r);
        anyBreakdown = true;
      }
    }
    if (anyBreakdown)
      out << "\nindented: each kernel's time in the median run, its share of the median span (in "
             "the Gelem/s column),\nGB/s and utilisation from its own traffic (against the case's "
             "ceiling), and launches; kernel\ntimes plus gaps are the median span\n";
    WriteNotes(out, info, info.devices[d], results, "");
  }
  out << "\n" << CountLine(all) << "\n";
}

}  // namespace rsb
