// `reduce-scan-bench report`'s page (tools/Report.h): result files as one self-contained HTML
// page (no script, no link, nothing fetched): each file's device and provenance, its results'
// table (the table's cells and marks), each timed case's per-kernel breakdown, the figure as
// inline SVG (or why it was left out) and, given two files, compare's comparison. The numbers a
// reader checks carry their exact value in a data-value attribute beside the rounded text.
#pragma once

#include "report/Comparison.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace rsb {

struct PageFile {
  std::string path;
  nlohmann::json document;  // the file as read: its device and provenance fields
  // Each result with every field where the file holds them (the suite's own records), else what
  // compare reads (partial: no utilisation, marks or breakdown shown).
  std::vector<StoredResult> results;
  std::vector<bool> partial;
  std::vector<Result> Results() const;    // each result's record, in order
  std::vector<DeviceId> Devices() const;  // the devices its results ran on, each once, in order
};

struct Page {
  std::vector<PageFile> files;
  std::string svg;           // the figure (scripts/plot.py), inline
  std::string plotsLeftOut;  // why there is no figure, where there is none
  std::optional<CompareReport> comparison;
};

std::string HtmlPage(const Page& page);

// The same files as Markdown, for docs (`report --format markdown`): per file its provenance
// (path, command, revision, date, host), its device and ceilings, the results' table (the
// table's columns and marks) with every case that did not pass and the count; given two files,
// compare's comparison as `compare --format markdown` prints it. No figure, no breakdown: the
// text depends on the files alone.
std::string MarkdownPage(const Page& page);

}  // namespace rsb
