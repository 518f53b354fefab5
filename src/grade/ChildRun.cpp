#include "grade/ChildRun.h"

#include "engine/Worker.h"
#include "grade/Resident.h"
#include "grade/Text.h"
#include "platform/Errors.h"
#include "platform/Files.h"
#include "platform/Subprocess.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace rsb::grade {

ServeChild OneRequest(const Code& code, const std::vector<std::string>& args,
                      const nlohmann::json& fields) {
  const auto run = args.begin() + std::ptrdiff_t(code.wrapper.size());
  ServeChild child{{args.begin(), run}, ""};
  child.command.insert(child.command.end(), {*run, "serve"});
  child.input = ServeRequest({run, args.end()}, fields);
  return child;
}

double SpeedRoundSeconds(const ChildSettings& s, RunKind kind) {
  return s.speedSeconds > 0 ? s.speedSeconds : kind == RunKind::TimedInTurns ? 1.0 : 0.3;
}

namespace {

// The fd of a child's end of its turns' socket (RunTimedInTurns; fd 3 is serve's answers').
constexpr int kTurnsFd = 4;

// Every child runs the variants' default settings (--no-profile): a tuning profile in the
// grader's cache folder is out of a sandboxed hand-in's sight, and the suite's own runs and the
// hand-ins' must be timed alike, on any machine.
void AddRunArgs(const ChildSettings& s, std::vector<std::string>& a, const std::string& output) {
  a.insert(a.end(), {"--seed", std::to_string(s.seed), "--format", "json", "--output", output, "-q",
                     "--no-profile"});
}

// A timed run's device is --platform and --device's; a run that only validates goes to
// --check-platform and --check-device's (the same unless given).
void AddDeviceArgs(const ChildSettings& s, RunKind kind, std::vector<std::string>& a) {
  if (!s.deviceLock.empty())
    a.insert(a.end(), {"--device-lock", s.deviceLock});
  const bool timed = kind != RunKind::Check && kind != RunKind::Oclgrind;
  const std::string& platform = timed ? s.platform : s.checkPlatform;
  const std::string& device = timed ? s.device : s.checkDevice;
  if (!platform.empty())
    a.insert(a.end(), {"--platform", platform});
  if (!device.empty())
    a.insert(a.end(), {"--device", device});
}

std::vector<std::string> ChildArgs(const ChildSettings& s, const Code& code, const Item& it,
                                   const CaseGroup& g, const std::string& localSize, RunKind kind,
                                   Isolation isolation, const std::string& output) {
  std::vector<std::string> sizes;
  for (const Extent& e : g.sizes)
    sizes.push_back(SizeText(e));
  std::vector<std::string> a = code.wrapper;
  a.insert(a.end(), {code.binary, "--kernels", code.kernels, "--task", it.task, "--variant",
                     it.variant, "--size", Join(sizes), "--type", JoinNames(g.types, ","), "--op",
                     JoinNames(g.ops, ",")});
  for (const auto& p : g.declared)
    if (const auto given = g.params.find(p.name); given != g.params.end()) {
      std::vector<std::string> v;
      for (size_t x : given->second)
        v.push_back(p.Text(x));
      a.insert(a.end(), {"--" + p.name, Join(v)});
    }
  a.insert(a.end(), {"--local-size", localSize});
  AddRunArgs(s, a, output);
  // Shared: every case in the child itself (the fast path); else a worker per problem.
  a.push_back(isolation == Isolation::Shared && kind != RunKind::Oclgrind ? "--no-isolate"
                                                                          : "--isolate");
  if (kind == RunKind::Timed || kind == RunKind::TimedInTurns) {
    // Only the times are compared: no memory ceilings (12 streams of 0.5 s a run). In turns: a
    // second of the two runs' steps, as many as fit (no early stop at a confidence interval).
    a.insert(a.end(),
             {"--iterations", "30", "--time-budget",
              fmt::format("{:g}", SpeedRoundSeconds(s, kind)), "--warmup", "1", "--no-ceilings"});
    if (kind == RunKind::TimedInTurns)
      a.insert(a.end(), {"--ci-target", "0"});
  } else {
    a.push_back("--check");
    if (kind == RunKind::Oclgrind)
      a.push_back("--oclgrind");
    if (g.validateRuns > 1)
      a.insert(a.end(), {"--validate-runs", std::to_string(g.validateRuns)});
  }
  // Under Oclgrind the only platform is Oclgrind's: the grading run's device does not apply.
  if (kind != RunKind::Oclgrind)
    AddDeviceArgs(s, kind, a);
  return a;
}

// What a run of `kind` is told beside its command line (Serve.h): the timer verdict a timed run
// takes as found, and the fd of its end of the turns' socket.
json RequestFields(const ChildSettings& s, RunKind kind) {
  json fields = json::object();
  const bool timed = kind == RunKind::Timed || kind == RunKind::TimedInTurns;
  if (timed && !s.timerVerdict.empty())
    fields["timer"] = s.timerVerdict;
  if (kind == RunKind::TimedInTurns)
    fields["turns"] = kTurnsFd;
  return fields;
}

std::optional<json> ReadResults(const std::string& output) {
  std::ifstream in(output);
  if (!in)
    return std::nullopt;
  try {
    json j = json::parse(in);
    if (j.is_object() && j["results"].is_array())
      return j;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// What happened to the whole run: "" as status when it ended with usable results.
std::pair<std::string, std::string> RunVerdict(const ProcessResult& p, bool haveResults,
                                               double timeoutS) {
  if (!p.started)
    return {"error", "could not start the child run: " + p.startError};
  if (p.interrupted)
    return {"error", "interrupted"};
  if (p.timedOut)
    return {"timeout", fmt::format("no answer within {:.3g} s (killed)", timeoutS)};
  if (p.signal) {
    const std::string err = Excerpt(p.err);
    return {"error",
            "crashed: killed by " + SignalName(p.signal) + (err.empty() ? "" : "\n" + err)};
  }
  if (!haveResults || p.exitCode == 2) {
    const std::string err = Excerpt(p.err);
    return {"error",
            fmt::format("exit status {} without a result: {}\n{}", p.exitCode, Headline(err), err)};
  }
  return {"", ""};
}

// A result of the child is this spec's (its type, operator, size and parameters: those that are
// keys of a case in their own fields).
bool Matches(const json& res, const CaseSpec& c) {
  if (res.value("type", "") != ToString(c.type) || res.value("op", "") != ToString(c.op) ||
      res.value("n", size_t(0)) != c.size.n)
    return false;
  if (c.size.height && res.value("height", size_t(0)) != c.size.height)
    return false;
  for (const auto& p : c.declared) {
    const auto it = c.params.find(p.name);
    if (it == c.params.end())
      continue;
    if (!p.field.empty() ? res.value(p.field, "") != p.Text(it->second)
                         : !res.contains("params") || !res["params"].is_object() ||
                               res["params"].value(p.name, size_t(0)) != it->second)
      return false;
  }
  return true;
}

// ... and this listed case's: its item's task and variant, at its local size ("auto": any).
bool Matches(const json& res, const ListedCase& c) {
  if (res.value("variant", "") != c.item->variant || res.value("task", "") != c.item->task ||
      (c.localSize != "auto" && std::to_string(res.value("local_size", size_t(0))) != c.localSize))
    return false;
  return Matches(res, c.spec);
}

// Runs the child and gives every expected case an outcome: its result (each result matched to
// one case, the first in order it fits), or what ended the run.
// What a child run ran, for --trace.
std::string TraceKind(const std::vector<std::string>& args) {
  const auto has = [&](const char* a) {
    return std::find(args.begin(), args.end(), a) != args.end();
  };
  return has("--cases")        ? "list"
         : has("--oclgrind")   ? "oclgrind"
         : has("--iterations") ? "timed"
         : has("--no-isolate") ? "check"
                               : "isolated";
}

std::string TraceStatus(const ProcessResult& p) {
  return !p.started      ? "not started"
         : p.interrupted ? "interrupted"
         : p.timedOut    ? "timeout"
         : p.signal      ? "crashed"
                         : std::to_string(p.exitCode);
}

// A resident may run the code's runs in one process (Resident.h): the suite's own binary, started
// with at most settings of the environment (`env VAR=VALUE...`: a kernel cache of its own, which
// a resident's own cache replaces; a sandbox's runs stay processes).
bool ResidentMayRun(const ChildSettings& s, const Code& code) {
  if (!s.residents || code.binary != s.residentBinary)
    return false;
  const std::vector<std::string>& w = code.wrapper;
  if (!w.empty() && w.front() != "/usr/bin/env")
    return false;
  for (size_t i = 1; i < w.size(); ++i)
    if (w[i].find('=') == std::string::npos || w[i].front() == '-')
      return false;
  return true;
}

// The command line without its wrapper where a resident may run it.
std::optional<std::vector<std::string>> ResidentArgs(const ChildSettings& s, const Code& code,
                                                     const std::vector<std::string>& args) {
  if (!ResidentMayRun(s, code))
    return std::nullopt;
  return std::vector<std::string>(args.begin() + std::ptrdiff_t(code.wrapper.size()), args.end());
}

// How an outcome of a whole run is worded: as a child run's (RunVerdict), or, for a case run
// alone in a resident (RunCasesInResidents), as an isolated run words its worker's end
// (common/engine/Worker.cpp), so that either way a case gets the same report.
struct Wording {
  bool asWorker = false;
  double limitS = 0;  // the deadline named in a timeout's message (0: the run's own)
};

// What ended a case's resident, as Worker.cpp's WorkerProcess::Finish says it.
std::string WorkerEnd(const ProcessResult& p) {
  std::string how = p.signal ? fmt::format("the worker process was killed by signal {} (SIG{}, {})",
                                           p.signal, sigabbrev_np(p.signal), strsignal(p.signal))
                             : fmt::format("the worker process exited with status {}", p.exitCode);
  std::string tail = p.err;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' '))
    tail.pop_back();
  if (tail.size() > 1500)
    tail = "..." + tail.substr(tail.size() - 1500);
  std::replace(tail.begin(), tail.end(), '\n', ' ');
  return tail.empty() ? how : how + "; it said: " + tail;
}

GroupRun Outcomes(const Code& code, ProcessResult p, const std::string& output,
                  const std::vector<ListedCase>& expected, double timeoutS, const Wording& wording);

// Where a child run of the code writes its results: the code's own work folder, or the run's.
std::string WorkDir(const ChildSettings& s, const Code& code) {
  return code.workDir.empty() ? s.workDir : code.workDir;
}

// A child run's code as --trace names it: the hand-in's work folder, or "suite".
std::string TraceCode(const Code& code, const std::string& dir) {
  return code.workDir.empty() ? "suite" : fs::path(dir).filename().string();
}

// The cases a run of group g at one local size must answer, in order.
std::vector<ListedCase> Expected(const Item& it, const CaseGroup& g, const std::string& localSize) {
  std::vector<ListedCase> expected;
  for (const CaseSpec& spec : Expand(g))
    expected.push_back({&it, spec, localSize});
  return expected;
}

// A run, its command line args (after the code's wrapper), told fields (RequestFields).
struct Run {
  std::vector<std::string> args;
  json fields = json::object();
};

GroupRun Collect(const ChildSettings& s, const Code& code, const Run& run, const std::string& dir,
                 const std::string& output, const std::vector<ListedCase>& expected,
                 double timeoutS, bool oneProcess, const Wording& wording = {}) {
  const std::vector<std::string>& args = run.args;
  std::error_code ec;
  fs::remove(output, ec);
  const auto resident = oneProcess ? ResidentArgs(s, code, args) : std::nullopt;
  const double started = s.trace ? s.trace->Now() : 0;
  const ServeChild child = OneRequest(code, args, run.fields);
  ProcessResult p = resident ? s.residents->Run(*resident, timeoutS, dir, run.fields)
                             : RunProcess(child.command, timeoutS, dir, child.input);
  if (s.trace)
    s.trace->Add(started, p.seconds, TraceCode(code, dir), TraceKind(args), resident.has_value(),
                 TraceStatus(p));
  return Outcomes(code, std::move(p), output, expected, timeoutS, wording);
}

// A case's outcome from its result in the child's JSON.
void FromResult(const json& res, const std::string& root, CaseOutcome& c) {
  c.wholeRun = false;
  c.status = res.value("status", "error");
  c.message = ShortenPaths(res.value("message", ""), root);
  if (c.status == "skipped") {
    c.status = "error";  // the rubric asks for a case this device cannot run
    c.message = "skipped on this device: " + c.message;
  }
  if (res.contains("time_ms") && res["time_ms"].is_object() && res["time_ms"]["median"].is_number())
    c.medianMs = res["time_ms"]["median"].get<double>();
  if (res.contains("samples_ms") && res["samples_ms"].is_array())
    for (const auto& round : res["samples_ms"])
      if (round.is_array())
        for (const auto& x : round)
          if (x.is_number())
            c.samplesMs.push_back(x.get<double>());
  c.timer = res.value("timer", std::string());
  if (res.contains("oclgrind") && res["oclgrind"].is_object())
    c.oclgrind = res["oclgrind"];
}

// The child's answer read: every expected case's outcome (its result, or what ended the run).
GroupRun Outcomes(const Code& code, ProcessResult p, const std::string& output,
                  const std::vector<ListedCase>& expected, double timeoutS,
                  const Wording& wording) {
  std::error_code ec;
  // A sandbox (bwrap) ends with 128 + the signal that ended the child.
  if (!code.wrapper.empty() && code.wrapper.front().find("bwrap") != std::string::npos &&
      !p.signal && p.exitCode > 128 && p.exitCode < 128 + 65) {
    p.signal = p.exitCode - 128;
    p.exitCode = -1;
  }
  std::optional<json> j = ReadResults(output);
  fs::remove(output, ec);
  auto [runStatus, runMessage] =
      RunVerdict(p, j.has_value(), wording.limitS > 0 ? wording.limitS : timeoutS);
  if (runStatus == "error")
    j.reset();  // the results of a run that crashed or refused its input are not trusted
  const bool workerEnded = wording.asWorker && runStatus == "error" && p.started &&
                           !p.interrupted && (p.signal || p.exitCode != 2);
  if (workerEnded)
    runMessage = WorkerEnd(p);
  const std::string root = fs::path(code.kernels).parent_path().string();
  runMessage = ShortenPaths(runMessage, root);
  GroupRun run;
  run.results = j;
  run.seconds = p.seconds;
  run.timedOut = p.timedOut;
  const json none = json::array();
  const json& results = j ? (*j)["results"] : none;
  std::vector<bool> used(results.size());
  for (const ListedCase& e : expected) {
    CaseOutcome c;
    c.label = e.spec.Label() + (e.localSize == "auto" ? "" : " L=" + e.localSize);
    c.status = runStatus.empty() ? "error" : runStatus;
    c.message = runStatus.empty() ? "no result for this case" : runMessage;
    c.wholeRun = !runStatus.empty() && !workerEnded;
    for (size_t r = 0; r < results.size(); ++r) {
      const json& res = results[r];
      if (used[r] || !Matches(res, e))
        continue;
      used[r] = true;
      FromResult(res, root, c);
      break;
    }
    run.cases.push_back(std::move(c));
  }
  return run;
}

std::string OutputFile(const std::string& dir, const char* stem) {
  static std::atomic<int> counter{0};
  return (fs::path(dir) / fmt::format("{}-{}.json", stem, counter++)).string();
}

}  // namespace

