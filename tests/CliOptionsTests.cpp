// The command line's refusals and spellings: exit 2 and one line naming the option, the value
// and what is allowed; sizes, ranges and lists as documented; --help, --version, the formats.
// Runs the real executable on the test device.
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

// A bad element of the list is named on its own (exit 2, one line), before anything runs.
TEST(Cli, BadLocalSizeListElementIsAUsageError) {
  ExpectUsageError("--local-size 64,100", "--local-size", "'100'");
  ExpectUsageError("--local-size auto,128,big", "--local-size", "'big'");
  ExpectUsageError("--local-size 64,0", "--local-size", "'0'");
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

// An isolated run's worker is a `serve` request with a "worker" field (src/run/Serve.h), not a
// command line: the hidden --worker-* options of earlier builds are unknown options now.
TEST(Cli, WorkerOptionsAreNotOnTheCommandLine) {
  for (const char* option :
       {"--worker-fd 3", "--worker-job 0", "--worker-skip 0", "--worker-scope job",
        "--worker-device 0", "--worker-bandwidth", "--worker-build-failed=x",
        "--worker-timer usable", "--timed-turns 3"}) {
    const CommandResult r = RunBench(std::string("--check --task reduction --size 1024 ") + option);
    EXPECT_EQ(r.status, 2) << option << "\n" << r.err;
  }
  // No option of the benchmark's command line, or of a subcommand of the benchmark's, is hidden
  // from --help (CLI11's group ""): what a parent tells a run travels in its serve request.
  const fs::path root = RSB_SOURCE_DIR;
  ASSERT_TRUE(fs::is_directory(root / "common" / "cli")) << root;
  for (const char* folder : {"common", "src"})
    for (const auto& e : fs::recursive_directory_iterator(root / folder)) {
      if (!e.is_regular_file() || e.path().parent_path().filename() == "grade")
        continue;
      EXPECT_EQ(ReadFile(e.path()).find("group(\"\")"), std::string::npos)
          << e.path() << ": a hidden option";
    }
}

// A worker's request: its cases' lines on fd 3 (common/engine/Worker.h), then serve's answer.
TEST(Cli, ServeRunsAWorkerRequestAndReportsOnFdThree) {
  std::vector<std::string> argv = {RSB_BINARY,    "--task", "reduction", "--variant",
                                   "interleaved", "--size", "4096",      "--type",
                                   "int",         "--op",   "sum",       "--check"};
  for (const std::string& a : DeviceSelectorArgs())
    argv.push_back(a);
  const nlohmann::json worker = {{"job", 0},           {"skip", 0},
                                 {"scope", "job"},     {"device", 0},
                                 {"bandwidth", false}, {"build_failed", nlohmann::json::array()}};
  const fs::path file = fs::temp_directory_path() / fmt::format("rsb-request-{}", ::getpid());
  std::ofstream(file) << nlohmann::json{{"argv", argv}, {"worker", worker}}.dump() << "\n";
  const CommandResult r =  // inner redirections: RunCommand's own stdin is /dev/null
      RunCommand(fmt::format("{{ '{}' serve <'{}' 3>&1; }}", RSB_BINARY, file.string()));
  fs::remove(file);
  EXPECT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::vector<std::string> got;
  for (std::string line; std::getline(lines, line);)
    got.push_back(line.substr(0, line.find(' ')));
  ASSERT_EQ(got, (std::vector<std::string>{"begin", "result", "{\"exit\":0}"})) << r.out << r.err;
  const auto result = nlohmann::json::parse(
      r.out.substr(r.out.find("result ") + 7,
                   r.out.find('\n', r.out.find("result ")) - r.out.find("result ") - 7));
  EXPECT_TRUE(Ok(result.at("status").get<std::string>())) << r.out;
}

}  // namespace
}  // namespace rsb::test
