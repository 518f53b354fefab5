// Scan: every variant x type through its check matrix (every operator and scan kind, what a bare
// --check runs), on the test device, validated by the shared runner (poisoned output, CPU
// reference); deep block-sum recursion, local size 1, the cost model, the course examples on the
// device, and a broken kernel caught through the command line.
#include "TestSupport.h"
#include "tasks/CScanTask.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

namespace rsb::test {
namespace {

using Param = VariantTypeParam;

std::vector<Param> ScanParams() {
  return VariantTypeParams(CScanTask().Variants());
}

class ScanVariant : public testing::TestWithParam<Param> {};

// What a bare --check runs for the variant (every operator and scan kind, every size where its
// plan changes shape and its neighbours, the device's local size and a small one), at this type.
TEST_P(ScanVariant, PassesTheCheckMatrix) {
  const Param& p = GetParam();
  CScanTask task;
  RSB_SKIP_IF(
      CannotRun(task, p.variant, Problem(p.type, Op::Sum, ScanKind::Inclusive, 1000, 64, 1)));
  ExpectCheckMatrixPasses("scan", p.variant, p.type);
}

INSTANTIATE_TEST_SUITE_P(Scan, ScanVariant, testing::ValuesIn(ScanParams()), VariantTypeName);

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
  CScanTask::SetKind(spec, ScanKind::Inclusive);
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
      const HostArray want =
          ExpectedValues(CScanTask::ReferenceScan(*input, Op::Sum, kind), *input);
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

TEST(Scan, CommandLineChecksEveryVariantAndKind) {
  const CommandResult r =
      RunBench("--task scan --scan-kind all --op all --size 1000,3 --local-size 8 --check");
  EXPECT_EQ(r.status, 0) << r.err;
  for (const auto& v : CScanTask().Variants())
    EXPECT_NE(r.out.find(v), std::string::npos) << r.out;
}

// The single-pass scan's GPU tile fits the device's local memory: auto keeps L = 256 and the
// elements per work-item (32, 16 for 64-bit types) and passes the tile through local memory in
// as few parts as fit (1, 2, 4; SinglePassTile.clh), then shrinks the elements per work-item in
// steps of 4, then halves L; with 48 KiB the defaults stay in one part (the H100's tile). Every
// type, on GPU devices with 64-bit atomics (nothing runs on them).
TEST(Scan, SinglePassTileFitsTheDevicesLocalMemory) {
  CScanTask task;
  struct Want {
    unsigned long long kib;
    size_t local32, items32, stages32, local64, items64, stages64;
  };
  // 16 KiB, 64-bit: 4 parts of 256 x 16 need 16908 bytes with the scratch (8 x 4L + 12), so
  // the elements shrink to 8 (12556 bytes).
  for (const Want& want : {Want{48, 256, 32, 1, 256, 16, 1}, Want{32, 256, 32, 2, 256, 16, 2},
                           Want{16, 256, 32, 4, 256, 8, 4}})
    for (ElementType type : AllElementTypes()) {
      const DeviceInfo device = FabricatedDevice(true, want.kib << 10, 1024);
      const bool wide = SizeOf(type) == 8;
      ProblemSpec spec = Problem(type, Op::Sum, ScanKind::Inclusive, 1 << 20, 0, 1);
      const std::string label = std::to_string(want.kib) + " KiB " + ToString(type);
      const size_t L = task.LocalSize("single-pass", spec, device);
      EXPECT_EQ(L, wide ? want.local64 : want.local32) << label;
      const Case r = ResolveCase(task, "single-pass", spec, device);
      EXPECT_EQ(r.tuning.at(wide ? "scan-gpu-items-64" : "scan-gpu-items"),
                wide ? want.items64 : want.items32)
          << label;
      const size_t stages = wide ? want.stages64 : want.stages32;
      EXPECT_EQ(r.tuning.at("scan-gpu-stages"), stages) << label;
      EXPECT_EQ(task.SinglePassTile(device, spec), L * (wide ? want.items64 : want.items32));
      spec.localSize = L;
      EXPECT_NO_THROW(task.Cost(device, "single-pass", spec)) << label;
      const std::string options = task.KernelOptions(device, "single-pass", spec);
      EXPECT_NE(options.find(fmt::format("-DITEMS={}", wide ? want.items64 : want.items32)),
                std::string::npos)
          << label;
      EXPECT_EQ(options.find(fmt::format("-DSP_STAGES={}", stages)) != std::string::npos,
                stages > 1)
          << label << ": " << options;
    }
}

// A number of parts that cannot split the tile is skipped, saying what is allowed.
TEST(Scan, SinglePassStagesThatCannotSplitTheTileAreSkipped) {
  CScanTask task;
  const DeviceInfo device = FabricatedDevice(true, 48 << 10, 1024);
  ProblemSpec spec = Problem(ElementType::Uint, Op::Sum, ScanKind::Inclusive, 1 << 20, 256, 1);
  spec.tuning["scan-gpu-items"] = 8;  // 8 per work-item: 2 parts of two 4-vectors, not 4
  spec.tuning["scan-gpu-stages"] = 2;
  EXPECT_NO_THROW(task.Cost(device, "single-pass", spec));
  for (size_t stages : {3, 4}) {
    spec.tuning["scan-gpu-stages"] = stages;
    try {
      task.Cost(device, "single-pass", spec);
      ADD_FAILURE() << "not skipped: " << stages;
    } catch (const VariantSkipped& e) {
      EXPECT_EQ(std::string(e.what()),
                fmt::format("single-pass at local size 256, scan-gpu-items=8: scan-gpu-stages={} "
                            "cannot split its tile; allowed: 1, 2 or 4 parts that divide the local "
                            "size and leave each work-item a multiple of 4 elements per part (0: "
                            "the fewest in which the tile fits)",
                            stages));
    }
  }
}

// Tiles in parts give the same results as tiles in one piece: both type widths, integer and
// floating point, two operators, both kinds, whole and partial tiles, one tile and many, on the
// GPU path of this device.
TEST(Scan, SinglePassTilesInPartsScanAsOnePiece) {
  RSB_SKIP_IF(Lacks(Need::Int64Atomics));  // the single-pass scan is skipped (Mesa rusticl)
  for (const char* stages : {"1", "2", "4"}) {
    const CommandResult r = RunBench(
        std::string("--task scan --variant single-pass --code-path gpu --type uint,long,double "
                    "--op sum,min --scan-kind all --size 1,255,4097,100003 --local-size 64 --tune "
                    "scan-gpu-items=16 --tune scan-gpu-items-64=16 --tune scan-gpu-stages=") +
        stages + " --check --format csv");
    ASSERT_EQ(r.status, 0) << stages << ": " << r.err;
    size_t passed = 0;
    for (size_t at = r.out.find(",passed,"); at != std::string::npos;
         at = r.out.find(",passed,", at + 1))
      ++passed;
    EXPECT_EQ(passed, 48u) << stages << ": " << r.out;  // 3 types x 2 ops x 2 kinds x 4 sizes
    EXPECT_EQ(r.out.find("failed"), std::string::npos) << r.out;
  }
}

// A tile given with --tune (or a local size given) that does not fit is skipped, saying what
// it needs and what the device has; without 64-bit atomics the skip says that first.
TEST(Scan, SinglePassGivenTileThatDoesNotFitIsSkipped) {
  CScanTask task;
  DeviceInfo device = FabricatedDevice(true, 16 << 10, 1024);
  ProblemSpec spec = Problem(ElementType::Uint, Op::Sum, ScanKind::Inclusive, 1 << 20, 256, 1);
  spec.tuning["scan-gpu-items"] = 32;
  spec.tuning["scan-gpu-stages"] = 1;  // in one piece (the fewest parts that fit would be 4)
  try {
    task.Cost(device, "single-pass", spec);
    ADD_FAILURE() << "not skipped";
  } catch (const VariantSkipped& e) {
    EXPECT_EQ(std::string(e.what()),
              "single-pass at local size 256, scan-gpu-items=32 needs 37896 bytes (37.0 KiB) of "
              "local memory; the device has 16384 bytes (16.0 KiB) (CL_DEVICE_LOCAL_MEM_SIZE): "
              "use a smaller --local-size or a smaller --tune scan-gpu-items");
  }
  device.int64BaseAtomics = false;
  try {
    task.Cost(device, "single-pass", spec);
    ADD_FAILURE() << "not skipped";
  } catch (const VariantSkipped& e) {
    EXPECT_EQ(std::string(e.what()),
              "single-pass needs 64-bit atomics (cl_khr_int64_base_atomics)");
  }
}

// Every variant's automatic local size and tile fit devices of 16 and 32 KiB (counted once or
// twice) with work-groups of at most 1024, 128 or 64, GPU and CPU, every type width.
TEST(Scan, AutoChoicesFitSmallDevices) {
  CScanTask task;
  for (bool gpu : {false, true})
    for (unsigned long long local : {16ull << 10, 32ull << 10})
      for (unsigned scale : {1u, 2u})
        for (size_t maxWg : {1024, 128, 64})
          for (ElementType type : {ElementType::Uint, ElementType::Double}) {
            const ProblemSpec spec = Problem(type, Op::Sum, ScanKind::Exclusive, 100000, 0, 1);
            EXPECT_EQ(AutoChoiceProblems(task, spec, FabricatedDevice(gpu, local, maxWg, scale)),
                      "")
                << "gpu " << gpu << ", " << (local >> 10) << " KiB x " << scale << ", max "
                << maxWg;
          }
  // Where the defaults fit: the table's local sizes and the knobs' defaults (the H100, pocl).
  const DeviceInfo h100 = FabricatedDevice(true, 48 << 10, 1024, 1, 16);
  const DeviceInfo pocl = FabricatedDevice(false, 512 << 10, 4096);
  for (const auto& v : task.Table())
    for (ElementType type : AllElementTypes()) {
      const ProblemSpec spec = Problem(type, Op::Sum, ScanKind::Exclusive, 100000, 0, 1);
      EXPECT_EQ(task.LocalSize(v.name, spec, h100), v.gpuLocal) << v.name;
      EXPECT_EQ(task.LocalSize(v.name, spec, pocl), v.cpuLocal) << v.name;
      EXPECT_EQ(ResolveCase(task, v.name, spec, h100).tuning,
                ResolveCase(task, v.name, spec, FabricatedDevice(true, 1 << 30, 1024)).tuning);
    }
}

// The local memory the plans count is what the driver reports for the built kernels (within
// the 64 bytes a driver may add; work-efficient is counted with conflict-free's padding).
TEST(Scan, TileBytesAreWhatTheDriverCounts) {
  CScanTask task;
  const DeviceInfo& device = Device().info;
  for (const auto& variant : task.Variants())
    for (ElementType type : {ElementType::Uint, ElementType::Long})
      for (size_t local : {16, 64})
        for (size_t stages : {1, 2}) {  // the single-pass tile in one piece or two parts
          ProblemSpec spec = Problem(type, Op::Sum, ScanKind::Inclusive, 100000, local, 1);
          spec.codePath = CodePath::Gpu;  // the single-pass tile
          spec.tuning["scan-gpu-items"] = spec.tuning["scan-gpu-items-64"] = 8;
          spec.tuning["scan-gpu-stages"] = stages;
          if (stages > 1 && variant != "single-pass")
            continue;
          const LocalTile tile = task.Tile(device, variant, spec);
          if (!tile.fits || (variant == "single-pass" && !device.int64BaseAtomics))
            continue;
          const unsigned long long reported = KernelLocalMemBytes(task, variant, spec);
          const unsigned long long modelled = LocalMemNeeded(device, tile.bytes);
          const std::string label = variant + " " + ToString(type) + " L=" + std::to_string(local) +
                                    " parts " + std::to_string(stages);
          EXPECT_LT(reported, modelled + 64) << label;
          if (variant != "work-efficient") {
            EXPECT_GE(reported, modelled) << label;
          }
        }
}

}  // namespace
}  // namespace rsb::test
