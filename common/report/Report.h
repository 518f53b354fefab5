// Reporting: the human table, CSV, JSON and Markdown, all written from the same Result records,
// and the same four for --explain. The interface is the eight Write* functions below, one writer
// per format, each in its own file (common/report/TableWriter.cpp, CsvWriter.cpp, JsonWriter.cpp,
// MarkdownWriter.cpp, and ExplainWriters.cpp for the four of --explain); what they share is in
// ReportUtil.{h,cpp}.
#pragma once

#include "engine/Explain.h"
#include "engine/Runner.h"
#include "platform/CLUtil.h"

#include <nlohmann/json.hpp>

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace rsb {

// One device of a run: what it is, and the memory ceilings measured on it for this run (not for
// --check).
struct DeviceRun {
  DeviceInfo info;
  Ceilings ceilings;
};

struct RunInfo {
  // The devices the run ran on, in order (several with --device all or a list); Result::device
  // is an index into it.
  std::vector<DeviceRun> devices;
  // Provenance: this build, the host, the kernel files read (hashes) and how it was timed.
  std::string host;
  std::map<std::string, std::string> kernelHashes;
  bool cold = false;
  double ciTarget = 0;
  std::string command;  // the command line, for the record
  std::string date;     // ISO 8601, UTC
  std::string kernelDir;
};

// Where there are several devices, every output says which device each result ran on: the table
// and Markdown a section per device, CSV its device columns per row, JSON a `devices` array
// beside `device` (the first) and a `device` object ({index, name, driver_version, platform}) in
// every result. One device: as before (no `devices`, no result `device`).
//
// breakdown: each timed case's per-kernel breakdown in indented lines under it (--breakdown).
void WriteTable(std::ostream& out, const RunInfo& info, const std::vector<Result>& results,
                bool breakdown = false);
void WriteCsv(std::ostream& out, const RunInfo& info, const std::vector<Result>& results);
void WriteJson(std::ostream& out, const RunInfo& info, const std::vector<Result>& results);
// The table as Markdown (a pipe table under a device line): for READMEs, issues, reports.
void WriteMarkdown(std::ostream& out, const RunInfo& info, const std::vector<Result>& results);

// --explain (Explain.h): the same four formats, a row (a result object, in JSON) per case and a
// legend of the course's terms. JSON: {"schema": "reduce-scan-bench-explain/1", suite, date,
// host, command, device (and devices), legend, scale, growth_limit, cases}; CSV: one row per
// case, the device first as in the results' CSV.
void WriteExplainTable(std::ostream& out, const RunInfo& info,
                       const std::vector<Explanation>& cases);
void WriteExplainCsv(std::ostream& out, const RunInfo& info, const std::vector<Explanation>& cases);
void WriteExplainJson(std::ostream& out, const RunInfo& info,
                      const std::vector<Explanation>& cases);
void WriteExplainMarkdown(std::ostream& out, const RunInfo& info,
                          const std::vector<Explanation>& cases);

}  // namespace rsb