RunTrace::RunTrace(const std::string& path)
    : path_(path),
      text_("start_s,seconds,code,run,where,status\n"),
      begin_(std::chrono::steady_clock::now()) {
  WriteWhole("--trace", path_, text_);
}

double RunTrace::Now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
}

void RunTrace::Add(double startS, double seconds, const std::string& code, const std::string& run,
                   bool resident, const std::string& status) {
  std::lock_guard l(mu_);
  text_ += fmt::format("{:.3f},{:.3f},{},{},{},{}\n", startS, seconds, code, run,
                       resident ? "resident" : "process", status);
  try {
    WriteWhole("--trace", path_, text_);
  } catch (const DeviceError&) {  // said by Finish, on the grading thread
  }
}

void RunTrace::Finish() {
  std::lock_guard l(mu_);
  WriteWhole("--trace", path_, text_);
}

namespace {

// An isolated run (a case per process) where residents run the code: each case a run of its own
// in a resident, so that a crash, an OpenCL error or a hang stays that case's (its resident is
// replaced) as in a worker process of its own (Worker.h), without a new context per case. One
// deadline for the group, as for its child run: a case that reaches it is `timeout`, and so is
// every case after it.
GroupRun RunCasesInResidents(const ChildSettings& s, const Code& code, const Item& it,
                             const CaseGroup& g, const std::string& localSize, double timeoutS) {
  const std::string dir = WorkDir(s, code);
  const auto begin = std::chrono::steady_clock::now();
  GroupRun all;
  json results = json::array(), device;  // the device: as the first run that names one says
  for (const CaseSpec& spec : Expand(g)) {
    const ListedCase one{&it, spec, localSize};
    const double left =
        timeoutS - std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (all.timedOut || left <= 0 || Interrupted()) {
      CaseOutcome c;
      c.label = spec.Label() + (localSize == "auto" ? "" : " L=" + localSize);
      c.status = Interrupted() ? "error" : "timeout";
      c.message = Interrupted() ? "interrupted"
                                : fmt::format("no answer within {:.3g} s (killed)", timeoutS);
      c.wholeRun = true;
      all.timedOut = all.timedOut || !Interrupted();
      all.cases.push_back(std::move(c));
      continue;
    }
    const std::string output = OutputFile(dir, "run");
    GroupRun r = Collect(s, code,
                         {ChildArgs(s, code, it, GroupOf(g, spec), localSize, RunKind::Check,
                                    Isolation::Shared, output)},
                         dir, output, {one}, left, /*oneProcess=*/true, {true, timeoutS});
    all.seconds += r.seconds;
    all.timedOut = all.timedOut || r.timedOut;
    if (r.results) {
      for (const auto& res : (*r.results)["results"])
        results.push_back(res);
      if (device.is_null())
        device = r.results->value("device", json());
    }
    all.cases.push_back(std::move(r.cases.front()));
  }
  // Shaped as a child's results (a device, when any run named one, and the cases' results).
  all.results = json{{"results", results}};
  if (device.is_object())
    (*all.results)["device"] = device;
  return all;
}

}  // namespace

