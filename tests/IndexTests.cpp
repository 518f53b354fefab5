// Sizes past 2^31 (issue 11): the kernels' index type IDX is 32-bit up to n = 2^31 and 64-bit
// (-DRSB_INDEX64=1) above; the plans choose it and pass every count in that width. The pocl CI
// device cannot hold such sizes (4 GiB per buffer), so the 64-bit path is forced at small n
// (--tune index-bits=64) and every variant validated there; the choice itself is checked on the
// plans of a device as large as needed; a size beyond the device is `skipped` with the bytes.
#include "TestSupport.h"
#include "platform/Errors.h"
#include "tasks/CConvolutionTask.h"
#include "tasks/CReductionTask.h"
#include "tasks/CScanTask.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <variant>

namespace rsb::test {
namespace {

constexpr size_t k2To31 = size_t(1) << 31;
constexpr size_t kPast2To32 = (size_t(1) << 32) + 7;

// The test device with memory for any size and the 64-bit atomics of the single-pass plans:
// plans are made and costed, nothing is allocated or run.
DeviceInfo LargeDevice() {
  DeviceInfo d = PlanningDevice();
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

// What the device cannot hold is skipped, never attempted: one buffer beyond
// CL_DEVICE_MAX_MEM_ALLOC_SIZE, or input, output and scratch beyond CL_DEVICE_GLOBAL_MEM_SIZE,
// with the bytes needed and available.
TEST(Index, SizeBeyondTheDeviceIsSkippedWithTheBytes) {
  DeviceInfo device = PlanningDevice();  // only costed: single-pass too, on any device
  device.maxAllocBytes = 4000;
  device.globalMemBytes = 10000;
  CScanTask scan;
  ProblemSpec spec = Problem(ElementType::Uint, Op::Sum, ScanKind::Inclusive, 1001, 64, 1);
  try {
    scan.Cost(device, "naive", spec);
    ADD_FAILURE() << "a 4004-byte input on a device of 4000-byte buffers was not skipped";
  } catch (const VariantSkipped& e) {
    EXPECT_NE(std::string(e.what()).find("4004 bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("4000 bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("CL_DEVICE_MAX_MEM_ALLOC_SIZE"), std::string::npos);
  }
  spec.n = 900;  // input, output and the ping-pong buffer: 3 x 3600 bytes
  try {
    scan.Cost(device, "naive", spec);
    ADD_FAILURE() << "10800 bytes on a device of 10000 were not skipped";
  } catch (const VariantSkipped& e) {
    EXPECT_NE(std::string(e.what()).find("10800 bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("10000 bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("CL_DEVICE_GLOBAL_MEM_SIZE"), std::string::npos);
  }
  EXPECT_NO_THROW(scan.Cost(device, "single-pass", spec));  // no buffer as large as the input

  // On the device itself, from the command line: just past its largest buffer of uint.
  const size_t n = Device().info.maxAllocBytes / 4 + 1;
  const CommandResult r = RunBench(
      "--check -q --task reduction --variant single-pass --format "
      "json --size " +
      std::to_string(n));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["status"], "skipped");
  const std::string message = j["results"][0]["message"];
  EXPECT_NE(message.find(std::to_string(4 * n) + " bytes"), std::string::npos) << message;
  EXPECT_NE(message.find(std::to_string(Device().info.maxAllocBytes) + " bytes"), std::string::npos)
      << message;
}

// The command line takes sizes up to 2^40 (beyond the device: skipped, as above) and the knob
// 32 or 64; results say which index width their kernels were built with, in JSON and CSV.
TEST(Index, CommandLineTakesLargeSizesAndResultsRecordTheIndexWidth) {
  const CommandResult big = RunBench("--check -q --variant sequential --size 2^40 --format json");
  ASSERT_EQ(big.status, 0) << big.err;
  EXPECT_EQ(nlohmann::json::parse(big.out)["results"][0]["status"], "skipped");
  for (const char* args : {"--size 2^40+1", "--size 2^21x2^20", "--tune index-bits=48"}) {
    const CommandResult r = RunBench(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("allowed"), std::string::npos) << args << "\n" << r.err;
  }
  EXPECT_NE(RunBench("--tune index-bits=48").err.find("index-bits=32 or 64"), std::string::npos);

  // Single-pass where the device runs it (its 64-bit build is the largest), else another.
  const std::string variant =
      CannotRun(CScanTask(), "single-pass",
                Problem(ElementType::Uint, Op::Sum, ScanKind::Inclusive, 1000, 0, 1))
              .empty()
          ? "single-pass"
          : "work-efficient";
  const std::string select = "--check -q --task scan --variant " + variant + " --size 1000 ";
  // One run writes both outputs (the CSV beside stdout's JSON).
  const std::string csvFile = fmt::format("/tmp/rsb-index-width-{}.csv", getpid());
  for (bool forced : {false, true}) {
    const std::string args = select + (forced ? "--tune index-bits=64 " : "");
    const CommandResult r = RunBench(args + "--format json --csv " + csvFile);
    ASSERT_EQ(r.status, 0) << r.err;
    const auto res = nlohmann::json::parse(r.out)["results"][0];
    EXPECT_EQ(res["tuning"]["index-bits"], forced ? 64 : 32);
    EXPECT_EQ(Has64(res["kernel_options"]), forced) << res["kernel_options"];
    EXPECT_NE(res["kernel_options"].get<std::string>().find("-DLOCAL_SIZE="), std::string::npos);
    const std::string csv = ReadFile(csvFile);
    std::remove(csvFile.c_str());
    const std::string header = csv.substr(0, csv.find('\n'));
    EXPECT_NE(header.find(",kernel_options,"), std::string::npos) << header;
    const std::string row = csv.substr(std::min(header.size() + 1, csv.size()));
    EXPECT_EQ(Has64(row), forced) << row;
  }
}

}  // namespace
}  // namespace rsb::test
