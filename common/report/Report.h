// Reporting: one printer interface (Printer) over the one result record (engine/Result.h), for a
// run's results, --explain's cases and compare's comparison, one printer per format (table, CSV,
// JSON, Markdown), made by MakePrinter: the one place a format is named, read and chosen
// (Printer.cpp). Each printer is in its format's file (common/report/TableWriter.cpp,
// CsvWriter.cpp, JsonWriter.cpp, MarkdownWriter.cpp); what they share is in ReportUtil.{h,cpp},
// ExplainUtil.cpp (--explain's columns and legend) and CompareUtil.cpp (compare's cells and
// summary).
#pragma once

#include "engine/Explain.h"
#include "engine/Runner.h"
#include "platform/CLUtil.h"
#include "report/Comparison.h"

#include <map>
#include <memory>
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
  size_t repetitions = 1;  // --repetitions: rounds of the selection
  std::string command;     // the command line, for the record
  std::string date;        // ISO 8601, UTC
  std::string kernelDir;
  // The fields of the tasks' parameters (FieldParams): the CSV's columns after `op`, every one
  // whatever tasks ran, and the fields a results file's reader looks for.
  std::vector<std::string> fields;
};

enum class OutputFormat { Table, Csv, Json, Markdown };

// The names --format takes ("table", "csv", "json", "markdown"), the default first.
const std::vector<std::string>& FormatNames();
// The format without --format: the table.
OutputFormat DefaultFormat();
// "table, csv, json or markdown": the names as --help lists them.
std::string FormatList();
// The format a name (any case) names. Throws UsageError naming `option`, the value and what is
// allowed, as the command line's checks word it: "--format: 'xml': not allowed; allowed: table,
// csv, json, markdown".
OutputFormat ParseFormat(const std::string& name, const std::string& option = "--format");

// One line of --list-variants: a task's variant, in its table's order, with its kernel file
// (kernels/FILE) and the table's one-line description.
struct VariantListing {
  std::string task, variant, file, description;
};

struct PrinterOptions {
  // --breakdown: each timed case's per-kernel breakdown under it (the table; CSV and JSON always
  // carry it).
  bool breakdown = false;
};

// Every report of the suite, in one format. Where there are several devices, every output says
// which device each result ran on: the table and Markdown a section per device, CSV its device
// columns per row, JSON a `devices` array beside `device` (the first) and a `device` object
// ({index, name, driver_version, platform}) in every result. One device: no `devices`, no result
// `device`.
class Printer {
 public:
  virtual ~Printer() = default;
  // A run's results (JSON: schema reduce-scan-bench/1, docs/result-schema.json).
  virtual void Results(std::ostream& out, const RunInfo& info,
                       const std::vector<Result>& results) const = 0;
  // --explain (engine/Explain.h): a row (a result object, in JSON) per case and a legend of the
  // course's terms. JSON: {"schema": "reduce-scan-bench-explain/1", suite, date, host, command,
  // device (and devices), legend, scale, growth_limit, cases} (docs/explain-schema.json); CSV:
  // one row per case, the device first as in the results' CSV.
  virtual void Explain(std::ostream& out, const RunInfo& info,
                       const std::vector<Explanation>& cases) const = 0;
  // `compare`: a row per case in both files, the cases in one only, the notes and the summary
  // (JSON: schema reduce-scan-bench-compare/1).
  virtual void Compare(std::ostream& out, const CompareReport& report) const = 0;
  // --list-variants: every task's variants in table order. Table: `task variant description`
  // lines; Markdown: the README's variant table; CSV: task,variant,file,description; JSON:
  // {"schema": "reduce-scan-bench-variants/1", "variants": [{task, variant, file, description}]}.
  virtual void Variants(std::ostream& out, const std::vector<VariantListing>& rows) const = 0;
  // A report for a person at the terminal (the table), read beside the progress lines: a run that
  // prints it to stdout does not list its failures on stderr again, the report has them.
  virtual bool ForTerminal() const { return false; }
};

// The printer of a format.
std::unique_ptr<Printer> MakePrinter(OutputFormat format, const PrinterOptions& options = {});

}  // namespace rsb
