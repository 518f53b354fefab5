// One case, resolved in one place (common/engine/Case.h): the case the runner runs, the one
// --explain explains and the one tune starts from are the same.
#include "TestSupport.h"

#include "engine/Case.h"
#include "engine/Explain.h"
#include "engine/PlannedTask.h"
#include "engine/RunData.h"
#include "tasks/CScanTask.h"
#include "tasks/Tasks.h"
#include "tools/Tune.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace rsb::test {
namespace {

// A small problem of the task's first type and operator; an image for a variant that takes one.
ProblemSpec SmallProblem(const IComputeTask& task, const std::string& variant) {
  ProblemSpec spec;
  spec.type = task.Types().front();
  spec.op = task.Ops().front();
  spec.n = task.TakesShape(variant) ? 37 * 29 : 1000;
  spec.height = task.TakesShape(variant) ? 29 : 0;
  return spec;
}

// Every variant of every task on the test device: the runner's validated run, --explain and
// tune's starting point agree with ResolveCase on the local size, the knobs (the tile's among
// them), the plan (its kernel options and cost) and whether and why the case is skipped.
TEST(Case, RunnerExplainAndTuneTakeTheSameCase) {
  const DeviceInfo& device = Device().info;
  size_t cases = 0;
  for (const auto& task : MakeTasks())
    for (const auto& variant : task->Variants()) {
      const ProblemSpec spec = SmallProblem(*task, variant);
      const std::string label = task->Name() + "/" + variant;
      const Case c = ResolveCase(*task, variant, spec, device);
      const Case tune = TuneStart(*task, variant, spec, device);
      const Explanation e = Explain(*task, variant, spec, device);
      const Result run = Validate(*task, spec, {variant}).at(0);
      ASSERT_GT(c.spec.localSize, 0u) << label;
      for (const Result* r : {&run, &e.c}) {
        EXPECT_EQ(r->localSize, c.spec.localSize) << label;
        EXPECT_EQ(r->tuning, c.tuning) << label;
        EXPECT_EQ(r->status == Status::Skipped, !c.Runs()) << label << ": " << r->message;
        if (!c.Runs()) {
          EXPECT_EQ(r->message, c.skip) << label;
        }
      }
      EXPECT_EQ(tune.spec.localSize, c.spec.localSize) << label;
      EXPECT_EQ(tune.tuning, c.tuning) << label;
      EXPECT_EQ(tune.kernelOptions, c.kernelOptions) << label;
      if (!c.Runs())
        continue;
      ++cases;
      EXPECT_EQ(run.status, Status::Passed) << label << ": " << run.message;
      EXPECT_EQ(run.kernelOptions, c.kernelOptions) << label;
      for (const CostModel* cost : {&run.cost, &e.c.cost, &tune.cost}) {
        EXPECT_EQ(cost->launches, c.cost.launches) << label;
        EXPECT_EQ(cost->steps, c.cost.steps) << label;
        EXPECT_EQ(cost->ops, c.cost.ops) << label;
        EXPECT_EQ(cost->workItems, c.cost.workItems) << label;
        EXPECT_EQ(cost->BytesMoved(), c.cost.BytesMoved()) << label;
      }
    }
  EXPECT_GT(cases, 0u) << "no case runs on the test device";
}

// What the device lacks is the case's skip, word for word, before anything runs.
TEST(Case, AWorkGroupBeyondTheDevicesOrDoubleItLacksIsTheSkip) {
  const auto tasks = MakeTasks();
  const IComputeTask& task = *tasks.front();
  const std::string variant = task.Variants().front();
  ProblemSpec spec = SmallProblem(task, variant);
  DeviceInfo device = FabricatedDevice(true, 48 << 10, 1024);
  spec.localSize = device.maxWorkGroupSize * 2;
  const Case wide = ResolveCase(task, variant, spec, device);
  EXPECT_EQ(wide.spec.localSize, spec.localSize);
  EXPECT_EQ(wide.skip, fmt::format("local size {} exceeds the device's maximum work-group size {}",
                                   spec.localSize, device.maxWorkGroupSize));
  spec.localSize = 0;
  spec.type = ElementType::Double;
  device.fp64 = false;
  const Case noDouble = ResolveCase(task, variant, spec, device);
  EXPECT_TRUE(noDouble.planned);
  EXPECT_EQ(noDouble.skip, "the device has no double precision (cl_khr_fp64)");
  device.fp64 = true;
  EXPECT_TRUE(ResolveCase(task, variant, spec, device).Runs());
}

// The untimed commands of one prepared run named `name`.
size_t Named(const RunEvents& untimed, const std::string& name) {
  size_t count = 0;
  for (const CommandEvent& c : untimed.Commands())
    count += c.name == name;
  return count;
}

// The runner's RunData holds what a run leaves on the device for the next, not the task: the
// single-pass scan's status words are reset before a case's first run and once resetEvery runs
// have run since, and each run's generation and first ticket (RunArg) count the runs since.
TEST(Case, RunDataCountsTheRunsSinceThePlansResets) {
  RSB_SKIP_IF(Lacks(Need::Int64Atomics));
  const CScanTask task;
  TaskContext& ctx = *Device().ctx;
  ProblemSpec spec = SmallProblem(task, "single-pass");
  spec.n = 100000;
  Case c = ResolveCase(task, "single-pass", spec, ctx.info);
  ASSERT_TRUE(c.Runs()) << c.skip;
  ASSERT_EQ(c.plan.resets.size(), 2u);
  c.plan.resetEvery = 2;
  const LaunchStep& launch = c.plan.steps.front();
  const uint64_t groups = launch.globalSize / launch.localSize;
  RunData data;
  MakeInput(ctx, task, c.spec, data);
  std::vector<size_t> resets;
  for (size_t run = 0; run < 5; ++run) {
    if (run == 3)
      data.StartCase();  // a new case: reset again
    RunEvents untimed, events;
    PrepareRun(ctx, c.plan, data, /*poison=*/true, untimed);
    resets.push_back(Named(untimed, "FillBuffer (reset status words)"));
    EnqueueRun(ctx, c.plan, data, events);
    ctx.queue.finish();
    const Validation v = ValidateRun(ctx, task, c.variant, c.plan, data);
    EXPECT_TRUE(v.passed) << "run " << run << ": " << v.message;
  }
  EXPECT_EQ(resets, (std::vector<size_t>{1, 0, 1, 1, 0}));
  EXPECT_EQ(data.runs, 2u);
  EXPECT_EQ(data.groups, 2 * groups);
}

}  // namespace
}  // namespace rsb::test
