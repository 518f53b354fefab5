// The suite survives the kernels it judges: each case stands alone (error, timeout), what has
// finished is never lost (output after every case, Ctrl-C), and validation sees what a single
// checked run cannot (poisoned scratch, the last timed run).
#include "TestSupport.h"
#include "engine/HostData.h"
#include "engine/PlannedTask.h"
#include "engine/Worker.h"
#include "platform/Pattern.h"
#include "platform/ProfilingTimer.h"
#include "platform/Subprocess.h"
#include "tasks/CScanTask.h"
#include "tasks/Tasks.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

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
  // (15 s: a case's time includes building its kernels, which pocl may take seconds for on a
  // busy machine. An endless loop the timeout did not stop never ends: ctest's timeout.)
  const auto r =
      RunBench("--check -q --task reduction --size 100000 --timeout 15 --format json -o " + out +
               " --kernels " + dir);
  EXPECT_EQ(r.status, 3) << r.err;
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

// A kernel that does not compile is an error of the cases whose plans launch it, with the
// compiler's log; the other cases run, those of the same file too (each case builds only the
// kernels its plan launches: ScanNaiveStep is the naive scan's alone).
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
    const bool broken = res["task"] == "scan" && res["variant"] == "naive";
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

// A program that does not build is built once per (file, options) and its error thrown again
// for every case that needs it; where the whole file failed at a line of its source, other
// options build only the named kernels (no whole file again). A runner told that a program does
// not build (an earlier worker's failure) reports its cases `error` without building.
TEST(Robustness, AProgramThatDoesNotBuildIsBuiltOncePerOptions) {
  const std::string dir = CopyKernels("build-once");
  PrependToKernel(dir + "/Scan.cl", "ScanNaiveStep", "this is not C;");
  CScanTask task;
  TaskContext ctx(Device().ctx->device, dir);
  const auto options = [&](size_t localSize) {
    const ProblemSpec spec =
        Problem(ElementType::Uint, Op::Sum, ScanKind::Inclusive, 1000, localSize, 1);
    return task.KernelOptions(ctx.info, "naive", spec);
  };
  std::string first;
  for (int round = 0; round < 2; ++round)
    try {
      ctx.programs.Get("Scan.cl", options(64));
      ADD_FAILURE() << "built";
    } catch (const KernelBuildError& e) {
      EXPECT_TRUE(first.empty() || first == e.what()) << e.what();
      first = e.what();
    }
  EXPECT_EQ(ctx.programs.Builds(), 2u) << "the whole file and its naive kernel, each once";
  EXPECT_THROW(ctx.programs.Get("Scan.cl", options(32)), KernelBuildError);
  EXPECT_EQ(ctx.programs.Builds(), 3u) << "the naive kernel alone at the other options";
  ctx.programs.Get("Scan.cl", options(32).substr(0, options(32).find(kKernelSelection)) +
                                  kKernelSelection + " -DRSB_KERNEL_ScanTileKoggeStone=1");
  EXPECT_EQ(ctx.programs.Builds(), 4u);

  TaskContext fresh(Device().ctx->device, dir);
  RunSettings check;
  check.timed = false;
  Runner runner(fresh, check);
  Result known;
  known.task = task.Name();
  known.kernelOptions = options(64);
  runner.SetKnownBuildFailures({BuildKey(known)});
  const Job job{
      &task, Problem(ElementType::Uint, Op::Sum, ScanKind::Inclusive, 1000, 64, 1), {"naive"}};
  const std::vector<Result> results = runner.Run({job});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, Status::Error);
  EXPECT_EQ(results[0].message, kKnownBuildFailure);
  EXPECT_EQ(fresh.programs.Builds(), 0u);
  std::filesystem::remove_all(dir);
}

// In an isolated run, a worker per problem or one for all: every case of the program that does
// not build is `error` with the first failure's message and log (the parent reports the cases it
// knows fail without starting a worker; a worker told of them builds nothing for them), and the
// variant beside it passes.
TEST(Robustness, EveryCaseOfAProgramThatDoesNotBuildCarriesTheFirstFailure) {
  const std::string dir = CopyKernels("build-once-isolated");
  PrependToKernel(dir + "/Scan.cl", "ScanNaiveStep", "this is not C;");
  for (const std::string isolation : {"--isolate", ""}) {
    const std::string out = dir + "/results.json";
    const auto r = RunBench("--check -q " + isolation +
                            " --task scan --variant kogge-stone,naive --size 1,2,3 --type int,uint "
                            "--format json -o " +
                            out + " --kernels " + dir);
    EXPECT_EQ(r.status, 3) << r.err;
    const auto j = ReadJson(out);
    ASSERT_EQ(j["results"].size(), 12u) << r.err;
    std::set<std::string> logs;
    for (const auto& res : j["results"]) {
      if (res["variant"] == "kogge-stone") {
        EXPECT_EQ(res["status"], "passed") << res.dump();
        continue;
      }
      EXPECT_EQ(res["status"], "error") << res.dump();
      EXPECT_NE(res["message"].get<std::string>().find("Scan.cl:"), std::string::npos)
          << res["message"];
      EXPECT_NE(res.value("build_log", std::string()).find("Scan.cl:"), std::string::npos)
          << res.dump();
      logs.insert(res.value("build_log", std::string()));
    }
    EXPECT_EQ(logs.size(), 1u);
    EXPECT_EQ(r.err.find(kKnownBuildFailure), std::string::npos) << r.err;
  }
  std::filesystem::remove_all(dir);
}

