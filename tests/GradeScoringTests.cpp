// `reduce-scan-bench grade`, what a hand-in's kernels earn (Scoring, Report): correct, wrong, a
// crash, not compiling, the work ceiling, the speed floors, the shipped rubric. Hand-ins written
// by the tests (tests/GradeFixture.h), graded through the executable as an instructor would.
#include "GradeFixture.h"
#include "TestSupport.h"
#include "grade/ChildRun.h"
#include "grade/Grade.h"
#include "grade/HandinFiles.h"
#include "grade/Resident.h"
#include "grade/Rubric.h"
#include "grade/Scoring.h"
#include "grade/Turns.h"
#include "platform/Subprocess.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

namespace fs = std::filesystem;
using nlohmann::json;

namespace rsb::test {
namespace {

TEST_F(Grade, SuiteKernelsGetFullPointsAndTheSamePointsOnAReRun) {
  WithSpeedFloor();
  const std::string h = HandIn("perfect");
  const CommandResult first = RunGrade(h);
  ASSERT_EQ(first.status, 0) << first.err;
  const json a = Report("perfect");
  EXPECT_EQ(a["total"], 5) << a.dump(2);
  EXPECT_EQ(a["max"], 5);
  const json& seq = Item(a, "reduction-sequential");
  EXPECT_EQ(seq["status"], "passed");
  EXPECT_TRUE(seq["speed"]["met"].get<bool>()) << seq.dump(2);
  EXPECT_GT(seq["speed"]["ratio"].get<double>(), 0.1);
  EXPECT_EQ(seq["speed"]["round_seconds"], 0.2) << seq.dump(2);  // RunGrade's --speed-seconds
  const std::string md = ReadFile(root_ / "out" / "perfect.md");
  EXPECT_NE(md.find("# perfect: 5 / 5 points"), std::string::npos) << md;

  const CommandResult second = RunGrade(h, "--speed-seconds 0.4");
  ASSERT_EQ(second.status, 0) << second.err;
  const json b = Report("perfect");
  EXPECT_EQ(Item(b, "reduction-sequential")["speed"]["round_seconds"], 0.4);
  for (size_t i = 0; i < a["items"].size(); ++i) {
    EXPECT_EQ(a["items"][i]["points"], b["items"][i]["points"]) << a["items"][i]["id"];
    EXPECT_EQ(a["items"][i]["status"], b["items"][i]["status"]) << a["items"][i]["id"];
  }
  EXPECT_EQ(a["total"], b["total"]);
}

TEST_F(Grade, WrongKernelFailsWithFirstWrongIndexAndTheSummaryHasOneRowPerHandIn) {
  const std::string good = HandIn("good");
  const std::string wrong = HandIn("wrong");
  Patch(ScanCl(wrong), "v = OP(LoadShifted(src, i - offset, shift), v);",
        "v = OP(LoadShifted(src, i - offset + 1, shift), v);");
  const CommandResult r = RunGrade(good + " " + wrong);
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("wrong");
  const json& item = Item(report, "scan-naive");
  EXPECT_EQ(item["status"], "failed") << item.dump(2);
  EXPECT_EQ(item["points"], 0);
  ASSERT_TRUE(item["first_wrong"].is_object()) << item.dump(2);
  EXPECT_EQ(item["first_wrong"]["index"], 1);
  EXPECT_FALSE(item["first_wrong"]["expected"].get<std::string>().empty());
  EXPECT_NE(item["first_wrong"]["expected"], item["first_wrong"]["actual"]);
  EXPECT_EQ(Item(report, "reduction-sequential")["points"], 3);
  EXPECT_EQ(ReadFile(root_ / "out" / "summary.csv"),
            "name,total,max,scan-naive,reduction-sequential\n"
            "good,5,5,2,3\n"
            "wrong,3,5,0,3\n");
}

TEST_F(Grade, OutOfBoundsWriteThatCrashesTheChildIsAnErrorOfThatItem) {
  const std::string h = HandIn("oob");
  // Far out of bounds: on pocl the store segfaults the process that runs the kernel.
  Patch(ScanCl(h), "  dst[i] = v;\n  // SOLUTION END",
        "  dst[i + (1u << 31)] = v;\n  // SOLUTION END");
  const CommandResult r = RunGrade(h);
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("oob");
  const json& item = Item(report, "scan-naive");
  EXPECT_EQ(item["status"], "error") << item.dump(2);
  // On a CPU device the store kills the worker; on a GPU the driver reports the fault as an
  // OpenCL error of the launch or the wait after it (NVIDIA: -9999 or CL_OUT_OF_RESOURCES).
  const std::string detail = item["detail"];
  if (Device().info.isGpu)
    EXPECT_TRUE(detail.find("OpenCL error") != std::string::npos ||
                detail.find("killed by signal") != std::string::npos)
        << item.dump(2);
  else
    EXPECT_NE(detail.find("SIGSEGV"), std::string::npos) << item.dump(2);
  EXPECT_EQ(detail.find("no new context"), std::string::npos) << item.dump(2);
  if (HaveOclgrind()) {  // the crashing case run again under Oclgrind: the line, before the crash
    EXPECT_NE(detail.find(": oclgrind: invalid-write at Scan.cl:"), std::string::npos)
        << item.dump(2);
  }
  EXPECT_EQ(report["total"], 3);  // the reduction still graded, after the fault
}

// Children run the variants' defaults (--no-profile): a tuning profile in the grader's cache
// folder, here one every run that loads it refuses (exit 2), changes nothing of a grade.
TEST_F(Grade, ChildrenIgnoreTuningProfiles) {
  const DeviceInfo& d = Device().info;
  const fs::path cache = root_ / "cache";
  fs::create_directories(cache / "reduce-scan-bench" / "profiles");
  std::ofstream(cache / "reduce-scan-bench" / "profiles" / "bad.json") << json{
      {"schema", "reduce-scan-bench-profile/1"},
      {"platform", d.platform},
      {"device", d.name},
      {"driver", d.driverVersion},
      {"created", "2026-11-24T00:00:00Z"},
      {"entries",
       {{{"task", "scan"},
         {"variant", "single-pass"},
         {"code_path", d.isGpu ? "gpu" : "cpu"},
         {"type_bytes", 4},
         {"size_class", "small"},
         {"local_size", 3},
         {"tune", json::object()}}}}}.dump();
  const std::string env = fmt::format("RSB_NO_PROFILE= XDG_CACHE_HOME='{}' ", cache.string());
  // The profile is this device's and refused: a run that loads it says so.
  const CommandResult plain = RunCommand(env + RSB_BINARY + std::string(" --check -q --size 5"));
  ASSERT_EQ(plain.status, 2) << plain.err;
  EXPECT_NE(plain.err.find("bad.json"), std::string::npos) << plain.err;
  const std::string h = HandIn("tuned");
  std::ofstream(root_ / "one-rubric.json") << R"({"items": [
      {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
       "cases": {"sizes": [257]}}]})";
  const char* kernels = std::getenv("POCL_CACHE_DIR");  // (the test run's kernel cache)
  const CommandResult r = RunCommand(
      env + fmt::format("'{}' grade --rubric '{}' --output-dir '{}' -q --sandbox none{} '{}'",
                        RSB_BINARY, (root_ / "one-rubric.json").string(), (root_ / "out").string(),
                        kernels ? fmt::format(" --kernel-cache '{}'", kernels) : "", h));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Item(Report("tuned"), "scan-naive")["status"], "passed") << Report("tuned").dump(2);
}

