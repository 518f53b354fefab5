#include "tools/AB.h"

#include "cli/Cli.h"
#include "cli/CliChecks.h"
#include "engine/Worker.h"
#include "platform/Errors.h"
#include "platform/Files.h"
#include "platform/Subprocess.h"
#include "report/ReportUtil.h"
#include "tools/Compare.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;

namespace rsb {

namespace {

// The fd of each run's end of its turns' socket: its serve request's "turns" (src/run/Serve.h;
// fd 3 is serve's answers').
constexpr int kRunTurnsFd = 4;

// One of the two programs: a binary ("": this one) and a kernel folder ("": the binary's own).
struct Side {
  std::string binary, kernels;
  std::string Label(const char* name) const {
    return fmt::format("{} ({}, {})", name, binary.empty() ? "this program" : binary,
                       kernels.empty() ? "its own kernels" : "--kernels " + kernels);
  }
};

struct ABOptions {
  Side a, b;
  size_t rounds = 16;
  CompareSettings settings;
  OutputFormat format = DefaultFormat();
  std::string resultsDir;
  std::vector<std::string> run;  // the benchmark's options, both runs alike
  bool quiet = false;
};

// The run's options that ab sets itself, or that make no timed run, and why.
const std::vector<std::pair<std::string, std::string>>& Reserved() {
  static const std::vector<std::pair<std::string, std::string>> r = {
      {"--repetitions", "the rounds are ab's --rounds"},
      {"--ci-target", "in turns every case is timed for --time-budget"},
      {"--kernels", "ab's --kernels-a and --kernels-b"},
      {"--format", "ab's own --format"},
      {"--output", "ab prints to stdout; --results DIR keeps both runs' files"},
      {"-o", "ab prints to stdout; --results DIR keeps both runs' files"},
      {"--json", "--results DIR keeps both runs' files"},
      {"--csv", "--results DIR keeps both runs' files"},
      {"--markdown", "--results DIR keeps both runs' files"},
      {"--isolate", "each run's cases run in its own process, in turns"},
      {"--timeout", "each run's cases run in its own process, in turns"},
      {"--check", "ab times"},
      {"--explain", "ab times"},
      {"--list-devices", "ab times"},
      {"--list-variants", "ab times"},
      {"--version", "ab times"}};
  return r;
}

void RefuseReserved(const std::vector<std::string>& run) {
  for (const auto& arg : run) {
    std::string name = arg.substr(0, arg.find('='));
    if (name.rfind("-o", 0) == 0 && name.rfind("--", 0) != 0)
      name = "-o";  // -oFILE
    for (const auto& [option, why] : Reserved())
      if (name == option)
        throw UsageError(fmt::format(
            "ab: {}: not among the run's options ({}); allowed: the benchmark's selection, "
            "device and timing options (--task, --variant, --size, --type, --platform, --device, "
            "--time-budget, --iterations, --warmup, ...)",
            option, why));
  }
}

std::string SelfPath() {
  std::error_code ec;
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  if (ec)
    throw DeviceError("cannot find this program's path (/proc/self/exe): " + ec.message());
  return exe.string();
}

// One side's command line: the run's options and its kernels.
std::vector<std::string> RunArgs(const ABOptions& o, const Side& s, const std::string& output) {
  std::vector<std::string> a = {s.binary.empty() ? SelfPath() : s.binary};
  a.insert(a.end(), o.run.begin(), o.run.end());
  if (!s.kernels.empty())
    a.insert(a.end(), {"--kernels", s.kernels});
  a.insert(a.end(), {"--repetitions", std::to_string(o.rounds), "--no-isolate", "--ci-target", "0",
                     "--no-ceilings", "--format", "json", "--output", output, "-q"});
  return a;
}

// The run's options as the benchmark reads them: its own one-line error (exit 2) where they are
// bad; a selection that times nothing is refused.
void CheckRunOptions(const ABOptions& o, const Side& s, const char* name,
                     const TaskCatalog& catalog) {
  if (!s.binary.empty() && ::access(s.binary.c_str(), X_OK) != 0)
    throw UsageError(
        fmt::format("--binary-{} '{}': not an executable file; allowed: a "
                    "reduce-scan-bench binary",
                    name, s.binary));
  std::error_code ec;
  if (!s.kernels.empty() && !fs::is_directory(s.kernels, ec))
    throw UsageError(
        fmt::format("--kernels-{} '{}': not a folder; allowed: a folder of the suite's .cl files",
                    name, s.kernels));
  std::vector<std::string> args = RunArgs(o, s, "ab-check.json");
  args.front() = "reduce-scan-bench";
  std::vector<const char*> argv;
  for (const auto& a : args)
    argv.push_back(a.c_str());
  const Options run = ParseCommandLine(int(argv.size()), argv.data(), catalog);
  if (run.help)
    throw UsageError("ab: --help among the run's options; allowed: `reduce-scan-bench ab --help`");
}

ABOptions ParseABOptions(int argc, char** argv, bool& help) {
  ABOptions o;
  CLI::App app{
      "reduce-scan-bench ab: two kernel folders (or two builds) timed in turns in one run, the\n"
      "same selection (the benchmark's options after ab's own) in --rounds rounds, A's and B's\n"
      "timed runs alternating; per case the throughput ratio B/A of the rounds' medians, faster\n"
      "or slower only where a sign test of the rounds' paired ratios (how many B lost) gives\n"
      "p < 0.05 and the ratio is beyond --threshold. Printed as `compare` prints, A as BASE and\n"
      "B as NEW. Exit status 1 on a significant regression of B beyond --threshold (or a case\n"
      "that failed validation), 2 on bad input, 3 where a run could not run.",
      "reduce-scan-bench ab"};
  app.footer(
      "RUN OPTIONS: the benchmark's own (reduce-scan-bench --help), both runs alike, e.g.\n"
      "  reduce-scan-bench ab --kernels-b my-kernels --task reduction --variant sequential\n"
      "Each run times every case for --time-budget a round, in turns (so about twice as long).");
  app.set_help_flag();
  app.allow_extras();
  app.add_flag("-h,--help", help, "Print this help and exit");
  app.add_option("--kernels-a", o.a.kernels, "A's kernel folder (default: the binary's own)");
  app.add_option("--kernels-b", o.b.kernels, "B's kernel folder (default: the binary's own)");
  app.add_option("--binary-a", o.a.binary, "A's reduce-scan-bench binary (default: this one)");
  app.add_option("--binary-b", o.b.binary, "B's reduce-scan-bench binary (default: this one)");
  app.add_option("--rounds", o.rounds,
                 fmt::format("Rounds, each case once a round in both (default 16; at least {})",
                             kMinPairedRounds))
      ->check(cli::WholeNumber(kMinPairedRounds, 1000));
  std::string threshold = "5%", format = FormatNames().front();
  AddJudgeOptions(app, threshold, format, "A significant slowdown of B");
  app.add_option("--results", o.resultsDir,
                 "Keep both runs' result files in this folder (A.json, B.json)");
  cli::Parse(app, argc, argv, &help);
  if (help) {
    std::cout << app.help();
    return o;
  }
  o.settings.threshold = *ParseThreshold(threshold);
  o.settings.paired = true;
  o.format = ParseFormat(format);
  o.run = app.remaining();
  for (const auto& a : o.run)
    o.quiet = o.quiet || a == "-q" || a == "--quiet";
  return o;
}

// What a run that ended badly said: its exit status or signal and the last line of its stderr.
std::string RunFailure(const ProcessResult& p) {
  std::string why = !p.started        ? p.startError
                    : p.signal        ? "ended by " + SignalName(p.signal)
                    : p.exitCode != 0 ? fmt::format("exit status {}", p.exitCode)
                                      : "no result file";
  std::string err = p.err;
  while (!err.empty() && err.back() == '\n')
    err.pop_back();
  const size_t line = err.rfind('\n');
  return err.empty() ? why : why + ": " + err.substr(line == std::string::npos ? 0 : line + 1);
}

// A side's run: its binary as `serve`, the command line its one request, with the turns' fd
// (Serve.h). Both in this process's session: see TurnRun::newSession.
TurnRun ServedRun(const std::vector<std::string>& args) {
  const double noLimit = 7 * 24 * 3600;
  return {
      {args.front(), "serve"}, noLimit, "", false, ServeRequest(args, {{"turns", kRunTurnsFd}})};
}

// A side's run that timed cases without taking a turn is of a binary that does not take turns
// from its request (a build older than ab's serve requests): its times would not be paired.
void RequireTurnsTaken(const ABOptions& o, const std::vector<size_t>& turns, const ResultFile& f,
                       const char* name) {
  const size_t k = name[0] == 'a' ? 0 : 1;
  const auto& results = f.document.value("results", nlohmann::json::array());
  const bool timed = std::any_of(results.begin(), results.end(),
                                 [](const nlohmann::json& r) { return r.contains("time_ms"); });
  if (!timed || std::find(turns.begin(), turns.end(), k) != turns.end())
    return;
  throw UsageError(fmt::format(
      "--binary-{} '{}': its run timed cases without taking turns with the other's; allowed: a "
      "reduce-scan-bench binary that takes turns from its serve request (this version or later)",
      name, (k ? o.b : o.a).binary));
}

// Both runs in turns; their result files, none where interrupted. Throws DeviceError where one
// could not run, or UsageError where one refused its options (another build's).
std::optional<std::pair<ResultFile, ResultFile>> RunInTurnsAB(const ABOptions& o,
                                                              const std::string& dir) {
  const std::string fileA = (fs::path(dir) / "A.json").string();
  const std::string fileB = (fs::path(dir) / "B.json").string();
  std::vector<size_t> turns;
  const std::vector<ProcessResult> p = RunInTurns(
      {ServedRun(RunArgs(o, o.a, fileA)), ServedRun(RunArgs(o, o.b, fileB))}, kRunTurnsFd, &turns);
  for (size_t k = 0; k < 2; ++k) {
    const char* name = k ? "B" : "A";
    std::error_code ec;
    if (p[k].interrupted || Interrupted())
      return std::nullopt;
    const bool ran = p[k].started && !p[k].signal && (p[k].exitCode == 0 || p[k].exitCode == 1);
    if (!ran || !fs::exists(k ? fileB : fileA, ec)) {
      const std::string what = fmt::format("ab: {}'s run: {}", name, RunFailure(p[k]));
      if (p[k].exitCode == kExitUsage)
        throw UsageError(what);
      throw DeviceError(what);
    }
  }
  std::pair files{LoadResultFile(fileA, "A"), LoadResultFile(fileB, "B")};
  RequireTurnsTaken(o, turns, files.first, "a");
  RequireTurnsTaken(o, turns, files.second, "b");
  return files;
}

}  // namespace

int AB(int argc, char** argv, const std::vector<std::unique_ptr<IComputeTask>>& tasks) {
  return ExitStatusOf([&] {
    bool help = false;
    const ABOptions o = ParseABOptions(argc, argv, help);
    if (help) {
      CheckStdout();
      return int(kExitOk);
    }
    RefuseReserved(o.run);
    const TaskCatalog catalog = CatalogOf(tasks);
    CheckRunOptions(o, o.a, "a", catalog);
    CheckRunOptions(o, o.b, "b", catalog);
    InstallInterruptHandler();
    // pocl's worker threads bound one to a core, in both runs alike: unbound, the scheduler
    // placed one run's threads on one core and the other's on two for a round at a time, on a
    // loaded 2-core machine, and alternate runs of one kernel differed by up to 2x.
    if (!std::getenv("POCL_AFFINITY"))
      SetChildrenEnvironment("POCL_AFFINITY", "1");
    std::optional<TempFolder> temp;
    if (o.resultsDir.empty())
      temp.emplace("rsb-ab");
    else
      fs::create_directories(o.resultsDir);
    if (!o.quiet)
      std::cerr << fmt::format("ab: {} and {} in turns, {} rounds\n", o.a.Label("A"),
                               o.b.Label("B"), o.rounds);
    const auto files = RunInTurnsAB(o, temp ? temp->Path() : o.resultsDir);
    if (!files) {
      std::cerr << "ab: interrupted\n";
      return int(kExitInterrupted);
    }
    const auto& [a, b] = *files;
    CompareReport report = CompareTwoFiles(a, b, o.settings);
    report.base.path = o.a.Label("A");
    report.fresh.path = o.b.Label("B");
    RequireSomethingCompared(a, b, report.comparison);
    MakePrinter(o.format)->Compare(std::cout, report);
    CheckStdout();
    const bool failed = std::any_of(
        report.comparison.matched.begin(), report.comparison.matched.end(), [](const auto& m) {
          return m.base.result.status == Status::Failed || m.fresh.result.status == Status::Failed;
        });
    return int(report.comparison.Regressions() || failed ? kExitValidationFailed : kExitOk);
  });
}

}  // namespace rsb
