// The command line: exit statuses and messages on bad input, the output formats, and a broken
// kernel caught by validation. Runs the real executable on the test device.
#include "TestSupport.h"
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

// The lines of text that hold every one of parts.
size_t LinesWith(const std::string& text, const std::vector<std::string>& parts) {
  std::istringstream in(text);
  size_t count = 0;
  for (std::string line; std::getline(in, line);)
    count += std::all_of(parts.begin(), parts.end(),
                         [&](const std::string& p) { return line.find(p) != std::string::npos; });
  return count;
}

// Bad input: exit 2 and one line naming the option, the value and what is allowed.
void ExpectUsageError(const std::string& args, const std::string& option,
                      const std::string& value) {
  const CommandResult r = RunBench(args);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(option), std::string::npos) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(value), std::string::npos) << args << "\n" << r.err;
  EXPECT_NE(r.err.find("allowed"), std::string::npos) << args << "\n" << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(Cli, UnknownVariantIsAUsageError) {
  ExpectUsageError("--variant bogus", "--variant", "bogus");
  ExpectUsageError("--task reduction --variant naive", "--variant", "naive");
}

TEST(Cli, BadSizesAreUsageErrors) {
  ExpectUsageError("--size 0", "--size", "'0'");
  ExpectUsageError("--size -5", "--size", "'-5'");
  ExpectUsageError("--size=-5", "--size", "'-5'");
  ExpectUsageError("--size abc", "--size", "'abc'");
  ExpectUsageError("--size 16Q", "--size", "'16Q'");
  ExpectUsageError("--size 2^40+1", "--size", "'2^40+1'");
}

TEST(Cli, BadLocalSizeIsAUsageError) {
  ExpectUsageError("--local-size 3", "--local-size", "'3'");
  ExpectUsageError("--local-size 0", "--local-size", "'0'");
  ExpectUsageError("--local-size big", "--local-size", "'big'");
}

TEST(Cli, OtherBadValuesAreUsageErrors) {
  ExpectUsageError("--type half", "--type", "half");
  ExpectUsageError("--op mul", "--op", "mul");
  ExpectUsageError("--task sort", "--task", "sort");
  ExpectUsageError("--format xml", "--format", "xml");
  ExpectUsageError("--iterations 0", "--iterations", "'0'");
  ExpectUsageError("--time-budget -1", "--time-budget", "'-1'");
  ExpectUsageError("--ci-target 60%", "--ci-target", "'60%'");
  ExpectUsageError("--ci-target often", "--ci-target", "'often'");
  ExpectUsageError("--device no-such-device-xyz", "--device", "no-such-device-xyz");
  const CommandResult r = RunBench("--bogus");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r.err;
}

// Tuning knobs: a value outside what is safe never reaches a kernel build.
TEST(Cli, BadTuningValuesAreUsageErrors) {
  ExpectUsageError("--tune scan-gpu-items=6", "--tune", "'scan-gpu-items=6'");  // not x4
  ExpectUsageError("--tune scan-cpu-items=0", "--tune", "'scan-cpu-items=0'");
  ExpectUsageError("--tune scan-gpu-items=abc", "--tune", "'scan-gpu-items=abc'");
  ExpectUsageError("--tune scan-gpu-items", "--tune", "'scan-gpu-items'");
  ExpectUsageError("--tune no-such-knob=3", "--tune", "'no-such-knob=3'");
  const CommandResult r = RunBench("--help");
  EXPECT_NE(r.out.find("scan-gpu-items (default 32; a multiple of 4 from 4 to 64)"),
            std::string::npos)
      << r.out;
}

// A value that passes the check is safe: the CPU path with few items per work-item and
// work-items past the end (once a segfault), and the values are in the results.
TEST(Cli, AllowedTuningValuesRunAndAreRecorded) {
  RSB_SKIP_IF(CannotRun("scan", "single-pass", ElementType::Uint, 1000));
  for (const char* args : {"--size 1 --local-size 2", "--size 5 --local-size 4",
                           "--size 1 --local-size 64", "--size 1000 --local-size 8"}) {
    const CommandResult r = RunBench(
        std::string("--check -q --task scan --variant single-pass --code-path cpu --format json "
                    "--tune scan-cpu-items=12 ") +
        args);
    ASSERT_EQ(r.status, 0) << args << "\n" << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["results"][0]["status"], "passed") << args;
    EXPECT_EQ(j["results"][0]["tuning"]["scan-cpu-items"], 12) << args;
    EXPECT_EQ(j["results"][0]["code_path"], "cpu") << args;
  }
}

// A kernels folder whose name is not UTF-8 still gives valid JSON (once an exception after the
// whole run, exit 3).
TEST(Cli, NonUtf8PathGivesValidJson) {
  const std::string dir = CopyKernels(
      "bad\xff"
      "name");
  const CommandResult r =
      RunBench("--check -q --variant sequential --size 100 --format json --kernels '" + dir + "'");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["results"][0]["status"], "passed");
  EXPECT_NE(j["kernels"].get<std::string>().find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD
}

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

// A kernels folder without Scan.cl is refused before any case runs when a scan is selected, and
// is fine for the reduction alone.
TEST(Cli, MissingKernelFileIsAUsageErrorBeforeAnythingRuns) {
  const std::string dir = CopyKernels("no-scan");
  std::filesystem::remove(dir + "/Scan.cl");
  ExpectUsageError("--check -q --size 100 --kernels " + dir, "--kernels", "no Scan.cl");
  EXPECT_EQ(RunBench("--check -q --task reduction --size 100 --kernels " + dir).status, 0);
  std::filesystem::remove(dir + "/Bandwidth.cl");
  ExpectUsageError(
      "-q --task reduction --variant atomic --size 100 --iterations 1 --kernels " + dir,
      "--kernels", "no Bandwidth.cl");
  std::filesystem::remove_all(dir);
}

TEST(Cli, OverlongDeviceIndexIsAUsageError) {
  ExpectUsageError("--device 99999999999999999999", "--device", "99999999999999999999");
}

// The output file is not touched before the whole command line, device selection included, is
// checked.
TEST(Cli, OutputIsNotTruncatedByABadCommandLine) {
  const std::string path = std::filesystem::temp_directory_path() / "rsb-cli-keep.json";
  std::ofstream(path) << "precious";
  const CommandResult r = RunBench("--check -q -o " + path + " --device no-such-device-xyz");
  EXPECT_EQ(r.status, 2) << r.err;
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "precious");
  std::filesystem::remove(path);
}

// ParseSize in process: every spelling --size takes, and the edges of what it refuses.
TEST(Sizes, ParseSizeTakesTheDocumentedSpellingsAndNothingElse) {
  const std::vector<std::pair<const char*, size_t>> taken = {
      {"1", 1},
      {"4096", 4096},
      {"00012", 12},
      {"4k", 4096},
      {"4K", 4096},
      {"16m", 16u << 20},
      {"16M", 16u << 20},
      {"1g", size_t(1) << 30},
      {"2^0", 1},
      {"2^05", 32},
      {"2^24+3", (size_t(1) << 24) + 3},
      {"2^20-1", (size_t(1) << 20) - 1},
      {"2^62", size_t(1) << 62},
      {"2^62+4611686018427387904", size_t(1) << 63},
      {"17179869183G", size_t(17179869183) << 30},
      {"9999999999999999999", size_t(9999999999999999999ull)}};
  for (const auto& [text, n] : taken)
    EXPECT_EQ(ParseSize(text), std::optional<size_t>(n)) << text;
  for (const char* text : {"",
                           "0",
                           "k",
                           "12kk",
                           "10T",
                           "16Q",
                           " 5",
                           "5 ",
                           "-5",
                           "+5",
                           "0x10",
                           "1e3",
                           "2^",
                           "2^63",
                           "2^+1",
                           "2^5+",
                           "2^5-3-1",
                           "2^0-1",
                           "2^1-2",
                           "2^3^2",
                           "2^10k",
                           "2^62+4611686018427387905",
                           "17179869184G",
                           "18446744073709551616",
                           "abc"})
    EXPECT_EQ(ParseSize(text), std::nullopt) << text;
}

