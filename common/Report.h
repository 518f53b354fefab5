// Reporting: the human table, CSV and JSON, all written from the same Result records.
#pragma once

#include "CLUtil.h"
#include "Runner.h"

#include <nlohmann/json.hpp>

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace rsb {

struct RunInfo {
  DeviceInfo device;
  // Provenance: this build, the host, the kernel files read (hashes) and how it was timed.
  std::string host;
  std::map<std::string, std::string> kernelHashes;
  bool cold = false;
  double ciTarget = 0;
  Ceilings ceilings;    // the memory ceilings measured for this run (not for --check)
  std::string command;  // the command line, for the record
  std::string date;     // ISO 8601, UTC
  std::string kernelDir;
};

// One result as a JSON object (the objects of WriteJson's "results"), and back: how a worker
// process hands its results to the run that started it.
nlohmann::json ResultToJson(const Result& r);
Result ResultFromJson(const nlohmann::json& j);

// breakdown: each timed case's per-kernel breakdown in indented lines under it (--breakdown).
void WriteTable(std::ostream& out, const RunInfo& info, const std::vector<Result>& results,
                bool breakdown = false);
void WriteCsv(std::ostream& out, const RunInfo& info, const std::vector<Result>& results);
void WriteJson(std::ostream& out, const RunInfo& info, const std::vector<Result>& results);
// The table as Markdown (a pipe table under a device line): for READMEs, issues, reports.
void WriteMarkdown(std::ostream& out, const RunInfo& info, const std::vector<Result>& results);

}  // namespace rsb
