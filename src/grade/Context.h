// What every part of grading a class shares: its state (Context: the options, the rubric, how
// child runs start, the suite's own code, the reference, and what was measured of it) and, apart
// from it, the device's turns (Device). And the runs of a hand-in's case groups against the
// reference's time limits.
#pragma once

#include "grade/ChildRun.h"
#include "grade/GradeOptions.h"
#include "grade/Rubric.h"
#include "grade/Turns.h"

#include <nlohmann/json.hpp>

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
// A speed floor takes this many rounds of timed runs of the suite's code and the hand-in's
// (Scoring.cpp, GradeSpeed).
constexpr int kSpeedRounds = 3;

// The grading run's state apart from the device's turns: the options, the rubric, how child
// runs start, the suite's own code (the reference), set up before the first hand-in; and what
// was measured of the reference, filled in as hand-ins need it (under mu).
struct Context {
  GradeOptions opt;
  Rubric rubric;
  ChildSettings child;
  Code suite;          // the suite's own binary and kernels: the reference
  std::string kitDir;  // the hand-in kit, where a hand-in brings host code
  // Why a failing case is not run again under Oclgrind (no oclgrind on PATH); "": it is.
  std::string diagnosisOff;
  std::mutex referenceSpeedMu;  // held while the suite's rounds are timed once for the class
  std::mutex mu;                // guards what follows (hand-ins are graded on --jobs threads)
  // Per child run (item, case group, local size, kind, isolation): the suite's own wall time.
  std::map<std::string, double> referenceSeconds;
  std::map<std::string, std::optional<json>> referenceOclgrind;  // per item: the suite's counts
  // Per item: the suite's own timed rounds and why any failed, where they are timed once for the
  // class (GradeSpeed).
  std::map<std::string, std::pair<std::vector<double>, std::string>> referenceSpeed;
  std::set<std::string> warned;  // items whose reference failed (said once)
  bool diagnosisNoted = false;   // diagnosisOff said on the terminal (once)
};

// The device as the child runs take their turns on it (Turns.h), started as `child` says, and
// its name as their results give it. A hand-in's grade depends on nothing beside it: every run
// that uses the device is recorded (DeviceRuns), and one that timed out or failed with a device
// error while another run on the device hung (on a GPU a kernel that never ends holds the device,
// and every other process's launches wait) is run again with the device to itself, its limit
// unchanged, before anything is charged; the second outcome is charged, and says so (ranAlone).
// A run whose neighbours all ended cleanly is charged as it is. A reference run (the suite's own,
// whose time sets limits) that overlapped a run that hung is timed again alone too.
class Device {
 public:
  explicit Device(const ChildSettings& child) : child_(child) {}
  DeviceTurns& Turns() { return turns_; }

  // Oclgrind runs on the CPU, beside the device (on a CPU device it is stopped with every other
  // child while a timed run has the device alone); a timed run has the device alone: for its
  // whole child run on a CPU device (whose builds and start-up compete with the timing), only
  // around its timed loops where the children share a device lock (a GPU: child.deviceLock; the
  // grader's turns then only count the runs on the device, for a run that needs it to itself).
  DeviceTurn::Kind TurnOf(RunKind kind) const;
  GroupRun Run(const Code& code, const Item& it, const CaseGroup& g, const std::string& ls,
               RunKind kind, double timeoutS, Isolation isolation, bool reference = false);
  // The speed case of two codes in two children whose timed runs alternate (RunTimedInTurns),
  // with the device alone for both.
  std::pair<GroupRun, GroupRun> RunInTurns(const Code& a, const Code& b, const Item& it,
                                           const CaseGroup& g, const std::string& ls,
                                           double timeoutA, double timeoutB);
  // A list of cases of one task in one child (RunCaseList): validates, so it shares the device.
  GroupRun RunList(const Code& code, const std::vector<ListedCase>& cases, size_t validateRuns,
                   double timeoutS, bool reference = false);
  // --check-platform or --check-device sent the validating runs to another selection.
  bool CheckElsewhere() const;
  // The device's name as the children's results give it: the timed runs' (--platform, --device)
  // and the validating runs' (--check-platform, --check-device: the same device unless given);
  // "" until a child run named it.
  std::string Name() const;
  std::string CheckName() const;

 private:
  void NoteDevice(const GroupRun& run, RunKind kind);
  // Runs `run` in a turn of `kind`, recorded; run again with the device to itself where its
  // outcome (any outcome, for a reference) must not be charged for a neighbour's hang.
  template <class R>
  R Watched(DeviceTurn::Kind kind, const std::function<R()>& run, bool reference);

  const ChildSettings& child_;
  DeviceTurns turns_;
  DeviceRuns runs_;
  mutable std::mutex mu_;  // guards the names
  std::string name_, checkName_;
};

// What a hand-in's list runs (Lists.h, RunLists) decided, which its items' grading reads.
struct FastVerdicts {
  // By RunKey: the groups the list run decided (every case passed, or did not compile; and the
  // group it hung in where it timed out again with the device to itself).
  std::map<std::string, GroupRun> decided;
  std::set<std::string> failed;  // groups with a case whose own result did not pass
  std::set<std::string> hung;    // per task, the group its list run was killed in (timed out)
  std::map<std::string, double> limits;  // per task: its list run's time limit
};

// The key of a child run (item, case group, local size, kind, isolation) in referenceSeconds.
std::string RunKey(const Item& it, size_t group, const std::string& ls, RunKind kind,
                   Isolation isolation);
// The code's cases all passed; else the first case that did not, as "label: status: message".
std::optional<std::string> FirstNotPassed(const GroupRun& run);
bool AllPassed(const GroupRun& run);
// A rubric case the suite's own code cannot run on this device is the rubric's error (exit 2).
void RefuseSkipped(const Rubric& rubric, const Item& it, const CaseOutcome& c);
// The suite's own code on the child run: its wall time (0 where it does not pass: said once).
double MeasureReference(Context& ctx, Device& device, const Item& it, size_t group,
                        const std::string& ls, RunKind kind, Isolation isolation);
// A hand-in's child run. First every case in one process (Isolation::Shared: one OpenCL
// start-up, each program built once); where all pass, that is the verdict. Anything else (a
// wrong result, a crash, an OpenCL error, a timeout) is decided by a run with each case in a
// worker of its own, as before this fast path: a case that crashes or corrupts memory cannot
// take its neighbours with it, so the report names exactly the cases at fault. A timeout of
// that run is retried once, after the reference is measured again (the machine may have become
// busier); a fast run that timed out counts as that first try, and a run that timed out again
// with the device to itself (Device) as the second. `start`: where the task's list
// run (RunLists) already showed the fast run's verdict, Isolated (a case of the group did not
// pass) or IsolatedAfterTimeout (the list run hung in this group: that was the first try).
// `limit`: in, the least limit a run may get (the item's so far: its list run's, its other
// groups', so that a timeout states the item's one limit); out, the last run's.
enum class Start { Fast, Isolated, IsolatedAfterTimeout };
GroupRun RunHandin(Context& ctx, Device& device, const Code& code, const Item& it, size_t group,
                   const std::string& ls, RunKind kind, double& limit, Start start = Start::Fast);
// Calls fn(i) for every i in [0, count) on up to `jobs` threads (the caller's among them), in
// the order of i as threads free up. Once interrupted, or once fn threw, no new i starts; the
// first exception is rethrown when every thread has ended.
void ForEachOnJobs(size_t count, size_t jobs, const std::function<void(size_t)>& fn);

}  // namespace rsb::grade
