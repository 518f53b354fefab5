// `reduce-scan-bench grade`, its refusals (Options, Rubric): bad options, rubric fields of the
// wrong type, items that can never run, output folders, jobs, shards and merge arguments, gates
// without Oclgrind; each a usage error before anything runs.
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

TEST_F(Grade, BadInputIsAUsageErrorNamingIt) {
  const std::string h = HandIn("any");
  std::ofstream(root_ / "bad.json") << R"({"items": [
      {"id": "scan-fast", "task": "scan", "variant": "fastest", "points": 2,
       "cases": {"sizes": [257]}}]})";
  CommandResult r = RunGrade(h, "", (root_ / "bad.json").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("item 'scan-fast'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fastest"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "out")) << "nothing written on bad input";

  r = RunGrade(h, "--timeout 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--timeout"), std::string::npos) << r.err;

  r = RunGrade((root_ / "missing").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("missing"), std::string::npos) << r.err;

  // A hand-in that is a symlink loop: one line naming it (it was the library's "filesystem
  // error: status: Too many levels of symbolic links", exit 3).
  const fs::path loop = root_ / "loop";
  fs::create_symlink(loop, loop);
  r = RunGrade(loop.string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("HANDIN"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(loop.string()), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("filesystem error"), std::string::npos) << r.err;

  // Hand-ins' host code is built against the hand-in kit now, never a source tree.
  r = RunGrade(h, "--suite-source /tmp");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--suite-source"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--handin-kit"), std::string::npos) << r.err;
}

TEST_F(Grade, RubricFieldsOfTheWrongTypeAreAUsageErrorNamingFileAndItem) {
  const std::string h = HandIn("any");
  const fs::path rubric = root_ / "typed.json";
  std::ofstream(rubric) << R"({"items": [
      {"id": "scan-naive", "task": "scan", "variant": "naive", "points": "two",
       "cases": {"sizes": [257]}}]})";
  CommandResult r = RunGrade(h, "", rubric.string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(rubric.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("item 'scan-naive'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("points"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("type_error"), std::string::npos) << r.err;

  std::ofstream(rubric) << R"({"items": [
      {"id": 7, "task": "scan", "variant": "naive", "points": 2, "cases": {"sizes": [257]}}]})";
  r = RunGrade(h, "", rubric.string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("item 1: id 7: not a string"), std::string::npos) << r.err;

  std::ofstream(rubric) << R"({"items": [
      {"id": "big", "task": "scan", "variant": "naive", "points": 1e400,
       "cases": {"sizes": [257]}}]})";
  r = RunGrade(h, "", rubric.string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "out")) << "nothing written on bad input";
}

TEST_F(Grade, ItemsThatCanNeverRunAreRejectedBeforeAnythingRuns) {
  const std::string h = HandIn("any");
  const fs::path rubric = root_ / "never.json";
  auto expectRefused = [&](const std::string& item, const std::string& what) {
    std::ofstream(rubric) << R"({"items": [)" << item << "]}";
    const fs::path trace = root_ / "trace.csv";
    fs::remove(trace);
    const CommandResult r = RunGrade(h, "--trace '" + trace.string() + "'", rubric.string());
    EXPECT_EQ(r.status, 2) << item << "\n" << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << item << "\n" << r.err;
    // Refused before anything runs, not even the suite's own reference runs: --trace has no
    // child run (at most its header line).
    const std::string runs = fs::exists(trace) ? ReadFile(trace) : "";
    EXPECT_LE(std::count(runs.begin(), runs.end(), '\n'), 1)
        << "refused only after running: " << item << "\n"
        << runs;
  };
  // An image for a 1-D variant, a count for a 2-D one.
  expectRefused(R"({"id": "a", "task": "convolution", "variant": "basic-1d", "points": 1,
                    "cases": {"sizes": ["64x64"]}})",
                "\"64x64\": not allowed");
  expectRefused(R"({"id": "b", "task": "convolution", "variant": "tiled-2d", "points": 1,
                    "cases": {"sizes": [4096]}})",
                "4096: not allowed");
  // A type the task does not compute (convolution: float and double).
  expectRefused(R"({"id": "c", "task": "convolution", "variant": "basic-1d", "points": 1,
                    "cases": {"sizes": [100], "types": ["uint"]}})",
                "\"uint\": not allowed; allowed: float double");
  // A mask wider than the image.
  expectRefused(R"({"id": "d", "task": "convolution", "variant": "tiled-2d", "points": 1,
                    "cases": {"sizes": ["8x8"], "mask_widths": [9]}})",
                "can never run");
  expectRefused(R"({"id": "e", "task": "reduction", "variant": "sequential", "points": 1,
                    "cases": {"sizes": [100], "mask_width": 3}})",
                "unknown key 'mask_width'");
}

