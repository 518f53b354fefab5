// `reduce-scan-bench grade`, Oclgrind's diagnosis: a race only Oclgrind sees, a failing case run
// again under Oclgrind so the report names the line (and a helper's callers), the report without
// Oclgrind.
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

TEST_F(Grade, ARaceOnlyOclgrindSeesCostsTheItemUnderDeductAndIsANoteUnderReport) {
  if (!HaveOclgrind())
    GTEST_SKIP() << "oclgrind is not installed (scripts/install-deps.sh installs it)";
  const std::string h = HandIn("race");
  // Blelloch's down-sweep without its barriers: pocl runs a work-group's work-items in turn and
  // gets the right answer; Oclgrind reports the race.
  Patch(ScanCl(h), "    barrier(CLK_LOCAL_MEM_FENCE);\n    if (lid < active) {",
        "    if (lid < active) {");
  std::ofstream(root_ / "race.json") << R"({"items": [
      {"id": "deduct", "task": "scan", "variant": "work-efficient", "points": 4,
       "cases": {"sizes": [1, 333], "local_size": 16}, "oclgrind": "deduct"},
      {"id": "report", "task": "scan", "variant": "work-efficient", "points": 4,
       "cases": {"sizes": [1, 333], "local_size": 16}, "oclgrind": "report"}]})";
  const CommandResult r = RunGrade(h, "", (root_ / "race.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("race");
  const json& deduct = Item(report, "deduct");
  EXPECT_EQ(deduct["status"], "failed") << deduct.dump(2);
  EXPECT_EQ(deduct["points"], 0) << deduct.dump(2);
  EXPECT_NE(deduct["detail"].get<std::string>().find("oclgrind: data-race at Scan.cl:"),
            std::string::npos)
      << deduct.dump(2);
  EXPECT_FALSE(deduct["oclgrind"]["diagnostics"].empty()) << deduct.dump(2);
  const json& note = Item(report, "report");
  EXPECT_EQ(note["status"], "passed") << note.dump(2);
  EXPECT_EQ(note["points"], 4) << note.dump(2);
  EXPECT_NE(note["detail"].get<std::string>().find("note (no points deducted): oclgrind:"),
            std::string::npos)
      << note.dump(2);
}

// A case that fails on the device is run once more, under Oclgrind, and its item's detail (the
// report's cell, the JSON's detail) names the line before the device's message; the points stay.
TEST_F(Grade, AFailingCaseIsRunAgainUnderOclgrindSoTheReportNamesTheLine) {
  if (!HaveOclgrind())
    GTEST_SKIP() << "oclgrind is not installed (scripts/install-deps.sh installs it)";
  const std::string h = HandIn("past");
  const size_t line = PatchWritePastTheEnd(h);
  std::ofstream(root_ / "past.json") << R"({"items": [
      {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
       "cases": {"sizes": [257, 1000]}}]})";
  const fs::path trace = root_ / "trace.csv";
  const CommandResult r =
      RunGrade(h, "--trace '" + trace.string() + "'", (root_ / "past.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("past");
  const json& item = Item(report, "scan-naive");
  EXPECT_EQ(item["status"], "failed") << item.dump(2);
  EXPECT_EQ(item["points"], 0) << item.dump(2);
  const std::string named =
      fmt::format("oclgrind: invalid-write at Scan.cl:{} in ScanNaiveStep", line);
  const std::string detail = item["detail"];
  EXPECT_EQ(detail.rfind("uint sum inclusive n=257: " + named, 0), 0u) << item.dump(2);
  EXPECT_NE(detail.find("\non the device: uint sum inclusive n=257: "), std::string::npos)
      << item.dump(2);
  EXPECT_TRUE(item["first_wrong"].is_object()) << item.dump(2);  // the device's, still there
  EXPECT_EQ(item["diagnosis"]["case"], "uint sum inclusive n=257") << item.dump(2);
  EXPECT_EQ(item["diagnosis"]["diagnostics"][0]["line"], line) << item.dump(2);
  EXPECT_TRUE(report["diagnosis_not_run"].is_null()) << report.dump(2);
  const std::string md = ReadFile(root_ / "out" / "past.md");
  EXPECT_NE(md.find("| scan-naive | scan | naive | failed | uint sum inclusive n=257: " + named),
            std::string::npos)
      << md;
  // One Oclgrind run of the hand-in's code for the item, whatever its cases.
  std::istringstream lines(ReadFile(trace));
  int runs = 0;
  for (std::string l; std::getline(lines, l);)
    runs += l.find(",oclgrind,") != std::string::npos && l.find(",suite,") == std::string::npos;
  EXPECT_EQ(runs, 1) << ReadFile(trace);
}

// A read past the end inside a helper of the kernel file (the naive scan's LoadShifted): the
// item's detail names the helper's line and the kernel's lines that call it.
TEST_F(Grade, AReadPastTheEndInAHelperNamesItsLineAndItsCallers) {
  if (!HaveOclgrind())
    GTEST_SKIP() << "oclgrind is not installed (scripts/install-deps.sh installs it)";
  const std::string h = HandIn("helper");
  Patch(ScanCl(h), "  T v = LoadShifted(src, i, shift);",
        "  T v = LoadShifted(src, i + 1, shift);");
  size_t helper = 0, call = 0, number = 0;
  std::istringstream in(ReadFile(ScanCl(h)));
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.rfind("inline T LoadShifted(", 0) == 0)
      helper = number + 1;  // its one line of loads
    if (line == "  T v = LoadShifted(src, i + 1, shift);")
      call = number;
  }
  ASSERT_TRUE(helper && call) << ReadFile(ScanCl(h));
  std::ofstream(root_ / "helper.json") << R"({"items": [
      {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
       "cases": {"sizes": [257]}}]})";
  ASSERT_EQ(RunGrade(h, "", (root_ / "helper.json").string()).status, 0);
  const json report = Report("helper");
  const json& item = Item(report, "scan-naive");
  EXPECT_EQ(item["points"], 0) << item.dump(2);
  EXPECT_NE(item["detail"].get<std::string>().find(
                fmt::format("oclgrind: invalid-read at Scan.cl:{} in ScanNaiveStep (LoadShifted, "
                            "called at Scan.cl:{}",
                            helper, call)),
            std::string::npos)
      << item.dump(2);
}

