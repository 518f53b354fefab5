#include "engine/Result.h"

#include "platform/Pattern.h"

#include <fmt/format.h>

#include <map>

namespace rsb {

std::string ToString(Status s) {
  switch (s) {
    case Status::Passed:
      return "passed";
    case Status::Failed:
      return "failed";
    case Status::Error:
      return "error";
    case Status::Timeout:
      return "timeout";
    case Status::Untimed:
      return "untimed";
    case Status::Skipped:
    default:
      return "skipped";
  }
}

const std::vector<Status>& AllStatuses() {
  static const std::vector<Status> all = {Status::Passed, Status::Failed,  Status::Skipped,
                                          Status::Error,  Status::Timeout, Status::Untimed};
  return all;
}

std::optional<Status> ParseStatus(const std::string& s) {
  for (Status status : AllStatuses())
    if (ToString(status) == s)
      return status;
  return std::nullopt;
}

std::string SizeText(size_t n, size_t height) {
  return height ? fmt::format("{}x{}", n / height, height) : fmt::format("{}", n);
}

std::string FieldsText(const Result& r, const std::string& sep) {
  std::string s;
  for (const auto& [name, value] : r.fields)
    s += (s.empty() ? "" : sep) + value;
  return s;
}

std::string CaseLabel(const Result& r) {
  const std::string fields = FieldsText(r);
  std::string label =
      fmt::format("{}/{} {} {}{} n={}{}", r.task, r.variant, ToString(r.type), ToString(r.op),
                  fields.empty() ? "" : " " + fields, SizeText(r.n, r.height),
                  r.localSize ? fmt::format(" L={}", r.localSize) : "");
  for (const auto& [name, value] : r.params)
    label += fmt::format(" {}={}", name, value);
  return label;
}

std::vector<AlikeGroup> GroupAlike(const std::vector<const Result*>& results) {
  // A number: digits (with letters, dots and an exponent's sign: 1.5e+30, 0x7f0), inf or nan,
  // where no letter, digit, dot or ':' comes right before it.
  static const Pattern number(R"((^|[^\w.:])[-+]?(\d(?:[eE][-+]\d|[\w.])*|(?:inf|nan)\b))");
  std::vector<AlikeGroup> groups;
  std::map<std::string, size_t> byKey;  // the key: device, status, message with numbers as #
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = *results[i];
    const std::string key = r.status == Status::Passed
                                ? std::to_string(i)
                                : fmt::format("{}|{}|{}", r.device, ToString(r.status),
                                              number.Replace(r.message, "$1#"));
    const auto [it, fresh] = byKey.emplace(key, groups.size());
    if (fresh)
      groups.push_back({i, 0});
    ++groups[it->second].count;
  }
  return groups;
}

std::string AlikeText(size_t count) {
  return count > 1 ? fmt::format(" (and {} more case{} with this message but for its numbers)",
                                 count - 1, count > 2 ? "s" : "")
                   : "";
}

namespace {

nlohmann::json BreakdownJson(const Breakdown& b) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& k : b.kernels) {
    a.push_back({{"kernel", k.kernel},
                 {"launches", k.launches},
                 {"time_ms", k.timeMs},
                 {"time_ms_median", k.timeMsMedian},
                 {"share", k.share},
                 {"bytes_moved", k.bytes},
                 {"gbytes_s", k.gbytesS},
                 {"bandwidth_util", k.bandwidthUtil},
                 {"memory_bytes", k.memoryBytes}});
    if (!k.utilisationSuspect.empty())
      a.back()["utilisation_suspect"] = k.utilisationSuspect;
  }
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

// {"source": "profile", "profile": PATH, "profile_date": DATE}: the profile's fields only where one
// was used, the note only where there is one.
nlohmann::json SettingsJson(const SettingsSource& s) {
  nlohmann::json o = {{"source", s.source}};
  if (!s.profile.empty()) {
    o["profile"] = s.profile;
    o["profile_date"] = s.profileDate;
  }
  if (!s.note.empty())
    o["note"] = s.note;
  return o;
}

