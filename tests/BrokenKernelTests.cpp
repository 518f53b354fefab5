// A bare --check (the correctness matrix, src/run/CheckMatrix.h) catches kernels broken the ways a
// student or an optimisation breaks them: each test copies the kernels folder, patches one
// defect into one kernel, runs `--check -q --task T --variant V --kernels DIR` and expects exit
// status 1 with the variant named in a FAILED line. Several defects pass a check at one size
// (the default --size 2^24, uint sum inclusive) and are caught only by the matrix's boundary
// sizes, operators or scan kinds.
//
// Some defects cannot show on a CPU device: pocl runs a work-group's work-items as loops
// between barriers. Those tests are skipped on a CPU device (saying why) and must fail the run
// on a GPU (RSB_TEST_PLATFORM=NVIDIA ctest; they do on the H100).
#include "TestSupport.h"
#include "run/CheckMatrix.h"
#include "tasks/CReductionTask.h"
#include "tasks/CScanTask.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>

namespace rsb::test {
namespace {

namespace fs = std::filesystem;

struct Defect {
  std::string name;  // of the kernels copy
  std::string task, variant, file, from, to;
  std::string extra = "";  // more options of the check
};

// A race (a dropped barrier) shows only where a work-group's work-items do not run in lock-step:
// llvmpipe runs 4 or 16 of them as one vector, so the check also runs work-groups of 64 and 256.
const char* const kRaceLocalSizes = "--local-size auto,4,64,256";

// Patches the defect into a copy of the kernels and runs the bare check on the variant, up to
// its first failure (--fail-fast: what the test asks is whether the matrix catches it).
CommandResult CheckBroken(const Defect& d) {
  const std::string dir = CopyKernels(d.name);
  Patch(dir + "/" + d.file, d.from, d.to);
  CommandResult r;
  if (!testing::Test::HasFatalFailure())
    r = RunBench("--check -q --no-isolate --fail-fast --task " + d.task + " --variant " +
                 d.variant + " --kernels " + dir + " " + d.extra);  // no crash: no workers needed
  fs::remove_all(dir);
  return r;
}

void ExpectCaught(const Defect& d) {
  const CommandResult r = CheckBroken(d);
  if (testing::Test::HasFatalFailure())
    return;
  EXPECT_EQ(r.status, 1) << d.name << ": the bare --check did not fail\n" << r.err;
  EXPECT_NE(r.err.find("FAILED " + d.task + "/" + d.variant + " "), std::string::npos)
      << d.name << ": no FAILED line names " << d.task << "/" << d.variant << "\n"
      << r.err;
}

bool CpuDevice() {
  return !Device().info.isGpu;
}

bool Has(const std::vector<size_t>& sizes, size_t n) {
  return std::find(sizes.begin(), sizes.end(), n) != sizes.end();
}

// The matrix's sizes hold every boundary of a variant, with its neighbours: a work-group, a
// tile, each level of block sums (tile^2, tile^3), the single-pass tile.
TEST(CheckMatrix, SizesHoldEveryBoundaryAndItsNeighbours) {
  const DeviceInfo& device = Device().info;
  ProblemSpec spec = Problem(ElementType::Uint, Op::Min, ScanKind::Exclusive, 1, 4, 1);
  CScanTask scan;
  const auto tiles = CheckMatrixSizes(scan, "work-efficient", spec, device);
  for (size_t n : {1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 63, 64, 65, 511, 512, 513})
    EXPECT_TRUE(Has(tiles, n)) << n;
  EXPECT_TRUE(Has(tiles, kCheckMatrixLargeSize));
  EXPECT_EQ(kCheckMatrixLargeSize % 2, 1u);
  const size_t spTile = scan.SinglePassTile(device, spec);
  const auto singlePass = CheckMatrixSizes(scan, "single-pass", spec, device);
  for (size_t n : {spTile - 1, spTile, spTile + 1})
    EXPECT_TRUE(Has(singlePass, n)) << n;
  CReductionTask reduction;
  const auto levels = CheckMatrixSizes(reduction, "decomposition", spec, device);
  for (size_t n : {7, 8, 9, 63, 64, 65, 511, 512, 513})
    EXPECT_TRUE(Has(levels, n)) << n;
  EXPECT_TRUE(std::is_sorted(levels.begin(), levels.end()));
}

// The matrix is what a bare --check runs; --size keeps the one-size check of before.
TEST(CheckMatrix, BareCheckRunsTheMatrixAndSizeRunsOneSize) {
  CommandResult r = RunBench("--check -q --task reduction --variant atomic --format csv");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* n : {",1,", ",2,", ",3,", ",1000003,", ",uint,min,", ",double,max,"})
    EXPECT_NE(r.out.find(n), std::string::npos) << n << "\n" << r.out;
  r = RunBench("--check -q --task reduction --variant atomic --format csv --size 1000");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;
  // An explicit --local-size: the matrix at that local size only. (4: the matrix's small local
  // size, whose kernels the bare check above built.)
  r = RunBench("--check -q --task reduction --variant atomic --format csv --local-size 4");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(",8,4,passed"), std::string::npos) << r.out;  // the tile, 2L
  std::istringstream rows(r.out);
  std::string row;
  std::getline(rows, row);  // the header
  size_t cases = 0;
  // Every row at local size 4: passed, or skipped where the device lacks what a type needs.
  for (; std::getline(rows, row); ++cases)
    EXPECT_TRUE(row.find(",4,passed,") != std::string::npos ||
                row.find(",4,skipped,") != std::string::npos)
        << row;
  EXPECT_GT(cases, 10u) << r.out;
}

