// The memory ceilings a timed run measures: the near-cache streams, both shapes, --no-ceilings,
// ceilings that cannot be measured, a timeout. Runs the real executable on the test device.
#include "TestSupport.h"
#include "platform/DeviceLock.h"
#include "platform/Errors.h"
#include "platform/Sizes.h"
#include "platform/Subprocess.h"
#include "report/Report.h"
#include "tasks/CReductionTask.h"
#include "tasks/Tasks.h"
#include "tools/ResultFile.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include <chrono>
#include <csignal>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rsb::test {
namespace {

// A timed run measures the streams a second time just past twice the last-level cache, and a
// case that reads less than the large streams records that it was held against them; in process
// and through an isolated worker alike (the worker passes every rate on).
TEST(Cli, TimedRunsMeasureTheNearCacheStreams) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  for (const char* mode : {"--no-isolate", "--isolate"}) {
    const CommandResult r = RunBenchWithFullCeilings(
        std::string("-q --task reduction --variant single-pass --size 2^16 --iterations 3 "
                    "--time-budget 0 --format json ") +
        mode);
    ASSERT_EQ(r.status, 0) << mode << "\n" << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto& c = j["device"]["ceilings"];
    const uint64_t cache = j["device"]["global_mem_cache_bytes"];
    const uint64_t near = (2 * cache + 4096 + 15) / 16 * 16;
    if (cache == 0 || near >= c["buffer_bytes"].get<uint64_t>())
      GTEST_SKIP() << "the device reports no cache, or one too large for a second size";
    EXPECT_EQ(c["near_cache_buffer_bytes"].get<uint64_t>(), near) << mode;
    for (const char* stream : {"read", "write", "copy"})
      EXPECT_GT(c[std::string("near_cache_") + stream + "_gbytes_s"].get<double>(), 0.0)
          << mode << " " << stream;
    ASSERT_EQ(j["results"].size(), 1u) << mode;
    EXPECT_EQ(j["results"][0]["ceiling_stream_bytes"].get<uint64_t>(), near) << mode;
  }
}

// The memory ceilings are measured before the first case of an isolated run, under a limit of
// their own: a --timeout shorter than the measurement (12 streams of 0.5 s and their set-up)
// charges no case, and the result has a utilisation.
TEST(Cli, TimeoutDoesNotChargeTheCeilingsToTheFirstCase) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));  // its subject: ceilings, measured with the timer
  const CommandResult r = RunBenchWithFullCeilings(  // longer than --timeout
      "-q --task reduction --variant interleaved --size 1000 --iterations 3 --timeout 2 "
      "--format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["device"]["ceilings"]["read_gbytes_s"].get<double>(), 0.0) << r.out;
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["status"], "passed") << j["results"][0]["message"];
  EXPECT_GT(j["results"][0]["utilisation"].get<double>(), 0.0);
}

// --no-ceilings: the cases are timed without the ceilings' streams first (the grader's timed
// rounds), so nothing has a utilisation; the timer is still checked, in process and in workers.
TEST(Cli, NoCeilingsTimesTheCasesWithoutMeasuringTheCeilings) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  for (const char* mode : {"--no-isolate", "--isolate"}) {
    const CommandResult r =
        RunBench(std::string("--task reduction --variant interleaved,sequential --size 1000 "
                             "--iterations 3 --no-ceilings --format json ") +
                 mode);
    ASSERT_EQ(r.status, 0) << mode << "\n" << r.err;
    EXPECT_EQ(r.err.find("measuring the memory ceilings"), std::string::npos) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["device"]["ceilings"]["read_gbytes_s"].get<double>(), 0.0) << mode;
    EXPECT_EQ(j["device"]["timer"]["usable"], true) << mode << " " << j["device"].dump();
    ASSERT_EQ(j["results"].size(), 2u) << mode;
    for (const auto& res : j["results"]) {
      EXPECT_EQ(res["status"], "passed") << mode << " " << res["message"];
      EXPECT_GT(res["gelem_s"].get<double>(), 0.0) << mode;
      EXPECT_EQ(res["utilisation"].get<double>(), 0.0) << mode;
    }
  }
}

