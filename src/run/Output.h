// Where the benchmark run's report and progress go: the report in --format to --output (a file
// rewritten whole after every case, so that it is a complete document whatever happens next) or
// stdout, and in other formats to files of their own (--json FILE, ...); progress on stderr.
#pragma once

#include "cli/Cli.h"
#include "engine/Runner.h"
#include "report/Report.h"

#include <functional>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace rsb {

// Each distinct kernel build log of a run, shown once: under the progress line of the first
// case whose kernel it failed, or at the end of a run that showed no progress.
class BuildLogs {
 public:
  explicit BuildLogs(bool verbose) : verbose_(verbose) {}
  // The result's build log as shown (with the kernel's build options where verbose), the first
  // time it is asked for; "" after that, and for a result without one.
  std::string Once(const Result& r);

 private:
  bool verbose_;
  std::set<std::string> shown_;
};

// A line per case on stderr: "[  3/12] reduction/... passed, 0.1234 ms, 1.23 Gelem/s"; a
// kernel build log the first time a case fails on it.
ProgressFn StderrProgress(BuildLogs& logs);

// Where the report goes, written by the run's printers (report/Report.h): the report of --format
// to --output or stdout, and each of --json, --csv, --markdown FILE to its file. A regular file
// (or a new one) is rewritten after every case through a temporary file and a rename, so that it
// is a complete document whatever happens next; stdout and special files (/dev/null, a pipe) get
// the report once, at the end. Whether each place can be written is checked when it is added,
// before any case runs; a write that fails is a DeviceError (exit 3) naming the reason.
class ReportOutput {
 public:
  // The report: to path (--output), or stdout where it is empty.
  ReportOutput(std::string path, std::unique_ptr<Printer> printer);
  // A report to a file of its own as well (--json FILE): `option` names it in messages.
  void Add(const std::string& option, std::string path, std::unique_ptr<Printer> printer);
  // The results so far (final: the last time).
  void Write(const RunInfo& info, const std::vector<Result>& results, bool final);
  // --explain's cases, once.
  void Write(const RunInfo& info, const std::vector<Explanation>& cases);
  // The report is the table on stdout: a person reads it there, beside the progress lines.
  bool ForTerminal() const {
    return places_.front().path.empty() && places_.front().printer->ForTerminal();
  }

 private:
  struct Place {
    std::string option, path;  // path empty: stdout
    std::unique_ptr<Printer> printer;
    bool special = false;  // a special file: written once, at the end
  };
  void Write(const std::function<void(const Printer&, std::ostream&)>& write, bool final);

  std::vector<Place> places_;  // the first: --output's or stdout
};

}  // namespace rsb
