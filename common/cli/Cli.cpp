#include "cli/Cli.h"

#include "platform/BuildInfo.h"
#include "platform/CLUtil.h"

#include "cli/CliChecks.h"

#include "engine/TaskUtil.h"
#include "platform/Errors.h"
#include "platform/Sizes.h"

#include <fmt/format.h>

#include <optional>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>

namespace rsb {

// "16M" (a plain count) or "8192x8192" (an image, width x height, each written as a size).
std::optional<Extent> ParseExtent(const std::string& v) {
  const size_t x = v.find_first_of("xX");
  if (x == std::string::npos) {
    const auto n = ParseSize(v);
    if (!n || *n > kMaxElements)
      return std::nullopt;
    return Extent{*n, 0};
  }
  const auto w = ParseSize(v.substr(0, x)), h = ParseSize(v.substr(x + 1));
  if (!w || !h || *w > kMaxElements || *h > kMaxElements / *w)
    return std::nullopt;
  return Extent{*w * *h, *h};
}

std::optional<std::vector<unsigned long long>> ExpandRange(
    const std::string& v,
    const std::function<std::optional<unsigned long long>(const std::string&)>& parse) {
  const size_t colon = v.find(':');
  if (colon == std::string::npos)
    return std::nullopt;
  const size_t second = v.find(':', colon + 1);
  const auto first = parse(v.substr(0, colon));
  const auto last = parse(
      v.substr(colon + 1, second == std::string::npos ? std::string::npos : second - colon - 1));
  std::optional<unsigned long long> factor = 2;
  if (second != std::string::npos)
    factor = ParseUnsigned(v.substr(second + 1));
  if (!first || !last || !factor || *factor < 2 || *first == 0 || *first > *last)
    return std::nullopt;
  std::vector<unsigned long long> values;
  for (unsigned long long x = *first; x <= *last; x *= *factor) {
    values.push_back(x);
    if (x > *last / *factor)
      break;
  }
  return values;
}

namespace {

using cli::Allowed;
using cli::Join;
using cli::WholeNumber;

template <class E>
std::vector<std::string> Names(const std::vector<E>& all) {
  std::vector<std::string> names;
  for (E e : all)
    names.push_back(ToString(e));
  return names;
}

CLI::Validator OneOf(std::vector<std::string> names, bool orAll = true) {
  return cli::OneOf(std::move(names), orAll);
}

// --tune NAME=VALUE against the knobs of every task.
CLI::Validator TuneCheck(const TaskCatalog& catalog) {
  std::vector<TuningKnob> knobs;
  for (const auto& t : catalog)
    knobs.insert(knobs.end(), t.knobs.begin(), t.knobs.end());
  return rsb::TuneCheck(knobs);
}

std::string TuneHelp(const TaskCatalog& catalog) {
  std::string help = "Tuning knob NAME=VALUE (repeatable; recorded in the results):";
  std::vector<std::string> listed;  // a knob several tasks share (index-bits) is listed once
  for (const auto& t : catalog)
    for (const auto& k : t.knobs) {
      if (std::find(listed.begin(), listed.end(), k.name) != listed.end())
        continue;
      listed.push_back(k.name);
      help += fmt::format("\n  {} (default {}; {}): {}", k.name, k.value, k.AllowedText(), k.help);
    }
  return help;
}

// A --size item: an extent, or a range of counts (FIRST:LAST doubling, FIRST:LAST:FACTOR).
std::optional<std::vector<Extent>> ExtentValues(const std::string& v) {
  if (v.find(':') == std::string::npos) {
    const auto e = ParseExtent(v);
    if (!e)
      return std::nullopt;
    return std::vector<Extent>{*e};
  }
  const auto range = ExpandRange(v, [](const std::string& x) -> std::optional<unsigned long long> {
    const auto e = ParseExtent(x);
    return e && e->height == 0 ? std::optional<unsigned long long>(e->n) : std::nullopt;
  });
  if (!range)
    return std::nullopt;
  std::vector<Extent> extents;
  for (const auto n : *range)
    extents.push_back(Extent{size_t(n), 0});
  return extents;
}

// A --local-size item: auto, a power of two, or a range of them; 0 stands for auto.
std::optional<std::vector<unsigned long long>> LocalSizeValues(const std::string& v) {
  const auto one = [](const std::string& x) -> std::optional<unsigned long long> {
    const auto l = ParseUnsigned(x);
    return l && IsPowerOfTwo(*l) && *l <= (1u << 20) ? l : std::nullopt;
  };
  if (v == "auto")
    return std::vector<unsigned long long>{0};
  if (v.find(':') == std::string::npos) {
    const auto l = one(v);
    if (!l)
      return std::nullopt;
    return std::vector<unsigned long long>{*l};
  }
  const auto range = ExpandRange(v, one);
  if (!range)
    return std::nullopt;
  for (const auto l : *range)
    if (!one(std::to_string(l)))
      return std::nullopt;  // a factor that is not a power of two
  return range;
}

CLI::Validator ExtentCheck() {
  return Allowed(fmt::format("an element count from 1 to {} (2^40), written as 16777216, 16M, 2^24 "
                             "or 2^24+3, a range FIRST:LAST (doubling) or FIRST:LAST:FACTOR, or an "
                             "image WIDTHxHEIGHT (e.g. 8192x8192, at most 2^40 elements); sizes "
                             "the device cannot hold are skipped",
                             kMaxElements),
                 [](const std::string& v) { return ExtentValues(v).has_value(); });
}

// The raw strings of the options that are converted after parsing.
// "1%" or "0.01": a fraction from 0 to 0.5, written as a plain decimal (cli::ParseDecimal).
std::optional<double> ParseFraction(const std::string& v) {
  const auto f = cli::ParsePercentOrDecimal(v);
  if (!f || *f > 0.5)
    return std::nullopt;
  return f;
}

struct Raw {
  std::vector<std::string> tasks, variants, types, ops, tune, sizes;
  std::map<std::string, std::vector<std::string>> params;
  // --json FILE, ... by format name (the formats but the default), in the formats' order.
  std::vector<std::pair<std::string, CLI::Option*>> fileOpts;
  std::map<std::string, std::string> files;
  std::vector<std::string> localSizes;
  std::string codePath = "auto", format = FormatNames().front(), ciTarget = "1%", timer = "auto";
  bool check = false, help = false, version = false, noBreakdown = false;
  // Options whose explicit presence matters (CLI11's count()), read after parsing.
  CLI::Option *sizesOpt = nullptr, *typesOpt = nullptr, *opsOpt = nullptr, *localSizeOpt = nullptr;
};

void AddDeviceOptions(CLI::App& app, Options& o) {
  app.add_flag("--list-devices", o.listDevices, "List OpenCL platforms and devices and exit");
  app.add_option("--platform", o.platform,
                 "Platform: index or name substring, or all (every platform's devices)");
  app.add_option("--device", o.devices,
                 "Device(s): an index or a name substring, a comma list of them, or all; the "
                 "selection runs on each (default: first GPU, else first device)")
      ->delimiter(',');
  app.add_option("--kernels", o.kernels, "Folder of the .cl files (default: the installed ones)");
}

void AddSelectionOptions(CLI::App& app, Options& o, Raw& raw, const TaskCatalog& catalog) {
  std::vector<std::string> taskNames;
  for (const auto& t : catalog)
    taskNames.push_back(t.name);
  app.add_flag("--list-variants", o.listVariants,
               "List tasks and variants and exit (in --format: markdown is the README's table)");
  app.add_option("--task", raw.tasks, "Task(s): " + Join(taskNames) + " or all (default all)")
      ->delimiter(',')
      ->check(OneOf(taskNames));
  app.add_option("--variant", raw.variants, "Variant(s) by name, or all (default all)")
      ->delimiter(',');
  raw.typesOpt = app.add_option("--type", raw.types,
                                "Element type(s): int uint long ulong float double, or all")
                     ->delimiter(',')
                     ->check(OneOf(Names(AllElementTypes())));
  raw.opsOpt = app.add_option("--op", raw.ops, "Operator(s): sum min max, or all (default sum)")
                   ->delimiter(',')
                   ->check(OneOf(Names(AllOps())));
  // Each task's parameters with named values, keys of a case like the operator (a scan's kind).
  for (const auto& t : catalog)
    for (const auto& p : t.params)
      if (!p.names.empty() && !raw.params.count(p.name))
        app.add_option("--" + p.name, raw.params[p.name],
                       fmt::format("{}: {}, or all", p.help, Join(p.names, " ")))
            ->delimiter(',')
            ->check(OneOf(p.names));
  app.add_option("--cases", o.casesFile,
                 "Run exactly the cases a JSON file lists, in its order (each with "
                 "its task, variant, type, op, scan kind, size and local size), "
                 "instead of the options' cross product: any mix of cases in one "
                 "process");
  raw.sizesOpt = app.add_option("--size,-n", raw.sizes,
                                "Element count(s) n >= 1: 16777216, 16M, 2^24 or 2^24+3; ranges "
                                "2^18:2^28 (doubling) or 2^18:2^28:4 (by fours); images "
                                "WIDTHxHEIGHT (8192x8192) for the variants that take shapes")
                     ->delimiter(',')
                     ->check(ExtentCheck());
}

void AddProblemOptions(CLI::App& app, Options& o, Raw& raw, const TaskCatalog& catalog) {
  raw.localSizeOpt =
      app.add_option("--local-size", raw.localSizes,
                     "Work-group size(s): powers of two or auto (each variant's best); a comma "
                     "list or a range is swept, e.g. 64,128,256,auto or 64:256")
          ->delimiter(',')
          ->check(Allowed("auto or a power of two 1, 2, 4, ... up to the device's maximum "
                          "work-group size (see --list-devices), a range of them FIRST:LAST "
                          "(doubling) or FIRST:LAST:FACTOR, or a comma list of them",
                          [](const std::string& v) { return LocalSizeValues(v).has_value(); }));
  app.add_option("--seed", o.problem.seed, "Seed of the random input (default 1)")
      ->check(WholeNumber(0, 9999999999999999999ull));
  app.add_option("--code-path", raw.codePath,
                 "Single-pass kernel shape: auto (from the device type), gpu or cpu")
      ->check(OneOf({"auto", "gpu", "cpu"}, false));
  app.add_flag("--portable", o.problem.portable,
               "Single-pass: portable OpenCL C only, no vendor path (NVIDIA warp shuffles)");
  app.add_flag("--lookback-fallback", o.problem.lookbackFallback,
               "Single-pass scan: every look-back recomputes its predecessors from the input "
               "(checks the fallback path)");
  app.add_option("--tune", raw.tune, TuneHelp(catalog))->check(TuneCheck(catalog));
  auto* noProfile = app.add_flag(
      "--no-profile", o.noProfile,
      "Ignore the device's tuning profile (`reduce-scan-bench tune`): each variant's defaults");
  app.add_option("--profile", o.profile,
                 "Use this tuning profile (a file `reduce-scan-bench tune` wrote) instead of the "
                 "device's own; --tune and --local-size still win")
      ->excludes(noProfile);
  // Each task's numeric parameters, --NAME V[,V...] (a parameter two tasks share is one option).
  for (const auto& t : catalog)
    for (const auto& p : t.params) {
      if (raw.params.count(p.name) || !p.names.empty())
        continue;
      app.add_option("--" + p.name, raw.params[p.name],
                     fmt::format("{} {} (default {}; {}); a list is swept", t.name, p.help, p.value,
                                 p.AllowedText()))
          ->delimiter(',')
          ->check(Allowed(p.AllowedText(), [p](const std::string& v) {
            const auto x = ParseUnsigned(v);
            return x && p.Allows(*x);
          }));
    }
}

void AddRunOptions(CLI::App& app, Options& o, Raw& raw) {
  app.add_option("--iterations", o.run.maxIterations, "Timed runs per case, at most (default 1000)")
      ->check(WholeNumber(1, 1000000));
  app.add_option("--time-budget", o.run.timeBudgetS,
                 "Seconds of timed runs per case before stopping, a plain decimal (default 0.5)")
      ->check(
          Allowed("seconds from 0 to 3600 as a plain decimal, e.g. 0.5", [](const std::string& v) {
            const auto b = cli::ParseDecimal(v);
            return b && *b <= 3600;
          }));
  app.add_option(
         "--ci-target", raw.ciTarget,
         "Stop timing a case once its median is known to +-this with 95% confidence "
         "(order statistics): 1% or 0.01, plain decimals (default 1%; 0: until --time-budget or "
         "--iterations)")
      ->check(Allowed("a percentage from 0% to 50% (1%) or a fraction from 0 to 0.5 (0.01), "
                      "plain decimals",
                      [](const std::string& v) { return ParseFraction(v).has_value(); }));
  app.add_option("--timer", raw.timer,
                 "Clock of every timed run and the ceilings: events (profiling events), host (the "
                 "host's monotonic clock around a finished queue) or auto (events where the "
                 "device's timer passes its check, else host; default)")
      ->check(OneOf({"auto", "events", "host"}, false));
  app.add_option("--repetitions", o.repetitions,
                 "Time the selection in N rounds, every case once per round, so that a slow spell "
                 "touches all of them; JSON keeps each round's samples (samples_ms) and the "
                 "median across rounds with its interval (time_ms_rounds); compare tests the "
                 "rounds (default 1)")
      ->check(WholeNumber(1, 1000));
  app.add_flag("--no-ceilings", o.noCeilings,
               "Time without measuring the memory ceilings first (no utilisation): saves their "
               "12 streams of 0.5 s where only times are wanted");
  app.add_flag("--cold", o.run.cold,
               "Flush the last-level cache before every timed run (untimed writes of twice its "
               "size, at least 128 MiB); default warm");
  app.add_option("--warmup", o.run.warmup, "Untimed runs before timing (default 2)")
      ->check(WholeNumber(0, 1000));
  app.add_option("--validate-runs", o.run.validateRuns,
                 "Runs validated per case, every element checked each time (default 1; more is a "
                 "stress test)")
      ->check(WholeNumber(1, 1000000));
  auto* check = app.add_flag(
      "--check", raw.check,
      "Validate every variant once, no timing (fast correctness check); without --size, "
      "--type, --op and --scan-kind: the correctness matrix (every boundary size of each "
      "variant, every type, operator and scan kind, two local sizes)");
  app.add_flag("--oclgrind", o.oclgrind,
               "With --check: run the cases on Oclgrind (the oclgrind package), with its "
               "out-of-bounds, data-race and barrier-divergence checks; each diagnostic fails its "
               "case (file:line, work-item), every result records the instructions each kernel "
               "executed; without --size: a small matrix (docs/USAGE.md)");
  app.add_flag("--explain", o.explain,
               "Run nothing: for every selected case, the course's measures from its launch plan "
               "(launches, parallel steps S(n), work W(n), work-items p, cost p*S(n), whether it "
               "is work-optimal and cost-optimal, bytes moved)")
      ->excludes(check);
}

bool PositiveSeconds(const std::string& v) {
  const auto s = cli::ParseDecimal(v);
  return s && *s > 0 && *s <= 86400;
}

void AddIsolationOptions(CLI::App& app, Options& o) {
  auto* isolate = app.add_flag(
      "--isolate", o.perProblem,
      "Run each problem's cases in a worker process of their own (default: every case in one "
      "worker process; where a case crashes it, that case runs again alone and a fresh worker "
      "goes on)");
  app.add_flag("--no-isolate", o.noIsolate, "Run every case in this process (a crash ends the run)")
      ->excludes(isolate);
  app.add_flag("--fail-fast,-x", o.failFast,
               "Stop after the first case that fails, errs or times out (its table ends there; "
               "the cases after it are not run)");
  app.add_option("--timeout", o.timeoutS,
                 "Seconds a case may run before it is stopped and reported as timeout, a plain "
                 "decimal")
      ->check(Allowed("seconds as a plain decimal, more than 0 and at most 86400, e.g. 30",
                      PositiveSeconds));
  app.add_option("--device-lock", o.run.deviceLock,
                 "A lock file shared by processes that use one device (runs started at once): "
                 "validated runs hold it shared, each case's timed loop alone");
}

void AddOutputOptions(CLI::App& app, Options& o, Raw& raw) {
  app.add_option("--format", raw.format,
                 "Output: " + FormatList() + " (default " + FormatNames().front() + ")")
      ->check(OneOf(FormatNames(), false));
  auto* breakdown = app.add_flag(
      "--breakdown", o.breakdown,
      "Table: under each case, its time per kernel (launches, time, share, GB/s, utilisation) "
      "and the queue's idle gaps; CSV and JSON always carry it");
  app.add_flag("--no-breakdown", raw.noBreakdown,
               "Keep only the first and last command's profiling events of a run, as before the "
               "breakdown existed (no breakdown in any output): checks what keeping every event "
               "costs")
      ->excludes(breakdown);
  app.add_option("--output,-o", o.output, "Write the output to FILE instead of stdout");
  // A file option per format but the default (the table is stdout's): their names from the
  // formats' table (report/Report.h), so a format added there is an option here.
  std::vector<std::string> others;
  for (const auto& name : FormatNames())
    if (ParseFormat(name) != DefaultFormat())
      others.push_back("--" + name);
  for (const auto& name : FormatNames())
    if (ParseFormat(name) != DefaultFormat())
      raw.fileOpts.emplace_back(
          name, app.add_option("--" + name, raw.files[name],
                               fmt::format("Also write the report as {} to FILE, beside "
                                           "stdout's or --output's (any of {}, each its own "
                                           "file)",
                                           name, Join(others)))
                    ->type_name("FILE"));
  app.add_flag("--quiet,-q", o.quiet, "No progress on stderr");
  app.add_flag("--verbose,-v", o.verbose,
               "With a kernel build log, the options the kernel was built with");
}

template <class E, class ParseFn>
std::vector<E> ToList(const std::vector<std::string>& values, const std::vector<E>& all,
                      ParseFn parse) {
  std::vector<E> out;
  for (const auto& v : values) {
    if (Lower(v) == "all")
      return all;
    const E e = *parse(v);  // checked by OneOf
    if (std::find(out.begin(), out.end(), e) == out.end())
      out.push_back(e);
  }
  return out;
}

// Tasks and variants: a variant must belong to one of the selected tasks.
void ResolveSelection(const Raw& raw, const TaskCatalog& catalog, Options& o) {
  for (const auto& t : catalog)
    if (raw.tasks.empty() ||
        std::find_if(raw.tasks.begin(), raw.tasks.end(), [&](const std::string& s) {
          return Lower(s) == t.name || Lower(s) == "all";
        }) != raw.tasks.end())
      o.tasks.push_back(t.name);
  std::vector<std::string> known;
  for (const auto& t : catalog)
    if (std::find(o.tasks.begin(), o.tasks.end(), t.name) != o.tasks.end())
      for (const auto& name : t.variants)
        if (std::find(known.begin(), known.end(), name) == known.end())
          known.push_back(name);
  for (const auto& v : raw.variants) {
    if (v == "all") {
      o.variants.clear();
      break;
    }
    if (std::find(known.begin(), known.end(), v) == known.end())
      throw UsageError(fmt::format("--variant '{}': unknown for task {}; allowed: {} or all", v,
                                   Join(o.tasks, "/"), Join(known)));
    o.variants.push_back(v);
  }
}

// The values of the options, from their checked text.
void ResolveLists(const Raw& raw, Options& o) {
  if (!raw.types.empty())
    o.types = ToList(raw.types, AllElementTypes(), ParseElementType);
  if (!raw.ops.empty())
    o.ops = ToList(raw.ops, AllOps(), ParseOp);
  if (!raw.localSizes.empty()) {
    o.localSizes.clear();
    for (const auto& v : raw.localSizes) {
      const auto values = LocalSizeValues(v);  // checked; 0: auto
      for (const auto x : *values) {
        const size_t l = size_t(x);
        if (std::find(o.localSizes.begin(), o.localSizes.end(), l) == o.localSizes.end())
          o.localSizes.push_back(l);
      }
    }
  }
  o.problem.codePath = raw.codePath == "gpu"   ? CodePath::Gpu
                       : raw.codePath == "cpu" ? CodePath::Cpu
                                               : CodePath::Auto;
  o.problem.tuning = TuningOf(raw.tune);
  o.format = ParseFormat(raw.format);
  o.run.ciTarget = *ParseFraction(raw.ciTarget);
  o.run.timed = !raw.check;
  o.run.keepRuns = o.repetitions > 1;        // the rounds' runs make one breakdown (AddRound)
  o.run.timer = *ParseTimerMode(raw.timer);  // checked
  if (!raw.sizes.empty()) {
    o.sizes.clear();
    for (const auto& v : raw.sizes) {
      const auto extents = ExtentValues(v);  // checked by ExtentCheck
      o.sizes.insert(o.sizes.end(), extents->begin(), extents->end());
    }
  }
}

// The values of the tasks' parameters, from their checked text (a named one's "all": all).
void ResolveParams(const Raw& raw, const TaskCatalog& catalog, Options& o) {
  for (const auto& t : catalog)
    for (const auto& p : t.params) {
      const auto given = raw.params.find(p.name);
      if (given == raw.params.end() || given->second.empty() || o.params.count(p.name))
        continue;
      std::vector<size_t> all;
      for (size_t i = 0; i < p.names.size(); ++i)
        all.push_back(i);
      auto& list = o.params[p.name];
      for (const auto& v : given->second) {
        if (!p.names.empty() && Lower(v) == "all") {
          list = all;
          break;
        }
        const size_t x = p.names.empty() ? size_t(*ParseUnsigned(v)) : *p.Parse(v);  // checked
        if (std::find(list.begin(), list.end(), x) == list.end())
          list.push_back(x);
      }
      if (!p.field.empty())
        o.keyParamsGiven.push_back(p.name);
    }
}

// Which selections the command line gave (rather than their defaults).
void ResolveGiven(const Raw& raw, Options& o) {
  o.tasksGiven =
      !raw.tasks.empty() && std::none_of(raw.tasks.begin(), raw.tasks.end(),
                                         [](const std::string& t) { return Lower(t) == "all"; });
  o.run.breakdown = !raw.noBreakdown;
  o.sizesGiven = raw.sizesOpt->count() > 0;
  o.typesGiven = raw.typesOpt->count() > 0;
  o.opsGiven = raw.opsOpt->count() > 0;
  o.localSizeGiven = raw.localSizeOpt->count() > 0;
  // RSB_NO_PROFILE (not empty): as --no-profile where no --profile is given (the tests' runs are
  // the variants' defaults, whatever profiles this machine has).
  if (const char* none = std::getenv("RSB_NO_PROFILE"); none && *none && o.profile.empty())
    o.noProfile = true;
  o.run.minIterations = std::min(o.run.minIterations, o.run.maxIterations);
}

// --cases names every case's selection itself: the options that select cases are refused beside
// it.
void CheckCasesFileAlone(const Raw& raw, const Options& o) {
  if (!o.casesFile.empty()) {
    std::vector<std::pair<std::string, bool>> selections = {{"task", !raw.tasks.empty()},
                                                            {"variant", !raw.variants.empty()},
                                                            {"size", o.sizesGiven},
                                                            {"type", o.typesGiven},
                                                            {"op", o.opsGiven}};
    for (const auto& name : o.keyParamsGiven)
      selections.push_back({name, true});
    selections.insert(selections.end(), {{"local-size", o.localSizeGiven}, {"explain", o.explain}});
    for (const auto& [name, given] : selections)
      if (given)
        throw UsageError(
            fmt::format("--cases: --{} selects cases too; allowed: one of the two "
                        "(the file names each case's {})",
                        name, name));
  }
  if (!o.casesFile.empty() && !o.params.empty())
    throw UsageError(
        fmt::format("--cases: --{} selects cases too; allowed: one of the two (the "
                    "file names each case's params)",
                    o.params.begin()->first));
}

// Options that exclude each other, and whether cases run in worker processes.
void ResolveIsolation(const Raw& raw, Options& o) {
  if (o.noIsolate && o.timeoutS > 0)
    throw UsageError("--no-isolate: --timeout needs worker processes; allowed: one of the two");
  if (o.oclgrind && !raw.check)
    throw UsageError(
        "--oclgrind: only with --check (it validates, it does not time); allowed: --check "
        "--oclgrind [--task, --variant, --size, --local-size, ...]");
  if (o.oclgrind && o.noIsolate)
    throw UsageError(
        "--no-isolate: --oclgrind runs its cases in worker processes; allowed: one of the two");
  // In a worker process unless --no-isolate: a kernel that crashes or hangs is its case's,
  // whoever wrote it (docs/USAGE.md, "Isolation").
  o.isolate = !o.noIsolate;
}

// Whether two output paths name one file: the same path once made absolute, or one file
// already there under two names (a link).
bool SameFile(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::absolute(a, ec).lexically_normal() == fs::absolute(b, ec).lexically_normal())
    return true;
  return fs::equivalent(a, b, ec) && !ec;
}

// --json FILE, ...: each given one its own file, --output's included (two reports written to
// one file would leave the last one).
void ResolveFiles(const Raw& raw, Options& o) {
  std::vector<std::pair<std::string, std::string>> taken;  // option, path
  if (!o.output.empty())
    taken.emplace_back("--output", o.output);
  for (const auto& [name, opt] : raw.fileOpts) {
    if (opt->count() == 0)
      continue;
    const std::string option = "--" + name, path = raw.files.at(name);
    if (path.empty())
      throw UsageError(fmt::format("{} '': no file named; allowed: a file path", option));
    for (const auto& [other, otherPath] : taken)
      if (SameFile(path, otherPath))
        throw UsageError(
            fmt::format("{} '{}': {} writes there too; allowed: a file of its own for each output",
                        option, path, other));
    taken.emplace_back(option, path);
    o.files.push_back({ParseFormat(name), option, path});
  }
}

void ResolveValues(const Raw& raw, const TaskCatalog& catalog, Options& o) {
  ResolveLists(raw, o);
  ResolveParams(raw, catalog, o);
  ResolveFiles(raw, o);
  ResolveGiven(raw, o);
  CheckCasesFileAlone(raw, o);
  ResolveIsolation(raw, o);
}

}  // namespace