TEST(Cli, SizeSpellingsAreEquivalent) {
  for (const char* s : {"4096", "4K", "2^12", "2^12+0", "2^13-4096"}) {
    const CommandResult r =
        RunBench(std::string("--check -q --variant sequential --format csv --size ") + s);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find(",4096,"), std::string::npos) << s << "\n" << r.out;
  }
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

// A bad element of the list is named on its own (exit 2, one line), before anything runs.
TEST(Cli, BadLocalSizeListElementIsAUsageError) {
  ExpectUsageError("--local-size 64,100", "--local-size", "'100'");
  ExpectUsageError("--local-size auto,128,big", "--local-size", "'big'");
  ExpectUsageError("--local-size 64,0", "--local-size", "'0'");
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

// --timed-turns FD (the grader's speed runs on a CPU device, platform/TimedTurns.h): each timed
// run, the warm-up included, waits for its turn, so two processes given turns by RunInTurns
// alternate run by run and each times all its runs; an fd that is no socket is the case's error.
TEST(Cli, TimedTurnsAlternateTwoProcessesRunByRun) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  const std::filesystem::path dir =
      std::filesystem::current_path() / fmt::format("rsb-timed-turns-{}", ::getpid());
  std::filesystem::create_directories(dir);
  std::vector<TurnRun> runs;
  for (const char* name : {"a.json", "b.json"}) {
    std::vector<std::string> argv = {RSB_BINARY,
                                     "--task",
                                     "reduction",
                                     "--variant",
                                     "sequential",
                                     "--size",
                                     "4096",
                                     "--type",
                                     "uint",
                                     "--iterations",
                                     "5",
                                     "--time-budget",
                                     "100",
                                     "--warmup",
                                     "1",
                                     "--ci-target",
                                     "0",
                                     "--no-ceilings",
                                     "--no-isolate",
                                     "--timed-turns",
                                     "3",
                                     "--format",
                                     "json",
                                     "-q",
                                     "--output",
                                     (dir / name).string()};
    const std::vector<std::string> selectors = DeviceSelectorArgs();
    argv.insert(argv.end(), selectors.begin(), selectors.end());
    runs.push_back({argv, 120, ""});
  }
  RestoreStartupEnvironment();
  std::vector<size_t> turns;
  const std::vector<ProcessResult> p = RunInTurns(runs, 3, &turns);
  for (size_t k = 0; k < 2; ++k) {
    ASSERT_EQ(p[k].exitCode, 0) << p[k].err;
    const auto r = nlohmann::json::parse(std::ifstream(dir / (k ? "b.json" : "a.json")));
    EXPECT_EQ(r.at("results").at(0).at("status"), "passed") << r.dump();
    EXPECT_EQ(r.at("results").at(0).at("iterations"), 5) << r.dump();
  }
  EXPECT_EQ(turns, (std::vector<size_t>{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}))
      << "a warm-up and 5 timed runs each, in turns";
  const CommandResult notSocket = RunBench(
      "--task reduction --variant sequential --size 4096 --iterations 3 --no-isolate "
      "--no-ceilings --timed-turns 0 --format json -q");
  EXPECT_EQ(notSocket.status, 3) << notSocket.err;  // a case's error
  EXPECT_NE(notSocket.out.find("--timed-turns 0: no turn given"), std::string::npos)
      << notSocket.out;
  std::filesystem::remove_all(dir);
}

// A timed run measures the streams a second time just past twice the last-level cache, and a
// case that reads less than the large streams records that it was held against them; in process
// and through an isolated worker alike (the worker passes every rate on).
TEST(Cli, TimedRunsMeasureTheNearCacheStreams) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  for (const char* mode : {"--no-isolate", "--isolate"}) {
    const CommandResult r = RunBenchWithFullCeilings(
        std::string("-q --task reduction --variant single-pass --size 2^16 --iterations 3 "
                    "--time-budget 0 --format json ") +
        mode);
    ASSERT_EQ(r.status, 0) << mode << "\n" << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto& c = j["device"]["ceilings"];
    const uint64_t cache = j["device"]["global_mem_cache_bytes"];
    const uint64_t near = (2 * cache + 4096 + 15) / 16 * 16;
    if (cache == 0 || near >= c["buffer_bytes"].get<uint64_t>())
      GTEST_SKIP() << "the device reports no cache, or one too large for a second size";
    EXPECT_EQ(c["near_cache_buffer_bytes"].get<uint64_t>(), near) << mode;
    for (const char* stream : {"read", "write", "copy"})
      EXPECT_GT(c[std::string("near_cache_") + stream + "_gbytes_s"].get<double>(), 0.0)
          << mode << " " << stream;
    ASSERT_EQ(j["results"].size(), 1u) << mode;
    EXPECT_EQ(j["results"][0]["ceiling_stream_bytes"].get<uint64_t>(), near) << mode;
  }
}

// The memory ceilings are measured before the first case of an isolated run, under a limit of
// their own: a --timeout shorter than the measurement (12 streams of 0.5 s and their set-up)
// charges no case, and the result has a utilisation.
TEST(Cli, TimeoutDoesNotChargeTheCeilingsToTheFirstCase) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));  // its subject: ceilings, measured with the timer
  const CommandResult r = RunBenchWithFullCeilings(  // longer than --timeout
      "-q --task reduction --variant interleaved --size 1000 --iterations 3 --timeout 2 "
      "--format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["device"]["ceilings"]["read_gbytes_s"].get<double>(), 0.0) << r.out;
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["status"], "passed") << j["results"][0]["message"];
  EXPECT_GT(j["results"][0]["utilisation"].get<double>(), 0.0);
}

// --no-ceilings: the cases are timed without the ceilings' streams first (the grader's timed
// rounds), so nothing has a utilisation; the timer is still checked, in process and in workers.
TEST(Cli, NoCeilingsTimesTheCasesWithoutMeasuringTheCeilings) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  for (const char* mode : {"--no-isolate", "--isolate"}) {
    const CommandResult r =
        RunBench(std::string("--task reduction --variant interleaved,sequential --size 1000 "
                             "--iterations 3 --no-ceilings --format json ") +
                 mode);
    ASSERT_EQ(r.status, 0) << mode << "\n" << r.err;
    EXPECT_EQ(r.err.find("measuring the memory ceilings"), std::string::npos) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["device"]["ceilings"]["read_gbytes_s"].get<double>(), 0.0) << mode;
    EXPECT_EQ(j["device"]["timer"]["usable"], true) << mode << " " << j["device"].dump();
    ASSERT_EQ(j["results"].size(), 2u) << mode;
    for (const auto& res : j["results"]) {
      EXPECT_EQ(res["status"], "passed") << mode << " " << res["message"];
      EXPECT_GT(res["gelem_s"].get<double>(), 0.0) << mode;
      EXPECT_EQ(res["utilisation"].get<double>(), 0.0) << mode;
    }
  }
}

// Ceilings that cannot be measured (here Bandwidth.cl does not build) are said once, and the
// cases run and pass without a utilisation, in process and in workers alike.
TEST(Cli, CeilingsThatCannotBeMeasuredAreSaidOnceAndTheCasesRunWithoutThem) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));  // its subject: ceilings, measured with the timer
  const std::string dir = CopyKernels("no-ceilings");
  Patch(dir + "/Bandwidth.cl", "__kernel", "this is not C; __kernel");
  for (const char* mode : {"--no-isolate", "--isolate"}) {
    const CommandResult r =
        RunBench(std::string("-q --task reduction --variant interleaved,sequential --size 1000 "
                             "--iterations 3 --format json --kernels ") +
                 dir + " " + mode);
    ASSERT_EQ(r.status, 0) << mode << "\n" << r.err;
    EXPECT_EQ(CountOf(r.err, "ceilings: not measured: "), 1u) << mode << "\n" << r.err;
    EXPECT_NE(r.err.find("Bandwidth.cl"), std::string::npos) << mode << "\n" << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["results"].size(), 2u) << mode;
    for (const auto& res : j["results"]) {
      EXPECT_EQ(res["status"], "passed") << mode << " " << res["message"];
      EXPECT_EQ(res["utilisation"].get<double>(), 0.0) << mode;
    }
  }
  std::filesystem::remove_all(dir);
}