// An OpenCL error at run time (here a kernel with an argument the host never sets:
// CL_INVALID_KERNEL_ARGS at enqueue) is that case's error with the error's name; the next cases
// run, in process in a new context, in workers (one for all, or one per problem) in a fresh one.
TEST(Robustness, OpenClErrorIsThatCaseErrorAndTheNextCasesRun) {
  const std::string dir = CopyKernels("enqueue-error");
  Patch(dir + "/Scan.cl", "IDX offset, uint shift) {",
        "IDX offset, uint shift, __global T* unset) {");
  for (const char* isolation : {"--no-isolate", "", "--isolate"}) {
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
  RSB_SKIP_IF(Lacks(Need::UsableTimer));  // untimed: no timed run to validate
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

// A place whose access() says yes but that takes no file (as root, /proc/version: the temporary
// file beside it cannot be made) is found by the up-front probe, before any case runs: it was
// found after the first case, with the results lost.
TEST(Robustness, OutputThatTakesNoTemporaryFileIsRefusedBeforeAnyCase) {
  const auto r = RunBench("--check --size 100 --task reduction -o /proc/version");
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("--output '/proc/version': cannot write there"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("passed"), std::string::npos) << "a case ran first:\n" << r.err;
}

// Runs the bench in the background, waits until `file` holds a result, sends SIGINT; returns
// the exit status.
int InterruptOnceWritten(const std::string& args, const std::string& file) {
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
      "done; kill -INT $pid; wait $pid; echo $?",
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
  if (p) {
    if (fscanf(p, "%d", &rc) != 1)
      rc = -1;
    pclose(p);
  }
  return rc;
}

// Ctrl-C: exit 130 soon after, and the output is a complete document with what had finished.
TEST(Robustness, InterruptWritesWhatIsDoneAndExits130) {
  for (const std::string mode : {"", " --isolate"}) {
    const std::string out = std::filesystem::temp_directory_path() /
                            fmt::format("rsb-interrupt-{}.json", static_cast<long>(::getpid()));
    std::filesystem::remove(out);
    const int rc = InterruptOnceWritten(
        "--check -q --size 100000 --type all --op all --scan-kind all --format json -o " + out +
            mode,
        out);
    EXPECT_EQ(rc, 130) << mode;  // (stopped early: fewer results than cases, below)
    const auto j = ReadJson(out);
    EXPECT_GE(j["results"].size(), 1u) << mode;
    EXPECT_LT(j["results"].size(), 6u * 6 * 3 + 5u * 6 * 3 * 2) << mode;
    std::filesystem::remove(out);
  }
}

// What SignalOnceSaid saw: the exit status, the seconds from the signal to the end (the run is
// killed 60 s after it), the worker processes the run had when signalled, and how many of them
// (or of their process groups) were still alive after it ended.
struct SignalledRun {
  int status = -1;
  int workers = 0, workersLeft = 0;
  bool signalled = false;  // it still ran when the signal was sent
};

// Runs the bench in the background, waits until its stderr holds `said` and `delay` seconds
// more, sends it `signal` (INT, TERM) and waits for it to end.
SignalledRun SignalOnceSaid(const std::string& args, const std::string& said, double delay,
                            const std::string& signal, const std::string& env = "") {
  const std::string err = std::filesystem::temp_directory_path() /
                          fmt::format("rsb-signal-{}.err", static_cast<long>(::getpid()));
  const std::string script = fmt::format(
      "{}'{}' {}{} >/dev/null 2>'{}' & pid=$!; i=0; "
      "while ! grep -qF -- '{}' '{}' && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; "
      "sleep {}; workers=$(pgrep -P $pid | tr '\\n' ' '); "
      "kill -{} $pid 2>/dev/null && sent=1 || sent=0; i=0; "
      "while kill -0 $pid 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; "
      "kill -9 $pid 2>/dev/null; wait $pid; rc=$?; sleep 0.5; left=0; "
      "for w in $workers; do "
      "  if ps -e -o pid=,pgid=,stat= | awk -v w=$w '($1 == w || $2 == w) && $3 !~ /Z/' | "
      "     grep -q .; then left=$((left+1)); kill -9 $w; kill -9 -- -$w; fi 2>/dev/null; done; "
      "echo \"$rc $(echo $workers | wc -w) $left $sent\"",
      env, RSB_BINARY, args, DeviceSelectors(), err, said, err, delay, signal);
  RestoreStartupEnvironment();
  std::string quoted;
  for (char c : script)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  SignalledRun run;
  int sent = 0;
  if (FILE* p = popen(("bash -c '" + quoted + "'").c_str(), "r")) {
    if (fscanf(p, "%d %d %d %d", &run.status, &run.workers, &run.workersLeft, &sent) != 4)
      run.status = -1;
    pclose(p);
  }
  run.signalled = sent == 1;
  std::filesystem::remove(err);
  return run;
}

// Ctrl-C while the memory ceilings are measured (here with a long --time-budget, which the
// ceilings' streams do not take: each has its own 0.5 s, and no --ci-target or --iterations
// ends a stream sooner, on a fast device too) ends the run at once, in process and
// isolated: exit 130; no case finished, so the file -o names is left as it was (it was replaced
// by an empty report).
// The same for a run in this process (--no-isolate), which builds its kernels itself: Ctrl-C
// while pocl links one (its linker in the run's process group) ends it with 130, not pocl's
// abort (134).
TEST(Robustness, InterruptDuringAKernelsLinkExits130) {
  if (Device().info.platform.find("Portable Computing Language") == std::string::npos)
    GTEST_SKIP() << "pocl's linker (ld on PATH) only";
  const std::string dir = std::filesystem::temp_directory_path() /
                          fmt::format("rsb-link-{}", static_cast<long>(::getpid()));
  const std::string status = InterruptDuringLink(
      dir, fmt::format("POCL_CACHE_DIR='{}/pocl' '{}' --check --no-isolate --task reduction "
                       "--size 1000 2>'{}/err'",
                       dir, RSB_BINARY, dir));
  const std::string err = ReadFile(dir + "/err");
  std::filesystem::remove_all(dir);
  if (status == "no-link" || status == "no-ld")
    GTEST_SKIP() << status << ": this pocl starts no ld, or there is none";
  EXPECT_EQ(status, "130") << err;
}

TEST(Robustness, InterruptDuringTheCeilingsExits130AtOnce) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));  // no ceilings are measured there
  for (const std::string mode : {" --no-isolate", " --isolate"}) {
    const std::string out = std::filesystem::temp_directory_path() /
                            fmt::format("rsb-ceilings-{}.json", static_cast<long>(::getpid()));
    const std::string earlier = "{\"earlier\": \"results\"}\n";
    std::ofstream(out) << earlier;
    const SignalledRun run = SignalOnceSaid(
        "--task reduction --variant interleaved --size 1000 --time-budget 600 --ci-target 0 "
        "--iterations 1000000 --format json -o " +
            out + mode,
        "ceilings: measuring", 2, "INT", kFullCeilings);  // still streaming when INT comes
    EXPECT_EQ(run.status, 130) << mode;  // (a run still going 60 s on is killed: 137)
    std::ifstream in(out);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), earlier) << mode;
    std::filesystem::remove(out);
  }
}

