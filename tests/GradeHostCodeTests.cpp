// `reduce-scan-bench grade`, hand-ins with host code (HostBuild, HandinFiles): built against the
// hand-in kit once per distinct source, errors as the task's report, a class made from the
// hand-out as students make it. Graded through the executable.
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

// A compile error in the hand-in's CScanTask.cpp costs the scan items only: the reduction items
// run the hand-in's own (compiled) reduction code, in a binary of their own.
TEST_F(Grade, HostCodeThatDoesNotCompileIsItsTasksReport) {
  const std::string h = HandInWithHostCode("hostcode", {"Reduction"});
  std::ofstream(h + "/src/tasks/CScanTask.cpp") << "#include \"tasks/CScanTask.h\"\n"
                                                   "namespace rsb {\n"
                                                   "int broken( {\n"
                                                   "}\n";
  const CommandResult r = RunGrade(h);
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("hostcode");
  const json& scan = Item(report, "scan-naive");
  EXPECT_EQ(scan["status"], "error") << scan.dump(2);
  const std::string detail = scan["detail"];
  // The compiler's first message, file:line (the whole log is the report's, once: below).
  EXPECT_EQ(detail.rfind("host code does not build: src/tasks/CScanTask.cpp:", 0), 0u)
      << scan.dump(2);
  EXPECT_NE(detail.substr(0, detail.find('\n')).find(": error: "), std::string::npos)
      << scan.dump(2);
  EXPECT_EQ(detail.find(fs::temp_directory_path().string()), std::string::npos)
      << "the grader's temporary paths in: " << detail;
  const json& host = report["host_code"]["tasks"];
  EXPECT_FALSE(host["scan"]["built"].get<bool>()) << report["host_code"].dump(2);
  EXPECT_TRUE(host["reduction"]["built"].get<bool>()) << report["host_code"].dump(2);
  EXPECT_EQ(host["reduction"]["compiled"],
            json({"src/tasks/CReductionTask.cpp", "src/tasks/Tasks.cpp"}));
  EXPECT_EQ(Item(report, "reduction-sequential")["status"], "passed");
  EXPECT_EQ(report["total"], 3);
  // The compiler's log once, in the report's section of the task's host code, not in each item.
  const std::string log = host["scan"]["log"];
  const std::string md = ReadFile(root_ / "out" / "hostcode.md");
  ASSERT_NE(log.find("CScanTask.cpp:3:"), std::string::npos) << log;
  EXPECT_EQ(detail.find(log), std::string::npos) << detail;
  const std::string section = "## Host code of scan (does not build)\n\n```\n" + log;
  const size_t at = md.find(section);
  ASSERT_NE(at, std::string::npos) << md;
  EXPECT_EQ(md.find(log), at + section.size() - log.size()) << "the log before its section:\n"
                                                            << md;
  EXPECT_EQ(md.find(log, at + section.size()), std::string::npos) << "the log twice in:\n" << md;
}

// The student's hand-in packed once from the hand-out for the tests that unpack it (the ctest
// fixture grade-student-handin): the kernels, every task source as the student touched it, and
// a HANDIN.txt naming the task API.
TEST_F(GradeShared, StudentHandinIsPackedOnceFromTheHandout) {
  const fs::path archive = StudentHandinArchive(true);
  const CommandResult c = RunCommand(fmt::format("tar tzf '{}'", archive.string()));
  ASSERT_EQ(c.status, 0) << c.err;
  for (const char* f : {"kernels/Reduction.cl", "kernels/Scan.cl", "src/tasks/CScanTask.cpp",
                        "src/tasks/CReductionTask.h", "HANDIN.txt"})
    EXPECT_NE(c.out.find(std::string(f) + "\n"), std::string::npos) << f << " in:\n" << c.out;
  const fs::path h = StudentHandin("student");
  EXPECT_EQ(ReadFile(h / "src" / "tasks" / "CScanTask.cpp").rfind("// the student's ", 0), 0u);
  EXPECT_EQ(ReadFile(h / "kernels" / "Scan.cl"),
            ReadFile(fs::path(RSB_SOURCE_DIR) / "kernels" / "Scan.cl"));
}

