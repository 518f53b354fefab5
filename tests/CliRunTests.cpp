// Which cases a command line runs and where: local-size lists, cases files, every device or
// platform, the kernels folder, timed turns and the device lock. Runs the real executable on the
// test device.
#include "TestSupport.h"
#include "engine/Worker.h"
#include "platform/DeviceLock.h"
#include "platform/Errors.h"
#include "platform/Sizes.h"
#include "platform/Subprocess.h"
#include "report/Report.h"
#include "tasks/CReductionTask.h"
#include "tasks/Tasks.h"
#include "tools/ResultFile.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include <chrono>
#include <csignal>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rsb::test {
namespace {

// A kernels folder whose path holds a space builds on every driver (pocl splits a quoted -I
// path), and a build error in an included file names that file by its real path.
TEST(Cli, KernelsFolderWithASpaceBuildsAndNamesItsFiles) {
  const std::string dir = CopyKernels("with space");
  const CommandResult r = RunBench("--check -q --size 1000 --format json --kernels '" + dir + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // Every variant of reduction and scan, and convolution's 1-D variants (the 2-D ones take
  // images, --size WxH).
  ASSERT_EQ(j["results"].size(), 11u + 4u);
  for (const auto& result : j["results"]) {
    const std::string task = result["task"], variant = result["variant"];
    const bool runs = CannotRun(task, variant, ElementType::Uint, 1000).empty();
    EXPECT_EQ(result["status"], runs ? "passed" : "skipped")
        << variant << ": " << result["message"];
  }
  Patch(dir + "/Common.clh", "#define", "#define )(");
  const CommandResult broken =
      RunBench("--check -q --variant sequential --size 100 --kernels '" + dir + "'");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(broken.status, 3);
  EXPECT_NE(broken.err.find(dir + "/Common.clh:"), std::string::npos) << broken.err;
}

TEST(Cli, LocalSizeBeyondTheDeviceIsSkippedNotFailed) {
  const CommandResult r = RunBench(
      "--check -q --variant decomposition --size 1000 "
      "--local-size 1048576 --format json");
  EXPECT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["status"], "skipped");
  EXPECT_NE(j["results"][0]["message"].get<std::string>().find("local size 1048576"),
            std::string::npos);
}

// --local-size takes a list: every case runs at each size; auto is the variant's own best on
// the device, and a variant whose sizes resolve to the same one (auto beside that size) runs at
// it once. Every output keeps the sizes apart.
TEST(Cli, LocalSizeListGivesOneResultPerCaseAndLocalSize) {
  const std::string select = "--check -q --task reduction --variant sequential,decomposition ";
  // What auto is on this device, per variant.
  const CommandResult a = RunBench(select + "--size 1000 --format json");
  ASSERT_EQ(a.status, 0) << a.err;
  std::map<std::string, size_t> best;
  const auto auto_ = nlohmann::json::parse(a.out);
  for (const auto& r : auto_["results"])
    best[r["variant"].get<std::string>()] = r["local_size"].get<size_t>();
  ASSERT_EQ(best.size(), 2u);
  // 8, 32, auto and 8 again, at two sizes: each variant at 8, 32 and its best, once each (its
  // best is neither 8 nor 32 on pocl or a GPU, but the test does not rely on that).
  const CommandResult r =
      RunBench(select + "--size 1000,100 --local-size 8,32,auto,8 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  std::multiset<std::tuple<std::string, size_t, size_t>> got;
  const auto sweep_ = nlohmann::json::parse(r.out);
  for (const auto& res : sweep_["results"]) {
    EXPECT_EQ(res["status"], "passed") << res["message"];
    got.insert({res["variant"].get<std::string>(), res["n"].get<size_t>(),
                res["local_size"].get<size_t>()});
  }
  std::multiset<std::tuple<std::string, size_t, size_t>> want;
  for (const auto& [variant, own] : best)
    for (size_t n : {1000, 100})
      for (size_t local : std::set<size_t>{8, 32, own})
        want.insert({variant, n, local});
  EXPECT_EQ(got, want);
  // A size that is the variant's auto, beside auto: one result.
  const size_t seq = best["sequential"];
  const CommandResult once = RunBench(
      "--check -q --task reduction --variant sequential --size 1000 --format json --local-size " +
      std::to_string(seq) + ",auto");
  ASSERT_EQ(once.status, 0) << once.err;
  const auto j = nlohmann::json::parse(once.out);
  ASSERT_EQ(j["results"].size(), 1u) << once.out;
  EXPECT_EQ(j["results"][0]["local_size"], seq);
  // CSV: a row per (case, local size); the table and Markdown: a row each, local column apart.
  const std::string sweep = select + "--size 1000 --local-size 8,32 ";
  const CommandResult csv = RunBench(sweep + "--format csv");
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 1 + 4) << csv.out;
  for (const char* row : {",sequential,uint,sum,,1000,8,passed,", ",sequential,uint,sum,,1000,32,",
                          ",decomposition,uint,sum,,1000,8,", ",decomposition,uint,sum,,1000,32,"})
    EXPECT_NE(csv.out.find(row), std::string::npos) << row << "\n" << csv.out;
  const CommandResult table = RunBench(sweep);
  ASSERT_EQ(table.status, 0) << table.err;
  for (const char* local : {"    8 passed", "   32 passed"})
    EXPECT_EQ(LinesWith(table.out, {"reduction  sequential ", " 1000 ", local}), 1u) << table.out;
  const CommandResult md = RunBench(sweep + "--format markdown");
  for (const char* row : {"| reduction | sequential | uint | sum | - | 1000 | 8 |",
                          "| reduction | sequential | uint | sum | - | 1000 | 32 |"})
    EXPECT_EQ(CountOf(md.out, row), 1u) << md.out;
}

// --cases FILE: exactly the listed cases, in the file's order, each at its own local size (the
// grader's one child run per task); anything the tasks do not compute is a usage error naming the
// file, the case and the field; the selection options cannot be mixed in.
TEST(Cli, CasesFileRunsExactlyTheListedCases) {
  const std::string path = std::filesystem::temp_directory_path() / "rsb-cli-cases.json";
  auto write = [&](const std::string& text) { std::ofstream(path) << text; };
  write(R"({"cases": [
    {"task": "scan", "variant": "naive", "type": "int", "op": "min", "scan_kind": "exclusive",
     "n": 1000, "local_size": 16},
    {"task": "reduction", "variant": "interleaved", "type": "uint", "op": "sum", "n": 4097},
    {"task": "reduction", "variant": "interleaved", "type": "uint", "op": "sum", "n": 4097,
     "local_size": 8},
    {"task": "convolution", "variant": "basic-2d", "type": "float", "op": "sum", "n": 4096,
     "height": 64, "params": {"mask-width": 3}}]})");
  const CommandResult r = RunBench("--check -q --format json --no-isolate --cases " + path);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 4u) << r.out;
  const auto& res = j["results"];
  EXPECT_EQ(res[0]["task"], "scan");
  EXPECT_EQ(res[0]["type"], "int");
  EXPECT_EQ(res[0]["op"], "min");
  EXPECT_EQ(res[0]["scan_kind"], "exclusive");
  EXPECT_EQ(res[0]["local_size"], 16);
  EXPECT_EQ(res[1]["variant"], "interleaved");
  EXPECT_EQ(res[1]["n"], 4097);
  EXPECT_EQ(res[2]["local_size"], 8);
  EXPECT_EQ(res[3]["height"], 64);
  EXPECT_EQ(res[3]["params"]["mask-width"], 3);
  for (const auto& x : res)
    EXPECT_EQ(x["status"], "passed") << x.dump();
  // The same file in worker processes (a copied kernels folder isolates): the same cases.
  const CommandResult iso = RunBench("--check -q --format json --isolate --cases " + path);
  ASSERT_EQ(iso.status, 0) << iso.err;
  EXPECT_EQ(nlohmann::json::parse(iso.out)["results"].size(), 4u);

  const std::vector<std::tuple<std::string, std::string, std::string>> bad = {
      {R"({"cases": [{"task": "reduction", "variant": "naive", "type": "uint", "op": "sum",
          "n": 5}]})",
       "case 1: \"variant\": 'naive'", "single-pass"},
      {R"({"cases": [{"task": "scan", "variant": "naive", "type": "uint", "op": "sum",
          "n": 5}]})",
       "case 1: \"scan_kind\"", "inclusive, exclusive"},
      {R"({"cases": [{"task": "reduction", "variant": "atomic", "type": "uint", "op": "sum",
          "n": 5}, {"task": "reduction", "variant": "atomic", "type": "uint", "op": "sum",
          "n": 5, "local_size": 100}]})",
       "case 2: \"local_size\": 100", "power of two"},
      {R"({"cases": [{"task": "convolution", "variant": "basic-2d", "type": "float", "op": "sum",
          "n": 4096}]})",
       "case 1: \"height\"", "takes images"},
      {R"({"cases": [{"task": "reduction", "variant": "atomic", "type": "uint", "op": "sum",
          "n": 5, "colour": 1}]})",
       "case 1: \"colour\": an unknown field", "local_size"},
      {R"({"cases": []})", "no case list", "allowed"},
      {"not json", "not JSON", "--cases"}};
  for (const auto& [text, what, allowed] : bad) {
    write(text);
    const CommandResult b = RunBench("--check -q --cases " + path);
    EXPECT_EQ(b.status, 2) << text << "\n" << b.err;
    EXPECT_NE(b.err.find(path), std::string::npos) << b.err;
    EXPECT_NE(b.err.find(what), std::string::npos) << what << "\n" << b.err;
    EXPECT_NE(b.err.find(allowed), std::string::npos) << allowed << "\n" << b.err;
  }
  write(R"({"cases": [{"task": "reduction", "variant": "atomic", "type": "uint", "op": "sum",
            "n": 5}]})");
  for (const char* other : {"--size 5", "--variant atomic", "--local-size 8", "--mask-width 3"}) {
    const CommandResult b = RunBench(std::string("--check -q --cases ") + path + " " + other);
    EXPECT_EQ(b.status, 2) << other << "\n" << b.err;
    EXPECT_NE(b.err.find("--cases: " + std::string(other).substr(0, std::string(other).find(' '))),
              std::string::npos)
        << b.err;
  }
  std::filesystem::remove(path);
}

