// `reduce-scan-bench grade`, the child runs' limits (ChildRun): a hang, an endless loop beside
// correct hand-ins, cases a timed-out child did not reach, an interrupt. Hand-ins written by the
// tests (tests/GradeFixture.h), graded through the executable.
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

TEST_F(Grade, EndlessLoopTimesOutAndTheGraderFinishesSoonAfter) {
  RSB_SKIP_IF(Lacks(Need::EndlessLoops));
  const std::string h = HandIn("loop");
  PatchEndlessLoop(h, "n != 0");
  std::ofstream(root_ / "loop-rubric.json") << R"({"items": [
      {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
       "cases": {"sizes": [257]}}]})";
  const int timeout = 3;
  const fs::path trace = root_ / "trace.csv";
  const CommandResult r =
      RunGrade(h, fmt::format("--timeout {} --trace '{}'", timeout, trace.string()),
               (root_ / "loop-rubric.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("loop");
  const json& item = Item(report, "scan-naive");
  EXPECT_EQ(item["status"], "timeout") << item.dump(2);
  EXPECT_EQ(item["points"], 0);
  // The limit follows the suite's own time for the run (never below --timeout), and a timeout
  // is tried once more before it counts: the hand-in's child runs are two, each killed at its
  // deadline (--trace: status timeout), and nothing else of it runs on. (No bound on the
  // grader's wall time: the test must pass on a busy machine; a grader that never ends is
  // ctest's timeout.)
  EXPECT_GE(item["time_limit_s"].get<double>(), timeout);
  std::istringstream lines(ReadFile(trace));
  std::vector<std::string> handin;
  for (std::string line; std::getline(lines, line);)
    if (line.find(",handin-") != std::string::npos)
      handin.push_back(line.substr(line.rfind(',') + 1));
  EXPECT_EQ(handin, (std::vector<std::string>{"timeout", "timeout"})) << ReadFile(trace);
}

// A kernel that hangs in every case costs its item two runs to their limit, the task's list run
// and one more (not two a case group): the item's other groups are not run, and say why. The
// timeout states the item's one limit, `time_limit_s` (no run of its code gets less than the
// item's list run had).
TEST_F(Grade, AHangingKernelCostsItsItemTwoRunsToTheirLimit) {
  RSB_SKIP_IF(Lacks(Need::EndlessLoops));
  const std::string h = HandIn("hangs");
  PatchEndlessLoop(h, "n != 0");
  std::ofstream(root_ / "groups.json") << R"({"items": [
      {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
       "cases": [{"sizes": [257]}, {"sizes": [300], "scan_kinds": ["exclusive"]},
                 {"sizes": [1000]}]}]})";
  const fs::path trace = root_ / "trace.csv";
  const CommandResult r =
      RunGrade(h, "--timeout 3 --trace '" + trace.string() + "'", (root_ / "groups.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  const json item = Item(Report("hangs"), "scan-naive");
  EXPECT_EQ(item["status"], "timeout") << item.dump(2);
  // --trace: start, seconds, code (the hand-in's folder or "suite"), run, where, status.
  std::istringstream lines(ReadFile(trace));
  int timeouts = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.find(",suite,") == std::string::npos && line.size() > 8 &&
        line.compare(line.size() - 8, 8, ",timeout") == 0)
      ++timeouts;
  EXPECT_EQ(timeouts, 2) << ReadFile(trace);
  // A timeout is not run again under Oclgrind (its cost stays the two runs to their limit).
  EXPECT_EQ(ReadFile(trace).find(",oclgrind,"), std::string::npos) << ReadFile(trace);
  size_t notRun = 0;
  for (const auto& c : item["cases"])
    if (c["message"].get<std::string>().find("not run: the item's code already hung in the run "
                                             "of") != std::string::npos)
      ++notRun;
  EXPECT_GE(notRun, 2u) << item.dump(2);
  const std::string within =
      fmt::format("no answer within {:.3g} s (killed)", item["time_limit_s"].get<double>());
  EXPECT_NE(item["detail"].get<std::string>().find(within), std::string::npos) << item.dump(2);
  EXPECT_NE(item["cases"][0]["message"].get<std::string>().find(within), std::string::npos)
      << item.dump(2);
}