nlohmann::json OclgrindJson(const OclgrindReport& g) {
  nlohmann::json diagnostics = nlohmann::json::array();
  for (const auto& d : g.diagnostics) {
    nlohmann::json calls = nlohmann::json::array();
    for (const auto& c : d.calledFrom)
      calls.push_back({{"function", c.function}, {"file", c.file}, {"lines", c.lines}});
    diagnostics.push_back({{"kind", d.kind},
                           {"kernel", d.kernel},
                           {"file", d.file},
                           {"line", d.line},
                           {"work_item", d.workItem},
                           {"text", d.text},
                           {"function", d.function},
                           {"called_from", calls}});
  }
  return {{"diagnostics", diagnostics},
          {"diagnostic_count", g.diagnosticCount},
          {"instructions", g.instructions},
          {"kernels", g.kernels}};
}

OclgrindReport OclgrindFromJson(const nlohmann::json& g) {
  OclgrindReport report;
  for (const auto& d : g.at("diagnostics")) {
    report.diagnostics.push_back({d.at("kind").get<std::string>(),
                                  d.at("kernel").get<std::string>(),
                                  d.at("file").get<std::string>(),
                                  d.at("line").get<size_t>(),
                                  d.at("work_item").get<std::string>(),
                                  d.at("text").get<std::string>(),
                                  d.value("function", std::string()),
                                  {}});
    for (const auto& c : d.value("called_from", nlohmann::json::array()))
      report.diagnostics.back().calledFrom.push_back({c.at("function").get<std::string>(),
                                                      c.at("file").get<std::string>(),
                                                      c.at("lines").get<std::vector<size_t>>()});
  }
  report.diagnosticCount = g.value("diagnostic_count", report.diagnostics.size());
  report.instructions = g.at("instructions").get<uint64_t>();
  report.kernels = g.at("kernels").get<std::map<std::string, uint64_t>>();
  return report;
}

void CostFromJson(const nlohmann::json& c, CostModel& cost) {
  cost.launches = c.at("launches").get<size_t>();
  cost.steps = c.at("steps").get<size_t>();
  cost.ops = c.at("ops").get<size_t>();
  cost.bytesRead = c.at("bytes_read").get<size_t>();
  cost.bytesWritten = c.at("bytes_written").get<size_t>();
  cost.bytesReadRepeated = c.value("bytes_read_repeated", uint64_t(0));
}

Breakdown BreakdownFromJson(const nlohmann::json& j) {
  Breakdown b;
  if (!j.contains("breakdown"))
    return b;

  for (const auto& k : j.at("breakdown"))
    b.kernels.push_back({k.at("kernel").get<std::string>(), k.at("launches").get<size_t>(),
                         k.at("time_ms").get<double>(), k.at("time_ms_median").get<double>(),
                         k.at("share").get<double>(), k.at("bytes_moved").get<uint64_t>(),
                         k.at("gbytes_s").get<double>(), k.at("bandwidth_util").get<double>(),
                         k.value("memory_bytes", k.at("bytes_moved").get<uint64_t>()),
                         k.value("utilisation_suspect", std::string())});
  for (const auto& u : j.value("untimed", nlohmann::json::array()))
    b.untimed.push_back({u.at("command").get<std::string>(), u.at("phase").get<std::string>(),
                         u.at("launches").get<size_t>(), u.at("time_ms").get<double>()});
  b.gapsMs = j.value("gaps_ms", 0.0);
  b.gapsMsMedian = j.value("gaps_ms_median", 0.0);
  return b;
}

// What the device's timer measured: none of it for an untimed result.
nlohmann::json MeasuredJson(const Result& r) {
  nlohmann::json o = {
      {"time_ms",
       {{"median", r.timeMs.median},
        {"min", r.timeMs.min},
        {"max", r.timeMs.max},
        {"mean", r.timeMs.mean},
        {"stddev", r.timeMs.stddev},
        {"ci_low", r.timeMs.ciLow},
        {"ci_high", r.timeMs.ciHigh}}},
      {"ci_met", r.ciMet},
      {"gelem_s", r.gelemS},
      {"gbytes_s", r.gbytesS},
      {"bandwidth_util", r.bandwidthUtil},
      {"ceiling", r.ceiling},
      {"ceiling_gbytes_s", r.ceilingGBs},
      {"ceiling_stream_bytes", r.ceilingStreamBytes},
      {"utilisation", r.utilisation},
      // Where the median span goes (Breakdown.h): empty unless timed with every event kept.
      {"breakdown", BreakdownJson(r.breakdown)},
      {"gaps_ms", r.breakdown.gapsMs},
      {"gaps_ms_median", r.breakdown.gapsMsMedian},
      // Outside the span: the resets before every timed run ("prepare", median per run) and what
      // the first validated run enqueued before it (its resets and poison fills, "validation").
      {"untimed", UntimedJson(r.breakdown)},
  };
  if (!r.utilisationSuspect.empty())
    o["utilisation_suspect"] = r.utilisationSuspect;
  o["samples_ms"] = r.samplesMs;  // every timed run, round by round
  if (r.samplesMs.size() > 1)
    o["time_ms_rounds"] = {{"rounds", r.samplesMs.size()}, {"median", r.roundsMs.median},
                           {"min", r.roundsMs.min},        {"max", r.roundsMs.max},
                           {"mean", r.roundsMs.mean},      {"stddev", r.roundsMs.stddev},
                           {"ci_low", r.roundsMs.ciLow},   {"ci_high", r.roundsMs.ciHigh}};
  if (!r.timer.empty()) {  // which clock gave every time above
    o["timer"] = r.timer;
    o["timer_resolution_ns"] = r.timerResolutionNs;
  }
  return o;
}