// A --device that matches nothing: exit 2, one line naming the devices there are.
TEST(Cli, UnknownDeviceNamesTheAllowedDevices) {
  const CommandResult json = RunBench("--check -q --size 10 --variant atomic --format json");
  ASSERT_EQ(json.status, 0) << json.err;
  const std::string name = nlohmann::json::parse(json.out)["device"]["name"];
  ExpectUsageError("--device no-such-device-xyz", "--device", "'" + name + "'");
  ExpectUsageError("--device all,no-such-device-xyz", "--device", "no-such-device-xyz");
}

TEST(Cli, MissingKernelFolderIsAUsageError) {
  ExpectUsageError("--kernels /no/such/folder", "--kernels", "/no/such/folder");
}

TEST(Cli, KernelThatDoesNotCompileExits3WithTheBuildLog) {
  const std::string dir = CopyKernels("nocompile");
  Patch(dir + "/Reduction.cl", "__kernel void ReduceSequential(",
        "this is not OpenCL C;\n__kernel void ReduceSequential(");
  const CommandResult r = RunBench("--check -q --variant sequential --size 100 --kernels " + dir);
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("kernel build failed"), std::string::npos) << r.err;
  // The error names the file and the line of the bad statement.
  std::ifstream in(dir + "/Reduction.cl");
  std::string line;
  int number = 0;
  while (std::getline(in, line) && line != "this is not OpenCL C;")
    ++number;
  const std::string where = "Reduction.cl:" + std::to_string(number + 1) + ":";
  EXPECT_NE(r.err.find(where), std::string::npos) << "no " << where << " in\n" << r.err;
  std::filesystem::remove_all(dir);
}

// Each driver's name for the source it was given becomes the real file: NVIDIA's "<kernel>",
// pocl's temporary file, Mesa's (rusticl, clover) "input.cl"; a name that merely ends so stays.
TEST(BuildLog, NamesTheRealFileOnEveryDriver) {
  const std::string path = "/k/Scan.cl";
  EXPECT_EQ(WithRealFileName("<kernel>:48:5: error: x", path), "/k/Scan.cl:48:5: error: x");
  EXPECT_EQ(WithRealFileName("/tmp/pocl/kcache/tempfile_Ab3.cl:48:5: error: x", path),
            "/k/Scan.cl:48:5: error: x");
  EXPECT_EQ(WithRealFileName("input.cl:48:5: error: use of undeclared identifier 'x'\n"
                             "In file included from input.cl:3:\n/k/Common.clh:7:1: note",
                             path),
            "/k/Scan.cl:48:5: error: use of undeclared identifier 'x'\n"
            "In file included from /k/Scan.cl:3:\n/k/Common.clh:7:1: note");
  EXPECT_EQ(WithRealFileName("myinput.cl:4: x; /k/input.cl: y", path),
            "myinput.cl:4: x; /k/input.cl: y");
  EXPECT_EQ(WithRealFileName("input.cl:1:2: e", "/a$1/Scan.cl"), "/a$1/Scan.cl:1:2: e");
}

TEST(Cli, BrokenReductionKernelFailsValidationNamingTheVariant) {
  const std::string dir = CopyKernels("broken");
  // Decomposition drops the second element of every pair: a wrong sum, a correct-looking run.
  Patch(dir + "/Reduction.cl",
        "const T v = OP(LoadOrIdentity(src, base, n), LoadOrIdentity(src, base + LOCAL_SIZE, n));\n"
        "  const T r = WorkGroupReduceSequential(scratch, v);",
        "const T v = LoadOrIdentity(src, base, n);\n"
        "  const T r = WorkGroupReduceSequential(scratch, v);");
  const CommandResult r = RunBench("--check -q --task reduction --size 100000 --kernels " + dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("FAILED reduction/decomposition"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected"), std::string::npos) << r.err;
  // The other variants are untouched and still pass.
  EXPECT_EQ(r.err.find("FAILED reduction/sequential"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

// A stubbed variant (its kernel returns at once) fails every case alike: a person reads one line
// for them, the first case and how many more (the table's notes, and the FAILED lines with -q),
// while the JSON keeps every case's own message.
TEST(Cli, CasesThatFailAlikeAreListedOnceWithTheirCount) {
  const std::string dir = CopyKernels("stubbed");
  Patch(dir + "/Scan.cl", "  const IDX i = get_global_id(0);\n  if (i >= n)\n    return;",
        "  const IDX i = get_global_id(0);\n  if (i >= 0)\n    return;");
  const std::string json = dir + "/results.json";
  const std::string sel =
      " --task scan --variant naive --size 1,2,3,257 --type int,uint --kernels " + dir;
  const auto count = [](const std::string& text, const std::string& what) {
    size_t k = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
      ++k;
    return k;
  };
  const CommandResult quiet = RunBench("--check -q --json " + json + sel);
  EXPECT_EQ(quiet.status, 1) << quiet.err;
  EXPECT_EQ(count(quiet.err, "FAILED "), 1u) << quiet.err;
  EXPECT_NE(quiet.err.find("FAILED scan/naive int sum inclusive n=1 L="), std::string::npos)
      << quiet.err;
  EXPECT_NE(quiet.err.find("(and 7 more cases with this message but for its numbers): naive: "
                           "wrong result at index 0"),
            std::string::npos)
      << quiet.err;
  EXPECT_EQ(count(quiet.out, "\nfailed "), 1u) << quiet.out;
  const auto j = nlohmann::json::parse(ReadFile(json));
  ASSERT_EQ(j["results"].size(), 8u);
  std::set<std::string> messages;
  for (const auto& r : j["results"])
    messages.insert(r["message"].get<std::string>());
  EXPECT_GT(messages.size(), 1u) << "each case's own message (its n, its values)";
  std::filesystem::remove_all(dir);
}

// Alike: the same status and device, and the same message but for its numbers; a number right
// after ':' (a file's line and column) counts, and passed cases are never grouped.
TEST(Cli, GroupAlikeIgnoresValuesButNotLinesOrStatus) {
  const auto result = [](Status s, const std::string& message, size_t device = 0) {
    Result r;
    r.status = s;
    r.message = message;
    r.device = device;
    return r;
  };
  const std::vector<Result> rs = {
      result(Status::Failed, "v: wrong result at index 0: expected 500, got 2139062143 (1 of 1)"),
      result(Status::Failed, "v: wrong result at index 7: expected -inf, got 1.38e+306 (9 of 9)"),
      result(Status::Error, "v: wrong result at index 7: expected -inf, got 1.38e+306 (9 of 9)"),
      result(Status::Failed, "v: wrong result at index 3: expected 5, got 0x7f0 (2 of 2)", 1),
      result(Status::Error, "kernel build failed: k/Scan.cl:171:13: expected ';'"),
      result(Status::Error, "kernel build failed: k/Scan.cl:172:13: expected ';'"),
      result(Status::Error, "kernel build failed: k/Scan.cl:171:13: expected ';'"),
      result(Status::Passed, "oclgrind: no diagnostic, 100 instructions"),
      result(Status::Passed, "oclgrind: no diagnostic, 200 instructions"),
  };
  std::vector<const Result*> all;
  for (const auto& r : rs)
    all.push_back(&r);
  std::vector<std::pair<size_t, size_t>> groups;
  for (const auto& g : GroupAlike(all))
    groups.emplace_back(g.first, g.count);
  EXPECT_EQ(groups, (std::vector<std::pair<size_t, size_t>>{
                        {0, 2}, {2, 1}, {3, 1}, {4, 2}, {5, 1}, {7, 1}, {8, 1}}));
  EXPECT_EQ(AlikeText(1), "");
  EXPECT_EQ(AlikeText(2), " (and 1 more case with this message but for its numbers)");
}

TEST(Cli, JsonOutputHasTheDocumentedFields) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  const CommandResult r = RunBench(
      "--format json -q --task reduction --variant sequential,atomic "
      "--type uint,float --size 2^16 --iterations 3 --time-budget 0");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "reduce-scan-bench/1");
  for (const char* k :
       {"platform", "name", "vendor", "driver_version", "opencl_c_version", "compute_units",
        "global_mem_bytes", "local_mem_bytes", "max_work_group_size", "nv_warp_size"})
    EXPECT_TRUE(j["device"].contains(k)) << k;
  ASSERT_EQ(j["results"].size(), 4u);
  for (const auto& res : j["results"]) {
    for (const char* k : {"task", "variant", "type", "op", "n", "local_size", "status", "message",
                          "iterations", "time_ms", "gelem_s", "gbytes_s", "bytes_moved",
                          "bandwidth_util", "cost", "launches_enqueued", "validated_runs"})
      EXPECT_TRUE(res.contains(k)) << k;
    EXPECT_EQ(res["status"], "passed");
    EXPECT_EQ(res["n"], 65536);
    EXPECT_EQ(res["iterations"], 3);
    EXPECT_EQ(res["validated_runs"], 2);  // the first run and the last timed run
    EXPECT_EQ(res["cost"]["launches"], res["launches_enqueued"]);
    for (const char* k : {"median", "min", "max", "mean", "stddev"})
      EXPECT_TRUE(res["time_ms"].contains(k)) << k;
    EXPECT_GT(res["time_ms"]["median"].get<double>(), 0.0);
    EXPECT_LE(res["time_ms"]["min"].get<double>(), res["time_ms"]["median"].get<double>());
    EXPECT_NEAR(res["gelem_s"].get<double>(),
                65536 / (res["time_ms"]["median"].get<double>() * 1e6), 1e-6);
    EXPECT_GT(res["bytes_moved"].get<double>(), 65536.0 * 4 * 0.99);
  }
}

TEST(Cli, CsvHasAHeaderAndOneRowPerCase) {
  const CommandResult r = RunBench(
      "--format csv --check -q --task reduction --op sum,min,max "
      "--size 1000");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("device,driver_version,task,variant,type,op,scan_kind,n,", 0), 0u) << r.out;
  const size_t variants = CReductionTask().Variants().size();
  EXPECT_EQ(size_t(std::count(r.out.begin(), r.out.end(), '\n')), 1 + variants * 3) << r.out;
}

TEST(Cli, OutputFileReceivesTheReport) {
  const std::string path = std::filesystem::temp_directory_path() / "rsb-cli-output.json";
  const CommandResult r =
      RunBench("--format json --check -q --variant atomic --size 999 -o " + path);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["results"][0]["variant"], "atomic");
  std::filesystem::remove(path);
}

// An output that is a folder passed the up-front check: the whole run went by, then exit 3 and
// every result lost. Refused with exit 2 before anything runs (no progress, no device line).
TEST(Cli, OutputFolderIsAUsageErrorBeforeAnythingRuns) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    fmt::format("rsb-cli-output-folder-{}", (long)::getpid());
  std::filesystem::create_directories(dir);
  const CommandResult r =
      RunBench(fmt::format("--check --variant sequential --size 100 -o '{}'", dir.string()));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(
      r.err.find(fmt::format("--output '{}': is a folder; allowed: a file path", dir.string())),
      std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(dir));  // no temporary file left behind
  std::filesystem::remove_all(dir);
}

