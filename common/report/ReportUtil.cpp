#include "report/ReportUtil.h"

#include "platform/BuildInfo.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace rsb {

// s in double quotes, its double quotes doubled (a CSV field).
std::string CsvQuote(const std::string& s) {
  std::string q = "\"";
  for (char c : s)
    q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// s with Markdown's table and emphasis characters (| and *) escaped.
std::string MarkdownEscape(const std::string& s) {
  std::string e;
  for (char c : s)
    e += c == '|' || c == '*' ? std::string("\\") + c : std::string(1, c);
  return e;
}

// One line of a text table: cell i left-aligned in -width[i] columns where width[i] < 0, else
// right-aligned in width[i]; a space between cells, none at the end.
std::string AlignedRow(const std::vector<int>& width, const std::vector<std::string>& cells) {
  std::string s;
  for (size_t i = 0; i < cells.size(); ++i) {
    const int w = width[i];
    s += (i ? " " : "") +
         (w < 0 ? fmt::format("{:<{}}", cells[i], -w) : fmt::format("{:>{}}", cells[i], w));
  }
  while (!s.empty() && s.back() == ' ')
    s.pop_back();
  return s + "\n";
}

std::string MarkdownRow(const std::vector<std::string>& cells) {
  std::string s = "|";
  for (const auto& c : cells)
    s += " " + MarkdownEscape(c) + " |";
  return s + "\n";
}

std::string KindOrDash(const Result& r) {
  return r.fields.empty() ? "-" : FieldsText(r);
}

std::string FieldColumns(const std::vector<std::string>& fields) {
  std::string s;
  for (const auto& f : fields)
    s += f + ",";
  return s;
}

std::string FieldCells(const Result& r, const std::vector<std::string>& fields) {
  std::string s;
  for (const auto& f : fields) {
    const auto it = r.fields.find(f);
    const std::string v = it != r.fields.end() ? it->second : "";
    s += (v.find_first_of(",\"\r\n") != std::string::npos ? CsvQuote(v) : v) + ",";
  }
  return s;
}

// "mask-width=5": a result's task parameters in one field ("-" without any).
std::string ParamsText(const Result& r) {
  std::string s;
  for (const auto& [name, value] : r.params)
    s += fmt::format("{}{}={}", s.empty() ? "" : ";", name, value);
  return s.empty() ? "-" : s;
}

// True when a result has task parameters (a convolution's mask width): the tables get a
// column for them.
bool AnyParams(const std::vector<Result>& results) {
  for (const auto& r : results)
    if (!r.params.empty())
      return true;
  return false;
}

nlohmann::json SuiteJson() {
  const BuildInfo& b = ThisBuild();
  return {{"version", b.version},
          {"git_revision", b.gitRevision},
          {"build_type", b.buildType},
          {"compiler", b.compiler},
          {"cxx_flags", b.cxxFlags}};
}

// The timer check's verdict and, beside it, the clock that timed the ceilings and the cases
// (`clock`: "events", "host", or "" where none did) with its resolution; null for --check.
nlohmann::json TimerJson(const DeviceRun& run) {
  const TimerVerdict& t = run.ceilings.timer;
  if (!t.checked)
    return nullptr;
  const std::string clock = t.Clock();
  return {{"usable", t.usable},
          {"reason", t.reason},
          {"mode", ToString(t.mode)},
          {"clock", clock},
          {"resolution_ns", ClockResolutionNs(clock, run.info.profilingResolutionNs)},
          {"device_resolution_ns", run.info.profilingResolutionNs}};
}

nlohmann::json DeviceJson(const DeviceRun& run) {
  const DeviceInfo& d = run.info;
  const Ceilings& c = run.ceilings;
  return {{"platform", d.platform},
          {"name", d.name},
          {"vendor", d.vendor},
          {"type", d.type},
          {"driver_version", d.driverVersion},
          {"device_version", d.deviceVersion},
          {"opencl_c_version", d.openclCVersion},
          {"compute_units", d.computeUnits},
          {"global_mem_bytes", d.globalMemBytes},
          {"max_alloc_bytes", d.maxAllocBytes},
          {"local_mem_bytes", d.localMemBytes},
          {"max_work_group_size", d.maxWorkGroupSize},
          {"fp64", d.fp64},
          // 32: the single-pass scan used its warp-shuffle code path (0: not reported)
          {"nv_warp_size", d.nvWarpSize},
          {"global_mem_cache_bytes", d.globalMemCacheBytes},
          {"copy_gbytes_s", c.copyGBs},
          {"ceilings",
           {{"read_gbytes_s", c.readGBs},
            {"write_gbytes_s", c.writeGBs},
            {"copy_gbytes_s", c.copyGBs},
            {"buffer_bytes", c.bufferBytes},
            {"near_cache_read_gbytes_s", c.near.readGBs},
            {"near_cache_write_gbytes_s", c.near.writeGBs},
            {"near_cache_copy_gbytes_s", c.near.copyGBs},
            {"near_cache_buffer_bytes", c.nearBufferBytes}}},
          // Checked before a timed run (null for --check): unusable, no case was timed.
          {"timer", TimerJson(run)}};
}

nlohmann::json ResultDeviceJson(const RunInfo& info, const Result& r) {
  const DeviceInfo& d = DeviceOf(info, r).info;
  return {{"index", r.device},
          {"name", d.name},
          {"driver_version", d.driverVersion},
          {"platform", d.platform}};
}

// The device a result ran on (the first, should its index be out of range).
const DeviceRun& DeviceOf(const RunInfo& info, const Result& r) {
  static const DeviceRun none;
  if (info.devices.empty())
    return none;
  return info.devices[r.device < info.devices.size() ? r.device : 0];
}

// The results that ran on device d, in order.
std::vector<Result> ResultsOn(const RunInfo& info, const std::vector<Result>& results, size_t d) {
  std::vector<Result> out;
  for (const auto& r : results)
    if (&DeviceOf(info, r) == &info.devices[d])
      out.push_back(r);
  return out;
}

std::string EscapeMarkup(const std::string& text) {
  std::string out;
  for (unsigned char c : text)
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c < 0x20 && c != '\n' && c != '\t' && c != '\r' ? '?' : char(c);
    }
  return out;
}