// Ceilings that cannot be measured (here Bandwidth.cl does not build) are said once, and the
// cases run and pass without a utilisation, in process and in workers alike.
TEST(Cli, CeilingsThatCannotBeMeasuredAreSaidOnceAndTheCasesRunWithoutThem) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));  // its subject: ceilings, measured with the timer
  const std::string dir = CopyKernels("no-ceilings");
  Patch(dir + "/Bandwidth.cl", "__kernel", "this is not C; __kernel");
  for (const char* mode : {"--no-isolate", "--isolate"}) {
    const CommandResult r =
        RunBench(std::string("-q --task reduction --variant interleaved,sequential --size 1000 "
                             "--iterations 3 --format json --kernels ") +
                 dir + " " + mode);
    ASSERT_EQ(r.status, 0) << mode << "\n" << r.err;
    EXPECT_EQ(CountOf(r.err, "ceilings: not measured: "), 1u) << mode << "\n" << r.err;
    EXPECT_NE(r.err.find("Bandwidth.cl"), std::string::npos) << mode << "\n" << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["results"].size(), 2u) << mode;
    for (const auto& res : j["results"]) {
      EXPECT_EQ(res["status"], "passed") << mode << " " << res["message"];
      EXPECT_EQ(res["utilisation"].get<double>(), 0.0) << mode;
    }
  }
  std::filesystem::remove_all(dir);
}

// The memory-ceiling streams in both shapes (the GPU's unrolled grid-stride and the CPU's runs)
// build on the test device and move every element: Copy4 copies, Write4 writes its pattern.
// Every shape of the ceiling streams (kernels/Bandwidth.cl) on the test device, whatever the
// runner picks for it: GPU grid-stride, GPU tiled (a work-group per tile of 8 x 64 elements, the
// last one partial), CPU runs, CPU tiled (a work-group of one per tile of 1000 elements, the
// last one partial).
TEST(Cli, CeilingStreamsInBothShapesMoveEveryElement) {
  TaskContext& ctx = *Device().ctx;
  const cl_uint n4 = 100003;  // not a multiple of the grid, nor of the tile
  const size_t tiled = (n4 + 8 * 64 - 1) / (8 * 64) * 64;
  struct Shape {
    const char *options, *suffix;
    size_t global, local;
  };
  for (const Shape& shape :
       {Shape{"", "", 512, 64}, Shape{"-DTILE_ITEMS=8", "Tiled", tiled, 64},
        Shape{"-DCPU_SHAPE=1", "", 512, 64},
        Shape{"-DCPU_SHAPE=1 -DTILE_ITEMS=1000", "Tiled", (n4 + 999) / 1000, 1}}) {
    const std::string name = std::string(shape.options) + " " + shape.suffix;
    cl::Program& program = ctx.programs.Get("Bandwidth.cl", shape.options);
    std::vector<cl_uint> in(4 * size_t(n4)), out(in.size(), 0);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = cl_uint(i * 2654435761u);
    cl::Buffer a(ctx.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, in.size() * 4, in.data());
    cl::Buffer b(ctx.context, CL_MEM_READ_WRITE, in.size() * 4);
    cl::Kernel copy(program, ("Copy4" + std::string(shape.suffix)).c_str());
    copy.setArg(0, a), copy.setArg(1, b), copy.setArg(2, n4);
    ctx.queue.enqueueNDRangeKernel(copy, cl::NullRange, cl::NDRange(shape.global),
                                   cl::NDRange(shape.local));
    ctx.queue.enqueueReadBuffer(b, CL_TRUE, 0, out.size() * 4, out.data());
    EXPECT_EQ(in, out) << "Copy4 " << name;
    cl::Kernel write(program, ("Write4" + std::string(shape.suffix)).c_str());
    write.setArg(0, b), write.setArg(1, n4);
    ctx.queue.enqueueNDRangeKernel(write, cl::NullRange, cl::NDRange(shape.global),
                                   cl::NDRange(shape.local));
    ctx.queue.enqueueReadBuffer(b, CL_TRUE, 0, out.size() * 4, out.data());
    size_t wrong = 0;
    for (cl_uint j = 0; j < n4; ++j)
      wrong += out[4 * size_t(j)] != j || out[4 * size_t(j) + 3] != ~j;
    EXPECT_EQ(wrong, 0u) << "Write4 " << name;
    cl::Buffer sink(ctx.context, CL_MEM_READ_WRITE, shape.global * 4);
    cl::Kernel read(program, ("Read4" + std::string(shape.suffix)).c_str());
    read.setArg(0, a), read.setArg(1, sink), read.setArg(2, n4);
    ctx.queue.enqueueNDRangeKernel(read, cl::NullRange, cl::NDRange(shape.global),
                                   cl::NDRange(shape.local));
    ctx.queue.finish();
  }
}

}  // namespace
}  // namespace rsb::test