// A hand-in's grade depends on nothing beside it. Two endless hand-ins graded beside correct ones,
// as on a GPU: the children share a device lock (--speed-alone loop), which a kernel that never
// ends holds until it is killed, and while a timed loop waits for it alone no other run's case
// gets the device (on pocl a spinning kernel takes only its share of the cores, and a correct
// neighbour is slowed, never stopped: the lock is how it holds the device here). A run that timed
// out or failed while another hung is run again with the device to itself, its limit unchanged,
// before it is charged: every correct hand-in gets full points; each endless hand-in loses its
// scan item only, its list run killed twice (the two overlap: each is run again alone, hangs
// again and is not run a third time), and its report and the class page say so.
TEST_F(Grade, EndlessHandInsBesideCorrectOnesCostOnlyTheirOwnItems) {
  RSB_SKIP_IF(Lacks(Need::EndlessLoops));
  // One task: a hand-in's first child run is its case list, so the hanging ones' overlap.
  std::ofstream(root_ / "scan.json") << R"({"items": [
      {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
       "cases": {"sizes": [257, 4097]}},
      {"id": "scan-work-efficient", "task": "scan", "variant": "work-efficient", "points": 3,
       "cases": {"sizes": [1000, 4097]}, "speed_floor": 0.1}]})";
  const std::vector<std::string> names = {"hang1", "ann", "hang2", "bob", "cyd"};
  std::string handins;
  for (const auto& n : names) {
    handins += " " + HandIn(n);
    if (n.rfind("hang", 0) == 0)
      PatchEndlessLoop((root_ / n).string(), "n != 0");
  }
  // The endless hand-ins' work-efficient kernels built into the test run's kernel cache first:
  // on a busy machine their first build alone can take the 3 s limit of a correct item.
  const CommandResult warm = RunBench(
      "--check -q --task scan --variant work-efficient --size 1000,4097 --type uint --op sum "
      "--scan-kind inclusive --kernels '" +
      (root_ / "hang1" / "kernels").string() + "'");
  ASSERT_EQ(warm.status, 0) << warm.err;
  const fs::path trace = root_ / "trace.csv";
  const CommandResult r = RunGrade(
      handins,
      "--jobs 4 --speed-alone loop --sandbox none --timeout 3 --trace '" + trace.string() + "'",
      (root_ / "scan.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string runs = ReadFile(trace);
  for (size_t i = 0; i < names.size(); ++i) {
    const json report = Report(names[i]);
    if (names[i].rfind("hang", 0) != 0) {
      EXPECT_EQ(report["total"], 5) << report.dump(2) << runs;
      continue;
    }
    EXPECT_EQ(report["total"], 3) << report.dump(2);
    EXPECT_EQ(Item(report, "scan-work-efficient")["points"], 3) << report.dump(2);
    const json& scan = Item(report, "scan-naive");
    EXPECT_EQ(scan["status"], "timeout") << scan.dump(2);
    ASSERT_EQ(scan["ran_alone"].size(), 1u) << scan.dump(2) << runs;
    const std::string detail = scan["detail"];
    EXPECT_NE(detail.find(fmt::format("no answer within {:.3g} s (killed)",
                                      scan["time_limit_s"].get<double>())),
              std::string::npos)
        << detail;
    EXPECT_NE(detail.find("the case list of the task scan: run again with the device to itself, "
                          "its limit unchanged: its first run timed out while another run on "
                          "the device hung"),
              std::string::npos)
        << detail;
    // --trace: the hand-in's work folder is handin-<its place in the class>.
    std::istringstream lines(runs);
    int timeouts = 0;
    for (std::string line; std::getline(lines, line);)
      timeouts += line.find(fmt::format(",handin-{},", i)) != std::string::npos &&
                  line.compare(line.size() - 8, 8, ",timeout") == 0;
    EXPECT_EQ(timeouts, 2) << names[i] << "\n" << runs;
  }
  const std::string page = ReadFile(root_ / "out" / "index.md");
  EXPECT_NE(page.find("Run again with the device to itself"), std::string::npos) << page;
  for (const char* hang : {"hang1", "hang2"})
    EXPECT_NE(page.find(fmt::format("[{0}]({0}.md) (scan-naive", hang)), std::string::npos) << page;
  const std::string html = ReadFile(root_ / "out" / "index.html");
  EXPECT_NE(html.find("<p id=\"ran-alone\">Run again with the device to itself"), std::string::npos)
      << html;
}

TEST_F(Grade, CasesATimedOutChildDidNotReachAreTimeoutsNotErrors) {
  RSB_SKIP_IF(Lacks(Need::EndlessLoops));
  const std::string h = HandIn("slowbig");
  // Endless only at the largest size: the smaller cases' results are in before the kill.
  PatchEndlessLoop(h, "n == 4097");
  std::ofstream(root_ / "slow.json") << R"({"items": [
      {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
       "cases": {"sizes": [1, 257, 4097]}}]})";
  const CommandResult r = RunGrade(h, "--timeout 5", (root_ / "slow.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  const json item = Item(Report("slowbig"), "scan-naive");
  EXPECT_EQ(item["status"], "timeout") << item.dump(2);
  for (const auto& c : item["cases"]) {
    const std::string label = c["case"];
    EXPECT_EQ(c["status"], label.find("n=4097") != std::string::npos ? "timeout" : "passed")
        << item.dump(2);
  }
}

// An interrupt while the suite's own code is measured kills that child run: no fault of the
// suite's code, so no "does not pass" warning, only the interrupt (exit 130). The Oclgrind
// reference (seconds at this size) is where a killed run would otherwise be taken for one.
TEST_F(Grade, InterruptDuringAReferenceRunIsNotAFailingReference) {
  if (!HaveOclgrind())
    GTEST_SKIP() << "oclgrind is not installed (scripts/install-deps.sh installs it)";
  std::ofstream(root_ / "slow-oclgrind.json") << R"({"name": "a long Oclgrind reference",
    "items": [{"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
      "cases": [{"sizes": [257]}], "oclgrind": "deduct",
      "oclgrind_case": {"sizes": [65536], "local_size": 64}}]})";
  const std::string h = HandIn("ann");
  const fs::path err = root_ / "grader-err";
  const std::string selectors = DeviceSelectors();
  const fs::path tmp = root_ / "tmp";  // the grader's TMPDIR
  fs::create_directories(tmp);
  // Signalled a second after the grader says it starts the Oclgrind reference.
  const CommandResult r = RunCommand(fmt::format(
      "(TMPDIR='{}' '{}' grade{} --rubric '{}' --output-dir '{}'{} '{}' 2>'{}' & p=$!; "
      "for i in $(seq 600); do grep -q 'scan-naive on Oclgrind' '{}' && break; sleep 0.1; done; "
      "sleep 1; kill -INT $p; wait $p; s=$?; cat '{}' >&2; exit $s)",
      tmp.string(), RSB_BINARY, SandboxArg(), (root_ / "slow-oclgrind.json").string(),
      (root_ / "out").string(), selectors, h, err.string(), err.string(), err.string()));
  EXPECT_EQ(r.status, 130) << r.err;
  EXPECT_NE(r.err.find("scan-naive on Oclgrind"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("does not pass"), std::string::npos) << r.err;
  // The killed reference run's Oclgrind folder (in its TMPDIR) went with the grading's own.
  std::string left;
  for (const auto& e : fs::directory_iterator(tmp))
    left += " " + e.path().filename().string();
  EXPECT_EQ(left, "") << "left in the grader's TMPDIR";
}