// "device: NAME (PLATFORM), ...": "device 1: ..." where the run has several devices.
std::string DeviceLine(const RunInfo& info, size_t index) {
  const DeviceInfo& d = info.devices[index].info;
  return fmt::format("device{}: {} ({}), driver {}, {}, {} CUs",
                     info.devices.size() > 1 ? fmt::format(" {}", index) : "", d.name, d.platform,
                     d.driverVersion, d.openclCVersion, d.computeUnits);
}

// The columns of the table and the Markdown table, one row per result; untimed cells are "-".
const std::vector<std::string> kColumns = {"task",    "variant", "type",   "op",        "kind",
                                           "n",       "local",   "status", "median ms", "+-ci",
                                           "Gelem/s", "GB/s",    "util",   "launches"};

std::vector<std::string> CaseCells(const Result& r) {
  return {r.task,
          r.variant,
          ToString(r.type),
          ToString(r.op),
          KindOrDash(r),
          SizeText(r.n, r.height),
          r.localSize ? std::to_string(r.localSize) : "-"};
}

// "512%?": a utilisation and its mark (c: fits in the cache; ?: suspect, SetUtilisation).
std::string UtilText(double util, const char* mark) {
  return fmt::format("{:.0f}%{}", 100 * util, mark);
}

// "*" after a median whose 95% interval is wider than the target (it stopped at the time budget
// or the iteration cap first).
std::vector<std::string> Cells(const Result& r, bool params) {
  const bool timed = r.status == Status::Passed && r.iterations > 0;
  const bool ci = timed && r.timeMs.ciHigh > 0 && r.timeMs.median > 0;
  const double halfWidth =
      ci ? std::max(r.timeMs.median - r.timeMs.ciLow, r.timeMs.ciHigh - r.timeMs.median) /
               r.timeMs.median
         : 0;
  const char* mark = r.fitsInCache ? "c" : r.utilisationSuspect.empty() ? "" : "?";
  std::vector<std::string> cells = CaseCells(r);
  cells.insert(
      cells.end(),
      {ToString(r.status),
       timed ? fmt::format("{:.4f}{}", r.timeMs.median, r.ciMet ? "" : "*") : "-",
       ci ? fmt::format("{:.1f}%", 100 * halfWidth) : "-",
       timed ? fmt::format("{:.2f}", r.gelemS) : "-",
       timed ? fmt::format("{:.1f}", r.gbytesS) : "-",
       timed && r.utilisation > 0 ? UtilText(r.utilisation, mark) : "-",
       r.cost.launches ? fmt::format("{}", r.cost.launches) : "-", params ? ParamsText(r) : ""});
  return cells;
}

// kColumns, and "params" where a result has task parameters.
std::vector<std::string> Columns(bool params) {
  std::vector<std::string> c = kColumns;
  c.push_back(params ? "params" : "");
  return c;
}