// A hand-in made as students make it: the hand-out (scripts/make-handout) with the course work
// done (here: the solutions, each file touched by the student), configured, `--target handin`,
// the archive unpacked into the class folder. Its host code is compiled against the kit, in
// seconds (the old full build of the suite took 298 s on 2 cores).
TEST_F(Grade, StudentHandinWithHostCodeGetsFullPointsBuiltInSeconds) {
  const fs::path h = StudentHandin("student");
  const CommandResult r = RunGrade(h.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("student");
  EXPECT_EQ(report["total"], 5) << report.dump(2);
  const json& host = report["host_code"];
  for (const char* task : {"scan", "reduction"}) {
    EXPECT_TRUE(host["tasks"][task]["built"].get<bool>()) << host.dump(2);
    EXPECT_FALSE(host["tasks"][task]["compiled"].empty()) << host.dump(2);
  }
  EXPECT_FALSE(host["tasks"].contains("convolution")) << "no convolution item: not built";
  // The kit's headers precompiled, once for the kit (the compiler took them: else every compile
  // parses them again, silently slower).
  EXPECT_TRUE(fs::is_regular_file(TestKit() / "pch" / "STAMP"))
      << "no precompiled header kept in " << TestKit();
  const double seconds = host["seconds"];
  std::cout << fmt::format("[ host build ] scan and reduction (4 compiles, 2 links): {:.1f} s\n",
                           seconds);
  RecordProperty("host_build_seconds", fmt::format("{:.1f}", seconds));  // a figure, not a bound
  const std::string md = ReadFile(root_ / "out" / "student.md");
  EXPECT_NE(md.find("scan built (src/tasks/CScanTask.cpp, src/tasks/Tasks.cpp"), std::string::npos)
      << md;
}

// Hand-ins that bring the same task source (and the same headers) are compiled once a grading
// run: the later ones take the object and the compiler's warnings of the first, and say so; a
// hand-in with an edit of its own is compiled.
TEST_F(Grade, IdenticalHostCodeIsCompiledOnceAGradingRunAndSaysSo) {
  const std::string a = HandIn("a"), b = HandIn("b"), c = HandIn("c");
  for (const std::string& h : {a, b, c}) {
    CopySuiteSources(h, {"Scan"});
    Patch(h + "/src/tasks/CScanTask.cpp", "const size_t offset = size_t(1) << s;",
          "const size_t offset = size_t(1) << s;\n      int unusedByTheStudent = 0;");
  }
  Patch(c + "/src/tasks/CScanTask.cpp", "int unusedByTheStudent = 0;",
        "int unusedByTheStudent = 0;  // c's own");
  const CommandResult r = RunGrade(a + " " + b + " " + c, "--jobs 1");
  ASSERT_EQ(r.status, 0) << r.err;
  const json file = json::array({"src/tasks/CScanTask.cpp"});
  for (const char* name : {"a", "b", "c"}) {
    const json report = Report(name);
    const json& scan = report["host_code"]["tasks"]["scan"];
    EXPECT_EQ(scan["compiled"], file) << name << " " << scan.dump(2);
    EXPECT_EQ(scan["reused"], std::string(name) == "b" ? file : json::array()) << name;
    EXPECT_NE(scan["log"].get<std::string>().find("unusedByTheStudent"), std::string::npos)
        << name << ": the compiler's warning, the reused object's too " << scan.dump(2);
    EXPECT_EQ(Item(report, "scan-naive")["points"], 2) << name;
  }
  EXPECT_NE(ReadFile(root_ / "out" / "b.md").find("from an identical compile of this run"),
            std::string::npos);
}

// A wrong host-side offset in the hand-in's scan plan: the scan item fails validation, the
// reduction item (the hand-in's untouched reduction sources: the suite's binary) keeps its points.
TEST_F(Grade, WrongOffsetInTheHandinsScanPlanCostsOnlyTheScanItems) {
  const std::string h = HandIn("offset");
  CopySuiteSources(h, {"Scan", "Reduction"});
  Patch(h + "/src/tasks/CScanTask.cpp", "const size_t offset = size_t(1) << s;",
        "const size_t offset = size_t(2) << s;");
  const CommandResult r = RunGrade(h);
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("offset");
  const json& scan = Item(report, "scan-naive");
  EXPECT_EQ(scan["status"], "failed") << scan.dump(2);
  EXPECT_EQ(scan["points"], 0);
  EXPECT_TRUE(scan["first_wrong"].is_object()) << scan.dump(2);
  EXPECT_EQ(Item(report, "reduction-sequential")["points"], 3);
  const json& host = report["host_code"]["tasks"];
  EXPECT_EQ(host["scan"]["compiled"], json({"src/tasks/CScanTask.cpp"}))
      << "its header is the suite's";
  EXPECT_TRUE(host["reduction"]["built"].get<bool>());
  EXPECT_TRUE(host["reduction"]["compiled"].empty()) << "the suite's own sources: nothing compiled";
}

// A kit that is not there or broken is the grader's error: exit 3 before any hand-in is graded,
// naming the kit and what is wrong.
TEST_F(Grade, MissingOrBrokenHandinKitIsTheGradersErrorBeforeGrading) {
  const std::string h = HandInWithHostCode("kitless", {"Scan"});
  const fs::path empty = root_ / "empty-kit";
  fs::create_directories(empty);
  CommandResult r = RunGrade(h, fmt::format("--handin-kit '{}'", empty.string()));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("hand-in kit '" + empty.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cmake --build"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "out" / "kitless.json")) << "graded despite no kit";

  const fs::path lacking = root_ / "lacking-kit";
  fs::copy(SuiteKit(), lacking, fs::copy_options::recursive);
  fs::remove(lacking / "obj" / "CScanTask.o");
  r = RunGrade(h, fmt::format("--handin-kit '{}'", lacking.string()));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("obj/CScanTask.o"), std::string::npos) << r.err;

  std::ofstream(lacking / "obj" / "CScanTask.o") << "not an object file\n";
  r = RunGrade(h, fmt::format("--handin-kit '{}'", lacking.string()));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("is broken"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("CScanTask.o"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "out" / "kitless.json"));

  // Hand-ins without host code need no kit.
  r = RunGrade(HandIn("kernels-only"), fmt::format("--handin-kit '{}'", empty.string()));
  EXPECT_EQ(r.status, 0) << r.err;
}

// `cmake --install`: the installed binary builds hand-ins' host code against its installed kit,
// without the build or source tree.
TEST_F(Grade, InstalledTreeBuildsHostCodeAgainstItsInstalledKit) {
  const fs::path prefix = root_ / "prefix";
  CommandResult c =
      RunCommand(fmt::format("cmake --install '{}' --prefix '{}'",
                             fs::path(RSB_BINARY).parent_path().string(), prefix.string()));
  ASSERT_EQ(c.status, 0) << c.out << c.err;
  // (The reduction's source edited, its header the suite's: one compile, not Tasks.cpp too.)
  const std::string h = HandIn("installed");
  CopySuiteSources(h, {"Reduction"});
  std::ofstream(h + "/src/tasks/CReductionTask.cpp", std::ios::app) << "// edited by the student\n";
  const std::string selectors = DeviceSelectors();
  const char* cache = std::getenv("POCL_CACHE_DIR");
  const CommandResult r = RunCommand(fmt::format(
      "'{}/bin/reduce-scan-bench' grade{}{} --rubric '{}' --output-dir '{}' -q{} '{}'",
      prefix.string(), SandboxArg(), cache ? fmt::format(" --kernel-cache '{}'", cache) : "",
      (root_ / "rubric.json").string(), (root_ / "out").string(), selectors, h));
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("installed");
  EXPECT_TRUE(report["host_code"]["tasks"]["reduction"]["built"].get<bool>())
      << report["host_code"].dump(2);
  EXPECT_EQ(report["host_code"]["tasks"]["reduction"]["compiled"],
            json({"src/tasks/CReductionTask.cpp"}))
      << report["host_code"].dump(2);
  EXPECT_EQ(report["total"], 5) << report.dump(2);
}

// Run from a build tree whose hand-in kit is missing (a plain build makes none), the grader
// builds it once with the tree's CMake (`cmake --build TREE --target handin-kit`), says so, and
// builds the hand-in's host code against it. TREE: a project whose handin-kit target copies the
// suite's kit (the target itself is built by the suite's own build), and the suite's binary.
TEST_F(Grade, BuildTreeWithoutItsKitBuildsItOnceAndSaysSo) {
  const fs::path tree = root_ / "tree";
  fs::create_directories(tree);
  std::ofstream(root_ / "CMakeLists.txt")
      << "cmake_minimum_required(VERSION 3.18)\nproject(tree NONE)\n"
      << fmt::format(
             "add_custom_target(handin-kit COMMAND ${{CMAKE_COMMAND}} -E copy_directory "
             "'{}' ${{CMAKE_BINARY_DIR}}/handin-kit)\n",
             SuiteKit().string());
  CommandResult c =
      RunCommand(fmt::format("cmake -S '{}' -B '{}' >/dev/null", root_.string(), tree.string()));
  ASSERT_EQ(c.status, 0) << c.err;
  fs::copy_file(RSB_BINARY, tree / "reduce-scan-bench");
  fs::permissions(tree / "reduce-scan-bench", fs::perms::owner_exec, fs::perm_options::add);
  const std::string h = HandIn("treeless");
  CopySuiteSources(h, {"Scan", "Reduction"});
  std::ofstream(h + "/src/tasks/CScanTask.cpp", std::ios::app) << "// edited by the student\n";
  const char* cache = std::getenv("POCL_CACHE_DIR");
  const std::string grade =
      fmt::format("'{}' grade{}{} --rubric '{}' --output-dir '{}' -q{} '{}'",
                  (tree / "reduce-scan-bench").string(), SandboxArg(),
                  cache ? fmt::format(" --kernel-cache '{}'", cache) : "",
                  (root_ / "rubric.json").string(), (root_ / "out").string(), DeviceSelectors(), h);
  const std::string building = "no hand-in kit in this build tree yet: building it once";
  CommandResult r = RunCommand(grade);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(building + " (cmake --build " + tree.string() + " --target handin-kit)"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::is_regular_file(tree / "handin-kit" / "MANIFEST"));
  const json host = Report("treeless")["host_code"]["tasks"];
  EXPECT_TRUE(host["scan"]["built"].get<bool>()) << host.dump(2);
  EXPECT_EQ(host["scan"]["compiled"], json({"src/tasks/CScanTask.cpp"})) << host.dump(2);
  EXPECT_TRUE(host["reduction"]["built"].get<bool>()) << host.dump(2);
  EXPECT_TRUE(host["reduction"]["compiled"].empty()) << host.dump(2);
  // The next run finds it. (Its reduction item alone: the hand-in's reduction sources, the
  // suite's own, send the grader to the kit as the scan's do, with nothing to compile again.)
  fs::remove_all(root_ / "out");
  r = RunCommand(grade + " --items reduction-sequential");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find(building), std::string::npos) << r.err;
  const json again = Report("treeless")["host_code"]["tasks"];
  EXPECT_TRUE(again["reduction"]["built"].get<bool>()) << again.dump(2);
  EXPECT_FALSE(again.contains("scan")) << again.dump(2);
}