// A folder, a symlink loop or an unreadable file given as --profile or --cases: exit 2 naming
// the option and the path (it was exit 3 with the C++ library's own words).
TEST(Cli, InputFilesThatAreFoldersOrLoopsAreUsageErrors) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    fmt::format("rsb-cli-input-paths-{}", (long)::getpid());
  std::filesystem::create_directories(dir);
  const std::string loop = (dir / "loop").string();
  std::filesystem::create_symlink(loop, loop);
  ExpectUsageError(fmt::format("--check --profile '{}'", dir.string()),
                   "--profile '" + dir.string(), "is a folder");
  ExpectUsageError(fmt::format("--check --cases '{}'", dir.string()), "--cases '" + dir.string(),
                   "is a folder");
  ExpectUsageError(fmt::format("--check --cases '{}'", loop), "--cases '" + loop,
                   "Too many levels of symbolic links");
  ExpectUsageError(fmt::format("--check --profile '{}'", loop), "--profile '" + loop,
                   "Too many levels of symbolic links");
  std::filesystem::remove_all(dir);
}

// CLI11 drops the empty items of a comma list ("8,,9" ran 8 and 9), and strtod reads forms the
// help never names (" 1%", 0x1p-7, 1e-2): each is refused, naming the option and the value.
TEST(Cli, EmptyListItemsAndUnnamedNumberFormsAreUsageErrors) {
  ExpectUsageError("--size 8,,9", "--size", "'8,,9'");
  ExpectUsageError("--size 8,", "--size", "'8,'");
  ExpectUsageError("--size=,8", "--size", "',8'");
  ExpectUsageError("-n8,,9", "-n", "'8,,9'");
  ExpectUsageError("--local-size 64,,128", "--local-size", "'64,,128'");
  ExpectUsageError("--type uint,", "--type", "'uint,'");
  ExpectUsageError("--variant sequential,,atomic", "--variant", "'sequential,,atomic'");
  ExpectUsageError("--mask-width 5,,7", "--mask-width", "'5,,7'");
  ExpectUsageError("--ci-target ' 1%'", "--ci-target", "' 1%'");
  ExpectUsageError("--ci-target 0x1p-7", "--ci-target", "'0x1p-7'");
  ExpectUsageError("--ci-target 1e-2", "--ci-target", "'1e-2'");
  ExpectUsageError("--ci-target +1%", "--ci-target", "'+1%'");
  ExpectUsageError("--time-budget 0x1p-1", "--time-budget", "'0x1p-1'");
  ExpectUsageError("--time-budget ' 0.5'", "--time-budget", "' 0.5'");
  ExpectUsageError("--timeout 1e1", "--timeout", "'1e1'");
  const CommandResult help = RunBench("--help");
  EXPECT_NE(help.out.find("a plain decimal"), std::string::npos) << help.out;
  // The plain forms the help names still work.
  const CommandResult ok =
      RunBench("--explain -q --variant sequential --size 8,9 --ci-target 0.02 --time-budget .25");
  EXPECT_EQ(ok.status, 0) << ok.err;
}

