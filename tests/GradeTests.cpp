// `reduce-scan-bench grade`: hand-ins written by the tests (copies of the suite's kernels, some
// patched to be wrong, to crash, to hang or not to compile) graded through the executable, as an
// instructor would.
#include "TestSupport.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <utility>

namespace fs = std::filesystem;
using nlohmann::json;

namespace rsb::test {
namespace {

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh folder per test: hand-ins, rubric and reports live in it.
class Grade : public testing::Test {
 protected:
  void SetUp() override {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            fmt::format("rsb-grade-test-{}-{}", info->name(), static_cast<long>(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    // Small cases: the scan item the fixtures break, a reduction item they leave alone, and a
    // speed floor that the suite's own kernels meet by far.
    std::ofstream(root_ / "rubric.json") << R"({
      "name": "test rubric",
      "items": [
        {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
         "cases": [{"sizes": [1, 257, 4097], "scan_kinds": ["inclusive", "exclusive"]}]},
        {"id": "reduction-sequential", "task": "reduction", "variant": "sequential",
         "points": 3, "cases": {"sizes": [1000, "2^16+1"]}, "speed_floor": 0.1}
      ]})";
  }
  void TearDown() override { fs::remove_all(root_); }

  // A hand-in folder `name` holding a copy of the suite's kernels.
  std::string HandIn(const std::string& name) {
    const fs::path dir = root_ / name;
    fs::create_directories(dir);
    fs::rename(CopyKernels(name), dir / "kernels");
    return dir.string();
  }
  std::string ScanCl(const std::string& handIn) { return handIn + "/kernels/Scan.cl"; }

  // A hand-in that also brings the suite's task sources of `tasks` ("Scan", "Reduction"), each
  // file with a student's comment on top: they differ from the suite's, so they are compiled.
  std::string HandInWithHostCode(const std::string& name, const std::vector<std::string>& tasks) {
    const std::string h = HandIn(name);
    fs::create_directories(h + "/src");
    for (const auto& t : tasks)
      for (const char* ext : {".h", ".cpp"}) {
        const std::string f = "src/C" + t + "Task" + ext;
        std::ofstream(fs::path(h) / f) << "// " << name << "'s " << f << "\n"
                                       << ReadFile(fs::path(RSB_SOURCE_DIR) / f);
      }
    return h;
  }
  static fs::path SuiteKit() { return fs::path(RSB_BINARY).parent_path() / "handin-kit"; }

  // Grades the hand-ins with the test rubric (or `rubric`); reports go to root_/out.
  CommandResult RunGrade(const std::string& handIns, const std::string& extra = "",
                         const std::string& rubric = "") {
    return RunBench(fmt::format("grade --rubric '{}' --output-dir '{}' -q {} {}",
                                rubric.empty() ? (root_ / "rubric.json").string() : rubric,
                                (root_ / "out").string(), extra, handIns));
  }
  json Report(const std::string& name) {
    return json::parse(ReadFile(root_ / "out" / (name + ".json")));
  }
  static const json& Item(const json& report, const std::string& id) {
    for (const auto& it : report["items"])
      if (it["id"] == id)
        return it;
    static const json none;
    ADD_FAILURE() << "no item " << id << " in " << report.dump(2);
    return none;
  }

  fs::path root_;
};

TEST_F(Grade, SuiteKernelsGetFullPointsAndTheSamePointsOnAReRun) {
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
  const std::string md = ReadFile(root_ / "out" / "perfect.md");
  EXPECT_NE(md.find("# perfect: 5 / 5 points"), std::string::npos) << md;

  const CommandResult second = RunGrade(h);
  ASSERT_EQ(second.status, 0) << second.err;
  const json b = Report("perfect");
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
  EXPECT_EQ(report["total"], 3);  // the reduction still graded, after the fault
}

TEST_F(Grade, EndlessLoopTimesOutAndTheGraderFinishesSoonAfter) {
  const std::string h = HandIn("loop");
  // A loop the compiler cannot remove: it reads global memory through a volatile pointer.
  Patch(ScanCl(h), "  if (i >= n)\n    return;\n  T v = LoadShifted",
        "  while (n != 0) {\n    if (*(volatile __global const T*)src == (T)12345)\n"
        "      n--;\n  }\n  if (i >= n)\n    return;\n  T v = LoadShifted");
  std::ofstream(root_ / "loop-rubric.json") << R"({"items": [
      {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
       "cases": {"sizes": [257]}}]})";
  const int timeout = 5;
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r =
      RunGrade(h, fmt::format("--timeout {}", timeout), (root_ / "loop-rubric.json").string());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("loop");
  const json& item = Item(report, "scan-naive");
  EXPECT_EQ(item["status"], "timeout") << item.dump(2);
  EXPECT_EQ(item["points"], 0);
  EXPECT_LT(seconds, timeout + 5.0);
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