// An output folder that refuses the probe (a file written and removed in it, or in the folder
// it would be made in) is exit 3, as any output that cannot be written, before any hand-in.
TEST_F(Grade, OutputFolderThatCannotBeWrittenIsRefusedBeforeAnyHandInAndNoTempFolderIsLeft) {
  const std::string h = HandIn("any");
  // The grader's temporary folders go to TMPDIR: a private one, empty at the end.
  const fs::path tmp = root_ / "tmp";
  fs::create_directories(tmp);
  const char* cache = std::getenv("POCL_CACHE_DIR");  // (the test run's kernel cache)
  auto grade = [&](const std::string& args) {
    return RunCommand(fmt::format("TMPDIR='{}' {} grade{}{} {}", tmp.string(), RSB_BINARY,
                                  SandboxArg(),
                                  cache ? fmt::format(" --kernel-cache '{}'", cache) : "", args));
  };
  auto tempFolders = [&] {
    return std::distance(fs::directory_iterator(tmp), fs::directory_iterator());
  };
  CommandResult r = grade(fmt::format("--rubric '{}' --output-dir /proc/rsb-grades {}",
                                      (root_ / "rubric.json").string(), h));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("--output-dir '/proc/rsb-grades'"), std::string::npos) << r.err;
  const std::string first = r.err;
  r = grade(
      fmt::format("--rubric '{}' --output-dir /proc {}", (root_ / "rubric.json").string(), h));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;
  // Refused before anything runs: no reference run, no hand-in graded (its progress lines).
  for (const std::string& err : {first, r.err})
    for (const char* ran : {"reference:", "grading "})
      EXPECT_EQ(err.find(ran), std::string::npos) << err;
  // A graded run and a refused one leave no temporary folder behind.
  std::ofstream(root_ / "small.json") << R"({"items": [
      {"id": "s", "task": "reduction", "variant": "sequential", "points": 1,
       "cases": {"sizes": [100]}}]})";
  r = grade(fmt::format("--rubric '{}' --output-dir '{}' -q {}", (root_ / "small.json").string(),
                        (root_ / "out").string(), h));
  EXPECT_EQ(r.status, 0) << r.err;
  std::ofstream(root_ / "refused.json") << R"({"items": [
      {"id": "s", "task": "reduction", "variant": "sequential", "points": 1,
       "cases": {"sizes": [100], "types": ["double"], "ops": ["max"]}}]})";
  r = grade(fmt::format("--rubric '{}' --output-dir '{}' -q --platform NoSuchPlatform {}",
                        (root_ / "refused.json").string(), (root_ / "out").string(), h));
  EXPECT_NE(r.status, 0) << r.err;
  EXPECT_EQ(tempFolders(), 0) << "a temporary folder left in " << tmp;
  const json report = Report("any");
  EXPECT_NE(report["device"], "") << report.dump(2);
}

// Reports written into a hand-in would be among the student's files (and graded with them next
// time): an output folder in a hand-in, the hand-in itself, or reached through a link, is a usage
// error of one line before anything is written; `grade .` in a hand-in needs --output-dir.
TEST_F(Grade, OutputFolderInsideAHandInIsRefusedAndNothingIsWritten) {
  const std::string h = HandIn("ann");
  fs::create_directory_symlink(h + "/kernels", root_ / "link");
  auto files = [&] {
    std::vector<std::string> all;
    for (const auto& e : fs::recursive_directory_iterator(h))
      all.push_back(e.path().string());
    std::sort(all.begin(), all.end());
    return all;
  };
  const std::vector<std::string> before = files();
  const std::string rubric = (root_ / "rubric.json").string();
  for (const std::string& out :
       {h + "/grades", h, h + "/kernels/../reports/", (root_ / "link" / "grades").string()}) {
    const CommandResult r = RunBench(
        fmt::format("grade{} --rubric '{}' --output-dir '{}' {}", SandboxArg(), rubric, out, h));
    EXPECT_EQ(r.status, 2) << out << "\n" << r.err;
    EXPECT_EQ(r.err, fmt::format("error: --output-dir '{}': inside the hand-in '{}'; allowed: a "
                                 "folder outside every hand-in\n",
                                 out, h));
  }
  const CommandResult dot = RunCommand(
      fmt::format("cd '{}' && '{}' grade{} --rubric '{}' .", h, RSB_BINARY, SandboxArg(), rubric));
  EXPECT_EQ(dot.status, 2) << dot.err;
  EXPECT_NE(dot.err.find("--output-dir 'grades': inside the hand-in '.'"), std::string::npos)
      << dot.err;
  EXPECT_EQ(files(), before) << "written into the hand-in";
}

TEST_F(Grade, BadJobsShardSpeedAndMergeArgumentsAreUsageErrors) {
  const std::string h = HandIn("h");
  for (const char* bad :
       {"--jobs 0", "--jobs x", "--shard 0/3", "--shard 4/3", "--shard 1", "--shard a/b",
        "--shard 1/3/5", "--speed-seconds 0", "--speed-seconds 0.001", "--speed-seconds 61",
        "--speed-seconds 1s", "--speed-seconds 1e-1"}) {
    const CommandResult r = RunGrade(h, bad);
    EXPECT_EQ(r.status, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find(std::string(bad).substr(0, 6)), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(root_ / "out")) << bad;
  }
  const CommandResult none = RunMerge("");
  EXPECT_EQ(none.status, 2) << none.err;
  const CommandResult notShard = RunMerge(fmt::format("'{}'", h));
  EXPECT_EQ(notShard.status, 2) << notShard.err;
  EXPECT_NE(notShard.err.find("grading.json"), std::string::npos) << notShard.err;
}

TEST_F(Grade, OclgrindGatesWithoutOclgrindAreAUsageErrorNamingTheItems) {
  const std::string h = HandIn("h");
  std::ofstream(root_ / "gated.json") << R"({"items": [
      {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
       "cases": {"sizes": [257]}, "oclgrind": "deduct"},
      {"id": "reduction-sequential", "task": "reduction", "variant": "sequential", "points": 1,
       "cases": {"sizes": [257]}}]})";
  const CommandResult r = RunCommand(
      fmt::format("PATH='{}' '{}' grade --sandbox none --rubric '{}' --output-dir '{}' {}",
                  PathWithoutOclgrind().string(), RSB_BINARY, (root_ / "gated.json").string(),
                  (root_ / "out").string(), h));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("item scan-naive has an Oclgrind gate, but there is no oclgrind on PATH"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--items reduction-sequential"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "out" / "h.json"));
}

}  // namespace
}  // namespace rsb::test