// time_ms, samples_ms and time_ms_rounds (an untimed result has none: they stay empty).
void TimesFromJson(const nlohmann::json& j, Result& r) {
  const auto stats = [](const nlohmann::json& t) {
    return TimeStats{t.at("median").get<double>(), t.at("min").get<double>(),
                     t.at("max").get<double>(),    t.at("mean").get<double>(),
                     t.at("stddev").get<double>(), t.at("ci_low").get<double>(),
                     t.at("ci_high").get<double>()};
  };
  if (j.contains("time_ms"))
    r.timeMs = stats(j.at("time_ms"));
  if (j.contains("samples_ms"))
    r.samplesMs = j.at("samples_ms").get<std::vector<std::vector<double>>>();
  if (j.contains("time_ms_rounds"))
    r.roundsMs = stats(j.at("time_ms_rounds"));
}

}  // namespace

nlohmann::json CaseJson(const Result& r) {
  nlohmann::json o = {{"task", r.task},
                      {"variant", r.variant},
                      {"type", ToString(r.type)},
                      {"op", ToString(r.op)},
                      {"n", r.n},
                      {"width", r.height ? r.n / r.height : r.n},
                      {"height", r.height ? r.height : 1},
                      {"local_size", r.localSize}};
  for (const auto& [name, value] : r.fields)
    o[name] = value;
  return o;
}

namespace {

// A run's kernels or untimed commands: [name, launches, bytes, ns, memory bytes] each.
nlohmann::json KernelRunsJson(const std::vector<KernelRun>& kernels) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& k : kernels)
    a.push_back({k.name, k.launches, k.bytes, k.ns, k.memoryBytes});
  return a;
}

std::vector<KernelRun> KernelRunsFromJson(const nlohmann::json& a) {
  std::vector<KernelRun> kernels;
  for (const auto& k : a)
    kernels.push_back({k.at(0).get<std::string>(), k.at(1).get<size_t>(), k.at(2).get<uint64_t>(),
                       k.at(3).get<uint64_t>(), k.at(4).get<uint64_t>()});
  return kernels;
}

// timedRuns: [span ns, gaps ns, kernels, untimed] a run.
nlohmann::json TimedRunsJson(const std::vector<RunBreakdown>& runs) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& run : runs)
    a.push_back({run.spanNs, run.gapsNs, KernelRunsJson(run.kernels), KernelRunsJson(run.untimed)});
  return a;
}

std::vector<RunBreakdown> TimedRunsFromJson(const nlohmann::json& a) {
  std::vector<RunBreakdown> runs;
  for (const auto& run : a)
    runs.push_back({run.at(0).get<uint64_t>(), run.at(1).get<uint64_t>(),
                    KernelRunsFromJson(run.at(2)), KernelRunsFromJson(run.at(3))});
  return runs;
}

}  // namespace