// SIGTERM is Ctrl-C's equal: an isolated run whose kernel never ends stops at once, its worker
// (and the worker's process group) killed, the report written, exit 130 (interrupted).
TEST(Robustness, SigtermStopsAnIsolatedRunAndLeavesNoWorker) {
  const std::string dir = CopyKernels("sigterm");
  PrependToKernel(dir + "/Reduction.cl", "ReduceSequential",
                  "if (get_global_id(0) == 0) for (;;) ((__global volatile uint*)src)[0] += 1;");
  const std::string out = dir + "/results.json";
  const SignalledRun run = SignalOnceSaid(
      "--check --isolate --task reduction --variant interleaved,sequential --size 100000 "
      "--format json -o " +
          out + " --kernels " + dir,
      "reduction/sequential", 1, "TERM");
  if (!run.signalled && run.status != -1)
    GTEST_SKIP() << "the run ended before the signal: the device's compiler dropped the endless "
                    "loop (exit status "
                 << run.status << ")";
  EXPECT_EQ(run.status, 130);  // (a run still going 60 s on is killed: 137)
  EXPECT_GE(run.workers, 1) << "no worker process seen";
  EXPECT_EQ(run.workersLeft, 0) << "a worker outlived its run";
  const auto status = StatusByVariant(ReadJson(out));
  EXPECT_EQ(status.size(), 1u);
  EXPECT_EQ(status.at("reduction/interleaved"), "passed");
  std::filesystem::remove_all(dir);
}