// --device-lock: a process holding the lock alone keeps shared holders out until it lets go, and
// a process waiting to hold it alone keeps new shared holders out (writers first, so that a busy
// class never starves a speed measurement); a dead holder's lock is free.
TEST(DeviceLockTest, AloneExcludesSharedAndWaitingWritersGoFirst) {
  const std::string path = std::filesystem::temp_directory_path() / "rsb-device-lock";
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".turn");
  // A child that takes the lock (shared or alone) and reports on a pipe when it has it.
  auto holder = [&](bool alone, int write, double holdS) {
    const pid_t pid = fork();
    if (pid == 0) {
      const DeviceLock lock(path);
      const DeviceLock::Hold h(lock, alone);
      const char c = alone ? 'A' : 'S';
      if (::write(write, &c, 1) != 1)
        _exit(1);
      usleep(useconds_t(holdS * 1e6));
      _exit(0);
    }
    return pid;
  };
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t reader = holder(false, fds[1], 1.0);  // holds shared for 1 s
  char c = 0;
  ASSERT_EQ(read(fds[0], &c, 1), 1);
  EXPECT_EQ(c, 'S');
  const pid_t writer = holder(true, fds[1], 0.5);  // waits for the reader, then 0.5 s alone
  usleep(200000);
  const pid_t late = holder(false, fds[1], 0);  // comes after the writer: must wait for it
  std::string order;
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(read(fds[0], &c, 1), 1);
    order += c;
  }
  EXPECT_EQ(order, "AS") << "a shared holder that came later went before the waiting writer";
  for (pid_t p : {reader, writer, late}) {
    int status = 0;
    waitpid(p, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  // A holder killed while alone: the lock is free at once.
  const pid_t killed = holder(true, fds[1], 60);
  ASSERT_EQ(read(fds[0], &c, 1), 1);
  kill(killed, SIGKILL);
  waitpid(killed, nullptr, 0);
  // Free at once: the lock file and its turnstile can be taken without waiting (a lock left
  // held would wait out the dead holder's 60 s), and a hold follows.
  for (const std::string& file : {path, path + ".turn"}) {
    const int fd = open(file.c_str(), O_RDWR);
    ASSERT_GE(fd, 0) << file;
    EXPECT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0) << file << " is still held";
    close(fd);
  }
  const DeviceLock lock(path);
  { const auto shared = lock.Shared(); }
  close(fds[0]);
  close(fds[1]);
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".turn");
}

