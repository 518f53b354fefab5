#include "Cli.h"

#include "Errors.h"
#include "TaskUtil.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>

namespace rsb {

namespace {

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? sep : "") + v[i];
  return s;
}

template <class E, class ParseFn>
std::vector<E> ParseList(const std::string& option, const std::vector<std::string>& values,
                         const std::vector<E>& all, ParseFn parse) {
  std::vector<std::string> allowed;
  for (E e : all)
    allowed.push_back(ToString(e));
  std::vector<E> out;
  for (const auto& v : values) {
    if (v == "all") {
      out = all;
      break;
    }
    auto e = parse(v);
    if (!e)
      throw UsageError(
          fmt::format("{} '{}': unknown; allowed: {} or all", option, v, Join(allowed)));
    if (std::find(out.begin(), out.end(), *e) == out.end())
      out.push_back(*e);
  }
  return out;
}

}  // namespace

Options ParseCommandLine(int argc, const char* const* argv, const TaskCatalog& catalog) {
  Options o;
  CLI::App app{
      "reduce-scan-bench: parallel reduction and prefix sum (scan) on any OpenCL device.\n"
      "Every variant is validated against a CPU reference on every run, then timed with OpenCL\n"
      "profiling events (median of repeated runs).",
      "reduce-scan-bench"};
  app.set_help_flag();  // handled below so that --help exits 0 with the text on stdout
  bool help = false;
  std::vector<std::string> tasks, variants, types, ops, kinds, sizes;
  std::string localSize = "auto", iterations, budget, warmup, seed, format = "table";

  std::vector<std::string> taskNames;
  for (const auto& t : catalog)
    taskNames.push_back(t.first);

  app.add_flag("-h,--help", help, "Print this help and exit");
  app.add_flag("--list-devices", o.listDevices, "List OpenCL platforms and devices and exit");
  app.add_flag("--list-variants", o.listVariants, "List tasks and variants and exit");
  app.add_option("--platform", o.platform, "Platform: index or name substring");
  app.add_option("--device", o.device,
                 "Device: index or name substring (default: first GPU, else first device)");
  app.add_option("--task", tasks, "Task(s): " + Join(taskNames) + " or all (default all)")
      ->delimiter(',');
  app.add_option("--variant", variants, "Variant(s) by name, or all (default all)")->delimiter(',');
  app.add_option("--type", types, "Element type(s): int uint long ulong float double, or all")
      ->delimiter(',');
  app.add_option("--op", ops, "Operator(s): sum min max, or all (default sum)")->delimiter(',');
  app.add_option("--scan-kind", kinds, "Scan kind(s): inclusive exclusive, or all")->delimiter(',');
  app.add_option("--size,-n", sizes, "Element count(s) n >= 1: 16777216, 16M or 2^24")
      ->delimiter(',');
  app.add_option("--local-size", localSize,
                 "Work-group size: a power of two, or auto (each variant's best)");
  app.add_option("--iterations", iterations, "Timed runs per case, at most (default 100)");
  app.add_option("--time-budget", budget,
                 "Seconds of timed runs per case before stopping (default 0.5)");
  app.add_option("--warmup", warmup, "Untimed runs before timing (default 2)");
  std::string validateRuns;
  app.add_option("--validate-runs", validateRuns,
                 "Runs validated per case, every element checked each time (default 1; more "
                 "is a stress test)");
  app.add_option("--seed", seed, "Seed of the random input (default 1)");
  app.add_option("--format", format, "Output: table, csv or json (default table)");
  app.add_option("--output,-o", o.output, "Write the output to FILE instead of stdout");
  app.add_option("--kernels", o.kernels, "Folder of the .cl files (default: the installed ones)");
  app.add_flag("--quiet,-q", o.quiet, "No progress on stderr");
  bool check = false;
  app.add_flag("--check", check, "Validate every variant once, no timing (fast correctness check)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  o.run.timed = !check;
  if (help) {
    o.help = true;
    o.helpText = app.help();
    return o;
  }

  // Tasks and variants.
  o.tasks.clear();
  for (const auto& t : tasks) {
    if (t == "all") {
      o.tasks.clear();
      break;
    }
    if (std::find(taskNames.begin(), taskNames.end(), t) == taskNames.end())
      throw UsageError(fmt::format("--task '{}': unknown; allowed: {} or all", t, Join(taskNames)));
    if (std::find(o.tasks.begin(), o.tasks.end(), t) == o.tasks.end())
      o.tasks.push_back(t);
  }
  if (o.tasks.empty())
    o.tasks = taskNames;
  for (const auto& v : variants) {
    if (v == "all") {
      o.variants.clear();
      break;
    }
    std::vector<std::string> known;
    bool found = false;
    for (const auto& [task, names] : catalog) {
      if (std::find(o.tasks.begin(), o.tasks.end(), task) == o.tasks.end())
        continue;
      for (const auto& name : names) {
        if (std::find(known.begin(), known.end(), name) == known.end())
          known.push_back(name);
        found = found || name == v;
      }
    }
    if (!found)
      throw UsageError(fmt::format("--variant '{}': unknown for task {}; allowed: {} or all", v,
                                   Join(o.tasks, "/"), Join(known)));
    o.variants.push_back(v);
  }

  if (!types.empty())
    o.types = ParseList("--type", types, AllElementTypes(), ParseElementType);
  if (!ops.empty())
    o.ops = ParseList("--op", ops, AllOps(), ParseOp);
  if (!kinds.empty())
    o.scanKinds = ParseList("--scan-kind", kinds, AllScanKinds(), ParseScanKind);

  if (!sizes.empty()) {
    o.sizes.clear();
    for (const auto& s : sizes) {
      auto n = ParseSize(s);
      if (!n || *n > kMaxElements)
        throw UsageError(
            fmt::format("--size '{}': {}; allowed: an element count from 1 to {} "
                        "(2^31), written as 16777216, 16M, 2^24 or 2^24+3",
                        s, n ? "too large" : "not a valid size", kMaxElements));
      o.sizes.push_back(*n);
    }
  }

  if (localSize != "auto") {
    auto l = ParseUnsigned(localSize);
    if (!l || !IsPowerOfTwo(*l) || *l > (1u << 20))
      throw UsageError(
          fmt::format("--local-size '{}': not a power of two; allowed: auto or a "
                      "power of two 1, 2, 4, ... up to the device's maximum "
                      "work-group size (see --list-devices)",
                      localSize));
    o.localSize = *l;
  }
  if (!iterations.empty()) {
    auto v = ParseUnsigned(iterations);
    if (!v || *v == 0 || *v > 1000000)
      throw UsageError(fmt::format(
          "--iterations '{}': not allowed; allowed: an integer from 1 to 1000000", iterations));
    o.run.maxIterations = *v;
    o.run.minIterations = std::min<size_t>(o.run.minIterations, *v);
  }
  if (!validateRuns.empty()) {
    auto v = ParseUnsigned(validateRuns);
    if (!v || *v == 0 || *v > 1000000)
      throw UsageError(
          fmt::format("--validate-runs '{}': not allowed; allowed: an integer from 1 to 1000000",
                      validateRuns));
    o.run.validateRuns = *v;
  }
  if (!warmup.empty()) {
    auto v = ParseUnsigned(warmup);
    if (!v || *v > 1000)
      throw UsageError(
          fmt::format("--warmup '{}': not allowed; allowed: an integer from 0 to 1000", warmup));
    o.run.warmup = *v;
  }
  if (!budget.empty()) {
    double b = -1;
    try {
      size_t used = 0;
      b = std::stod(budget, &used);
      if (used != budget.size())
        b = -1;
    } catch (const std::exception&) {
      b = -1;
    }
    if (!(b >= 0 && b <= 3600))
      throw UsageError(fmt::format(
          "--time-budget '{}': not allowed; allowed: seconds from 0 to 3600, e.g. 0.5", budget));
    o.run.timeBudgetS = b;
  }
  if (!seed.empty()) {
    auto v = ParseUnsigned(seed);
    if (!v)
      throw UsageError(
          fmt::format("--seed '{}': not allowed; allowed: a non-negative integer", seed));
    o.seed = *v;
  }
  if (format == "table")
    o.format = OutputFormat::Table;
  else if (format == "csv")
    o.format = OutputFormat::Csv;
  else if (format == "json")
    o.format = OutputFormat::Json;
  else
    throw UsageError(fmt::format("--format '{}': unknown; allowed: table, csv, json", format));
  return o;
}

}  // namespace rsb