TEST_F(Grade, KernelThatDoesNotCompileReportsFileAndLine) {
  const std::string h = HandIn("nocompile");
  Patch(ScanCl(h), "  dst[i] = v;\n  // SOLUTION END", "  dst[i] = v\n  // SOLUTION END");
  const CommandResult r = RunGrade(h);
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("nocompile");
  const json& item = Item(report, "scan-naive");
  EXPECT_EQ(item["status"], "error") << item.dump(2);
  EXPECT_NE(item["detail"].get<std::string>().find("kernels/Scan.cl:"), std::string::npos)
      << item.dump(2);
  const std::string md = ReadFile(root_ / "out" / "nocompile.md");
  EXPECT_NE(md.find("kernels/Scan.cl:"), std::string::npos) << md;
}

// On a CPU device the runs timed in turns are paired (the i-th of each, one just after the
// other): the ratio is the median of the pairs' ratios, so a moment the machine slowed for both
// costs nothing (the ratio of the medians would say 0.67 here); where the suite's rounds were
// timed once for the class (a GPU), the medians' ratio.
TEST(GradeSpeed, CpuRunsArePairedAndClassRoundsAreNot) {
  const std::vector<double> ref = {10, 30, 20}, mine = {10, 30, 30};
  EXPECT_DOUBLE_EQ(grade::SpeedRatio(ref, mine, false), 1.0);
  EXPECT_DOUBLE_EQ(grade::SpeedRatio(ref, mine, true), 20.0 / 30.0);
}