// The host memory a case needs against what is free: the seam, and the limits read.
TEST(HostMemory, ShortfallSaysNeededAndAvailable) {
  const uint64_t gib = uint64_t(1) << 30;
  EXPECT_EQ(HostMemoryShortfall(gib, {2 * gib, "MemAvailable"}), std::nullopt);
  EXPECT_EQ(HostMemoryShortfall(2 * gib, {2 * gib, "MemAvailable"}), std::nullopt);
  EXPECT_EQ(HostMemoryShortfall(12 * gib, {gib * 31 / 10, "MemAvailable"}),
            "needs 12.0 GiB of host memory, 3.1 GiB available (MemAvailable)");
  const HostMemory free = AvailableHostMemory();
  EXPECT_GT(free.bytes, 0u);
  EXPECT_LT(free.bytes, std::numeric_limits<uint64_t>::max()) << "no MemAvailable read";
  // RLIMIT_DATA a quarter GiB above what the process uses: that is what is left.
  uint64_t dataKiB = 0;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmData:", 0) == 0)
      dataKiB = std::stoull(line.substr(7));
  ASSERT_GT(dataKiB, 0u);
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_DATA, &saved), 0);
  rlimit lower = saved;
  lower.rlim_cur = dataKiB * 1024 + gib / 4;
  if (saved.rlim_cur != RLIM_INFINITY && saved.rlim_cur < lower.rlim_cur)
    GTEST_SKIP() << "RLIMIT_DATA is lower already";
  ASSERT_EQ(setrlimit(RLIMIT_DATA, &lower), 0);
  const HostMemory limited = AvailableHostMemory();
  setrlimit(RLIMIT_DATA, &saved);
  if (free.bytes <= gib / 4)
    GTEST_SKIP() << "less than a quarter GiB is free";
  EXPECT_EQ(limited.limit, "RLIMIT_DATA");
  EXPECT_LE(limited.bytes, gib / 4);
  EXPECT_GT(limited.bytes, gib / 8);
}

// A case beyond the host's free memory (here the process's address space limited with prlimit,
// so that it is reproducible on any machine) is skipped before anything is allocated, with the
// bytes needed and available; pocl's buffers count as host memory. Without the check pocl ended
// the process on an assertion (exit 134).
TEST(HostMemory, CaseBeyondTheHostsMemoryIsSkippedWithTheNumbers) {
  if (Device().info.isGpu)
    GTEST_SKIP() << "the test device is a GPU: its buffers are not host memory";
  const size_t n = size_t(1) << 28;  // 1 GiB of uint: within pocl's 2 GiB per buffer here
  if (Device().info.maxAllocBytes < n * 4 || Device().info.globalMemBytes <= 2 * n * 4)
    GTEST_SKIP() << "the device reports less memory than the case needs";
  // 3 GiB of address space: the case needs its 1 GiB input on the host, and as much again for
  // each of its device buffers (input, interleaved's copy of it); the run before it some more.
  const CommandResult r = RunCommand(fmt::format(
      "prlimit --as={} '{}' --check -q --task reduction --variant interleaved --type uint "
      "--size 2^28 --format json{}",
      uint64_t(3) << 30, RSB_BINARY, DeviceSelectors()));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["status"], "skipped");
  const std::string message = j["results"][0]["message"];
  EXPECT_TRUE(Pattern(R"(^needs [0-9.]+ GiB of host memory, [0-9.]+ GiB available \(RLIMIT_AS\))")
                  .Search(message))
      << message;
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
      if (!CannotRun(*task, variant, spec).empty())
        continue;  // (rusticl: the single-pass variants need 64-bit atomics)
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

// ---------------------------------------------------------------------------------------------
// The profiling timer (ProfilingTimer.h): judged before anything is timed; where it measures
// nothing every case is validated and reported `untimed`, with no figure the device never gave.

// Three copies of `small` and of 16 times as many bytes, each taking the spans given (ns), the
// host's clock seeing a little more.
TimerSamples Samples(uint64_t resolution, uint64_t small, double smallNs, double largeNs,
                     uint64_t firstStart = 1000000) {
  TimerSamples t;
  t.resolutionNs = resolution;
  uint64_t at = firstStart;
  for (int round = 0; round < 3; ++round)
    for (auto* v : {&t.small, &t.large}) {
      const double ns = v == &t.small ? smallNs : largeNs;
      v->push_back({at, at + uint64_t(ns), v == &t.small ? small : 16 * small, ns * 1e-6 + 0.05});
      at += uint64_t(ns) + 20000;
    }
  return t;
}

TEST(Timer, RusticlsTimestampsAreUnusable) {
  // Mesa rusticl 22.3 on llvmpipe: resolution 0, every command queued 0, submitted 1, started 2,
  // ended 3 (ns).
  TimerSamples t;
  t.resolutionNs = 0;
  for (int round = 0; round < 3; ++round) {
    t.small.push_back({2, 3, 4 << 20, 0.4});
    t.large.push_back({2, 3, 64 << 20, 6.0});
  }
  TimerVerdict v = JudgeTimer(t);
  EXPECT_TRUE(v.checked);
  EXPECT_FALSE(v.usable);
  EXPECT_EQ(v.reason, "CL_DEVICE_PROFILING_TIMER_RESOLUTION is 0");
  EXPECT_TRUE(v.Unusable());
  // The same stamps from a driver that claims a resolution: 1 ns for 64 MiB is no memory's speed.
  t.resolutionNs = 1;
  v = JudgeTimer(t);
  EXPECT_FALSE(v.usable);
  EXPECT_NE(v.reason.find("a 64 MiB copy took 1 ns by its profiling events"), std::string::npos)
      << v.reason;
  EXPECT_NE(v.reason.find("beyond any memory"), std::string::npos) << v.reason;
}

