// Where the benchmark run's report and progress go: the report in --format to --output (a file
// rewritten whole after every case, so that it is a complete document whatever happens next) or
// stdout, progress on stderr.
#pragma once

#include "cli/Cli.h"
#include "engine/Runner.h"
#include "report/Report.h"

#include <functional>
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

// The results in one format.
void WriteReport(std::ostream& out, OutputFormat format, bool breakdown, const RunInfo& info,
                 const std::vector<Result>& results);

// Where the report goes. A regular file (or a new one) is rewritten after every case through a
// temporary file and a rename, so that it is a complete document whatever happens next; stdout
// and special files (/dev/null, a pipe) get the report once, at the end. Whether the place can
// be written is checked when this is made, before any case runs; a write that fails is a
// DeviceError (exit 3) naming the reason.
class ReportOutput {
 public:
  ReportOutput(std::string path, OutputFormat format, bool breakdown);
  void Write(const RunInfo& info, const std::vector<Result>& results, bool final);
  // Any document, written by `write`.
  void Write(const std::function<void(std::ostream&)>& write, bool final);

 private:
  std::string path_;
  OutputFormat format_;
  bool breakdown_;
  bool special_ = false;
};

}  // namespace rsb
