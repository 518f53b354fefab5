// Scan: every variant x type x operator x scan kind at the edge sizes and two local sizes, on the
// test device, validated by the shared runner (poisoned output, CPU reference); deep block-sum
// recursion, local size 1, the cost model, the course examples on the device, and a broken
// kernel caught through the command line.
#include "CScanTask.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace rsb::test {
namespace {

using Param = VariantTypeParam;

std::vector<Param> AllParams() {
  return VariantTypeParams(CScanTask().Variants());
}

class ScanVariant : public testing::TestWithParam<Param> {};

// Every operator, both scan kinds, every edge size, local sizes 64 and 256.
TEST_P(ScanVariant, MatchesReferenceForEveryOperatorKindSizeAndLocalSize) {
  const Param& p = GetParam();
  CScanTask task;
  RSB_SKIP_IF(
      CannotRun(task, p.variant, Problem(p.type, Op::Sum, ScanKind::Inclusive, 1000, 64, 1)));
  for (Op op : AllOps())
    for (ScanKind kind : AllScanKinds())
      for (size_t local : {64, 256})
        for (size_t n : EdgeSizes()) {
          ProblemSpec spec = Problem(p.type, op, kind, n, local, 11 + n);
          const auto results = Validate(task, spec, {p.variant});
          ASSERT_EQ(results.size(), 1u);
          EXPECT_EQ(Failures(results), "");
        }
}

INSTANTIATE_TEST_SUITE_P(Scan, ScanVariant, testing::ValuesIn(AllParams()), VariantTypeName);

std::vector<std::string> MultiLevelVariants() {
  std::vector<std::string> names;
  for (const auto& v : CScanTask::DefaultTable())
    if (v.shape != ScanShape::GlobalSteps)
      names.push_back(v.name);
  return names;
}

// Local size 4: tiles of 8, so 2^20 + 3 elements need 7 levels of block sums.
TEST(Scan, BlockSumsRecurseOverManyLevels) {
  CScanTask task;
  for (ScanKind kind : AllScanKinds())
    for (Op op : {Op::Sum, Op::Max}) {
      ProblemSpec spec = Problem(ElementType::Int, op, kind, (size_t(1) << 20) + 3, 4, 5);
      EXPECT_EQ(task.Cost(Device().info, "work-efficient", spec).launches, 2u * 7 - 1);
      EXPECT_EQ(Failures(Validate(task, spec, Runnable(task, MultiLevelVariants(), spec))), "");
    }
  ProblemSpec spec =
      Problem(ElementType::Float, Op::Sum, ScanKind::Inclusive, (size_t(1) << 20) + 3, 2, 9);
  EXPECT_EQ(Failures(Validate(task, spec, Runnable(task, MultiLevelVariants(), spec))), "");
}

TEST(Scan, LocalSizeOneAndOddSizesWork) {
  CScanTask task;
  for (ScanKind kind : AllScanKinds())
    for (size_t n : {1, 2, 3, 5, 17, 99}) {
      ProblemSpec spec = Problem(ElementType::Int, Op::Sum, kind, n, 1, n);
      EXPECT_EQ(Failures(Validate(task, spec, Runnable(task, task.Variants(), spec))), "");
      spec.op = Op::Min;
      spec.type = ElementType::Ulong;  // single-pass: two status words per tile
      EXPECT_EQ(Failures(Validate(task, spec, Runnable(task, task.Variants(), spec))), "");
    }
}

TEST(Scan, CostModelCountsLaunchesAndWork) {
  CScanTask task;
  const DeviceInfo device = PlanningDevice();
  ProblemSpec spec = Problem(ElementType::Uint, Op::Sum, ScanKind::Exclusive, 1000, 64, 1);
  const CostModel naive = task.Cost(device, "naive", spec);
  EXPECT_EQ(naive.launches, 10u);  // offsets 1 .. 512
  EXPECT_EQ(naive.steps, 10u);
  EXPECT_EQ(naive.ops, 10u * 1000 - 1023);  // sum of (n - offset)
  // Tiles of 128: 1000 -> 8 block sums -> one tile. Two scans and one AddBlockOffsets.
  const CostModel ks = task.Cost(device, "kogge-stone", spec);
  EXPECT_EQ(ks.launches, 3u);
  EXPECT_EQ(ks.steps, 7u + 7 + 1);
  EXPECT_EQ(ks.ops, 9u * (128 * 7 - 127) + 872);
  const CostModel we = task.Cost(device, "work-efficient", spec);
  EXPECT_EQ(we.launches, 3u);
  EXPECT_EQ(we.steps, 14u + 14 + 1);
  EXPECT_EQ(we.ops, 9u * 254 + 872);  // O(n): 2(B - 1) per tile, plus the offsets
  spec.scanKind = ScanKind::Inclusive;
  EXPECT_EQ(task.Cost(device, "work-efficient", spec).ops, 9u * 254 + 8 * 128 + 872);
  EXPECT_EQ(task.Cost(device, "conflict-free", spec).ops,
            task.Cost(device, "work-efficient", spec).ops);
  spec.n = 1;
  for (const auto& v : task.Variants())
    EXPECT_EQ(task.Cost(device, v, spec).launches, 1u) << v;

  // The runner counts what the variant really enqueued; it must agree with the plan.
  for (size_t n : {1, 2, 129, 1000, 100000})
    for (size_t local : {1, 64}) {
      spec.n = n;
      spec.localSize = local;
      for (const auto& v : Runnable(task, task.Variants(), spec)) {
        const auto results = Validate(task, spec, {v});
        ASSERT_EQ(results[0].status, Status::Passed) << results[0].message;
        EXPECT_EQ(results[0].launchesEnqueued, task.Cost(device, v, spec).launches)
            << v << " n=" << n << " local=" << local;
      }
    }
}

// Bytes read and written by each plan, computed by hand for n = 1000 uint at local size 64
// (tiles of 128).
TEST(Scan, PlanTrafficMatchesHandCountedBytes) {
  CScanTask task;
  const DeviceInfo device = PlanningDevice();
  ProblemSpec spec = Problem(ElementType::Uint, Op::Sum, ScanKind::Exclusive, 1000, 64, 1);
  // naive: 10 steps, each reading and writing all 1000 elements.
  CostModel c = task.Cost(device, "naive", spec);
  EXPECT_EQ(c.bytesRead, 10u * 4000);
  EXPECT_EQ(c.bytesWritten, 10u * 4000);
  // work-efficient: level 0 reads 1000, writes 1000 and 8 tile totals; level 1 reads those 8,
  // writes them back and one total; AddBlockOffsets reads the 872 elements past the first tile
  // and 7 offsets and writes the 872.
  c = task.Cost(device, "work-efficient", spec);
  EXPECT_EQ(c.bytesRead, 4u * (1000 + 8 + 872 + 7));
  EXPECT_EQ(c.bytesWritten, 4u * (1008 + 9 + 872));
  // single-pass, CPU shape (one work-item, 65536 elements each): one tile, whose status word is
  // written twice and read once.
  spec.codePath = CodePath::Cpu;
  spec.localSize = 1;
  c = task.Cost(device, "single-pass", spec);
  EXPECT_EQ(c.launches, 1u);
  EXPECT_EQ(c.bytesRead, 4u * 1000 + 8);
  EXPECT_EQ(c.bytesWritten, 4u * 1000 + 16);
}

// The course's examples, on the device, through the runner with the example as input: the CPU
// reference matches the worked answers and the device matches the reference.
TEST(Scan, CourseExamplesOnTheDevice) {
  struct Example {
    std::vector<uint32_t> input, inclusive, exclusive;
  };
  const std::vector<Example> examples = {
      {{3, 1, 7, 0, 4, 1, 6, 3}, {3, 4, 11, 11, 15, 16, 22, 25}, {0, 3, 4, 11, 11, 15, 16, 22}},
      {{3, 11, 2, 5, 7, 0, 9, 3}, {3, 14, 16, 21, 28, 28, 37, 40}, {0, 3, 14, 16, 21, 28, 28, 37}},
  };
  CScanTask task;
  for (const auto& e : examples) {
    auto input = std::make_shared<HostArray>(ElementType::Uint, e.input.size());
    std::copy(e.input.begin(), e.input.end(), input->As<uint32_t>());
    for (ScanKind kind : AllScanKinds()) {
      const HostArray want = ExpectedValues(ReferenceScan(*input, Op::Sum, kind), *input);
      const auto& worked = kind == ScanKind::Inclusive ? e.inclusive : e.exclusive;
      EXPECT_EQ(std::vector<uint32_t>(want.As<uint32_t>(), want.As<uint32_t>() + want.Size()),
                worked);
      for (size_t local : {0, 1, 2, 4}) {
        ProblemSpec spec = Problem(ElementType::Uint, Op::Sum, kind, input->Size(), local, 1);
        spec.input = input;
        EXPECT_EQ(Failures(Validate(task, spec, Runnable(task, task.Variants(), spec))), "")
            << "local=" << local;
      }
    }
  }
}

// The look-back's fallback (--lookback-fallback): every predecessor's aggregate computed from the
// input, as if none had published; the answer must not change.
TEST(Scan, SinglePassFallbackComputesMissingAggregates) {
  CScanTask task;
  RSB_SKIP_IF(CannotRun(task, "single-pass",
                        Problem(ElementType::Int, Op::Sum, ScanKind::Inclusive, 1000, 1, 1)));
  for (CodePath path : {CodePath::Cpu, CodePath::Gpu})
    for (ScanKind kind : AllScanKinds())
      for (size_t local : {1, 4, 64})
        for (size_t n : {1, 5, 4097, 300001}) {
          ProblemSpec spec = Problem(ElementType::Int, Op::Sum, kind, n, local, n);
          spec.codePath = path;
          spec.lookbackFallback = true;
          EXPECT_EQ(Failures(Validate(task, spec, {"single-pass"})), "");
          spec.type = ElementType::Float;
          spec.op = Op::Max;
          EXPECT_EQ(Failures(Validate(task, spec, {"single-pass"})), "");
        }
}

// The GPU code path (coalesced loads through local memory, register tiles) on whatever device
// runs the tests (--code-path gpu), so that a CPU-only CI checks it too. On a device with 32-wide
// warps it runs with both work-group scans: warp shuffles (local sizes 32 and 256) and the
// portable one (--portable).
TEST(Scan, SinglePassGpuCodePathIsCorrectOnAnyDevice) {
  CScanTask task;
  RSB_SKIP_IF(Lacks(Need::Int64Atomics));
  for (bool portable : {false, true}) {
    if (portable && Device().info.nvWarpSize != 32)
      continue;  // the portable scan is the only one here, already checked
    for (ScanKind kind : AllScanKinds())
      for (size_t local : {1, 32, 256})
        for (size_t n : {1, 3, 255, 2048, 2049, 4097, 1000003}) {
          ProblemSpec spec = Problem(ElementType::Uint, Op::Sum, kind, n, local, n);
          spec.codePath = CodePath::Gpu;
          spec.portable = portable;
          EXPECT_EQ(Failures(Validate(task, spec, {"single-pass"})), "") << "portable=" << portable;
          spec.type = ElementType::Float;
          spec.op = Op::Min;
          EXPECT_EQ(Failures(Validate(task, spec, {"single-pass"})), "") << "portable=" << portable;
          spec.type = ElementType::Int;
          spec.op = Op::Max;
          EXPECT_EQ(Failures(Validate(task, spec, {"single-pass"})), "") << "portable=" << portable;
          spec.type = ElementType::Long;  // 64-bit: a tile publishes two status words
          spec.op = Op::Sum;
          EXPECT_EQ(Failures(Validate(task, spec, {"single-pass"})), "") << "portable=" << portable;
        }
  }
}

// Launch after launch with no reset in between (new generation, ticket moving on), every run
// validated; sizes straddle whole tiles.
TEST(Scan, SinglePassStaysCorrectOverRepeatedRuns) {
  CScanTask task;
  RSB_SKIP_IF(CannotRun(task, "single-pass",
                        Problem(ElementType::Uint, Op::Sum, ScanKind::Inclusive, 1000, 0, 1)));
  const size_t tile = task.SinglePassTile(Device().info, ProblemSpec());  // the default tile
  for (size_t n : {size_t(1), tile - 1, tile, tile + 1, 3 * tile + 7, size_t(1000003)})
    for (ScanKind kind : AllScanKinds()) {
      const auto results =
          Validate(task, Problem(ElementType::Uint, Op::Sum, kind, n, 0, n), {"single-pass"}, 25);
      EXPECT_EQ(Failures(results), "");
      EXPECT_EQ(results[0].validatedRuns, 25u);
    }
}

// A variant that wrote into its input would scan something else in its second validated run.
TEST(Scan, InputBufferIsNotModified) {
  CScanTask task;
  ProblemSpec spec = Problem(ElementType::Int, Op::Sum, ScanKind::Inclusive, 5000, 16, 3);
  const auto results = Validate(task, spec, Runnable(task, task.Variants(), spec), 2);
  EXPECT_EQ(Failures(results), "");
  for (const auto& r : results)
    EXPECT_EQ(r.validatedRuns, 2u) << r.variant;
}

TEST(Scan, BrokenKernelFailsTheCheckAndNamesTheVariant) {
  const std::string dir = CopyKernels("scan-broken");
  Patch(dir + "/Scan.cl", "tile[b] = OP(tile[a], tile[b]);", "tile[b] = OP(tile[b], tile[b]);");
  const CommandResult r =
      RunBench("--task scan --variant work-efficient --size 1000 --check --kernels " + dir);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("work-efficient"), std::string::npos) << r.err;
}

TEST(Scan, CommandLineChecksEveryVariantAndKind) {
  const CommandResult r =
      RunBench("--task scan --scan-kind all --op all --size 1000,3 --local-size 8 --check");
  EXPECT_EQ(r.status, 0) << r.err;
  for (const auto& v : CScanTask().Variants())
    EXPECT_NE(r.out.find(v), std::string::npos) << r.out;
}

}  // namespace
}  // namespace rsb::test
