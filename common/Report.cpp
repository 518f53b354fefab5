#include "Report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace rsb {

namespace {

std::string KindOrDash(const Result& r) {
  return r.scanKind ? ToString(*r.scanKind) : "-";
}

// "scan-cpu-items=65536;scan-gpu-items=32": a result's tuning values in one CSV field.
std::string TuningText(const Result& r) {
  std::string s;
  for (const auto& [name, value] : r.tuning)
    s += fmt::format("{}{}={}", s.empty() ? "" : ";", name, value);
  return s;
}

nlohmann::json DeviceJson(const RunInfo& info) {
  const DeviceInfo& d = info.device;
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
          {"copy_gbytes_s", info.copyGBs}};
}

nlohmann::json BreakdownJson(const Breakdown& b) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& k : b.kernels)
    a.push_back({{"kernel", k.kernel},
                 {"launches", k.launches},
                 {"time_ms", k.timeMs},
                 {"time_ms_median", k.timeMsMedian},
                 {"share", k.share},
                 {"bytes_moved", k.bytes},
                 {"gbytes_s", k.gbytesS},
                 {"bandwidth_util", k.bandwidthUtil}});
  return a;
}

nlohmann::json UntimedJson(const Breakdown& b) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& u : b.untimed)
    a.push_back({{"command", u.command},
                 {"phase", u.phase},
                 {"launches", u.launches},
                 {"time_ms", u.timeMs}});
  return a;
}

std::string PhaseText(const std::string& phase) {
  return phase == "prepare" ? "untimed, before each run" : "untimed, before the validated run";
}

Breakdown BreakdownFromJson(const nlohmann::json& j) {
  Breakdown b;
  if (!j.contains("breakdown"))
    return b;

  for (const auto& k : j.at("breakdown"))
    b.kernels.push_back({k.at("kernel").get<std::string>(), k.at("launches").get<size_t>(),
                         k.at("time_ms").get<double>(), k.at("time_ms_median").get<double>(),
                         k.at("share").get<double>(), k.at("bytes_moved").get<uint64_t>(),
                         k.at("gbytes_s").get<double>(), k.at("bandwidth_util").get<double>()});
  for (const auto& u : j.value("untimed", nlohmann::json::array()))
    b.untimed.push_back({u.at("command").get<std::string>(), u.at("phase").get<std::string>(),
                         u.at("launches").get<size_t>(), u.at("time_ms").get<double>()});
  b.gapsMs = j.value("gaps_ms", 0.0);
  b.gapsMsMedian = j.value("gaps_ms_median", 0.0);
  return b;
}

}  // namespace

nlohmann::json ResultToJson(const Result& r) {
  nlohmann::json o = {
      {"task", r.task},
      {"variant", r.variant},
      {"type", ToString(r.type)},
      {"op", ToString(r.op)},
      {"n", r.n},
      {"local_size", r.localSize},
      {"status", ToString(r.status)},
      {"message", r.message},
      {"iterations", r.iterations},
      {"time_ms",
       {{"median", r.timeMs.median},
        {"min", r.timeMs.min},
        {"max", r.timeMs.max},
        {"mean", r.timeMs.mean},
        {"stddev", r.timeMs.stddev}}},
      {"gelem_s", r.gelemS},
      {"gbytes_s", r.gbytesS},
      {"bytes_moved", r.cost.BytesMoved()},
      {"bandwidth_util", r.bandwidthUtil},
      {"cost",
       {{"launches", r.cost.launches},
        {"steps", r.cost.steps},
        {"ops", r.cost.ops},
        {"bytes_read", r.cost.bytesRead},
        {"bytes_written", r.cost.bytesWritten}}},
      {"launches_enqueued", r.launchesEnqueued},
      {"validated_runs", r.validatedRuns},
      {"code_path", r.codePath},
      {"portable", r.portable},
      {"lookback_fallback", r.lookbackFallback},
      {"tuning", r.tuning},
      // Where the median span goes (Breakdown.h): empty unless timed with every event kept.
      {"breakdown", BreakdownJson(r.breakdown)},
      {"gaps_ms", r.breakdown.gapsMs},
      {"gaps_ms_median", r.breakdown.gapsMsMedian},
      // Outside the span: the resets before every timed run ("prepare", median per run) and what
      // the first validated run enqueued before it (its resets and poison fills, "validation").
      {"untimed", UntimedJson(r.breakdown)},
  };
  if (r.scanKind)
    o["scan_kind"] = ToString(*r.scanKind);
  return o;
}

