// Reduction: every variant x type through its check matrix (what a bare --check runs), on the
// test device, validated by the shared runner (poisoned output, CPU reference); the launch
// plans' traffic against values computed by hand; a variant added as a kernel and one row.
#include "TestSupport.h"
#include "tasks/CReductionTask.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace rsb::test {
namespace {

using Param = VariantTypeParam;

std::vector<Param> ReductionParams() {
  return VariantTypeParams(CReductionTask().Variants());
}

class ReductionVariant : public testing::TestWithParam<Param> {};

// What a bare --check runs for the variant (every operator, every size where its plan changes
// shape and its neighbours, the device's local size and a small one), at this type.
TEST_P(ReductionVariant, PassesTheCheckMatrix) {
  const Param& p = GetParam();
  CReductionTask task;
  RSB_SKIP_IF(CannotRun(task, p.variant, Problem(p.type, Op::Sum, std::nullopt, 1000, 64, 1)));
  ExpectCheckMatrixPasses("reduction", p.variant, p.type);
}

INSTANTIATE_TEST_SUITE_P(Reduction, ReductionVariant, testing::ValuesIn(ReductionParams()),
                         VariantTypeName);

TEST(Reduction, LocalSizeOneAndOddSizesWork) {
  CReductionTask task;
  for (const auto& v : task.Variants())
    for (size_t n : {1, 2, 3, 5, 17}) {
      ProblemSpec spec = Problem(ElementType::Int, Op::Sum, std::nullopt, n, 1, n);
      EXPECT_EQ(Failures(Validate(task, spec, {v})), "");
    }
}

// The single-pass GPU code path (grid-stride vector loads, 8 in flight) on whatever device runs
// the tests (--code-path gpu), so that a CPU-only CI checks it too. A type the device cannot
// reduce so (long without 64-bit atomics) is left out, and the test says so as it skips.
TEST(Reduction, SinglePassGpuCodePathIsCorrectOnAnyDevice) {
  CReductionTask task;
  std::string leftOut;
  for (ElementType type : {ElementType::Uint, ElementType::Float, ElementType::Long}) {
    const std::string why =
        CannotRun(task, "single-pass", Problem(type, Op::Sum, std::nullopt, 1000, 64, 1));
    if (!why.empty()) {
      leftOut += (leftOut.empty() ? "" : "; ") + why;
      continue;
    }
    for (Op op : AllOps())
      for (size_t local : {1, 64, 256})
        for (size_t n : {1, 3, 4097, 1000003}) {
          ProblemSpec spec = Problem(type, op, std::nullopt, n, local, n);
          spec.codePath = CodePath::Gpu;
          const auto results = Validate(task, spec, {"single-pass"});
          EXPECT_EQ(Failures(results), "");
          EXPECT_EQ(results[0].codePath, "gpu");
        }
  }
  RSB_SKIP_IF(leftOut);
}

TEST(Reduction, CostModelCountsLaunchesAndWork) {
  CReductionTask task;
  const DeviceInfo device = PlanningDevice();
  ProblemSpec spec = Problem(ElementType::Uint, Op::Sum, std::nullopt, 1000, 64, 1);
  const CostModel inter = task.Cost(device, "interleaved", spec);
  EXPECT_EQ(inter.launches, 10u);  // ceil(log2 1000)
  EXPECT_EQ(inter.steps, 10u);
  EXPECT_EQ(inter.ops, 999u);
  const CostModel dec = task.Cost(device, "decomposition", spec);
  EXPECT_EQ(dec.launches, 2u);  // 1000 -> 8 partials -> 1
  EXPECT_EQ(dec.steps, 2u * (1 + 6));
  const CostModel atom = task.Cost(device, "atomic", spec);
  EXPECT_EQ(atom.launches, 2u);  // fill + kernel
  // The runner counts what the variant really enqueued; it must agree with the plan.
  for (const auto& v : Runnable(task, task.Variants(), spec)) {
    const auto results = Validate(task, spec, {v});
    ASSERT_EQ(results[0].status, Status::Passed) << results[0].message;
    EXPECT_EQ(results[0].launchesEnqueued, task.Cost(device, v, spec).launches) << v;
  }
}

// Bytes read and written by each plan, computed by hand for n = 1000 uint at local size 64.
TEST(Reduction, PlanTrafficMatchesHandCountedBytes) {
  CReductionTask task;
  const DeviceInfo device = PlanningDevice();
  ProblemSpec spec = Problem(ElementType::Uint, Op::Sum, std::nullopt, 1000, 64, 1);
  // sequential: 1000 -> 500 -> 250 -> 125 -> 63 -> 32 -> 16 -> 8 -> 4 -> 2 -> 1; each step
  // reads what is left and writes half of it.
  CostModel c = task.Cost(device, "sequential", spec);
  EXPECT_EQ(c.bytesRead, 4u * (1000 + 500 + 250 + 125 + 63 + 32 + 16 + 8 + 4 + 2));
  EXPECT_EQ(c.bytesWritten, 4u * (500 + 250 + 125 + 63 + 32 + 16 + 8 + 4 + 2 + 1));
  EXPECT_EQ(task.Cost(device, "interleaved", spec).bytesRead, c.bytesRead);
  // decomposition: 1000 -> 8 work-group partials (tiles of 128) -> 1.
  c = task.Cost(device, "decomposition", spec);
  EXPECT_EQ(c.bytesRead, 4u * (1000 + 8));
  EXPECT_EQ(c.bytesWritten, 4u * (8 + 1));
  // atomic: the identity written, 1000 read, each of 8 groups reads and writes the result.
  c = task.Cost(device, "atomic", spec);
  EXPECT_EQ(c.bytesRead, 4u * (1000 + 8));
  EXPECT_EQ(c.bytesWritten, 4u * (1 + 8));
  EXPECT_EQ(c.ops, 999u + 8);
  // single-pass, CPU shape: 250 uint4 vectors over work-groups of 64: 4 groups, each publishing
  // a 64-bit partial that the last group reads; one result.
  spec.codePath = CodePath::Cpu;
  c = task.Cost(device, "single-pass", spec);
  EXPECT_EQ(c.launches, 1u);
  EXPECT_EQ(c.bytesRead, 4u * 1000 + 4 * 8);
  EXPECT_EQ(c.bytesWritten, 4u * 8 + 4);
}

// Adding a variant of an existing shape is its kernel and one row of the table: a copy of the
// kernels folder gets a new kernel (a copy of decomposition's), a task gets the table plus one row,
// and the runner validates it like any other variant.
TEST(Reduction, NewVariantIsItsKernelAndOneTableRow) {
  const std::string dir = CopyKernels("new-variant");
  const std::string copy =
      KernelCopy(dir + "/Reduction.cl", "ReduceDecomposition", "ReduceMyVariant");
  std::ofstream(dir + "/Reduction.cl", std::ios::app) << "\nRSB_WG_ATTR\n" << copy;
  auto table = CReductionTask::DefaultTable();
  table.push_back({"my-variant", "ReduceMyVariant", "Reduction.cl", ReductionShape::MultiLevel, 256,
                   16, "a student's copy of decomposition"});
  CReductionTask task(table);
  for (size_t n : {1, 1000, 100003}) {
    const auto results = ValidateWithKernels(
        task, Problem(ElementType::Int, Op::Max, std::nullopt, n, 32, n), {"my-variant"}, dir);
    EXPECT_EQ(Failures(results), "");
    EXPECT_EQ(results[0].launchesEnqueued, results[0].cost.launches);
  }
  std::filesystem::remove_all(dir);
}

class CountingPlans : public CReductionTask {
 public:
  LaunchPlan Plan(const DeviceInfo& device, const std::string& variant,
                  const ProblemSpec& spec) const override {
    ++plans;
    return CReductionTask::Plan(device, variant, spec);
  }
  mutable size_t plans = 0;
};

// A case makes its plan once: its cost, kernel options, memory need, the validated runs, the
// warm-up and every timed run take the same plan (PlannedTask::PlanFor keeps it).
TEST(Reduction, ACaseMakesItsPlanOnce) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  CountingPlans task;
  RunSettings settings;
  settings.validateRuns = 2;
  settings.warmup = 1;
  settings.maxIterations = 4;
  settings.timeBudgetS = 0.05;
  Runner runner(*Device().ctx, settings);
  const ProblemSpec spec = Problem(ElementType::Uint, Op::Sum, std::nullopt, 100000, 64, 5);
  const auto results = runner.Run({Job{&task, spec, {"decomposition"}}});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, Status::Passed) << results[0].message;
  EXPECT_GE(results[0].iterations, 1u);
  EXPECT_EQ(task.plans, 1u);
}