// A dropped barrier in the work-group reduction tree (WorkGroupReduceSequential): a step reads
// partner values the previous step has not written yet.
TEST(BrokenKernel, DroppedBarrierInReductionTree) {
  ExpectCaught({"no-barrier-tree", "reduction", "decomposition", "WorkGroup.clh",
                "    barrier(CLK_LOCAL_MEM_FENCE);  // RAW: the next step reads what this step "
                "wrote",
                "", kRaceLocalSizes});
}

// A dropped barrier in the Kogge-Stone steps of the local-memory scan.
TEST(BrokenKernel, DroppedBarrierInKoggeStoneScan) {
  ExpectCaught({"no-barrier-ks", "scan", "kogge-stone", "WorkGroup.clh",
                "    barrier(CLK_LOCAL_MEM_FENCE);\n    __local T* t = in;",
                "    __local T* t = in;", kRaceLocalSizes});
}

// A dropped barrier in Blelloch's up-sweep: a level reads children the load or the previous
// level has not written yet.
TEST(BrokenKernel, DroppedBarrierInBlellochUpSweep) {
  ExpectCaught({"no-barrier-up-sweep", "scan", "work-efficient", "Scan.cl",
                "    barrier(CLK_LOCAL_MEM_FENCE);  // RAW: the load or the previous level wrote "
                "the children\n",
                "", kRaceLocalSizes});
}

// A dropped barrier in Blelloch's down-sweep: a step reads a parent's prefix before it is
// written. pocl runs each work-item through the barrier-free down-sweep loop in turn, in an
// order in which every parent is written before its children read it (measured: the bare
// check passes on pocl 3.1); a GPU runs the work-items of a step together.
TEST(BrokenKernel, DroppedBarrierInBlellochDownSweep) {
  if (CpuDevice())
    GTEST_SKIP() << "pocl runs a work-group's work-items one after the other between barriers, "
                    "in an order that hides this race (the bare check passes); run on a GPU";
  ExpectCaught({"no-barrier-down-sweep", "scan", "work-efficient", "Scan.cl",
                "    barrier(CLK_LOCAL_MEM_FENCE);\n    if (lid < active) {",
                "    if (lid < active) {", kRaceLocalSizes});
}

