#include "report/HtmlPage.h"

#include "report/ReportUtil.h"

#include <fmt/format.h>

#include <algorithm>

using nlohmann::json;

namespace rsb {

namespace {

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:1.5em;max-width:90em}"
    "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;"
    "text-align:left}td.n{text-align:right}th{background:#f3f3f3}"
    ".slower{background:#fbe3e3}.faster{background:#e3f4e3}.left-out{color:#a33}"
    "code{background:#f3f3f3;padding:0 .2em}svg{max-width:100%;height:auto}"
    "details{margin:.3em 0}";

std::string E(const std::string& s) {
  return EscapeMarkup(s);
}

// A number as the JSON holds it: the shortest text that reads back as the same double.
std::string Exact(double v) {
  return fmt::format("{}", v);
}

// A JSON value as text: strings bare, the rest as JSON.
std::string Text(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// Rows of name and value: a JSON object's fields, nested objects as name.field.
std::string FieldRows(const json& o, const std::string& prefix) {
  std::string h;
  for (const auto& [key, value] : o.items()) {
    if (value.is_object() && !value.empty()) {
      h += FieldRows(value, prefix + key + ".");
      continue;
    }
    if (value.is_array())
      continue;
    h += fmt::format("<tr><th>{}</th><td data-field=\"{}\">{}</td></tr>\n", E(prefix + key),
                     E(prefix + key), E(Text(value)));
  }
  return h;
}

// The file's device and provenance: every field of its device object (ceilings, timer) and its
// top-level fields but the results (the build, date, host, command, kernels).
std::string Provenance(const PageFile& f) {
  json top = json::object(), device = json::object();
  for (const auto& [key, value] : f.document.items())
    if (key == "device")
      device = value;
    else if (key != "results" && key != "devices")
      top[key] = value;
  std::string h =
      "<h3>Device</h3>\n<table class=\"device\">\n" + FieldRows(device, "") + "</table>\n";
  if (f.document.contains("devices") && f.document["devices"].is_array())
    for (const auto& d : f.document["devices"])
      h += "<table class=\"device\">\n" + FieldRows(d, "") + "</table>\n";
  return h + "<h3>Provenance</h3>\n<table class=\"provenance\">\n" + FieldRows(top, "") +
         "</table>\n";
}

// The exact value behind a column of the table, where it has one.
std::optional<std::pair<const char*, double>> ExactValue(const std::string& column,
                                                         const Result& r) {
  if (r.status != Status::Passed || r.timeMs.median <= 0)
    return std::nullopt;
  if (column == "median ms")
    return std::make_pair("time_ms.median", r.timeMs.median);
  if (column == "Gelem/s")
    return std::make_pair("gelem_s", r.gelemS);
  if (column == "GB/s")
    return std::make_pair("gbytes_s", r.gbytesS);
  if (column == "util" && r.utilisation > 0)
    return std::make_pair("utilisation", r.utilisation);
  return std::nullopt;
}

std::string ResultRow(const PageFile& f, size_t i, bool params, bool devices) {
  const StoredResult& s = f.results[i];
  const Result& r = s.result;
  std::string h = fmt::format("<tr data-file=\"{}\" data-index=\"{}\" data-label=\"{}\">",
                              E(f.path), i, E(CaseLabel(r)));
  if (devices)
    h += "<td>" + E(s.device.Label()) + "</td>";
  const std::vector<std::string> cells = Cells(r, params), columns = Columns(params);
  for (size_t c = 0; c < cells.size(); ++c) {
    if (columns[c].empty())
      continue;
    const auto exact = ExactValue(columns[c], r);
    const bool number = exact || columns[c] == "n" || columns[c] == "+-ci" ||
                        columns[c] == "launches" || columns[c] == "local";
    h += fmt::format("<td{}{}>{}</td>", number ? " class=\"n\"" : "",
                     exact ? fmt::format(" data-field=\"{}\" data-value=\"{}\"", exact->first,
                                         Exact(exact->second))
                           : "",
                     E(cells[c]));
  }
  return h + "</tr>\n";
}

// What the marks mean, the cases read without every field, and every case that did not pass.
std::string ResultNotes(const PageFile& f) {
  std::string h = "<ul class=\"notes\">\n";
  h += "<li>util: the bytes that must cross the memory interface per second over the ceiling of "
       "the variant's own traffic; c: the input fits in the last-level cache (it may pass the "
       "ceiling); ?: above the ceiling without the cache to explain it</li>\n"
       "<li>* after a median: its 95% interval is wider than the target (timing stopped at the "
       "time budget or the iteration cap first); +-ci: the interval's half-width</li>\n";
  const size_t partial = size_t(std::count(f.partial.begin(), f.partial.end(), true));
  if (partial)
    h += fmt::format(
        "<li class=\"left-out\" data-partial=\"{}\">{} of {} results lack fields this version "
        "writes (an older or "
        "edited file): their utilisation, marks and breakdown are not shown</li>\n",
        partial, partial, f.results.size());
  for (const auto& s : f.results)
    if (s.result.status != Status::Passed && s.result.status != Status::Untimed)
      h += fmt::format("<li>{} {}: {}</li>\n", ToString(s.result.status), E(s.Label()),
                       E(s.result.message));
  return h + "</ul>\n";
}

std::string ResultsTable(const PageFile& f) {
  const std::vector<Result> results = f.Results();
  const bool params = AnyParams(results), several = f.Devices().size() > 1;
  std::string h = "<h3>Results</h3>\n<table class=\"results\">\n<tr>";
  if (several)
    h += "<th data-column=\"device\">device</th>";
  for (const auto& c : Columns(params))
    if (!c.empty())
      h += fmt::format("<th data-column=\"{}\">{}</th>", E(c), E(c));
  h += "</tr>\n";
  for (size_t i = 0; i < f.results.size(); ++i)
    h += ResultRow(f, i, params, several);
  return h + "</table>\n" + ResultNotes(f) + "<p>" + E(CountLine(results)) + "</p>\n";
}

std::string UtilCell(double util, const std::string& suspect) {
  return util > 0 ? UtilText(util, suspect.empty() ? "" : "?") : "-";
}

// One case's kernels: time in the median run, share of the median span, GB/s and utilisation
// of its own traffic, launches; then the queue's idle gaps.
std::string BreakdownTable(const PageFile& f, size_t i) {
  const Result& r = f.results[i].result;
  std::string h = fmt::format(
      "<table class=\"breakdown\" data-file=\"{}\" data-index=\"{}\">\n<caption>{}: median {} "
      "ms</caption>\n"
      "<tr><th>kernel</th><th>launches</th><th>ms (median run)</th><th>share</th><th>GB/s</th>"
      "<th>util</th></tr>\n",
      E(f.path), i, E(CaseLabel(r)), MsText(r.timeMs.median));
  for (const auto& k : r.breakdown.kernels)
    h += fmt::format(
        "<tr data-kernel=\"{}\"><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\" "
        "data-field=\"time_ms\" data-value=\"{}\">{:.4f}</td><td class=\"n\">{:.1f}%</td>"
        "<td class=\"n\">{:.1f}</td><td class=\"n\">{}</td></tr>\n",
        E(k.kernel), E(k.kernel), k.launches, Exact(k.timeMs), k.timeMs, 100 * k.share, k.gbytesS,
        UtilCell(k.bandwidthUtil, k.utilisationSuspect));
  const double span = r.timeMs.median;
  h += fmt::format(
      "<tr><td>gaps (queue idle between commands)</td><td></td><td class=\"n\" "
      "data-field=\"gaps_ms\" data-value=\"{}\">{:.4f}</td><td class=\"n\">{:.1f}%</td><td></td>"
      "<td></td></tr>\n",
      Exact(r.breakdown.gapsMs), r.breakdown.gapsMs,
      span > 0 ? 100 * r.breakdown.gapsMs / span : 0.0);
  return h + "</table>\n";
}

std::string Breakdowns(const PageFile& f) {
  std::string h;
  for (size_t i = 0; i < f.results.size(); ++i)
    if (f.results[i].Timed() && !f.results[i].result.breakdown.Empty())
      h += BreakdownTable(f, i);
  if (h.empty())
    return "<h3>Per-kernel breakdown</h3>\n<p>No case of this file carries one (timed cases "
           "with every command's profiling event kept have it).</p>\n";
  return "<h3>Per-kernel breakdown</h3>\n<p>Each kernel's time in the median run, its share of "
         "the median span, GB/s and utilisation from its own traffic; kernel times plus gaps are "
         "the median span.</p>\n" +
         h;
}

std::string ComparisonRow(const CaseComparison& m) {
  const Result& b = m.base.result;
  Result unsized = b;  // the case without its local size: that has its own column
  unsized.localSize = 0;
  return fmt::format(
      "<tr class=\"{}\" data-label=\"{}\" data-change=\"{}\"><td>{}</td><td class=\"n\">{}</td>"
      "<td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td><td "
      "class=\"n\"{}>{}</td><td>{}</td><td>{}</td></tr>\n",
      m.change == Change::Slower   ? "slower"
      : m.change == Change::Faster ? "faster"
                                   : "",
      E(CaseLabel(b)), ToString(m.change), E(CaseLabel(unsized)), E(LocalText(m)),
      E(JudgedMsText(m, false)), E(JudgedCiText(m, false)), E(JudgedMsText(m, true)),
      E(JudgedCiText(m, true)),
      m.speedup ? fmt::format(" data-field=\"speedup\" data-value=\"{}\"", Exact(*m.speedup)) : "",
      E(RatioText(m)), m.regression ? "<b>slower</b>" : ToString(m.change), E(NoteWithExtra(m)));
}

std::string ComparisonSection(const CompareReport& report) {
  const Comparison& c = report.comparison;
  std::string h = fmt::format(
      "<h2 id=\"comparison\">Comparison</h2>\n<p>BASE: <code>{}</code>: {}<br>NEW: <code>{}</code>:"
      " {}</p>\n<p>{}; {}.</p>\n<p id=\"compare-summary\">{}</p>\n",
      E(report.base.path), E(DeviceList(report.base.devices)), E(report.fresh.path),
      E(DeviceList(report.fresh.devices)), E(kRatioMeaning), E(CompareRule(c, report.settings)),
      E(CompareSummaryLine(c, report.settings)));
  h += "<table class=\"comparison\">\n<tr><th>case</th><th>local</th><th>BASE ms</th><th>BASE "
       "95% CI</th><th>NEW ms</th><th>NEW 95% CI</th><th>ratio</th><th>change</th><th>note</th>"
       "</tr>\n";
  for (const auto& m : c.matched)
    h += ComparisonRow(m);
  h += "</table>\n<ul>\n";
  for (const auto& r : c.onlyBase)
    h += "<li>only in BASE: " + E(r.Label() + OnDevice(r, report)) + "</li>\n";
  for (const auto& r : c.onlyNew)
    h += "<li>only in NEW: " + E(r.Label() + OnDevice(r, report)) + "</li>\n";
  for (const auto& n : c.notes)
    h += "<li>note: " + E(n) + "</li>\n";
  return h + "</ul>\n";
}

// The figure: matplotlib's SVG from its <svg> element on (no XML declaration or doctype).
std::string Figure(const Page& page) {
  std::string h = "<h2 id=\"plots\">Plots</h2>\n";
  const size_t at = page.svg.find("<svg");
  if (at == std::string::npos)
    return h +
           "<p class=\"left-out\" id=\"plots-left-out\">Plots left out: " + E(page.plotsLeftOut) +
           "</p>\n";
  return h +
         "<p>Per task: throughput against n (log-log) and utilisation against the "
         "ceiling; a colour per variant, a line style per file, bars the median's 95% "
         "interval.</p>\n<figure>\n" +
         page.svg.substr(at) + "\n</figure>\n";
}

}  // namespace

std::vector<Result> PageFile::Results() const {
  std::vector<Result> v;
  for (const auto& s : results)
    v.push_back(s.result);
  return v;
}

std::vector<DeviceId> PageFile::Devices() const {
  std::vector<DeviceId> devices;
  for (const auto& s : results)
    if (std::find(devices.begin(), devices.end(), s.device) == devices.end())
      devices.push_back(s.device);
  return devices;
}

std::string HtmlPage(const Page& page) {
  std::string h = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
      "reduce-scan-bench report</title>\n<style>{}</style>\n</head>\n<body>\n<h1>reduce-scan-bench "
      "report</h1>\n<p>{} result file(s):",
      kStyle, page.files.size());
  for (size_t i = 0; i < page.files.size(); ++i)
    h += fmt::format(" <a href=\"#file-{}\"><code>{}</code></a>", i, E(page.files[i].path));
  h += "</p>\n" + Figure(page);
  if (page.comparison)
    h += ComparisonSection(*page.comparison);
  for (size_t i = 0; i < page.files.size(); ++i) {
    const PageFile& f = page.files[i];
    h += fmt::format("<section id=\"file-{}\" data-path=\"{}\">\n<h2>{}</h2>\n", i, E(f.path),
                     E(f.path));
    h += Provenance(f) + ResultsTable(f) + Breakdowns(f) + "</section>\n";
  }
  return h + "</body>\n</html>\n";
}

}  // namespace rsb