TEST(Timer, RealLookingSpansAreUsable) {
  const uint64_t mib4 = 4 << 20;
  // pocl on a CPU (about 20 GB/s), an H100 (a few us of launch, then 3 TB/s; the small copy
  // from its L2), a coarse timer (resolution 1000 ns), a device reporting timestamps from 0.
  for (const TimerSamples& t :
       {Samples(1, mib4, 420e3, 6.5e6), Samples(1, mib4, 6e3, 48e3), Samples(1000, mib4, 2e3, 4e3),
        Samples(1, mib4, 420e3, 6.5e6, 0), Samples(1, 1 << 20, 5e3, 9e3)}) {
    const TimerVerdict v = JudgeTimer(t);
    EXPECT_TRUE(v.checked);
    EXPECT_TRUE(v.usable) << v.reason;
    EXPECT_EQ(v.reason, "");
    EXPECT_FALSE(v.Unusable());
  }
}

TEST(Timer, SpansThatRunBackwardsStandStillOrDoNotGrowAreUnusable) {
  const uint64_t mib4 = 4 << 20;
  auto reason = [](const TimerSamples& t) {
    const TimerVerdict v = JudgeTimer(t);
    EXPECT_FALSE(v.usable);
    return v.reason;
  };
  TimerSamples backwards = Samples(1, mib4, 420e3, 6.5e6);
  std::swap(backwards.large[1].startNs, backwards.large[1].endNs);
  EXPECT_NE(reason(backwards).find("a 64 MiB copy's profiling span ends before it starts"),
            std::string::npos);
  TimerSamples still = Samples(1, mib4, 420e3, 6.5e6);
  still.small[2].endNs = still.small[2].startNs;
  EXPECT_EQ(reason(still), "a 4 MiB copy took 0 ns by its profiling events");
  // 16 times the bytes in the same time: a clock that ticks per command, not per ns.
  EXPECT_NE(reason(Samples(1, mib4, 500e3, 500e3)).find("the spans do not grow with the work"),
            std::string::npos);
  // 64 MiB in 2 s is slow, but 64 MiB in 200 s (0.7 MB/s) is no memory either.
  EXPECT_TRUE(JudgeTimer(Samples(1, mib4, 0.2e9, 2e9)).usable);
  EXPECT_NE(reason(Samples(1, mib4, 20e9, 200e9)).find("below 1 MB/s"), std::string::npos);
  // Spans far longer than the host waited for them (a clock in the wrong unit).
  TimerSamples slow = Samples(1, mib4, 420e3, 6.5e6);
  slow.large[0].hostMs = 1.0;
  slow.large[0].endNs = slow.large[0].startNs + 50000000;
  EXPECT_NE(reason(slow).find("by the host's clock around it"), std::string::npos);
  // A device too small for a copy is judged on its resolution alone.
  EXPECT_TRUE(JudgeTimer(TimerSamples{1, {}, {}}).usable);
  EXPECT_FALSE(JudgeTimer(TimerSamples{0, {}, {}}).usable);
}

TEST(Timer, TheTestDevicesTimerIsJudgedAsItIs) {
  const TimerSamples t = MeasureTimer(*Device().ctx);
  const TimerVerdict v = JudgeTimer(t);
  EXPECT_TRUE(v.checked);
  // What the margins are on this device (for the record, not asserted).
  for (const auto* copies : {&t.small, &t.large})
    for (const auto& s : *copies)
      std::cout << fmt::format("  {} KiB: {} ns (host {:.3f} ms)\n", s.bytes >> 10,
                               s.endNs - s.startNs, s.hostMs);
  if (Device().info.platform.find("rusticl") != std::string::npos) {
    EXPECT_FALSE(v.usable) << "rusticl 22.3's timer measures nothing";
    EXPECT_NE(v.reason, "");
  } else {
    EXPECT_TRUE(v.usable) << Device().info.name << ": " << v.reason;
  }
}

// Table rows of untimed cases with every measured cell "-" (median, +-ci, Gelem/s, GB/s, util).
size_t UntimedRows(const std::string& table) {
  static const Pattern row(R"( untimed +- +- +- +- +- )");
  return row.All(table).size();
}

