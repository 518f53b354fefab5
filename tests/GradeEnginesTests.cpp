// `reduce-scan-bench grade`, Gradescope's engine: --format gradescope's results.json and
// grading/gradescope/run_autograder on a scratch root laid out as Gradescope lays it out.
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

// --format gradescope and grading/gradescope/run_autograder: Gradescope's results.json.

// A small rubric (two items with titles, no speed floor: a few seconds a grading run).
std::string GradescopeRubric() {
  return R"({
    "name": "gradescope test rubric",
    "items": [
      {"id": "scan-naive", "title": "Naive scan", "task": "scan", "variant": "naive",
       "points": 2, "cases": {"sizes": [1, 257], "scan_kinds": ["inclusive"]}},
      {"id": "reduction-sequential", "title": "Sequential addressing", "task": "reduction",
       "variant": "sequential", "points": 3, "cases": {"sizes": [1000]}}
    ]})";
}

// The naive scan reads one element too far on: index 1 is the first wrong one.
void BreakNaiveScan(const std::string& scanCl) {
  Patch(scanCl, "v = OP(LoadShifted(src, i - offset, shift), v);",
        "v = OP(LoadShifted(src, i - offset + 1, shift), v);");
}

// Gradescope's results.json of a hand-in with all points (perfect) or with the naive scan
// broken: score 3 of 5.
void ExpectGradescopeResults(const json& r, bool perfect) {
  EXPECT_EQ(r["score"], perfect ? 5 : 3) << r.dump(2);
  EXPECT_EQ(r["visibility"], "visible");
  EXPECT_NE(r["output"].get<std::string>().find("gradescope test rubric"), std::string::npos)
      << r.dump(2);
  ASSERT_EQ(r["tests"].size(), 2u) << r.dump(2);
  const json& scan = r["tests"][0];
  const json& seq = r["tests"][1];
  EXPECT_EQ(scan["name"], "scan-naive: Naive scan");
  EXPECT_EQ(scan["score"], perfect ? 2 : 0);
  EXPECT_EQ(scan["max_score"], 2);
  EXPECT_EQ(scan["status"], perfect ? "passed" : "failed");
  EXPECT_EQ(scan["visibility"], "visible");
  EXPECT_EQ(scan["output_format"], "md");
  const std::string out = scan["output"].get<std::string>();
  if (perfect) {
    EXPECT_EQ(out.find("First wrong index"), std::string::npos) << out;
  } else {
    EXPECT_NE(out.find("**failed**: 0 / 2 points"), std::string::npos) << out;
    EXPECT_NE(out.find("First wrong index 1: expected "), std::string::npos) << out;
    EXPECT_NE(out.find("wrong result at index 1"), std::string::npos) << out;
  }
  EXPECT_EQ(seq["name"], "reduction-sequential: Sequential addressing");
  EXPECT_EQ(seq["score"], 3);
  EXPECT_EQ(seq["max_score"], 3);
  EXPECT_EQ(seq["status"], "passed");
  EXPECT_EQ(seq["visibility"], "visible");
}

TEST_F(Grade, GradescopeFormatWritesResultsJsonPerItem) {
  std::ofstream(root_ / "gs.json") << GradescopeRubric();
  const std::string rubric = (root_ / "gs.json").string();
  const std::string perfect = HandIn("perfect");
  CommandResult r = RunGrade(perfect, "--format gradescope", rubric);
  ASSERT_EQ(r.status, 0) << r.err;
  ExpectGradescopeResults(json::parse(ReadFile(root_ / "out" / "results.json")), true);
  EXPECT_TRUE(fs::is_regular_file(root_ / "out" / "perfect.md")) << "the usual reports too";

  const std::string broken = HandIn("broken");
  BreakNaiveScan(ScanCl(broken));
  r = RunGrade(broken, "--format gradescope", rubric);
  ASSERT_EQ(r.status, 0) << r.err;
  const json b = json::parse(ReadFile(root_ / "out" / "results.json"));
  ExpectGradescopeResults(b, false);
  // The item's output is the .md report's details section of the item.
  const std::string md = ReadFile(root_ / "out" / "broken.md");
  const std::string out = b["tests"][0]["output"];
  const std::string details = out.substr(out.find("First wrong index"));
  EXPECT_NE(md.find(details), std::string::npos) << md << "\n---\n" << out;

  // Nothing gradable (no kernels/): score 0, the reason up front.
  fs::remove_all(broken + "/kernels");
  r = RunGrade(broken, "--format gradescope", rubric);
  ASSERT_EQ(r.status, 0) << r.err;
  const json none = json::parse(ReadFile(root_ / "out" / "results.json"));
  EXPECT_EQ(none["score"], 0);
  EXPECT_EQ(none["output"].get<std::string>().rfind("Not graded: the hand-in has no kernels/", 0),
            0u)
      << none.dump(2);
}

TEST_F(Grade, GradescopeFormatTakesExactlyOneHandIn) {
  const std::string a = HandIn("a"), b = HandIn("b");
  CommandResult r = RunGrade(a + " " + b, "--format gradescope");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--format gradescope: 2 hand-ins given; allowed: exactly one HANDIN"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(root_ / "out")) << "nothing written on bad input";
  fs::create_directories(root_ / "results" / "kernels");
  r = RunGrade((root_ / "results").string() + "/", "--format gradescope");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("its report results.json would be Gradescope's"), std::string::npos)
      << r.err;
  r = RunGrade(a, "--format csv");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--format"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gradescope"), std::string::npos) << r.err;
}

