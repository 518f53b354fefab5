#include "tools/Report.h"

#include "cli/CliChecks.h"
#include "platform/Errors.h"
#include "platform/Files.h"
#include "platform/Subprocess.h"
#include "report/HtmlPage.h"
#include "tasks/Tasks.h"
#include "tools/Compare.h"
#include "tools/Plot.h"
#include "tools/ResultFile.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;

namespace rsb {

namespace {

struct ReportOptions {
  std::vector<std::string> files;
  std::string output;
  std::string format = "html";
  bool quiet = false;
};

bool FileNameEndingIn(const std::string& v, const char* wanted) {
  std::string ext = fs::path(v).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return !fs::path(v).stem().empty() && ext == wanted;
}

// --format markdown: the page on stdout, or in FILE.md; html: in FILE.html, which it needs.
void CheckOutputName(const ReportOptions& o) {
  if (o.format == "markdown") {
    if (!o.output.empty() && !FileNameEndingIn(o.output, ".md"))
      throw UsageError(
          fmt::format("--output: '{}': not allowed with --format markdown; allowed: "
                      "a file name ending in .md, or none (stdout)",
                      o.output));
  } else if (o.output.empty()) {
    throw UsageError("--output is required");
  } else if (!FileNameEndingIn(o.output, ".html")) {
    throw UsageError(
        fmt::format("--output: '{}': not allowed; allowed: a file name ending in .html", o.output));
  }
}

ReportOptions ParseReportOptions(int argc, char** argv, bool& help) {
  ReportOptions o;
  CLI::App app{
      "reduce-scan-bench report: result files (`--format json`) as one self-contained HTML\n"
      "page (no script, nothing fetched): per file its device and provenance (build, date,\n"
      "host, command, ceilings, timer), its results' table with the table's marks, and each\n"
      "timed case's per-kernel breakdown; the figure of `plot` inline (SVG; left out, saying\n"
      "why, without Python 3 and matplotlib); given exactly two files, `compare`'s comparison\n"
      "of the second (NEW) against the first (BASE), at its default --threshold 5%.\n"
      "With --format markdown: the same files as Markdown on stdout (or -o FILE.md), for docs:\n"
      "per file its provenance (command, revision, date, host), device and ceilings, the\n"
      "results' table and the cases that did not pass; given two files, the comparison as\n"
      "`compare --format markdown` prints it; no figure, no breakdown.",
      "reduce-scan-bench report"};
  app.set_help_flag();
  app.add_flag("-h,--help", help, "Print this help and exit");
  app.add_option("RESULTS", o.files, "Result files (one per device or run)")->required();
  app.add_option(
      "-o,--output", o.output,
      "The page: FILE.html (required); with --format markdown FILE.md (default: stdout)");
  app.add_option("--format", o.format, "html (default) or markdown")
      ->check(cli::OneOf({"html", "markdown"}, false));
  app.add_flag("--quiet,-q", o.quiet, "Do not say where the page went");
  cli::Parse(app, argc, argv, &help);
  if (help)
    std::cout << app.help();
  else
    CheckOutputName(o);
  return o;
}

// A file's results with every field where it holds them (ResultFromJson: the suite's own
// record), else as compare reads them, marked partial.
PageFile ReadPageFile(const ResultFile& f) {
  PageFile p{f.path, f.document, f.results, {}};
  const auto& raw = f.document.at("results");
  const std::vector<std::string> fields = TaskFields();
  for (size_t i = 0; i < p.results.size(); ++i) {
    bool partial = false;
    try {
      p.results[i].result = ResultFromJson(raw.at(i), fields);
    } catch (const std::exception&) {
      partial = true;
      Result& r = p.results[i].result;  // timed cells need an iteration count
      r.iterations = raw.at(i).value("iterations", size_t(p.results[i].Timed() ? 1 : 0));
      r.ciMet = p.results[i].CiMet().value_or(true);  // unrecorded: no "*" claimed
    }
    p.partial.push_back(partial);
  }
  return p;
}

// The figure, or why there is none (said on stderr too, unless quiet).
void AddFigure(Page& page, const ReportOptions& o) {
  const bool any = std::any_of(page.files.begin(), page.files.end(), [](const PageFile& f) {
    return std::any_of(f.results.begin(), f.results.end(),
                       [](const StoredResult& r) { return r.HasThroughput(); });
  });
  if (!any) {
    page.plotsLeftOut = "no timed result (status passed, median and gelem_s above 0)";
  } else {
    try {
      page.svg = PlotSvg(o.files, "--output", o.output);
    } catch (const DeviceError& e) {
      page.plotsLeftOut = e.what();
    }
  }
  if (!page.plotsLeftOut.empty() && !o.quiet)
    std::cerr << "note: report: plots left out: " << page.plotsLeftOut << "\n";
}

int WriteMarkdown(const Page& page, const ReportOptions& o) {
  const std::string text = MarkdownPage(page);
  if (o.output.empty()) {
    std::cout << text << std::flush;
    return kExitOk;
  }
  WriteWhole("--output", o.output, text);
  if (!o.quiet)
    std::cerr << fmt::format("report: wrote {}\n", o.output);
  return kExitOk;
}

int RunReport(int argc, char** argv) {
  // Ctrl-C or SIGTERM: the figure's plot.py is killed with its file (PlotSvg), nothing written,
  // exit 130.
  InstallInterruptHandler();
  bool help = false;
  const ReportOptions o = ParseReportOptions(argc, argv, help);
  if (help) {
    CheckStdout();
    return kExitOk;
  }
  std::vector<ResultFile> files;
  for (const auto& path : o.files)
    files.push_back(LoadResultFile(path, "RESULTS"));
  if (!o.output.empty())
    CheckOutputFile("--output", o.output);
  else
    CheckStdout();
  Page page;
  for (const auto& f : files)
    page.files.push_back(ReadPageFile(f));
  if (files.size() == 2) {
    files[0].role = "BASE";
    files[1].role = "NEW";
    page.comparison = CompareTwoFiles(files[0], files[1], CompareSettings{});
  }
  if (o.format == "markdown")
    return WriteMarkdown(page, o);
  AddFigure(page, o);
  if (Interrupted())
    throw InterruptedError(fmt::format("--output '{}': not written", o.output));
  WriteWhole("--output", o.output, HtmlPage(page));
  if (!o.quiet)
    std::cerr << fmt::format("report: wrote {}\n", o.output);
  return kExitOk;
}

}  // namespace

int Report(int argc, char** argv) {
  return ExitStatusOf([&] { return RunReport(argc, argv); });
}

}  // namespace rsb
