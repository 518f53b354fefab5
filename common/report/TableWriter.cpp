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

void WriteResultsTable(std::ostream& out, const RunInfo& info, const std::vector<Result>& all,
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
    if (info.devices[d].ceilings.timer.checked)
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

void WriteExplainTable(std::ostream& out, const RunInfo& info,
                       const std::vector<Explanation>& all) {
  out << kExplainTitle << "\n";
  for (size_t d = 0; d < info.devices.size(); ++d) {
    const std::vector<Explanation> cases = ExplanationsOn(info, all, d);
    out << "\n" << DeviceLine(info, d) << "\n\n";
    std::vector<int> width = {-10, -14, -6, -4, -9, 10, 5, 8, 6, 13, 7, 11, 13, 8, -8, -8, 13, 0};
    for (const auto& e : cases)
      width[0] = std::min(width[0], -int(e.c.task.size()));
    const bool params = AnyParams(cases);
    auto line = [&](const std::vector<std::string>& cells) { out << AlignedRow(width, cells); };
    line(ExplainColumns(params));
    for (const auto& e : cases)
      line(ExplainCells(e, params));
    WriteExplainNotes(out, cases, "");
  }
  out << "\n";
  for (const auto& [term, meaning] : ExplainLegend())
    out << term << ": " << meaning << "\n";
}

// compare's table: the files, what ratio and change mean, a row per case in both, the cases in one
// file only, the notes and the summary.
void WriteCompareTable(std::ostream& out, const CompareReport& report) {
  const Comparison& c = report.comparison;
  out << fmt::format("BASE: {}: {}\n", report.base.path, DeviceList(report.base.devices));
  out << fmt::format("NEW:  {}: {}\n", report.fresh.path, DeviceList(report.fresh.devices));
  out << kRatioMeaning << ";\n" << CompareRule(c, report.settings) << "\n\n";
  const char* row =
      "{:<10} {:<14} {:<6} {:<4} {:<9} {:>10} {:>7} {:>10} {:<24} {:>10} {:<24} {:>8} {:<7} {}";
  auto line = [&](std::string text) {
    text.erase(text.find_last_not_of(' ') + 1);
    out << text << "\n";
  };
  line(fmt::format(row, "task", "variant", "type", "op", "kind", "n", "local", "BASE ms",
                   "BASE 95% CI", "NEW ms", "NEW 95% CI", "ratio", "change", "note"));
  for (const auto& m : c.matched)
    line(fmt::format(row, m.base.result.task, m.base.result.variant, ToString(m.base.result.type),
                     ToString(m.base.result.op), KindOrDash(m.base.result), m.base.result.n,
                     LocalText(m), JudgedMsText(m, false), JudgedCiText(m, false),
                     JudgedMsText(m, true), JudgedCiText(m, true), RatioText(m), ToString(m.change),
                     NoteWithExtra(m)));
  if (c.matched.empty())
    out << "(no case in both files)\n";
  auto list = [&](const char* title, const std::vector<StoredResult>& v) {
    if (v.empty())
      return;
    out << fmt::format("\nonly in {} ({}):\n", title, v.size());
    for (const auto& r : v)
      out << fmt::format("  {}{}\n", r.Label(), OnDevice(r, report));
  };
  list("BASE", c.onlyBase);
  list("NEW", c.onlyNew);
  if (!c.notes.empty())
    out << "\n";
  for (const auto& n : c.notes)
    out << "note: " << n << "\n";
  out << "\n" << CompareSummaryLine(c, report.settings) << "\n";
}

// --list-variants for a person: a line a variant, as it has always read.
void WriteVariantsTable(std::ostream& out, const std::vector<VariantListing>& rows) {
  for (const auto& r : rows)
    out << fmt::format("{:<11} {:<14} {}\n", r.task, r.variant, r.description);
}

// For a person at the terminal: aligned columns, the marks' legend under them.
class TablePrinter : public Printer {
 public:
  explicit TablePrinter(const PrinterOptions& options) : options_(options) {}
  void Results(std::ostream& out, const RunInfo& info,
               const std::vector<Result>& results) const override {
    WriteResultsTable(out, info, results, options_.breakdown);
  }
  void Explain(std::ostream& out, const RunInfo& info,
               const std::vector<Explanation>& cases) const override {
    WriteExplainTable(out, info, cases);
  }
  void Compare(std::ostream& out, const CompareReport& report) const override {
    WriteCompareTable(out, report);
  }
  void Variants(std::ostream& out, const std::vector<VariantListing>& rows) const override {
    WriteVariantsTable(out, rows);
  }
  bool ForTerminal() const override { return true; }

 private:
  PrinterOptions options_;
};

}  // namespace

std::unique_ptr<Printer> MakeTablePrinter(const PrinterOptions& options) {
  return std::make_unique<TablePrinter>(options);
}

}  // namespace rsb