Result ResultFromJson(const nlohmann::json& j) {
  Result r;
  r.task = j.at("task").get<std::string>();
  r.variant = j.at("variant").get<std::string>();
  r.type = ParseElementType(j.at("type").get<std::string>()).value();
  r.op = ParseOp(j.at("op").get<std::string>()).value();
  if (j.contains("scan_kind"))
    r.scanKind = ParseScanKind(j.at("scan_kind").get<std::string>()).value();
  r.n = j.at("n").get<size_t>();
  r.localSize = j.at("local_size").get<size_t>();
  const std::string status = j.at("status").get<std::string>();
  for (Status s : {Status::Passed, Status::Failed, Status::Skipped, Status::Error, Status::Timeout})
    if (ToString(s) == status)
      r.status = s;
  r.message = j.at("message").get<std::string>();
  r.iterations = j.at("iterations").get<size_t>();
  const auto& t = j.at("time_ms");
  r.timeMs = {t.at("median").get<double>(), t.at("min").get<double>(), t.at("max").get<double>(),
              t.at("mean").get<double>(), t.at("stddev").get<double>()};
  r.gelemS = j.at("gelem_s").get<double>();
  r.gbytesS = j.at("gbytes_s").get<double>();
  r.bandwidthUtil = j.at("bandwidth_util").get<double>();
  const auto& c = j.at("cost");
  r.cost.launches = c.at("launches").get<size_t>();
  r.cost.steps = c.at("steps").get<size_t>();
  r.cost.ops = c.at("ops").get<size_t>();
  r.cost.bytesRead = c.at("bytes_read").get<size_t>();
  r.cost.bytesWritten = c.at("bytes_written").get<size_t>();
  r.launchesEnqueued = j.at("launches_enqueued").get<size_t>();
  r.validatedRuns = j.at("validated_runs").get<size_t>();
  r.codePath = j.at("code_path").get<std::string>();
  r.portable = j.at("portable").get<bool>();
  r.lookbackFallback = j.at("lookback_fallback").get<bool>();
  r.tuning = j.at("tuning").get<std::map<std::string, size_t>>();
  r.breakdown = BreakdownFromJson(j);
  return r;
}

namespace {

// The indented lines under a case in the table: each kernel (time in the median run, share of
// the median span, GB/s and utilisation from its own traffic, launches), then the gaps, aligned
// with the case's columns.
void WriteBreakdownLines(std::ostream& out, const Result& r) {
  const Breakdown& b = r.breakdown;
  for (const auto& k : b.kernels)
    out << fmt::format("  {:<71} {:>11.4f} {:>8.1f}% {:>8.1f} {:>5} {:>8}\n", k.kernel, k.timeMs,
                       100 * k.share, k.gbytesS,
                       k.bandwidthUtil > 0 ? fmt::format("{:.0f}%", 100 * k.bandwidthUtil) : "-",
                       k.launches);
  const double span = r.timeMs.median;
  out << fmt::format("  {:<71} {:>11.4f} {:>8.1f}% {:>8} {:>5}\n",
                     "gaps (queue idle between commands)", b.gapsMs,
                     span > 0 ? 100 * b.gapsMs / span : 0.0, "-", "-");
  for (const auto& u : b.untimed)
    out << fmt::format("  {:<71} {:>11.4f} {:>9} {:>8} {:>5} {:>8}\n",
                       fmt::format("{} ({})", u.command, PhaseText(u.phase)), u.timeMs, "-", "-",
                       "-", u.launches);
}

}  // namespace

void WriteTable(std::ostream& out, const RunInfo& info, const std::vector<Result>& results,
                bool breakdown) {
  const DeviceInfo& d = info.device;
  out << fmt::format("device: {} ({}), driver {}, {}, {} CUs\n", d.name, d.platform,
                     d.driverVersion, d.openclCVersion, d.computeUnits);
  if (info.copyGBs > 0)
    out << fmt::format("copy bandwidth (read + write): {:.1f} GB/s\n", info.copyGBs);
  out << "\n";
  out << fmt::format(
      "{:<10} {:<14} {:<6} {:<4} {:<9} {:>10} {:>5} {:<7} {:>11} {:>9} {:>8} "
      "{:>5} {:>8}\n",
      "task", "variant", "type", "op", "kind", "n", "local", "status", "median ms", "Gelem/s",
      "GB/s", "util", "launches");
  bool anyBreakdown = false;
  for (const auto& r : results) {
    const bool timed = r.status == Status::Passed && r.iterations > 0;
    out << fmt::format(
        "{:<10} {:<14} {:<6} {:<4} {:<9} {:>10} {:>5} {:<7} {:>11} {:>9} {:>8} {:>5} {:>8}\n",
        r.task, r.variant, ToString(r.type), ToString(r.op), KindOrDash(r), r.n, r.localSize,
        ToString(r.status), timed ? fmt::format("{:.4f}", r.timeMs.median) : "-",
        timed ? fmt::format("{:.2f}", r.gelemS) : "-",
        timed ? fmt::format("{:.1f}", r.gbytesS) : "-",
        timed && r.bandwidthUtil > 0 ? fmt::format("{:.0f}%", 100 * r.bandwidthUtil) : "-",
        r.cost.launches ? fmt::format("{}", r.cost.launches) : "-");
    if (breakdown && timed && !r.breakdown.Empty()) {
      WriteBreakdownLines(out, r);
      anyBreakdown = true;
    }
  }
  if (anyBreakdown)
    out << "\nindented: each kernel's time in the median run, its share of the median span (in "
           "the Gelem/s column),\nGB/s and utilisation from its own traffic, and launches; kernel "
           "times plus gaps are the median span\n";
  bool header = false;
  for (const auto& r : results) {
    if (r.status == Status::Passed)
      continue;
    if (!header)
      out << "\n";
    header = true;
    out << fmt::format("{} {}: {}\n", ToString(r.status), CaseLabel(r), r.message);
  }
}

