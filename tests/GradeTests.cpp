// `reduce-scan-bench grade`: hand-ins written by the tests (copies of the suite's kernels, some
// patched to be wrong, to crash, to hang or not to compile) graded through the executable, as an
// instructor would.
#include "TestSupport.h"
#include "platform/Subprocess.h"
#include "tools/grade/ChildRun.h"
#include "tools/grade/Grade.h"
#include "tools/grade/HandinFiles.h"
#include "tools/grade/Resident.h"
#include "tools/grade/Rubric.h"
#include "tools/grade/Scoring.h"
#include "tools/grade/Turns.h"

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

// Where bubblewrap cannot run (the GPU test machine has none), hand-ins are graded without the
// sandbox; the sandbox's own test skips there.
bool HaveSandbox() {
  static const bool have = RunCommand("bwrap --ro-bind / / true").status == 0;
  return have;
}
std::string SandboxArg() {
  return HaveSandbox() ? "" : " --sandbox none";
}

// Oclgrind's gate (the grading machine has it: scripts/install-deps.sh; the GPU machine not).
bool HaveOclgrind() {
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
  // made the speed item a fifth of these tests' CPU time).
  CommandResult RunGrade(const std::string& handIns, const std::string& extra = "",
                         const std::string& rubric = "") {
    const bool sandboxGiven = extra.find("--sandbox") != std::string::npos;
    const bool roundsGiven = extra.find("--speed-seconds") != std::string::npos;
    const char* cache = std::getenv("POCL_CACHE_DIR");
    return RunBench(fmt::format("grade{}{}{} --rubric '{}' --output-dir '{}' -q {} {}",
                                sandboxGiven ? "" : SandboxArg(),
                                roundsGiven ? "" : " --speed-seconds 0.2",
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
  // `--target handin`, the archive unpacked into root_/class/<name>.
  fs::path StudentHandin(const std::string& name) {
    const fs::path out = root_ / "handout";
    const fs::path src(RSB_SOURCE_DIR);
    if (!fs::exists(out / "build" / "handin.tar.gz")) {
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
    const fs::path h = root_ / "class" / name;
    fs::create_directories(h);
    const CommandResult c = RunCommand(
        fmt::format("tar xzf '{}/build/handin.tar.gz' -C '{}'", out.string(), h.string()));
    EXPECT_EQ(c.status, 0) << c.err;
    EXPECT_TRUE(fs::is_regular_file(h / "src" / "tasks" / "CScanTask.cpp"));
    return h;
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
  // The items of every hand-in of MakeSmallClass's class, from the reports in root_/out.
  std::map<std::string, json> SmallClassItems() {
    std::map<std::string, json> items;
    for (const char* n : {"ann", "bob", "cyd", "dee", "eli"})
      items[n] = Report(n)["items"];
    return items;
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
  const CommandResult r = RunCommand(
      env + fmt::format("'{}' grade --rubric '{}' --output-dir '{}' -q --sandbox none '{}'",
                        RSB_BINARY, (root_ / "one-rubric.json").string(), (root_ / "out").string(),
                        h));
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
  EXPECT_TRUE(fs::is_regular_file(SuiteKit() / "pch" / "STAMP"))
      << "no precompiled header kept in " << SuiteKit();
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
  const std::string h = HandInWithHostCode("installed", {"Reduction"});
  const std::string selectors = DeviceSelectors();
  const CommandResult r = RunCommand(
      fmt::format("'{}/bin/reduce-scan-bench' grade{} --rubric '{}' --output-dir '{}' -q{} '{}'",
                  prefix.string(), SandboxArg(), (root_ / "rubric.json").string(),
                  (root_ / "out").string(), selectors, h));
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("installed");
  EXPECT_TRUE(report["host_code"]["tasks"]["reduction"]["built"].get<bool>())
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
  fs::remove_all(root_ / "out");
  r = RunCommand(grade);  // the next run finds it
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find(building), std::string::npos) << r.err;
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

// An output folder that refuses the probe (a file written and removed in it, or in the folder
// it would be made in) is exit 3, as any output that cannot be written, before any hand-in.
TEST_F(Grade, OutputFolderThatCannotBeWrittenIsRefusedBeforeAnyHandInAndNoTempFolderIsLeft) {
  const std::string h = HandIn("any");
  // The grader's temporary folders go to TMPDIR: a private one, empty at the end.
  const fs::path tmp = root_ / "tmp";
  fs::create_directories(tmp);
  auto grade = [&](const std::string& args) {
    return RunCommand(
        fmt::format("TMPDIR='{}' {} grade{} {}", tmp.string(), RSB_BINARY, SandboxArg(), args));
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

// `grade merge` reads folders and runs nothing on a device: it takes no --platform or
// --device, so it runs without the test device's selectors (RunBench adds them).
CommandResult RunMerge(const std::string& args) {
  return RunCommand(fmt::format("'{}' grade merge {}", RSB_BINARY, args));
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
  const CommandResult r =
      RunBench(fmt::format("grade{} --output-dir '{}' -q --items reduction-decomposition {}",
                           SandboxArg(), (root_ / "out").string(), h));
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

// A listener on the host's loopback that records whether anyone connected and what they sent.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 ||
        ::listen(fd_, 8) != 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0)
          return;
        char buf[64];
        const ssize_t n = ::read(c, buf, sizeof buf);
        received_ += n > 0 ? std::string(buf, static_cast<size_t>(n)) : "(connected)";
        ::close(c);
      }
    });
  }
  ~Listener() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  int Port() const { return port_; }
  std::string Received() const { return received_; }

 private:
  int fd_ = -1, port_ = 0;
  std::thread thread_;
  std::string received_;
};

// Host code that tries, every time its binary starts, to write outside its folder (the reports,
// the class folder, /tmp) and to send to a listener on the host's loopback: each refused by the
// sandbox, and the hand-in is graded all the same.
TEST_F(Grade, HandInThatWritesOutsideItsFolderAndOpensASocketIsRefusedAndStillGraded) {
  if (!HaveSandbox())
    GTEST_SKIP() << "bubblewrap cannot run here (scripts/install-deps.sh installs it)";
  const std::string h = HandIn("mallory");
  CopySuiteSources(h, {"Scan"});
  Listener listener;
  const fs::path outside = fs::temp_directory_path() / fmt::format("rsb-escaped-{}", ::getpid());
  fs::remove(outside);
  std::ofstream(h + "/src/tasks/CScanTask.cpp", std::ios::app) << fmt::format(
      R"(
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fstream>
namespace {{
struct Escape {{
  Escape() {{
    std::ofstream("{}") << "escaped";
    std::ofstream("{}/mallory-was-here") << "escaped";
    std::ofstream("{}/mallory-was-here") << "escaped";
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{{}};
    a.sin_family = AF_INET;
    a.sin_port = htons({});
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && write(fd, "pwned", 5)) {{
    }}
    close(fd);
  }}
}} escape;
}}  // namespace
)",
      outside.string(), (root_ / "out").string(), root_.string(), listener.Port());
  const CommandResult r = RunGrade(h);
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("mallory");
  EXPECT_TRUE(report["host_code"].is_object()) << report.dump(2);
  EXPECT_EQ(Item(report, "scan-naive")["points"], 2) << report.dump(2);
  EXPECT_EQ(report["total"], 5) << report.dump(2);
  EXPECT_FALSE(fs::exists(outside)) << "wrote " << outside;
  EXPECT_FALSE(fs::exists(root_ / "out" / "mallory-was-here")) << "wrote into the reports";
  EXPECT_FALSE(fs::exists(root_ / "mallory-was-here")) << "wrote into the class folder";
  EXPECT_EQ(listener.Received(), "") << "reached the host's loopback";
  fs::remove(outside);
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

TEST_F(Grade, JobsGiveExactlyThePointsOfOneAtATime) {
  WithSpeedFloor();
  const std::string handins = MakeSmallClass();
  ASSERT_EQ(RunGrade(handins, "--jobs 1").status, 0);
  const std::string sequential = ReadFile(root_ / "out" / "summary.csv");
  const std::map<std::string, json> items = SmallClassItems();
  // In parallel; then with only the timed loops alone (a device lock shared by the children,
  // the suite's own speed rounds timed once for the class), as on a GPU.
  // And with the loop mode's residents (Resident.h) running the hand-ins' kernels too (outside a
  // sandbox: a sandboxed hand-in's runs stay child processes), cyd's crash among them.
  const std::string trace = (root_ / "trace.csv").string();
  for (const std::string& how :
       {std::string("--jobs 3"), std::string("--jobs 3 --speed-alone loop"),
        "--jobs 3 --speed-alone loop --sandbox none --resident-runs on --trace '" + trace + "'"}) {
    fs::remove_all(root_ / "out");
    const CommandResult r = RunGrade(handins, how);
    ASSERT_EQ(r.status, 0) << how << "\n" << r.err;
    EXPECT_EQ(ReadFile(root_ / "out" / "summary.csv"), sequential) << how;
    EXPECT_EQ(sequential,
              "name,total,max,scan-naive,reduction-sequential\n"
              "ann,5,5,2,3\n"
              "bob,3,5,0,3\n"
              "cyd,3,5,0,3\n"
              "dee,3,5,0,3\n"
              "eli,5,5,2,3\n");
    std::set<double> references;
    for (const auto& [name, before] : items) {
      const json now = Report(name)["items"];
      ExpectSameItems(now, before, how + " " + name, true);
      for (const auto& item : now)
        if (item.contains("speed") && item["speed"].contains("reference_ms"))
          references.insert(item["speed"]["reference_ms"].get<double>());
    }
    EXPECT_FALSE(references.empty()) << how;
    if (std::string(how).find("loop") != std::string::npos) {
      EXPECT_EQ(references.size(), 1u) << "the suite's rounds are timed once for the class";
    }
  }
  // --trace: a line per child run; the residents ran the hand-ins' lists, timed runs and cyd's
  // cases one by one (its crash among them).
  const std::string runs = ReadFile(trace);
  EXPECT_EQ(runs.rfind("start_s,seconds,code,run,where,status\n", 0), 0u) << runs;
  // On a GPU the far store is the driver's fault of the launch: an OpenCL error (exit 3).
  const char* fault = Device().info.isGpu ? ",check,resident,3" : ",check,resident,crashed";
  for (const char* line : {",list,resident,0", ",timed,resident,0", fault})
    EXPECT_NE(runs.find(line), std::string::npos) << line << "\n" << runs;
  // The crash is that case's alone (the isolated run decides what the fast run could not).
  const json crashed = Item(Report("cyd"), "scan-naive");
  for (const auto& c : crashed["cases"])
    EXPECT_EQ(c["status"],
              c["case"].get<std::string>().find("n=257") != std::string::npos ? "error" : "passed")
        << crashed.dump(2);
}

// --check-platform: the runs that only validate go to another OpenCL implementation (Mesa's
// rusticl on the CPU, which builds faster than pocl), the timed runs stay on the device; every
// hand-in gets the points, statuses and details that grading on the device alone gives, and the
// reports name both devices. A platform that matches nothing, or rusticl without its CPU device
// enabled, is a usage error in the option's words.
TEST_F(Grade, CheckPlatformValidatesElsewhereWithTheSamePointsAndTimesOnTheDevice) {
  WithSpeedFloor();
  if (Device().info.platform.find("Portable") == std::string::npos)
    GTEST_SKIP() << "times on pocl and validates on rusticl; the device is "
                 << Device().info.platform;
  const char* before = std::getenv("RUSTICL_ENABLE");
  const std::string saved = before ? before : "";
  ::setenv("RUSTICL_ENABLE", "llvmpipe", 1);
  struct Restore {
    bool had;
    std::string value;
    ~Restore() {
      had ? ::setenv("RUSTICL_ENABLE", value.c_str(), 1) : ::unsetenv("RUSTICL_ENABLE");
    }
  } restore{before != nullptr, saved};
  if (RunCommand(fmt::format("'{}' --list-devices", RSB_BINARY)).out.find("llvmpipe") ==
      std::string::npos)
    GTEST_SKIP() << "no rusticl CPU device (mesa-opencl-icd, RUSTICL_ENABLE=llvmpipe)";
  const std::string handins = MakeSmallClass();
  ASSERT_EQ(RunGrade(handins, "--jobs 2").status, 0);
  const std::string onDevice = ReadFile(root_ / "out" / "summary.csv");
  const std::map<std::string, json> items = SmallClassItems();
  fs::remove_all(root_ / "out");
  const CommandResult r = RunGrade(handins, "--jobs 2 --check-platform rusticl");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(root_ / "out" / "summary.csv"), onDevice);
  for (const auto& [name, was] : items) {
    const json report = Report(name);
    // Each name comes from the results of the runs that went there.
    EXPECT_NE(report["check_device"].get<std::string>().find("llvmpipe"), std::string::npos)
        << report["check_device"];
    EXPECT_EQ(report["device"], Device().info.name);
    ExpectSameItems(report["items"], was, name, false);
  }
  // The speed item was timed on the device: a ratio, met.
  const json speed = Item(Report("ann"), "reduction-sequential")["speed"];
  EXPECT_TRUE(speed.value("met", false)) << speed.dump();
  EXPECT_NE(ReadFile(root_ / "out" / "ann.md").find("(correctness runs on llvmpipe"),
            std::string::npos);
  const json m = json::parse(ReadFile(root_ / "out" / "grading.json"));
  EXPECT_NE(m["check_device"].get<std::string>().find("llvmpipe"), std::string::npos) << m;

  const std::string one = (root_ / "ann").string();
  CommandResult bad = RunGrade(one, "--check-platform nosuch");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--check-platform 'nosuch' matches no platform"), std::string::npos)
      << bad.err;
  ::unsetenv("RUSTICL_ENABLE");
  bad = RunGrade(one, "--check-platform rusticl");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("RUSTICL_ENABLE=llvmpipe"), std::string::npos) << bad.err;
}