// pocl's clang writes "1 warning generated." to stderr itself (the warning is in the build log)
// when it cannot unroll tiled-2d's loops at mask width 31: --quiet keeps it off stderr too. Each
// run gets an empty pocl kernel cache, so that pocl compiles (a cached binary warns no more).
TEST(Cli, QuietKeepsTheCompilersOwnLinesOffStderr) {
  const std::string args =
      "--check --task convolution --variant tiled-2d --mask-width 31 --size 256x256 ";
  auto fresh = [&](const std::string& flags) {
    const std::filesystem::path cache =
        std::filesystem::temp_directory_path() /
        fmt::format("rsb-cli-pocl-cache-{}-{}", (long)::getpid(), flags.size());
    std::filesystem::remove_all(cache);
    const std::string selectors = DeviceSelectors();
    const CommandResult r = RunCommand(fmt::format(
        "POCL_CACHE_DIR='{}' '{}' {}{}{}", cache.string(), RSB_BINARY, args, flags, selectors));
    std::filesystem::remove_all(cache);
    return r;
  };
  const CommandResult loud = fresh("");
  ASSERT_EQ(loud.status, 0) << loud.err;
  if (loud.err.find("warning generated") == std::string::npos)
    std::cerr << "note: this device's compiler wrote no warning; the quiet run is checked anyway\n";
  const CommandResult quiet = fresh("-q");
  EXPECT_EQ(quiet.status, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
}

TEST(Cli, HelpListDevicesAndListVariantsExit0) {
  CommandResult r = RunBench("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--local-size"), std::string::npos);
  // The subcommands, a line each, and each answers its own --help.
  for (const char* sub : {"grade", "grade merge", "grade autograding", "compare", "plot", "tune"}) {
    EXPECT_NE(r.out.find(fmt::format("\n  {} ", sub)), std::string::npos) << sub << "\n" << r.out;
    // Without the test device's selectors: not every subcommand takes --platform.
    const CommandResult h = RunCommand(fmt::format("'{}' {} --help", RSB_BINARY, sub));
    EXPECT_EQ(h.status, 0) << sub << "\n" << h.err;
    EXPECT_NE(h.out.find(std::string("reduce-scan-bench ") + sub), std::string::npos) << h.out;
  }
  r = RunBench("--list-devices");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("platform 0"), std::string::npos) << r.out;
  r = RunBench("--list-variants");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("interleaved"), std::string::npos) << r.out;
}

// --version names the build; every result file records it (docs/result-schema.json has the
// rest; tests/schema_test.py checks real files against it).
TEST(Cli, VersionNamesTheBuildAndResultsRecordIt) {
  const CommandResult v = RunBench("--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(v.out.rfind("reduce-scan-bench ", 0), 0u) << v.out;
  EXPECT_NE(v.out.find("git "), std::string::npos) << v.out;
  const CommandResult r = RunBench("--check -q --size 100 --variant sequential --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NE(v.out.find(j["suite"]["git_revision"].get<std::string>()), std::string::npos);
  EXPECT_TRUE(j["kernel_files"].contains("Reduction.cl"));
}

// Markdown: a pipe table with the table's columns, untimed cells "-", every case a row.
TEST(Cli, MarkdownIsAPipeTableWithARowPerCase) {
  const CommandResult r = RunBench(
      "--check -q --size 100,200 --task reduction --variant sequential,atomic "
      "--format markdown");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("| task | variant | type |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("|---|---|"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| reduction | atomic | uint | sum | - | 200 |"), std::string::npos)
      << r.out;
  size_t rows = 0;
  for (size_t at = r.out.find("\n| reduction"); at != std::string::npos;
       at = r.out.find("\n| reduction", at + 1))
    ++rows;
  EXPECT_EQ(rows, 4u) << r.out;
}

// A device of the sample run: every field set, nothing measured on a real one.
DeviceRun SampleDevice(const std::string& name, bool gpu, bool timerUsable) {
  DeviceRun d;
  d.info = FabricatedDevice(gpu, 65536, 1024);
  d.info.name = name;
  d.info.platform = gpu ? "Sample CL" : "Portable Computing Language";
  d.info.vendor = gpu ? "Sample Vendor" : "AuthenticAMD";
  d.info.driverVersion = gpu ? "580.1" : "6.0";
  d.info.deviceVersion = "OpenCL 3.0 sample";
  d.info.openclCVersion = "OpenCL C 1.2";
  d.info.globalMemCacheBytes = 4u << 20;
  d.info.profilingResolutionNs = timerUsable ? 1000 : 0;
  // The unusable timer's device ran with --timer events: its cases untimed.
  d.ceilings.timer = {true, timerUsable, timerUsable ? "" : "resolution 0 ns",
                      timerUsable ? TimerMode::Auto : TimerMode::Events};
  if (!timerUsable)
    return d;
  d.ceilings.readGBs = 100.5;
  d.ceilings.writeGBs = 90.25;
  d.ceilings.copyGBs = 80.125;
  d.ceilings.bufferBytes = size_t(1) << 30;
  d.ceilings.near = {150, 140, 130};
  d.ceilings.nearBufferBytes = size_t(16) << 20;
  return d;
}

// A timed case on the first device, with a breakdown of two kernels and untimed commands.
Result SampleTimed() {
  Result r;
  r.task = "reduction", r.variant = "decomposition", r.n = size_t(1) << 20, r.localSize = 256;
  r.codePath = "gpu", r.tuning = {{"reduction-gpu-unroll", 8}}, r.kernelOptions = "-DT=uint";
  r.status = Status::Passed, r.iterations = 120, r.validatedRuns = 1, r.launchesEnqueued = 2;
  r.timeMs = {0.125, 0.12, 0.2, 0.13, 0.01, 0.124, 0.126};
  r.ciMet = true, r.ciTarget = 0.01, r.gelemS = 8.388608, r.gbytesS = 33.6;
  r.timer = "events", r.timerResolutionNs = 1000;
  r.samplesMs = {{0.12, 0.125, 0.2}, {0.124, 0.126, 0.13}};  // --repetitions 2
  r.roundsMs = {0.1375, 0.125, 0.15, 0.1375, 0.0125, 0, 0};
  r.bandwidthUtil = 0.42, r.ceiling = "read", r.ceilingGBs = 100.5, r.utilisation = 0.334;
  r.ceilingStreamBytes = size_t(1) << 30;
  r.cost = {2, 18, 1048575, 4202512, 8212, 0, 524288};
  r.breakdown.kernels = {
      {"ReduceDecomposition", 1, 0.1, 0.101, 0.8, 4202496, 42.02, 0.41, 4202496, ""},
      {"ReduceDecomposition (partials)", 1, 0.02, 0.02, 0.16, 8228, 0.41, 0, 8228, ""}};
  r.breakdown.untimed = {{"FillBuffer (reset counter)", "prepare", 1, 0.003},
                         {"Poison output", "validation", 1, 0.004}};
  r.breakdown.gapsMs = 0.005, r.breakdown.gapsMsMedian = 0.006;
  return r;
}

// The sample run's results: on one device every status but two, every mark (* c ?), a scan kind,
// an image with task parameters; on two devices a timed case on the first and the other two
// statuses on the second, whose timer is unusable.
std::vector<Result> SampleResults(bool twoDevices) {
  Result failed = SampleTimed();
  failed.variant = "sequential", failed.status = Status::Failed, failed.iterations = 0;
  failed.message = "index 5: expected 3, got 4", failed.breakdown = {};
  if (twoDevices) {
    Result untimed = failed;
    untimed.device = 1, untimed.status = Status::Untimed, untimed.message = "";
    Result error = untimed;
    error.variant = "interleaved", error.status = Status::Error;
    error.message = "CL_OUT_OF_RESOURCES in clEnqueueNDRangeKernel";
    return {SampleTimed(), untimed, error};
  }
  std::vector<Result> v = {SampleTimed()};
  Result scan = SampleTimed();
  scan.task = "scan", scan.variant = "single-pass", scan.type = ElementType::Float;
  scan.op = Op::Max, scan.fields["scan_kind"] = "exclusive", scan.n = 4096, scan.localSize = 64;
  scan.ciMet = false, scan.fitsInCache = true, scan.utilisation = 1.5, scan.breakdown = {};
  v.push_back(scan);
  Result conv = SampleTimed();
  conv.task = "convolution", conv.variant = "tiled-2d", conv.n = 2048, conv.height = 32;
  conv.params = {{"mask-width", 5}}, conv.type = ElementType::Float, conv.utilisation = 1.2;
  conv.utilisationSuspect = "above 105% of the ceiling: sample", conv.settings.source = "profile";
  conv.settings.profile = "sample.json", conv.breakdown.kernels[0].utilisationSuspect = "x";
  v.push_back(conv);
  v.push_back(failed);
  Result skipped;
  skipped.task = "reduction", skipped.variant = "atomic", skipped.type = ElementType::Double;
  skipped.n = 1000, skipped.message = "double needs cl_khr_fp64";
  v.push_back(skipped);
  return v;
}

RunInfo SampleRunInfo(bool twoDevices) {
  RunInfo info;
  info.devices.push_back(SampleDevice("Sample GPU", true, true));
  if (twoDevices)
    info.devices.push_back(SampleDevice("Sample CPU", false, false));
  info.host = "sample-host";
  info.fields = TaskFields();
  info.kernelHashes = {{"Reduction.cl", "0123abcd"}, {"Scan.cl", "4567ef01"}};
  info.cold = twoDevices;
  info.ciTarget = 0.01;
  info.command = "reduce-scan-bench --sample \"quoted\"";
  info.date = "2026-11-28T00:00:00Z";
  info.kernelDir = "/sample/kernels";
  return info;
}

// Every printer's results, on one device and on two, byte for byte as the writers before the
// printers wrote them; the table also with --breakdown.
TEST(Report, ResultsInEveryFormatKeepTheirBytes) {
  for (const bool two : {false, true}) {
    const RunInfo info = SampleRunInfo(two);
    const std::vector<Result> results = SampleResults(two);
    const std::string name = std::string("results-") + (two ? "two-devices" : "one-device");
    for (const std::string& format : FormatNames()) {
      std::ostringstream out;
      MakePrinter(ParseFormat(format))->Results(out, info, results);
      ExpectGolden(name + "." + GoldenExtension(format), out.str());
    }
    std::ostringstream breakdown;
    MakePrinter(OutputFormat::Table, {/*breakdown=*/true})->Results(breakdown, info, results);
    ExpectGolden(name + "-breakdown.txt", breakdown.str());
  }
}

// Ranges in --size and --local-size: FIRST:LAST doubles, FIRST:LAST:FACTOR multiplies, up to
// LAST; each value is a case as a list's would be. A range that runs backwards, a factor below 2,
// a bound that is not allowed alone (an image, a local size that is no power of two) is exit 2.
TEST(Cli, SizeAndLocalSizeRangesExpandToTheirValues) {
  const CommandResult r = RunBench(
      "--explain --format json --task reduction --variant sequential --size 2^10:2^14:4,5000 "
      "--local-size 64:256,auto");
  ASSERT_EQ(r.status, 0) << r.err;
  std::set<std::pair<size_t, size_t>> seen;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& c : j["cases"])
    seen.insert({c["n"].get<size_t>(), c["local_size"].get<size_t>()});
  std::set<size_t> ns, locals;
  for (const auto& [n, l] : seen)
    ns.insert(n), locals.insert(l);
  EXPECT_EQ(ns, std::set<size_t>({1024, 4096, 16384, 5000}));
  EXPECT_TRUE(locals.count(64) && locals.count(128) && locals.count(256)) << r.out;
  EXPECT_EQ(RunBench("--explain --task reduction --size 2^10:2^12 --format json").status, 0);
  for (const char* bad : {"--size 2^14:2^10", "--size 2^10:2^14:1", "--size 8x8:16x16",
                          "--local-size 64:100", "--local-size 64:256:3", "--size 0:8"}) {
    const CommandResult e = RunBench(std::string("--explain --task reduction ") + bad);
    EXPECT_EQ(e.status, 2) << bad << ": " << e.err;
  }
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

// CSV that tools read: the last column, `row`, says what each row is (case, kernel, untimed); a
// device name with a comma (rusticl's) is quoted, so every row has the header's fields for a CSV
// reader; and docs/OUTPUT.md's awk recipe, -F, '$NF == "case"', finds exactly the case rows.
TEST(Report, CsvRowsSayWhatTheyAreAndANameWithACommaStaysOneField) {
  RunInfo info = SampleRunInfo(false);
  info.devices[0].info.name = "llvmpipe (LLVM 15.0.6, 256 bits)";
  const std::vector<Result> results = SampleResults(false);
  std::ostringstream out;
  MakePrinter(OutputFormat::Csv)->Results(out, info, results);
  const auto rows = CsvRows(out.str());
  ASSERT_GT(rows.size(), 1u);
  EXPECT_EQ(rows[0].back(), "row");
  std::map<std::string, size_t> kinds;
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), rows[0].size()) << "row " << i << ": " << out.str();
    EXPECT_EQ(rows[i][0], "llvmpipe (LLVM 15.0.6, 256 bits)");
    ++kinds[rows[i].back()];
  }
  size_t kernels = 0, untimed = 0;
  for (const auto& r : results)
    kernels += r.breakdown.kernels.size(), untimed += r.breakdown.untimed.size();
  EXPECT_EQ(kinds["case"], results.size());
  EXPECT_EQ(kinds["kernel"], kernels);
  EXPECT_EQ(kinds["untimed"], untimed);
  EXPECT_EQ(kinds.size(), 3u);
  const std::string file = fmt::format("/tmp/rsb-rows-{}.csv", getpid());
  {
    std::ofstream csv(file);
    csv << out.str();
  }
  const CommandResult awk = RunCommand(fmt::format("awk -F, '$NF == \"case\"' '{}'", file));
  std::remove(file.c_str());
  EXPECT_EQ(size_t(std::count(awk.out.begin(), awk.out.end(), '\n')), results.size())
      << awk.out << awk.err;
}