// A compile error in the hand-in's CScanTask.cpp costs the scan items only: the reduction items
// run the hand-in's own (compiled) reduction code, in a binary of their own.
TEST_F(Grade, HostCodeThatDoesNotCompileIsItsTasksReport) {
  const std::string h = HandInWithHostCode("hostcode", {"Reduction"});
  std::ofstream(h + "/src/CScanTask.cpp") << "#include \"CScanTask.h\"\n"
                                             "namespace rsb {\n"
                                             "int broken( {\n"
                                             "}\n";
  const CommandResult r = RunGrade(h);
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("hostcode");
  const json& scan = Item(report, "scan-naive");
  EXPECT_EQ(scan["status"], "error") << scan.dump(2);
  const std::string detail = scan["detail"];
  EXPECT_NE(detail.find("src/CScanTask.cpp:3:"), std::string::npos) << scan.dump(2);
  EXPECT_EQ(detail.find(fs::temp_directory_path().string()), std::string::npos)
      << "the grader's temporary paths in: " << detail;
  const json& host = report["host_code"]["tasks"];
  EXPECT_FALSE(host["scan"]["built"].get<bool>()) << report["host_code"].dump(2);
  EXPECT_TRUE(host["reduction"]["built"].get<bool>()) << report["host_code"].dump(2);
  EXPECT_EQ(host["reduction"]["compiled"], json({"src/CReductionTask.cpp", "src/Tasks.cpp"}));
  EXPECT_EQ(Item(report, "reduction-sequential")["status"], "passed");
  EXPECT_EQ(report["total"], 3);
}

// A hand-in made as students make it: the hand-out (scripts/make-handout) with the course work
// done (here: the solutions, each file touched by the student), configured, `--target handin`,
// the archive unpacked into the class folder. Its host code is compiled against the kit, in
// seconds (the old full build of the suite took 298 s on 2 cores).
TEST_F(Grade, StudentHandinWithHostCodeGetsFullPointsBuiltInSeconds) {
  const fs::path out = root_ / "handout";
  const fs::path src(RSB_SOURCE_DIR);
  CommandResult c =
      RunCommand(fmt::format("python3 '{}/scripts/make-handout' '{}'", src.string(), out.string()));
  ASSERT_EQ(c.status, 0) << c.err;
  for (const auto& e : fs::directory_iterator(src / "kernels"))
    if (e.path().extension() == ".cl")
      fs::copy_file(e.path(), out / "kernels" / e.path().filename(),
                    fs::copy_options::overwrite_existing);
  for (const char* t : {"Reduction", "Scan", "Convolution"})
    for (const char* ext : {".h", ".cpp"}) {
      const std::string f = fmt::format("src/C{}Task{}", t, ext);
      std::ofstream(out / f) << "// the student's " << f << "\n" << ReadFile(src / f);
    }
  c = RunCommand(
      fmt::format("(cmake -S '{0}' -B '{0}/build' -DRSB_BUILD_TESTS=OFF "
                  "-DRSB_BUILD_REFERENCES=OFF && cmake --build '{0}/build' --target handin)",
                  out.string()));
  ASSERT_EQ(c.status, 0) << c.out << c.err;
  const fs::path h = root_ / "class" / "student";
  fs::create_directories(h);
  c = RunCommand(fmt::format("tar xzf '{}/build/handin.tar.gz' -C '{}'", out.string(), h.string()));
  ASSERT_EQ(c.status, 0) << c.err;
  ASSERT_TRUE(fs::is_regular_file(h / "src" / "CScanTask.cpp"));

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
  const double seconds = host["seconds"];
  std::cout << fmt::format("[ host build ] scan and reduction (4 compiles, 2 links): {:.1f} s\n",
                           seconds);
  RecordProperty("host_build_seconds", fmt::format("{:.1f}", seconds));
  EXPECT_LT(seconds, 100.0) << "the old full build took 298 s";
  const std::string md = ReadFile(root_ / "out" / "student.md");
  EXPECT_NE(md.find("scan built (src/CScanTask.cpp, src/Tasks.cpp"), std::string::npos) << md;
}

// A wrong host-side offset in the hand-in's scan plan: the scan item fails validation, the
// reduction item (the hand-in's untouched reduction sources: the suite's binary) keeps its points.
TEST_F(Grade, WrongOffsetInTheHandinsScanPlanCostsOnlyTheScanItems) {
  const std::string h = HandIn("offset");
  fs::create_directories(h + "/src");
  for (const char* f :
       {"src/CScanTask.h", "src/CScanTask.cpp", "src/CReductionTask.h", "src/CReductionTask.cpp"})
    fs::copy_file(fs::path(RSB_SOURCE_DIR) / f, fs::path(h) / f);
  Patch(h + "/src/CScanTask.cpp", "const size_t offset = size_t(1) << s;",
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
  EXPECT_EQ(host["scan"]["compiled"], json({"src/CScanTask.cpp"})) << "its header is the suite's";
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
  const std::string h = HandInWithHostCode("installed", {"Reduction"});
  std::string selectors;
  for (const auto& [env, option] :
       {std::pair{"RSB_TEST_PLATFORM", "--platform"}, std::pair{"RSB_TEST_DEVICE", "--device"}})
    if (const char* v = std::getenv(env); v && *v)
      selectors += fmt::format(" {} '{}'", option, v);
  const CommandResult r = RunCommand(fmt::format(
      "'{}/bin/reduce-scan-bench' grade --rubric '{}' --output-dir '{}' -q{} '{}'", prefix.string(),
      (root_ / "rubric.json").string(), (root_ / "out").string(), selectors, h));
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("installed");
  EXPECT_TRUE(report["host_code"]["tasks"]["reduction"]["built"].get<bool>())
      << report["host_code"].dump(2);
  EXPECT_EQ(report["total"], 5) << report.dump(2);
}

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

  // Hand-ins' host code is built against the hand-in kit now, never a source tree.
  r = RunGrade(h, "--suite-source /tmp");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--suite-source"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--handin-kit"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace rsb::test