// Where there is no oclgrind, the report says once that the failing case was not diagnosed, and
// why; the item's detail is the device's alone.
TEST_F(Grade, WithoutOclgrindTheReportSaysOnceThatTheDiagnosisWasNotRun) {
  const std::string h = HandIn("past");
  PatchWritePastTheEnd(h);
  std::ofstream(root_ / "past.json") << R"({"items": [
      {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
       "cases": {"sizes": [257]}},
      {"id": "scan-naive-exclusive", "task": "scan", "variant": "naive", "points": 2,
       "cases": {"sizes": [257], "scan_kinds": ["exclusive"]}}]})";
  // (Without the sandbox: the PATH's folder is in the class folder, which it hides.)
  const char* cache = std::getenv("POCL_CACHE_DIR");
  const CommandResult r = RunCommand(
      fmt::format("PATH='{}' '{}' grade --sandbox none{} --rubric '{}' --output-dir '{}'{} {}",
                  PathWithoutOclgrind().string(), RSB_BINARY,
                  cache ? fmt::format(" --kernel-cache '{}'", cache) : "",
                  (root_ / "past.json").string(), (root_ / "out").string(), DeviceSelectors(), h));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string why = "no oclgrind on PATH";
  const json report = Report("past");
  EXPECT_NE(report["diagnosis_not_run"].get<std::string>().find(why), std::string::npos)
      << report.dump(2);
  for (const char* id : {"scan-naive", "scan-naive-exclusive"}) {
    const json& item = Item(report, id);
    EXPECT_EQ(item["points"], 0) << item.dump(2);
    EXPECT_EQ(item["diagnosis"]["ran"], false) << item.dump(2);
    EXPECT_EQ(item["detail"].get<std::string>().find("oclgrind"), std::string::npos)
        << item.dump(2);
  }
  const std::string md = ReadFile(root_ / "out" / "past.md");
  const std::string line =
      "Oclgrind's diagnosis of the cases that failed or crashed: not run: " + why;
  EXPECT_NE(md.find(line), std::string::npos) << md;
  EXPECT_EQ(md.find(line), md.rfind(line)) << md;  // once, not per item
  EXPECT_NE(r.err.find("not run again under Oclgrind: " + why), std::string::npos) << r.err;
}

}  // namespace
}  // namespace rsb::test