// The rows of a CSV report without the fields that differ from run to run (date, command).
std::vector<std::vector<std::string>> CsvRowsOfTheCases(const std::string& text) {
  auto rows = CsvRows(text);
  for (const char* column : {"date", "command"}) {
    const auto at = std::find(rows.at(0).begin(), rows.at(0).end(), column);
    EXPECT_NE(at, rows[0].end()) << column;
    for (size_t i = 1; i < rows.size() && at != rows[0].end(); ++i)
      rows[i].at(size_t(at - rows[0].begin())).clear();
  }
  return rows;
}

// --json, --csv and --markdown FILE in one run, beside the table on stdout: the JSON is a result
// file compare's reader takes, the CSV has the rows of --format csv, the Markdown is --format
// markdown's, and stdout is the table of a run without them (a --check run: nothing timed).
TEST(Cli, OneRunWritesEveryOutputFileBesideTheTable) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("rsb-cli-files-{}", (long)::getpid());
  std::filesystem::create_directories(dir);
  const std::string run = "--check -q --task reduction --variant sequential,atomic --size 100,1000";
  const std::string json = (dir / "r.json").string(), csv = (dir / "r.csv").string(),
                    md = (dir / "r.md").string();
  const CommandResult r =
      RunBench(fmt::format("{} --json '{}' --csv '{}' --markdown '{}'", run, json, csv, md));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, RunBench(run).out);
  const ResultFile file = LoadResultFile(json, "RESULTS");
  EXPECT_EQ(file.results.size(), 4u);
  const CommandResult asCsv = RunBench(run + " --format csv");
  ASSERT_EQ(asCsv.status, 0) << asCsv.err;
  EXPECT_EQ(CsvRowsOfTheCases(ReadFile(csv)), CsvRowsOfTheCases(asCsv.out));
  EXPECT_EQ(CsvRowsOfTheCases(ReadFile(csv)).size(), 5u);
  const CommandResult asMarkdown = RunBench(run + " --format markdown");
  ASSERT_EQ(asMarkdown.status, 0) << asMarkdown.err;
  EXPECT_EQ(ReadFile(md), asMarkdown.out);
  // Any subset, --format and -o as they were: here JSON to -o and Markdown to a file, no stdout.
  const CommandResult some =
      RunBench(fmt::format("{} --format json -o '{}' --markdown '{}'", run, csv, md));
  ASSERT_EQ(some.status, 0) << some.err;
  EXPECT_EQ(some.out, "");
  EXPECT_EQ(LoadResultFile(csv, "RESULTS").results.size(), 4u);
  EXPECT_EQ(ReadFile(md), asMarkdown.out);
  std::filesystem::remove_all(dir);
}

