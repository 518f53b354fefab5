#include "grade/Context.h"

#include "grade/Text.h"
#include "platform/Errors.h"
#include "platform/Subprocess.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <iostream>
#include <thread>

namespace rsb::grade {

namespace {

// The suite's own code failing (a hand-out's stubs, a broken build) is said once per item, not
// hidden: the item's time limit is then --timeout, and its speed and work gates have no
// reference. The caller holds ctx.mu. Not said of a run cut short by an interrupt.
void WarnReference(Context& ctx, const Item& it, const char* what, const std::string& bad) {
  if (!Interrupted() && ctx.warned.insert(it.id).second)  // (an interrupted run is no fault)
    std::cerr << fmt::format(
        "warning: item '{}': the suite's own code does not pass {} ({}): is this binary built "
        "from the hand-out?\n",
        it.id, what, bad);
}

}  // namespace

DeviceTurn::Kind Device::TurnOf(RunKind kind) const {
  if (kind == RunKind::Oclgrind)
    return DeviceTurn::None;
  if (!child_.deviceLock.empty())  // the lock times alone; the turns count who is on the device
    return DeviceTurn::Shared;
  return kind == RunKind::Timed || kind == RunKind::TimedInTurns ? DeviceTurn::Alone
                                                                 : DeviceTurn::Shared;
}

namespace {

// A case's error that a neighbour on the device may have caused (an OpenCL error, a crash, a
// run that ended without a result): not a kernel that does not compile, a case the device cannot
// run, or an interrupt.
bool DeviceFault(const CaseOutcome& c) {
  const auto has = [&](const char* s) { return c.message.find(s) != std::string::npos; };
  return c.status == "error" && !has("kernel build failed") && !has("skipped on this device") &&
         c.message != "interrupted";
}

bool TimedOut(const GroupRun& r) {
  return r.timedOut;
}
bool TimedOut(const std::pair<GroupRun, GroupRun>& r) {
  return r.first.timedOut || r.second.timedOut;
}

// A run charged only once it is known that no neighbour hung beside it.
bool Suspect(const GroupRun& r) {
  return r.timedOut || std::any_of(r.cases.begin(), r.cases.end(), DeviceFault);
}
bool Suspect(const std::pair<GroupRun, GroupRun>& r) {
  return Suspect(r.first) || Suspect(r.second);
}

// The second outcome says why it is the one charged.
void Explain(GroupRun& again, const GroupRun& first) {
  const auto fault = std::find_if(first.cases.begin(), first.cases.end(), DeviceFault);
  const std::string what = first.timedOut || fault == first.cases.end()
                               ? "timed out"
                               : "ended in an error (" + Headline(fault->message) + ")";
  again.ranAlone = fmt::format(
      "run again with the device to itself, its limit unchanged: its first run {} while another "
      "run on the device hung",
      what);
}
void Explain(std::pair<GroupRun, GroupRun>& again, const std::pair<GroupRun, GroupRun>& first) {
  Explain(again.first, first.first);
  Explain(again.second, first.second);
}

// Settles a suspect run on every way out of Device::Watched: hung, as its last outcome says.
struct Settled {
  DeviceRuns& runs;
  size_t id;
  bool hung;
  ~Settled() { runs.Settle(id, hung); }
};

}  // namespace

template <class R>
R Device::Watched(DeviceTurn::Kind kind, const std::function<R()>& run, bool reference) {
  if (kind == DeviceTurn::None)
    return run();
  R first;
  size_t id = 0;
  {
    const DeviceTurn turn(turns_, kind);
    id = runs_.Begin();
    try {
      first = run();
    } catch (...) {  // (a case list that cannot be written): ended, or neighbours wait for it
      runs_.End(id, false, false);
      throw;
    }
  }
  const bool suspect = reference || Suspect(first);
  runs_.End(id, TimedOut(first), suspect);
  if (!suspect)
    return first;
  std::optional<DeviceTurn> alone;  // ends after the run is settled
  Settled settled{runs_, id, TimedOut(first)};
  runs_.AwaitNeighbours(id);  // a neighbour still running may yet hang
  if (Interrupted() || !runs_.NeighbourHung(id))
    return first;
  runs_.AwaitEarlier(id);
  alone.emplace(turns_, DeviceTurn::Exclusive);
  if (Interrupted() || !runs_.NeighbourHung(id))  // cleared: it passed when run again alone
    return first;
  R again = run();
  settled.hung = TimedOut(again);
  Explain(again, first);
  return again;
}

GroupRun Device::Run(const Code& code, const Item& it, const CaseGroup& g, const std::string& ls,
                     RunKind kind, double timeoutS, Isolation isolation, bool reference) {
  const GroupRun run = Watched<GroupRun>(
      TurnOf(kind), [&] { return RunGroup(child_, code, it, g, ls, kind, timeoutS, isolation); },
      reference);
  NoteDevice(run, kind);
  return run;
}

std::pair<GroupRun, GroupRun> Device::RunInTurns(const Code& a, const Code& b, const Item& it,
                                                 const CaseGroup& g, const std::string& ls,
                                                 double timeoutA, double timeoutB) {
  const auto runs = Watched<std::pair<GroupRun, GroupRun>>(
      TurnOf(RunKind::TimedInTurns),
      [&] { return RunTimedInTurns(child_, a, b, it, g, ls, timeoutA, timeoutB); }, false);
  NoteDevice(runs.first, RunKind::TimedInTurns);
  return runs;
}

GroupRun Device::RunList(const Code& code, const std::vector<ListedCase>& cases,
                         size_t validateRuns, double timeoutS, bool reference) {
  const GroupRun run = Watched<GroupRun>(
      TurnOf(RunKind::Check),
      [&] { return RunCaseList(child_, code, cases, validateRuns, timeoutS); }, reference);
  NoteDevice(run, RunKind::Check);
  return run;
}

// A run's results may name no device (the cases of a group run one by one in residents are
// gathered without one): read with value(), never with a const operator[] on a missing key.
void Device::NoteDevice(const GroupRun& run, RunKind kind) {
  const json device = run.results ? run.results->value("device", json()) : json();
  if (kind == RunKind::Oclgrind || !device.is_object())
    return;
  const std::string name = device.value("name", "");
  const bool timing = kind != RunKind::Check && kind != RunKind::Oclgrind;
  std::lock_guard l(mu_);
  if ((timing || !CheckElsewhere()) && name_.empty())
    name_ = name;
  if ((!timing || !CheckElsewhere()) && checkName_.empty())
    checkName_ = name;
}

bool Device::CheckElsewhere() const {
  return child_.checkPlatform != child_.platform || child_.checkDevice != child_.device;
}

std::string Device::Name() const {
  std::lock_guard l(mu_);
  return name_;
}

std::string Device::CheckName() const {
  std::lock_guard l(mu_);
  return checkName_;
}

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
void RefuseSkipped(const Rubric& rubric, const Item& it, const CaseOutcome& c) {
  if (c.message.rfind("skipped on this device", 0) == 0)
    throw UsageError(fmt::format(
        "--rubric '{}': item '{}': the case {} can never run on this device ({}); allowed: "
        "cases the device can run",
        rubric.path, it.id, c.label, c.message));
}

// The suite's own code on the child run: its wall time (the base of a hand-in's time limit),
// with a fresh kernel cache so that it pays the kernel builds a hand-in pays. A rubric case
// the suite's own code does not pass on this device is the rubric's error (exit 2).
double MeasureReference(Context& ctx, Device& device, const Item& it, size_t group,
                        const std::string& ls, RunKind kind, Isolation isolation) {
  const CaseGroup& g = kind == RunKind::Oclgrind ? it.oclgrindCase : it.groups[group];
  // No deadline of note: the suite's code is trusted, and a slow machine is what it measures.
  const GroupRun run =
      device.Run(ctx.suite, it, g, ls, kind, std::max(600.0, 10 * ctx.opt.timeoutS), isolation,
                 /*reference=*/true);
  for (const auto& c : run.cases)
    RefuseSkipped(ctx.rubric, it, c);
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
double TimeLimit(Context& ctx, Device& device, const Item& it, size_t group, const std::string& ls,
                 RunKind kind, Isolation isolation) {
  const std::string key = RunKey(it, group, ls, kind, isolation);
  {
    std::lock_guard l(ctx.mu);
    if (const auto at = ctx.referenceSeconds.find(key); at != ctx.referenceSeconds.end())
      return std::max(ctx.opt.timeoutS, kTimeSlack * at->second);
  }
  return std::max(ctx.opt.timeoutS,
                  kTimeSlack * MeasureReference(ctx, device, it, group, ls, kind, isolation));
}

bool AllPassed(const GroupRun& run) {
  return !run.cases.empty() && !FirstNotPassed(run);
}

GroupRun RunHandin(Context& ctx, Device& device, const Code& code, const Item& it, size_t group,
                   const std::string& ls, RunKind kind, double& limit, Start start) {
  const CaseGroup& g = kind == RunKind::Oclgrind ? it.oclgrindCase : it.groups[group];
  const double least = limit;  // the item's limit so far: no run of its code gets less
  bool retried = start == Start::IsolatedAfterTimeout;
  if (kind != RunKind::Oclgrind && start == Start::Fast) {
    limit = std::max(least, TimeLimit(ctx, device, it, group, ls, kind, Isolation::Shared));
    GroupRun fast = device.Run(code, it, g, ls, kind, limit, Isolation::Shared);
    // A run that timed out with the device to itself was the second try already.
    if (AllPassed(fast) || Interrupted() || (fast.timedOut && !fast.ranAlone.empty()))
      return fast;
    retried = fast.timedOut;
  }
  if (retried)
    MeasureReference(ctx, device, it, group, ls, kind, Isolation::PerCase);
  limit = std::max(least, TimeLimit(ctx, device, it, group, ls, kind, Isolation::PerCase));
  GroupRun run = device.Run(code, it, g, ls, kind, limit, Isolation::PerCase);
  if (!run.timedOut || retried || !run.ranAlone.empty() || Interrupted())
    return run;
  MeasureReference(ctx, device, it, group, ls, kind, Isolation::PerCase);
  limit = std::max(least, TimeLimit(ctx, device, it, group, ls, kind, Isolation::PerCase));
  return device.Run(code, it, g, ls, kind, limit, Isolation::PerCase);
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

}  // namespace rsb::grade