TEST(Reduction, FloatSumStaysWithinTheBoundAtLargeN) {
  CReductionTask task;
  ProblemSpec spec = Problem(ElementType::Float, Op::Sum, std::nullopt, size_t(1) << 22, 256, 3);
  EXPECT_EQ(Failures(Validate(task, spec, Runnable(task, task.Variants(), spec))), "");
}

// Every variant's automatic local size and local memory fit devices of 1, 16 and 32 KiB
// (counted once or twice) with work-groups of at most 1024, 128 or 64; where the defaults fit
// (the H100, pocl) they stay. With 1 KiB the trees of 256 doubles (2 KiB) halve to 64 (512
// bytes counted twice).
TEST(Reduction, AutoChoicesFitSmallDevices) {
  CReductionTask task;
  for (bool gpu : {false, true})
    for (unsigned long long local : {1ull << 10, 16ull << 10, 32ull << 10})
      for (unsigned scale : {1u, 2u})
        for (size_t maxWg : {1024, 128, 64})
          for (ElementType type : {ElementType::Uint, ElementType::Double}) {
            const ProblemSpec spec = Problem(type, Op::Max, std::nullopt, 100000, 0, 1);
            EXPECT_EQ(AutoChoiceProblems(task, spec, FabricatedDevice(gpu, local, maxWg, scale)),
                      "")
                << "gpu " << gpu << ", " << (local >> 10) << " KiB x " << scale << ", max "
                << maxWg;
          }
  const ProblemSpec dbl = Problem(ElementType::Double, Op::Sum, std::nullopt, 100000, 0, 1);
  EXPECT_EQ(task.LocalSize("decomposition", dbl, FabricatedDevice(true, 1 << 10, 1024, 2)), 64u);
  EXPECT_EQ(task.LocalSize("interleaved", dbl, FabricatedDevice(true, 1 << 10, 1024, 2)), 128u);
  EXPECT_EQ(task.LocalSize("decomposition", dbl, FabricatedDevice(true, 32 << 10, 96)), 64u);
  const DeviceInfo h100 = FabricatedDevice(true, 48 << 10, 1024, 1, 16);
  const DeviceInfo pocl = FabricatedDevice(false, 512 << 10, 4096);
  for (const auto& v : task.Table())
    for (ElementType type : AllElementTypes()) {
      const ProblemSpec spec = Problem(type, Op::Sum, std::nullopt, 100000, 0, 1);
      EXPECT_EQ(task.LocalSize(v.name, spec, h100), v.gpuLocal) << v.name;
      EXPECT_EQ(task.LocalSize(v.name, spec, pocl), v.cpuLocal) << v.name;
    }
}

}  // namespace
}  // namespace rsb::test
