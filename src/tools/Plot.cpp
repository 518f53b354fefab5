#include "tools/Plot.h"

#include "cli/CliChecks.h"
#include "platform/Errors.h"
#include "platform/Files.h"
#include "platform/Subprocess.h"
#include "tasks/Tasks.h"
#include "tools/ResultFile.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace fs = std::filesystem;

namespace rsb {

namespace {

constexpr const char* kPackageHint =
    "install the Debian package python3-matplotlib (`sudo apt-get install python3-matplotlib`, "
    "or `bash scripts/install-deps.sh`)";

struct PlotOptions {
  std::vector<std::string> files;
  std::string output, title;
  bool quiet = false;
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool PlotFileName(const std::string& v) {
  const std::string ext = Lower(fs::path(v).extension().string());
  return !fs::path(v).stem().empty() && (ext == ".png" || ext == ".svg");
}

PlotOptions ParsePlotOptions(int argc, char** argv, bool& help) {
  PlotOptions o;
  CLI::App app{
      "reduce-scan-bench plot: result files (`--format json`) as a figure: per task,\n"
      "throughput against n per variant (log-log) and utilisation per variant against its\n"
      "ceiling; several files overlay as devices (a line style each). A variant has one colour\n"
      "in every panel; bars: the median's 95% interval; above 100%, the table's marks (c: the\n"
      "input fits in the last-level cache, ?: suspect). Needs Python 3 with matplotlib\n"
      "(Debian: python3-matplotlib); RSB_PYTHON names the interpreter to use.",
      "reduce-scan-bench plot"};
  app.set_help_flag();
  app.add_flag("-h,--help", help, "Print this help and exit");
  app.add_option("RESULTS", o.files, "Result files (one per device or run)")->required();
  app.add_option("-o,--output", o.output, "The figure: FILE.png or FILE.svg")
      ->required()
      ->check(cli::Allowed("a file name ending in .png or .svg", PlotFileName));
  app.add_option("--title", o.title, "A title over the figure");
  app.add_flag("--quiet,-q", o.quiet, "Do not say where the figure went");
  cli::Parse(app, argc, argv, &help);
  if (help)
    std::cout << app.help();
  return o;
}

// The variants in the task tables' order, each once, comma-separated: the plot's colours and
// legend follow it.
std::string VariantOrder() {
  std::vector<std::string> names;
  for (const auto& task : MakeTasks())
    for (const auto& v : task->Variants())
      if (std::find(names.begin(), names.end(), v) == names.end())
        names.push_back(v);
  return cli::Join(names, ",");
}

// scripts/plot.py: installed beside the kernels, else in the source tree of this binary.
std::string FindPlotScript() {
  std::vector<fs::path> candidates;
  std::error_code ec;
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  if (!ec)
    candidates.push_back(exe.parent_path().parent_path() / "share" / "reduce-scan-bench" /
                         "scripts" / "plot.py");
  candidates.push_back(fs::path(RSB_SOURCE_DIR) / "scripts" / "plot.py");
  for (const auto& c : candidates)
    if (fs::is_regular_file(c, ec))
      return c.string();
  throw DeviceError(fmt::format("cannot find scripts/plot.py (looked in {} and {})",
                                candidates.front().string(), candidates.back().string()));
}

// The first interpreter that imports matplotlib: $RSB_PYTHON alone where set, else python3 on
// the PATH, then /usr/bin/python3 (Debian's, where python3-matplotlib installs, when the PATH
// leads to another Python first).
std::string FindPython() {
  std::vector<std::string> candidates;
  const char* env = std::getenv("RSB_PYTHON");
  if (env && *env)
    candidates.push_back(env);
  else
    candidates = {"python3", "/usr/bin/python3"};
  std::vector<std::string> tried;
  bool anyStarted = false;
  for (const auto& py : candidates) {
    const ProcessResult r = RunProcess({py, "-c", "import matplotlib"}, 60);
    if (r.interrupted)
      throw InterruptedError("no figure written");
    if (r.started && r.exitCode == 0)
      return py;
    const bool ran = r.started && r.exitCode != 127 && r.exitCode != 126;
    anyStarted |= ran;
    tried.push_back(fmt::format("{}: {}", py, ran ? "no matplotlib" : "not found"));
  }
  throw DeviceError(fmt::format("plot needs {} with matplotlib ({}); {}",
                                anyStarted ? "Python 3" : "python3", cli::Join(tried, "; "),
                                kPackageHint));
}

// Why a result is not drawn: its status, or what a passed one lacks.
std::string NotPlottedReason(const StoredResult& r) {
  if (r.result.status != Status::Passed)
    return ToString(r.result.status);
  return r.Timed() ? "passed without gelem_s" : "passed without a time";
}

// The results of the files that have a throughput; the others are named in a note per file
// (unless quiet): "note: a.json: 2 of 12 results not plotted (no throughput): 2 skipped".
size_t CountPlottable(const std::vector<std::string>& files, bool quiet) {
  size_t plottable = 0;
  for (const auto& path : files) {
    const ResultFile f = LoadResultFile(path, "RESULTS");
    std::map<std::string, size_t> left;
    size_t leftOut = 0;
    for (const auto& r : f.results) {
      plottable += r.HasThroughput();
      if (!r.HasThroughput()) {
        ++left[NotPlottedReason(r)];
        ++leftOut;
      }
    }
    std::vector<std::string> reasons;
    for (const auto& [reason, k] : left)
      reasons.push_back(fmt::format("{} {}", k, reason));
    if (leftOut && !quiet)
      std::cerr << fmt::format("note: {}: {} of {} results not plotted (no throughput): {}\n", path,
                               leftOut, f.results.size(), cli::Join(reasons));
  }
  return plottable;
}

// Runs scripts/plot.py on `files` into `tmp` (its extension picks PNG or SVG); DeviceError
// naming why where it fails (tmp removed).
void RunPlotScript(const std::vector<std::string>& files, const std::string& title,
                   const std::string& tmp, const std::string& option, const std::string& output) {
  const std::string script = FindPlotScript();
  const std::string python = FindPython();
  std::vector<std::string> args = {python,
                                   script,
                                   "--output",
                                   tmp,
                                   "--variant-order",
                                   VariantOrder(),
                                   "--case-fields",
                                   cli::Join(TaskFields(), ",")};
  if (!title.empty())
    args.insert(args.end(), {"--title", title});
  args.insert(args.end(), files.begin(), files.end());
  const ProcessResult r = RunProcess(args, 600);
  std::cerr << r.err;
  if (r.interrupted || Interrupted()) {  // its group killed: what it began goes too
    DiscardTemp(tmp);
    throw InterruptedError(fmt::format("{} '{}': not written", option, output));
  }
  if (!r.started || r.timedOut || r.exitCode != 0) {
    DiscardTemp(tmp);
    throw DeviceError(fmt::format("{} '{}': not written: {} {} failed: {}", option, output, python,
                                  script,
                                  !r.started   ? r.startError
                                  : r.timedOut ? std::string("still running after 600 s")
                                  : r.signal   ? SignalName(r.signal)
                                               : fmt::format("exit status {}", r.exitCode)));
  }
}

int RunPlot(int argc, char** argv) {
  // Ctrl-C or SIGTERM: plot.py's process group is killed, its file removed, exit 130.
  InstallInterruptHandler();
  bool help = false;
  const PlotOptions o = ParsePlotOptions(argc, argv, help);
  if (help) {
    CheckStdout();
    return kExitOk;
  }
  if (!CountPlottable(o.files, o.quiet))
    throw UsageError(fmt::format(
        "RESULTS: no timed result (status passed, median and gelem_s above 0) in {}; allowed: "
        "result files of timed runs (not --check)",
        cli::Join(o.files)));
  CheckOutputFile("--output", o.output);
  // plot.py writes a temporary file beside the figure, renamed over it once complete.
  const std::string tmp = TempBeside(o.output);
  RunPlotScript(o.files, o.title, tmp, "--output", o.output);
  CommitTemp("--output", tmp, o.output);
  if (!o.quiet)
    std::cerr << fmt::format("plot: wrote {}\n", o.output);
  return kExitOk;
}

}  // namespace

std::string PlotSvg(const std::vector<std::string>& files, const std::string& option,
                    const std::string& output) {
  const std::string tmp = TempBeside(fs::path(output).replace_extension(".svg").string());
  RunPlotScript(files, "", tmp, option, output);
  std::ifstream in(tmp);
  const bool opened = in.is_open();
  std::stringstream text;
  if (opened)
    text << in.rdbuf();
  DiscardTemp(tmp);
  if (!opened)
    throw DeviceError(
        fmt::format("{} '{}': the figure {} could not be read back", option, output, tmp));
  return text.str();
}

int Plot(int argc, char** argv) {
  return ExitStatusOf([&] { return RunPlot(argc, argv); });
}

}  // namespace rsb
