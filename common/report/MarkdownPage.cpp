#include "report/HtmlPage.h"

#include "report/ReportUtil.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

using nlohmann::json;

namespace rsb {

namespace {

// A top-level string field of a file, "" where it has none.
std::string Field(const json& o, const char* key) {
  return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : "";
}

// The file's provenance in one line: command, revision, date, host (each where recorded).
std::string ProvenanceLine(const PageFile& f) {
  const json& d = f.document;
  std::string line = "`" + f.path + "`";
  if (!Field(d, "command").empty())
    line += ": `" + Field(d, "command") + "`";
  std::vector<std::string> parts;
  if (d.contains("suite") && d["suite"].is_object() && !Field(d["suite"], "git_revision").empty())
    parts.push_back("revision " + Field(d["suite"], "git_revision"));
  if (!Field(d, "date").empty())
    parts.push_back(Field(d, "date"));
  if (!Field(d, "host").empty())
    parts.push_back("host " + MarkdownEscape(Field(d, "host")));
  for (size_t i = 0; i < parts.size(); ++i)
    line += (i ? ", " : "; ") + parts[i];
  return line;
}

// The file's device as its results name it (the first, where there are several; the table then
// has a device column), and the ceilings where measured.
std::string DeviceText(const PageFile& f) {
  std::string text = f.results.empty() ? "no results" : MarkdownEscape(f.results[0].device.Label());
  const json& d = f.document;
  if (!d.contains("device") || !d["device"].contains("ceilings"))
    return text;
  const json& c = d["device"]["ceilings"];
  auto gbs = [&](const char* key) {
    return c.contains(key) && c[key].is_number() ? c[key].get<double>() : 0.0;
  };
  const double read = gbs("read_gbytes_s"), write = gbs("write_gbytes_s"),
               copy = gbs("copy_gbytes_s");
  if (read > 0 || write > 0 || copy > 0)
    text +=
        fmt::format("; ceilings read {:.0f}, write {:.0f}, copy {:.0f} GB/s", read, write, copy);
  return text;
}

// The results' table: the table's columns and cells (a device column where there are several),
// then every case that did not pass and the count line.
void WriteResults(std::ostream& out, const PageFile& f) {
  const std::vector<Result> results = f.Results();
  const bool params = AnyParams(results), several = f.Devices().size() > 1;
  std::vector<std::string> columns = Columns(params);
  if (!params)
    columns.pop_back();  // the params column, empty without any
  if (several)
    columns.insert(columns.begin(), "device");
  out << MarkdownRow(columns) << "|";
  const size_t first = several ? 1 : 0;  // the numbers: n, local, median ms .. launches
  for (size_t i = 0; i < columns.size(); ++i)
    out << (i < first + 5 || i == first + 7 || i == first + kColumns.size() ? "---|" : "--:|");
  out << "\n";
  for (const auto& s : f.results) {
    std::vector<std::string> cells = Cells(s.result, params);
    if (!params)
      cells.pop_back();
    if (several)
      cells.insert(cells.begin(), s.device.Label());
    out << MarkdownRow(cells);
  }
  out << "\n";
  for (const auto& s : f.results)
    if (s.result.status != Status::Passed && s.result.status != Status::Untimed)
      out << "- " << ToString(s.result.status) << " " << MarkdownEscape(s.Label()) << ": "
          << MarkdownEscape(s.result.message) << "\n";
  const size_t partial = size_t(std::count(f.partial.begin(), f.partial.end(), true));
  if (partial)
    out << fmt::format(
        "- {} of {} results lack fields this version writes (an older or edited "
        "file): their utilisation and marks are not shown\n",
        partial, f.results.size());
  out << "- " << CountLine(results) << "\n";
}

}  // namespace

std::string MarkdownPage(const Page& page) {
  std::ostringstream out;
  for (size_t i = 0; i < page.files.size(); ++i) {
    if (i)
      out << "\n";
    out << ProvenanceLine(page.files[i]) << "  \n" << DeviceText(page.files[i]) << "\n\n";
    WriteResults(out, page.files[i]);
  }
  if (page.comparison) {
    out << "\n";
    MakePrinter(OutputFormat::Markdown)->Compare(out, *page.comparison);
  }
  return out.str();
}

}  // namespace rsb
