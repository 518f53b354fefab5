// One case, resolved in one place (common/engine/Case.h): the case the runner runs, the one
// --explain explains and the one tune starts from are the same.
#include "TestSupport.h"

#include "engine/Case.h"
#include "engine/Explain.h"
#include "engine/PlannedTask.h"
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
        if (!c.Runs())
          EXPECT_EQ(r->message, c.skip) << label;
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

// A task that counts the plans it makes.
class CountingTask : public TableTask<int> {
 public:
  CountingTask()
      : TableTask<int>({{"a", "A", "A.cl", 0, 64, 8, ""}, {"b", "B", "B.cl", 0, 64, 8, ""}}) {}
  std::string Name() const override { return "counting"; }
  std::string PlanState() const override { return state; }
  LaunchPlan Plan(const DeviceInfo&, const std::string&, const ProblemSpec&) const override {
    ++plans;
    return {};
  }
  Expected Reference(const HostArray&, const ProblemSpec&) const override { return {}; }
  size_t OutputElements(const ProblemSpec&) const override { return 1; }
  mutable size_t plans = 0;
  std::string state;
};

// PlanFor makes a case's plan once, and again when anything a plan is made from changes: the
// device, the variant, a field of the problem but its seed and input, the task's PlanState().
TEST(Case, APlanIsMadeAgainOnlyWhenItsCaseChanges) {
  CountingTask task;
  DeviceInfo device = FabricatedDevice(true, 48 << 10, 1024);
  ProblemSpec spec;
  spec.n = 1000;
  spec.localSize = 64;
  task.PlanFor(device, "a", spec);
  spec.seed = 7;
  spec.input = std::make_shared<HostArray>();
  task.PlanFor(device, "a", spec);
  EXPECT_EQ(task.plans, 1u);
  size_t plans = 1;
  const auto changed = [&](const char* what) {
    task.PlanFor(device, "a", spec);
    EXPECT_EQ(task.plans, ++plans) << what;
    task.PlanFor(device, "a", spec);
    EXPECT_EQ(task.plans, plans) << what << ", asked again";
  };
  spec.n = 1001, changed("n");
  spec.height = 7, changed("height");
  spec.localSize = 32, changed("local size");
  spec.type = ElementType::Float, changed("type");
  spec.op = Op::Max, changed("operator");
  spec.codePath = CodePath::Cpu, changed("code path");
  spec.portable = true, changed("portable");
  spec.lookbackFallback = true, changed("look-back fallback");
  spec.tuning["index-bits"] = 64, changed("a knob");
  spec.params["p"] = 1, changed("a parameter");
  task.state = "1", changed("the task's state");
  device.localMemBytes /= 2, changed("the device's local memory");
  device.maxWorkGroupSize /= 2, changed("the device's work-group limit");
  device.extensions += " cl_khr_fp64", changed("the device's extensions");
  task.PlanFor(device, "b", spec);
  EXPECT_EQ(task.plans, ++plans) << "another variant";
}

}  // namespace
}  // namespace rsb::test