// grading/gradescope/run_autograder on a scratch root laid out as Gradescope lays it out:
// source/grading/rubric.json (the rubric it grades with by default), submission/ as the student
// uploaded it, results/ (made by it); the suite's binary as RSB_BINARY.
class Gradescope : public Grade {
 protected:
  void SetUp() override {
    Grade::SetUp();
    ag_ = root_ / "autograder";
    fs::create_directories(ag_ / "source" / "grading");
    std::ofstream(ag_ / "source" / "grading" / "rubric.json") << GradescopeRubric();
  }
  // Runs run_autograder on what is in submission/ now; returns results/results.json.
  json RunAutograder(const std::string& gradeArgs = "") {
    std::string args = gradeArgs;
    if (!std::string(getenv("RSB_TEST_PLATFORM") ? getenv("RSB_TEST_PLATFORM") : "").empty())
      args += fmt::format(" --platform '{}'", getenv("RSB_TEST_PLATFORM"));
    if (!std::string(getenv("RSB_TEST_DEVICE") ? getenv("RSB_TEST_DEVICE") : "").empty())
      args += fmt::format(" --device '{}'", getenv("RSB_TEST_DEVICE"));
    // The test run's kernel cache (ctest sets it): the hand-ins' runs compile no kernel anew
    // that another test compiled.
    if (const char* cache = std::getenv("POCL_CACHE_DIR"))
      args += fmt::format(" --kernel-cache '{}'", cache);
    fs::remove_all(ag_ / "results");
    const CommandResult r = RunCommand(fmt::format(
        "AUTOGRADER_ROOT='{}' RSB_BINARY='{}' RSB_GRADE_ARGS=\"{}\" '{}/grading/gradescope/"
        "run_autograder'",
        ag_.string(), RSB_BINARY, args, RSB_SOURCE_DIR));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    const fs::path results = ag_ / "results" / "results.json";
    EXPECT_TRUE(fs::is_regular_file(results)) << r.out << r.err;
    return fs::is_regular_file(results) ? json::parse(ReadFile(results)) : json::object();
  }
  // submission/ afresh, holding the hand-in `h` as the handin target packs it (kernels/, src/,
  // HANDIN.txt) in handin.tar.gz, or its files loose, side by side.
  void Submit(const std::string& h, bool tarball) {
    fs::remove_all(ag_ / "submission");
    fs::create_directories(ag_ / "submission");
    std::ofstream(fs::path(h) / "HANDIN.txt") << "user: student\n";
    if (tarball) {
      const CommandResult c =
          RunCommand(fmt::format("tar czf '{}/handin.tar.gz' -C '{}' kernels src HANDIN.txt",
                                 (ag_ / "submission").string(), h));
      ASSERT_EQ(c.status, 0) << c.err;
      return;
    }
    for (const auto& e : fs::recursive_directory_iterator(h))
      if (e.is_regular_file())
        fs::copy_file(e.path(), ag_ / "submission" / e.path().filename());
  }
  fs::path ag_;
};

TEST_F(Gradescope, RunAutograderGradesATarballOrLooseFilesAndSaysWhyWhenItCannot) {
  const std::string perfect = HandIn("perfect");
  CopySuiteSources(perfect, {"Scan", "Reduction"});
  Submit(perfect, true);
  json r = RunAutograder();
  ExpectGradescopeResults(r, true);
  const std::string said = r["output"];
  EXPECT_NE(said.find("Graded files (from handin.tar.gz): kernels/"), std::string::npos) << said;
  EXPECT_NE(said.find("kernels/Common.clh"), std::string::npos) << said;
  EXPECT_NE(said.find("src/tasks/CScanTask.cpp"), std::string::npos) << said;
  EXPECT_EQ(said.find("HANDIN.txt"), std::string::npos) << said;

  // Only the kernels, loose (a student may upload just the .cl files).
  const std::string broken = HandIn("broken");
  BreakNaiveScan(ScanCl(broken));
  Submit(broken, false);
  std::ofstream(ag_ / "submission" / "notes.txt") << "not graded";
  r = RunAutograder();
  ExpectGradescopeResults(r, false);
  EXPECT_NE(r["output"].get<std::string>().find("kernels/Scan.cl (from Scan.cl)"),
            std::string::npos)
      << r.dump(2);
  EXPECT_NE(r["output"].get<std::string>().find("Ignored: notes.txt"), std::string::npos);

  // The grader refuses (a usage error, exit 2): score 0 and its error for the student.
  r = RunAutograder("--timeout 0");
  EXPECT_EQ(r["score"], 0) << r.dump(2);
  EXPECT_EQ(r["tests"], json::array());
  EXPECT_NE(r["output"].get<std::string>().find("the grader exited with 2"), std::string::npos)
      << r.dump(2);
  EXPECT_NE(r["output"].get<std::string>().find("error: --timeout"), std::string::npos)
      << r.dump(2);

  // Nothing to grade at all.
  fs::remove_all(ag_ / "submission");
  fs::create_directories(ag_ / "submission");
  std::ofstream(ag_ / "submission" / "report.pdf") << "%PDF";
  r = RunAutograder();
  EXPECT_EQ(r["score"], 0);
  EXPECT_NE(r["output"].get<std::string>().find("Nothing to grade"), std::string::npos)
      << r.dump(2);
  EXPECT_NE(r["output"].get<std::string>().find("report.pdf"), std::string::npos);
}

}  // namespace
}  // namespace rsb::test
