// The grader's tests' fixture: a fresh folder per test, hand-ins written into it (copies of the
// suite's kernels, some patched), graded through the executable as an instructor would
// (tests/Grade*Tests.cpp, one file per room of src/grade).
#pragma once

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
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/file.h>
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

// Where bubblewrap cannot run (the GPU test machine has none), hand-ins are graded without the
// sandbox; the sandbox's own test skips there.
inline bool HaveSandbox() {
  static const bool have = RunCommand("bwrap --ro-bind / / true").status == 0;
  return have;
}
inline std::string SandboxArg() {
  return HaveSandbox() ? "" : " --sandbox none";
}

// Oclgrind's gate (the grading machine has it: scripts/install-deps.sh; the GPU machine not).
inline bool HaveOclgrind() {
  return RunCommand("command -v oclgrind").status == 0;
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
    WriteRubric("");
  }
  // Small cases: the scan item the fixtures break, a reduction item they leave alone; with
  // `speed`, that item has a speed floor too (`WithSpeedFloor`).
  void WriteRubric(const std::string& speed) {
    std::ofstream(root_ / "rubric.json") << R"({
      "name": "test rubric",
      "items": [
        {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
         "cases": [{"sizes": [1, 257, 4097], "scan_kinds": ["inclusive", "exclusive"]}]},
        {"id": "reduction-sequential", "task": "reduction", "variant": "sequential",
         "points": 3, "cases": {"sizes": [1000, "2^16+1"]})"
                                         << speed << "}]}";
  }
  // The reduction item with a speed floor the suite's own kernels meet by far: for the tests of
  // what the speed rounds do (each grading of a hand-in then times six runs: about a CPU-second
  // more on 2 cores).
  void WithSpeedFloor() { WriteRubric(R"(, "speed_floor": 0.1)"); }
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
  // file with a student's comment on top: they differ from the suite's, so they are compiled. Its
  // HANDIN.txt names the suite's task API, as make-handin's does.
  std::string HandInWithHostCode(const std::string& name, const std::vector<std::string>& tasks) {
    const std::string h = HandIn(name);
    std::ofstream(h + "/HANDIN.txt") << "task api: " << kTaskApiVersion << "\n";
    fs::create_directories(h + "/src/tasks");
    for (const auto& t : tasks)
      for (const char* ext : {".h", ".cpp"}) {
        const std::string f = "src/tasks/C" + t + "Task" + ext;
        std::ofstream(fs::path(h) / f) << "// " << name << "'s " << f << "\n"
                                       << ReadFile(fs::path(RSB_SOURCE_DIR) / f);
      }
    return h;
  }
  // The suite's own task sources of `tasks` ("Scan") in the hand-in, unchanged: nothing to
  // compile, the suite's binary runs them.
  void CopySuiteSources(const std::string& h, const std::vector<std::string>& tasks) {
    fs::create_directories(h + "/src/tasks");
    for (const auto& t : tasks)
      for (const char* ext : {".h", ".cpp"}) {
        const std::string f = "src/tasks/C" + t + "Task" + ext;
        fs::copy_file(fs::path(RSB_SOURCE_DIR) / f, fs::path(h) / f);
      }
  }
  // The naive scan's first work-item spinning while `condition` holds on n, in a loop the
  // compiler may not remove: each turn writes its own output element through a volatile pointer
  // (a loop without side effects may be assumed to end; the input is a read-only buffer). One
  // work-item is enough to hang the launch, and on a CPU device it keeps one core busy to the
  // limit, not every core.
  void PatchEndlessLoop(const std::string& h, const std::string& condition) {
    Patch(ScanCl(h), "  if (i >= n)\n    return;\n  T v = LoadShifted",
          "  if (i >= n)\n    return;\n  while (i == 0 && (" + condition +
              "))\n    ((volatile __global T*)dst)[i] += (T)1;\n  T v = LoadShifted");
  }
  static fs::path SuiteKit() { return fs::path(RSB_BINARY).parent_path() / "handin-kit"; }
  // The kit RunGrade builds hand-ins' host code against: the suite's with -O0 (the target
  // handin-kit-O0, tests/CMakeLists.txt).
  static fs::path TestKit() {
    return fs::path(RSB_BINARY).parent_path() / "tests" / "handin-kit-O0";
  }
  // A PATH with every program of /usr/bin but oclgrind.
  fs::path PathWithoutOclgrind() {
    const fs::path bin = root_ / "bin";
    fs::create_directories(bin);
    for (const auto& e : fs::directory_iterator("/usr/bin"))
      if (e.path().filename() != "oclgrind")
        fs::create_symlink(e.path(), bin / e.path().filename());
    return bin;
  }
  // A naive scan whose combine writes one element on, unguarded: a wrong result on any device,
  // and at i = n - 1 a write past the end of the output. The patched line's number.
  size_t PatchWritePastTheEnd(const std::string& h) {
    Patch(ScanCl(h), "  dst[i] = v;\n  // SOLUTION END", "  dst[i + 1] = v;\n  // SOLUTION END");
    std::istringstream in(ReadFile(ScanCl(h)));
    size_t number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      if (line == "  dst[i + 1] = v;")
        return number;
    }
    ADD_FAILURE() << "no patched line in " << ScanCl(h);
    return 0;
  }

  // Grades the hand-ins with the test rubric (or `rubric`); reports go to root_/out. The tests'
  // hand-ins are their own: every child run shares the test run's kernel cache (ctest sets
  // POCL_CACHE_DIR), so that a kernel is compiled once for all of them. Speed rounds of 0.2 s
  // unless `extra` says otherwise: the floors here are met by far (a second each, the default,
  // made the speed item a fifth of these tests' CPU time). Host code against TestKit() unless
  // `extra` names a kit.
  CommandResult RunGrade(const std::string& handIns, const std::string& extra = "",
                         const std::string& rubric = "") {
    const bool sandboxGiven = extra.find("--sandbox") != std::string::npos;
    const bool roundsGiven = extra.find("--speed-seconds") != std::string::npos;
    const bool kitGiven = extra.find("--handin-kit") != std::string::npos;
    const char* cache = std::getenv("POCL_CACHE_DIR");
    return RunBench(
        fmt::format("grade{}{}{}{} --rubric '{}' --output-dir '{}' -q {} {}",
                    sandboxGiven ? "" : SandboxArg(), roundsGiven ? "" : " --speed-seconds 0.2",
                    kitGiven ? "" : fmt::format(" --handin-kit '{}'", TestKit().string()),
                    cache ? fmt::format(" --kernel-cache '{}'", cache) : "",
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

  // A hand-in made as students make it: the hand-out (scripts/make-handout) with the course
  // work done (the solutions, each task source touched by the student), configured,
  // `--target handin` (StudentHandinArchive), the archive unpacked into root_/class/<name>.
  fs::path StudentHandin(const std::string& name) {
    const fs::path h = root_ / "class" / name;
    fs::create_directories(h);
    StudentHandinArchive(false, h);
    EXPECT_TRUE(fs::is_regular_file(h / "src" / "tasks" / "CScanTask.cpp"));
    return h;
  }
  // That hand-out's handin.tar.gz, packed once for the tests that unpack it
  // (RSB_TEST_SHARED_DIR/student-handout, under a lock): afresh in each ctest run by
  // GradeShared.StudentHandinIsPackedOnceFromTheHandout (the fixture grade-student-handin,
  // tests/TestFixtures.cmake); run by hand, a test packs it where it is missing or was made from
  // other files (the stamp: every file of the source tree it is made from). Unpacked into
  // `into` (where given) under the lock, so that a test never reads it while it is made.
  static fs::path StudentHandinArchive(bool afresh = false, const fs::path& into = {}) {
    const fs::path shared = fs::path(RSB_TEST_SHARED_DIR) / "student-handout";
    const fs::path out = shared / "handout", archive = out / "build" / "handin.tar.gz";
    fs::create_directories(shared.parent_path());
    const int lock = ::open((shared.string() + ".lock").c_str(), O_RDWR | O_CREAT, 0644);
    EXPECT_GE(lock, 0) << shared;
    ::flock(lock, LOCK_EX);
    const fs::path src(RSB_SOURCE_DIR);
    std::set<fs::path> from = {src / "scripts" / "make-handout", src / "scripts" / "make-handin",
                               src / "CMakeLists.txt", src / "common" / "engine" / "TaskApi.h"};
    for (const char* dir : {"kernels", "src/tasks"})
      for (const auto& e : fs::directory_iterator(src / dir))
        from.insert(e.path());
    std::string stamp;
    for (const auto& f : from)
      stamp += f.string() + "\n" + ReadFile(f) + "\n";
    if (afresh || !fs::exists(archive) || !fs::exists(shared / "stamp") ||
        ReadFile(shared / "stamp") != stamp) {
      fs::remove_all(shared);
      fs::create_directories(shared);
      PackStudentHandin(out);
      std::ofstream(shared / "stamp") << stamp;
    }
    if (!into.empty()) {
      const CommandResult c =
          RunCommand(fmt::format("tar xzf '{}' -C '{}'", archive.string(), into.string()));
      EXPECT_EQ(c.status, 0) << c.err;
    }
    ::close(lock);
    return archive;
  }
  // The hand-out in `out` with the solutions written in, configured, `--target handin`.
  static void PackStudentHandin(const fs::path& out) {
    const fs::path src(RSB_SOURCE_DIR);
    CommandResult c = RunCommand(
        fmt::format("python3 '{}/scripts/make-handout' '{}'", src.string(), out.string()));
    EXPECT_EQ(c.status, 0) << c.err;
    for (const auto& e : fs::directory_iterator(src / "kernels"))
      if (e.path().extension() == ".cl")
        fs::copy_file(e.path(), out / "kernels" / e.path().filename(),
                      fs::copy_options::overwrite_existing);
    for (const char* t : {"Reduction", "Scan", "Convolution"})
      for (const char* ext : {".h", ".cpp"}) {
        const std::string f = fmt::format("src/tasks/C{}Task{}", t, ext);
        std::ofstream(out / f) << "// the student's " << f << "\n" << ReadFile(src / f);
      }
    c = RunCommand(
        fmt::format("(cmake -S '{0}' -B '{0}/build' -DRSB_BUILD_TESTS=OFF "
                    "-DRSB_BUILD_REFERENCES=OFF && cmake --build '{0}/build' --target handin)",
                    out.string()));
    EXPECT_EQ(c.status, 0) << c.out << c.err;
  }

  // ann, eli: correct; bob: a wrong result; cyd: a kernel that crashes its process at n=257
  // only; dee: a kernel that does not compile.
  std::string MakeSmallClass() {
    std::string all;
    for (const char* n : {"ann", "bob", "cyd", "dee", "eli"})
      all += " " + HandIn(n);
    Patch(ScanCl((root_ / "bob").string()), "v = OP(LoadShifted(src, i - offset, shift), v);",
          "v = OP(LoadShifted(src, i - offset + 1, shift), v);");
    Patch(ScanCl((root_ / "cyd").string()), "  dst[i] = v;\n  // SOLUTION END",
          "  dst[i + (n == 257 ? (1u << 31) : 0u)] = v;\n  // SOLUTION END");
    Patch(ScanCl((root_ / "dee").string()), "  dst[i] = v;\n  // SOLUTION END",
          "  dst[i] = v\n  // SOLUTION END");
    return all;
  }
  // What MakeSmallClass's class earns under the test rubric (summary.csv).
  static constexpr const char* kSmallClassSummary =
      "name,total,max,scan-naive,reduction-sequential\n"
      "ann,5,5,2,3\n"
      "bob,3,5,0,3\n"
      "cyd,3,5,0,3\n"
      "dee,3,5,0,3\n"
      "eli,5,5,2,3\n";
  // The items of every hand-in of MakeSmallClass's class, from the reports in root_/out.
  std::map<std::string, json> SmallClassItems() {
    std::map<std::string, json> items;
    for (const char* n : {"ann", "bob", "cyd", "dee", "eli"})
      items[n] = Report(n)["items"];
    return items;
  }

  // MakeSmallClass's class graded once at --jobs 1 with the speed floor: the baseline that the
  // tests of other ways to grade it (jobs, residents, another check platform) compare with, graded
  // once for them all (RSB_TEST_SHARED_DIR/small-class: the hand-ins, rubric.json, out/). The
  // test GradeShared.SmallClassIsGradedOnceForTheTestsThatCompareWithIt grades it afresh in each
  // ctest run (the fixture grade-small-class, tests/TestFixtures.cmake); run by hand, a test
  // grades it where it is missing or was graded by another binary or kernels. The tests grade the
  // shared hand-ins in place (a grader only reads a hand-in), their reports in their own root_.
  struct SmallClass {
    std::string handIns;                // the hand-in folders, as RunGrade takes them
    std::string summary;                // out/summary.csv
    std::map<std::string, json> items;  // every hand-in's items
  };
  SmallClass GradedSmallClass(bool afresh = false) {
    const fs::path shared = fs::path(RSB_TEST_SHARED_DIR) / "small-class";
    fs::create_directories(shared.parent_path());
    const int lock = ::open((shared.string() + ".lock").c_str(), O_RDWR | O_CREAT, 0644);
    EXPECT_GE(lock, 0) << shared;
    ::flock(lock, LOCK_EX);
    std::string stamp =
        fmt::format("{}", fs::last_write_time(RSB_BINARY).time_since_epoch().count());
    std::set<fs::path> kernels;
    for (const auto& e : fs::directory_iterator(fs::path(RSB_SOURCE_DIR) / "kernels"))
      kernels.insert(e.path());
    for (const auto& k : kernels)
      stamp += "\n" + k.filename().string() + "\n" + ReadFile(k);
    const fs::path mine = root_;
    root_ = shared;
    std::string handIns;
    for (const char* n : {"ann", "bob", "cyd", "dee", "eli"})
      handIns += " " + (shared / n).string();
    if (afresh || !fs::exists(shared / "stamp") || ReadFile(shared / "stamp") != stamp) {
      fs::remove_all(shared);
      fs::create_directories(shared);
      WithSpeedFloor();
      EXPECT_EQ(MakeSmallClass(), handIns);
      const CommandResult r = RunGrade(handIns, "--jobs 1");
      EXPECT_EQ(r.status, 0) << r.err;
      std::ofstream(shared / "stamp") << stamp;
    }
    SmallClass c{handIns, ReadFile(shared / "out" / "summary.csv"), SmallClassItems()};
    root_ = mine;
    ::close(lock);
    return c;
  }
  // A hand-in's items graded again (now) as before: each item's status and points and every
  // case's status; its detail too where `detail` (a compiler's message names its implementation).
  static void ExpectSameItems(const json& now, const json& before, const std::string& what,
                              bool detail) {
    ASSERT_EQ(now.size(), before.size()) << what;
    for (size_t i = 0; i < now.size(); ++i) {
      EXPECT_EQ(now[i]["status"], before[i]["status"]) << what << " " << now[i].dump(2);
      EXPECT_EQ(now[i]["points"], before[i]["points"]) << what;
      if (detail) {
        EXPECT_EQ(now[i]["detail"], before[i]["detail"]) << what;
      }
      ASSERT_EQ(now[i]["cases"].size(), before[i]["cases"].size()) << what;
      for (size_t c = 0; c < now[i]["cases"].size(); ++c)
        EXPECT_EQ(now[i]["cases"][c]["status"], before[i]["cases"][c]["status"])
            << what << " " << now[i]["cases"][c].dump();
    }
  }

  fs::path root_;
};

// The tests that make what other tests read, once per ctest run (tests/TestFixtures.cmake).
class GradeShared : public Grade {};

// `grade merge` reads folders and runs nothing on a device: it takes no --platform or
// --device, so it runs without the test device's selectors (RunBench adds them).
inline CommandResult RunMerge(const std::string& args) {
  return RunCommand(fmt::format("'{}' grade merge {}", RSB_BINARY, args));
}

}  // namespace rsb::test
