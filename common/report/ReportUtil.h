// What the printers (Report.h; one per format, common/report/*Writer.cpp) share: quoting, aligned
// rows, the device lines and JSON, the results' table cells and notes, --explain's columns and
// legend (ExplainUtil.cpp), compare's cells and summary (CompareUtil.cpp); and each format's
// printer, for the factory (Printer.cpp).
#pragma once

#include "report/Report.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace rsb {

// s in double quotes, its double quotes doubled (a CSV field).
std::string CsvQuote(const std::string& s);
// s with Markdown's table and emphasis characters (| and *) escaped.
std::string MarkdownEscape(const std::string& s);
// Text for an HTML or XML element or attribute: & < > " ' as character references, and the
// control characters XML 1.0 forbids (all below 0x20 but tab, line feed, return) as '?'.
std::string EscapeMarkup(const std::string& text);

// One line of a text table: cell i left-aligned in -width[i] columns where width[i] < 0, else
// right-aligned in width[i]; a space between cells, none at the end.
std::string AlignedRow(const std::vector<int>& width, const std::vector<std::string>& cells);
// One row of a Markdown pipe table, its cells escaped.
std::string MarkdownRow(const std::vector<std::string>& cells);

// "exclusive": the values of a result's fields (FieldsText), "-" without any: the tables' `kind`.
std::string KindOrDash(const Result& r);
// "scan_kind,": a CSV column per field (RunInfo::fields), each followed by a comma.
std::string FieldColumns(const std::vector<std::string>& fields);
// "exclusive,": a result's value of each of those fields ("" where it has none; quoted where it
// holds a comma, a quote or a line break), each followed by a comma.
std::string FieldCells(const Result& r, const std::vector<std::string>& fields);
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
// Which clock timed the device's cases and ceilings (and why, where its own timer cannot be
// trusted): said once, above its cases, in any timed run.
std::string TimerLine(const DeviceRun& device);
// What the table's marks mean, and every case that did not pass, with its message.
// "17 passed, 0 failed" and, where there are any, ", 2 skipped, 1 error, 1 timeout, 3 untimed":
// the count a run's table ends with.
std::string CountLine(const std::vector<Result>& results);

void WriteNotes(std::ostream& out, const RunInfo& info, const DeviceRun& device,
                const std::vector<Result>& results, const std::string& bullet);

// --explain's table and Markdown table (ExplainUtil.cpp).
// The course's terms, as the explain outputs print them (the table and Markdown under the
// table, JSON in "legend").
const std::vector<std::pair<std::string, std::string>>& ExplainLegend();
extern const char* const kExplainTitle;
// The explain table's columns and one case's cells (numbers "-" for a skipped case).
std::vector<std::string> ExplainColumns(bool params);
std::vector<std::string> ExplainCells(const Explanation& e, bool params);
// The cases explained on device d, in order.
std::vector<Explanation> ExplanationsOn(const RunInfo& info, const std::vector<Explanation>& all,
                                        size_t d);
bool AnyParams(const std::vector<Explanation>& cases);
// Skipped cases, one line each; then, once, the variants whose plans count fewer steps than
// their work needs (their cases' message in CSV and JSON).
void WriteExplainNotes(std::ostream& out, const std::vector<Explanation>& cases,
                       const std::string& bullet);

// compare's report (CompareUtil.cpp).
// "5%": a fraction as a percentage.
std::string PercentText(double fraction);
// Four significant digits, never in exponent form (an H100 case takes 0.00004683 ms).
std::string MsText(double v);
// "[0.1200, 0.1300]": the median's 95% interval; "-" without one.
std::string CiText(const StoredResult& r);
// The median, or the status of a case not timed.
std::string MedianText(const StoredResult& r);
// A side's median that the ratio uses (CaseComparison::baseMedian, newMedian), else MedianText;
// its 95% interval ("-" without one), else CiText.
std::string JudgedMsText(const CaseComparison& c, bool fresh);
std::string JudgedCiText(const CaseComparison& c, bool fresh);
// The note, after what else defines the case where it has more than n (an image's shape, a
// task's parameters: "4096x4096 mask-width=5").
std::string NoteWithExtra(const CaseComparison& c);
// "256", or "256/128" where the two files differ in the local size.
std::string LocalText(const CaseComparison& c);
// "1.250x"; "-" where a side was not timed.
std::string RatioText(const CaseComparison& c);
// "NAME, driver V (PLATFORM); ...".
std::string DeviceList(const std::vector<DeviceId>& devices);
// " on <device>" for a case in one file only, where the device is part of the match and the
// files do not hold the same one device.
std::string OnDevice(const StoredResult& r, const CompareReport& report);
struct CompareSummary {
  size_t faster = 0, slower = 0, same = 0, unknown = 0, untimed = 0, regressions = 0, timed = 0;
  double geomean = 0;  // of the throughput ratios of the cases timed in both
};
CompareSummary SummariseComparison(const Comparison& c);
// "6 matched cases: 0 faster, ...": the line a comparison ends with.
std::string CompareSummaryLine(const Comparison& c, const CompareSettings& settings);
extern const char* const kRatioMeaning;
// Which medians BASE ms and NEW ms are, and how faster, slower and a regression are decided, for
// the bases of the comparison's rows.
std::string CompareRule(const Comparison& c, const CompareSettings& s);

// Each format's printer (MakePrinter chooses).
std::unique_ptr<Printer> MakeTablePrinter(const PrinterOptions& options);
std::unique_ptr<Printer> MakeCsvPrinter(const PrinterOptions& options);
std::unique_ptr<Printer> MakeJsonPrinter(const PrinterOptions& options);
std::unique_ptr<Printer> MakeMarkdownPrinter(const PrinterOptions& options);

}  // namespace rsb
