// `reduce-scan-bench grade`, a class (Class, Resident, Turns): jobs, another platform for the
// checks, shards and their merge, resident child runs, the trace, the default jobs; each gives
// what grading one hand-in at a time gives.
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
#include <algorithm>
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

// The small class at --jobs 1 with the speed floor, graded once for the tests below that compare
// another way of grading it with it (the ctest fixture grade-small-class).
TEST_F(GradeShared, SmallClassIsGradedOnceForTheTestsThatCompareWithIt) {
  const SmallClass c = GradedSmallClass(true);
  EXPECT_EQ(c.summary, kSmallClassSummary);
  EXPECT_EQ(c.items.size(), 5u);
}

TEST_F(Grade, JobsGiveExactlyThePointsOfOneAtATime) {
  WithSpeedFloor();
  const SmallClass graded = GradedSmallClass();
  const std::string& handins = graded.handIns;
  const std::string& sequential = graded.summary;
  const std::map<std::string, json>& items = graded.items;
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
    EXPECT_EQ(sequential, kSmallClassSummary);
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
  // (Graded on the device at --jobs 1: the test above has --jobs N give what --jobs 1 gives.)
  const SmallClass graded = GradedSmallClass();
  const std::string& handins = graded.handIns;
  const std::string& onDevice = graded.summary;
  const std::map<std::string, json>& items = graded.items;
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

  const std::string one = HandIn("ann");
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

// A child run is `BINARY serve` given one request on its stdin (src/run/Serve.h): what the grader
// tells a timed run beside its command line (the timer verdict its first timed run found, the fd
// of its end of the turns' socket) travels in the request, not as options. A stand-in binary
// keeps its arguments, its request and whether its fd 4 is a socket.
TEST_F(Grade, TimerVerdictAndTurnsTravelInTheServeRequest) {
  const grade::Rubric rubric = grade::LoadRubric((root_ / "rubric.json").string());
  const grade::Item& it = rubric.items.front();
  const fs::path dir = root_ / "stand-in";
  fs::create_directories(dir);
  const std::string binary = (dir / "reduce-scan-bench").string();
  std::ofstream(binary) << "#!/bin/sh\nd=$(dirname \"$0\")\nprintf '%s\\n' \"$@\" >\"$d/args.$$\"\n"
                           "cat >\"$d/request.$$\"\n[ -S /proc/$$/fd/4 ] && : >\"$d/socket.$$\"\n"
                           "exit 0\n";
  fs::permissions(binary, fs::perms::owner_all);
  grade::ChildSettings s;
  s.workDir = root_.string();
  s.timerVerdict = "usable";
  const grade::Code code{binary, (dir / "kernels").string(), {}, ""};
  const grade::CaseGroup& g = it.groups.front();
  const auto requests = [&] {
    std::vector<nlohmann::json> got;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("request.", 0) != 0)
        continue;
      const std::string pid = name.substr(8);
      EXPECT_EQ(ReadFile(dir / ("args." + pid)), "serve\n");
      nlohmann::json r = nlohmann::json::parse(ReadFile(e.path()));
      r["socket"] = fs::exists(dir / ("socket." + pid));
      got.push_back(r);
      for (const char* f : {"args.", "request.", "socket."})
        fs::remove(dir / (f + pid));
    }
    return got;
  };
  grade::RunGroup(s, code, it, g, g.localSizes.front(), grade::RunKind::Timed, 60,
                  grade::Isolation::Shared);
  std::vector<nlohmann::json> got = requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].value("timer", ""), "usable") << got[0].dump();
  EXPECT_FALSE(got[0].contains("turns")) << got[0].dump();
  grade::RunTimedInTurns(s, code, code, it, g, g.localSizes.front(), 60, 60);
  got = requests();
  ASSERT_EQ(got.size(), 2u);
  for (const nlohmann::json& r : got) {
    EXPECT_EQ(r.value("timer", ""), "usable") << r.dump();
    ASSERT_TRUE(r.contains("turns")) << r.dump();
    EXPECT_EQ(r["turns"], 4) << r.dump();
    EXPECT_TRUE(r["socket"].get<bool>()) << "fd 4 is the turns' socket";
    const auto argv = r.at("argv").get<std::vector<std::string>>();
    ASSERT_FALSE(argv.empty());
    EXPECT_EQ(argv.front(), binary);
    EXPECT_NE(std::find(argv.begin(), argv.end(), "--time-budget"), argv.end()) << r.dump();
    for (const char* hidden : {"--worker-timer", "--timed-turns"})
      EXPECT_EQ(std::find(argv.begin(), argv.end(), hidden), argv.end()) << r.dump();
  }
}

// (One case, the size at which cyd crashes: the merge is of each hand-in's items, whatever their
// cases, and the class still passes, fails and errs.)
TEST_F(Grade, ShardsMergeIntoWhatOneRunWrites) {
  std::ofstream(root_ / "rubric.json") << R"({"name": "shards", "items": [
      {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
       "cases": {"sizes": [257], "scan_kinds": ["inclusive"]}}]})";
  const std::string handins = MakeSmallClass();
  ASSERT_EQ(RunGrade(handins).status, 0);
  EXPECT_EQ(ReadFile(root_ / "out" / "summary.csv"),
            "name,total,max,scan-naive\nann,2,2,2\nbob,0,2,0\ncyd,0,2,0\ndee,0,2,0\neli,2,2,2\n");
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