GroupRun RunGroup(const ChildSettings& s, const Code& code, const Item& it, const CaseGroup& g,
                  const std::string& localSize, RunKind kind, double timeoutS,
                  Isolation isolation) {
  if (isolation == Isolation::PerCase && kind == RunKind::Check && ResidentMayRun(s, code))
    return RunCasesInResidents(s, code, it, g, localSize, timeoutS);
  const std::string dir = WorkDir(s, code);
  const std::string output = OutputFile(dir, "run");
  return Collect(
      s, code,
      {ChildArgs(s, code, it, g, localSize, kind, isolation, output), RequestFields(s, kind)}, dir,
      output, Expected(it, g, localSize), timeoutS,
      isolation == Isolation::Shared && kind != RunKind::Oclgrind);
}

GroupRun RunCaseList(const ChildSettings& s, const Code& code, const std::vector<ListedCase>& cases,
                     size_t validateRuns, double timeoutS) {
  const std::string dir = WorkDir(s, code);
  const std::string output = OutputFile(dir, "cases");
  json list = json::array();
  for (const ListedCase& c : cases) {
    json e = {{"task", c.item->task},
              {"variant", c.item->variant},
              {"type", ToString(c.spec.type)},
              {"op", ToString(c.spec.op)},
              {"n", c.spec.size.n}};
    e["local_size"] = c.localSize == "auto" ? size_t(0) : std::stoul(c.localSize);
    if (c.spec.size.height)
      e["height"] = c.spec.size.height;
    for (const auto& p : c.spec.declared)
      if (const auto it = c.spec.params.find(p.name); it != c.spec.params.end()) {
        if (p.field.empty())
          e["params"][p.name] = it->second;
        else
          e[p.field] = p.Text(it->second);
      }
    list.push_back(e);
  }
  const std::string file = OutputFile(dir, "case-list");
  WriteWhole("the child's case list", file, json{{"cases", list}}.dump(1) + "\n");
  std::vector<std::string> a = code.wrapper;
  a.insert(a.end(), {code.binary, "--kernels", code.kernels, "--cases", file, "--check",
                     "--no-isolate", "--validate-runs", std::to_string(validateRuns)});
  AddRunArgs(s, a, output);
  AddDeviceArgs(s, RunKind::Check, a);
  GroupRun run = Collect(s, code, {a}, dir, output, cases, timeoutS, /*oneProcess=*/true);
  std::error_code ec;
  fs::remove(file, ec);
  return run;
}

