#include "report/Report.h"

#include "platform/BuildInfo.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace rsb {

namespace {

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

std::string KindOrDash(const Result& r) {
  return r.scanKind ? ToString(*r.scanKind) : "-";
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

// "scan-cpu-items=65536;scan-gpu-items=32": a result's tuning values in one CSV field.
std::string TuningText(const Result& r) {
  std::string s;
  for (const auto& [name, value] : r.tuning)
    s += fmt::format("{}{}={}", s.empty() ? "" : ";", name, value);
  return s;
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
          {"timer", c.timer.checked
                        ? nlohmann::json{{"usable", c.timer.usable}, {"reason", c.timer.reason}}
                        : nlohmann::json()}};
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

std::string PhaseText(const std::string& phase) {
  return phase == "prepare" ? "untimed, before each run" : "untimed, before the validated run";
}

}  // namespace

namespace {

// The columns of the table and the Markdown table, one row per result; untimed cells are "-".
const std::vector<std::string> kColumns = {"task",    "variant", "type",   "op",        "kind",
                                           "n",       "local",   "status", "median ms", "+-ci",
                                           "Gelem/s", "GB/s",    "util",   "launches"};

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
  return {r.task,
          r.variant,
          ToString(r.type),
          ToString(r.op),
          KindOrDash(r),
          SizeText(r.n, r.height),
          r.localSize ? std::to_string(r.localSize) : "-",
          ToString(r.status),
          timed ? fmt::format("{:.4f}{}", r.timeMs.median, r.ciMet ? "" : "*") : "-",
          ci ? fmt::format("{:.1f}%", 100 * halfWidth) : "-",
          timed ? fmt::format("{:.2f}", r.gelemS) : "-",
          timed ? fmt::format("{:.1f}", r.gbytesS) : "-",
          timed && r.utilisation > 0 ? UtilText(r.utilisation, mark) : "-",
          r.cost.launches ? fmt::format("{}", r.cost.launches) : "-",
          params ? ParamsText(r) : ""};
}

// kColumns, and "params" where a result has task parameters.
std::vector<std::string> Columns(bool params) {
  std::vector<std::string> c = kColumns;
  c.push_back(params ? "params" : "");
  return c;
}

// "device: NAME (PLATFORM), ...": "device 1: ..." where the run has several devices.
std::string DeviceLine(const RunInfo& info, size_t index) {
  const DeviceInfo& d = info.devices[index].info;
  return fmt::format("device{}: {} ({}), driver {}, {}, {} CUs",
                     info.devices.size() > 1 ? fmt::format(" {}", index) : "", d.name, d.platform,
                     d.driverVersion, d.openclCVersion, d.computeUnits);
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

// Where the device's timer cannot be trusted: said once, above its cases.
std::string TimerLine(const DeviceRun& device) {
  return fmt::format("timer: {}: every case validated, none timed",
                     TimerUnusable(device.info.name, device.ceilings.timer));
}

// What the table's marks mean, and every case that did not pass, with its message.
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
  for (const auto& r : results) {
    // A passed case is listed only under --oclgrind, with its instruction count; untimed ones
    // are said once, in the timer line.
    if ((r.status == Status::Passed && !r.oclgrind) || r.status == Status::Untimed)
      continue;
    if (!header)
      out << "\n";
    header = true;
    out << fmt::format("{}{} {}: {}\n", bullet, ToString(r.status), CaseLabel(r), r.message);
  }
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
}

void WriteMarkdown(std::ostream& out, const RunInfo& info, const std::vector<Result>& all) {
  for (size_t d = 0; d < info.devices.size(); ++d) {
    const std::vector<Result> results = ResultsOn(info, all, d);
    if (d)
      out << "\n";
    out << MarkdownEscape(DeviceLine(info, d));
    if (info.devices[d].ceilings.Known())
      out << "; " << CeilingsLine(info.devices[d].ceilings);
    if (info.devices[d].ceilings.timer.Unusable())
      out << "; " << MarkdownEscape(TimerLine(info.devices[d]));
    out << (info.cold ? "; cold cache" : "") << "\n\n";
    auto row = [&](const std::vector<std::string>& cells) {
      out << "|";
      for (const auto& c : cells)
        out << " " << MarkdownEscape(c) << " |";
      out << "\n";
    };
    const bool params = AnyParams(results);
    auto cells = [&](std::vector<std::string> c) {
      if (!params)
        c.pop_back();
      return c;
    };
    const std::vector<std::string> columns = cells(Columns(params));
    row(columns);
    out << "|";
    for (size_t i = 0; i < columns.size(); ++i)
      out << (i < 5 || i == 7 || i == kColumns.size() ? "---|" : "--:|");
    out << "\n";
    for (const auto& r : results)
      row(cells(Cells(r, params)));
    WriteNotes(out, info, info.devices[d], results, "- ");
  }
}

// One table for CSV tools: a row per case (the `kernel` column empty), followed by a row per
// kernel of its breakdown (kernel_phase `run`) and per command outside the span (`prepare`:
// before every timed run; `validation`: before the validated run), each repeating the case's
// keys (device to status, code path to tuning) and filling the kernel_* columns, the case's
// measurements left empty. Case rows: an empty `kernel`; a case's kernel times: its rows of
// phase `run`, whose kernel_time_ms plus the case's gaps_ms are its time_ms_median.
void WriteCsv(std::ostream& out, const RunInfo& info, const std::vector<Result>& results) {
  const BuildInfo& b = ThisBuild();
  std::string files;
  for (const auto& [name, hash] : info.kernelHashes)
    files += fmt::format("{}{}={}", files.empty() ? "" : ";", name, hash);
  // The first 32 columns as they have always been (scripts cut by position), then the breakdown
  // (33-42: a case row has an empty `kernel`, column 34), then every other field of the JSON
  // document: the case's (empty on kernel rows), then the run's and its device's, repeated on
  // every row (the device's own where the run has several).
  auto runFieldsOf = [&](const DeviceRun& run) {
    const DeviceInfo& d = run.info;
    const Ceilings& c = run.ceilings;
    return fmt::format(
        "{},{},{},{},{},{},{},{},{},{:.3f},{},{},{},{},{},{},{},{:.3f},{:.3f},{},{},{:.3f},{:.3f},"
        "{:.3f},{}",
        CsvQuote(d.platform), CsvQuote(d.vendor), d.type, CsvQuote(d.deviceVersion),
        CsvQuote(d.openclCVersion), d.computeUnits, d.globalMemBytes, d.localMemBytes,
        d.maxWorkGroupSize, c.copyGBs, CsvQuote(b.version), CsvQuote(b.gitRevision),
        CsvQuote(b.buildType + "; " + b.compiler + "; " + b.cxxFlags), CsvQuote(info.date),
        CsvQuote(info.host), CsvQuote(info.command), CsvQuote(files), c.readGBs, c.writeGBs,
        c.bufferBytes, c.nearBufferBytes, c.near.readGBs, c.near.writeGBs, c.near.copyGBs,
        d.globalMemCacheBytes);
  };
  out << "device,driver_version,task,variant,type,op,scan_kind,n,local_size,status,message,"
         "iterations,time_ms_median,time_ms_min,time_ms_max,time_ms_mean,time_ms_stddev,"
         "gelem_s,gbytes_s,bytes_moved,bytes_read,bytes_written,bandwidth_util,launches,steps,ops,"
         "launches_enqueued,validated_runs,code_path,portable,lookback_fallback,tuning,gaps_ms,"
         "kernel,kernel_phase,kernel_launches,kernel_time_ms,kernel_time_ms_median,kernel_share,"
         "kernel_bytes_moved,kernel_gbytes_s,kernel_bandwidth_util,"
         "time_ms_ci_low,time_ms_ci_high,ci_met,ci_target,cold,"
         "ceiling,ceiling_gbytes_s,utilisation,fits_in_cache,ceiling_stream_bytes,"
         "platform,vendor,device_type,device_version,opencl_c_version,compute_units,"
         "global_mem_bytes,local_mem_bytes,max_work_group_size,copy_gbytes_s,suite_version,"
         "git_revision,build,date,host,command,kernel_files,read_gbytes_s,write_gbytes_s,"
         "ceiling_buffer_bytes,ceiling_near_cache_buffer_bytes,near_cache_read_gbytes_s,"
         "near_cache_write_gbytes_s,near_cache_copy_gbytes_s,global_mem_cache_bytes,width,height,"
         "params,bytes_read_repeated,"
         "kernel_memory_bytes,utilisation_suspect,settings_source,settings_profile,"
         "settings_profile_date,kernel_options\n";
  for (const auto& r : results) {
    const DeviceRun& device = DeviceOf(info, r);
    const std::string runFields = runFieldsOf(device);
    const std::string keys = fmt::format(
        "{},{},{},{},{},{},{},{},{},{}", CsvQuote(device.info.name),
        CsvQuote(device.info.driverVersion), r.task, r.variant, ToString(r.type), ToString(r.op),
        r.scanKind ? ToString(*r.scanKind) : "", r.n, r.localSize, ToString(r.status));
    const std::string shape = fmt::format("{},{},{},{}", r.codePath, r.portable ? 1 : 0,
                                          r.lookbackFallback ? 1 : 0, CsvQuote(TuningText(r)));
    const bool hasBreakdown = !r.breakdown.Empty();
    // An untimed case leaves what its timer would have measured empty.
    const bool untimed = r.status == Status::Untimed;
    const std::string caseFields =
        untimed
            ? fmt::format(",,,{},{},,,,{},", r.ciTarget, r.cold ? 1 : 0, r.fitsInCache ? 1 : 0)
            : fmt::format("{:.6f},{:.6f},{},{},{},{},{:.3f},{:.4f},{},{}", r.timeMs.ciLow,
                          r.timeMs.ciHigh, r.ciMet ? 1 : 0, r.ciTarget, r.cold ? 1 : 0, r.ceiling,
                          r.ceilingGBs, r.utilisation, r.fitsInCache ? 1 : 0, r.ceilingStreamBytes);
    const std::string times =
        untimed ? std::string(6, ',')
                : fmt::format("{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.4f},{:.3f}", r.timeMs.median,
                              r.timeMs.min, r.timeMs.max, r.timeMs.mean, r.timeMs.stddev, r.gelemS,
                              r.gbytesS);
    const std::string bandwidthUtil = untimed ? "" : fmt::format("{:.4f}", r.bandwidthUtil);
    const std::string noCaseFields(9, ',');
    // What else defines the case (an image's shape, the task's parameters), on every row.
    const std::string extent =
        fmt::format("{},{},{}", r.height ? r.n / r.height : r.n, r.height ? r.height : 1,
                    CsvQuote(r.params.empty() ? "" : ParamsText(r)));
    // Where the settings came from, then the build options (the last column), on every row.
    const std::string options =
        fmt::format("{},{},{},{}", CsvQuote(r.settings.source), CsvQuote(r.settings.profile),
                    CsvQuote(r.settings.profileDate), CsvQuote(r.kernelOptions));
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},,,,,,,,,,{},{},{},{},,{},{}\n",
                       keys, CsvQuote(r.message), r.iterations, times, r.cost.BytesMoved(),
                       r.cost.bytesRead, r.cost.bytesWritten, bandwidthUtil, r.cost.launches,
                       r.cost.steps, r.cost.ops, r.launchesEnqueued, r.validatedRuns, shape,
                       hasBreakdown ? fmt::format("{:.6f}", r.breakdown.gapsMs) : "", caseFields,
                       runFields, extent, r.cost.bytesReadRepeated, CsvQuote(r.utilisationSuspect),
                       options);
    const std::string empty(18, ',');  // the case's measurements: message to validated_runs
    for (const auto& k : r.breakdown.kernels)
      out << fmt::format(
          "{},{}{},,{},run,{},{:.6f},{:.6f},{:.4f},{},{:.3f},{:.4f},{},{},{},,{},{},{}\n", keys,
          empty, shape, CsvQuote(k.kernel), k.launches, k.timeMs, k.timeMsMedian, k.share, k.bytes,
          k.gbytesS, k.bandwidthUtil, noCaseFields, runFields, extent, k.memoryBytes,
          CsvQuote(k.utilisationSuspect), options);
    for (const auto& u : r.breakdown.untimed)
      out << fmt::format("{},{}{},,{},{},{},{:.6f},,,,,,{},{},{},,,,{}\n", keys, empty, shape,
                         CsvQuote(u.command), u.phase, u.launches, u.timeMs, noCaseFields,
                         runFields, extent, options);
  }
}

