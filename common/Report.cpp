#include "Report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

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

// "mask-width=5": a result's task parameters in one field.
std::string ParamsText(const Result& r) {
  std::string s;
  for (const auto& [name, value] : r.params)
    s += fmt::format("{}{}={}", s.empty() ? "" : ";", name, value);
  return s.empty() ? "-" : s;
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

}  // namespace

nlohmann::json ResultToJson(const Result& r) {
  nlohmann::json o = {
      {"task", r.task},
      {"variant", r.variant},
      {"type", ToString(r.type)},
      {"op", ToString(r.op)},
      {"n", r.n},
      {"width", r.height ? r.n / r.height : r.n},
      {"height", r.height ? r.height : 1},
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
      {"params", r.params},
  };
  if (r.height)
    o["shape"] = SizeText(r.n, r.height);
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
  if (j.contains("shape"))
    r.height = j.at("height").get<size_t>();
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
  if (j.contains("params"))
    r.params = j.at("params").get<std::map<std::string, size_t>>();
  return r;
}

void WriteTable(std::ostream& out, const RunInfo& info, const std::vector<Result>& results) {
  const DeviceInfo& d = info.device;
  out << fmt::format("device: {} ({}), driver {}, {}, {} CUs\n", d.name, d.platform,
                     d.driverVersion, d.openclCVersion, d.computeUnits);
  if (info.copyGBs > 0)
    out << fmt::format("copy bandwidth (read + write): {:.1f} GB/s\n", info.copyGBs);
  out << "\n";
  // A column of task parameters only where a result has any (a convolution's mask width).
  bool params = false;
  size_t taskWidth = 10;  // the longest task name
  for (const auto& r : results)
    params = params || !r.params.empty(), taskWidth = std::max(taskWidth, r.task.size());
  out << fmt::format(
      "{:<{}} {:<14} {:<6} {:<4} {:<9} {:>10} {:>5} {:<7} {:>11} {:>9} {:>8} "
      "{:>5} {:>8}{}\n",
      "task", taskWidth, "variant", "type", "op", "kind", "n", "local", "status", "median ms",
      "Gelem/s", "GB/s", "util", "launches", params ? " params" : "");
  for (const auto& r : results) {
    const bool timed = r.status == Status::Passed && r.iterations > 0;
    out << fmt::format(
        "{:<{}} {:<14} {:<6} {:<4} {:<9} {:>10} {:>5} {:<7} {:>11} {:>9} {:>8} {:>5} {:>8}{}\n",
        r.task, taskWidth, r.variant, ToString(r.type), ToString(r.op), KindOrDash(r),
        SizeText(r.n, r.height), r.localSize, ToString(r.status),
        timed ? fmt::format("{:.4f}", r.timeMs.median) : "-",
        timed ? fmt::format("{:.2f}", r.gelemS) : "-",
        timed ? fmt::format("{:.1f}", r.gbytesS) : "-",
        timed && r.bandwidthUtil > 0 ? fmt::format("{:.0f}%", 100 * r.bandwidthUtil) : "-",
        r.cost.launches ? fmt::format("{}", r.cost.launches) : "-",
        params ? " " + ParamsText(r) : "");
  }
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
         "launches_enqueued,validated_runs,code_path,portable,lookback_fallback,tuning,width,"
         "height,"
         "params\n";
  for (const auto& r : results) {
    out << fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},"
        "{:.4f},{:.3f},{},{},{},{:.4f},{},{},{},{},{},{},{},{},{},{},{},{}\n",
        quote(info.device.name), quote(info.device.driverVersion), r.task, r.variant,
        ToString(r.type), ToString(r.op), r.scanKind ? ToString(*r.scanKind) : "", r.n, r.localSize,
        ToString(r.status), quote(r.message), r.iterations, r.timeMs.median, r.timeMs.min,
        r.timeMs.max, r.timeMs.mean, r.timeMs.stddev, r.gelemS, r.gbytesS, r.cost.BytesMoved(),
        r.cost.bytesRead, r.cost.bytesWritten, r.bandwidthUtil, r.cost.launches, r.cost.steps,
        r.cost.ops, r.launchesEnqueued, r.validatedRuns, r.codePath, r.portable ? 1 : 0,
        r.lookbackFallback ? 1 : 0, quote(TuningText(r)), r.height ? r.n / r.height : r.n,
        r.height ? r.height : 1, quote(r.params.empty() ? "" : ParamsText(r)));
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