// No temporary file outlives an interrupted grade: interrupted as soon as its temporary folder is
// there (a hand-in's host code: the kit's link and headers take seconds before any hand-in), and
// while two hanging hand-ins' runs wait to run again with the device to itself, it ends with 130
// and leaves nothing in its TMPDIR.
TEST_F(Grade, InterruptedGradeLeavesNothingInItsTmpdir) {
  RSB_SKIP_IF(Lacks(Need::EndlessLoops));
  const fs::path tmp = root_ / "tmp", err = root_ / "grader-err", trace = root_ / "trace.csv";
  fs::create_directories(tmp);
  const std::string host = HandInWithHostCode("host", {"Scan"});
  const std::string hang1 = HandIn("hang1"), hang2 = HandIn("hang2");
  PatchEndlessLoop(hang1, "n != 0");
  PatchEndlessLoop(hang2, "n != 0");
  const char* cache = std::getenv("POCL_CACHE_DIR");
  // Sent `signal` once `ready` (a shell test) holds. (SIGTERM, as a batch system stops a job,
  // where the grader's handler may not be installed yet: a shell's background job ignores
  // SIGINT until then, a terminal's Ctrl-C would end it.)
  auto interrupted = [&](const std::string& args, const std::string& ready, const char* signal) {
    return RunCommand(fmt::format(
        "(TMPDIR='{}' '{}' grade --sandbox none{} --rubric '{}' --output-dir '{}' -q{} {} 2>'{}' "
        "& p=$!; for i in $(seq 6000); do {} && break; sleep 0.01; done; kill -{} $p; wait $p; "
        "s=$?; cat '{}' >&2; exit $s)",
        tmp.string(), RSB_BINARY, cache ? fmt::format(" --kernel-cache '{}'", cache) : "",
        (root_ / "rubric.json").string(), (root_ / "out").string(), DeviceSelectors(), args,
        err.string(), ready, signal, err.string()));
  };
  auto left = [&] {
    std::string names;
    for (const auto& e : fs::directory_iterator(tmp))
      names += " " + e.path().filename().string();
    return names;
  };
  CommandResult r =
      interrupted(host, fmt::format("ls '{}' | grep -q rsb-grade", tmp.string()), "TERM");
  EXPECT_EQ(r.status, 130) << r.err;
  EXPECT_EQ(left(), "") << "left in the grader's TMPDIR\n" << r.err;
  r = interrupted(fmt::format("--jobs 2 --speed-alone loop --timeout 3 --trace '{}' {} {}",
                              trace.string(), hang1, hang2),
                  fmt::format("grep -q ',timeout$' '{}'", trace.string()), "INT");
  EXPECT_EQ(r.status, 130) << r.err;
  EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
  EXPECT_EQ(left(), "") << "left in the grader's TMPDIR\n" << r.err;
}

