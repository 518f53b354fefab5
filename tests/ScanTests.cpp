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
  return VariantTypeParams(VariantNames(CScanTask::VariantTable()));
}

class ScanVariant : public testing::TestWithParam<Param> {};

// Every operator, both scan kinds, every edge size, local sizes 64 and 256.
TEST_P(ScanVariant, MatchesReferenceForEveryOperatorKindSizeAndLocalSize) {
  const Param& p = GetParam();
  if (p.type == ElementType::Double && !Device().info.fp64)
    GTEST_SKIP() << "no fp64";
  CScanTask task;
  if (p.variant == "single-pass" && SizeOf(p.type) == 8) {
    // No single atomic word holds a 64-bit value and its status: skipped, with the reason.
    const auto r = Validate(task, {p.type, Op::Sum, ScanKind::Inclusive, 1000, 64, 1}, {p.variant});
    EXPECT_EQ(r[0].status, Status::Skipped);
    EXPECT_NE(r[0].message.find("atomic word"), std::string::npos) << r[0].message;
    return;
  }
  for (Op op : AllOps())
    for (ScanKind kind : AllScanKinds())
      for (size_t local : {64, 256})
        for (size_t n : EdgeSizes()) {
          ProblemSpec spec{p.type, op, kind, n, local, 11 + n};
          const auto results = Validate(task, spec, {p.variant});
          ASSERT_EQ(results.size(), 1u);
          EXPECT_EQ(Failures(results), "");
        }
}

INSTANTIATE_TEST_SUITE_P(Scan, ScanVariant, testing::ValuesIn(AllParams()), VariantTypeName);

std::vector<std::string> MultiLevelVariants() {
  std::vector<std::string> names;
  for (const auto& v : CScanTask::VariantTable())
    if (v.shape != CScanTask::Shape::GlobalSteps)
      names.push_back(v.name);
  return names;
}

// Local size 4: tiles of 8, so 2^20 + 3 elements need 7 levels of block sums.
TEST(Scan, BlockSumsRecurseOverManyLevels) {
  CScanTask task;
  for (ScanKind kind : AllScanKinds())
    for (Op op : {Op::Sum, Op::Max}) {
      ProblemSpec spec{ElementType::Int, op, kind, (size_t(1) << 20) + 3, 4, 5};
      EXPECT_EQ(task.Cost("work-efficient", spec).launches, 2u * 7 - 1);
      EXPECT_EQ(Failures(Validate(task, spec, MultiLevelVariants())), "");
    }
  ProblemSpec spec{ElementType::Float, Op::Sum, ScanKind::Inclusive, (size_t(1) << 20) + 3, 2, 9};
  EXPECT_EQ(Failures(Validate(task, spec, MultiLevelVariants())), "");
}

TEST(Scan, LocalSizeOneAndOddSizesWork) {
  CScanTask task;
  for (ScanKind kind : AllScanKinds())
    for (size_t n : {1, 2, 3, 5, 17, 99}) {
      ProblemSpec spec{ElementType::Int, Op::Sum, kind, n, 1, n};
      EXPECT_EQ(Failures(Validate(task, spec, task.Variants())), "");
      spec.op = Op::Min;
      spec.type = ElementType::Ulong;  // single-pass is skipped for 64-bit types
      EXPECT_EQ(Failures(Validate(task, spec, task.Variants()), /*allowSkip=*/true), "");
    }
}