std::string CeilingsLine(const Ceilings& c) {
  std::string line = fmt::format(
      "ceilings (GB/s, bytes read + written, {} MiB streams): read {:.1f}, write {:.1f}, copy "
      "{:.1f}",
      c.bufferBytes >> 20, c.readGBs, c.writeGBs, c.copyGBs);
  if (c.nearBufferBytes)
    line +=
        fmt::format("; {} MiB streams, for smaller inputs: read {:.1f}, write {:.1f}, copy {:.1f}",
                    c.nearBufferBytes >> 20, c.near.readGBs, c.near.writeGBs, c.near.copyGBs);
  return line;
}

// Which clock times the device's cases and ceilings, said once above them; where the device's
// timer cannot be trusted, why.
std::string TimerLine(const DeviceRun& device) {
  const TimerVerdict& t = device.ceilings.timer;
  const std::string clock = t.Clock();
  if (clock.empty())
    return fmt::format("timer: {}: every case validated, none timed",
                       TimerUnusable(device.info.name, t));
  const std::string line = fmt::format(
      "timer: {} ({}, resolution {} ns)", clock,
      clock == "host" ? "the host's monotonic clock around a finished queue" : "profiling events",
      ClockResolutionNs(clock, device.info.profilingResolutionNs));
  return t.usable ? line : line + ": " + TimerUnusable(device.info.name, t);
}

// What the table's marks mean, and every case that did not pass, with its message.
std::string CountLine(const std::vector<Result>& results) {
  std::map<Status, size_t> n;
  for (const auto& r : results)
    ++n[r.status];
  std::string line = fmt::format("{} passed, {} failed", n[Status::Passed], n[Status::Failed]);
  const auto more = [&](Status s, const char* one, const char* many) {
    if (n[s])
      line += fmt::format(", {} {}", n[s], n[s] == 1 ? one : many);
  };
  more(Status::Skipped, "skipped", "skipped");
  more(Status::Error, "error", "errors");
  more(Status::Timeout, "timeout", "timeouts");
  more(Status::Untimed, "untimed", "untimed");
  return line;
}

void WriteNotes(std::ostream& out, const RunInfo& info, const DeviceRun& device,
                const std::vector<Result>& results, const std::string& bullet) {
  bool missed = false;
  for (const auto& r : results)
    missed = missed || (r.status == Status::Passed && r.iterations > 0 && !r.ciMet);
  bool header = false;
  bool cached = false, suspect = false;
  for (const auto& r : results) {
    cached = cached || (r.utilisation > 0 && r.fitsInCache);
    suspect = suspect || !r.utilisationSuspect.empty();
    for (const auto& k : r.breakdown.kernels)
      suspect = suspect || !k.utilisationSuspect.empty();
  }
  if (device.ceilings.Known()) {
    out << fmt::format(
        "\n{}util: the bytes that must cross the memory interface (every write, every distinct "
        "read: not the reads that repeat one the cache can serve, nor the reads of what the "
        "launch before wrote where it fits in the last-level cache) per second, over the ceiling "
        "of the variant's own traffic (reads only: read; as many writes as reads: copy; a mix: "
        "both in turn; an input smaller than the ceilings' large streams against the faster of "
        "those and the streams just past twice the cache){}{}\n",
        bullet,
        cached ? fmt::format("; c: its input is at most twice the {} MiB last-level cache, so "
                             "a part of it can stay cached between runs and it may pass the "
                             "memory ceilings",
                             device.info.globalMemCacheBytes >> 20)
               : "",
        suspect ? "; ?: " + UtilisationSuspectReason(device.info) : "");
    header = true;
  }
  if (missed) {
    out << fmt::format(
        "\n{}{} the median's 95% interval is wider than +-{:.1f}%: timing stopped at the time "
        "budget or the iteration cap first (--time-budget, --iterations)\n",
        bullet, bullet.empty() ? "*" : "\\*", 100 * (info.ciTarget > 0 ? info.ciTarget : 0.01));
    header = true;
  }
  // A passed case is listed only under --oclgrind, with its instruction count; untimed ones
  // are said once, in the timer line. The table (no bullet, for a person at a terminal) lists
  // cases alike once, the first with how many more there are (GroupAlike); Markdown each.
  std::vector<const Result*> listed;
  for (const auto& r : results)
    if (!((r.status == Status::Passed && !r.oclgrind) || r.status == Status::Untimed))
      listed.push_back(&r);
  std::vector<AlikeGroup> groups;
  if (bullet.empty())
    groups = GroupAlike(listed);
  else
    for (size_t i = 0; i < listed.size(); ++i)
      groups.push_back({i, 1});
  if (!groups.empty() && !header)
    out << "\n";
  for (const AlikeGroup& g : groups) {
    const Result& r = *listed[g.first];
    out << fmt::format("{}{} {}{}: {}\n", bullet, ToString(r.status), CaseLabel(r),
                       AlikeText(g.count), r.message);
  }
}

}  // namespace rsb