// On a device whose profiling timer is unusable (RSB_FORCE_UNTIMED, a test setting, makes any
// device's so) the speed floors are scored with the host's clock, the run's own rule (--timer
// auto): full points, a ratio, as on a device whose timer works; the grader does not tell its
// timed children "usable" after a host-timed first run (it was not: they check again).
TEST_F(Grade, SpeedFloorsOnADeviceWhoseTimerFailsAreTimedByTheHostsClock) {
  WithSpeedFloor();
  const std::string h = HandIn("timerless");
  setenv("RSB_FORCE_UNTIMED", "1", 1);
  const CommandResult r = RunGrade(h);
  unsetenv("RSB_FORCE_UNTIMED");
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("timerless");
  EXPECT_EQ(report["total"], 5) << report.dump(2);
  const json& seq = Item(report, "reduction-sequential");
  EXPECT_EQ(seq["status"], "passed") << seq.dump(2);
  EXPECT_TRUE(seq["speed"]["met"].get<bool>()) << seq.dump(2);
  EXPECT_GT(seq["speed"]["ratio"].get<double>(), 0.1) << seq.dump(2);
}

TEST_F(Grade, TwoDimensionalConvolutionItemsAreGraded) {
  const std::string h = HandIn("conv");
  std::ofstream(root_ / "conv.json") << R"({"items": [
      {"id": "tiled-2d", "task": "convolution", "variant": "tiled-2d", "points": 3,
       "cases": {"sizes": ["64x64", "33x17"], "mask_widths": [3, 5], "local_size": 64}},
      {"id": "tiled-1d", "task": "convolution", "variant": "tiled-1d", "points": 1,
       "cases": {"sizes": [1000], "types": ["float", "double"]}}]})";
  const CommandResult r = RunGrade(h, "", (root_ / "conv.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("conv");
  const json& item = Item(report, "tiled-2d");
  EXPECT_EQ(item["status"], "passed") << item.dump(2);
  EXPECT_EQ(item["cases"].size(), 4u) << item.dump(2);
  EXPECT_NE(item["cases"][0]["case"].get<std::string>().find("64x64 mask-width=3"),
            std::string::npos)
      << item.dump(2);
  // double where the device has fp64; where it has not, the rubric is refused up front.
  EXPECT_EQ(report["total"], 4) << report.dump(2);
}

TEST_F(Grade, ShippedRubricCatchesAWrongMinIdentity) {
  if (!HaveOclgrind())  // the shipped rubric's items have Oclgrind gates
    GTEST_SKIP() << "oclgrind is not installed (scripts/install-deps.sh installs it)";
  const std::string h = HandIn("minid");
  // With the task sources, the suite's own (nothing to compile).
  CopySuiteSources(h, {"Reduction", "Scan"});
  // 0 as min's identity: right for sum, wrong for min wherever padding enters a tree.
  Patch(h + "/kernels/Common.clh", "#ifndef IDENTITY\n#error",
        "#if defined(OP_MIN)\n#undef IDENTITY\n#define IDENTITY ((T)0)\n#endif\n"
        "#ifndef IDENTITY\n#error");
  // (In residents, outside a sandbox: the min cases fail, and each failed group is run again
  // case by case, the suite's too; a resident answers as a process would,
  // Grade.ResidentRunsAnswerAsChildProcessesWould.)
  const CommandResult r =
      RunBench(fmt::format("grade --sandbox none --resident-runs on --output-dir '{}' -q --items "
                           "reduction-decomposition {}",
                           (root_ / "out").string(), h));
  ASSERT_EQ(r.status, 0) << r.err;
  const json item = Item(Report("minid"), "reduction-decomposition");
  EXPECT_EQ(item["status"], "failed") << item.dump(2);
  EXPECT_NE(item["detail"].get<std::string>().find("min"), std::string::npos) << item.dump(2);
}

TEST_F(Grade, CorrectHandInGetsFullPointsOnABusyMachine) {
  WithSpeedFloor();
  const std::string h = HandIn("busy");
  // A busy loop on every core for the whole grading run.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<pid_t> loops;
  for (unsigned i = 0; i < cores; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      for (;;) {
      }
    }
    loops.push_back(pid);
  }
  const CommandResult r = RunGrade(h, "--timeout 2");
  for (pid_t pid : loops) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("busy");
  EXPECT_EQ(report["total"], 5) << report.dump(2);
}