TEST(Scan, CostModelCountsLaunchesAndWork) {
  CScanTask task;
  ProblemSpec spec{ElementType::Uint, Op::Sum, ScanKind::Exclusive, 1000, 64, 1};
  const CostModel naive = task.Cost("naive", spec);
  EXPECT_EQ(naive.launches, 10u);  // offsets 1 .. 512
  EXPECT_EQ(naive.steps, 10u);
  EXPECT_EQ(naive.ops, 10u * 1000 - 1023);  // sum of (n - offset)
  // Tiles of 128: 1000 -> 8 block sums -> one tile. Two scans and one AddBlockOffsets.
  const CostModel ks = task.Cost("kogge-stone", spec);
  EXPECT_EQ(ks.launches, 3u);
  EXPECT_EQ(ks.steps, 7u + 7 + 1);
  EXPECT_EQ(ks.ops, 9u * (128 * 7 - 127) + 872);
  const CostModel we = task.Cost("work-efficient", spec);
  EXPECT_EQ(we.launches, 3u);
  EXPECT_EQ(we.steps, 14u + 14 + 1);
  EXPECT_EQ(we.ops, 9u * 254 + 872);  // O(n): 2(B - 1) per tile, plus the offsets
  spec.scanKind = ScanKind::Inclusive;
  EXPECT_EQ(task.Cost("work-efficient", spec).ops, 9u * 254 + 8 * 128 + 872);
  EXPECT_EQ(task.Cost("conflict-free", spec).ops, task.Cost("work-efficient", spec).ops);
  spec.n = 1;
  for (const auto& v : CScanTask::VariantTable())
    EXPECT_EQ(task.Cost(v.name, spec).launches, 1u) << v.name;

  // The runner counts what the variant really enqueued; it must agree with the model.
  for (size_t n : {1, 2, 129, 1000, 100000})
    for (size_t local : {1, 64}) {
      spec.n = n;
      spec.localSize = local;
      for (const auto& v : CScanTask::VariantTable()) {
        const auto results = Validate(task, spec, {v.name});
        ASSERT_EQ(results[0].status, Status::Passed) << results[0].message;
        EXPECT_EQ(results[0].launchesCounted, task.Cost(v.name, spec).launches)
            << v.name << " n=" << n << " local=" << local;
      }
    }
}

// The course's examples, on the device, through the same code paths as a benchmark run.
TEST(Scan, CourseExamplesOnTheDevice) {
  struct Example {
    std::vector<uint32_t> input, inclusive, exclusive;
  };
  const std::vector<Example> examples = {
      {{3, 1, 7, 0, 4, 1, 6, 3}, {3, 4, 11, 11, 15, 16, 22, 25}, {0, 3, 4, 11, 11, 15, 16, 22}},
      {{3, 11, 2, 5, 7, 0, 9, 3}, {3, 14, 16, 21, 28, 28, 37, 40}, {0, 3, 14, 16, 21, 28, 28, 37}},
  };
  TestDevice& d = Device();
  cl::CommandQueue queue(d.context, d.device);
  CScanTask task;
  for (const auto& e : examples) {
    HostArray input(ElementType::Uint, e.input.size());
    std::copy(e.input.begin(), e.input.end(), input.As<uint32_t>());
    for (const auto& v : CScanTask::VariantTable())
      for (size_t local : {0, 1, 2, 4})
        for (ScanKind kind : AllScanKinds()) {
          ProblemSpec spec{ElementType::Uint, Op::Sum, kind, input.Size(), local, 1};
          const HostArray out = task.RunOnce(queue, *d.programs, v.name, spec, input);
          const auto& want = kind == ScanKind::Inclusive ? e.inclusive : e.exclusive;
          ASSERT_EQ(out.Size(), want.size());
          EXPECT_EQ(std::vector<uint32_t>(out.As<uint32_t>(), out.As<uint32_t>() + out.Size()),
                    want)
              << v.name << " " << ToString(kind) << " local=" << local;
        }
  }
}

// The look-back's fallback: every predecessor's aggregate computed from the input, as if none
// had published; the answer must not change.
TEST(Scan, SinglePassFallbackComputesMissingAggregates) {
  CScanTask task;
  task.SetFallbackOnly(true);
  for (bool gpuPath : {false, true})
    for (ScanKind kind : AllScanKinds())
      for (size_t local : {1, 4, 64})
        for (size_t n : {1, 5, 4097, 300001}) {
          task.ForceGpuCodePath(gpuPath);
          ProblemSpec spec{ElementType::Int, Op::Sum, kind, n, local, n};
          EXPECT_EQ(Failures(Validate(task, spec, {"single-pass"})), "");
          spec.type = ElementType::Float;
          spec.op = Op::Max;
          EXPECT_EQ(Failures(Validate(task, spec, {"single-pass"})), "");
        }
}