// A resident child run (Resident.h) answers every run as a child process of the same command
// line would: results, exit status, stderr, a crash's signal, a hang's timeout; after a crash, a
// hang or an error it is replaced, otherwise it serves the next run in the same process.
TEST_F(Grade, ResidentRunsAnswerAsChildProcessesWould) {
  const std::string good = HandIn("good"), crash = HandIn("crash"), hang = HandIn("hang");
  Patch(ScanCl(crash), "  dst[i] = v;\n  // SOLUTION END",
        "  dst[i + (n == 257 ? (1u << 31) : 0u)] = v;\n  // SOLUTION END");
  PatchEndlessLoop(hang, "n == 257");
  const std::string out = (root_ / "r.json").string();
  const auto args = [&](const std::string& h) {
    return std::vector<std::string>{
        RSB_BINARY, "--kernels", h + "/kernels", "--task",   "scan", "--variant", "naive", "--size",
        "1,257",    "--check",   "--no-isolate", "--format", "json", "--output",  out,     "-q"};
  };
  fs::create_directories(root_ / "residents");
  grade::Residents residents({RSB_BINARY, "serve"}, (root_ / "residents").string());
  for (int run = 0; run < 2; ++run) {
    fs::remove(out);
    const ProcessResult r = residents.Run(args(good), 60, root_.string());
    EXPECT_TRUE(r.started);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_FALSE(r.timedOut);
    const json j = json::parse(ReadFile(out));
    ASSERT_EQ(j["results"].size(), 2u) << j.dump(2);
    for (const auto& c : j["results"])
      EXPECT_EQ(c["status"], "passed") << c.dump(2);
    EXPECT_EQ(residents.Started(), 1u) << "the second run is served by the same process";
  }
  const std::vector<std::string> bad = {RSB_BINARY, "--task", "bogus"};
  struct Case {
    std::vector<std::string> argv;
    double timeoutS;
  };
  for (const Case& c : {Case{args(crash), 60}, Case{args(hang), 3}, Case{bad, 60}}) {
    const size_t before = residents.Started();
    const ProcessResult child = RunProcess(c.argv, c.timeoutS, root_.string());
    const ProcessResult r = residents.Run(c.argv, c.timeoutS, root_.string());
    const std::string what = child.err + " | " + r.err;
    EXPECT_TRUE(r.started);
    EXPECT_EQ(r.timedOut, child.timedOut) << what;
    EXPECT_EQ(r.signal, child.signal) << what;
    EXPECT_EQ(r.exitCode, child.exitCode) << what;
    if (c.argv == bad) {
      EXPECT_EQ(r.err, child.err);
    }
    // The far store: a crash on a CPU, an OpenCL error of the case (exit 3) on a GPU.
    EXPECT_TRUE(child.timedOut || child.signal || child.exitCode == 2 ||
                (Device().info.isGpu && child.exitCode == 3))
        << what;
    fs::remove(out);
    const ProcessResult next = residents.Run(args(good), 60, root_.string());
    EXPECT_EQ(next.exitCode, 0) << next.err;
    EXPECT_EQ(residents.Started(), before + 1) << "a fresh resident after " << what;
  }
}

