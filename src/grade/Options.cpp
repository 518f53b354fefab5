#include "grade/Options.h"

#include "cli/CliChecks.h"
#include "grade/Formats.h"
#include "grade/HandinFiles.h"
#include "grade/Sandbox.h"
#include "platform/BuildInfo.h"
#include "platform/Errors.h"
#include "platform/Files.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;

namespace rsb::grade {

namespace {

// The hand-ins, the rubric, the time limits, the device, the kit (in --help's order).
void AddInputOptions(CLI::App& app, GradeOptions& o, bool& help) {
  app.set_help_flag();
  app.add_flag("-h,--help", help, "Print this help and exit");
  app.add_option("HANDIN", o.handins,
                 "Hand-in folders (each with the kernels, in kernels/ or found by name)")
      ->check(cli::Allowed("an existing folder (a hand-in with kernels/)",
                           [](const std::string& v) {  // a symlink loop: refused, not thrown
                             std::error_code ec;
                             return fs::is_directory(v, ec);
                           }));
  app.add_option("--rubric", o.rubric,
                 "Rubric JSON (default: grading/rubric.json of the suite's source tree)")
      ->check(cli::Allowed("a readable rubric JSON file", [](const std::string& v) {
        std::error_code ec;
        return fs::is_regular_file(v, ec);
      }));
  auto seconds = [](double max) {
    return cli::Allowed(fmt::format("a number of seconds from 1 to {:g}", max),
                        [max](const std::string& v) {
                          char* end = nullptr;
                          const double d = std::strtod(v.c_str(), &end);
                          return !v.empty() && *end == '\0' && d >= 1 && d <= max;
                        });
  };
  app.add_option("--timeout", o.timeoutS,
                 "The least seconds a hand-in's child run gets before it is killed (default 60): "
                 "its limit is 5 times the suite's own run of the same item, never less than this")
      ->check(seconds(86400));
  app.add_option("--build-timeout", o.buildTimeoutS,
                 "Seconds a hand-in's host code may take to build (default 120)")
      ->check(seconds(86400));
  app.add_option("--output-dir", o.outputDir, "Folder of the reports (default grades)");
  app.add_option("--platform", o.platform, "Platform: index or name substring");
  app.add_option("--device", o.device, "Device: index or name substring");
  app.add_option("--check-platform", o.checkPlatform,
                 "Platform of the runs that only validate (every child run but the timed ones): "
                 "index or name substring (default: --platform's). A right answer does not "
                 "depend on the OpenCL implementation, so on a CPU one that builds faster grades "
                 "sooner: Mesa's rusticl (RUSTICL_ENABLE=llvmpipe) compiles kernels five to six "
                 "times as fast as pocl, though it runs them more slowly. Speed items are still "
                 "timed on --platform, and the reports name both");
  app.add_option("--check-device", o.checkDevice,
                 "Device of those runs: index or name substring (default: --device's where "
                 "--check-platform is not given)");
  app.add_option("--handin-kit", o.handinKit,
                 "The hand-in kit that hand-ins' host code is built against (default: "
                 "handin-kit next to this binary, or the installed one)");
  // Deprecated (hidden): hand-ins' host code is built against the kit, not a source tree.
  app.add_option("--suite-source", o.suiteSource)->group("");
}

// --format: one of GradeFormats(), its help made of theirs.
void AddFormatOption(CLI::App& app, GradeOptions& o) {
  std::string formatHelp, names;
  for (const auto& f : GradeFormats()) {
    formatHelp += fmt::format("{}{}: also {}", formatHelp.empty() ? "" : "; ", f.name, f.help);
    names += (names.empty() ? "" : ", ") + std::string(f.name);
  }
  app.add_option("--format", o.format, formatHelp)
      ->check(
          cli::Allowed(names, [](const std::string& v) { return FindGradeFormat(v) != nullptr; }));
}

// How a speed item is timed: --speed-alone, --speed-seconds.
void AddSpeedOptions(CLI::App& app, GradeOptions& o) {
  app.add_option("--speed-alone", o.speedAlone,
                 "What of a speed measurement has the device alone: run (its whole child runs, "
                 "builds included; on a CPU device the other children are stopped meanwhile; the "
                 "suite's child and the hand-in's time in turns, run by run), loop (only its timed "
                 "loops: the children share a lock file, and the suite's own rounds are timed once "
                 "for the class), or auto (default: run on a CPU device, whose speed is the "
                 "machine's load; loop on any other)")
      ->check(CLI::IsMember({"auto", "run", "loop"}));
  app.add_option("--speed-seconds", o.speedSeconds,
                 "How long each of a speed item's 3 rounds times its case, in seconds (default: 1 "
                 "on a CPU device, where the suite's runs and the hand-in's take turns; 0.3 where "
                 "the timed loops have the device alone). Shorter rounds grade faster and give "
                 "rougher ratios")
      ->check(cli::Allowed("seconds from 0.01 to 60 as a plain decimal", [](const std::string& v) {
        const auto x = cli::ParseDecimal(v);  // (from 0.01: {:g} writes the child's no exponent)
        return x && *x >= 0.01 && *x <= 60;
      }));
}

// How the class is graded: --items, the sandbox, --jobs, the speed items, --resident-runs,
// --shard, --format, --quiet.
void AddClassOptions(CLI::App& app, GradeOptions& o, std::string& items, std::string& shard) {
  app.add_option("--items", items,
                 "Grade only these rubric items (ids, comma-separated; default: all)");
  app.add_option("--sandbox", o.sandbox,
                 "bwrap: every child run of a hand-in's code in a bubblewrap sandbox (no network, "
                 "writes only in its own folder, other hand-ins, rubric and reports hidden, "
                 "limits); none: without (default bwrap)")
      ->check(CLI::IsMember({"bwrap", "none"}));
  app.add_option("--jobs,-j", o.jobs,
                 "Hand-ins graded at once (default: the machine's cores on a CPU device; on a GPU "
                 "at most 16 where residents run the hand-ins' code (--resident-runs, --sandbox "
                 "none), else at most 4); every speed measurement still has the device alone")
      ->check(cli::Allowed("a whole number from 1 to 1024", [](const std::string& v) {
        return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos &&
               v.size() < 5 && std::stoul(v) >= 1 && std::stoul(v) <= 1024;
      }));
  AddSpeedOptions(app, o);
  app.add_option(
         "--resident-runs", o.residentRuns,
         "Child runs of the suite's own binary (a kernel-only hand-in's lists, timed runs "
         "and cases run one by one, the suite's own) go to long-lived processes that keep "
         "their OpenCL context: on, off, or auto (default: on where timed loops share the "
         "device, --speed-alone loop; NVIDIA starts processes' contexts one at a time, "
         "about 0.4 s each). A sandboxed hand-in's runs stay child processes in its sandbox")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  app.add_option("--shard", shard,
                 "K/N: grade only the K-th of N parts of the class (by a hash of each hand-in's "
                 "name: a re-run of a shard grades the same hand-ins); join with `grade merge`")
      ->check(
          cli::Allowed("K/N with whole numbers 1 <= K <= N <= 100000", [](const std::string& v) {
            unsigned long k = 0, n = 0;
            char tail = 0;
            return std::sscanf(v.c_str(), "%lu/%lu%c", &k, &n, &tail) == 2 &&
                   v.find_first_not_of("0123456789/") == std::string::npos && k >= 1 && k <= n &&
                   n <= 100000;
          }));
  AddFormatOption(app, o);
  app.add_option("--kernel-cache", o.kernelCache,
                 "A folder of compiled kernels (pocl's, NVIDIA's, Mesa's cache) that every child "
                 "run of the suite and of every hand-in shares, and that stays: on a CPU device "
                 "most of a child run is pocl compiling kernels that the hand-ins share with the "
                 "suite. Only for hand-ins you trust (your own, a test class): their code can "
                 "write there (default: a cache per hand-in, removed with it)");
  app.add_option("--trace", o.trace,
                 "Write FILE: a CSV line per child run (when it started, how long it took, whose "
                 "code, what it ran, in a resident or a process of its own, how it ended): "
                 "where a class's time goes");
  app.add_flag("--quiet,-q", o.quiet, "No progress on stderr");
}

// --kernel-cache: a folder this user can write, or one it can make (made when grading starts).
void CheckKernelCache(const std::string& dir) {
  if (dir.empty())
    return;
  std::error_code ec;
  const fs::path p = fs::absolute(dir, ec);
  const fs::path existing = fs::exists(p, ec) ? p : p.parent_path();
  if ((fs::exists(p, ec) && !fs::is_directory(p, ec)) || !fs::is_directory(existing, ec) ||
      access(existing.c_str(), W_OK | X_OK) != 0)
    throw UsageError(fmt::format(
        "--kernel-cache '{}': not a folder this user can write (or make in an existing one); "
        "allowed: such a folder",
        dir));
}

// --format: "" (the usual reports) or one of GradeFormats(). Gradescope and PrairieLearn grade
// exactly one hand-in (not named `results`), as they run one submission per container.
void CheckFormat(const std::string& format, const std::vector<std::string>& handins) {
  const GradeFormat* f = FindGradeFormat(format);
  if (!f || !f->oneHandin)
    return;
  if (handins.size() != 1)
    throw UsageError(
        fmt::format("--format {}: {} hand-ins given; allowed: exactly one HANDIN ({} grades one "
                    "submission per container and reads one results.json)",
                    format, handins.size(), f->engine));
  fs::path p = fs::path(handins.front()).lexically_normal();
  if (p.filename().empty())
    p = p.parent_path();
  if (p.filename() == "results")
    throw UsageError(fmt::format(
        "--format {}: HANDIN '{}': its report results.json would be {}'s; allowed: a hand-in "
        "folder of another name",
        format, handins.front(), f->engine));
}

// The folder's path with its links resolved as far as it exists, one component a step.
std::vector<std::string> RealParts(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  std::vector<std::string> parts;
  for (const auto& c : ec ? fs::path() : p.lexically_normal())
    if (!c.empty())
      parts.push_back(c.string());
  return parts;
}

// --output-dir in a hand-in (or the hand-in itself, as with `grade .` and the default `grades`)
// would write the reports among the student's files, where its next grading finds them: refused
// before anything is written.
void CheckOutputOutsideHandins(const std::string& dir, const std::vector<std::string>& handins) {
  const std::vector<std::string> out = RealParts(dir);
  for (const auto& h : handins) {
    const std::vector<std::string> in = RealParts(h);
    if (!in.empty() && !out.empty() && in.size() <= out.size() &&
        std::equal(in.begin(), in.end(), out.begin()))
      throw UsageError(fmt::format(
          "--output-dir '{}': inside the hand-in '{}'; allowed: a folder outside every hand-in",
          dir, h));
  }
}

// What the options say together, and --items and --shard taken apart.
void CheckGradeOptions(GradeOptions& o, const std::string& items, const std::string& shard) {
  if (!shard.empty())
    std::sscanf(shard.c_str(), "%zu/%zu", &o.shardIndex, &o.shardCount);
  if (!o.suiteSource.empty())
    throw UsageError(
        "--suite-source: no longer used; hand-ins' host code is built against the hand-in kit "
        "(handin-kit next to this binary, built when first needed), see --handin-kit DIR");
  for (size_t at = 0; !items.empty() && at <= items.size();) {
    const size_t comma = std::min(items.find(',', at), items.size());
    if (comma == at)
      throw UsageError(
          fmt::format("--items '{}': an empty item id; allowed: ids, comma-separated", items));
    o.items.push_back(items.substr(at, comma - at));
    at = comma + 1;
  }
  if (o.sandbox == "bwrap")
    if (const SandboxAvailability a = SandboxStatus(); !a.ok)
      throw UsageError("--sandbox bwrap: " + a.reason);
  if (o.handins.empty())
    throw UsageError(
        "HANDIN: none given; allowed: one or more hand-in folders (each with kernels/)");
  CheckFormat(o.format, o.handins);
  CheckKernelCache(o.kernelCache);
  // Where the reports and the trace go: probed now, made when grading starts (Files.h).
  CheckOutputOutsideHandins(o.outputDir, o.handins);
  CheckOutputFolder("--output-dir", o.outputDir);
  if (!o.trace.empty())
    CheckOutputFile("--trace", o.trace);
  if (o.rubric.empty()) {
    o.rubric = DefaultRubric();
    if (!fs::is_regular_file(o.rubric))
      throw UsageError(
          fmt::format("--rubric: not given and no '{}'; allowed: a rubric JSON file", o.rubric));
  }
}

// "src/tasks/CReductionTask.*, src/tasks/CScanTask.*, ...": the task sources a hand-in may bring.
std::string TaskSourcePatterns() {
  std::string out;
  for (const auto& task : TaskNames()) {
    const std::string header = TaskSources(task).front();
    out += (out.empty() ? "" : ", ") + header.substr(0, header.rfind('.')) + ".*";
  }
  return out;
}

}  // namespace

GradeOptions ParseGradeOptions(int argc, char** argv, bool& help) {
  GradeOptions o;
  CLI::App app{
      "reduce-scan-bench grade: scores hand-ins (folders with the kernels and optionally\n" +
          TaskSourcePatterns() +
          ", found by name where they are) against a rubric;\n"
          "every item runs in a child process under --timeout; an item's case that fails\n"
          "or crashes runs once more under Oclgrind where it is on PATH, so that the report\n"
          "names the line (an invalid write at FILE.cl:LINE). Writes DIR/<name>.md,\n"
          "DIR/<name>.json, DIR/summary.csv, DIR/index.md,\n"
          "DIR/index.html (the class at a glance), DIR/grading.json.",
      "reduce-scan-bench grade"};
  AddInputOptions(app, o, help);
  std::string items, shard;
  AddClassOptions(app, o, items, shard);
  cli::Parse(app, argc, argv);
  if (help) {
    std::cout << app.help();
    return o;
  }
  CheckGradeOptions(o, items, shard);
  return o;
}

}  // namespace rsb::grade