// compare matches cases on their local size too: a sweep against itself matches each size with
// itself, never one size with another.
TEST(Cli, CompareKeepsLocalSizesApart) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  const std::string dir = std::filesystem::temp_directory_path() / "rsb-cli-sweep";
  std::filesystem::create_directories(dir);
  const std::string run =
      "-q --task reduction --variant sequential --size 2^12 --iterations 6 --time-budget 0 "
      "--local-size 16,64 --format json -o ";
  ASSERT_EQ(RunBench(run + dir + "/a.json").status, 0);
  ASSERT_EQ(RunBench(run + dir + "/b.json").status, 0);
  const CommandResult c = RunCommand(
      fmt::format("'{}' compare {}/a.json {}/b.json --format json", RSB_BINARY, dir, dir));
  std::filesystem::remove_all(dir);
  ASSERT_LE(c.status, 1) << c.err;
  const auto j = nlohmann::json::parse(c.out);
  ASSERT_EQ(j["cases"].size(), 2u) << c.out;
  std::set<size_t> locals;
  for (const auto& m : j["cases"]) {
    EXPECT_EQ(m["base"]["local_size"], m["new"]["local_size"]);
    locals.insert(m["base"]["local_size"].get<size_t>());
  }
  EXPECT_EQ(locals, (std::set<size_t>{16, 64}));
  EXPECT_EQ(j["only_in_base"].size() + j["only_in_new"].size(), 0u);
}