TEST_F(Grade, MissingRequiredHostCodeCostsOnlyItsTasksItems) {
  const std::string h = HandIn("nohost");
  std::ofstream(root_ / "req.json") << R"({"required_files": ["src/tasks/CScanTask.cpp"],
      "items": [
        {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
         "cases": {"sizes": [257]}},
        {"id": "reduction-sequential", "task": "reduction", "variant": "sequential",
         "points": 3, "cases": {"sizes": [1000]}}]})";
  const CommandResult r = RunGrade(h, "", (root_ / "req.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("nohost");
  const json& scan = Item(report, "scan-naive");
  EXPECT_EQ(scan["points"], 0) << scan.dump(2);
  EXPECT_NE(scan["detail"].get<std::string>().find("lacks src/tasks/CScanTask.cpp"),
            std::string::npos)
      << scan.dump(2);
  EXPECT_EQ(Item(report, "reduction-sequential")["points"], 3) << report.dump(2);
}

// A class made as a course makes it: every hand-in unpacked from the handin target's archive of
// the hand-out with the solutions written in, some then broken as students break them, graded in
// one run with a rubric that requires the task sources and gates the scans with Oclgrind.
TEST_F(Grade, ClassFromTheHandoutLosesExactlyThePointsOfItsDefects) {
  if (!HaveOclgrind())
    GTEST_SKIP() << "oclgrind is not installed (scripts/install-deps.sh installs it)";
  std::ofstream(root_ / "class.json") << R"({"name": "class test",
      "required_files": ["kernels/Reduction.cl", "kernels/Scan.cl", "src/tasks/CReductionTask.cpp",
                         "src/tasks/CScanTask.cpp"],
      "items": [
        {"id": "reduction-sequential", "task": "reduction", "variant": "sequential", "points": 2,
         "cases": {"sizes": [1, 1000, 4097], "ops": ["sum", "min"]}},
        {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
         "cases": {"sizes": [1, 257, 1000], "scan_kinds": ["inclusive", "exclusive"]},
         "oclgrind": "deduct"},
        {"id": "scan-work-efficient", "task": "scan", "variant": "work-efficient", "points": 4,
         "cases": {"sizes": [1, 333, 4097], "local_size": 16}, "oclgrind": "deduct"}]})";
  std::vector<std::string> names = {"alice", "bob", "carol", "dave", "erin"};
  std::string handins;
  for (const auto& n : names)
    handins += " " + StudentHandin(n).string();
  const fs::path cls = root_ / "class";
  // bob: a wrong host-side offset in the scan's launch plan.
  Patch((cls / "bob/src/tasks/CScanTask.cpp").string(), "const size_t offset = size_t(1) << s;",
        "const size_t offset = size_t(2) << s;");
  // carol: host code that does not compile.
  Patch((cls / "carol/src/tasks/CScanTask.cpp").string(), "const size_t offset = size_t(1) << s;",
        "const size_t offset = size_t(1) << s");
  // dave: Blelloch's down-sweep without its barriers (a race pocl does not show).
  Patch((cls / "dave/kernels/Scan.cl").string(),
        "    barrier(CLK_LOCAL_MEM_FENCE);\n    if (lid < active) {", "    if (lid < active) {");
  // erin: the naive scan also writes dst[n] (out of bounds; validation does not see it).
  Patch((cls / "erin/kernels/Scan.cl").string(), "  dst[i] = v;\n",
        "  dst[i] = v;\n  if (i == n - 1)\n    dst[n] = v;\n");
  const CommandResult r = RunGrade(handins, "", (root_ / "class.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(root_ / "out" / "summary.csv"),
            "name,total,max,reduction-sequential,scan-naive,scan-work-efficient\n"
            "alice,8,8,2,2,4\n"
            "bob,6,8,2,0,4\n"
            "carol,2,8,2,0,0\n"
            "dave,4,8,2,2,0\n"
            "erin,6,8,2,0,4\n");
  const json bob = Report("bob"), carol = Report("carol"), dave = Report("dave"),
             erin = Report("erin");
  EXPECT_EQ(Item(bob, "scan-naive")["status"], "failed") << bob.dump(2);
  EXPECT_NE(Item(carol, "scan-naive")["detail"].get<std::string>().find("src/tasks/CScanTask.cpp:"),
            std::string::npos)
      << carol.dump(2);
  EXPECT_NE(Item(dave, "scan-work-efficient")["detail"].get<std::string>().find("data-race"),
            std::string::npos)
      << dave.dump(2);
  EXPECT_NE(Item(erin, "scan-naive")["detail"].get<std::string>().find("invalid-write at Scan.cl:"),
            std::string::npos)
      << erin.dump(2);
}