// Two outputs given one file (the last report written would be all that is left) are refused
// with exit 2 before anything runs, and so is a folder; a place that cannot be written is exit 3,
// before anything runs too.
TEST(Cli, OneFileForTwoOutputsIsRefusedBeforeAnythingRuns) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("rsb-cli-clash-{}", (long)::getpid());
  std::filesystem::create_directories(dir);
  const std::string a = (dir / "a").string(), run = "--check --variant atomic --size 100 ";
  ExpectUsageError(run + fmt::format("--json '{}' --csv '{}'", a, a), "'" + a + "'",
                   "writes there too");
  EXPECT_NE(RunBench(run + fmt::format("--json '{}' --csv '{}'", a, a)).err.find("--csv"),
            std::string::npos);
  ExpectUsageError(run + fmt::format("-o '{}' --markdown '{}'", a, a), "--markdown '" + a + "'",
                   "--output writes there too");
  ExpectUsageError(
      run + fmt::format("--csv '{}' --json '{}/../{}/a'", a, dir.string(), dir.filename().string()),
      "--json '", "--csv writes there too");
  ExpectUsageError(run + fmt::format("--markdown '{}'", dir.string()),
                   "--markdown '" + dir.string() + "'", "is a folder");
  const CommandResult r = RunBench(run + "--csv /proc/no-such/r.csv");
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("--csv '/proc/no-such/r.csv': cannot write there"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("passed"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

// An unknown format is a usage error (exit 2) that names the option, the value and what is
// allowed: from the factory's parse, and on both command lines that take --format.
TEST(Printer, UnknownFormatIsAUsageErrorNamingWhatIsAllowed) {
  const std::string allowed = "allowed: table, csv, json, markdown";
  try {
    ParseFormat("xml");
    ADD_FAILURE() << "ParseFormat(\"xml\") returned";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--format: 'xml': not allowed; " + allowed);
  }
  for (const std::string& args :
       {std::string("--format xml"), std::string("compare a b --format xml")}) {
    const CommandResult r = RunBench(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("--format: 'xml': not allowed; " + allowed), std::string::npos) << r.err;
  }
}

// A format's name in any case is that format: the run's --format JSON writes JSON (it wrote the
// table: the check took any case, the parse only lower case), as compare's always did.
TEST(Printer, FormatNamesAreReadInAnyCase) {
  EXPECT_EQ(ParseFormat("JSON"), OutputFormat::Json);
  EXPECT_EQ(ParseFormat("Markdown"), OutputFormat::Markdown);
  const CommandResult r =
      RunBench("--explain -q --task reduction --variant atomic --size 1000 --format JSON");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["schema"], "reduce-scan-bench-explain/1") << r.out;
}

// Timing stops once the median is known to the target; the interval holds the median, and a
// case that runs out of iterations first is marked.
TEST(Cli, TimedResultsCarryTheMediansInterval) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  const CommandResult r =
      RunBench("-q --size 2^12 --task reduction --variant sequential --iterations 5 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto res = nlohmann::json::parse(r.out)["results"][0];
  EXPECT_EQ(res["iterations"], 5);
  EXPECT_FALSE(res["ci_met"].get<bool>()) << "5 runs cannot bound a median at 95%";
  EXPECT_EQ(res["time_ms"]["ci_high"], 0.0);
  const CommandResult t =
      RunBench("-q --size 2^12 --task reduction --variant sequential --iterations 5");
  EXPECT_NE(t.out.find("* the median's 95% interval is wider than +-1.0%"), std::string::npos)
      << t.out;
  const CommandResult loose = RunBench(
      "-q --size 2^12 --task reduction --variant sequential --ci-target 50% --format json");
  ASSERT_EQ(loose.status, 0) << loose.err;
  const auto l = nlohmann::json::parse(loose.out)["results"][0];
  EXPECT_TRUE(l["ci_met"].get<bool>());
  EXPECT_LT(l["iterations"].get<int>(), 1000);  // it stopped at the target, not the cap
  EXPECT_LE(l["time_ms"]["ci_low"].get<double>(), l["time_ms"]["median"].get<double>());
  EXPECT_GE(l["time_ms"]["ci_high"].get<double>(), l["time_ms"]["median"].get<double>());
}

// The memory-ceiling streams in both shapes (the GPU's unrolled grid-stride and the CPU's runs)
// build on the test device and move every element: Copy4 copies, Write4 writes its pattern.
// Every shape of the ceiling streams (kernels/Bandwidth.cl) on the test device, whatever the
// runner picks for it: GPU grid-stride, GPU tiled (a work-group per tile of 8 x 64 elements, the
// last one partial), CPU runs, CPU tiled (a work-group of one per tile of 1000 elements, the
// last one partial).
TEST(Cli, CeilingStreamsInBothShapesMoveEveryElement) {
  TaskContext& ctx = *Device().ctx;
  const cl_uint n4 = 100003;  // not a multiple of the grid, nor of the tile
  const size_t tiled = (n4 + 8 * 64 - 1) / (8 * 64) * 64;
  struct Shape {
    const char *options, *suffix;
    size_t global, local;
  };
  for (const Shape& shape :
       {Shape{"", "", 512, 64}, Shape{"-DTILE_ITEMS=8", "Tiled", tiled, 64},
        Shape{"-DCPU_SHAPE=1", "", 512, 64},
        Shape{"-DCPU_SHAPE=1 -DTILE_ITEMS=1000", "Tiled", (n4 + 999) / 1000, 1}}) {
    const std::string name = std::string(shape.options) + " " + shape.suffix;
    cl::Program& program = ctx.programs.Get("Bandwidth.cl", shape.options);
    std::vector<cl_uint> in(4 * size_t(n4)), out(in.size(), 0);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = cl_uint(i * 2654435761u);
    cl::Buffer a(ctx.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, in.size() * 4, in.data());
    cl::Buffer b(ctx.context, CL_MEM_READ_WRITE, in.size() * 4);
    cl::Kernel copy(program, ("Copy4" + std::string(shape.suffix)).c_str());
    copy.setArg(0, a), copy.setArg(1, b), copy.setArg(2, n4);
    ctx.queue.enqueueNDRangeKernel(copy, cl::NullRange, cl::NDRange(shape.global),
                                   cl::NDRange(shape.local));
    ctx.queue.enqueueReadBuffer(b, CL_TRUE, 0, out.size() * 4, out.data());
    EXPECT_EQ(in, out) << "Copy4 " << name;
    cl::Kernel write(program, ("Write4" + std::string(shape.suffix)).c_str());
    write.setArg(0, b), write.setArg(1, n4);
    ctx.queue.enqueueNDRangeKernel(write, cl::NullRange, cl::NDRange(shape.global),
                                   cl::NDRange(shape.local));
    ctx.queue.enqueueReadBuffer(b, CL_TRUE, 0, out.size() * 4, out.data());
    size_t wrong = 0;
    for (cl_uint j = 0; j < n4; ++j)
      wrong += out[4 * size_t(j)] != j || out[4 * size_t(j) + 3] != ~j;
    EXPECT_EQ(wrong, 0u) << "Write4 " << name;
    cl::Buffer sink(ctx.context, CL_MEM_READ_WRITE, shape.global * 4);
    cl::Kernel read(program, ("Read4" + std::string(shape.suffix)).c_str());
    read.setArg(0, a), read.setArg(1, sink), read.setArg(2, n4);
    ctx.queue.enqueueNDRangeKernel(read, cl::NullRange, cl::NDRange(shape.global),
                                   cl::NDRange(shape.local));
    ctx.queue.finish();
  }
}

TEST(Cli, TableNamesTheDeviceAndEveryVariant) {
  const CommandResult r = RunBench("-q --task reduction --size 4096 --iterations 3");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("device: "), std::string::npos);
  EXPECT_NE(r.out.find("driver"), std::string::npos);
  for (const char* v : {"interleaved", "sequential", "decomposition", "unrolled", "atomic"})
    EXPECT_NE(r.out.find(v), std::string::npos) << v;
  EXPECT_NE(r.out.find("Gelem/s"), std::string::npos);
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

// One missing ';' at the top of Reduction.cl, which every build of its five variants compiles,
// over several cases: each case's line says the compiler's first error (file:line:col as the
// compiler wrote it), the log itself is shown once per run with the offending source line and a
// caret under its column, nothing of the compiler is glued to a progress line, and the build
// options only with --verbose.
TEST(Cli, KernelBuildLogIsShownOnceWithTheSourceLineAndACaret) {
  const std::string dir = CopyKernels("build-log-once");
  Patch(dir + "/Reduction.cl", "#include \"WorkGroup.clh\"\n",
        "#include \"WorkGroup.clh\"\nconstant int kBroken = 1\n");
  std::ifstream in(dir + "/Reduction.cl");
  std::string line;
  size_t number = 1;
  while (std::getline(in, line) && line != "constant int kBroken = 1")
    ++number;
  const std::string args =
      "--check --task reduction --variant interleaved,sequential,decomposition "
      "--size 100,1000 --kernels " +
      dir;
  const CommandResult r = RunBench(args);
  EXPECT_EQ(r.status, 3) << r.err;
  const std::string where = fmt::format("Reduction.cl:{}:", number);
  // Six cases, each with its one line in the progress; the table's notes list them once, the
  // first case with the count of the others (they fail alike).
  EXPECT_EQ(LinesWith(r.err, {"... error: kernel build failed: ", where}), 6u) << r.err;
  EXPECT_EQ(LinesWith(r.out, {"error reduction/", "kernel build failed: ", where}), 1u) << r.out;
  EXPECT_EQ(LinesWith(r.out, {"error reduction/interleaved uint sum n=100 ",
                              "(and 5 more cases with this message", where}),
            1u)
      << r.out;
  // The log once: its source line (under a gutter with the line number, or as the compiler
  // printed it itself: NVIDIA's and Mesa's clang do) and a caret line.
  const auto sourceLines = [&](const std::string& text) {
    return CountOf(text, fmt::format("{:>5} | {}\n", number, line)) +
           CountOf(text, "\n" + line + "\n");
  };
  const auto caretLines = [](const std::string& text) {
    size_t n = 0;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
      n += l.find_first_not_of(" |") != std::string::npos &&
           l.substr(l.find_first_not_of(" |")) == "^";
    return n;
  };
  EXPECT_EQ(sourceLines(r.err), 1u) << r.err;
  EXPECT_EQ(caretLines(r.err), 1u) << r.err;
  EXPECT_EQ(sourceLines(r.out), 0u) << r.out;
  // No -D options without --verbose; no compiler line glued to a progress line.
  EXPECT_EQ(CountOf(r.err + r.out, "-DT="), 0u) << r.err;
  EXPECT_EQ(LinesWith(r.err, {"... ", "generated"}), 0u) << r.err;
  const CommandResult verbose = RunBench(args + " --verbose -q");
  EXPECT_EQ(LinesWith(verbose.err, {"kernel build options: ", "-DT=uint"}), 1u) << verbose.err;
  EXPECT_EQ(sourceLines(verbose.err), 1u) << verbose.err;
  std::filesystem::remove_all(dir);
}

// A location that clang writes as two (a macro argument's expansion and spelling) reads as the
// compiler wrote it, with the real file name in both places.
TEST(BuildLog, TwoLocationsOfAMacroArgumentStayAsWritten) {
  EXPECT_EQ(WithRealFileName("error: /tmp/pocl/tempfile_Ab3.cl:54:24 <Spelling=/tmp/pocl/"
                             "tempfile_Ab3.cl:54:30>: use of undeclared identifier 'srcx'",
                             "/k/Reduction.cl"),
            "error: /k/Reduction.cl:54:24 <Spelling=/k/Reduction.cl:54:30>: use of undeclared "
            "identifier 'srcx'");
  EXPECT_EQ(FirstError("Device failed\nerror: /k/R.cl:5:3: expected ';'\nmore"),
            "/k/R.cl:5:3: expected ';'");
  EXPECT_EQ(FirstError("CL_INVALID_BUILD_OPTIONS (-43)\n"), "CL_INVALID_BUILD_OPTIONS (-43)");
}

// Every run's and check's table ends with its count, alone on the last line: passed and failed
// always, the other statuses where there are any.
TEST(Cli, TableEndsWithTheCountOfEachStatus) {
  CommandResult r = RunBench("--check -q --task reduction --variant sequential,atomic --size 100");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1), "2 passed, 0 failed\n") << r.out;
  const std::string dir = CopyKernels("count-line");
  Patch(dir + "/Reduction.cl", "  dst[i] = i + h < m ? OP(a, src[i + h]) : a;",
        "  dst[i] = i + h < m ? OP(a, src[i + h]) : a + (T)1;");
  Patch(dir + "/Scan.cl", "__kernel", "this is not C; __kernel");
  r = RunBench(
      "--check -q --variant sequential,atomic,naive --size 100 --type uint,double "
      "--kernels " +
      dir);
  EXPECT_EQ(r.status, 3) << r.err;
  const std::string last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  const size_t skipped = Lacks(Need::Fp64).empty() ? 0 : 3;
  const std::string want =
      skipped ? "1 passed, 1 failed, 3 skipped, 1 error\n" : "2 passed, 2 failed, 2 errors\n";
  EXPECT_EQ(last, want) << r.out;
  std::filesystem::remove_all(dir);
}