std::pair<GroupRun, GroupRun> RunTimedInTurns(const ChildSettings& s, const Code& a, const Code& b,
                                              const Item& it, const CaseGroup& g,
                                              const std::string& localSize, double timeoutA,
                                              double timeoutB) {
  const std::vector<ListedCase> expected = Expected(it, g, localSize);
  std::vector<TurnRun> runs;
  std::vector<std::string> outputs;
  for (const auto& [code, timeoutS] : {std::pair{&a, timeoutA}, std::pair{&b, timeoutB}}) {
    const std::string dir = WorkDir(s, *code);
    outputs.push_back(OutputFile(dir, "timed"));
    std::error_code ec;
    fs::remove(outputs.back(), ec);
    const ServeChild child = OneRequest(*code,
                                        ChildArgs(s, *code, it, g, localSize, RunKind::TimedInTurns,
                                                  Isolation::Shared, outputs.back()),
                                        RequestFields(s, RunKind::TimedInTurns));
    runs.push_back({child.command, timeoutS, dir, true, child.input});
  }
  const double started = s.trace ? s.trace->Now() : 0;
  std::vector<ProcessResult> p = RunInTurns(runs, kTurnsFd);
  std::vector<GroupRun> out;
  for (size_t k = 0; k < 2; ++k) {
    const Code& code = k ? b : a;
    if (s.trace)
      s.trace->Add(started, p[k].seconds, TraceCode(code, runs[k].workDir), "timed", false,
                   TraceStatus(p[k]));
    out.push_back(Outcomes(code, std::move(p[k]), outputs[k], expected, runs[k].timeoutS, {}));
  }
  return {std::move(out[0]), std::move(out[1])};
}

}  // namespace rsb::grade
