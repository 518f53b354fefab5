#include "report/ReportUtil.h"

#include "platform/BuildInfo.h"

#include <fmt/format.h>

namespace rsb {

namespace {

// "scan-cpu-items=65536;scan-gpu-items=32": a result's tuning values in one CSV field.
std::string TuningText(const Result& r) {
  std::string s;
  for (const auto& [name, value] : r.tuning)
    s += fmt::format("{}{}={}", s.empty() ? "" : ";", name, value);
  return s;
}

// --repetitions: the rounds and the median across them with its interval (empty under 2).
std::string RoundsFields(const Result& r) {
  if (r.samplesMs.size() < 2)
    return fmt::format(",{},,,", r.samplesMs.size());
  return fmt::format(",{},{:.6f},{:.6f},{:.6f}", r.samplesMs.size(), r.roundsMs.median,
                     r.roundsMs.ciLow, r.roundsMs.ciHigh);
}

// The run's fields and its device's (the device's own where the run has several), repeated on
// every row.
std::string RunFields(const RunInfo& info, const DeviceRun& run) {
  const BuildInfo& b = ThisBuild();
  std::string files;
  for (const auto& [name, hash] : info.kernelHashes)
    files += fmt::format("{}{}={}", files.empty() ? "" : ";", name, hash);
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
}

// The columns: the first 32 as they have always been (scripts cut by position), then the
// breakdown (33-42: a case row has an empty `kernel`, column 34), then every other field of the
// JSON document: the case's (empty on kernel rows), then the run's and its device's.
// The fields of the tasks' parameters (RunInfo::fields) between op and n (a scan's kind).
constexpr const char* kCsvHeaderKeys = "device,driver_version,task,variant,type,op,";
constexpr const char* kCsvHeader =
    "n,local_size,status,message,"
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
    "settings_profile_date,kernel_options,timer,timer_resolution_ns,rounds,"
    "time_ms_rounds_median,time_ms_rounds_ci_low,time_ms_rounds_ci_high,row\n";

// What every row of a case repeats: its keys (device to status), its shape (code path to
// tuning), what else defines it (an image's shape, the task's parameters), where its settings
// came from, its build options and the clock that timed it (the last columns), and the run's
// fields.
struct CaseKeys {
  std::string keys, shape, extent, options, runFields;
};

CaseKeys KeysOf(const RunInfo& info, const Result& r) {
  const DeviceRun& device = DeviceOf(info, r);
  return {
      fmt::format("{},{},{},{},{},{},{}{},{},{}", CsvQuote(device.info.name),
                  CsvQuote(device.info.driverVersion), r.task, r.variant, ToString(r.type),
                  ToString(r.op), FieldCells(r, info.fields), r.n, r.localSize, ToString(r.status)),
      fmt::format("{},{},{},{}", r.codePath, r.portable ? 1 : 0, r.lookbackFallback ? 1 : 0,
                  CsvQuote(TuningText(r))),
      fmt::format("{},{},{}", r.height ? r.n / r.height : r.n, r.height ? r.height : 1,
                  CsvQuote(r.params.empty() ? "" : ParamsText(r))),
      fmt::format("{},{},{},{},{},{}", CsvQuote(r.settings.source), CsvQuote(r.settings.profile),
                  CsvQuote(r.settings.profileDate), CsvQuote(r.kernelOptions), r.timer,
                  r.timer.empty() ? "" : std::to_string(r.timerResolutionNs)) +
          RoundsFields(r),
      RunFields(info, device)};
}

// The case's row (an empty `kernel`). An untimed case leaves what its timer would have measured
// empty.
void WriteCaseRow(std::ostream& out, const Result& r, const CaseKeys& k) {
  const bool untimed = r.status == Status::Untimed;
  const std::string caseFields =
      untimed
          ? fmt::format(",,,{},{},,,,{},", r.ciTarget, r.cold ? 1 : 0, r.fitsInCache ? 1 : 0)
          : fmt::format("{:.6f},{:.6f},{},{},{},{},{:.3f},{:.4f},{},{}", r.timeMs.ciLow,
                        r.timeMs.ciHigh, r.ciMet ? 1 : 0, r.ciTarget, r.cold ? 1 : 0, r.ceiling,
                        r.ceilingGBs, r.utilisation, r.fitsInCache ? 1 : 0, r.ceilingStreamBytes);
  const std::string times = untimed
                                ? std::string(6, ',')
                                : fmt::format("{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.4f},{:.3f}",
                                              r.timeMs.median, r.timeMs.min, r.timeMs.max,
                                              r.timeMs.mean, r.timeMs.stddev, r.gelemS, r.gbytesS);
  const std::string bandwidthUtil = untimed ? "" : fmt::format("{:.4f}", r.bandwidthUtil);
  out << fmt::format(
      "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},,,,,,,,,,{},{},{},{},,{},{},case\n", k.keys,
      CsvQuote(r.message), r.iterations, times, r.cost.BytesMoved(), r.cost.bytesRead,
      r.cost.bytesWritten, bandwidthUtil, r.cost.launches, r.cost.steps, r.cost.ops,
      r.launchesEnqueued, r.validatedRuns, k.shape,
      r.breakdown.Empty() ? "" : fmt::format("{:.6f}", r.breakdown.gapsMs), caseFields, k.runFields,
      k.extent, r.cost.bytesReadRepeated, CsvQuote(r.utilisationSuspect), k.options);
}

// A row per kernel of the case's breakdown (phase `run`) and per command outside its span, the
// case's measurements (message to validated_runs) and fields left empty.
void WriteBreakdownRows(std::ostream& out, const Result& r, const CaseKeys& c) {
  const std::string empty(18, ',');
  const std::string noCaseFields(9, ',');
  for (const auto& k : r.breakdown.kernels)
    out << fmt::format(
        "{},{}{},,{},run,{},{:.6f},{:.6f},{:.4f},{},{:.3f},{:.4f},{},{},{},,{},{},{},kernel\n",
        c.keys, empty, c.shape, CsvQuote(k.kernel), k.launches, k.timeMs, k.timeMsMedian, k.share,
        k.bytes, k.gbytesS, k.bandwidthUtil, noCaseFields, c.runFields, c.extent, k.memoryBytes,
        CsvQuote(k.utilisationSuspect), c.options);
  for (const auto& u : r.breakdown.untimed)
    out << fmt::format("{},{}{},,{},{},{},{:.6f},,,,,,{},{},{},,,,{},untimed\n", c.keys, empty,
                       c.shape, CsvQuote(u.command), u.phase, u.launches, u.timeMs, noCaseFields,
                       c.runFields, c.extent, c.options);
}

// The last column, `row`, says what a row is: `case`, `kernel` (of the breakdown) or `untimed` (a
// command outside the span), so that a tool selects without counting columns, and awk, which
// splits a quoted name with a comma, by $NF. Text fields are quoted (RFC 4180: "" for a quote).
// One table for CSV tools: a row per case (the `kernel` column empty), followed by a row per
// kernel of its breakdown (kernel_phase `run`) and per command outside the span (`prepare`:
// before every timed run; `validation`: before the validated run), each repeating the case's
// keys (device to status, code path to tuning) and filling the kernel_* columns, the case's
// measurements left empty. Case rows: an empty `kernel`; a case's kernel times: its rows of
// phase `run`, whose kernel_time_ms plus the case's gaps_ms are its time_ms_median.
void WriteResultsCsv(std::ostream& out, const RunInfo& info, const std::vector<Result>& results) {
  out << kCsvHeaderKeys << FieldColumns(info.fields) << kCsvHeader;
  for (const auto& r : results) {
    const CaseKeys keys = KeysOf(info, r);
    WriteCaseRow(out, r, keys);
    WriteBreakdownRows(out, r, keys);
  }
}

void WriteExplainCsv(std::ostream& out, const RunInfo& info, const std::vector<Explanation>& all) {
  out << kCsvHeaderKeys << FieldColumns(info.fields)
      << "n,width,height,params,local_size,status,message,launches,steps,work,sequential_work,work_"
         "items,cost,work_ratio,"
         "cost_ratio,scaled_work_ratio,scaled_cost_ratio,work_optimal,cost_optimal,bytes_read,"
         "bytes_written,bytes_moved\n";
  for (const auto& e : all) {
    const Result& r = e.c;
    const DeviceInfo& d = DeviceOf(info, r).info;
    auto flag = [](const std::optional<bool>& v) { return v ? (*v ? "1" : "0") : ""; };
    out << fmt::format(
        "{},{},{},{},{},{},{}{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},"
        "{},{},{},{},{}\n",
        CsvQuote(d.name), CsvQuote(d.driverVersion), r.task, r.variant, ToString(r.type),
        ToString(r.op), FieldCells(r, info.fields), r.n, r.height ? r.n / r.height : r.n,
        r.height ? r.height : 1, CsvQuote(r.params.empty() ? "" : ParamsText(r)), r.localSize,
        e.Explained() ? "explained" : "skipped", CsvQuote(r.message), r.cost.launches, r.cost.steps,
        r.cost.ops, e.sequentialWork, r.cost.workItems, e.Cost(), e.workRatio, e.costRatio,
        e.scaledWorkRatio, e.scaledCostRatio, flag(e.workOptimal), flag(e.costOptimal),
        r.cost.bytesRead, r.cost.bytesWritten, r.cost.BytesMoved());
  }
}

// compare's CSV: a row per case in both files (in "both"), then those in one only ("base",
// "new"), the other side's columns empty.
void WriteCompareCsv(std::ostream& out, const Comparison& c,
                     const std::vector<std::string>& fields) {
  auto num = [](std::optional<double> v) { return v ? fmt::format("{:.6g}", *v) : std::string(); };
  out << "in,task,variant,type,op," << FieldColumns(fields)
      << "n,base_local_size,new_local_size,base_device,new_device,base_status,base_median_ms,base_"
         "ci_low_ms,base_ci_high_ms,new_status,"
         "new_median_ms,new_ci_low_ms,new_ci_high_ms,throughput_ratio,change,regression,note,"
         "basis,base_ratio_median_ms,new_ratio_median_ms,new_scale,p_value,base_rounds,new_"
         "rounds\n";
  auto device = [&](const StoredResult* r) { return r ? CsvQuote(r->device.Label()) : ""; };
  auto times = [&](const StoredResult* r) {
    if (!r)
      return std::string(",,,");
    const TimeStats& t = r->result.timeMs;
    return fmt::format("{},{},{},{}", ToString(r->result.status), r->Timed() ? num(t.median) : "",
                       r->HasCi() ? num(t.ciLow) : "", r->HasCi() ? num(t.ciHigh) : "");
  };
  auto local = [](const StoredResult* r) { return r ? std::to_string(r->result.localSize) : ""; };
  // What the ratio is of (CaseComparison::basis): empty for a case in one file only.
  auto judged = [&](const CaseComparison* m) {
    if (!m || !m->baseMedian)
      return std::string(m ? fmt::format("{},,,,,,", ToString(m->basis)) : ",,,,,,");
    return fmt::format("{},{},{},{},{},{},{}", ToString(m->basis), num(m->baseMedian->ms),
                       num(m->newMedian->ms), num(m->newScale), num(m->p), m->baseMedian->rounds,
                       m->newMedian->rounds);
  };
  auto row = [&](const char* in, const StoredResult& s, const StoredResult* b,
                 const StoredResult* n, const CaseComparison* m) {
    const Result& key = s.result;
    out << fmt::format("{},{},{},{},{},{}{},{},{},{},{},{},{},{},{},{},{},{}\n", in, key.task,
                       key.variant, ToString(key.type), ToString(key.op), FieldCells(key, fields),
                       key.n, local(b), local(n), device(b), device(n), times(b), times(n),
                       m ? num(m->speedup) : "", m ? ToString(m->change) : "",
                       m ? (m->regression ? "1" : "0") : "", CsvQuote(m ? m->note : ""), judged(m));
  };
  for (const auto& m : c.matched)
    row("both", m.base, &m.base, &m.fresh, &m);
  for (const auto& r : c.onlyBase)
    row("base", r, &r, nullptr, nullptr);
  for (const auto& r : c.onlyNew)
    row("new", r, nullptr, &r, nullptr);
}

void WriteVariantsCsv(std::ostream& out, const std::vector<VariantListing>& rows) {
  out << "task,variant,file,description\n";
  for (const auto& r : rows)
    out << fmt::format("{},{},{},{}\n", r.task, r.variant, r.file, CsvQuote(r.description));
}

// For CSV tools: one rectangular table each, a header line first.
class CsvPrinter : public Printer {
 public:
  void Results(std::ostream& out, const RunInfo& info,
               const std::vector<Result>& results) const override {
    WriteResultsCsv(out, info, results);
  }
  void Explain(std::ostream& out, const RunInfo& info,
               const std::vector<Explanation>& cases) const override {
    WriteExplainCsv(out, info, cases);
  }
  void Compare(std::ostream& out, const CompareReport& report) const override {
    WriteCompareCsv(out, report.comparison, report.fields);
  }
  void Variants(std::ostream& out, const std::vector<VariantListing>& rows) const override {
    WriteVariantsCsv(out, rows);
  }
};

}  // namespace

std::unique_ptr<Printer> MakeCsvPrinter(const PrinterOptions&) {
  return std::make_unique<CsvPrinter>();
}

}  // namespace rsb
