#include "run/Output.h"

#include "platform/Errors.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <unistd.h>

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
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path_);
  // A folder passes the access check below, and the run would end in a failed rename with
  // every result lost: refused before any case runs.
  if (fs::is_directory(p, ec))
    throw UsageError(fmt::format("--output '{}': is a folder; allowed: a file path", path_));
  special_ = fs::exists(p, ec) && !fs::is_regular_file(p, ec);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  const bool ok = special_ || fs::exists(p, ec) ? access(path_.c_str(), W_OK) == 0
                                                : access(dir.c_str(), W_OK | X_OK) == 0;
  if (!ok)
    throw DeviceError(
        fmt::format("--output '{}': cannot write there: {}", path_, std::strerror(errno)));
}

void ReportOutput::Write(const RunInfo& info, const std::vector<Result>& results, bool final) {
  Write([&](std::ostream& out) { printer_->Results(out, info, results); }, final);
}

void ReportOutput::Write(const RunInfo& info, const std::vector<Explanation>& cases) {
  Write([&](std::ostream& out) { printer_->Explain(out, info, cases); }, /*final=*/true);
}

void ReportOutput::Write(const std::function<void(std::ostream&)>& write, bool final) {
  if (path_.empty() || special_) {
    if (!final)
      return;
    std::ofstream file;
    if (special_)
      file.open(path_);
    std::ostream& out = special_ ? file : std::cout;
    write(out);
    out.flush();
    if (!out)
      throw DeviceError(fmt::format("writing the report to {} failed: {}",
                                    special_ ? "'" + path_ + "'" : "stdout", std::strerror(errno)));
    return;
  }
  const std::string tmp = fmt::format("{}.{}.tmp", path_, getpid());
  std::ofstream file(tmp, std::ios::trunc);
  write(file);
  file.flush();
  file.close();
  std::error_code ec;
  if (!file || (std::filesystem::rename(tmp, path_, ec), ec)) {
    const std::string why = ec ? ec.message() : std::strerror(errno);
    std::filesystem::remove(tmp, ec);
    throw DeviceError(fmt::format("--output '{}': writing failed: {}", path_, why));
  }
}

}  // namespace rsb