// --device all where the platform has one device (pocl on the test machine): the same run as
// without it, the same single-device JSON (no `devices`, results without `device`).
TEST(Cli, DeviceAllOnOneDeviceIsThatDevicesRun) {
  const std::string select =
      "--check -q --task reduction --variant sequential,atomic --size 1000 --format json";
  const CommandResult plain = RunBench(select);
  const CommandResult all = RunBench(select + " --device all");
  ASSERT_EQ(plain.status, 0) << plain.err;
  ASSERT_EQ(all.status, 0) << all.err;
  const auto p = nlohmann::json::parse(plain.out), a = nlohmann::json::parse(all.out);
  if (a.contains("devices"))
    GTEST_SKIP() << "the test platform has several devices";
  EXPECT_EQ(a["device"]["name"], p["device"]["name"]);
  ASSERT_EQ(a["results"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_FALSE(a["results"][i].contains("device"));
    EXPECT_EQ(a["results"][i]["variant"], p["results"][i]["variant"]);
    EXPECT_EQ(a["results"][i]["status"], "passed");
  }
  const CommandResult table = RunBench(
      "--check -q --task reduction --variant atomic --size 100 "
      "--device all");
  EXPECT_EQ(table.status, 0) << table.err;
  EXPECT_EQ(table.out.rfind("device: ", 0), 0u) << table.out;
}

// --device all on two devices (pocl made to show two: a device of its pthread driver and one of
// its basic driver): the selection runs on each, every result says which, each device gets its
// own table and its own ceilings; isolated workers run on the right device; a list of indices
// is the same as all.
TEST(Cli, DeviceAllRunsTheSelectionOnEachDevice) {
  ScopedEnv two("POCL_DEVICES", "pthread basic");
  // The platform the tests selected (RSB_TEST_PLATFORM), not one --list-devices merely lists.
  if (Device().info.platform != "Portable Computing Language")
    GTEST_SKIP() << "the test platform is " << Device().info.platform << ", not pocl's";
  const CommandResult list = RunBench("--list-devices");
  if (CountOf(list.out, "  device ") < 2)
    GTEST_SKIP() << "pocl shows one device:\n" << list.out;
  const std::string select = "-q --task reduction --variant sequential,atomic --size 1000 ";
  for (const char* mode :
       {"--device all --no-isolate", "--device all --isolate", "--device 0,1 --no-isolate"}) {
    const CommandResult r = RunBench(select + "--check --format json " + mode);
    ASSERT_EQ(r.status, 0) << mode << "\n" << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["devices"].size(), 2u) << mode;
    EXPECT_EQ(j["device"], j["devices"][0]);
    EXPECT_NE(j["devices"][0]["name"], j["devices"][1]["name"]);
    ASSERT_EQ(j["results"].size(), 4u) << mode;
    for (size_t i = 0; i < 4; ++i) {
      const auto& res = j["results"][i];
      EXPECT_EQ(res["status"], "passed") << mode << ": " << res["message"];
      EXPECT_EQ(res["device"]["index"], i / 2) << mode;
      EXPECT_EQ(res["device"]["name"], j["devices"][i / 2]["name"]) << mode;
      EXPECT_EQ(res["variant"], i % 2 ? "atomic" : "sequential") << mode;
    }
  }
  // Timed: each device's ceilings measured on it; a table, and a CSV row naming the device, per
  // device and case.
  const CommandResult timed =
      RunBench(select + "--device all --iterations 3 --time-budget 0 --format json");
  ASSERT_EQ(timed.status, 0) << timed.err;
  const auto t = nlohmann::json::parse(timed.out);
  for (const auto& d : t["devices"])
    EXPECT_GT(d["ceilings"]["copy_gbytes_s"].get<double>(), 0.0) << d["name"];
  const CommandResult table = RunBench(select + "--check --device all");
  ASSERT_EQ(table.status, 0) << table.err;
  const std::string names[2] = {t["devices"][0]["name"], t["devices"][1]["name"]};
  const size_t first = table.out.find("device 0: " + names[0]);
  const size_t second = table.out.find("device 1: " + names[1]);
  ASSERT_NE(first, std::string::npos) << table.out;
  ASSERT_NE(second, std::string::npos) << table.out;
  EXPECT_EQ(CountOf(table.out.substr(first, second - first), "reduction  "), 2u) << table.out;
  EXPECT_EQ(CountOf(table.out.substr(second), "reduction  "), 2u) << table.out;
  const CommandResult csv = RunBench(select + "--check --device all --format csv");
  ASSERT_EQ(csv.status, 0) << csv.err;
  for (const auto& name : names)
    EXPECT_EQ(CountOf(csv.out, "\n\"" + name + "\","), 2u) << csv.out;
}