// A timer verdict the caller already found (a serve request's "timer": the grader's timed
// children, after its first timed run) is taken as told: an in-process run without ceilings does
// not check the timer again, so the forced verdict of RSB_FORCE_UNTIMED does not reach it, and a
// told reason makes the cases untimed with that reason.
TEST(Timer, AVerdictToldByTheCallerIsTakenWithoutACheck) {
  const ScopedEnv force("RSB_FORCE_UNTIMED", "1");
  const std::string file = fmt::format("/tmp/rsb-told-{}.json", getpid());
  const std::string args = "-q --format json --output " + file +
                           " --task reduction --variant sequential --size 4096 --no-isolate "
                           "--no-ceilings --iterations 3 --timer events ";
  const auto told = [&](const std::string& timer) {
    std::vector<std::string> argv = {RSB_BINARY};
    std::istringstream words(args);
    for (std::string w; words >> w;)
      argv.push_back(w);
    for (const std::string& a : DeviceSelectorArgs())
      argv.push_back(a);
    const std::string request = file + ".request";
    std::ofstream(request) << ServeRequest(argv, {{"timer", timer}});
    const CommandResult r =  // inner redirection: RunCommand's own stdin is /dev/null
        RunCommand(fmt::format("{{ '{}' serve <'{}'; }}", RSB_BINARY, request));
    std::remove(request.c_str());
    return r;
  };
  ASSERT_EQ(told("usable").status, 0);
  auto j = ReadJson(file);
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["status"], "passed") << j["results"][0].dump();
  EXPECT_TRUE(j["results"][0].contains("time_ms"));
  ASSERT_EQ(told("told: no clock").status, 0);
  j = ReadJson(file);
  EXPECT_EQ(j["results"][0]["status"], "untimed");
  EXPECT_NE(j["results"][0]["message"].get<std::string>().find("told: no clock"), std::string::npos)
      << j["results"][0].dump();
  ASSERT_EQ(RunBench(args).status, 0);  // not told: checked, and the check is forced
  EXPECT_EQ(ReadJson(file)["results"][0]["status"], "untimed");
  std::remove(file.c_str());
}

// The whole untimed path on any device: RSB_FORCE_UNTIMED (a test setting) judges the timer
// unusable, and --timer events refuses the host's clock. Every case validated, reported untimed
// with the reason, no time, throughput or ceiling anywhere, the table's timer line once, exit 0; a
// wrong kernel still fails (exit 1); compare and plot read such a file without crashing.
TEST(Timer, ForcedUnusableTimerValidatesEveryCaseAndTimesNone) {
  const ScopedEnv force("RSB_FORCE_UNTIMED", "1");
  const std::string file = fmt::format("/tmp/rsb-untimed-{}.json", getpid());
  // With and without ceilings: the timer's verdict must reach the runner either way (an
  // in-process run with --no-ceilings once reported its numbers as timed).
  for (const char* mode :
       {"--no-isolate", "--isolate", "--no-isolate --no-ceilings", "--isolate --no-ceilings"}) {
    const std::string args = fmt::format(
        "--task reduction --variant sequential,atomic --size 1000,4096 --timer events {}", mode);
    const CommandResult table =
        RunBench(fmt::format("-q --json {0} --csv {0}.csv {1}", file, args));
    ASSERT_EQ(table.status, 0) << mode << "\n" << table.err;
    const std::string line =
        "profiling timer is unusable (forced by RSB_FORCE_UNTIMED (a test "
        "setting)): every case validated, none timed";
    EXPECT_NE(table.out.find("timer: "), std::string::npos) << table.out;
    ASSERT_NE(table.out.find(line), std::string::npos) << table.out;
    EXPECT_EQ(table.out.find(line), table.out.rfind(line)) << "said more than once\n" << table.out;
    EXPECT_EQ(table.out.find("ceilings ("), std::string::npos) << table.out;
    EXPECT_EQ(UntimedRows(table.out), 4u) << table.out;
    const auto j = ReadJson(file);
    EXPECT_EQ(j["device"]["timer"]["usable"], false);
    EXPECT_EQ(j["device"]["ceilings"]["copy_gbytes_s"], 0.0);
    ASSERT_EQ(j["results"].size(), 4u);
    for (const auto& r : j["results"]) {
      EXPECT_EQ(r["status"], "untimed") << r.dump();
      EXPECT_NE(r["message"].get<std::string>().find("validated; not timed: "), std::string::npos);
      EXPECT_GE(r["validated_runs"].get<int>(), 1);
      for (const char* absent : {"gelem_s", "gbytes_s", "time_ms", "ceiling", "ceiling_gbytes_s",
                                 "utilisation", "bandwidth_util", "breakdown"})
        EXPECT_FALSE(r.contains(absent)) << mode << ": " << absent << " in " << r.dump();
    }
    const std::string csv = ReadFile(file + ".csv");
    std::remove((file + ".csv").c_str());
    EXPECT_NE(csv.find(",untimed,"), std::string::npos) << csv;
  }
  // Read back: compare says the cases were not timed, plot that there is nothing to plot.
  const CommandResult cmp = RunCommand(fmt::format("'{}' compare {} {}", RSB_BINARY, file, file));
  EXPECT_EQ(cmp.status, 0) << cmp.out << cmp.err;
  EXPECT_NE(cmp.out.find("untimed"), std::string::npos) << cmp.out;
  const CommandResult plot = RunCommand(
      fmt::format("'{}' plot {} -o /tmp/rsb-untimed-{}.png", RSB_BINARY, file, getpid()));
  EXPECT_EQ(plot.status, 2) << plot.err;
  EXPECT_NE(plot.err.find("no timed result"), std::string::npos) << plot.err;
  std::remove(file.c_str());
  // A validation failure on such a device is still a failure.
  const std::string broken = CopyKernels("untimed-broken");
  Patch(broken + "/Reduction.cl", "dst[idx] = idx + stride < n ? OP(a, src[idx + stride]) : a;",
        "dst[idx] = a;");
  const CommandResult bad = RunBench(
      fmt::format("-q --format json --kernels '{}' --task reduction --variant interleaved,atomic "
                  "--size 100000 --timer events",
                  broken));
  EXPECT_EQ(bad.status, 1) << bad.err;
  const auto j = nlohmann::json::parse(bad.out);
  EXPECT_EQ(StatusByVariant(j)["reduction/interleaved"], "failed");
  EXPECT_EQ(StatusByVariant(j)["reduction/atomic"], "untimed");
  std::filesystem::remove_all(broken);
}

