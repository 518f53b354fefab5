// Sizes past 2^31 (issue 11): the kernels' index type IDX is 32-bit up to n = 2^31 and 64-bit
// (-DRSB_INDEX64=1) above; the plans choose it and pass every count in that width. The pocl CI
// device cannot hold such sizes (4 GiB per buffer), so the 64-bit path is forced at small n
// (--tune index-bits=64) and every variant validated there; the choice itself is checked on the
// plans of a device as large as needed.
#include "CConvolutionTask.h"
#include "CReductionTask.h"
#include "CScanTask.h"
#include "Errors.h"
#include "TestSupport.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <limits>
#include <variant>

namespace rsb::test {
namespace {

constexpr size_t k2To31 = size_t(1) << 31;
constexpr size_t kPast2To32 = (size_t(1) << 32) + 7;

// The test device with memory for any size: plans are made and costed, nothing is allocated.
DeviceInfo LargeDevice() {
  DeviceInfo d = Device().info;
  d.globalMemBytes = d.maxAllocBytes = 1ull << 50;
  return d;
}

ProblemSpec Forced64(ProblemSpec spec) {
  spec.tuning["index-bits"] = 64;
  return spec;
}

// Every IndexArg of the plan, and whether each fits in 32 bits.
bool IndexArgsFit32(const LaunchPlan& plan) {
  for (const auto& s : plan.steps)
    for (const auto& a : s.args)
      if (const auto* i = std::get_if<IndexArg>(&a))
        if (i->value > std::numeric_limits<cl_uint>::max())
          return false;
  return true;
}

bool Has64(const std::string& options) {
  return options.find("-DRSB_INDEX64=1") != std::string::npos;
}

// A plan at n = 2^31 keeps 32-bit indices (today's build) and all its arguments fit; one above
// 2^32 builds with 64-bit indices; the knob forces them at any n. Every variant of every task.
TEST(Index, PlansTake64BitIndicesOnlyAbove2To31OrWhenAsked) {
  const DeviceInfo device = LargeDevice();
  CReductionTask reduction;
  CScanTask scan;
  CConvolutionTask convolution;
  for (PlannedTask* task : std::initializer_list<PlannedTask*>{&reduction, &scan, &convolution})
    for (const auto& v : task->Variants()) {
      SCOPED_TRACE(task->Name() + "/" + v);
      const bool twoD = task->TakesShape(v);
      ProblemSpec spec =
          Problem(task == &convolution ? ElementType::Float : ElementType::Uint, Op::Sum,
                  task == &scan ? std::optional(ScanKind::Inclusive) : std::nullopt, k2To31, 0, 1);
      spec.localSize = task->LocalSize(v, spec, device);
      if (twoD)
        spec.height = 32768;  // 65536 x 32768
      LaunchPlan plan = task->PlanFor(device, v, spec);
      EXPECT_FALSE(plan.index64);
      EXPECT_FALSE(Has64(plan.BuildOptions()));
      EXPECT_TRUE(IndexArgsFit32(plan));

      spec.n = kPast2To32;
      if (twoD)
        spec.n = size_t(65537) * 65537, spec.height = 65537;
      plan = task->PlanFor(device, v, spec);
      EXPECT_TRUE(plan.index64);
      EXPECT_TRUE(Has64(plan.BuildOptions()));
      EXPECT_EQ(task->KernelOptions(device, v, spec), plan.BuildOptions());

      spec.n = 1000, spec.height = twoD ? 10 : 0;
      EXPECT_FALSE(task->PlanFor(device, v, spec).index64);
      EXPECT_TRUE(task->PlanFor(device, v, Forced64(spec)).index64);
    }
}

// The 64-bit path, forced at odd sizes, on the test device: every variant, the GPU and the CPU
// shape of the single-pass kernels, the look-back's recompute from the input. The results
// record the build options that say so.
void ExpectRightWith64BitIndices(PlannedTask& task, const std::vector<ElementType>& types,
                                 const std::vector<std::optional<ScanKind>>& kinds,
                                 const std::vector<Extent>& extents) {
  size_t cases = 0;
  for (const auto& v : task.Variants())
    for (ElementType type : types)
      for (const auto& kind : kinds)
        for (const Extent& e : extents) {
          if (type == ElementType::Double && !Device().info.fp64)
            continue;
          if (task.TakesShape(v) != (e.height > 0))
            continue;
          for (CodePath path : {CodePath::Cpu, CodePath::Gpu}) {
            ProblemSpec spec = Forced64(Problem(type, Op::Sum, kind, e.n, 0, e.n + 1));
            spec.height = e.height;
            spec.codePath = path;
            spec.lookbackFallback = path == CodePath::Gpu && e.n > 4096;
            const auto results = Validate(task, spec, {v});
            ASSERT_EQ(results.size(), 1u);
            if (results[0].status == Status::Skipped)  // 64-bit types in the single-pass scan
              continue;
            EXPECT_EQ(Failures(results), "") << ToString(path);
            EXPECT_TRUE(Has64(results[0].kernelOptions)) << results[0].kernelOptions;
            ++cases;
            if (v != "single-pass")
              break;  // the code path changes only the single-pass kernels
          }
        }
  EXPECT_GT(cases, 10u);
}

TEST(Index, ReductionIsRightWith64BitIndices) {
  CReductionTask task;
  ExpectRightWith64BitIndices(task, {ElementType::Uint, ElementType::Double}, {std::nullopt},
                              {{1, 0}, {3, 0}, {4099, 0}, {300007, 0}});
}

TEST(Index, ScanIsRightWith64BitIndices) {
  CScanTask task;
  ExpectRightWith64BitIndices(task, {ElementType::Uint, ElementType::Float},
                              {ScanKind::Inclusive, ScanKind::Exclusive},
                              {{1, 0}, {3, 0}, {4099, 0}, {300007, 0}});
}

TEST(Index, ConvolutionIsRightWith64BitIndices) {
  CConvolutionTask task;
  ExpectRightWith64BitIndices(task, {ElementType::Float, ElementType::Double}, {std::nullopt},
                              {{5, 0}, {4099, 0}, {300007, 0}, {25, 5}, {101 * 37, 37}});
}

// The knob takes 32 or 64; results say which index width their kernels were built with, in
// JSON and CSV.
TEST(Index, ResultsRecordTheIndexWidth) {
  const CommandResult bad = RunBench("--tune index-bits=48");
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_NE(bad.err.find("index-bits=32 or 64"), std::string::npos) << bad.err;

  const std::string select = "--check -q --task scan --variant single-pass --size 1000 ";
  for (bool forced : {false, true}) {
    const std::string args = select + (forced ? "--tune index-bits=64 " : "");
    const CommandResult r = RunBench(args + "--format json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto res = nlohmann::json::parse(r.out)["results"][0];
    EXPECT_EQ(res["tuning"]["index-bits"], forced ? 64 : 32);
    EXPECT_EQ(Has64(res["kernel_options"]), forced) << res["kernel_options"];
    EXPECT_NE(res["kernel_options"].get<std::string>().find("-DLOCAL_SIZE="), std::string::npos);
    const CommandResult csv = RunBench(args + "--format csv");
    ASSERT_EQ(csv.status, 0) << csv.err;
    const std::string header = csv.out.substr(0, csv.out.find('\n'));
    EXPECT_EQ(header.substr(header.rfind(',') + 1), "kernel_options");
    const std::string row = csv.out.substr(header.size() + 1);
    EXPECT_EQ(Has64(row), forced) << row;
  }
}

}  // namespace
}  // namespace rsb::test
