// Reduction: every variant x type x operator at the edge sizes and two local sizes, on the
// test device, validated by the shared runner (poisoned output, CPU reference).
#include "CReductionTask.h"
#include "TestSupport.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace rsb::test {
namespace {

using Param = VariantTypeParam;

std::vector<Param> AllParams() {
  return VariantTypeParams(VariantNames(CReductionTask::VariantTable()));
}

class ReductionVariant : public testing::TestWithParam<Param> {};

// Every operator, every edge size, local sizes 64 and 256 (and 1 for the smallest sizes).
TEST_P(ReductionVariant, MatchesReferenceForEveryOperatorSizeAndLocalSize) {
  const Param& p = GetParam();
  if (p.type == ElementType::Double && !Device().info.fp64)
    GTEST_SKIP() << "no fp64";
  CReductionTask task;
  for (Op op : AllOps())
    for (size_t local : {64, 256})
      for (size_t n : EdgeSizes()) {
        ProblemSpec spec{p.type, op, std::nullopt, n, local, 7 + n};
        const auto results = Validate(task, spec, {p.variant});
        ASSERT_EQ(results.size(), 1u);
        EXPECT_EQ(Failures(results), "");
        EXPECT_EQ(results[0].status, Status::Passed);
      }
}

INSTANTIATE_TEST_SUITE_P(Reduction, ReductionVariant, testing::ValuesIn(AllParams()),
                         VariantTypeName);

TEST(Reduction, LocalSizeOneAndOddSizesWork) {
  CReductionTask task;
  for (const auto& v : CReductionTask::VariantTable())
    for (size_t n : {1, 2, 3, 5, 17}) {
      ProblemSpec spec{ElementType::Int, Op::Sum, std::nullopt, n, 1, n};
      EXPECT_EQ(Failures(Validate(task, spec, {v.name})), "");
    }
}

// The single-pass GPU code path (grid-stride vector loads, 8 in flight) on whatever device runs
// the tests, so that a CPU-only CI checks it too.
TEST(Reduction, SinglePassGpuCodePathIsCorrectOnAnyDevice) {
  CReductionTask task;
  task.ForceGpuCodePath(true);
  for (ElementType type : {ElementType::Uint, ElementType::Float, ElementType::Long})
    for (Op op : AllOps())
      for (size_t local : {1, 64, 256})
        for (size_t n : {1, 3, 4097, 1000003}) {
          ProblemSpec spec{type, op, std::nullopt, n, local, n};
          EXPECT_EQ(Failures(Validate(task, spec, {"single-pass"})), "");
        }
}

TEST(Reduction, CostModelCountsLaunchesAndWork) {
  CReductionTask task;
  ProblemSpec spec{ElementType::Uint, Op::Sum, std::nullopt, 1000, 64, 1};
  const CostModel inter = task.Cost("interleaved", spec);
  EXPECT_EQ(inter.launches, 10u);  // ceil(log2 1000)
  EXPECT_EQ(inter.steps, 10u);
  EXPECT_EQ(inter.ops, 999u);
  const CostModel dec = task.Cost("decomposition", spec);
  EXPECT_EQ(dec.launches, 2u);  // 1000 -> 8 partials -> 1
  EXPECT_EQ(dec.steps, 2u * (1 + 6));
  const CostModel atom = task.Cost("atomic", spec);
  EXPECT_EQ(atom.launches, 2u);  // fill + kernel
  // The runner counts what the variant really enqueued; it must agree with the model.
  for (const auto& v : CReductionTask::VariantTable()) {
    const auto results = Validate(task, spec, {v.name});
    ASSERT_EQ(results[0].status, Status::Passed) << results[0].message;
    EXPECT_EQ(results[0].launchesCounted, task.Cost(v.name, spec).launches) << v.name;
  }
}

TEST(Reduction, FloatSumStaysWithinTheBoundAtLargeN) {
  CReductionTask task;
  ProblemSpec spec{ElementType::Float, Op::Sum, std::nullopt, size_t(1) << 22, 256, 3};
  EXPECT_EQ(Failures(Validate(task, spec, task.Variants())), "");
}

}  // namespace
}  // namespace rsb::test
