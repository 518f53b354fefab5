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
                               CaseLabel(NewResult(UnresolvedCase(*p.job->task, p.variant, s),
                                                   DeviceInfo())))
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

ReportOutput::ReportOutput(std::string path, std::unique_ptr<Printer> printer) {
  if (path.empty())
    places_.push_back({"stdout", "", std::move(printer)});
  else
    Add("--output", std::move(path), std::move(printer));
}

void ReportOutput::Add(const std::string& option, std::string path,
                       std::unique_ptr<Printer> printer) {
  // A folder, or a place that refuses the temporary file, is refused before any case runs
  // rather than after the first one with every result lost.
  CheckOutputFile(option, path);
  std::error_code ec;
  const bool special =
      std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec);
  places_.push_back({option, std::move(path), std::move(printer), special});
}

void ReportOutput::Write(const RunInfo& info, const std::vector<Result>& results, bool final) {
  Write([&](const Printer& p, std::ostream& out) { p.Results(out, info, results); }, final);
}

void ReportOutput::Write(const RunInfo& info, const std::vector<Explanation>& cases) {
  Write([&](const Printer& p, std::ostream& out) { p.Explain(out, info, cases); },
        /*final=*/true);
}

void ReportOutput::Write(const std::function<void(const Printer&, std::ostream&)>& write,
                         bool final) {
  for (const Place& place : places_) {
    if (place.path.empty()) {
      if (!final)
        continue;
      write(*place.printer, std::cout);
      std::cout.flush();
      if (!std::cout)
        throw DeviceError(
            fmt::format("writing the report to stdout failed: {}", std::strerror(errno)));
    } else if (!place.special || final) {
      WriteWhole(place.option, place.path, [&](std::ostream& out) { write(*place.printer, out); });
    }
  }
}

}  // namespace rsb
