// What every part of grading a class shares (Context): the options, the rubric, how child runs
// start, the suite's own code (the reference) and what was measured of it, and the device's turns.
// And the runs of a hand-in's case groups against the reference's time limits.
#pragma once

#include "platform/ChildPause.h"
#include "tools/grade/ChildRun.h"
#include "tools/grade/Options.h"
#include "tools/grade/Rubric.h"

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace rsb::grade {

using nlohmann::json;

// A hand-in's time limit is the suite's own time for the same child run, times this, and never
// below --timeout: a machine busy enough to slow a correct hand-in slows the reference as much.
constexpr double kTimeSlack = 5;
// A speed floor compares medians of this many timed runs of each, taken in turn.
constexpr int kSpeedRounds = 3;

// Turns on the device: every child run that validates shares it; a speed measurement has it
// alone (no other child run of the grader on the device while it times). Writers first: a speed
// measurement waiting stops new shared turns, so that it is never starved by a busy class.
// On a CPU device (PauseOthers) an alone turn does not wait for the shared ones to end: the
// grader's other children are stopped for its length (platform/ChildPause.h), so that a core
// is not left idle while a case list ends.
class DeviceTurns {
 public:
  void PauseOthers(bool on) { pauseOthers_ = on; }
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
    free_.wait(l, [&] { return !alone_ && (pauseOthers_ || sharing_ == 0); });
    --waiting_;
    alone_ = true;
    l.unlock();
    if (pauseOthers_)  // only the thread with the alone turn touches paused_
      paused_.emplace();
  }
  void EndAlone() {
    paused_.reset();
    std::lock_guard l(mu_);
    alone_ = false;
    free_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable free_;
  int sharing_ = 0, waiting_ = 0;
  bool alone_ = false;
  bool pauseOthers_ = false;  // set before the first turn
  std::optional<OthersPaused> paused_;
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
  std::mutex referenceSpeedMu;  // held while the suite's rounds are timed once for the class
  std::mutex mu;                // guards what follows (hand-ins are graded on --jobs threads)
  // Per child run (item, case group, local size, kind, isolation): the suite's own wall time.
  std::map<std::string, double> referenceSeconds;
  std::map<std::string, std::optional<json>> referenceOclgrind;  // per item: the suite's counts
  // Per item: the suite's own timed rounds and why any failed, where they are timed once for the
  // class (GradeSpeed).
  std::map<std::string, std::pair<std::vector<double>, std::string>> referenceSpeed;
  std::set<std::string> warned;  // items whose reference failed (said once)
  // The device's name as the children's results give it: the timed runs' (--platform, --device)
  // and the validating runs' (--check-platform, --check-device: the same device unless given).
  std::string deviceName, checkDeviceName;

  // Oclgrind runs on the CPU, beside the device (on a CPU device it is stopped with every other
  // child while a timed run has the device alone); a timed run has the device alone: for its
  // whole child run on a CPU device (whose builds and start-up compete with the timing), only
  // around its timed loops where the children share a device lock (a GPU: child.deviceLock).
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
    NoteDevice(run, kind);
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
    NoteDevice(run, RunKind::Check);
    return run;
  }

  // A run's results may name no device (the cases of a group run one by one in residents are
  // gathered without one): read with value(), never with a const operator[] on a missing key.
  void NoteDevice(const GroupRun& run, RunKind kind) {
    const json device = run.results ? run.results->value("device", json()) : json();
    if (kind == RunKind::Oclgrind || !device.is_object())
      return;
    const std::string name = device.value("name", "");
    const bool timing = kind == RunKind::Timed || kind == RunKind::TimedDeviceCheck;
    std::lock_guard l(mu);
    if ((timing || !CheckElsewhere()) && deviceName.empty())
      deviceName = name;
    if ((!timing || !CheckElsewhere()) && checkDeviceName.empty())
      checkDeviceName = name;
  }

  // --check-platform or --check-device sent the validating runs to another selection.
  bool CheckElsewhere() const {
    return child.checkPlatform != child.platform || child.checkDevice != child.device;
  }
};

// The key of a child run (item, case group, local size, kind, isolation) in referenceSeconds.
std::string RunKey(const Item& it, size_t group, const std::string& ls, RunKind kind,
                   Isolation isolation);
// The code's cases all passed; else the first case that did not, as "label: status: message".
std::optional<std::string> FirstNotPassed(const GroupRun& run);
bool AllPassed(const GroupRun& run);
// A rubric case the suite's own code cannot run on this device is the rubric's error (exit 2).
void RefuseSkipped(const Context& ctx, const Item& it, const CaseOutcome& c);
// The suite's own code on the child run: its wall time (0 where it does not pass: said once).
double MeasureReference(Context& ctx, const Item& it, size_t group, const std::string& ls,
                        RunKind kind, Isolation isolation);
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
                   const std::string& ls, RunKind kind, double& limit, Start start = Start::Fast);
// Calls fn(i) for every i in [0, count) on up to `jobs` threads (the caller's among them), in
// the order of i as threads free up. Once interrupted, or once fn threw, no new i starts; the
// first exception is rethrown when every thread has ended.
void ForEachOnJobs(size_t count, size_t jobs, const std::function<void(size_t)>& fn);

}  // namespace rsb::grade