// A hand-in's files are found one way (grade::FindHandinFiles) by the host build, the child runs'
// --kernels and the copy its sandbox sees: a full tree, and the same files uploaded loose and
// laid out as grading/gradescope/run_autograder lays them out (*.cl, *.clh into kernels/,
// C*Task.{h,cpp} into src/tasks/), are found alike; loose files not laid out are no hand-in's.
// The task sources are named from the task registry, each file belongs to its task.
TEST_F(Grade, HandinFilesAreFoundAlikeInATreeAndFromLooseFiles) {
  const std::string tree = HandInWithHostCode("tree", {"Scan"});
  const fs::path loose = root_ / "loose", laid = root_ / "laid";
  fs::create_directories(loose);
  for (const auto& e : fs::recursive_directory_iterator(tree))
    if (e.is_regular_file())
      fs::copy_file(e.path(), loose / e.path().filename());
  for (const auto& e : fs::directory_iterator(loose)) {
    const std::string ext = e.path().extension().string();
    const fs::path to =
        laid / (ext == ".cl" || ext == ".clh" ? "kernels" : "src/tasks") / e.path().filename();
    fs::create_directories(to.parent_path());
    fs::copy_file(e.path(), to);
  }
  const grade::HandinFiles a = grade::FindHandinFiles(tree),
                           b = grade::FindHandinFiles(laid.string()),
                           c = grade::FindHandinFiles(loose.string());
  const std::map<std::string, std::vector<std::string>> scan = {
      {"scan", {"src/tasks/CScanTask.h", "src/tasks/CScanTask.cpp"}}};
  EXPECT_EQ(a.kernels, (fs::path(tree) / "kernels").string());
  EXPECT_EQ(b.kernels, (laid / "kernels").string());
  EXPECT_EQ(a.taskSources, scan);
  EXPECT_EQ(b.taskSources, scan);
  EXPECT_EQ(a.TasksOf({"scan", "reduction"}), std::vector<std::string>{"scan"});
  EXPECT_EQ(b.TasksOf({"scan", "reduction"}), std::vector<std::string>{"scan"});
  EXPECT_TRUE(a.TasksOf({"reduction"}).empty());
  EXPECT_TRUE(c.kernels.empty());
  EXPECT_TRUE(c.taskSources.empty());
  EXPECT_EQ(grade::TaskNames(), (std::vector<std::string>{"reduction", "scan", "convolution"}));
  for (const auto& task : grade::TaskNames())
    for (const auto& f : grade::TaskSources(task)) {
      EXPECT_TRUE(fs::is_regular_file(fs::path(RSB_SOURCE_DIR) / f)) << f;
      EXPECT_EQ(grade::TaskOfFile(f), task) << f;
    }
  EXPECT_EQ(grade::TaskOfFile("kernels/Scan.cl"), "scan");
  EXPECT_EQ(grade::TaskOfFile("kernels/Reduction.cl"), "reduction");
  EXPECT_EQ(grade::TaskOfFile("kernels/Common.clh"), "");
}

}  // namespace
}  // namespace rsb::test