// A serve request's "turns" (the grader's speed runs on a CPU device and `ab`'s, Serve.h,
// platform/TimedTurns.h): each timed run, the warm-up included, waits for its turn, so two serve
// processes given turns by RunInTurns alternate run by run and each times all its runs; an fd
// that is no socket is the case's error, and serve ends with its run's exit status.
TEST(Cli, TimedTurnsAlternateTwoProcessesRunByRun) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  const std::filesystem::path dir =
      std::filesystem::current_path() / fmt::format("rsb-timed-turns-{}", ::getpid());
  std::filesystem::create_directories(dir);
  std::vector<TurnRun> runs;
  for (const char* name : {"a.json", "b.json"}) {
    std::vector<std::string> argv = {RSB_BINARY,     "--task",     "reduction",
                                     "--variant",    "sequential", "--size",
                                     "4096",         "--type",     "uint",
                                     "--iterations", "5",          "--time-budget",
                                     "100",          "--warmup",   "1",
                                     "--ci-target",  "0",          "--no-ceilings",
                                     "--no-isolate", "--format",   "json",
                                     "-q",           "--output",   (dir / name).string()};
    const std::vector<std::string> selectors = DeviceSelectorArgs();
    argv.insert(argv.end(), selectors.begin(), selectors.end());
    runs.push_back({{RSB_BINARY, "serve"}, 120, "", true, ServeRequest(argv, {{"turns", 4}})});
  }
  RestoreStartupEnvironment();
  std::vector<size_t> turns;
  const std::vector<ProcessResult> p = RunInTurns(runs, 4, &turns);
  for (size_t k = 0; k < 2; ++k) {
    ASSERT_EQ(p[k].exitCode, 0) << p[k].err;
    const auto r = nlohmann::json::parse(std::ifstream(dir / (k ? "b.json" : "a.json")));
    EXPECT_EQ(r.at("results").at(0).at("status"), "passed") << r.dump();
    EXPECT_EQ(r.at("results").at(0).at("iterations"), 5) << r.dump();
  }
  EXPECT_EQ(turns, (std::vector<size_t>{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}))
      << "a warm-up and 5 timed runs each, in turns";
  std::vector<std::string> argv = {
      RSB_BINARY,     "--task", "reduction",    "--variant",     "sequential", "--size", "4096",
      "--iterations", "3",      "--no-isolate", "--no-ceilings", "--format",   "json",   "-q"};
  const std::vector<std::string> selectors = DeviceSelectorArgs();
  argv.insert(argv.end(), selectors.begin(), selectors.end());
  const ProcessResult notSocket =
      RunProcess({RSB_BINARY, "serve"}, 120, "", ServeRequest(argv, {{"turns", 0}}));
  EXPECT_EQ(notSocket.exitCode, 3) << notSocket.err;  // a case's error
  EXPECT_NE(notSocket.out.find("turns fd 0: no turn given"), std::string::npos) << notSocket.out;
  std::filesystem::remove_all(dir);
}

