#include "grade/Lists.h"

#include "platform/Subprocess.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <mutex>
#include <set>

namespace rsb::grade {

namespace {

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
double ListLimit(Context& ctx, Device& device, const std::string& task) {
  const std::string key = "list/" + task;
  {
    std::lock_guard l(ctx.mu);
    if (const auto at = ctx.referenceSeconds.find(key); at != ctx.referenceSeconds.end())
      return std::max(ctx.opt.timeoutS, kTimeSlack * at->second);
  }
  const TaskList l = ListOf(ItemsOf(ctx.rubric, task));
  const GroupRun run = device.RunList(ctx.suite, l.cases, l.validateRuns,
                                      std::max(600.0, 10 * ctx.opt.timeoutS), /*reference=*/true);
  bool passed = true;
  for (size_t i = 0; i < run.cases.size(); ++i) {
    RefuseSkipped(ctx.rubric, *l.cases[i].item, run.cases[i]);
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

}  // namespace

FastVerdicts RunLists(Context& ctx, Device& device, const std::map<std::string, Code>& codes,
                      const std::map<std::string, std::vector<const Item*>>& items) {
  FastVerdicts v;
  for (const auto& [task, its] : items) {
    const TaskList l = ListOf(its);
    if (l.cases.empty() || Interrupted())
      continue;
    const double limit = ListLimit(ctx, device, task);
    const GroupRun run = device.RunList(codes.at(task), l.cases, l.validateRuns, limit);
    v.limits[task] = limit;
    std::map<std::string, GroupRun> groups;
    std::set<std::string> open;  // groups the list run does not decide
    std::string killedIn;        // the group the run was killed in
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
      if (run.timedOut && c.wholeRun && killedIn.empty()) {
        v.hung.insert(l.keys[i]);
        killedIn = l.keys[i];
      }
    }
    // A run killed again with the device to itself had its second try: the group it hung in is
    // decided, a timeout.
    const bool hungAlone = run.timedOut && !run.ranAlone.empty();
    for (auto& [key, g] : groups)
      if (!open.count(key) || (hungAlone && key == killedIn)) {
        g.seconds = run.seconds;
        g.timedOut = key == killedIn;
        g.ranAlone = run.ranAlone;
        v.decided[key] = std::move(g);
      }
  }
  return v;
}

// Before the first hand-in, on --jobs threads (the limits are measured under the load the
// hand-ins will meet): each task's list run (ListLimit) and each item's Oclgrind case. The
// reference of a single case group is measured where a hand-in first needs it (TimeLimit).
void MeasureReferences(Context& ctx, Device& device) {
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
      ListLimit(ctx, device, tasks[i]);
      return;
    }
    const Item& it = *gated[i - tasks.size()];
    MeasureReference(ctx, device, it, 0, it.oclgrindCase.localSizes.front(), RunKind::Oclgrind,
                     Isolation::PerCase);
  });
}

}  // namespace rsb::grade
