// What the output formats' writers (Report.h, common/report/*Writer*.cpp) share: quoting, aligned
// rows, the device lines and JSON, the results' table cells and notes.
#pragma once

#include "report/Report.h"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace rsb {

// s in double quotes, its double quotes doubled (a CSV field).
std::string CsvQuote(const std::string& s);
// s with Markdown's table and emphasis characters (| and *) escaped.
std::string MarkdownEscape(const std::string& s);
// One line of a text table: cell i left-aligned in -width[i] columns where width[i] < 0, else
// right-aligned in width[i]; a space between cells, none at the end.
std::string AlignedRow(const std::vector<int>& width, const std::vector<std::string>& cells);
// One row of a Markdown pipe table, its cells escaped.
std::string MarkdownRow(const std::vector<std::string>& cells);

std::string KindOrDash(const Result& r);
// "mask-width=5": a result's task parameters in one field ("-" without any).
std::string ParamsText(const Result& r);
// True when a result has task parameters (a convolution's mask width): the tables get a
// column for them.
bool AnyParams(const std::vector<Result>& results);

// The build that wrote a JSON document ("suite").
nlohmann::json SuiteJson();
// A device and the ceilings measured on it, as JSON's `device`.
nlohmann::json DeviceJson(const DeviceRun& run);
// {index, name, driver_version, platform}: a result's `device` where a run has several.
nlohmann::json ResultDeviceJson(const RunInfo& info, const Result& r);
// The device a result ran on (the first, should its index be out of range).
const DeviceRun& DeviceOf(const RunInfo& info, const Result& r);
// The results that ran on device d, in order.
std::vector<Result> ResultsOn(const RunInfo& info, const std::vector<Result>& results, size_t d);
// "device: NAME (PLATFORM), ...": "device 1: ..." where the run has several devices.
std::string DeviceLine(const RunInfo& info, size_t index);

// The results' table and Markdown table (TableWriter.cpp, MarkdownWriter.cpp).
// The columns, one row per result; untimed cells are "-".
extern const std::vector<std::string> kColumns;
// kColumns, and "params" where a result has task parameters.
std::vector<std::string> Columns(bool params);
// The case's identity cells (task, variant, type, op, kind, n, local), the first columns of the
// table of results and of the table of explained cases alike.
std::vector<std::string> CaseCells(const Result& r);
std::vector<std::string> Cells(const Result& r, bool params);
// "512%?": a utilisation and its mark (c: fits in the cache; ?: suspect, SetUtilisation).
std::string UtilText(double util, const char* mark);
std::string CeilingsLine(const Ceilings& c);
// Where the device's timer cannot be trusted: said once, above its cases.
std::string TimerLine(const DeviceRun& device);
// What the table's marks mean, and every case that did not pass, with its message.
// "17 passed, 0 failed" and, where there are any, ", 2 skipped, 1 error, 1 timeout, 3 untimed":
// the count a run's table ends with.
std::string CountLine(const std::vector<Result>& results);

void WriteNotes(std::ostream& out, const RunInfo& info, const DeviceRun& device,
                const std::vector<Result>& results, const std::string& bullet);

}  // namespace rsb