// A wrong identity of min (0, right for sum only): the padding past n of a work-group's tile
// wins every min. Caught only with --op min (the matrix runs every operator).
TEST(BrokenKernel, WrongMinIdentity) {
  ExpectCaught({"min-identity", "reduction", "decomposition", "Common.clh",
                "#ifndef IDENTITY\n#error",
                "#if defined(OP_MIN)\n#undef IDENTITY\n#define IDENTITY ((T)0)\n#endif\n"
                "#ifndef IDENTITY\n#error"});
}

// A dropped tail: the single-pass reduction forgets the n % VEC elements after the last whole
// 16-byte vector. Passes at n = 2^24; caught at n = 1, 2, 3, VEC * L + 1, ...
TEST(BrokenKernel, DroppedTailOfSinglePassReduction) {
  ExpectCaught({"no-tail", "reduction", "single-pass", "SinglePassReduction.cl",
                "  for (IDX t = nv * VEC + get_global_id(0); t < n; t += get_global_size(0))",
                "  for (IDX t = nv * VEC + get_global_id(0); t < nv * VEC; t += "
                "get_global_size(0))"});
}

// Inclusive and exclusive swapped in the Kogge-Stone work-group scan.
TEST(BrokenKernel, InclusiveExclusiveSwapped) {
  ExpectCaught({"swapped-kind", "scan", "kogge-stone", "WorkGroup.clh",
                "  if (inclusive) {\n    x[0] = in[lid];",
                "  if (!inclusive) {\n    x[0] = in[lid];"});
}

// A wrong bound in AddBlockOffsets: the last element of the array does not get its tile's
// offset when it lies in the first half of a tile (n = k * 2L + 1 ... k * 2L + L). Passes at
// n = 2^24; caught at 2L + 1.
TEST(BrokenKernel, WrongBlockOffsetBound) {
  ExpectCaught({"offset-bound", "scan", "work-efficient", "Scan.cl",
                "  if (i < n)\n    data[i] = OP(offset, data[i]);",
                "  if (i + 1 < n)\n    data[i] = OP(offset, data[i]);"});
}

// A missing publish: a work-group's partial is never written, so the last work-group combines
// what the partials buffer held before the launch (poison, before a validated run).
//
// Not tested: a plain store in place of the atomic publish (of this partial or of a scan tile's
// prefix). No device here can show it: pocl's x86 orders the store before the atomic ticket, and
// on the H100 global stores write through to L2, where the atomics resolve (NVIDIA 580.159.04:
// the bare check passes with either defect).
TEST(BrokenKernel, MissingPublishInSinglePassReduction) {
  ExpectCaught({"no-publish-reduction", "reduction", "single-pass", "SinglePassReduction.cl",
                "    const ATOMIC_BITS old = ATOMIC_XCHG_BITS(&partials[get_group_id(0)], "
                "AS_BITS(mine));",
                "    const ATOMIC_BITS old = 0;"});
}

// A tiled convolution that loads only the left halo: the outputs at a tile's right edge read
// whatever the local memory held past the tile. Caught at every size with more than one tile.
TEST(BrokenKernel, TiledConvolutionWithoutRightHalo) {
  ExpectCaught({"conv-no-right-halo", "convolution", "tiled-1d", "Convolution.cl",
                "LoadTile1D(tile, in, start - R, TILE + 2 * R, n);",
                "LoadTile1D(tile, in, start - R, TILE + R, n);"});
}

// A cached convolution whose halo test is off by one at the right edge: the output next to the
// edge reads one element past the tile from local memory instead of global memory.
TEST(BrokenKernel, CachedConvolutionReadsPastItsTile) {
  ExpectCaught({"conv-cached-edge", "convolution", "cached-1d", "Convolution.cl",
                "(u < TILE ? tile[u]", "(u <= TILE ? tile[u]"});
}