nlohmann::json ResultToJson(const Result& r, bool withRuns) {
  nlohmann::json o = CaseJson(r);
  o.update({
      {"status", ToString(r.status)},
      {"message", r.message},
      {"iterations", r.iterations},
      {"ci_target", r.ciTarget},
      {"cold", r.cold},
      {"bytes_moved", r.cost.BytesMoved()},
      {"fits_in_cache", r.fitsInCache},
      {"cost",
       {{"launches", r.cost.launches},
        {"steps", r.cost.steps},
        {"ops", r.cost.ops},
        {"bytes_read", r.cost.bytesRead},
        {"bytes_written", r.cost.bytesWritten},
        {"bytes_read_repeated", r.cost.bytesReadRepeated}}},
      {"launches_enqueued", r.launchesEnqueued},
      {"validated_runs", r.validatedRuns},
      {"code_path", r.codePath},
      {"portable", r.portable},
      {"lookback_fallback", r.lookbackFallback},
      {"tuning", r.tuning},
      {"params", r.params},
      {"settings", SettingsJson(r.settings)},
      {"kernel_options", r.kernelOptions},
      {"oclgrind", r.oclgrind ? OclgrindJson(*r.oclgrind) : nullptr},  // null: not under Oclgrind
  });
  if (!r.buildLog.empty())
    o["build_log"] = r.buildLog;
  if (r.height)
    o["shape"] = SizeText(r.n, r.height);
  if (r.status != Status::Untimed)  // nothing the device's timer said is shown
    o.update(MeasuredJson(r));
  if (withRuns && !r.timedRuns.empty())
    o["timed_runs"] = TimedRunsJson(r.timedRuns);
  return o;
}

Result ResultFromJson(const nlohmann::json& j, const std::vector<std::string>& fields) {
  Result r;
  r.task = j.at("task").get<std::string>();
  r.variant = j.at("variant").get<std::string>();
  r.type = ParseElementType(j.at("type").get<std::string>()).value();
  r.op = ParseOp(j.at("op").get<std::string>()).value();
  for (const auto& name : fields)
    if (j.contains(name))
      r.fields[name] = j.at(name).get<std::string>();
  r.n = j.at("n").get<size_t>();
  if (j.contains("shape"))
    r.height = j.at("height").get<size_t>();
  r.localSize = j.at("local_size").get<size_t>();
  r.status = ParseStatus(j.at("status").get<std::string>()).value_or(Status::Skipped);
  r.message = j.at("message").get<std::string>();
  r.buildLog = j.value("build_log", std::string());
  r.iterations = j.at("iterations").get<size_t>();
  TimesFromJson(j, r);
  r.timer = j.value("timer", std::string());  // absent in older files and untimed results
  r.timerResolutionNs = j.value("timer_resolution_ns", uint64_t(0));
  r.ciMet = j.value("ci_met", false);
  r.ciTarget = j.at("ci_target").get<double>();
  r.cold = j.at("cold").get<bool>();
  r.gelemS = j.value("gelem_s", 0.0);
  r.gbytesS = j.value("gbytes_s", 0.0);
  r.bandwidthUtil = j.value("bandwidth_util", 0.0);
  r.ceiling = j.value("ceiling", std::string());
  r.ceilingGBs = j.value("ceiling_gbytes_s", 0.0);
  r.ceilingStreamBytes = j.value("ceiling_stream_bytes", size_t(0));  // absent in older files
  r.utilisation = j.value("utilisation", 0.0);
  r.utilisationSuspect = j.value("utilisation_suspect", std::string());
  r.fitsInCache = j.at("fits_in_cache").get<bool>();
  CostFromJson(j.at("cost"), r.cost);
  r.launchesEnqueued = j.at("launches_enqueued").get<size_t>();
  r.validatedRuns = j.at("validated_runs").get<size_t>();
  r.codePath = j.at("code_path").get<std::string>();
  r.portable = j.at("portable").get<bool>();
  r.lookbackFallback = j.at("lookback_fallback").get<bool>();
  r.tuning = j.at("tuning").get<std::map<std::string, size_t>>();
  if (j.contains("params"))
    r.params = j.at("params").get<std::map<std::string, size_t>>();
  r.kernelOptions = j.value("kernel_options", std::string());
  if (j.contains("settings")) {  // absent in files written before tuning profiles
    const auto& s = j.at("settings");
    r.settings = {s.at("source").get<std::string>(), s.value("profile", std::string()),
                  s.value("profile_date", std::string()), s.value("note", std::string())};
  }
  r.breakdown = BreakdownFromJson(j);
  if (j.contains("timed_runs"))
    r.timedRuns = TimedRunsFromJson(j.at("timed_runs"));
  if (j.contains("oclgrind") && j.at("oclgrind").is_object())
    r.oclgrind = OclgrindFromJson(j.at("oclgrind"));
  return r;
}

}  // namespace rsb