void WriteJson(std::ostream& out, const RunInfo& info, const std::vector<Result>& results) {
  nlohmann::json j;
  const BuildInfo& b = ThisBuild();
  j["schema"] = "reduce-scan-bench/1";
  j["suite"] = {{"version", b.version},
                {"git_revision", b.gitRevision},
                {"build_type", b.buildType},
                {"compiler", b.compiler},
                {"cxx_flags", b.cxxFlags}};
  j["date"] = info.date;
  j["host"] = info.host;
  j["command"] = info.command;
  j["kernels"] = info.kernelDir;
  j["kernel_files"] = info.kernelHashes;
  j["cold"] = info.cold;
  j["ci_target"] = info.ciTarget;
  // The first device, as in a file of one device; with several, all of them in `devices` and each
  // result's in its `device`.
  j["device"] = DeviceJson(info.devices.empty() ? DeviceRun() : info.devices.front());
  const bool several = info.devices.size() > 1;
  if (several) {
    j["devices"] = nlohmann::json::array();
    for (const auto& d : info.devices)
      j["devices"].push_back(DeviceJson(d));
  }
  j["results"] = nlohmann::json::array();
  for (const auto& r : results) {
    j["results"].push_back(ResultToJson(r));
    if (several) {
      const DeviceInfo& d = DeviceOf(info, r).info;
      j["results"].back()["device"] = {{"index", r.device},
                                       {"name", d.name},
                                       {"driver_version", d.driverVersion},
                                       {"platform", d.platform}};
    }
  }
  // Paths and arguments may hold bytes that are not UTF-8: replaced (U+FFFD), never an exception.
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace rsb

namespace rsb {

namespace {

// The course's terms, as the explain outputs print them (the table and Markdown under the
// table, JSON in "legend").
const std::vector<std::pair<std::string, std::string>>& ExplainLegend() {
  static const std::vector<std::pair<std::string, std::string>> legend = {
      {"launches", "commands of one run (kernels and fills)"},
      {"S(n)",
       "parallel steps: the run's launches and, inside each, the phases between barriers, one "
       "after another"},
      {"W(n)", "work: operator applications in all (multiply-adds for a convolution)"},
      {"Wseq",
       "the sequential algorithm's work: n - 1 operator applications (a convolution: n W "
       "multiply-adds, n W^2 in 2-D)"},
      {"p",
       "work-items launched: the largest global size among the run's launches (whole "
       "work-groups)"},
      {"p*S(n)", "the cost"},
      {"work-opt",
       fmt::format("work-optimal, W(n) = O(Wseq(n)): yes where W/Wseq grows by less than {:.0f}% "
                   "with n and the local size both {} times larger (the same model, as many "
                   "work-groups: a constant factor stays, a log n or log L factor grows by 45% "
                   "and more)",
                   100 * (kExplainGrowth - 1), kExplainScale)},
      {"cost-opt", "cost-optimal, p*S(n) = O(Wseq(n)): yes where pS/Wseq grows so little"},
      {"bytes",
       "global memory read and written in one run: the traffic model GB/s is computed from"},
  };
  return legend;
}

std::string Verdict(const std::optional<bool>& v) {
  return v ? (*v ? "yes" : "no") : "-";
}

// The explain table's columns and one case's cells (numbers "-" for a skipped case).
std::vector<std::string> ExplainColumns(bool params) {
  std::vector<std::string> c = {"task",   "variant",  "type",     "op",       "kind",   "n",
                                "local",  "launches", "S(n)",     "W(n)",     "W/Wseq", "p",
                                "p*S(n)", "pS/Wseq",  "work-opt", "cost-opt", "bytes"};
  c.push_back(params ? "params" : "");
  return c;
}

std::vector<std::string> ExplainCells(const Explanation& e, bool params) {
  const Result& r = e.c;
  const bool ok = e.Explained();
  auto num = [&](uint64_t v) { return ok ? std::to_string(v) : std::string("-"); };
  return {r.task,
          r.variant,
          ToString(r.type),
          ToString(r.op),
          KindOrDash(r),
          SizeText(r.n, r.height),
          r.localSize ? std::to_string(r.localSize) : "-",
          num(r.cost.launches),
          num(r.cost.steps),
          num(r.cost.ops),
          ok ? fmt::format("{:.2f}", e.workRatio) : "-",
          num(r.cost.workItems),
          num(e.Cost()),
          ok ? fmt::format("{:.2f}", e.costRatio) : "-",
          ok ? Verdict(e.workOptimal) : "skipped",
          ok ? Verdict(e.costOptimal) : "-",
          num(r.cost.BytesMoved()),
          params ? ParamsText(r) : ""};
}

std::vector<Explanation> ExplanationsOn(const RunInfo& info, const std::vector<Explanation>& all,
                                        size_t d) {
  std::vector<Explanation> out;
  for (const auto& e : all)
    if (&DeviceOf(info, e.c) == &info.devices[d])
      out.push_back(e);
  return out;
}

bool AnyParams(const std::vector<Explanation>& cases) {
  for (const auto& e : cases)
    if (!e.c.params.empty())
      return true;
  return false;
}

const char* kFewerSteps =
    "the plan's S(n) counts the phases between barriers and launches, not the operations each "
    "work-item does one after another (the course's S(n) is at least W(n) / p)";

const char* kExplainTitle =
    "explain: the course's measures of each case, from the launch plan that a run enqueues and "
    "times; nothing was run";

// Skipped cases, one line each; then, once, the variants whose plans count fewer steps than
// their work needs (their cases' message in CSV and JSON).
void WriteExplainNotes(std::ostream& out, const std::vector<Explanation>& cases,
                       const std::string& bullet) {
  bool first = true;
  std::vector<std::string> fewer;
  for (const auto& e : cases) {
    if (e.Explained()) {
      const std::string name = e.c.task + "/" + e.c.variant;
      if (!e.c.message.empty() && std::find(fewer.begin(), fewer.end(), name) == fewer.end())
        fewer.push_back(name);
      continue;
    }
    out << (first ? "\n" : "")
        << fmt::format("{}skipped {}: {}\n", bullet, CaseLabel(e.c), e.c.message);
    first = false;
  }
  if (fewer.empty())
    return;
  std::string names;
  for (const auto& n : fewer)
    names += (names.empty() ? "" : ", ") + n;
  out << (first ? "\n" : "")
      << fmt::format("{}p*S(n) < W(n) for {}: {}\n", bullet, names, kFewerSteps);
}

}  // namespace

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

void WriteExplainMarkdown(std::ostream& out, const RunInfo& info,
                          const std::vector<Explanation>& all) {
  out << MarkdownEscape(kExplainTitle) << "\n";
  for (size_t d = 0; d < info.devices.size(); ++d) {
    const std::vector<Explanation> cases = ExplanationsOn(info, all, d);
    out << "\n" << MarkdownEscape(DeviceLine(info, d)) << "\n\n";
    const bool params = AnyParams(cases);
    auto row = [&](std::vector<std::string> cells) {
      if (!params)
        cells.pop_back();
      out << "|";
      for (const auto& c : cells)
        out << " " << MarkdownEscape(c) << " |";
      out << "\n";
    };
    const std::vector<std::string> columns = ExplainColumns(params);
    row(columns);
    out << "|";
    for (size_t i = 0; i + (params ? 0 : 1) < columns.size(); ++i)
      out << (i < 5 || i == 14 || i == 15 || i == 17 ? "---|" : "--:|");
    out << "\n";
    for (const auto& e : cases)
      row(ExplainCells(e, params));
    WriteExplainNotes(out, cases, "- ");
  }
  out << "\n";
  for (const auto& [term, meaning] : ExplainLegend())
    out << "- " << MarkdownEscape(term) << ": " << MarkdownEscape(meaning) << "\n";
}

void WriteExplainCsv(std::ostream& out, const RunInfo& info, const std::vector<Explanation>& all) {
  out << "device,driver_version,task,variant,type,op,scan_kind,n,width,height,params,local_size,"
         "status,message,launches,steps,work,sequential_work,work_items,cost,work_ratio,"
         "cost_ratio,scaled_work_ratio,scaled_cost_ratio,work_optimal,cost_optimal,bytes_read,"
         "bytes_written,bytes_moved\n";
  for (const auto& e : all) {
    const Result& r = e.c;
    const DeviceInfo& d = DeviceOf(info, r).info;
    auto flag = [](const std::optional<bool>& v) { return v ? (*v ? "1" : "0") : ""; };
    out << fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},"
        "{},{},{},{},{}\n",
        CsvQuote(d.name), CsvQuote(d.driverVersion), r.task, r.variant, ToString(r.type),
        ToString(r.op), r.scanKind ? ToString(*r.scanKind) : "", r.n,
        r.height ? r.n / r.height : r.n, r.height ? r.height : 1,
        CsvQuote(r.params.empty() ? "" : ParamsText(r)), r.localSize,
        e.Explained() ? "explained" : "skipped", CsvQuote(r.message), r.cost.launches, r.cost.steps,
        r.cost.ops, e.sequentialWork, r.cost.workItems, e.Cost(), e.workRatio, e.costRatio,
        e.scaledWorkRatio, e.scaledCostRatio, flag(e.workOptimal), flag(e.costOptimal),
        r.cost.bytesRead, r.cost.bytesWritten, r.cost.BytesMoved());
  }
}