// Tests that patch the solution's own lines (the reduction's and scan's, moved here from their
// suites): this file stays out of the hand-out (scripts/make-handout), which must quote no
// solution.
// The hand-out's stubbed plan: only the tree's first step, which writes a scratch buffer.
class FirstStepOnly : public CReductionTask {
 public:
  LaunchPlan Plan(const DeviceInfo& device, const std::string& variant,
                  const ProblemSpec& spec) const override {
    LaunchPlan plan = CReductionTask::Plan(device, variant, spec);
    plan.steps.resize(1);
    return plan;
  }
};

// A host plan that stops short leaves the output as poisoned, and no launch of the plan writes
// it: the failure says that the plan is at fault and where to see its launches (--explain). A
// kernel that writes nothing leaves the output poisoned too, but its plan writes the output:
// no such words.
TEST(Reduction, PlanThatNeverWritesTheOutputReadsAsAPlanFault) {
  FirstStepOnly stubbed;
  const ProblemSpec spec = Problem(ElementType::Uint, Op::Sum, std::nullopt, 1000, 64, 3);
  const auto plan = Validate(stubbed, spec, {"sequential"});
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].status, Status::Failed);
  EXPECT_NE(plan[0].message.find("never written"), std::string::npos) << plan[0].message;
  EXPECT_NE(plan[0].message.find("no launch of the plan writes the output"), std::string::npos)
      << plan[0].message;
  EXPECT_NE(plan[0].message.find("--explain --task reduction --variant sequential"),
            std::string::npos)
      << plan[0].message;
  const std::string dir = CopyKernels("writes-nothing");
  Patch(dir + "/Reduction.cl", "  const IDX i = get_global_id(0);\n  if (i >= h)",
        "  return;\n  const IDX i = get_global_id(0);\n  if (i >= h)");
  CReductionTask task;
  const auto kernel = ValidateWithKernels(task, spec, {"sequential"}, dir);
  ASSERT_EQ(kernel.size(), 1u);
  EXPECT_EQ(kernel[0].status, Status::Failed);
  EXPECT_NE(kernel[0].message.find("never written"), std::string::npos) << kernel[0].message;
  EXPECT_EQ(kernel[0].message.find("plan"), std::string::npos) << kernel[0].message;
  std::filesystem::remove_all(dir);
}

// Where the whole file does not build, a case builds only its plan's kernels (kernels/Common.clh's
// RSB_WANTS, ProgramCache): a kernel that does not compile is its own variant's error, and the
// variants beside it in the same file build and pass.
TEST(Reduction, OneVariantsBuildErrorLeavesTheOthersInItsFileAlone) {
  const std::string dir = CopyKernels("one-broken-kernel");
  Patch(dir + "/Reduction.cl", "  dst[i] = i + h < m ? OP(a, src[i + h]) : a;",
        "  dst[i] = i + h < m ? OP(a, src[i + h]) : a");
  CReductionTask task;
  const ProblemSpec spec = Problem(ElementType::Uint, Op::Sum, std::nullopt, 1000, 64, 5);
  const auto results = ValidateWithKernels(
      task, spec, {"interleaved", "sequential", "decomposition", "atomic"}, dir);
  ASSERT_EQ(results.size(), 4u);
  for (const auto& r : results) {
    if (r.variant == "sequential") {
      EXPECT_EQ(r.status, Status::Error);
      EXPECT_NE(r.message.find("kernel build failed: "), std::string::npos) << r.message;
      EXPECT_NE(r.buildLog.find("Reduction.cl:"), std::string::npos) << r.buildLog;
    } else {
      EXPECT_TRUE(Ok(r.status)) << r.variant << ": " << r.message;
    }
  }
  std::filesystem::remove_all(dir);
}

// A task that counts the plans it makes.
TEST(Scan, BrokenKernelFailsTheCheckAndNamesTheVariant) {
  const std::string dir = CopyKernels("scan-broken");
  Patch(dir + "/Scan.cl", "tile[b] = OP(tile[a], tile[b]);", "tile[b] = OP(tile[b], tile[b]);");
  const CommandResult r =
      RunBench("--task scan --variant work-efficient --size 1000 --check --kernels " + dir);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("work-efficient"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace rsb::test