// One table for CSV tools: a row per case (the `kernel` column empty), followed by a row per
// kernel of its breakdown (kernel_phase `run`) and per command outside the span (`prepare`:
// before every timed run; `validation`: before the validated run), each repeating the case's
// keys (device to status, code path to tuning) and filling the kernel_* columns, the case's
// measurements left empty. Case rows: an empty `kernel`; a case's kernel times: its rows of
// phase `run`, whose kernel_time_ms plus the case's gaps_ms are its time_ms_median.
void WriteCsv(std::ostream& out, const RunInfo& info, const std::vector<Result>& results) {
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s)
      q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  out << "device,driver_version,task,variant,type,op,scan_kind,n,local_size,status,message,"
         "iterations,time_ms_median,time_ms_min,time_ms_max,time_ms_mean,time_ms_stddev,"
         "gelem_s,gbytes_s,bytes_moved,bytes_read,bytes_written,bandwidth_util,launches,steps,ops,"
         "launches_enqueued,validated_runs,code_path,portable,lookback_fallback,tuning,gaps_ms,"
         "kernel,kernel_phase,kernel_launches,kernel_time_ms,kernel_time_ms_median,kernel_share,"
         "kernel_bytes_moved,kernel_gbytes_s,kernel_bandwidth_util\n";
  for (const auto& r : results) {
    const std::string keys = fmt::format(
        "{},{},{},{},{},{},{},{},{},{}", quote(info.device.name), quote(info.device.driverVersion),
        r.task, r.variant, ToString(r.type), ToString(r.op),
        r.scanKind ? ToString(*r.scanKind) : "", r.n, r.localSize, ToString(r.status));
    const std::string shape = fmt::format("{},{},{},{}", r.codePath, r.portable ? 1 : 0,
                                          r.lookbackFallback ? 1 : 0, quote(TuningText(r)));
    const bool hasBreakdown = !r.breakdown.Empty();
    out << fmt::format(
        "{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},"
        "{:.4f},{:.3f},{},{},{},{:.4f},{},{},{},{},{},{},{},,,,,,,,,\n",
        keys, quote(r.message), r.iterations, r.timeMs.median, r.timeMs.min, r.timeMs.max,
        r.timeMs.mean, r.timeMs.stddev, r.gelemS, r.gbytesS, r.cost.BytesMoved(), r.cost.bytesRead,
        r.cost.bytesWritten, r.bandwidthUtil, r.cost.launches, r.cost.steps, r.cost.ops,
        r.launchesEnqueued, r.validatedRuns, shape,
        hasBreakdown ? fmt::format("{:.6f}", r.breakdown.gapsMs) : "");
    const std::string empty(18, ',');  // the case's measurements: message to validated_runs
    for (const auto& k : r.breakdown.kernels)
      out << fmt::format("{},{}{},,{},run,{},{:.6f},{:.6f},{:.4f},{},{:.3f},{:.4f}\n", keys, empty,
                         shape, quote(k.kernel), k.launches, k.timeMs, k.timeMsMedian, k.share,
                         k.bytes, k.gbytesS, k.bandwidthUtil);
    for (const auto& u : r.breakdown.untimed)
      out << fmt::format("{},{}{},,{},{},{},{:.6f},,,,,\n", keys, empty, shape, quote(u.command),
                         u.phase, u.launches, u.timeMs);
  }
}

void WriteJson(std::ostream& out, const RunInfo& info, const std::vector<Result>& results) {
  nlohmann::json j;
  j["schema"] = "reduce-scan-bench/1";
  j["date"] = info.date;
  j["command"] = info.command;
  j["kernels"] = info.kernelDir;
  j["device"] = DeviceJson(info);
  j["results"] = nlohmann::json::array();
  for (const auto& r : results)
    j["results"].push_back(ResultToJson(r));
  // Paths and arguments may hold bytes that are not UTF-8: replaced (U+FFFD), never an exception.
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace rsb
