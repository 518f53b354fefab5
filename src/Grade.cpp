#include "Grade.h"

#include "CLUtil.h"
#include "CliChecks.h"
#include "Errors.h"
#include "Sizes.h"
#include "Subprocess.h"
#include "Tasks.h"
#include "Types.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;
using nlohmann::json;

namespace rsb {

namespace {

constexpr uint64_t kDefaultSeed = 1;
// The task sources a hand-in may bring, per task.
const std::map<std::string, std::vector<std::string>> kTaskSources = {
    {"reduction", {"CReductionTask.h", "CReductionTask.cpp"}},
    {"scan", {"CScanTask.h", "CScanTask.cpp"}},
    {"convolution", {"CConvolutionTask.h", "CConvolutionTask.cpp"}},
};

// ---------------------------------------------------------------------------------------------
// Options

struct GradeOptions {
  std::vector<std::string> handins;
  std::string rubric, outputDir = "grades", platform, device, suiteSource;
  double timeoutS = 60, buildTimeoutS = 900;
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
  o.suiteSource = RSB_SOURCE_DIR;
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
                 "Seconds a hand-in's host code may take to build (default 900)")
      ->check(seconds(86400));
  app.add_option("--output-dir", o.outputDir, "Folder of the reports (default grades)");
  app.add_option("--platform", o.platform, "Platform: index or name substring");
  app.add_option("--device", o.device, "Device: index or name substring");
  app.add_option("--suite-source", o.suiteSource,
                 "The suite's source tree, to build hand-ins' host code against (default: the "
                 "tree this binary was built from)")
      ->check(cli::Allowed("a folder holding the suite's CMakeLists.txt, common/ and src/",
                           [](const std::string& v) {
                             return fs::is_regular_file(fs::path(v) / "CMakeLists.txt") &&
                                    fs::is_directory(fs::path(v) / "common");
                           }));
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
// Rubric

// One child run: the product of its lists, at one local size.
struct CaseGroup {
  std::vector<size_t> sizes;
  std::vector<ElementType> types = {ElementType::Uint};
  std::vector<Op> ops = {Op::Sum};
  std::vector<ScanKind> kinds = {ScanKind::Inclusive};
  std::string localSize = "auto";
};

struct Item {
  std::string id, title, task, variant;
  double points = 0;
  std::vector<CaseGroup> groups;
  std::optional<double> speedFloor;
  CaseGroup speedCase;  // one case
};

struct Rubric {
  std::string name, path;
  uint64_t seed = kDefaultSeed;
  std::vector<Item> items;
};

[[noreturn]] void RubricError(const Rubric& r, const std::string& where, const std::string& what) {
  throw UsageError(
      fmt::format("--rubric '{}': {}{}", r.path, where.empty() ? "" : where + ": ", what));
}

std::string Str(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// A value or a list of values, each converted by parse (nullopt: not allowed).
template <class T, class F>
std::vector<T> List(const Rubric& r, const std::string& where, const json& v, const char* key,
                    const std::string& allowed, F parse) {
  std::vector<T> out;
  const json list = v.is_array() ? v : json::array({v});
  for (const auto& e : list) {
    const std::optional<T> x = parse(e);
    if (!x)
      RubricError(r, where, fmt::format("{} '{}': not allowed; allowed: {}", key, Str(e), allowed));
    out.push_back(*x);
  }
  if (out.empty())
    RubricError(r, where, fmt::format("{}: empty list; allowed: {}", key, allowed));
  return out;
}

CaseGroup ParseCases(const Rubric& r, const std::string& where, const json& c, bool scan) {
  if (!c.is_object())
    RubricError(r, where,
                "a case must be an object with size(s), type(s), op(s), scan_kind(s), "
                "local_size");
  CaseGroup g;
  bool haveSize = false;
  for (const auto& [key, v] : c.items()) {
    if (key == "size" || key == "sizes") {
      haveSize = true;
      g.sizes = List<size_t>(r, where, v, key.c_str(),
                             "element counts from 1 to 2^40 (numbers or \"2^20+3\", \"16M\")",
                             [](const json& e) -> std::optional<size_t> {
                               std::optional<size_t> n;
                               if (e.is_number_unsigned())
                                 n = e.get<size_t>();
                               else if (e.is_string())
                                 n = ParseSize(e.get<std::string>());
                               if (n && (*n < 1 || *n > kMaxElements))
                                 n.reset();
                               return n;
                             });
    } else if (key == "type" || key == "types") {
      g.types = List<ElementType>(
          r, where, v, key.c_str(), "int uint long ulong float double", [](const json& e) {
            return e.is_string() ? ParseElementType(e.get<std::string>()) : std::nullopt;
          });
    } else if (key == "op" || key == "ops") {
      g.ops = List<Op>(r, where, v, key.c_str(), "sum min max", [](const json& e) {
        return e.is_string() ? ParseOp(e.get<std::string>()) : std::nullopt;
      });
    } else if (key == "scan_kind" || key == "scan_kinds") {
      if (!scan)
        RubricError(r, where, fmt::format("{}: only scan items have a scan kind", key));
      g.kinds = List<ScanKind>(r, where, v, key.c_str(), "inclusive exclusive", [](const json& e) {
        return e.is_string() ? ParseScanKind(e.get<std::string>()) : std::nullopt;
      });
    } else if (key == "local_size") {
      const std::string s = Str(v);
      const auto n = ParseUnsigned(s);
      if (s != "auto" && !(n && *n >= 1 && *n <= 1024 && (*n & (*n - 1)) == 0))
        RubricError(r, where,
                    fmt::format("local_size '{}': not allowed; allowed: auto or a power of two "
                                "from 1 to 1024",
                                s));
      g.localSize = s;
    } else {
      RubricError(r, where,
                  fmt::format("unknown key '{}'; allowed: size(s), type(s), op(s), scan_kind(s), "
                              "local_size",
                              key));
    }
  }
  if (!haveSize)
    RubricError(r, where, "a case needs size or sizes");
  return g;
}

Rubric LoadRubric(const std::string& path) {
  Rubric r;
  r.path = path;
  json j;
  try {
    std::ifstream in(path);
    j = json::parse(in);
  } catch (const std::exception& e) {
    RubricError(r, "", fmt::format("not valid JSON ({})", e.what()));
  }
  if (!j.is_object() || !j.contains("items") || !j["items"].is_array() || j["items"].empty())
    RubricError(r, "", "needs an object with a non-empty \"items\" array");
  r.name = j.value("name", fs::path(path).stem().string());
  if (j.contains("seed")) {
    if (!j["seed"].is_number_unsigned())
      RubricError(r, "seed", "not allowed; allowed: a whole number");
    r.seed = j["seed"].get<uint64_t>();
  }
  std::map<std::string, std::vector<std::string>> variants;
  for (const auto& t : MakeTasks())
    variants[t->Name()] = t->Variants();
  std::vector<std::string> ids;
  for (size_t i = 0; i < j["items"].size(); ++i) {
    const json& e = j["items"][i];
    std::string where = fmt::format("item {}", i + 1);
    if (!e.is_object())
      RubricError(r, where, "not an object");
    Item it;
    it.id = e.value("id", "");
    if (it.id.empty() || it.id.find_first_of(",\"\n") != std::string::npos)
      RubricError(r, where, "needs an \"id\" (a name without commas or quotes)");
    where = fmt::format("item '{}'", it.id);
    if (std::find(ids.begin(), ids.end(), it.id) != ids.end())
      RubricError(r, where, "id given twice");
    ids.push_back(it.id);
    for (const auto& [key, v] : e.items())
      if (key != "id" && key != "title" && key != "task" && key != "variant" && key != "points" &&
          key != "cases" && key != "speed_floor" && key != "speed_case")
        RubricError(r, where,
                    fmt::format("unknown key '{}'; allowed: id, title, task, variant, points, "
                                "cases, speed_floor, speed_case",
                                key));
    it.title = e.value("title", "");
    it.task = e.value("task", "");
    if (!variants.count(it.task)) {
      std::vector<std::string> names;
      for (const auto& [t, _] : variants)
        names.push_back(t);
      RubricError(r, where,
                  fmt::format("task '{}': unknown; allowed: {}", it.task, cli::Join(names)));
    }
    it.variant = e.value("variant", "");
    const auto& vs = variants[it.task];
    if (std::find(vs.begin(), vs.end(), it.variant) == vs.end())
      RubricError(r, where,
                  fmt::format("variant '{}': unknown for task {}; allowed: {}", it.variant, it.task,
                              cli::Join(vs)));
    if (!e.contains("points") || !e["points"].is_number() || e["points"].get<double>() < 0)
      RubricError(r, where, "points: missing or negative; allowed: a number >= 0");
    it.points = e["points"].get<double>();
    const bool scan = it.task == "scan";
    if (!e.contains("cases"))
      RubricError(r, where, "needs \"cases\"");
    const json cases = e["cases"].is_array() ? e["cases"] : json::array({e["cases"]});
    if (cases.empty())
      RubricError(r, where, "cases: empty list");
    for (const auto& c : cases)
      it.groups.push_back(ParseCases(r, where, c, scan));
    if (e.contains("speed_floor")) {
      if (!e["speed_floor"].is_number() || e["speed_floor"].get<double>() <= 0)
        RubricError(r, where, "speed_floor: not allowed; allowed: a number > 0 (e.g. 0.5)");
      it.speedFloor = e["speed_floor"].get<double>();
    }
    // The speed case: given, or the largest size of the first case group at its first values.
    const CaseGroup& first = it.groups.front();
    it.speedCase = e.contains("speed_case")
                       ? ParseCases(r, where + " speed_case", e["speed_case"], scan)
                       : first;
    CaseGroup& sc = it.speedCase;
    sc.sizes = {*std::max_element(sc.sizes.begin(), sc.sizes.end())};
    sc.types.resize(1);
    sc.ops.resize(1);
    sc.kinds.resize(1);
    r.items.push_back(std::move(it));
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Child runs

std::string Join(const std::vector<std::string>& v, const char* sep = ",") {
  return cli::Join(v, sep);
}

template <class E>
std::string JoinNames(const std::vector<E>& v) {
  std::vector<std::string> s;
  for (const auto& e : v)
    s.push_back(ToString(e));
  return Join(s);
}

std::string CaseKey(const std::string& type, const std::string& op, const std::string& kind,
                    size_t n) {
  return fmt::format("{} {} {}n={}", type, op, kind.empty() ? "" : kind + " ", n);
}

// The first lines worth reading of a child's output: no blank lines, at most maxLines.
std::string Excerpt(const std::string& text, size_t maxLines = 20) {
  std::istringstream in(text);
  std::string line, out;
  size_t lines = 0;
  while (std::getline(in, line) && lines < maxLines) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    out += line + "\n";
    ++lines;
  }
  if (out.size() > 4000)
    out = out.substr(0, 4000) + "...\n";
  return out;
}

// The line of a child's output that says most: the first with a file:line (a compiler's
// error), else the first with "error", else the first.
std::string Headline(const std::string& text) {
  static const std::regex fileLine(R"([^\s:]+:\d+:(\d+:)? )");
  std::istringstream in(text);
  std::string line, withError, first;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    if (std::regex_search(line, fileLine) && line.find("rror") != std::string::npos)
      return line;
    if (withError.empty() && line.find("error") != std::string::npos)
      withError = line;
    if (first.empty())
      first = line;
  }
  return withError.empty() ? first : withError;
}

// Paths inside the hand-in read as the student wrote them: kernels/Scan.cl:12:3.
std::string ShortenPaths(std::string text, const std::string& root) {
  const std::string prefix = root + "/";
  size_t at;
  while ((at = text.find(prefix)) != std::string::npos)
    text.replace(at, prefix.size(), "");
  return text;
}

struct CaseOutcome {
  std::string label, status, message;
  bool wholeRun = false;  // the child run ended before any result: the message is the run's
};

struct GroupRun {
  std::vector<CaseOutcome> cases;
  std::optional<json> results;  // the child's JSON, when usable
};

struct Context {
  GradeOptions opt;
  Rubric rubric;
  std::string suiteBinary, suiteKernels, workDir;
  std::map<std::string, std::optional<double>> referenceMs;  // per speed case
  std::string deviceName;
};

std::vector<std::string> ChildArgs(const Context& ctx, const std::string& binary,
                                   const std::string& kernels, const Item& it, const CaseGroup& g,
                                   bool timed, const std::string& output) {
  std::vector<std::string> sizes;
  for (size_t n : g.sizes)
    sizes.push_back(std::to_string(n));
  std::vector<std::string> a = {
      binary,   "--kernels", kernels,  "--task",           it.task, "--variant",     it.variant,
      "--size", Join(sizes), "--type", JoinNames(g.types), "--op",  JoinNames(g.ops)};
  if (it.task == "scan")
    a.insert(a.end(), {"--scan-kind", JoinNames(g.kinds)});
  a.insert(a.end(), {"--local-size", g.localSize, "--seed", std::to_string(ctx.rubric.seed),
                     "--format", "json", "--output", output, "-q"});
  if (timed)
    a.insert(a.end(), {"--iterations", "30", "--time-budget", "0.3", "--warmup", "1"});
  else
    a.push_back("--check");
  if (!ctx.opt.platform.empty())
    a.insert(a.end(), {"--platform", ctx.opt.platform});
  if (!ctx.opt.device.empty())
    a.insert(a.end(), {"--device", ctx.opt.device});
  return a;
}

// Runs one case group in a child and gives every case of it an outcome.
GroupRun RunGroup(Context& ctx, const std::string& binary, const std::string& kernels,
                  const Item& it, const CaseGroup& g, bool timed) {
  static int counter = 0;
  const std::string output =
      (fs::path(ctx.workDir) / fmt::format("run-{}.json", counter++)).string();
  fs::remove(output);
  const ProcessResult p =
      RunProcess(ChildArgs(ctx, binary, kernels, it, g, timed, output), ctx.opt.timeoutS);
  GroupRun run;
  std::optional<json> j;
  {
    std::ifstream in(output);
    if (in) {
      try {
        j = json::parse(in);
        if (!j->is_object() || !(*j)["results"].is_array())
          j.reset();
      } catch (const std::exception&) {
        j.reset();
      }
    }
  }
  fs::remove(output);
  // What happened to the whole run, when it gave no usable JSON.
  std::string runStatus, runMessage;
  if (!p.started) {
    runStatus = "error";
    runMessage = "could not start the child run: " + p.startError;
  } else if (p.interrupted) {
    runStatus = "error";
    runMessage = "interrupted";
  } else if (p.timedOut) {
    runStatus = "timeout";
    runMessage = fmt::format("no answer within {:g} s (killed)", ctx.opt.timeoutS);
  } else if (p.signal) {
    runStatus = "error";
    runMessage = "crashed: killed by " + SignalName(p.signal);
    const std::string err = Excerpt(p.err);
    if (!err.empty())
      runMessage += "\n" + err;
  } else if (!j || p.exitCode == 2) {
    runStatus = "error";
    const std::string err = Excerpt(p.err);
    runMessage =
        fmt::format("exit status {} without a result: {}\n{}", p.exitCode, Headline(err), err);
    j.reset();
  }
  runMessage = ShortenPaths(runMessage, fs::path(kernels).parent_path().string());
  if (j) {
    run.results = j;
    if (ctx.deviceName.empty() && (*j)["device"].is_object())
      ctx.deviceName = (*j)["device"].value("name", "");
  }
  for (ElementType type : g.types)
    for (Op op : g.ops)
      for (size_t k = 0; k < (it.task == "scan" ? g.kinds.size() : 1); ++k)
        for (size_t n : g.sizes) {
          const std::string kind = it.task == "scan" ? ToString(g.kinds[k]) : "";
          CaseOutcome c;
          c.label = CaseKey(ToString(type), ToString(op), kind, n);
          if (!j) {
            c.status = runStatus;
            c.message = runMessage;
            c.wholeRun = true;
          } else {
            c.status = "error";
            c.message = "no result for this case";
            for (const auto& res : (*j)["results"]) {
              if (res.value("variant", "") != it.variant ||
                  res.value("type", "") != ToString(type) || res.value("op", "") != ToString(op) ||
                  res.value("n", size_t(0)) != n || res.value("scan_kind", "") != kind)
                continue;
              c.status = res.value("status", "error");
              c.message =
                  ShortenPaths(res.value("message", ""), fs::path(kernels).parent_path().string());
              if (c.status == "skipped") {
                c.status = "error";  // the rubric asks for a case this device cannot run
                c.message = "skipped on this device: " + c.message;
              }
            }
          }
          run.cases.push_back(c);
        }
  return run;
}

// ---------------------------------------------------------------------------------------------
// Hand-in host code

struct HostBuild {
  std::vector<std::string> tasks;  // tasks whose sources the hand-in brings
  bool ok = false;
  std::string binary, log;
  double seconds = 0;
};

// Compiler output worth reading: the lines around the first errors, temp paths shortened.
std::string BuildErrors(const std::string& output, const std::string& tree) {
  const std::string text = ShortenPaths(output, tree);
  std::istringstream in(text);
  std::string line, out;
  size_t lines = 0;
  bool seen = false;
  while (std::getline(in, line) && lines < 25) {
    if (!seen && line.find("error") == std::string::npos)
      continue;
    seen = true;
    if (line.rfind("make", 0) == 0 || line.rfind("gmake", 0) == 0 || line.rfind("[", 0) == 0)
      continue;
    out += line + "\n";
    ++lines;
  }
  return out.empty() ? Excerpt(text) : out;
}

HostBuild BuildHostCode(const Context& ctx, const std::string& handin) {
  HostBuild b;
  const fs::path src = fs::path(handin) / "src";
  std::vector<std::string> files;
  for (const auto& [task, names] : kTaskSources)
    for (const auto& f : names)
      if (fs::is_regular_file(src / f)) {
        if (std::find(b.tasks.begin(), b.tasks.end(), task) == b.tasks.end())
          b.tasks.push_back(task);
        files.push_back(f);
      }
  if (files.empty())
    return b;
  if (!fs::is_regular_file(fs::path(ctx.opt.suiteSource) / "CMakeLists.txt")) {
    b.log = fmt::format(
        "the suite's source tree '{}' is not there to build against; pass --suite-source DIR",
        ctx.opt.suiteSource);
    return b;
  }
  const fs::path tree = fs::path(ctx.workDir) / "suite";
  const fs::path build = fs::path(ctx.workDir) / "build";
  std::error_code ec;
  fs::remove_all(tree, ec);
  fs::remove_all(build, ec);
  try {
    fs::create_directories(tree);
    for (const char* part : {"CMakeLists.txt", "common", "src", "kernels"})
      fs::copy(fs::path(ctx.opt.suiteSource) / part, tree / part,
               fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    // Only the task sources come from the hand-in: runner, validation and reference stay the
    // suite's.
    for (const auto& f : files)
      fs::copy_file(src / f, tree / "src" / f, fs::copy_options::overwrite_existing);
  } catch (const fs::filesystem_error& e) {
    b.log = std::string("cannot copy the sources to build: ") + e.what();
    return b;
  }

  const auto start = std::chrono::steady_clock::now();
  auto left = [&] {
    return ctx.opt.buildTimeoutS -
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  auto step = [&](const std::vector<std::string>& argv, const char* what) {
    const ProcessResult p = RunProcess(argv, std::max(1.0, left()));
    if (p.exitCode == 0)
      return true;
    if (p.timedOut)
      b.log = fmt::format("{} did not finish within --build-timeout {:g} s", what,
                          ctx.opt.buildTimeoutS);
    else
      b.log = fmt::format("{} failed:\n{}", what, BuildErrors(p.out + "\n" + p.err, tree.string()));
    return false;
  };
  const std::string jobs = std::to_string(std::max(1u, std::thread::hardware_concurrency()));
  bool ok =
      step({RSB_CMAKE_COMMAND, "-S", tree.string(), "-B", build.string(),
            "-DCMAKE_BUILD_TYPE=Release", "-DRSB_BUILD_REFERENCES=OFF", "-DRSB_BUILD_TESTS=OFF"},
           "configuring the host code");
  // The hand-in's own files first: their errors come in seconds, not after the whole suite.
  for (size_t i = 0; ok && i < files.size(); ++i)
    if (files[i].size() > 4 && files[i].substr(files[i].size() - 4) == ".cpp")
      ok =
          step({RSB_CMAKE_COMMAND, "--build", build.string(), "--target", "src/" + files[i] + ".o"},
               ("compiling src/" + files[i]).c_str());
  ok = ok && step({RSB_CMAKE_COMMAND, "--build", build.string(), "--target", "reduce-scan-bench",
                   "-j", jobs},
                  "building the host code");
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  b.ok = ok;
  if (ok)
    b.binary = (build / "reduce-scan-bench").string();
  return b;
}

// ---------------------------------------------------------------------------------------------
// Grading and reports

struct ItemGrade {
  const Item* item = nullptr;
  std::string status, detail;
  std::optional<json> firstWrong;
  std::vector<CaseOutcome> cases;
  std::optional<json> speed;
  double points = 0;
};

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
std::optional<double> TimedMedian(Context& ctx, const std::string& binary,
                                  const std::string& kernels, const Item& it, std::string& why) {
  const GroupRun run = RunGroup(ctx, binary, kernels, it, it.speedCase, true);
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

ItemGrade GradeItem(Context& ctx, const Item& it, const std::string& binary,
                    const std::string& kernels, const std::string& hostError) {
  ItemGrade g;
  g.item = &it;
  if (!hostError.empty()) {
    g.status = "error";
    g.detail = "host code does not build: " + Headline(hostError) + "\n" + hostError;
    return g;
  }
  if (!fs::is_directory(kernels)) {
    g.status = "error";
    g.detail = "the hand-in has no kernels/ folder";
    return g;
  }
  std::vector<std::string> runOf;  // per case: the run it was part of
  for (const auto& group : it.groups) {
    GroupRun run = RunGroup(ctx, binary, kernels, it, group, false);
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
    ctx.referenceMs[key] = TimedMedian(ctx, ctx.suiteBinary, ctx.suiteKernels, it, why);
  std::optional<double> ref = ctx.referenceMs[key];
  std::optional<double> mine = TimedMedian(ctx, binary, kernels, it, why);
  if (ref && mine && *ref / *mine < *it.speedFloor) {
    // Below the floor: both measured once more and the best median of each counts, so that a
    // noisy moment does not cost points (and a re-run gives the same points).
    std::string again;
    if (const auto r2 = TimedMedian(ctx, ctx.suiteBinary, ctx.suiteKernels, it, again))
      ctx.referenceMs[key] = ref = std::min(*ref, *r2);
    if (const auto m2 = TimedMedian(ctx, binary, kernels, it, again))
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

std::string Points(double p) {
  return fmt::format("{:g}", p);
}

// A table cell: one line, pipes escaped.
std::string Cell(const std::string& s) {
  const std::string line = s.substr(0, s.find('\n'));
  std::string out;
  for (char c : line)
    out += c == '|' ? std::string("\\|") : std::string(1, c);
  if (out.size() > 160)
    out = out.substr(0, 157) + "...";
  return out;
}

struct HandinGrade {
  std::string name, path;
  HostBuild host;
  std::vector<ItemGrade> items;
  double total = 0, max = 0;
};

json ToJson(const Context& ctx, const HandinGrade& h) {
  json items = json::array();
  for (const auto& g : h.items) {
    json cases = json::array();
    for (const auto& c : g.cases)
      cases.push_back({{"case", c.label}, {"status", c.status}, {"message", c.message}});
    items.push_back({{"id", g.item->id},
                     {"title", g.item->title},
                     {"task", g.item->task},
                     {"variant", g.item->variant},
                     {"status", g.status},
                     {"detail", g.detail},
                     {"first_wrong", g.firstWrong ? *g.firstWrong : json()},
                     {"speed", g.speed ? *g.speed : json()},
                     {"points", g.points},
                     {"max_points", g.item->points},
                     {"cases", cases}});
  }
  json host = nullptr;
  if (!h.host.tasks.empty())
    host = {{"tasks", h.host.tasks}, {"built", h.host.ok}, {"log", h.host.log}};
  return {{"schema", "reduce-scan-bench-grade/1"},
          {"handin", h.name},
          {"path", h.path},
          {"rubric", ctx.rubric.name},
          {"rubric_file", ctx.rubric.path},
          {"seed", ctx.rubric.seed},
          {"device", ctx.deviceName},
          {"timeout_s", ctx.opt.timeoutS},
          {"host_code", host},
          {"total", h.total},
          {"max", h.max},
          {"items", items}};
}

std::string ToMarkdown(const Context& ctx, const HandinGrade& h) {
  std::string md = fmt::format("# {}: {} / {} points\n\n", h.name, Points(h.total), Points(h.max));
  md += fmt::format("Hand-in `{}`, rubric {} (`{}`), device {}, seed {}, timeout {:g} s.\n", h.path,
                    ctx.rubric.name, ctx.rubric.path, ctx.deviceName.empty() ? "?" : ctx.deviceName,
                    ctx.rubric.seed, ctx.opt.timeoutS);
  if (h.host.tasks.empty())
    md += "Host code: the suite's (the hand-in brings no task sources).\n";
  else
    md += fmt::format(
        "Host code: the hand-in's sources for {}, built against the suite's "
        "runner: {}.\n",
        Join(h.host.tasks, ", "),
        h.host.ok ? fmt::format("built in {:.0f} s", h.host.seconds) : "FAILED");
  md +=
      "\n| item | task | variant | status | detail | speed | points |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const auto& g : h.items) {
    std::string speed = "-";
    if (g.speed && g.speed->contains("ratio"))
      speed = fmt::format("{:.2f}x (floor {:g}x)", (*g.speed)["ratio"].get<double>(),
                          g.item->speedFloor.value_or(0));
    else if (g.speed)
      speed = "?";
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} / {} |\n", g.item->id, g.item->task,
                      g.item->variant, g.status, Cell(g.detail), speed, Points(g.points),
                      Points(g.item->points));
  }
  md += fmt::format("| **total** | | | | | | **{} / {}** |\n", Points(h.total), Points(h.max));
  bool header = false;
  for (const auto& g : h.items) {
    if (g.status == "passed" && g.detail.empty())
      continue;
    if (!header)
      md += "\n## Details\n";
    header = true;
    md += fmt::format("\n### {} ({})\n\n", g.item->id, g.status);
    if (g.firstWrong)
      md += fmt::format("First wrong index {}: expected {}, actual {}.\n\n",
                        (*g.firstWrong)["index"].get<size_t>(),
                        (*g.firstWrong)["expected"].get<std::string>(),
                        (*g.firstWrong)["actual"].get<std::string>());
    md += "```\n" + g.detail + (g.detail.empty() || g.detail.back() != '\n' ? "\n" : "") + "```\n";
  }
  return md;
}

void WriteFile(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
    if (!out)
      throw DeviceError(fmt::format("cannot write {}", tmp.string()));
  }
  fs::rename(tmp, path);
}

std::string SummaryCsv(const Context& ctx, const std::vector<HandinGrade>& all) {
  std::string csv = "name,total,max";
  for (const auto& it : ctx.rubric.items)
    csv += "," + it.id;
  csv += "\n";
  for (const auto& h : all) {
    std::string name = h.name;
    if (name.find_first_of(",\"\n") != std::string::npos) {
      std::string q;
      for (char c : name)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
      name = "\"" + q + "\"";
    }
    csv += fmt::format("{},{},{}", name, Points(h.total), Points(h.max));
    for (const auto& g : h.items)
      csv += "," + Points(g.points);
    csv += "\n";
  }
  return csv;
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
  ctx.suiteBinary = fs::canonical("/proc/self/exe", ec).string();
  if (ec)
    throw DeviceError("cannot find the running executable (/proc/self/exe)");
  ctx.suiteKernels = FindKernelDir("", argv[0]);
  fs::create_directories(ctx.opt.outputDir, ec);
  if (ec || !fs::is_directory(ctx.opt.outputDir))
    throw UsageError(
        fmt::format("--output-dir '{}': cannot create the folder ({}); allowed: a "
                    "writable folder",
                    ctx.opt.outputDir, ec.message()));
  std::string work = (fs::temp_directory_path() / "rsb-grade-XXXXXX").string();
  if (!::mkdtemp(work.data()))
    throw DeviceError("cannot create a temporary folder");
  ctx.workDir = work;
  InstallInterruptHandler();

  std::vector<HandinGrade> all;
  for (size_t i = 0; i < ctx.opt.handins.size() && !Interrupted(); ++i) {
    HandinGrade h;
    h.name = names[i];
    h.path = fs::absolute(ctx.opt.handins[i]).lexically_normal().string();
    if (!ctx.opt.quiet)
      std::cerr << fmt::format("[{}/{}] {}\n", i + 1, ctx.opt.handins.size(), h.name);
    h.host = BuildHostCode(ctx, h.path);
    if (!ctx.opt.quiet && !h.host.tasks.empty())
      std::cerr << fmt::format("  host code ({}): {}\n", Join(h.host.tasks, ", "),
                               h.host.ok ? "built" : "does not build");
    for (const auto& it : ctx.rubric.items) {
      if (Interrupted())
        break;
      const bool own =
          std::find(h.host.tasks.begin(), h.host.tasks.end(), it.task) != h.host.tasks.end();
      const std::string binary = own && h.host.ok ? h.host.binary : ctx.suiteBinary;
      const std::string hostError = own && !h.host.ok ? h.host.log : "";
      ItemGrade g = GradeItem(ctx, it, binary, (fs::path(h.path) / "kernels").string(), hostError);
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
    WriteFile(dir / (h.name + ".md"), ToMarkdown(ctx, h));
    WriteFile(dir / (h.name + ".json"),
              ToJson(ctx, h).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
    all.push_back(std::move(h));
    WriteFile(dir / "summary.csv", SummaryCsv(ctx, all));
  }
  fs::remove_all(ctx.workDir, ec);
  if (Interrupted()) {
    std::cerr << "interrupted: the reports of the hand-ins graded so far are written\n";
    return 130;
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