TEST_F(Grade, WorkCeilingCatchesAKernelThatDoesLTimesTheWork) {
  if (!HaveOclgrind())
    GTEST_SKIP() << "oclgrind is not installed (scripts/install-deps.sh installs it)";
  const std::string good = HandIn("efficient");
  const std::string slow = HandIn("lwork");
  // Every work-item sums its group's whole block alone: the same result, L times the work (and
  // faster than the tree on a CPU, so no speed floor there sees it).
  Patch(slow + "/kernels/Reduction.cl",
        "  const T v = OP(LoadOrIdentity(src, base, n), LoadOrIdentity(src, base + LOCAL_SIZE, "
        "n));\n  const T r = WorkGroupReduceSequential(scratch, v);",
        "  (void)scratch;\n  const IDX block = base - get_local_id(0);\n  T r = IDENTITY;\n"
        "  for (uint k = 0; k < 2 * LOCAL_SIZE; ++k)\n"
        "    r = OP(r, LoadOrIdentity(src, block + k, n));");
  std::ofstream(root_ / "work.json") << R"({"items": [
      {"id": "decomposition", "task": "reduction", "variant": "decomposition", "points": 2,
       "cases": {"sizes": [1, 3001], "local_size": 64}, "oclgrind": "deduct",
       "work_ceiling": 2}]})";
  const CommandResult r = RunGrade(good + " " + slow, "", (root_ / "work.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  const json efficient = Report("efficient"), lwork = Report("lwork");
  const json& ok = Item(efficient, "decomposition");
  EXPECT_EQ(ok["points"], 2) << ok.dump(2);
  EXPECT_DOUBLE_EQ(ok["oclgrind"]["work_ratio"].get<double>(), 1.0) << ok.dump(2);
  const json& item = Item(lwork, "decomposition");
  EXPECT_EQ(item["points"], 0) << item.dump(2);
  EXPECT_GT(item["oclgrind"]["work_ratio"].get<double>(), 2.0) << item.dump(2);
  EXPECT_NE(item["detail"].get<std::string>().find("not work-efficient"), std::string::npos)
      << item.dump(2);
}

}  // namespace
}  // namespace rsb::test