// --platform all: the selection runs on every device of every platform, as --list-devices
// lists them (one section per device in the JSON's `devices` where there are several).
TEST(Cli, PlatformAllRunsOnEveryPlatformsDevices) {
  const CommandResult list = RunBench("--list-devices");
  ASSERT_EQ(list.status, 0) << list.err;
  size_t devices = 0;
  for (size_t at = list.out.find("  device "); at != std::string::npos;
       at = list.out.find("  device ", at + 1))
    ++devices;
  // Without the test's own --platform (RSB_TEST_PLATFORM): a second one would be refused.
  const CommandResult r = RunCommand(fmt::format(
      "'{}' --platform all --check -q --task reduction --variant atomic --size 100 --format json",
      RSB_BINARY));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.contains("devices") ? j["devices"].size() : 1u, devices) << list.out;
  EXPECT_EQ(j["results"].size(), devices);
}

// The student's loop: edit kernels/*.cl, run ./build/reduce-scan-bench. Run from its build tree,
// the binary reads the source tree's kernels (not the copy made at build time), and says which.
TEST(Cli, BinaryInItsBuildTreeRunsTheSourceTreesKernels) {
  const std::string out =
      (std::filesystem::temp_directory_path() / fmt::format("rsb-kernels-{}.json", ::getpid()))
          .string();
  const CommandResult r = RunCommand(
      fmt::format("{} --check --task reduction --variant sequential --size 100 --format json -o {}",
                  RSB_BINARY, out));
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(out);
  const nlohmann::json j = nlohmann::json::parse(in);
  std::filesystem::remove(out);
  EXPECT_EQ(std::filesystem::path(j["kernels"].get<std::string>()),
            std::filesystem::path(RSB_SOURCE_KERNEL_DIR));
  EXPECT_NE(r.err.find(std::string("kernels from ") + RSB_SOURCE_KERNEL_DIR), std::string::npos)
      << r.err;
  const CommandResult table = RunCommand(
      fmt::format("{} --check --task reduction --variant sequential --size 100 -q", RSB_BINARY));
  EXPECT_NE(table.out.find(std::string("kernels: ") + RSB_SOURCE_KERNEL_DIR), std::string::npos)
      << table.out;
}

}  // namespace
}  // namespace rsb::test
