#include "tools/grade/Grade.h"

#include "cli/CliChecks.h"
#include "engine/Oclgrind.h"
#include "platform/BuildInfo.h"
#include "platform/CLUtil.h"
#include "platform/DeviceLock.h"
#include "platform/Errors.h"
#include "platform/Subprocess.h"
#include "tools/grade/ChildRun.h"
#include "tools/grade/Class.h"
#include "tools/grade/HostBuild.h"
#include "tools/grade/Report.h"
#include "tools/grade/Rubric.h"
#include "tools/grade/Sandbox.h"
#include "tools/grade/Text.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <thread>

namespace fs = std::filesystem;
using nlohmann::json;

namespace rsb {

namespace {

using namespace grade;

// ---------------------------------------------------------------------------------------------
// Options

struct GradeOptions {
  std::vector<std::string> handins;
  std::string rubric, outputDir = "grades", platform, device, handinKit, suiteSource;
  std::vector<std::string> items;  // --items: grade only these rubric items
  std::string sandbox = "bwrap";   // --sandbox: bwrap (Sandbox.h) or none
  std::string format;              // --format gradescope: also DIR/results.json (Report.h)
  double timeoutS = 60, buildTimeoutS = 120;
  size_t jobs = 0;  // --jobs: hand-ins graded at once (0: the cores)
  // --speed-alone: what of a timed child run has the device alone: "run" (the whole child run),
  // "loop" (its timed loops, through a device lock), "auto" (run on a CPU device, else loop).
  std::string speedAlone = "auto";
  size_t shardIndex = 1, shardCount = 1;  // --shard K/N (1-based)
  bool quiet = false;
};

// The shipped rubric: installed next to the kernels, else in the source tree of this binary.
std::string DefaultRubric() {
  std::error_code ec;
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  const fs::path installed =
      exe.parent_path().parent_path() / "share" / "reduce-scan-bench" / "grading" / "rubric.json";
  if (!ec && fs::is_regular_file(installed, ec))
    return installed.string();
  return (fs::path(RSB_SOURCE_DIR) / "grading" / "rubric.json").string();
}

GradeOptions ParseGradeOptions(int argc, char** argv, bool& help) {
  GradeOptions o;
  CLI::App app{
      "reduce-scan-bench grade: scores hand-ins (folders with kernels/ and optionally\n"
      "src/tasks/CReductionTask.*, src/tasks/CScanTask.*, src/tasks/CConvolutionTask.*) against a "
      "rubric; every item "
      "runs in a child\n"
      "process under --timeout. Writes DIR/<name>.md, DIR/<name>.json, DIR/summary.csv.",
      "reduce-scan-bench grade"};
  app.set_help_flag();
  app.add_flag("-h,--help", help, "Print this help and exit");
  app.add_option("HANDIN", o.handins, "Hand-in folders (each with kernels/)")
      ->check(cli::Allowed("an existing folder (a hand-in with kernels/)",
                           [](const std::string& v) { return fs::is_directory(v); }));
  app.add_option("--rubric", o.rubric,
                 "Rubric JSON (default: grading/rubric.json of the suite's source tree)")
      ->check(cli::Allowed("a readable rubric JSON file",
                           [](const std::string& v) { return fs::is_regular_file(v); }));
  auto seconds = [](double max) {
    return cli::Allowed(fmt::format("a number of seconds from 1 to {:g}", max),
                        [max](const std::string& v) {
                          char* end = nullptr;
                          const double d = std::strtod(v.c_str(), &end);
                          return !v.empty() && *end == '\0' && d >= 1 && d <= max;
                        });
  };
  app.add_option("--timeout", o.timeoutS,
                 "Seconds each item's child run may take before it is killed (default 60)")
      ->check(seconds(86400));
  app.add_option("--build-timeout", o.buildTimeoutS,
                 "Seconds a hand-in's host code may take to build (default 120)")
      ->check(seconds(86400));
  app.add_option("--output-dir", o.outputDir, "Folder of the reports (default grades)");
  app.add_option("--platform", o.platform, "Platform: index or name substring");
  app.add_option("--device", o.device, "Device: index or name substring");
  app.add_option("--handin-kit", o.handinKit,
                 "The hand-in kit that hand-ins' host code is built against (default: "
                 "handin-kit next to this binary, or the installed one)");
  // Deprecated (hidden): hand-ins' host code is built against the kit, not a source tree.
  app.add_option("--suite-source", o.suiteSource)->group("");
  std::string items;
  app.add_option("--items", items,
                 "Grade only these rubric items (ids, comma-separated; default: all)");
  app.add_option("--sandbox", o.sandbox,
                 "bwrap: every child run of a hand-in's code in a bubblewrap sandbox (no network, "
                 "writes only in its own folder, other hand-ins, rubric and reports hidden, "
                 "limits); none: without (default bwrap)")
      ->check(CLI::IsMember({"bwrap", "none"}));
  app.add_option("--jobs,-j", o.jobs,
                 "Hand-ins graded at once (default: the machine's cores on a CPU device, at most 4 "
                 "on a GPU, whose contexts take turns); every speed measurement still has the "
                 "device alone")
      ->check(cli::Allowed("a whole number from 1 to 1024", [](const std::string& v) {
        return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos &&
               v.size() < 5 && std::stoul(v) >= 1 && std::stoul(v) <= 1024;
      }));
  app.add_option("--speed-alone", o.speedAlone,
                 "What of a speed measurement has the device alone: run (its whole child run, "
                 "builds included), loop (only its timed loops: the children share a lock file, "
                 "and the suite's own rounds are timed once for the class), or auto (default: run "
                 "on a CPU device, whose speed is the machine's load; loop on any other)")
      ->check(CLI::IsMember({"auto", "run", "loop"}));
  std::string shard;
  app.add_option("--shard", shard,
                 "K/N: grade only the K-th of N parts of the class (by a hash of each hand-in's "
                 "name: a re-run of a shard grades the same hand-ins); join with `grade merge`")
      ->check(
          cli::Allowed("K/N with whole numbers 1 <= K <= N <= 100000", [](const std::string& v) {
            unsigned long k = 0, n = 0;
            char tail = 0;
            return std::sscanf(v.c_str(), "%lu/%lu%c", &k, &n, &tail) == 2 &&
                   v.find_first_not_of("0123456789/") == std::string::npos && k >= 1 && k <= n &&
                   n <= 100000;
          }));
  app.add_option("--format", o.format,
                 "gradescope: also write DIR/results.json, Gradescope's autograder results, of "
                 "the one HANDIN (grading/gradescope/run_autograder)")
      ->check(cli::Allowed("gradescope", [](const std::string& v) { return v == "gradescope"; }));
  app.add_flag("--quiet,-q", o.quiet, "No progress on stderr");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  if (help) {
    std::cout << app.help();
    return o;
  }
  if (!shard.empty())
    std::sscanf(shard.c_str(), "%zu/%zu", &o.shardIndex, &o.shardCount);
  if (!o.suiteSource.empty())
    throw UsageError(
        "--suite-source: no longer used; hand-ins' host code is built against the hand-in kit "
        "(handin-kit next to this binary, written by every build), see --handin-kit DIR");
  for (size_t at = 0; !items.empty() && at <= items.size();) {
    const size_t comma = std::min(items.find(',', at), items.size());
    if (comma == at)
      throw UsageError(
          fmt::format("--items '{}': an empty item id; allowed: ids, comma-separated", items));
    o.items.push_back(items.substr(at, comma - at));
    at = comma + 1;
  }
  if (o.sandbox == "bwrap")
    if (const SandboxAvailability a = SandboxStatus(); !a.ok)
      throw UsageError("--sandbox bwrap: " + a.reason);
  if (o.handins.empty())
    throw UsageError(
        "HANDIN: none given; allowed: one or more hand-in folders (each with kernels/)");
  CheckFormat(o.format, o.handins);
  if (o.rubric.empty()) {
    o.rubric = DefaultRubric();
    if (!fs::is_regular_file(o.rubric))
      throw UsageError(
          fmt::format("--rubric: not given and no '{}'; allowed: a rubric JSON file", o.rubric));
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// Grading

// A hand-in's time limit is the suite's own time for the same child run, times this, and never
// below --timeout: a machine busy enough to slow a correct hand-in slows the reference as much.
constexpr double kTimeSlack = 5;
// A speed floor compares medians of this many timed runs of each, taken in turn.
constexpr int kSpeedRounds = 3;
// Hand-ins graded at once on a GPU by default: each child is a process with an OpenCL context of
// its own, and a GPU time-slices between contexts; on the H100 4 at a time graded 13 correct
// hand-ins a minute, 16 at a time 8 (docs/BENCHMARKS.md).
constexpr size_t kGpuJobs = 4;

// A temporary folder removed on every way out of the scope.
class TempDir {
 public:
  TempDir() {
    std::string path = (fs::temp_directory_path() / "rsb-grade-XXXXXX").string();
    if (!::mkdtemp(path.data()))
      throw DeviceError("cannot create a temporary folder in " +
                        fs::temp_directory_path().string());
    path_ = path;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& Path() const { return path_; }

 private:
  std::string path_;
};

// Turns on the device: every child run that validates shares it; a speed measurement has it
// alone (no other child run of the grader on the device while it times). Writers first: a speed
// measurement waiting stops new shared turns, so that it is never starved by a busy class.
class DeviceTurns {
 public:
  void Share() {
    std::unique_lock l(mu_);
    free_.wait(l, [&] { return !alone_ && waiting_ == 0; });
    ++sharing_;
  }
  void EndShare() {
    std::lock_guard l(mu_);
    if (--sharing_ == 0)
      free_.notify_all();
  }
  void Alone() {
    std::unique_lock l(mu_);
    ++waiting_;
    free_.wait(l, [&] { return !alone_ && sharing_ == 0; });
    --waiting_;
    alone_ = true;
  }
  void EndAlone() {
    std::lock_guard l(mu_);
    alone_ = false;
    free_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable free_;
  int sharing_ = 0, waiting_ = 0;
  bool alone_ = false;
};

// A turn on the device for one scope (None: a run that does not use it).
class DeviceTurn {
 public:
  enum Kind { None, Shared, Alone };
  DeviceTurn(DeviceTurns& turns, Kind kind) : turns_(turns), kind_(kind) {
    if (kind_ == Shared)
      turns_.Share();
    else if (kind_ == Alone)
      turns_.Alone();
  }
  ~DeviceTurn() {
    if (kind_ == Shared)
      turns_.EndShare();
    else if (kind_ == Alone)
      turns_.EndAlone();
  }
  DeviceTurn(const DeviceTurn&) = delete;
  DeviceTurn& operator=(const DeviceTurn&) = delete;

 private:
  DeviceTurns& turns_;
  Kind kind_;
};

struct Context {
  GradeOptions opt;
  Rubric rubric;
  ChildSettings child;
  Code suite;          // the suite's own binary and kernels: the reference
  std::string kitDir;  // the hand-in kit, where a hand-in brings host code
  DeviceTurns turns;
  std::mutex mu;  // guards what follows (hand-ins are graded on --jobs threads)
  // Per child run (item, case group, local size, kind, isolation): the suite's own wall time.
  std::map<std::string, double> referenceSeconds;
  std::map<std::string, std::optional<json>> referenceOclgrind;  // per item: the suite's counts
  // Per item: the suite's own timed rounds and why any failed, where they are timed once for the
  // class (GradeSpeed).
  std::map<std::string, std::pair<std::vector<double>, std::string>> referenceSpeed;
  std::set<std::string> warned;  // items whose reference failed (said once)
  std::string deviceName;

  // Oclgrind runs on the CPU, beside the device; a timed run has the device alone: for its whole
  // child run on a CPU device (whose builds and start-up compete with the timing), only around
  // its timed loops where the children share a device lock (a GPU: child.deviceLock).
  DeviceTurn::Kind TurnOf(RunKind kind) const {
    if (kind == RunKind::Oclgrind || !child.deviceLock.empty())
      return DeviceTurn::None;
    return kind == RunKind::Timed ? DeviceTurn::Alone : DeviceTurn::Shared;
  }

  GroupRun Run(const Code& code, const Item& it, const CaseGroup& g, const std::string& ls,
               RunKind kind, double timeoutS, Isolation isolation) {
    GroupRun run;
    {
      const DeviceTurn turn(turns, TurnOf(kind));
      run = RunGroup(child, code, it, g, ls, kind, timeoutS, isolation);
    }
    NoteDevice(run);
    return run;
  }

  // A list of cases of one task in one child (RunCaseList): validates, so it shares the device.
  GroupRun RunList(const Code& code, const std::vector<ListedCase>& cases, size_t validateRuns,
                   double timeoutS) {
    GroupRun run;
    {
      const DeviceTurn turn(turns, TurnOf(RunKind::Check));
      run = RunCaseList(child, code, cases, validateRuns, timeoutS);
    }
    NoteDevice(run);
    return run;
  }

  void NoteDevice(const GroupRun& run) {
    std::lock_guard l(mu);
    if (deviceName.empty() && run.results && (*run.results)["device"].is_object())
      deviceName = (*run.results)["device"].value("name", "");
  }
};

std::string RunKey(const Item& it, size_t group, const std::string& ls, RunKind kind,
                   Isolation isolation) {
  return fmt::format("{}/{}/{}/{}/{}", it.id, group, ls, static_cast<int>(kind),
                     static_cast<int>(isolation));
}

// The code's cases all passed; else the first case that did not, as "label: status: message".
std::optional<std::string> FirstNotPassed(const GroupRun& run) {
  for (const auto& c : run.cases)
    if (c.status != "passed")
      return c.label + ": " + c.status + ": " + c.message.substr(0, c.message.find('\n'));
  return std::nullopt;
}

// A rubric case the suite's own code cannot run on this device is the rubric's error (exit 2).
void RefuseSkipped(const Context& ctx, const Item& it, const CaseOutcome& c) {
  if (c.message.rfind("skipped on this device", 0) == 0)
    throw UsageError(fmt::format(
        "--rubric '{}': item '{}': the case {} can never run on this device ({}); allowed: "
        "cases the device can run",
        ctx.rubric.path, it.id, c.label, c.message));
}

// The suite's own code failing (a hand-out's stubs, a broken build) is said once per item, not
// hidden: the item's time limit is then --timeout, and its speed and work gates have no
// reference. The caller holds ctx.mu.
void WarnReference(Context& ctx, const Item& it, const char* what, const std::string& bad) {
  if (ctx.warned.insert(it.id).second)
    std::cerr << fmt::format(
        "warning: item '{}': the suite's own code does not pass {} ({}): is this binary built "
        "from the hand-out?\n",
        it.id, what, bad);
}

// The suite's own code on the child run: its wall time (the base of a hand-in's time limit),
// with a fresh kernel cache so that it pays the kernel builds a hand-in pays. A rubric case
// the suite's own code does not pass on this device is the rubric's error (exit 2).
double MeasureReference(Context& ctx, const Item& it, size_t group, const std::string& ls,
                        RunKind kind, Isolation isolation) {
  const CaseGroup& g = kind == RunKind::Oclgrind ? it.oclgrindCase : it.groups[group];
  // No deadline of note: the suite's code is trusted, and a slow machine is what it measures.
  const GroupRun run =
      ctx.Run(ctx.suite, it, g, ls, kind, std::max(600.0, 10 * ctx.opt.timeoutS), isolation);
  for (const auto& c : run.cases)
    RefuseSkipped(ctx, it, c);
  std::lock_guard l(ctx.mu);
  if (const auto bad = FirstNotPassed(run))
    WarnReference(ctx, it, kind == RunKind::Oclgrind ? "the Oclgrind case" : "it", *bad);
  if (FirstNotPassed(run))
    return 0;
  double& s = ctx.referenceSeconds[RunKey(it, group, ls, kind, isolation)];
  s = std::max(s, run.seconds);
  if (kind == RunKind::Oclgrind && !run.cases.empty())
    ctx.referenceOclgrind[it.id] = run.cases.front().oclgrind;
  return s;
}

// The hand-in's limit: kTimeSlack times the suite's own time for the same run (measured now
// where it was not yet), never below --timeout.
double TimeLimit(Context& ctx, const Item& it, size_t group, const std::string& ls, RunKind kind,
                 Isolation isolation) {
  const std::string key = RunKey(it, group, ls, kind, isolation);
  {
    std::lock_guard l(ctx.mu);
    if (const auto at = ctx.referenceSeconds.find(key); at != ctx.referenceSeconds.end())
      return std::max(ctx.opt.timeoutS, kTimeSlack * at->second);
  }
  return std::max(ctx.opt.timeoutS,
                  kTimeSlack * MeasureReference(ctx, it, group, ls, kind, isolation));
}

bool AllPassed(const GroupRun& run) {
  return !run.cases.empty() && !FirstNotPassed(run);
}

// A hand-in's child run. First every case in one process (Isolation::Shared: one OpenCL
// start-up, each program built once); where all pass, that is the verdict. Anything else (a
// wrong result, a crash, an OpenCL error, a timeout) is decided by a run with each case in a
// worker of its own, as before this fast path: a case that crashes or corrupts memory cannot
// take its neighbours with it, so the report names exactly the cases at fault. A timeout of
// that run is retried once, after the reference is measured again (the machine may have become
// busier); a fast run that timed out counts as that first try. `start`: where the task's list
// run (RunLists) already showed the fast run's verdict, Isolated (a case of the group did not
// pass) or IsolatedAfterTimeout (the list run hung in this group: that was the first try).
enum class Start { Fast, Isolated, IsolatedAfterTimeout };

GroupRun RunHandin(Context& ctx, const Code& code, const Item& it, size_t group,
                   const std::string& ls, RunKind kind, double& limit, Start start = Start::Fast) {
  const CaseGroup& g = kind == RunKind::Oclgrind ? it.oclgrindCase : it.groups[group];
  bool retried = start == Start::IsolatedAfterTimeout;
  if (kind != RunKind::Oclgrind && start == Start::Fast) {
    limit = TimeLimit(ctx, it, group, ls, kind, Isolation::Shared);
    GroupRun fast = ctx.Run(code, it, g, ls, kind, limit, Isolation::Shared);
    if (AllPassed(fast) || Interrupted())
      return fast;
    retried = fast.timedOut;
  }
  if (retried)
    MeasureReference(ctx, it, group, ls, kind, Isolation::PerCase);
  limit = TimeLimit(ctx, it, group, ls, kind, Isolation::PerCase);
  GroupRun run = ctx.Run(code, it, g, ls, kind, limit, Isolation::PerCase);
  if (!run.timedOut || retried || Interrupted())
    return run;
  MeasureReference(ctx, it, group, ls, kind, Isolation::PerCase);
  limit = TimeLimit(ctx, it, group, ls, kind, Isolation::PerCase);
  return ctx.Run(code, it, g, ls, kind, limit, Isolation::PerCase);
}

// A hand-in's correctness, faster still: per task, every case of the items it grades (every case
// group at every local size) in one child run, so that the hand-in pays one OpenCL start-up and
// one build of each program per task instead of one per case group. A group whose cases all
// passed there is decided by it; every other group (a case that failed, crashed, hung or was not
// reached) is run as RunHandin runs it, which decides it and names the cases at fault. A case
// that did not compile is decided by the list run too (BuildFailure).
struct TaskList {
  std::vector<ListedCase> cases;
  std::vector<std::string> keys;  // per case: its group's RunKey (Check, Shared)
  size_t validateRuns = 1;        // the most any of its groups asks for
};

TaskList ListOf(const std::vector<const Item*>& items) {
  TaskList l;
  for (const Item* it : items)
    for (size_t gi = 0; gi < it->groups.size(); ++gi) {
      const CaseGroup& g = it->groups[gi];
      l.validateRuns = std::max(l.validateRuns, g.validateRuns);
      for (const auto& ls : g.localSizes)
        for (const CaseSpec& spec : Expand(g)) {
          l.cases.push_back({it, spec, ls});
          l.keys.push_back(RunKey(*it, gi, ls, RunKind::Check, Isolation::Shared));
        }
    }
  return l;
}

std::vector<const Item*> ItemsOf(const Rubric& r, const std::string& task) {
  std::vector<const Item*> items;
  for (const auto& it : r.items)
    if (it.task == task)
      items.push_back(&it);
  return items;
}

// The suite's own code on every case of the task's items (the list runs' time limit: kTimeSlack
// times it, never below --timeout; where the suite's code does not pass, --timeout).
double ListLimit(Context& ctx, const std::string& task) {
  const std::string key = "list/" + task;
  {
    std::lock_guard l(ctx.mu);
    if (const auto at = ctx.referenceSeconds.find(key); at != ctx.referenceSeconds.end())
      return std::max(ctx.opt.timeoutS, kTimeSlack * at->second);
  }
  const TaskList l = ListOf(ItemsOf(ctx.rubric, task));
  const GroupRun run =
      ctx.RunList(ctx.suite, l.cases, l.validateRuns, std::max(600.0, 10 * ctx.opt.timeoutS));
  bool passed = true;
  for (size_t i = 0; i < run.cases.size(); ++i) {
    RefuseSkipped(ctx, *l.cases[i].item, run.cases[i]);
    passed = passed && run.cases[i].status == "passed";
  }
  std::lock_guard lk(ctx.mu);
  double& s = ctx.referenceSeconds[key];
  s = passed ? std::max(s, run.seconds) : 0;
  return std::max(ctx.opt.timeoutS, kTimeSlack * s);
}

// A case whose kernels did not compile: decided wherever it ran (a build depends on the source
// and the options only, not on what ran before it in the process), so its group needs no run
// with a worker per case, which would compile the failing program once per case.
bool BuildFailure(const CaseOutcome& c) {
  return c.status == "error" && !c.wholeRun && c.message.rfind("kernel build failed", 0) == 0;
}

struct FastVerdicts {
  // By RunKey: the groups the list run decided (every case passed, or did not compile).
  std::map<std::string, GroupRun> decided;
  std::set<std::string> failed;  // groups with a case whose own result did not pass
  std::set<std::string> hung;    // per task, the group its list run was killed in (timed out)
  std::map<std::string, double> limits;  // per task: its list run's time limit
};

FastVerdicts RunLists(Context& ctx, const std::map<std::string, Code>& codes,
                      const std::map<std::string, std::vector<const Item*>>& items) {
  FastVerdicts v;
  for (const auto& [task, its] : items) {
    const TaskList l = ListOf(its);
    if (l.cases.empty() || Interrupted())
      continue;
    const double limit = ListLimit(ctx, task);
    const GroupRun run = ctx.RunList(codes.at(task), l.cases, l.validateRuns, limit);
    v.limits[task] = limit;
    std::map<std::string, GroupRun> groups;
    std::set<std::string> open;  // groups the list run does not decide
    bool killedIn = false;
    for (size_t i = 0; i < l.cases.size(); ++i) {
      const CaseOutcome& c = run.cases[i];
      groups[l.keys[i]].cases.push_back(c);
      if (c.status == "passed" || BuildFailure(c))
        continue;
      open.insert(l.keys[i]);
      if (!c.wholeRun && c.status != "timeout" && c.message != "no result for this case")
        v.failed.insert(l.keys[i]);
      // The child writes each result as its case ends and runs them in order: a run killed at
      // its limit hung in the first case without one.
      if (run.timedOut && c.wholeRun && !killedIn) {
        v.hung.insert(l.keys[i]);
        killedIn = true;
      }
    }
    for (auto& [key, g] : groups)
      if (!open.count(key)) {
        g.seconds = run.seconds;
        v.decided[key] = std::move(g);
      }
  }
  return v;
}

// Calls fn(i) for every i in [0, count) on up to `jobs` threads (the caller's among them), in
// the order of i as threads free up. Once interrupted, or once fn threw, no new i starts; the
// first exception is rethrown when every thread has ended.
void ForEachOnJobs(size_t count, size_t jobs, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first;
  std::mutex mu;
  auto work = [&] {
    for (size_t i = 0; !failed && !Interrupted() && (i = next++) < count;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard l(mu);
        if (!first)
          first = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(jobs, count); ++t)
    threads.emplace_back(work);
  work();
  for (auto& t : threads)
    t.join();
  if (first)
    std::rethrow_exception(first);
}

// Before the first hand-in, on --jobs threads (the limits are measured under the load the
// hand-ins will meet): each task's list run (ListLimit) and each item's Oclgrind case. The
// reference of a single case group is measured where a hand-in first needs it (TimeLimit).
void MeasureReferences(Context& ctx) {
  std::vector<std::string> tasks;
  std::vector<const Item*> gated;
  for (const auto& it : ctx.rubric.items) {
    if (std::find(tasks.begin(), tasks.end(), it.task) == tasks.end())
      tasks.push_back(it.task);
    if (it.oclgrind != GateMode::Off)
      gated.push_back(&it);
  }
  ForEachOnJobs(tasks.size() + gated.size(), ctx.opt.jobs, [&](size_t i) {
    if (!ctx.opt.quiet) {
      std::lock_guard l(ctx.mu);
      std::cerr << fmt::format("  reference: {}\n",
                               i < tasks.size() ? "every case of the task " + tasks[i]
                                                : gated[i - tasks.size()]->id + " on Oclgrind");
    }
    if (i < tasks.size()) {
      ListLimit(ctx, tasks[i]);
      return;
    }
    const Item& it = *gated[i - tasks.size()];
    MeasureReference(ctx, it, 0, it.oclgrindCase.localSizes.front(), RunKind::Oclgrind,
                     Isolation::PerCase);
  });
}

// A speed floor needs a device that can time: the suite's own timed run of the first speed case
// is `untimed` where the device's profiling timer is unusable (ProfilingTimer.h), and then no
// speed item can be scored here. A usage error before any hand-in, as for a case the device
// can never run, naming the items that have speed floors; --items without them still grades.
void CheckSpeedTimer(Context& ctx) {
  std::vector<std::string> speed, others;
  const Item* first = nullptr;
  for (const auto& it : ctx.rubric.items) {
    (it.speedFloor ? speed : others).push_back(it.id);
    if (it.speedFloor && !first)
      first = &it;
  }
  if (!first || Interrupted())
    return;
  const CaseGroup& sc = first->speedCase;
  const GroupRun run = ctx.Run(ctx.suite, *first, sc, sc.localSizes.front(), RunKind::Timed,
                               std::max(600.0, 10 * ctx.opt.timeoutS), Isolation::Shared);
  const std::string prefix = "validated; not timed: ";
  for (const auto& c : run.cases)
    if (c.status == "untimed")
      throw UsageError(fmt::format(
          "--rubric '{}': {} {} {} a speed floor, but this device cannot time {}: {}; allowed: "
          "a device whose profiling timer works, or --items {}",
          ctx.rubric.path, speed.size() > 1 ? "items" : "item", Join(speed, ", "),
          speed.size() > 1 ? "have" : "has", speed.size() > 1 ? "them" : "it",
          c.message.rfind(prefix, 0) == 0 ? c.message.substr(prefix.size()) : c.message,
          others.empty() ? "naming items without a speed floor (this rubric has none)"
                         : Join(others, ",") + " (the items without a speed floor)"));
}

// An Oclgrind gate needs oclgrind on PATH (the GPU machines often have none): a usage error
// before any hand-in, naming the items that have one, as for speed floors on an untimed device.
void CheckOclgrindGates(const Context& ctx) {
  std::vector<std::string> gated, others;
  for (const auto& it : ctx.rubric.items)
    (it.oclgrind != GateMode::Off ? gated : others).push_back(it.id);
  if (gated.empty())
    return;
  try {
    FindOclgrind();
  } catch (const UsageError&) {
    throw UsageError(fmt::format(
        "--rubric '{}': {} {} an Oclgrind gate, but there is no oclgrind on PATH; allowed: "
        "Oclgrind installed (the Debian package oclgrind, scripts/install-deps.sh), a rubric "
        "with \"oclgrind\": \"off\", or --items {}",
        ctx.rubric.path, gated.size() > 1 ? "items " + Join(gated, ", ") : "item " + gated[0],
        gated.size() > 1 ? "have" : "has",
        others.empty() ? "naming items without one (this rubric has none)"
                       : Join(others, ",") + " (the items without one)"));
  }
}

int Rank(const std::string& status) {
  if (status == "passed")
    return 0;
  if (status == "failed")
    return 1;
  if (status == "error")
    return 2;
  return 3;  // timeout
}

std::optional<json> FirstWrong(const std::string& message) {
  static const std::regex re(
      R"(wrong result at index (\d+): expected (.*), got (.*?)( \(never written: still holds the poison\))? \((\d+) of (\d+) elements wrong\))");
  std::smatch m;
  if (!std::regex_search(message, m, re))
    return std::nullopt;
  return json{{"index", std::stoull(m[1].str())},
              {"expected", m[2].str()},
              {"actual", m[3].str()},
              {"never_written", m[4].matched},
              {"wrong_elements", std::stoull(m[5].str())}};
}

// The item's correctness: every case entry at every local size; the worst case decides.
void GradeCases(Context& ctx, const Item& it, const Code& code, const FastVerdicts& fast,
                ItemGrade& g) {
  std::vector<std::string> runOf;  // per case: the run it was part of
  if (const auto l = fast.limits.find(it.task); l != fast.limits.end())
    g.timeLimitS = l->second;  // its cases ran in the task's list run first
  for (size_t gi = 0; gi < it.groups.size() && !Interrupted(); ++gi) {
    const CaseGroup& group = it.groups[gi];
    for (const auto& ls : group.localSizes) {
      const std::string key = RunKey(it, gi, ls, RunKind::Check, Isolation::Shared);
      const auto decided = fast.decided.find(key);
      double limit = 0;  // a decided group's is its list run's, in g.timeLimitS already
      GroupRun run = decided != fast.decided.end()
                         ? decided->second
                         : RunHandin(ctx, code, it, gi, ls, RunKind::Check, limit,
                                     fast.hung.count(key)     ? Start::IsolatedAfterTimeout
                                     : fast.failed.count(key) ? Start::Isolated
                                                              : Start::Fast);
      g.timeLimitS = std::max(g.timeLimitS, limit);
      std::vector<std::string> sizes;
      for (const Extent& e : group.sizes)
        sizes.push_back(SizeText(e));
      const std::string what = fmt::format(
          "the run of {} case(s) n={} {} {}{}{}", run.cases.size(), Join(sizes),
          JoinNames(group.types), JoinNames(group.ops),
          group.kinds.empty() ? "" : " " + JoinNames(group.kinds), ls == "auto" ? "" : " L=" + ls);
      for (auto& c : run.cases) {
        g.cases.push_back(std::move(c));
        runOf.push_back(what);
      }
    }
  }
  g.status = "passed";
  for (size_t i = 0; i < g.cases.size(); ++i)
    if (const auto& c = g.cases[i]; Rank(c.status) > Rank(g.status)) {
      g.status = c.status;
      g.detail = (c.wholeRun ? runOf[i] : c.label) + ": " + c.message;
      if (c.status == "failed")
        g.firstWrong = FirstWrong(c.message);
    }
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// One timed run of c on the item's speed case: its median into `into`, or why not into `why`.
void TimeOnce(Context& ctx, const Item& it, const Code& c, bool handin, std::vector<double>& into,
              std::string& why) {
  const CaseGroup& sc = it.speedCase;
  const GroupRun run = ctx.Run(c, it, sc, sc.localSizes.front(), RunKind::Timed,
                               std::max(60.0, ctx.opt.timeoutS), Isolation::Shared);
  const CaseOutcome* o = run.cases.size() == 1 ? &run.cases[0] : nullptr;
  if (o && o->status == "passed" && o->medianMs && *o->medianMs > 0)
    into.push_back(*o->medianMs);
  else if (why.empty())
    why = (handin ? "the hand-in's" : "the reference's") + std::string(" timed run: ") +
          (o ? o->status + ": " + o->message : "no result");
}

// The suite's own rounds, timed once for the class (the first hand-in to need them times them).
std::vector<double> ReferenceRounds(Context& ctx, const Item& it, std::string& why) {
  {
    std::lock_guard l(ctx.mu);
    if (const auto at = ctx.referenceSpeed.find(it.id); at != ctx.referenceSpeed.end()) {
      why = at->second.second;
      return at->second.first;
    }
  }
  std::vector<double> ref;
  for (int round = 0; round < kSpeedRounds && !Interrupted(); ++round)
    TimeOnce(ctx, it, ctx.suite, false, ref, why);
  std::lock_guard l(ctx.mu);
  if (!Interrupted())
    ctx.referenceSpeed.insert({it.id, {ref, why}});
  return ref;
}

// Speed against the suite's own kernels and host code: kSpeedRounds timed runs of each; the
// medians of their medians are compared. Where a timed loop has the device alone whatever the
// machine does (a GPU's children share a device lock: the event timer counts device time, which
// the host's load does not reach), the suite's rounds are timed once for the class; elsewhere (a
// CPU device, whose speed is the host's load) in turn with each hand-in's, so that both see the
// same machine.
void GradeSpeed(Context& ctx, const Item& it, const Code& code, ItemGrade& g) {
  const CaseGroup& sc = it.speedCase;
  const bool once = !ctx.child.deviceLock.empty();
  std::string why;
  std::vector<double> ref = once ? ReferenceRounds(ctx, it, why) : std::vector<double>(), mine;
  for (int round = 0; round < kSpeedRounds && !Interrupted(); ++round) {
    if (!once)
      TimeOnce(ctx, it, ctx.suite, false, ref, why);
    TimeOnce(ctx, it, code, true, mine, why);
  }
  json s = {
      {"floor", *it.speedFloor}, {"case", Expand(sc).front().Label()}, {"rounds", kSpeedRounds}};
  if (!ref.empty())
    s["reference_ms"] = Median(ref);
  if (!mine.empty())
    s["handin_ms"] = Median(mine);
  s["met"] = false;
  if (ref.size() == size_t(kSpeedRounds) && mine.size() == size_t(kSpeedRounds)) {
    const double ratio = Median(ref) / Median(mine);
    s["ratio"] = ratio;
    s["met"] = ratio >= *it.speedFloor;
    if (ratio < *it.speedFloor)
      g.detail = fmt::format("correct, but {:.2f}x the reference's speed, below the floor {:g}x",
                             ratio, *it.speedFloor);
  } else {
    g.detail = "correct, but not timed: " + why;
  }
  if (!s["met"].get<bool>())
    g.points = 0;
  g.speed = s;
}

// The diagnostics of an Oclgrind run, one line each.
std::string Diagnostics(const json& oclgrind) {
  std::string out;
  if (oclgrind.contains("diagnostics") && oclgrind["diagnostics"].is_array())
    for (const auto& d : oclgrind["diagnostics"])
      out += (out.empty() ? "" : "\n") +
             (!d.is_object() ? d.dump()
              : d.value("file", "").empty()  // Oclgrind's own notes, of no place
                  ? fmt::format("{}: {}", d.value("kind", "?"), d.value("text", ""))
                  : fmt::format("{} at {}:{} in {}, work-item {} ({})", d.value("kind", "?"),
                                d.value("file", "?"), d.value("line", 0), d.value("kernel", "?"),
                                d.value("work_item", "?"), d.value("text", "")));
  return out;
}

// Oclgrind's verdict on the item's Oclgrind case: diagnostics (a note, or the points with
// Deduct) and the instructions executed against the suite's own kernels (the work ceiling).
void GradeOclgrind(Context& ctx, const Item& it, const Code& code, ItemGrade& g) {
  double limit = 0;
  const GroupRun run =
      RunHandin(ctx, code, it, 0, it.oclgrindCase.localSizes.front(), RunKind::Oclgrind, limit);
  const CaseOutcome& c = run.cases.front();
  json o = {{"mode", ToString(it.oclgrind)}, {"case", c.label}};
  std::string problem;
  if (!c.oclgrind) {
    problem = "oclgrind: the run under Oclgrind gave no verdict: " + c.status + ": " + c.message;
  } else {
    o["diagnostics"] = (*c.oclgrind).value("diagnostics", json::array());
    problem = Diagnostics(*c.oclgrind);
    if (!problem.empty())
      problem = "oclgrind: " + problem;
    std::optional<json> ref;
    {
      std::lock_guard l(ctx.mu);
      ref = ctx.referenceOclgrind[it.id];
    }
    const double mineN = (*c.oclgrind).value("instructions", 0.0);
    const double refN = ref ? ref->value("instructions", 0.0) : 0.0;
    o["instructions"] = mineN;
    o["reference_instructions"] = refN;
    if (it.workCeiling && refN <= 0 && problem.empty())
      problem = "oclgrind: the work is not compared: the suite's own kernels gave no count";
    if (refN > 0) {
      o["work_ratio"] = mineN / refN;
      if (it.workCeiling && mineN / refN > *it.workCeiling && problem.empty())
        problem = fmt::format(
            "correct, but it executes {:.2f}x the instructions of the suite's kernel on {} "
            "(Oclgrind's counts; ceiling {:g}x): not work-efficient",
            mineN / refN, c.label, *it.workCeiling);
    }
  }
  o["problem"] = problem;
  g.oclgrind = o;
  if (problem.empty())
    return;
  if (it.oclgrind == GateMode::Deduct) {
    g.status = problem.rfind("correct", 0) == 0 ? "passed" : "failed";
    g.points = 0;
    g.detail = problem;
  } else {
    g.detail = "note (no points deducted): " + problem;
  }
}

ItemGrade GradeItem(Context& ctx, const Item& it, const Code& code, const FastVerdicts& fast,
                    const std::string& hostError) {
  ItemGrade g;
  g.item = &it;
  if (!hostError.empty()) {
    g.status = "error";
    g.detail = hostError;
    return g;
  }
  if (!fs::is_directory(code.kernels)) {
    g.status = "error";
    g.detail = "the hand-in has no kernels/ folder";
    return g;
  }
  GradeCases(ctx, it, code, fast, g);
  if (g.status != "passed")
    return g;
  g.points = it.points;
  if (it.oclgrind != GateMode::Off && !Interrupted())
    GradeOclgrind(ctx, it, code, g);
  if (g.points > 0 && it.speedFloor && !Interrupted())
    GradeSpeed(ctx, it, code, g);
  return g;
}

std::string HandinName(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (p.filename().empty())
    p = p.parent_path();
  std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..")
    name = fs::absolute(p).lexically_normal().filename().string();
  return name;
}

// How hand-ins' host code is built: against the hand-in kit, read and checked once before any
// hand-in is graded where one brings host code (a missing or broken kit: DeviceError, exit 3).
HostBuildSettings HostBuildFor(const Context& ctx, const std::string& work, Kit& kit) {
  HostBuildSettings host{nullptr, work, ctx.opt.buildTimeoutS, {}, {}};
  for (const auto& it : ctx.rubric.items)
    host.graded.insert(it.task);
  if (std::none_of(ctx.opt.handins.begin(), ctx.opt.handins.end(),
                   [&](const std::string& h) { return !HandinTasks(h, host.graded).empty(); }))
    return host;
  kit = LoadKit(ctx.opt.handinKit.empty() ? DefaultKitDir() : ctx.opt.handinKit, work,
                ctx.opt.buildTimeoutS);
  host.kit = &kit;
  return host;
}

// The hand-ins' report names, each once.
std::vector<std::string> HandinNames(const std::vector<std::string>& handins) {
  std::vector<std::string> names;
  for (const auto& h : handins) {
    const std::string name = HandinName(h);
    if (std::find(names.begin(), names.end(), name) != names.end())
      throw UsageError(
          fmt::format("HANDIN '{}': a second hand-in named '{}'; allowed: hand-in "
                      "folders with different names (reports are DIR/<name>.md)",
                      h, name));
    names.push_back(name);
  }
  return names;
}

// --items: the rubric keeps only the items named, in its own order.
void SelectItems(Rubric& rubric, const std::vector<std::string>& ids) {
  if (ids.empty())
    return;
  std::vector<std::string> known;
  for (const auto& it : rubric.items)
    known.push_back(it.id);
  for (const auto& id : ids)
    if (std::find(known.begin(), known.end(), id) == known.end())
      throw UsageError(fmt::format("--items '{}': no such item in '{}'; allowed: {}", id,
                                   rubric.path, Join(known, ", ")));
  std::vector<Item> kept;
  for (auto& it : rubric.items)
    if (std::find(ids.begin(), ids.end(), it.id) != ids.end())
      kept.push_back(std::move(it));
  rubric.items = std::move(kept);
}

// The output folder, made and written once before anything runs: a folder that cannot be
// written is a usage error now, not after the first hand-in.
void CheckOutputDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw UsageError(
        fmt::format("--output-dir '{}': cannot create the folder ({}); allowed: a writable folder",
                    dir, ec ? ec.message() : "a file of that name exists"));
  const fs::path probe = fs::path(dir) / ".rsb-grade-write-test";
  {
    std::ofstream out(probe);
    out << "x";
    out.flush();
    if (!out) {
      fs::remove(probe, ec);
      throw UsageError(fmt::format(
          "--output-dir '{}': cannot write in the folder; allowed: a writable folder", dir));
    }
  }
  fs::remove(probe, ec);
}

// The files the rubric requires that the hand-in lacks, per item: "" when it has them all.
std::string MissingFiles(const Rubric& r, const Item& it, const std::string& handin) {
  std::vector<std::string> missing;
  for (const auto& f : r.requiredFiles) {
    const std::string task = TaskOfFile(f);
    if ((task.empty() || task == it.task) && !fs::is_regular_file(fs::path(handin) / f))
      missing.push_back(f);
  }
  if (missing.empty())
    return "";
  return fmt::format("the hand-in lacks {}, which the rubric requires", Join(missing, ", "));
}

// The hand-in's own copy in its work folder (regular files only: a link could point at what the
// hand-in must not read), which its sandbox sees; the original's folder stays hidden.
std::string CopyHandin(const std::string& from, const std::string& workDir) {
  const fs::path to = fs::path(workDir) / "handin";
  fs::create_directories(to);
  for (const char* part : {"kernels", "src"})
    if (fs::is_directory(fs::path(from) / part))
      fs::copy(fs::path(from) / part, to / part,
               fs::copy_options::recursive | fs::copy_options::skip_symlinks);
  return to.string();
}

// How the hand-in's children start: in its sandbox (or, with --sandbox none, only with a
// kernel cache of their own), writing nothing outside workDir.
std::vector<std::string> HandinWrapper(const Context& ctx, const std::string& workDir) {
  if (ctx.opt.sandbox == "none") {
    const std::string cache = (fs::path(workDir) / "kernel-cache").string();
    fs::create_directories(cache);
    return {"/usr/bin/env", "POCL_CACHE_DIR=" + cache, "CUDA_CACHE_PATH=" + cache + "/nv"};
  }
  SandboxPolicy policy;
  policy.writableDir = workDir;
  // Other hand-ins (and the folders holding them), the rubric, the reports and the grader's
  // own temporary folder are out of sight; the suite's binary and kernels stay readable.
  for (const auto& h : ctx.opt.handins) {
    const fs::path abs = fs::absolute(h).lexically_normal();
    policy.hidden.push_back(abs.string());
    if (abs.parent_path() != abs.root_path())  // a class folder, never the whole file system
      policy.hidden.push_back(abs.parent_path().string());
  }
  policy.hidden.push_back(fs::absolute(ctx.opt.rubric).lexically_normal().string());
  policy.hidden.push_back(fs::absolute(ctx.opt.outputDir).lexically_normal().string());
  policy.hidden.push_back(ctx.child.workDir);
  // The suite's binary, its kernels and the kit's precompiled headers (LoadKit) stay readable.
  policy.readOnly = {fs::path(ctx.suite.binary).parent_path().string(), ctx.suite.kernels,
                     ctx.child.workDir + "/pch"};
  if (!ctx.child.deviceLock.empty())  // flock(2) needs no write access
    policy.readOnly.push_back(fs::path(ctx.child.deviceLock).parent_path().string());
  if (!ctx.kitDir.empty())
    policy.readOnly.push_back(ctx.kitDir);
  std::vector<std::string> argv = SandboxCommand({"/rsb-command"}, policy);
  argv.pop_back();  // the placeholder: Code::wrapper is the part before the command
  return argv;
}

// Progress of one hand-in item by item: only where hand-ins are graded one at a time (with
// --jobs above 1 a line per hand-in says how it ended).
bool ItemLines(const Context& ctx) {
  return !ctx.opt.quiet && ctx.opt.jobs == 1;
}

// The hand-in's host code, built in its sandbox against the kit: one binary per task.
HostBuild BuildHandinHostCode(const Context& ctx, HostBuildSettings host, const std::string& copy,
                              const std::string& workDir, const std::vector<std::string>& wrapper) {
  host.workDir = workDir;
  host.wrapper = wrapper;
  HostBuild b = BuildHostCode(host, copy);
  if (ItemLines(ctx))
    for (const auto& [task, t] : b.tasks)
      std::cerr << fmt::format("  host code ({}): {}\n", task,
                               !t.ok                ? "does not build"
                               : t.compiled.empty() ? "the suite's sources"
                                                    : fmt::format("built in {:.1f} s", t.seconds));
  return b;
}

HandinGrade GradeHandin(Context& ctx, const HostBuildSettings& host, const std::string& name,
                        const std::string& path, const std::string& workDir) {
  HandinGrade h;
  h.name = name;
  h.path = fs::absolute(path).lexically_normal().string();
  const std::string copy = CopyHandin(h.path, workDir);
  const std::vector<std::string> wrapper = HandinWrapper(ctx, workDir);
  h.host = BuildHandinHostCode(ctx, host, copy, workDir, wrapper);
  // Per item: the code that runs it (the hand-in's binary for its task where it brings host code
  // that builds) or why it cannot be graded.
  std::vector<std::pair<Code, std::string>> runs;
  std::map<std::string, Code> codes;
  std::map<std::string, std::vector<const Item*>> listed;  // per task: the items it can grade
  for (const auto& it : ctx.rubric.items) {
    const auto own = h.host.tasks.find(it.task);
    const bool built = own != h.host.tasks.end() && own->second.ok;
    const Code code{built && !own->second.binary.empty() ? own->second.binary : ctx.suite.binary,
                    (fs::path(copy) / "kernels").string(), wrapper, workDir};
    std::string problem = MissingFiles(ctx.rubric, it, copy);
    if (problem.empty() && own != h.host.tasks.end() && !built)
      problem = "host code does not build: " + Headline(own->second.log) + "\n" + own->second.log;
    if (problem.empty() && fs::is_directory(code.kernels)) {
      codes.insert({it.task, code});
      listed[it.task].push_back(&it);
    }
    runs.push_back({code, problem});
  }
  const FastVerdicts fast = RunLists(ctx, codes, listed);
  for (size_t i = 0; i < ctx.rubric.items.size() && !Interrupted(); ++i) {
    const Item& it = ctx.rubric.items[i];
    ItemGrade g = GradeItem(ctx, it, runs[i].first, fast, runs[i].second);
    if (ItemLines(ctx))
      std::cerr << fmt::format("  {:<28} {:<8} {}/{}\n", it.id, g.status, Points(g.points),
                               Points(it.points));
    h.total += g.points;
    h.max += it.points;
    h.items.push_back(std::move(g));
  }
  return h;
}

SummaryRow RowOf(const HandinGrade& h) {
  SummaryRow r{h.name, h.total, h.max, {}};
  for (const auto& g : h.items)
    r.points.push_back(g.points);
  return r;
}

// The class as graded so far: where the hand-ins are, which of them this run grades, and the
// reports of those done (in the class's order, whatever order the --jobs threads end in).
struct ClassProgress {
  std::vector<std::string> names;  // every hand-in given, in the order given
  std::vector<size_t> mine;        // the indices this run grades (its shard)
  std::vector<std::optional<SummaryRow>> rows;
  size_t done = 0;
  std::mutex mu;
};

ClassManifest Manifest(const Context& ctx, const ClassProgress& cls, bool complete) {
  ClassManifest m;
  m.suite = ThisBuild().version + " (git " + ThisBuild().gitRevision + ")";
  m.rubricPath = ctx.rubric.path;
  m.rubricName = ctx.rubric.name;
  m.rubricHash = FileHash(ctx.rubric.path);
  for (const auto& it : ctx.rubric.items)
    m.itemIds.push_back(it.id);
  m.seed = ctx.rubric.seed;
  m.device = ctx.deviceName;
  m.shardIndex = ctx.opt.shardIndex;
  m.shardCount = ctx.opt.shardCount;
  m.classNames = cls.names;
  m.complete = complete;
  for (size_t i = 0; i < cls.rows.size(); ++i)
    if (cls.rows[i])
      m.graded.push_back(cls.names[i]);
  return m;
}

// A hand-in's reports, then the class's files as they stand (summary.csv and index.md of the
// hand-ins done, grading.json naming them): a run stopped at any point leaves a folder that
// says what it holds.
void WriteReports(Context& ctx, ClassProgress& cls, size_t index, const HandinGrade& h,
                  double seconds) {
  const fs::path dir(ctx.opt.outputDir);
  std::lock_guard l(cls.mu);
  const RunInfo info{&ctx.rubric, ctx.deviceName, ctx.opt.timeoutS};
  WriteFile(dir / (h.name + ".md"), ToMarkdown(info, h));
  WriteFile(dir / (h.name + ".json"),
            ToJson(info, h).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  if (ctx.opt.format == "gradescope")
    WriteFile(dir / "results.json",
              ToGradescope(info, h).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  cls.rows[index] = RowOf(h);
  ++cls.done;
  std::vector<SummaryRow> rows;
  for (const auto& r : cls.rows)
    if (r)
      rows.push_back(*r);
  WriteClassFiles(dir, Manifest(ctx, cls, false), rows);
  if (ctx.opt.quiet || ctx.opt.jobs == 1)
    return;
  std::vector<std::string> lost;
  for (const auto& g : h.items)
    if (g.points < g.item->points)
      lost.push_back(g.item->id);
  std::cerr << fmt::format("[{}/{}] {}: {} / {} ({:.0f} s){}\n", cls.done, cls.mine.size(), h.name,
                           Points(h.total), Points(h.max), seconds,
                           lost.empty() ? "" : ", lost: " + Join(lost, ", "));
}

void GradeClass(Context& ctx, ClassProgress& cls, const HostBuildSettings& host,
                const std::string& workDir) {
  ForEachOnJobs(cls.mine.size(), ctx.opt.jobs, [&](size_t k) {
    const size_t i = cls.mine[k];
    if (ItemLines(ctx))
      std::cerr << fmt::format("[{}/{}] {}\n", k + 1, cls.mine.size(), cls.names[i]);
    const auto start = std::chrono::steady_clock::now();
    const std::string dir = fmt::format("{}/handin-{}", workDir, i);
    fs::create_directories(dir);
    HandinGrade h = GradeHandin(ctx, host, cls.names[i], ctx.opt.handins[i], dir);
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (Interrupted())
      return;
    WriteReports(ctx, cls, i, h,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  });
}

int GradeAll(int argc, char** argv) {
  bool help = false;
  Context ctx;
  ctx.opt = ParseGradeOptions(argc, argv, help);
  if (help)
    return kExitOk;
  ctx.rubric = LoadRubric(ctx.opt.rubric);
  SelectItems(ctx.rubric, ctx.opt.items);
  ClassProgress cls;
  cls.names = HandinNames(ctx.opt.handins);
  cls.rows.resize(cls.names.size());
  for (size_t i = 0; i < cls.names.size(); ++i)
    if (ShardOf(cls.names[i], ctx.opt.shardCount) + 1 == ctx.opt.shardIndex)
      cls.mine.push_back(i);
  // The device is checked once here (the suite's own code), so that a wrong --platform is one
  // usage error instead of an error in every item.
  const bool cpuDevice =
      SelectDevice(ctx.opt.platform, ctx.opt.device).getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_CPU;
  const bool loop = ctx.opt.speedAlone == "loop" || (ctx.opt.speedAlone == "auto" && !cpuDevice);
  // --jobs' default: the cores on a CPU device; on a GPU at most kGpuJobs (its processes' contexts
  // take turns on it: docs/BENCHMARKS.md, grading a class at scale).
  if (ctx.opt.jobs == 0)
    ctx.opt.jobs = std::max<size_t>(
        1, std::min<size_t>(std::thread::hardware_concurrency(), cpuDevice ? 1024 : kGpuJobs));
  std::error_code ec;
  ctx.suite.binary = fs::canonical("/proc/self/exe", ec).string();
  if (ec)
    throw DeviceError("cannot find the running executable (/proc/self/exe)");
  ctx.suite.kernels = FindKernelDir("", argv[0]);
  CheckOutputDir(ctx.opt.outputDir);
  const TempDir work;
  const std::string refCache = work.Path() + "/reference-kernel-cache";
  fs::create_directories(refCache);
  ctx.suite.wrapper = {"/usr/bin/env", "POCL_CACHE_DIR=" + refCache,
                       "CUDA_CACHE_PATH=" + refCache + "/nv"};
  ctx.child = {ctx.opt.platform, ctx.opt.device, ctx.rubric.seed, work.Path(), ""};
  if (loop && cpuDevice && !ctx.opt.quiet)
    std::cerr << "note: --speed-alone loop on a CPU device: the other children's builds and runs "
                 "load the CPU that is timed, and the suite's own rounds are timed once; speed "
                 "floors may be missed by load alone\n";
  if (loop) {  // children share the device; a timed loop has it alone (DeviceLock.h)
    fs::create_directories(work.Path() + "/device-lock");
    ctx.child.deviceLock = work.Path() + "/device-lock/lock";
    const DeviceLock create(ctx.child.deviceLock);  // both files, before any sandboxed child
  }
  Kit kit;
  const HostBuildSettings host = HostBuildFor(ctx, work.Path(), kit);
  ctx.kitDir = kit.dir;
  CheckOclgrindGates(ctx);
  InstallInterruptHandler();
  if (!ctx.opt.quiet) {
    if (ctx.opt.shardCount > 1)
      std::cerr << fmt::format("shard {}/{}: {} of the class's {} hand-ins\n", ctx.opt.shardIndex,
                               ctx.opt.shardCount, cls.mine.size(), cls.names.size());
    std::cerr << "the suite's own code on every item (the time limits' reference)\n";
  }
  if (!cls.mine.empty()) {
    CheckSpeedTimer(ctx);
    MeasureReferences(ctx);
  }
  if (!Interrupted() && !ctx.opt.quiet && ctx.opt.jobs > 1)
    std::cerr << fmt::format("grading {} hand-in(s), {} at a time\n", cls.mine.size(),
                             std::min(ctx.opt.jobs, cls.mine.size()));
  GradeClass(ctx, cls, host, work.Path());
  if (Interrupted()) {
    std::cerr << "interrupted: the reports of the hand-ins graded so far are written\n";
    return kExitInterrupted;
  }
  std::vector<SummaryRow> rows;
  for (const size_t i : cls.mine)
    rows.push_back(*cls.rows[i]);
  WriteClassFiles(ctx.opt.outputDir, Manifest(ctx, cls, true), rows);
  if (!ctx.opt.quiet)
    std::cerr << fmt::format("reports in {}\n", ctx.opt.outputDir);
  return kExitOk;
}

}  // namespace

int Grade(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "merge")
    return GradeMerge(argc - 1, argv + 1);
  return ExitStatusOf([&] { return GradeAll(argc, argv); });
}

}  // namespace rsb
