// The suite survives the kernels it judges: each case stands alone (error, timeout), what has
// finished is never lost (output after every case, Ctrl-C), and validation sees what a single
// checked run cannot (poisoned scratch, the last timed run).
#include "PlannedTask.h"
#include "Tasks.h"
#include "TestSupport.h"
#include "Worker.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>

namespace rsb::test {
namespace {

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

std::map<std::string, std::string> StatusByVariant(const nlohmann::json& j) {
  std::map<std::string, std::string> s;
  for (const auto& r : j["results"])
    s[r["task"].get<std::string>() + "/" + r["variant"].get<std::string>()] = r["status"];
  return s;
}

// Inserts `code` at the start of kernel `name`'s body in file.
void PrependToKernel(const std::string& file, const std::string& name, const std::string& code) {
  std::ifstream in(file);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = s.find("__kernel void " + name);
  ASSERT_NE(at, std::string::npos) << name;
  const size_t brace = s.find('{', at);
  s.insert(brace + 1, "\n" + code + "\n");
  std::ofstream(file) << s;
}

// A kernel that never ends and one that writes far out of bounds (pocl: SIGSEGV) are that
// case's timeout and error; every other case still runs and passes. The endless loop writes its
// output through a volatile pointer each turn, so that no compiler may remove it (one without
// side effects may be assumed to end; and the input buffer is read-only).
TEST(Robustness, IsolatedRunSurvivesAnEndlessLoopAndACrash) {
  RSB_SKIP_IF(Lacks(Need::EndlessLoops));
  const std::string dir = CopyKernels("hang-crash");
  PrependToKernel(dir + "/Reduction.cl", "ReduceSequential",
                  "if (get_global_id(0) == 0) for (;;) ((volatile __global T*)dst)[0] += (T)1;");
  PrependToKernel(dir + "/Reduction.cl", "ReduceDecomposition",
                  "((__global uint*)dst)[get_global_id(0) * 16777216u + 1073741824u] = 1;");
  const std::string out = dir + "/results.json";
  const auto begin = std::chrono::steady_clock::now();
  const auto r =
      RunBench("--check -q --task reduction --size 100000 --timeout 5 --format json -o " + out +
               " --kernels " + dir);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_LT(seconds, 5 + 20) << "the timeout did not stop the endless loop in time";
  const auto status = StatusByVariant(ReadJson(out));
  EXPECT_EQ(status.at("reduction/sequential"), "timeout");
  EXPECT_EQ(status.at("reduction/decomposition"), "error");
  for (const char* v : {"interleaved", "unrolled", "atomic", "single-pass"})
    EXPECT_TRUE(Ok(status.at(std::string("reduction/") + v))) << v;
  EXPECT_NE(r.err, "");
  EXPECT_NE(r.err.find("TIMEOUT reduction/sequential"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ERROR reduction/decomposition"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

// A kernel file that does not compile is an error of the cases that load it, with the compiler's
// log; the other cases run (in process, without isolation).
TEST(Robustness, BuildFailureIsThoseCasesErrorAndTheRunGoesOn) {
  const std::string dir = CopyKernels("no-build");
  PrependToKernel(dir + "/Scan.cl", "ScanNaiveStep", "this is not C;");
  const std::string out = dir + "/results.json";
  const auto r = RunBench("--check -q --size 1000 --format json -o " + out + " --kernels " + dir);
  EXPECT_EQ(r.status, 3) << r.err;
  const auto j = ReadJson(out);
  for (const auto& res : j["results"]) {
    const std::string name =
        res["task"].get<std::string>() + "/" + res["variant"].get<std::string>();
    const bool broken = res["task"] == "scan" && res["variant"] != "single-pass";
    // The others pass, or are skipped where the device cannot run them (64-bit atomics).
    const std::string skip = CannotRun(res["task"].get<std::string>(),
                                       res["variant"].get<std::string>(), ElementType::Uint, 1000);
    const std::string want = broken ? "error" : skip.empty() ? "passed" : "skipped";
    EXPECT_EQ(res["status"], want) << name << ": " << res["message"] << " " << skip;
    if (broken) {
      EXPECT_NE(res["message"].get<std::string>().find("Scan.cl:"), std::string::npos)
          << "the build log with file:line: " << res["message"];
    }
  }
  // 11 reduction and scan variants, and convolution's four 1-D variants (its 2-D variants take
  // images, --size WxH, not a plain 1000).
  EXPECT_EQ(j["results"].size(), 11u + 4u);
  std::filesystem::remove_all(dir);
}

// An OpenCL error at run time (here a kernel with an argument the host never sets:
// CL_INVALID_KERNEL_ARGS at enqueue) is that case's error with the error's name; the next cases
// run, in process in a new context, isolated in a fresh worker.
TEST(Robustness, OpenClErrorIsThatCaseErrorAndTheNextCasesRun) {
  const std::string dir = CopyKernels("enqueue-error");
  Patch(dir + "/Scan.cl", "IDX offset, uint shift) {",
        "IDX offset, uint shift, __global T* unset) {");
  for (const char* isolation : {"--no-isolate", "--isolate"}) {
    const std::string out = dir + "/results.json";
    const auto r = RunBench(fmt::format(
        "--check -q --task scan --variant naive,kogge-stone,work-efficient --size 1000,5000 "
        "--format json {} -o {} --kernels {}",
        isolation, out, dir));
    EXPECT_EQ(r.status, 3) << isolation << r.err;
    const auto j = ReadJson(out);
    ASSERT_EQ(j["results"].size(), 6u) << isolation;
    for (const auto& res : j["results"]) {
      const std::string message = res["message"];
      if (res["variant"] == "naive") {
        EXPECT_EQ(res["status"], "error") << isolation;
        EXPECT_NE(message.find("CL_INVALID_KERNEL_ARGS"), std::string::npos) << message;
      } else {
        EXPECT_TRUE(Ok(res["status"].get<std::string>()))
            << isolation << " " << res["variant"] << message;
      }
    }
  }
  std::filesystem::remove_all(dir);
}

// A kernel that is right once but corrupts its own input: the validated run passes, the last
// timed run's output does not.
TEST(Robustness, LastTimedRunIsValidated) {
  const std::string dir = CopyKernels("drift");
  const std::string step = "dst[idx] = idx + stride < n ? OP(a, src[idx + stride]) : a;";
  Patch(dir + "/Reduction.cl", step,
        step + " if (i == 0 && stride == 1) ((__global T*)src)[0] = a + (T)1;");
  EXPECT_EQ(
      RunBench("--check -q --task reduction --variant interleaved --size 1000 --kernels " + dir)
          .status,
      0)
      << "one validated run cannot see it";
  const auto r = RunBench(
      "-q --task reduction --variant interleaved --size 1000 --iterations 3 "
      "--kernels " +
      dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("wrong after"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

// A single-pass scan whose look-back ignores the generation of a status word reads a stale word
// where its predecessor has not published yet: the validated runs poison the status words with
// such words (holding poison), so the broken kernel returns poison. On pocl the look-back finds
// most predecessors published already, so it takes many small tiles and a few runs to show.
TEST(Robustness, PoisonedScratchCatchesABrokenGenerationCheck) {
  RSB_SKIP_IF(CannotRun("scan", "single-pass", ElementType::Uint, size_t(1) << 20));
  const std::string dir = CopyKernels("generation");
  Patch(dir + "/SinglePassLookBack.clh", "return (uint)(w >> 34) == gen && ((w >> 32) & 3ul);",
        "return ((w >> 32) & 3ul) != 0;");
  // The defect shows only when a tile looks back before its predecessor has published, which
  // on a CPU device needs the two on different threads at the right moment: likely in 40 runs
  // of 16384 tiles, not certain when other tests load the cores. Up to three tries of 40 runs.
  CommandResult r;
  for (int attempt = 0; attempt < 3 && r.status != 1; ++attempt)
    r = RunBench(
        "--check -q --task scan --variant single-pass --size 2^20 --tune scan-cpu-items=64 "
        "--validate-runs 40 --kernels " +
        dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("FAILED scan/single-pass"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

// Unwritable output: exit 3 with the reason, before any case runs (or, for a device that takes
// no bytes, when the report is written).
TEST(Robustness, WriteErrorsExit3WithTheReason) {
  auto r = RunBench("--check -q --size 100 --task reduction -o /nonexistent-dir/r.json");
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find("--output '/nonexistent-dir/r.json'"), std::string::npos) << r.err;
  r = RunBench("--check -q --size 100 --task reduction -o /dev/full");
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
}

// Runs the bench in the background, waits until `file` holds a result, sends SIGINT; returns
// the exit status and the seconds from the signal to the end.
std::pair<int, double> InterruptOnceWritten(const std::string& args, const std::string& file) {
  const std::string selectors =
      (std::getenv("RSB_TEST_PLATFORM")
           ? std::string(" --platform '") + std::getenv("RSB_TEST_PLATFORM") + "'"
           : std::string()) +
      (std::getenv("RSB_TEST_DEVICE")
           ? std::string(" --device '") + std::getenv("RSB_TEST_DEVICE") + "'"
           : std::string());
  const std::string script = fmt::format(
      "'{}' {}{} 2>/dev/null & pid=$!; i=0; "
      "while ! grep -q '\"status\"' '{}' 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); "
      "done; start=$EPOCHREALTIME; kill -INT $pid; wait $pid; rc=$?; "
      "echo \"$rc $start $EPOCHREALTIME\"",
      RSB_BINARY, args, selectors, file);
  RestoreStartupEnvironment();
  FILE* p = popen(("bash -c " + std::string("'") +
                   [&] {
                     std::string q;
                     for (char c : script)
                       q += c == '\'' ? std::string("'\\''") : std::string(1, c);
                     return q;
                   }() +
                   "'")
                      .c_str(),
                  "r");
  int rc = -1;
  double start = 0, end = -1;
  if (p) {
    if (fscanf(p, "%d %lf %lf", &rc, &start, &end) != 3)
      rc = -1;
    pclose(p);
  }
  return {rc, end - start};
}

// Ctrl-C: exit 130 soon after, and the output is a complete document with what had finished.
TEST(Robustness, InterruptWritesWhatIsDoneAndExits130) {
  for (const std::string mode : {"", " --isolate"}) {
    const std::string out = std::filesystem::temp_directory_path() /
                            fmt::format("rsb-interrupt-{}.json", static_cast<long>(::getpid()));
    std::filesystem::remove(out);
    const auto [rc, seconds] = InterruptOnceWritten(
        "--check -q --size 100000 --type all --op all --scan-kind all --format json -o " + out +
            mode,
        out);
    EXPECT_EQ(rc, 130) << mode;
    EXPECT_LT(seconds, 10) << mode;
    const auto j = ReadJson(out);
    EXPECT_GE(j["results"].size(), 1u) << mode;
    EXPECT_LT(j["results"].size(), 6u * 6 * 3 + 5u * 6 * 3 * 2) << mode;
    std::filesystem::remove(out);
  }
}

// Every kernel of every variant declares the work-group size it is built for (RSB_WG_ATTR,
// kernels/Common.clh), so that a compiler can budget its registers for 512 or 1024 work-items
// (the NVIDIA driver otherwise allowed 256): the device reports it back as the kernel's
// CL_KERNEL_COMPILE_WORK_GROUP_SIZE, which is (0, 0, 0) without the attribute.
TEST(Kernels, DeclareTheWorkGroupSizeTheyAreBuiltFor) {
  TaskContext& ctx = *Device().ctx;
  for (const auto& t : MakeTasks()) {
    const auto* task = dynamic_cast<const PlannedTask*>(t.get());
    ASSERT_NE(task, nullptr) << t->Name();
    for (const std::string& variant : task->Variants()) {
      ProblemSpec spec = Problem(ElementType::Float, Op::Sum, std::nullopt, 4099, 64, 1);
      if (!task->ScanKinds().empty())
        spec.scanKind = task->ScanKinds().front();
      const LaunchPlan plan = task->PlanFor(Device().info, variant, spec);
      cl::Program& program = ctx.programs.Get(plan.file, plan.BuildOptions());
      for (const LaunchStep& step : plan.steps) {
        if (step.kernel.empty())
          continue;
        const cl::Kernel kernel(program, step.kernel.c_str());
        const auto declared =
            kernel.getWorkGroupInfo<CL_KERNEL_COMPILE_WORK_GROUP_SIZE>(ctx.device);
        EXPECT_EQ(declared[0], step.localSize) << variant << " " << step.kernel;
        EXPECT_EQ(declared[1] * declared[2], 1u) << variant << " " << step.kernel;
      }
    }
  }
}

// Fills past 2^31 patterns go as host writes (NVIDIA's fills fault there): with the limit
// lowered, one buffer takes both paths and every byte holds the pattern.
TEST(Poison, FillsAndWritesThePatternEverywhere) {
  TaskContext& ctx = *Device().ctx;
  const std::vector<unsigned char> pattern = {0x11, 0x22, 0x33, 0x44};
  for (size_t maxPatterns : {kMaxFillPatterns, size_t(0), size_t(5)}) {
    const size_t bytes = 4000;
    cl::Buffer buffer(ctx.context, CL_MEM_READ_WRITE, bytes + 8);
    const std::vector<unsigned char> zero(bytes + 8, 0);
    ctx.queue.enqueueWriteBuffer(buffer, CL_TRUE, 0, zero.size(), zero.data());
    int commands = 0;
    FillPattern(
        ctx.queue, buffer, pattern, bytes,
        [&] {
          ++commands;
          return nullptr;
        },
        maxPatterns);
    std::vector<unsigned char> back(bytes + 8);
    ctx.queue.enqueueReadBuffer(buffer, CL_TRUE, 0, back.size(), back.data());
    for (size_t i = 0; i < bytes; ++i)
      ASSERT_EQ(back[i], pattern[i % 4]) << "byte " << i << ", limit " << maxPatterns;
    for (size_t i = bytes; i < back.size(); ++i)
      ASSERT_EQ(back[i], 0) << "byte " << i << " past the range, limit " << maxPatterns;
    EXPECT_EQ(commands, 1);
  }
}

// The driver's CL_KERNEL_WORK_GROUP_SIZE, raised to the size the kernel declares (NVIDIA reports
// 256 for every kernel), but never past the device's maximum, and never lowered.
TEST(Kernels, AllowTheWorkGroupSizeTheyDeclare) {
  EXPECT_EQ(AllowedLocalSize(256, {1024, 1, 1}, 1024), 1024u);  // NVIDIA: declared 1024 runs
  EXPECT_EQ(AllowedLocalSize(256, {512, 1, 1}, 1024), 512u);
  EXPECT_EQ(AllowedLocalSize(256, {16, 16, 1}, 1024), 256u);  // 2-D: the product
  EXPECT_EQ(AllowedLocalSize(256, {32, 32, 1}, 1024), 1024u);
  EXPECT_EQ(AllowedLocalSize(256, {0, 0, 0}, 1024), 256u);     // nothing declared
  EXPECT_EQ(AllowedLocalSize(256, {2048, 1, 1}, 1024), 256u);  // past the device: not believed
  EXPECT_EQ(AllowedLocalSize(4096, {64, 1, 1}, 4096), 4096u);  // pocl: larger already
}

}  // namespace
}  // namespace rsb::test