// A group run again case by case in residents (a run per case, as where the grader isolates a
// failed group on a GPU) gives its results as one child run's: every case's, and the device
// they ran on, which the grader reads from every run it notes (Context::NoteDevice).
TEST_F(Grade, CasesRunOneByOneInResidentsNameTheirDevice) {
  const grade::Rubric rubric = grade::LoadRubric((root_ / "rubric.json").string());
  const grade::Item& it = rubric.items.front();  // scan-naive: 3 sizes, 2 kinds
  fs::create_directories(root_ / "residents");
  grade::Residents residents({RSB_BINARY, "serve"}, (root_ / "residents").string());
  grade::ChildSettings s;
  const char* platform = std::getenv("RSB_TEST_PLATFORM");
  const char* device = std::getenv("RSB_TEST_DEVICE");
  s.platform = s.checkPlatform = platform ? platform : "";
  s.device = s.checkDevice = device ? device : "";
  s.workDir = root_.string();
  s.residents = &residents;
  s.residentBinary = RSB_BINARY;
  const grade::Code code{RSB_BINARY, HandIn("good") + "/kernels", {}, ""};
  const grade::CaseGroup& g = it.groups.front();
  const grade::GroupRun run = grade::RunGroup(
      s, code, it, g, g.localSizes.front(), grade::RunKind::Check, 120, grade::Isolation::PerCase);
  ASSERT_EQ(run.cases.size(), 6u);
  for (const auto& c : run.cases)
    EXPECT_EQ(c.status, "passed") << c.label << ": " << c.message;
  EXPECT_EQ(residents.Started(), 1u) << "the cases ran in a resident";
  ASSERT_TRUE(run.results.has_value());
  EXPECT_EQ((*run.results)["results"].size(), 6u);
  ASSERT_TRUE(run.results->contains("device")) << run.results->dump(1);
  EXPECT_EQ((*run.results)["device"].value("name", ""), Device().info.name);
}