void WriteExplainJson(std::ostream& out, const RunInfo& info, const std::vector<Explanation>& all) {
  nlohmann::json j;
  const BuildInfo& b = ThisBuild();
  j["schema"] = "reduce-scan-bench-explain/1";
  j["suite"] = {{"version", b.version},
                {"git_revision", b.gitRevision},
                {"build_type", b.buildType},
                {"compiler", b.compiler},
                {"cxx_flags", b.cxxFlags}};
  j["date"] = info.date;
  j["host"] = info.host;
  j["command"] = info.command;
  // No ceilings: nothing was measured.
  auto device = [](const DeviceRun& run) {
    nlohmann::json o = DeviceJson(run);
    o.erase("ceilings");
    o.erase("copy_gbytes_s");
    o.erase("timer");
    return o;
  };
  j["device"] = device(info.devices.empty() ? DeviceRun() : info.devices.front());
  const bool several = info.devices.size() > 1;
  if (several) {
    j["devices"] = nlohmann::json::array();
    for (const auto& d : info.devices)
      j["devices"].push_back(device(d));
  }
  j["legend"] = nlohmann::json::object();
  for (const auto& [term, meaning] : ExplainLegend())
    j["legend"][term] = meaning;
  j["scale"] = kExplainScale;
  j["growth_limit"] = kExplainGrowth;
  j["cases"] = nlohmann::json::array();
  auto verdict = [](const std::optional<bool>& v) { return v ? nlohmann::json(*v) : nullptr; };
  for (const auto& e : all) {
    const Result& r = e.c;
    nlohmann::json o = {{"task", r.task},
                        {"variant", r.variant},
                        {"type", ToString(r.type)},
                        {"op", ToString(r.op)},
                        {"n", r.n},
                        {"width", r.height ? r.n / r.height : r.n},
                        {"height", r.height ? r.height : 1},
                        {"local_size", r.localSize},
                        {"code_path", r.codePath},
                        {"tuning", r.tuning},
                        {"params", r.params},
                        {"status", e.Explained() ? "explained" : "skipped"},
                        {"message", r.message}};
    if (r.scanKind)
      o["scan_kind"] = ToString(*r.scanKind);
    if (r.height)
      o["shape"] = SizeText(r.n, r.height);
    if (several) {
      const DeviceInfo& d = DeviceOf(info, r).info;
      o["device"] = {{"index", r.device},
                     {"name", d.name},
                     {"driver_version", d.driverVersion},
                     {"platform", d.platform}};
    }
    if (e.Explained()) {
      o["launches"] = r.cost.launches;
      o["steps"] = r.cost.steps;
      o["work"] = r.cost.ops;
      o["sequential_work"] = e.sequentialWork;
      o["work_items"] = r.cost.workItems;
      o["cost"] = e.Cost();
      o["work_ratio"] = e.workRatio;
      o["cost_ratio"] = e.costRatio;
      o["scaled"] = {{"work_ratio", e.scaledWorkRatio}, {"cost_ratio", e.scaledCostRatio}};
      o["work_optimal"] = verdict(e.workOptimal);
      o["cost_optimal"] = verdict(e.costOptimal);
      o["bytes_read"] = r.cost.bytesRead;
      o["bytes_written"] = r.cost.bytesWritten;
      o["bytes_moved"] = r.cost.BytesMoved();
    }
    j["cases"].push_back(o);
  }
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace rsb