// Where the device's timer fails its check (RSB_FORCE_UNTIMED here) the default --timer auto
// times every case and the ceilings with the host's clock around a finished queue, in process
// and in workers, and every output says so: JSON per result and per device, CSV's columns, the
// table's and Markdown's timer line. --timer host does the same on any device; a timer that
// passes is the events' (and only then is the breakdown kept).
void ExpectHostTimed(const std::string& args, bool ceilings) {
  // One run writes every output (--json, --csv, --markdown beside the table on stdout).
  const std::string base = fmt::format("/tmp/rsb-host-{}", getpid());
  const CommandResult table =
      RunBench(fmt::format("-q --json {0}.json --csv {0}.csv --markdown {0}.md {1}", base, args));
  ASSERT_EQ(table.status, 0) << args << "\n" << table.err;
  const auto j = ReadJson(base + ".json");
  const std::string csv = ReadFile(base + ".csv"), md = ReadFile(base + ".md");
  for (const char* ext : {".json", ".csv", ".md"})
    std::remove((base + ext).c_str());
  EXPECT_EQ(j["device"]["timer"]["clock"], "host") << j["device"].dump();
  EXPECT_GE(j["device"]["timer"]["resolution_ns"].get<double>(), 1);
  EXPECT_EQ(j["device"]["ceilings"]["copy_gbytes_s"].get<double>() > 0, ceilings) << args;
  ASSERT_EQ(j["results"].size(), 2u);
  for (const auto& r : j["results"]) {
    EXPECT_EQ(r["status"], "passed") << r.dump();
    EXPECT_EQ(r["timer"], "host") << r.dump();
    EXPECT_GE(r["timer_resolution_ns"].get<double>(), 1) << r.dump();
    EXPECT_GT(r["time_ms"]["median"].get<double>(), 0) << r.dump();
    EXPECT_GT(r["gelem_s"].get<double>(), 0) << r.dump();
    EXPECT_TRUE(r["breakdown"].empty()) << "no event is trusted: " << r.dump();
  }
  EXPECT_NE(table.out.find("timer: host (the host's monotonic clock around a finished queue, "
                           "resolution "),
            std::string::npos)
      << table.out;
  EXPECT_EQ(UntimedRows(table.out), 0u) << table.out;
  EXPECT_NE(csv.find(",timer,timer_resolution_ns"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",host,"), std::string::npos) << csv;
  EXPECT_NE(md.find("timer: host"), std::string::npos) << md;
}

TEST(Timer, AnUnusableTimerIsReplacedByTheHostsClockAndEveryOutputSaysSo) {
  const std::string select =
      "--task reduction --variant sequential,atomic --size 4096 --time-budget 0.05 ";
  {
    const ScopedEnv force("RSB_FORCE_UNTIMED", "1");
    ExpectHostTimed(select + "--isolate", true);  // in-process: on rusticl
    ExpectHostTimed(select + "--no-ceilings --no-isolate", false);
    ExpectHostTimed(select + "--no-ceilings --isolate --timer auto", false);
  }
  ExpectHostTimed(select + "--no-ceilings --timer host", false);
  if (!Lacks(Need::UsableTimer).empty())
    return;  // rusticl: the events are never the clock
  const CommandResult r = RunBench("-q --format json --no-ceilings " + select);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["device"]["timer"]["clock"], "events");
  EXPECT_EQ(j["device"]["timer"]["resolution_ns"], j["device"]["timer"]["device_resolution_ns"]);
  for (const auto& res : j["results"])
    EXPECT_EQ(res["timer"], "events") << res.dump();
  EXPECT_EQ(RunBench("--timer wall").status, 2);
}