TEST_F(Grade, ShardsMergeIntoWhatOneRunWrites) {
  const std::string handins = MakeSmallClass() + " --items scan-naive";
  ASSERT_EQ(RunGrade(handins).status, 0);
  const fs::path single = root_ / "single";
  fs::rename(root_ / "out", single);
  std::vector<std::string> shards;
  std::set<std::string> seen;
  for (int k = 1; k <= 3; ++k) {
    const CommandResult r = RunGrade(handins, fmt::format("--shard {}/3", k));
    ASSERT_EQ(r.status, 0) << r.err;
    const json m = json::parse(ReadFile(root_ / "out" / "grading.json"));
    EXPECT_EQ(m["shard"]["index"], k);
    EXPECT_EQ(m["class"].size(), 5u);
    for (const auto& n : m["graded"]) {
      EXPECT_TRUE(seen.insert(n.get<std::string>()).second) << n << " in two shards";
      EXPECT_TRUE(fs::exists(root_ / "out" / (n.get<std::string>() + ".md")));
    }
    shards.push_back((root_ / fmt::format("shard{}", k)).string());
    fs::rename(root_ / "out", shards.back());
  }
  EXPECT_EQ(seen.size(), 5u);
  // A shard graded again grades the same hand-ins.
  ASSERT_EQ(RunGrade(handins, "--shard 2/3").status, 0);
  EXPECT_EQ(json::parse(ReadFile(root_ / "out" / "grading.json"))["graded"],
            json::parse(ReadFile(fs::path(shards[1]) / "grading.json"))["graded"]);
  const fs::path merged = root_ / "merged";
  const CommandResult m = RunMerge(fmt::format("--output-dir '{}' '{}' '{}' '{}'", merged.string(),
                                               shards[0], shards[1], shards[2]));
  ASSERT_EQ(m.status, 0) << m.err;
  for (const char* f : {"summary.csv", "index.md"})
    EXPECT_EQ(ReadFile(merged / f), ReadFile(single / f)) << f;
  for (const char* n : {"ann", "bob", "cyd", "dee", "eli"}) {
    const json a = json::parse(ReadFile(merged / (std::string(n) + ".json")));
    const json b = json::parse(ReadFile(single / (std::string(n) + ".json")));
    for (size_t i = 0; i < a["items"].size(); ++i)
      EXPECT_EQ(a["items"][i]["status"], b["items"][i]["status"]) << n;
  }
  // Refused: a shard missing (naming its hand-ins), a folder twice, another rubric.
  const CommandResult missing = RunMerge(
      fmt::format("--output-dir '{}' '{}' '{}'", (root_ / "m2").string(), shards[0], shards[2]));
  EXPECT_EQ(missing.status, 2) << missing.err;
  EXPECT_NE(missing.err.find("not graded in the folders given"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("(shard 2/3)"), std::string::npos) << missing.err;
  const CommandResult twice =
      RunMerge(fmt::format("--output-dir '{}' '{}' '{}' '{}' '{}'", (root_ / "m3").string(),
                           shards[0], shards[1], shards[1], shards[2]));
  EXPECT_EQ(twice.status, 2) << twice.err;
  EXPECT_NE(twice.err.find("graded in "), std::string::npos) << twice.err;
  json other = json::parse(ReadFile(fs::path(shards[2]) / "grading.json"));
  other["rubric"]["hash"] = "fnv1a64:0000000000000000";
  std::ofstream(fs::path(shards[2]) / "grading.json") << other.dump(2);
  const CommandResult rubric =
      RunMerge(fmt::format("--output-dir '{}' '{}' '{}' '{}'", (root_ / "m4").string(), shards[0],
                           shards[1], shards[2]));
  EXPECT_EQ(rubric.status, 2) << rubric.err;
  EXPECT_NE(rubric.err.find("different rubrics"), std::string::npos) << rubric.err;
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

// --trace: each line rewrites the file whole; a write that fails mid-run (here the folder gone)
// does not end the grading thread that added the line, and is exit 3 at the end, naming the file.
TEST(GradeTrace, AWriteThatFailsMidRunIsSaidAtTheEnd) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("rsb-trace-{}", ::getpid());
  fs::create_directories(dir);
  const std::string path = (dir / "t.csv").string();
  grade::RunTrace trace(path);
  trace.Add(0.5, 1.25, "alice", "check", false, "0");
  EXPECT_EQ(ReadFile(path),
            "start_s,seconds,code,run,where,status\n0.500,1.250,alice,check,process,0\n");
  fs::remove_all(dir);
  EXPECT_NO_THROW(trace.Add(2, 1, "bob", "timed", true, "0"));
  try {
    trace.Finish();
    ADD_FAILURE() << "Finish wrote into a folder that is gone";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("--trace '" + path + "': writing failed"),
              std::string::npos)
        << e.what();
  }
}

// --jobs' default (a GPU is not here to run a class on): the cores on a CPU device; on a GPU 16
// where residents run the hand-ins (residents on and --sandbox none), else 4; capped by the
// cores, at least 1.
TEST(GradeJobs, DefaultJobsFollowTheDeviceAndHowChildRunsStart) {
  EXPECT_EQ(DefaultJobs(true, false, false, 2), 2u);
  EXPECT_EQ(DefaultJobs(true, true, true, 64), 64u);  // residents never change a CPU's default
  EXPECT_EQ(DefaultJobs(false, true, true, 16), 16u);
  EXPECT_EQ(DefaultJobs(false, true, true, 64), 16u);
  EXPECT_EQ(DefaultJobs(false, true, true, 2), 2u);
  EXPECT_EQ(DefaultJobs(false, true, false, 16), 4u);  // a sandbox: every run a process
  EXPECT_EQ(DefaultJobs(false, false, true, 16), 4u);
  EXPECT_EQ(DefaultJobs(false, false, false, 3), 3u);
  EXPECT_EQ(DefaultJobs(true, false, false, 0), 1u);  // cores unknown
  EXPECT_EQ(DefaultJobs(false, false, false, 0), 1u);
}

}  // namespace
}  // namespace rsb::test
