#include "report/ReportUtil.h"

using nlohmann::json;

namespace rsb {

namespace {

// The fields every document of a run opens with: its schema, the suite, when, where, how.
nlohmann::json RunHeader(const char* schema, const RunInfo& info) {
  nlohmann::json j;
  j["schema"] = schema;
  j["suite"] = SuiteJson();
  j["date"] = info.date;
  j["host"] = info.host;
  j["command"] = info.command;
  return j;
}

void WriteResultsJson(std::ostream& out, const RunInfo& info, const std::vector<Result>& results) {
  nlohmann::json j = RunHeader("reduce-scan-bench/1", info);
  j["kernels"] = info.kernelDir;
  j["kernel_files"] = info.kernelHashes;
  j["cold"] = info.cold;
  j["ci_target"] = info.ciTarget;
  j["repetitions"] = info.repetitions;
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
    if (several)
      j["results"].back()["device"] = ResultDeviceJson(info, r);
  }
  // Paths and arguments may hold bytes that are not UTF-8: replaced (U+FFFD), never an exception.
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

// One case of the explain JSON's "cases": its keys, and its measures where it was explained.
nlohmann::json ExplainCaseJson(const RunInfo& info, const Explanation& e) {
  auto verdict = [](const std::optional<bool>& v) { return v ? nlohmann::json(*v) : nullptr; };
  const Result& r = e.c;
  nlohmann::json o = CaseJson(r);
  o.update({{"code_path", r.codePath},
            {"tuning", r.tuning},
            {"params", r.params},
            {"status", e.Explained() ? "explained" : "skipped"},
            {"message", r.message}});
  if (r.height)
    o["shape"] = SizeText(r.n, r.height);
  if (info.devices.size() > 1)
    o["device"] = ResultDeviceJson(info, r);
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
  return o;
}

// A device, without the ceilings: nothing was measured.
nlohmann::json ExplainDeviceJson(const DeviceRun& run) {
  nlohmann::json o = DeviceJson(run);
  o.erase("ceilings");
  o.erase("copy_gbytes_s");
  o.erase("timer");
  return o;
}

void WriteExplainJson(std::ostream& out, const RunInfo& info, const std::vector<Explanation>& all) {
  nlohmann::json j = RunHeader("reduce-scan-bench-explain/1", info);
  j["device"] = ExplainDeviceJson(info.devices.empty() ? DeviceRun() : info.devices.front());
  if (info.devices.size() > 1) {
    j["devices"] = nlohmann::json::array();
    for (const auto& d : info.devices)
      j["devices"].push_back(ExplainDeviceJson(d));
  }
  j["legend"] = nlohmann::json::object();
  for (const auto& [term, meaning] : ExplainLegend())
    j["legend"][term] = meaning;
  j["scale"] = kExplainScale;
  j["growth_limit"] = kExplainGrowth;
  j["cases"] = nlohmann::json::array();
  for (const auto& e : all)
    j["cases"].push_back(ExplainCaseJson(info, e));
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

json SideJson(const StoredResult& r) {
  const TimeStats& t = r.result.timeMs;
  json o = {{"status", ToString(r.result.status)},
            {"device", r.device.Label()},
            {"local_size", r.result.localSize}};
  if (r.Timed())
    o["median_ms"] = t.median;
  if (r.HasCi()) {
    o["ci_low_ms"] = t.ciLow;
    o["ci_high_ms"] = t.ciHigh;
  }
  if (r.CiMet())
    o["ci_met"] = *r.CiMet();
  return o;
}

// The median a side's ratio uses, its interval and rounds.
void JudgedJson(json& o, const std::optional<JudgedMedian>& m) {
  if (!m)
    return;
  o["ratio_median_ms"] = m->ms;
  if (m->ciHigh > 0) {
    o["ratio_ci_low_ms"] = m->ciLow;
    o["ratio_ci_high_ms"] = m->ciHigh;
  }
  o["rounds"] = m->rounds;
}

// A case of a comparison: its keys, local size and device ("case": what else defines it).
json CompareCaseJson(const StoredResult& s) {
  const Result& r = s.result;
  json o = {{"task", r.task},
            {"variant", r.variant},
            {"type", ToString(r.type)},
            {"op", ToString(r.op)},
            {"n", r.n},
            {"local_size", r.localSize},
            {"device", s.device.Label()}};
  for (const auto& [name, value] : r.fields)
    o[name] = value;
  if (!s.Extra().empty())
    o["case"] = s.Extra().substr(1);  // "4096x4096 mask-width=5"
  return o;
}

json CompareSummaryJson(const Comparison& c, const CompareSettings& s) {
  const CompareSummary sum = SummariseComparison(c);
  return {{"matched", c.matched.size()},
          {"faster", sum.faster},
          {"slower", sum.slower},
          {"regressions", sum.regressions},
          {"same", sum.same},
          {"unknown", sum.unknown},
          {"not_timed", sum.untimed},
          {"only_in_base", c.onlyBase.size()},
          {"only_in_new", c.onlyNew.size()},
          {"geomean_throughput_ratio", sum.timed ? json(sum.geomean) : json(nullptr)},
          {"text", CompareSummaryLine(c, s)}};
}

void WriteCompareJson(std::ostream& out, const CompareReport& report) {
  const Comparison& c = report.comparison;
  const CompareSettings& s = report.settings;
  auto devices = [](const ComparedFile& f) {
    json a = json::array();
    for (const auto& d : f.devices)
      a.push_back(d.Label());
    return a;
  };
  json j = {{"schema", "reduce-scan-bench-compare/1"},
            {"ratio", kRatioMeaning},
            {"rule", CompareRule(c, s)},
            {"devices_compared", c.devices},
            {"threshold", s.threshold},
            {"across_devices", s.acrossDevices},
            {"ignore_local_size", s.ignoreLocalSize},
            {"base", {{"path", report.base.path}, {"devices", devices(report.base)}}},
            {"new", {{"path", report.fresh.path}, {"devices", devices(report.fresh)}}},
            {"cases", json::array()},
            {"only_in_base", json::array()},
            {"only_in_new", json::array()},
            {"notes", c.notes}};
  for (const auto& m : c.matched) {
    json o = CompareCaseJson(m.base);
    o.erase("local_size");
    o.erase("device");
    o["base"] = SideJson(m.base);
    o["new"] = SideJson(m.fresh);
    JudgedJson(o["base"], m.baseMedian);
    JudgedJson(o["new"], m.newMedian);
    o["throughput_ratio"] = m.speedup ? json(*m.speedup) : json(nullptr);
    o["basis"] = ToString(m.basis);
    o["new_scale"] = m.newScale;
    o["p_value"] = m.p ? json(*m.p) : json(nullptr);
    if (m.basis == Basis::PairedRounds)
      o["round_ratios"] = m.roundRatios;
    o["change"] = ToString(m.change);
    o["regression"] = m.regression;
    o["note"] = m.note;
    j["cases"].push_back(o);
  }
  for (const auto& r : c.onlyBase)
    j["only_in_base"].push_back(CompareCaseJson(r));
  for (const auto& r : c.onlyNew)
    j["only_in_new"].push_back(CompareCaseJson(r));
  j["summary"] = CompareSummaryJson(c, s);
  out << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

void WriteVariantsJson(std::ostream& out, const std::vector<VariantListing>& rows) {
  json j = {{"schema", "reduce-scan-bench-variants/1"}, {"variants", json::array()}};
  for (const auto& r : rows)
    j["variants"].push_back({{"task", r.task},
                             {"variant", r.variant},
                             {"file", r.file},
                             {"description", r.description}});
  out << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

// One document each, for programs, its schema named in it.
class JsonPrinter : public Printer {
 public:
  void Results(std::ostream& out, const RunInfo& info,
               const std::vector<Result>& results) const override {
    WriteResultsJson(out, info, results);
  }
  void Explain(std::ostream& out, const RunInfo& info,
               const std::vector<Explanation>& cases) const override {
    WriteExplainJson(out, info, cases);
  }
  void Compare(std::ostream& out, const CompareReport& report) const override {
    WriteCompareJson(out, report);
  }
  void Variants(std::ostream& out, const std::vector<VariantListing>& rows) const override {
    WriteVariantsJson(out, rows);
  }
};

}  // namespace

std::unique_ptr<Printer> MakeJsonPrinter(const PrinterOptions&) {
  return std::make_unique<JsonPrinter>();
}

}  // namespace rsb