// On rusticl itself (RUSTICL_ENABLE=llvmpipe RSB_TEST_PLATFORM=rusticl): its timer is found out
// without help; the reduction that once ran at 16777216 Gelem/s is timed by the host's clock,
// and untimed where the events are asked for.
TEST(Timer, RusticlRunsAreHostTimedOrUntimedWithTimerEvents) {
  if (std::getenv("RSB_TEST_PLATFORM") == nullptr ||
      std::string(std::getenv("RSB_TEST_PLATFORM")).find("rusticl") == std::string::npos)
    GTEST_SKIP() << "needs RSB_TEST_PLATFORM=rusticl (and RUSTICL_ENABLE=llvmpipe): the test "
                    "device's timer works";
  const CommandResult r = RunBench("-q --task reduction --size 2^16 --format json --timer events");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["device"]["timer"]["usable"], false);
  EXPECT_NE(j["device"]["timer"]["reason"].get<std::string>().find("RESOLUTION is 0"),
            std::string::npos);
  for (const auto& res : j["results"]) {
    EXPECT_TRUE(res["status"] == "untimed" || res["status"] == "skipped") << res.dump();
    EXPECT_FALSE(res.contains("gelem_s")) << res.dump();
  }
  const CommandResult table =
      RunBench("-q --task reduction --variant sequential --size 2^16 --timer events");
  EXPECT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("timer: "), std::string::npos) << table.out;
  EXPECT_EQ(UntimedRows(table.out), 1u) << table.out;
  ExpectHostTimed(
      "--task reduction --variant sequential,atomic --size 2^16 --time-budget 0.05 --no-isolate",
      true);
}

// --repetitions N: every case timed in N rounds, one case after another in each round (the
// progress shows the order), in process and in workers; every round validates (two validated runs
// a round: before and after the timed ones) and keeps its samples (samples_ms); time_ms is over
// all of them and time_ms_rounds the rounds' medians. 0 rounds are refused.
TEST(Repetitions, RoundsAreInterleavedAcrossTheCasesAndEverySampleIsKept) {
  const std::string file = fmt::format("/tmp/rsb-rounds-{}.json", getpid());
  for (const char* mode : {"--no-isolate", "--isolate"}) {
    const CommandResult r = RunBench(fmt::format(
        "--format json --output {} --task reduction --variant sequential,atomic --size 4096 "
        "--no-ceilings --iterations 4 --time-budget 10 --ci-target 0 --repetitions 3 {}",
        file, mode));
    ASSERT_EQ(r.status, 0) << r.err;
    static const Pattern started(R"(\] reduction/(\w+) uint)");
    std::vector<std::string> order;
    for (const PatternMatch& m : started.All(r.err))
      order.push_back(m[1]);
    EXPECT_EQ(order, std::vector<std::string>(
                         {"sequential", "atomic", "sequential", "atomic", "sequential", "atomic"}))
        << r.err;
    const auto j = ReadJson(file);
    EXPECT_EQ(j["repetitions"], 3);
    ASSERT_EQ(j["results"].size(), 2u);
    for (const auto& res : j["results"]) {
      ASSERT_EQ(res["samples_ms"].size(), 3u) << res.dump();
      std::vector<double> medians;
      for (const auto& round : res["samples_ms"]) {
        ASSERT_EQ(round.size(), 4u) << res.dump();
        std::vector<double> v = round.get<std::vector<double>>();
        std::sort(v.begin(), v.end());
        medians.push_back(0.5 * (v[1] + v[2]));
      }
      std::sort(medians.begin(), medians.end());
      EXPECT_EQ(res["iterations"], 12);
      EXPECT_EQ(res["validated_runs"], 6) << res.dump();
      EXPECT_EQ(res["time_ms_rounds"]["rounds"], 3);
      EXPECT_DOUBLE_EQ(res["time_ms_rounds"]["median"].get<double>(), medians[1]);
      EXPECT_DOUBLE_EQ(res["time_ms_rounds"]["min"].get<double>(), medians[0]);
    }
  }
  std::remove(file.c_str());
  EXPECT_EQ(RunBench("--repetitions 0").status, 2);
}

// By default every case runs in one worker process; a case that crashes it (here the naive scan
// writing 2^31 elements past its output at n = 257 only) runs again alone in a worker of its
// own, which decides it: that case is the error, named, and the cases after it run on in a fresh
// worker and pass.
TEST(Robustness, CaseThatCrashesTheSharedWorkerIsItsOwnErrorAndTheOthersRun) {
  const std::string dir = CopyKernels("shared-crash");
  Patch(dir + "/Scan.cl", "  dst[i] = v;\n  // SOLUTION END",
        "  dst[i + (n == 257 ? (1u << 31) : 0u)] = v;\n  // SOLUTION END");
  const std::string out = dir + "/results.json";
  const CommandResult r = RunBench(
      "--check -q --task scan --variant naive --type uint,int --size 100,257,1000 "
      "--format json -o " +
      out + " --kernels " + dir);
  EXPECT_EQ(r.status, 3) << r.err;
  const auto j = ReadJson(out);
  ASSERT_EQ(j["results"].size(), 6u) << j.dump(1);
  for (const auto& res : j["results"]) {
    const std::string message = res["message"];
    if (res["n"] != 257) {
      EXPECT_TRUE(Ok(res["status"].get<std::string>())) << res["n"] << " " << message;
      continue;
    }
    EXPECT_EQ(res["status"], "error") << message;
    if (message.find("signal") != std::string::npos) {  // a CPU device: the process died
      EXPECT_NE(message.find("alone in a process of its own"), std::string::npos) << message;
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rsb::test