// The record of the runs on the device (Turns.h): a run that timed out beside a neighbour that
// timed out too is a suspect of the other; the one that ended first is looked at first (a run
// that timed out only because a neighbour held the device ends while that neighbour still runs),
// and once it passed alone it is no longer a hang for the other, which is then charged as it ran
// (not run again). A run that ended cleanly, or began after, is no neighbour's suspect.
TEST(GradeDeviceRuns, ARunThatPassedAloneIsNoLongerAHangForItsNeighbour) {
  grade::DeviceRuns runs;
  const size_t hang = runs.Begin();
  const size_t victim = runs.Begin();
  const size_t clean = runs.Begin();
  runs.End(clean, false, false);
  runs.End(victim, true, true);
  EXPECT_FALSE(runs.NeighbourHung(victim));  // the hang still runs: not known yet
  std::atomic<bool> neighboursEnded{false};
  std::thread waits([&] {
    runs.AwaitNeighbours(victim);
    neighboursEnded = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(neighboursEnded);
  runs.End(hang, true, true);
  waits.join();
  EXPECT_TRUE(runs.NeighbourHung(victim));
  EXPECT_TRUE(runs.NeighbourHung(hang));
  const size_t later = runs.Begin();
  runs.End(later, true, true);
  EXPECT_FALSE(runs.NeighbourHung(later)) << "began after the others ended";
  runs.Settle(later, true);
  std::atomic<bool> hangsTurn{false};
  std::thread after([&] {
    runs.AwaitEarlier(hang);
    hangsTurn = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(hangsTurn) << "the victim, which ended first, goes first";
  runs.Settle(victim, false);  // it passed when run again alone
  after.join();
  EXPECT_FALSE(runs.NeighbourHung(hang));
  runs.Settle(hang, true);
}

}  // namespace
}  // namespace rsb::test
