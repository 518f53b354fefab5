#include "run/Output.h"

#include "platform/Errors.h"
#include "platform/Files.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace rsb {

std::string BuildLogs::Once(const Result& r) {
  if (r.buildLog.empty() || !shown_.insert(r.buildLog).second)
    return "";
  std::string text = r.buildLog;
  if (!text.empty() && text.back() != '\n')
    text += '\n';
  return verbose_ ? fmt::format("kernel build options: {}\n{}", r.kernelOptions, text) : text;
}

ProgressFn StderrProgress(BuildLogs& logs) {
  return [&logs](const Progress& p) {
    const ProblemSpec& s = p.job->spec;
    if (!p.result) {
      std::cerr << fmt::format("[{:>3}/{}] {} ... ", p.index, p.total,
                               CaseLabel(NewResult(*p.job->task, p.variant, s, DeviceInfo())))
                << std::flush;
    } else if (p.result->status == Status::Passed && p.result->iterations) {
      std::cerr << fmt::format("passed, {:.4f} ms, {:.2f} Gelem/s\n", p.result->timeMs.median,
                               p.result->gelemS);
    } else if (p.result->status == Status::Error || p.result->status == Status::Timeout) {
      std::cerr << ToString(p.result->status) << ": " << p.result->message << "\n"
                << logs.Once(*p.result);
    } else {
      std::cerr << ToString(p.result->status) << "\n";
    }
  };
}

ReportOutput::ReportOutput(std::string path, std::unique_ptr<Printer> printer)
    : path_(std::move(path)), printer_(std::move(printer)) {
  if (path_.empty())
    return;
  // A folder, or a place that refuses the temporary file, is refused before any case runs
  // rather than after the first one with every result lost.
  CheckOutputFile("--output", path_);
  std::error_code ec;
  special_ = std::filesystem::exists(path_, ec) && !std::filesystem::is_regular_file(path_, ec);
}

void ReportOutput::Write(const RunInfo& info, const std::vector<Result>& results, bool final) {
  Write([&](std::ostream& out) { printer_->Results(out, info, results); }, final);
}

void ReportOutput::Write(const RunInfo& info, const std::vector<Explanation>& cases) {
  Write([&](std::ostream& out) { printer_->Explain(out, info, cases); }, /*final=*/true);
}

void ReportOutput::Write(const std::function<void(std::ostream&)>& write, bool final) {
  if (path_.empty()) {
    if (!final)
      return;
    write(std::cout);
    std::cout.flush();
    if (!std::cout)
      throw DeviceError(
          fmt::format("writing the report to stdout failed: {}", std::strerror(errno)));
    return;
  }
  if (special_ && !final)
    return;
  WriteWhole("--output", path_, write);
}

}  // namespace rsb