// --fail-fast: the run stops after the first case that does not pass (here the sequential
// reduction, wrong at every size), in a worker process and in this one alike; without it every
// case runs.
TEST(Cli, FailFastStopsAfterTheFirstCaseThatDoesNotPass) {
  const std::string dir = CopyKernels("fail-fast");
  Patch(dir + "/Reduction.cl", "  dst[i] = i + h < m ? OP(a, src[i + h]) : a;", "  dst[i] = (T)7;");
  const std::string args =
      "--check --task reduction --variant atomic,sequential "
      "--size 100,1000,10000 --kernels " +
      dir;
  for (const char* mode : {"", " --no-isolate"}) {
    const CommandResult fast = RunBench(args + mode + " --fail-fast");
    EXPECT_EQ(fast.status, 1) << mode << fast.err;
    EXPECT_EQ(LinesWith(fast.out, {"reduction ", " failed "}), 1u) << mode << fast.out;
    // The first case (variants run in table order: sequential before atomic) fails.
    EXPECT_NE(fast.out.find("\n0 passed, 1 failed\n"), std::string::npos) << mode << fast.out;
    EXPECT_NE(fast.err.find("stopped after the first case that did not pass (--fail-fast): 1 "),
              std::string::npos)
        << mode << fast.err;
  }
  const CommandResult all = RunBench(args + " -q");
  EXPECT_EQ(all.status, 1) << all.err;
  EXPECT_NE(all.out.find("\n3 passed, 3 failed\n"), std::string::npos) << all.out;
  std::filesystem::remove_all(dir);
}

// --list-variants in every format, byte for byte: the table as it always read, Markdown the
// README's variant table (tests/generated_test.py), CSV and JSON with each variant's kernel file.
TEST(Report, VariantListInEveryFormatKeepsItsBytes) {
  const std::vector<VariantListing> rows = {
      {"reduction", "interleaved", "Reduction.cl", "tree in global memory, one launch per step"},
      {"scan", "single-pass", "SinglePassScan.cl", "one launch, a \"chained\" scan | look-back"}};
  for (const std::string& format : FormatNames()) {
    std::ostringstream out;
    MakePrinter(ParseFormat(format))->Variants(out, rows);
    ExpectGolden("variants." + GoldenExtension(format), out.str());
  }
  const CommandResult r = RunBench("--list-variants --format markdown");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("| task | variant | what it does |\n|---|---|---|\n| reduction | `", 0), 0u)
      << r.out;
}

}  // namespace
}  // namespace rsb::test
