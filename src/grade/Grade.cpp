#include "Grade.h"

#include "CLUtil.h"
#include "ChildRun.h"
#include "CliChecks.h"
#include "Errors.h"
#include "HostBuild.h"
#include "Report.h"
#include "Rubric.h"
#include "Subprocess.h"
#include "Text.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <regex>

namespace fs = std::filesystem;
using nlohmann::json;

namespace rsb {

namespace {

using namespace grade;

// ---------------------------------------------------------------------------------------------
// Options

struct GradeOptions {
  std::vector<std::string> handins;
  std::string rubric, outputDir = "grades", platform, device, handinKit, suiteSource;
  double timeoutS = 60, buildTimeoutS = 120;
  bool quiet = false;
};

// The shipped rubric: installed next to the kernels, else in the source tree of this binary.
std::string DefaultRubric() {
  std::error_code ec;
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  const fs::path installed =
      exe.parent_path().parent_path() / "share" / "reduce-scan-bench" / "grading" / "rubric.json";
  if (!ec && fs::is_regular_file(installed, ec))
    return installed.string();
  return (fs::path(RSB_SOURCE_DIR) / "grading" / "rubric.json").string();
}

GradeOptions ParseGradeOptions(int argc, char** argv, bool& help) {
  GradeOptions o;
  CLI::App app{
      "reduce-scan-bench grade: scores hand-ins (folders with kernels/ and optionally\n"
      "src/CReductionTask.*, src/CScanTask.*, src/CConvolutionTask.*) against a rubric; every item "
      "runs in a child\n"
      "process under --timeout. Writes DIR/<name>.md, DIR/<name>.json, DIR/summary.csv.",
      "reduce-scan-bench grade"};
  app.set_help_flag();
  app.add_flag("-h,--help", help, "Print this help and exit");
  app.add_option("HANDIN", o.handins, "Hand-in folders (each with kernels/)")
      ->check(cli::Allowed("an existing folder (a hand-in with kernels/)",
                           [](const std::string& v) { return fs::is_directory(v); }));
  app.add_option("--rubric", o.rubric,
                 "Rubric JSON (default: grading/rubric.json of the suite's source tree)")
      ->check(cli::Allowed("a readable rubric JSON file",
                           [](const std::string& v) { return fs::is_regular_file(v); }));
  auto seconds = [](double max) {
    return cli::Allowed(fmt::format("a number of seconds from 1 to {:g}", max),
                        [max](const std::string& v) {
                          char* end = nullptr;
                          const double d = std::strtod(v.c_str(), &end);
                          return !v.empty() && *end == '\0' && d >= 1 && d <= max;
                        });
  };
  app.add_option("--timeout", o.timeoutS,
                 "Seconds each item's child run may take before it is killed (default 60)")
      ->check(seconds(86400));
  app.add_option("--build-timeout", o.buildTimeoutS,
                 "Seconds a hand-in's host code may take to build (default 120)")
      ->check(seconds(86400));
  app.add_option("--output-dir", o.outputDir, "Folder of the reports (default grades)");
  app.add_option("--platform", o.platform, "Platform: index or name substring");
  app.add_option("--device", o.device, "Device: index or name substring");
  app.add_option("--handin-kit", o.handinKit,
                 "The hand-in kit that hand-ins' host code is built against (default: "
                 "handin-kit next to this binary, or the installed one)");
  // Deprecated (hidden): hand-ins' host code is built against the kit, not a source tree.
  app.add_option("--suite-source", o.suiteSource)->group("");
  app.add_flag("--quiet,-q", o.quiet, "No progress on stderr");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  if (help) {
    std::cout << app.help();
    return o;
  }
  if (!o.suiteSource.empty())
    throw UsageError(
        "--suite-source: no longer used; hand-ins' host code is built against the hand-in kit "
        "(handin-kit next to this binary, written by every build), see --handin-kit DIR");
  if (o.handins.empty())
    throw UsageError(
        "HANDIN: none given; allowed: one or more hand-in folders (each with kernels/)");
  if (o.rubric.empty()) {
    o.rubric = DefaultRubric();
    if (!fs::is_regular_file(o.rubric))
      throw UsageError(
          fmt::format("--rubric: not given and no '{}'; allowed: a rubric JSON file", o.rubric));
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// Grading

struct Context {
  GradeOptions opt;
  Rubric rubric;
  ChildSettings child;
  Code suite;  // the suite's own binary and kernels: the reference
  std::map<std::string, std::optional<double>> referenceMs;  // per speed case
  std::string deviceName;

  GroupRun Run(const Code& code, const Item& it, const CaseGroup& g, bool timed) {
    GroupRun run = RunGroup(child, code, it, g, timed, opt.timeoutS);
    if (deviceName.empty() && run.results && (*run.results)["device"].is_object())
      deviceName = (*run.results)["device"].value("name", "");
    return run;
  }
};
// ---------------------------------------------------------------------------------------------
// Grading and reports

int Rank(const std::string& status) {
  if (status == "passed")
    return 0;
  if (status == "failed")
    return 1;
  if (status == "error")
    return 2;
  return 3;  // timeout
}

std::optional<json> FirstWrong(const std::string& message) {
  static const std::regex re(
      R"(wrong result at index (\d+): expected (.*), got (.*?)( \(never written: still holds the poison\))? \((\d+) of (\d+) elements wrong\))");
  std::smatch m;
  if (!std::regex_search(message, m, re))
    return std::nullopt;
  return json{{"index", std::stoull(m[1].str())},
              {"expected", m[2].str()},
              {"actual", m[3].str()},
              {"never_written", m[4].matched},
              {"wrong_elements", std::stoull(m[5].str())}};
}

// The median time of the one case of a timed run, if it passed.
std::optional<double> TimedMedian(Context& ctx, const Code& code, const Item& it,
                                  std::string& why) {
  const GroupRun run = ctx.Run(code, it, it.speedCase, true);
  if (run.cases.size() != 1 || run.cases[0].status != "passed" || !run.results) {
    why = run.cases.empty() ? "no result" : run.cases[0].status + ": " + run.cases[0].message;
    return std::nullopt;
  }
  for (const auto& res : (*run.results)["results"])
    if (res.value("variant", "") == it.variant && res.contains("time_ms"))
      return res["time_ms"].value("median", 0.0);
  why = "no time in the result";
  return std::nullopt;
}

ItemGrade GradeItem(Context& ctx, const Item& it, const Code& code, const std::string& hostError) {
  ItemGrade g;
  g.item = &it;
  if (!hostError.empty()) {
    g.status = "error";
    g.detail = "host code does not build: " + Headline(hostError) + "\n" + hostError;
    return g;
  }
  if (!fs::is_directory(code.kernels)) {
    g.status = "error";
    g.detail = "the hand-in has no kernels/ folder";
    return g;
  }
  std::vector<std::string> runOf;  // per case: the run it was part of
  for (const auto& group : it.groups) {
    GroupRun run = ctx.Run(code, it, group, false);
    std::vector<std::string> sizes;
    for (size_t n : group.sizes)
      sizes.push_back(std::to_string(n));
    const std::string what = fmt::format("the run of {} case(s) n={} {} {}{}", run.cases.size(),
                                         Join(sizes), JoinNames(group.types), JoinNames(group.ops),
                                         it.task == "scan" ? " " + JoinNames(group.kinds) : "");
    for (auto& c : run.cases) {
      g.cases.push_back(std::move(c));
      runOf.push_back(what);
    }
    // A group that timed out or crashed says so for all its cases; the next groups still run.
  }
  g.status = "passed";
  for (size_t i = 0; i < g.cases.size(); ++i)
    if (const auto& c = g.cases[i]; Rank(c.status) > Rank(g.status)) {
      g.status = c.status;
      g.detail = (c.wholeRun ? runOf[i] : c.label) + ": " + c.message;
      if (c.status == "failed")
        g.firstWrong = FirstWrong(c.message);
    }
  if (g.status != "passed")
    return g;
  g.points = it.points;
  if (!it.speedFloor)
    return g;
  // Speed against the suite's own kernels and host code, on the same device, in this run.
  const CaseGroup& sc = it.speedCase;
  const std::string key = fmt::format("{}/{}/{}/{}/{}/{}/{}", it.task, it.variant, sc.sizes[0],
                                      ToString(sc.types[0]), ToString(sc.ops[0]),
                                      it.task == "scan" ? ToString(sc.kinds[0]) : "", sc.localSize);
  std::string why;
  if (!ctx.referenceMs.count(key))
    ctx.referenceMs[key] = TimedMedian(ctx, ctx.suite, it, why);
  std::optional<double> ref = ctx.referenceMs[key];
  std::optional<double> mine = TimedMedian(ctx, code, it, why);
  if (ref && mine && *ref / *mine < *it.speedFloor) {
    // Below the floor: both measured once more and the best median of each counts, so that a
    // noisy moment does not cost points (and a re-run gives the same points).
    std::string again;
    if (const auto r2 = TimedMedian(ctx, ctx.suite, it, again))
      ctx.referenceMs[key] = ref = std::min(*ref, *r2);
    if (const auto m2 = TimedMedian(ctx, code, it, again))
      mine = std::min(*mine, *m2);
  }
  json s = {{"floor", *it.speedFloor},
            {"case", CaseKey(ToString(sc.types[0]), ToString(sc.ops[0]),
                             it.task == "scan" ? ToString(sc.kinds[0]) : "", sc.sizes[0])}};
  if (ref)
    s["reference_ms"] = *ref;
  if (mine)
    s["handin_ms"] = *mine;
  if (ref && mine && *mine > 0) {
    const double ratio = *ref / *mine;
    s["ratio"] = ratio;
    s["met"] = ratio >= *it.speedFloor;
    if (ratio < *it.speedFloor) {
      g.points = 0;
      g.detail = fmt::format("correct, but {:.2f}x the reference's speed, below the floor {:g}x",
                             ratio, *it.speedFloor);
    }
  } else {
    s["met"] = false;
    g.points = 0;
    g.detail = ref ? "correct, but the timed run did not pass: " + why
                   : "the reference's timed run did not pass: " + why;
  }
  g.speed = s;
  return g;
}

std::string HandinName(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (p.filename().empty())
    p = p.parent_path();
  std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..")
    name = fs::absolute(p).lexically_normal().filename().string();
  return name;
}

// How hand-ins' host code is built: against the hand-in kit, read and checked once before any
// hand-in is graded where one brings host code (a missing or broken kit: DeviceError, exit 3).
HostBuildSettings HostBuildFor(const Context& ctx, const std::string& work, Kit& kit) {
  HostBuildSettings host{nullptr, work, ctx.opt.buildTimeoutS, {}};
  for (const auto& it : ctx.rubric.items)
    host.graded.insert(it.task);
  if (std::none_of(ctx.opt.handins.begin(), ctx.opt.handins.end(),
                   [&](const std::string& h) { return !HandinTasks(h, host.graded).empty(); }))
    return host;
  try {
    kit = LoadKit(ctx.opt.handinKit.empty() ? DefaultKitDir() : ctx.opt.handinKit, work,
                  ctx.opt.buildTimeoutS);
  } catch (...) {
    std::error_code ec;
    fs::remove_all(work, ec);
    throw;
  }
  host.kit = &kit;
  return host;
}

int GradeAll(int argc, char** argv) {
  bool help = false;
  Context ctx;
  ctx.opt = ParseGradeOptions(argc, argv, help);
  if (help)
    return kExitOk;
  ctx.rubric = LoadRubric(ctx.opt.rubric);
  std::vector<std::string> names;
  for (const auto& h : ctx.opt.handins) {
    const std::string name = HandinName(h);
    if (std::find(names.begin(), names.end(), name) != names.end())
      throw UsageError(
          fmt::format("HANDIN '{}': a second hand-in named '{}'; allowed: hand-in "
                      "folders with different names (reports are DIR/<name>.md)",
                      h, name));
    names.push_back(name);
  }
  // The device is checked once here (the suite's own code), so that a wrong --platform is one
  // usage error instead of an error in every item.
  SelectDevice(ctx.opt.platform, ctx.opt.device);
  std::error_code ec;
  ctx.suite.binary = fs::canonical("/proc/self/exe", ec).string();
  if (ec)
    throw DeviceError("cannot find the running executable (/proc/self/exe)");
  ctx.suite.kernels = FindKernelDir("", argv[0]);
  fs::create_directories(ctx.opt.outputDir, ec);
  if (ec || !fs::is_directory(ctx.opt.outputDir))
    throw UsageError(
        fmt::format("--output-dir '{}': cannot create the folder ({}); allowed: a "
                    "writable folder",
                    ctx.opt.outputDir, ec.message()));
  std::string work = (fs::temp_directory_path() / "rsb-grade-XXXXXX").string();
  if (!::mkdtemp(work.data()))
    throw DeviceError("cannot create a temporary folder");
  ctx.child = {ctx.opt.platform, ctx.opt.device, ctx.rubric.seed, work};
  Kit kit;
  const HostBuildSettings host = HostBuildFor(ctx, work, kit);
  InstallInterruptHandler();

  std::vector<HandinGrade> all;
  for (size_t i = 0; i < ctx.opt.handins.size() && !Interrupted(); ++i) {
    HandinGrade h;
    h.name = names[i];
    h.path = fs::absolute(ctx.opt.handins[i]).lexically_normal().string();
    if (!ctx.opt.quiet)
      std::cerr << fmt::format("[{}/{}] {}\n", i + 1, ctx.opt.handins.size(), h.name);
    h.host = BuildHostCode(host, h.path);
    for (const auto& [task, b] : h.host.tasks)
      if (!ctx.opt.quiet)
        std::cerr << fmt::format("  host code ({}): {}\n", task,
                                 !b.ok ? "does not build"
                                 : b.compiled.empty()
                                     ? "the suite's sources"
                                     : fmt::format("built in {:.1f} s", b.seconds));
    for (const auto& it : ctx.rubric.items) {
      if (Interrupted())
        break;
      // The item's task: the hand-in's binary for it where it brings its host code.
      const auto own = h.host.tasks.find(it.task);
      const bool built = own != h.host.tasks.end() && own->second.ok;
      const Code code{built && !own->second.binary.empty() ? own->second.binary : ctx.suite.binary,
                      (fs::path(h.path) / "kernels").string()};
      const std::string hostError = own != h.host.tasks.end() && !built ? own->second.log : "";
      ItemGrade g = GradeItem(ctx, it, code, hostError);
      if (!ctx.opt.quiet)
        std::cerr << fmt::format("  {:<28} {:<8} {}/{}\n", it.id, g.status, Points(g.points),
                                 Points(it.points));
      h.total += g.points;
      h.max += it.points;
      h.items.push_back(std::move(g));
    }
    if (Interrupted())
      break;
    const fs::path dir(ctx.opt.outputDir);
    const RunInfo info{&ctx.rubric, ctx.deviceName, ctx.opt.timeoutS};
    WriteFile(dir / (h.name + ".md"), ToMarkdown(info, h));
    WriteFile(dir / (h.name + ".json"),
              ToJson(info, h).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
    all.push_back(std::move(h));
    WriteFile(dir / "summary.csv", SummaryCsv(ctx.rubric, all));
  }
  fs::remove_all(work, ec);
  if (Interrupted()) {
    std::cerr << "interrupted: the reports of the hand-ins graded so far are written\n";
    return kExitInterrupted;
  }
  if (!ctx.opt.quiet)
    std::cerr << fmt::format("reports in {}\n", ctx.opt.outputDir);
  return kExitOk;
}

}  // namespace

int Grade(int argc, char** argv) {
  try {
    return GradeAll(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitDevice;
  }
}

}  // namespace rsb