// The GPU code path (coalesced loads through local memory, register tiles) on whatever device
// runs the tests, so that a CPU-only CI checks it too. On a device with 32-wide warps it runs
// with both work-group scans: warp shuffles (local sizes 32 and 256) and the portable one.
TEST(Scan, SinglePassGpuCodePathIsCorrectOnAnyDevice) {
  CScanTask task;
  task.ForceGpuCodePath(true);
  for (bool portable : {false, true}) {
    if (portable && Device().info.nvWarpSize != 32)
      continue;  // the portable scan is the only one here, already checked
    task.SetPortableWorkGroupScan(portable);
    for (ScanKind kind : AllScanKinds())
      for (size_t local : {1, 32, 256})
        for (size_t n : {1, 3, 255, 2048, 2049, 4097, 1000003}) {
          ProblemSpec spec{ElementType::Uint, Op::Sum, kind, n, local, n};
          EXPECT_EQ(Failures(Validate(task, spec, {"single-pass"})), "") << "portable=" << portable;
          spec.type = ElementType::Float;
          spec.op = Op::Min;
          EXPECT_EQ(Failures(Validate(task, spec, {"single-pass"})), "") << "portable=" << portable;
          spec.type = ElementType::Int;
          spec.op = Op::Max;
          EXPECT_EQ(Failures(Validate(task, spec, {"single-pass"})), "") << "portable=" << portable;
        }
  }
}

// Launch after launch with no reset in between (new generation, ticket moving on), every run
// validated; sizes straddle whole tiles.
TEST(Scan, SinglePassStaysCorrectOverRepeatedRuns) {
  CScanTask task;
  const ProblemSpec probe{ElementType::Uint, Op::Sum, ScanKind::Inclusive, 1, 0, 1};
  const size_t tile = task.LocalSize("single-pass", probe, Device().info) *
                      (Device().info.isGpu ? CScanTask::SinglePassGpuItems()
                                           : CScanTask::SinglePassCpuItems());  // the default tile
  RunSettings settings;
  settings.timed = false;
  settings.measureCopyBandwidth = false;
  settings.validateRuns = 25;
  Runner runner(Device().context, Device().device, *Device().programs, settings);
  std::vector<Job> jobs;
  for (size_t n : {size_t(1), tile - 1, tile, tile + 1, 3 * tile + 7, size_t(1000003)})
    for (ScanKind kind : AllScanKinds())
      jobs.push_back({&task, {ElementType::Uint, Op::Sum, kind, n, 0, n}, {"single-pass"}});
  const auto results = runner.Run(jobs);
  EXPECT_EQ(Failures(results), "");
  for (const auto& r : results)
    EXPECT_EQ(r.validatedRuns, 25u);
}

TEST(Scan, InputBufferIsNotModified) {
  TestDevice& d = Device();
  cl::CommandQueue queue(d.context, d.device);
  CScanTask task;
  const HostArray input = RandomInput(ElementType::Int, 5000, 3);
  for (const auto& v : CScanTask::VariantTable()) {
    ProblemSpec spec{ElementType::Int, Op::Sum, ScanKind::Inclusive, input.Size(), 16, 1};
    const HostArray once = task.RunOnce(queue, *d.programs, v.name, spec, input);
    // The input buffer survives the run only if the task never writes it: a second run on the
    // task's own input buffer must give the same output.
    spec.localSize = 16;
    task.PrepareRun(queue, v.name, spec, /*poison=*/true);
    RunEvents events;
    task.ComputeGPU(queue, v.name, spec, events);
    queue.finish();
    task.ComputeCPU();
    EXPECT_TRUE(task.ValidateResults(queue, v.name, spec).passed) << v.name;
  }
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
  for (const auto& v : CScanTask::VariantTable())
    EXPECT_NE(r.out.find(v.name), std::string::npos) << r.out;
}

}  // namespace
}  // namespace rsb::test