CLI::Validator TuneCheck(const std::vector<TuningKnob>& knobs) {
  return CLI::Validator(
      [knobs](std::string& v) {
        const size_t eq = v.find('=');
        const std::string name = v.substr(0, eq);
        std::vector<std::string> names;
        for (const auto& k : knobs) {
          if (std::find(names.begin(), names.end(), k.name) == names.end())
            names.push_back(k.name);
          if (k.name != name)
            continue;
          const auto value =
              eq == std::string::npos ? std::nullopt : ParseUnsigned(v.substr(eq + 1));
          if (value && k.Allows(*value))
            return std::string();
          return fmt::format("'{}': not allowed; allowed: {}={}", v, name, k.AllowedText());
        }
        return fmt::format("'{}': unknown knob; allowed: NAME=VALUE with NAME one of {}", v,
                           Join(names));
      },
      "");
}

std::map<std::string, size_t> TuningOf(const std::vector<std::string>& tune) {
  std::map<std::string, size_t> tuning;
  for (const auto& t : tune) {
    const size_t eq = t.find('=');
    tuning[t.substr(0, eq)] = *ParseUnsigned(t.substr(eq + 1));
  }
  return tuning;
}

Options ParseCommandLine(int argc, const char* const* argv, const TaskCatalog& catalog,
                         const std::string& subcommandsHelp) {
  Options o;
  Raw raw;
  CLI::App app{
      "reduce-scan-bench: parallel reduction and prefix sum (scan) on any OpenCL device.\n"
      "Every variant is validated against a CPU reference on every run, then timed with OpenCL\n"
      "profiling events (median of repeated runs).",
      "reduce-scan-bench"};
  app.footer(subcommandsHelp);
  app.set_help_flag();  // handled below so that --help exits 0 with the text on stdout
  app.add_flag("-h,--help", raw.help, "Print this help and exit");
  app.add_flag("--version", raw.version,
               "Print the version, git revision and build of this program and exit");
  AddDeviceOptions(app, o);
  AddSelectionOptions(app, o, raw, catalog);
  AddProblemOptions(app, o, raw, catalog);
  AddRunOptions(app, o, raw);
  AddOutputOptions(app, o, raw);
  AddIsolationOptions(app, o);
  if (const std::string empty = cli::EmptyListItem(app, argc, argv); !empty.empty())
    throw UsageError(empty);
  cli::Parse(app, argc, argv);
  if (raw.help || raw.version) {
    o.help = true;
    o.helpText = raw.help ? app.help() : VersionLine() + "\n";
    return o;
  }
  ResolveSelection(raw, catalog, o);
  ResolveValues(raw, catalog, o);
  return o;
}

TaskCatalog CatalogOf(const std::vector<std::unique_ptr<IComputeTask>>& tasks) {
  TaskCatalog catalog;
  for (const auto& t : tasks)
    catalog.push_back({t->Name(), t->Variants(), t->Tunables(), t->Parameters(), t->TunedSpaces()});
  return catalog;
}

}  // namespace rsb
