#include "grade/ClassPage.h"

#include "grade/Text.h"
#include "report/ReportUtil.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <utility>

namespace rsb::grade {

namespace {

std::string Pts(double p) {
  return fmt::format("{:g}", p);
}

double MaxOf(const std::vector<SummaryRow>& rows) {
  double max = 0;
  for (const auto& r : rows)
    max = std::max(max, r.max);
  return max;
}

// A message's hand-ins: the item did not get all its points in each, and said this.
struct Failure {
  std::string message;
  std::vector<std::string> handins;
};

// One item across the class.
struct ItemStats {
  std::string id;
  size_t graded = 0, passed = 0, full = 0;
  double points = 0;              // summed over the hand-ins
  std::vector<Failure> failures;  // the most common first
};

// "failed: scan-naive n=257: wrong result at index 1 ...": an item's status and message, the
// key its failures are counted by.
std::string FailureText(const SummaryRow& r, size_t i) {
  const std::string& status = i < r.statuses.size() ? r.statuses[i] : "";
  const std::string& message = i < r.messages.size() ? r.messages[i] : "";
  if (status.empty())
    return message.empty() ? "(no message)" : message;
  return message.empty() ? status : status + ": " + message;
}

std::vector<ItemStats> StatsOf(const ClassManifest& m, const std::vector<SummaryRow>& rows) {
  std::vector<ItemStats> items(m.itemIds.size());
  for (size_t i = 0; i < items.size(); ++i) {
    ItemStats& s = items[i];
    s.id = m.itemIds[i];
    for (const auto& r : rows) {
      if (i >= r.points.size())
        continue;
      ++s.graded;
      s.points += r.points[i];
      const bool passed = i < r.statuses.size() && r.statuses[i] == "passed";
      const bool full = i < r.maxPoints.size() && r.points[i] >= r.maxPoints[i];
      s.passed += passed;
      s.full += full;
      if (passed && full)
        continue;
      const std::string text = FailureText(r, i);
      auto at = std::find_if(s.failures.begin(), s.failures.end(),
                             [&](const Failure& f) { return f.message == text; });
      if (at == s.failures.end())
        at = s.failures.insert(s.failures.end(), Failure{text, {}});
      at->handins.push_back(r.name);
    }
    std::stable_sort(s.failures.begin(), s.failures.end(), [](const Failure& a, const Failure& b) {
      return a.handins.size() > b.handins.size();
    });
  }
  return items;
}

std::vector<size_t> Histogram(const std::vector<SummaryRow>& rows) {
  std::vector<size_t> bins(kBins, 0);
  for (const auto& r : rows)
    ++bins[BinOf(r.total, r.max)];
  return bins;
}

std::string Percent(size_t k, size_t n) {
  return n == 0 ? "-" : fmt::format("{:.0f}%", 100.0 * double(k) / double(n));
}

// Failure messages shown per item, and hand-ins named per message.
constexpr size_t kFailuresShown = 5, kHandinsNamed = 20;

// A message in Markdown inline code: one line, no backticks, at most 200 characters.
std::string MdCode(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  std::replace(line.begin(), line.end(), '`', '\'');
  if (line.size() > 200)
    line = line.substr(0, 197) + "...";
  return "`" + line + "`";
}

std::string MdHeader(const ClassManifest& m, const std::vector<SummaryRow>& rows) {
  std::string md = fmt::format("# Grades: {}\n\n", m.rubricName);
  md += fmt::format("Rubric `{}` ({}), seed {}, device {}, {}. {} of {} hand-in(s) graded{}.\n\n",
                    m.rubricPath, m.rubricHash, m.seed, DeviceText(m.device, m.checkDevice),
                    m.suite, rows.size(), m.classNames.size(), m.complete ? "" : " so far");
  md += "| hand-in | total |";
  for (const auto& id : m.itemIds)
    md += " " + id + " |";
  md += "\n|---|---|";
  for (size_t i = 0; i < m.itemIds.size(); ++i)
    md += "---|";
  md += "\n";
  for (const auto& r : rows) {
    md += fmt::format("| [{}]({}.md) | {} / {} |", r.name, r.name, Pts(r.total), Pts(r.max));
    for (size_t i = 0; i < r.points.size(); ++i)
      md += " " + Pts(r.points[i]) + " |";
    md += "\n";
  }
  return md;
}

// The hand-ins with an item charged as it ran again with the device to itself, each as
// "NAME (ITEM, ITEM)", NAME as `name` writes it; empty where none.
std::vector<std::string> RanAlone(const ClassManifest& m, const std::vector<SummaryRow>& rows,
                                  const std::function<std::string(const std::string&)>& name) {
  std::vector<std::string> out;
  for (const auto& r : rows) {
    std::vector<std::string> items;
    for (size_t i = 0; i < r.ranAlone.size() && i < m.itemIds.size(); ++i)
      if (r.ranAlone[i])
        items.push_back(m.itemIds[i]);
    if (!items.empty())
      out.push_back(name(r.name) + " (" + Join(items, ", ") + ")");
  }
  return out;
}

constexpr const char* kRanAlone =
    "Run again with the device to itself, its limit unchanged, as another run on the device hung "
    "beside the first (the second outcome is charged; each report says which run and why): ";

std::string MdItems(const std::vector<ItemStats>& items) {
  std::string md =
      "\n## Items\n\n| item | passed | all points | mean points |\n|---|---|---|---|\n";
  for (const auto& s : items)
    md += fmt::format("| {} | {} / {} ({}) | {} / {} | {:.2f} |\n", s.id, s.passed, s.graded,
                      Percent(s.passed, s.graded), s.full, s.graded,
                      s.graded ? s.points / double(s.graded) : 0.0);
  for (const auto& s : items) {
    if (s.failures.empty())
      continue;
    md += fmt::format("\n### {}: most common failures\n\n", s.id);
    for (size_t f = 0; f < std::min(kFailuresShown, s.failures.size()); ++f) {
      const Failure& x = s.failures[f];
      std::vector<std::string> links;
      for (size_t k = 0; k < std::min(kHandinsNamed, x.handins.size()); ++k)
        links.push_back(fmt::format("[{}]({}.md)", x.handins[k], x.handins[k]));
      if (x.handins.size() > kHandinsNamed)
        links.push_back(fmt::format("and {} more", x.handins.size() - kHandinsNamed));
      md += fmt::format("- {} hand-in(s): {}: {}\n", x.handins.size(), MdCode(x.message),
                        Join(links, ", "));
    }
    if (s.failures.size() > kFailuresShown)
      md += fmt::format("- and {} other message(s)\n", s.failures.size() - kFailuresShown);
  }
  return md;
}

}  // namespace

double MeanTotal(const std::vector<SummaryRow>& rows) {
  double sum = 0;
  for (const auto& r : rows)
    sum += r.total;
  return rows.empty() ? 0 : sum / double(rows.size());
}

double MedianTotal(const std::vector<SummaryRow>& rows) {
  std::vector<double> v;
  for (const auto& r : rows)
    v.push_back(r.total);
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

size_t BinOf(double total, double max) {
  if (max <= 0 || total >= max)
    return kBins - 1;
  return std::min(kBins - 2, static_cast<size_t>(std::floor(10 * std::max(0.0, total) / max)));
}

std::string BinLabel(size_t bin) {
  return bin + 1 >= kBins ? "100%" : fmt::format("{}-{}%", bin * 10, bin * 10 + 9);
}

std::string IndexMarkdown(const ClassManifest& m, const std::vector<SummaryRow>& rows) {
  std::string md = MdHeader(m, rows);
  if (rows.empty())
    return md;
  const double max = MaxOf(rows);
  md += fmt::format("\nMean {:.1f} / {}, median {:g} / {}.\n", MeanTotal(rows), Pts(max),
                    MedianTotal(rows), Pts(max));
  const auto alone =
      RanAlone(m, rows, [](const std::string& n) { return fmt::format("[{}]({}.md)", n, n); });
  if (!alone.empty())
    md += "\n" + std::string(kRanAlone) + Join(alone, "; ") + ".\n";
  md += "\n## Scores\n\n| score | hand-ins | |\n|---|---|---|\n";
  const std::vector<size_t> bins = Histogram(rows);
  for (size_t b = 0; b < kBins; ++b)
    md += fmt::format("| {} | {} | {} |\n", BinLabel(b), bins[b], std::string(bins[b], '#'));
  return md + MdItems(StatsOf(m, rows));
}

// ---------------------------------------------------------------------------------------------
// index.html

namespace {

// A report's file name as a link target: every character but the safe ones %-encoded.
std::string Href(const std::string& name, const char* ext) {
  std::string out;
  for (unsigned char c : name + ext)
    out += std::isalnum(c) || std::string("-_.~").find(c) != std::string::npos
               ? std::string(1, char(c))
               : fmt::format("%{:02X}", c);
  return out;
}

std::string ReportLink(const std::string& name) {
  return fmt::format("<a href=\"{}\">{}</a>", Href(name, ".md"), EscapeMarkup(name));
}

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:1.5em;max-width:72em}"
    "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;"
    "text-align:left}td.n{text-align:right}.bar{background:#4a7fc1;height:1em}"
    ".lost{background:#fbe3e3}code{background:#f3f3f3;padding:0 .2em}";

std::string HtmlHistogram(const std::vector<SummaryRow>& rows) {
  const std::vector<size_t> bins = Histogram(rows);
  const size_t most = std::max<size_t>(1, *std::max_element(bins.begin(), bins.end()));
  std::string h =
      "<h2>Scores</h2>\n<table id=\"histogram\">\n<tr><th>score</th><th>hand-ins</th>"
      "<th style=\"width:20em\"></th></tr>\n";
  for (size_t b = 0; b < kBins; ++b)
    h += fmt::format(
        "<tr data-bin=\"{}\" data-count=\"{}\"><td>{}</td><td class=\"n\">{}</td><td><div "
        "class=\"bar\" style=\"width:{:.0f}%\"></div></td></tr>\n",
        b, bins[b], BinLabel(b), bins[b], 100.0 * double(bins[b]) / double(most));
  return h + "</table>\n";
}

std::string HtmlFailures(const ItemStats& s) {
  std::string h = fmt::format("<h3>{}</h3>\n<ul>\n", EscapeMarkup(s.id));
  for (size_t f = 0; f < std::min(kFailuresShown, s.failures.size()); ++f) {
    const Failure& x = s.failures[f];
    std::vector<std::string> links;
    for (size_t k = 0; k < std::min(kHandinsNamed, x.handins.size()); ++k)
      links.push_back(ReportLink(x.handins[k]));
    if (x.handins.size() > kHandinsNamed)
      links.push_back(fmt::format("and {} more", x.handins.size() - kHandinsNamed));
    h += fmt::format(
        "<li class=\"failure\" data-item=\"{}\" data-count=\"{}\">{} hand-in(s): "
        "<code>{}</code>: {}</li>\n",
        EscapeMarkup(s.id), x.handins.size(), x.handins.size(), EscapeMarkup(x.message),
        Join(links, ", "));
  }
  if (s.failures.size() > kFailuresShown)
    h += fmt::format("<li>and {} other message(s)</li>\n", s.failures.size() - kFailuresShown);
  return h + "</ul>\n";
}

std::string HtmlItems(const std::vector<ItemStats>& items) {
  std::string h =
      "<h2>Items</h2>\n<table id=\"items\">\n<tr><th>item</th><th>passed</th><th>all "
      "points</th><th>mean points</th></tr>\n";
  for (const auto& s : items)
    h += fmt::format(
        "<tr data-item=\"{}\" data-graded=\"{}\" data-passed=\"{}\" data-full=\"{}\"><td>{}</td>"
        "<td class=\"n\">{} / {} ({})</td><td class=\"n\">{} / {}</td><td class=\"n\">{:.2f}</td>"
        "</tr>\n",
        EscapeMarkup(s.id), s.graded, s.passed, s.full, EscapeMarkup(s.id), s.passed, s.graded,
        Percent(s.passed, s.graded), s.full, s.graded,
        s.graded ? s.points / double(s.graded) : 0.0);
  h += "</table>\n<h2>Most common failures</h2>\n";
  bool any = false;
  for (const auto& s : items)
    if (!s.failures.empty()) {
      h += HtmlFailures(s);
      any = true;
    }
  return h + (any ? "" : "<p>None: every hand-in got every item's points.</p>\n");
}

std::string HtmlHandins(const ClassManifest& m, const std::vector<SummaryRow>& rows) {
  std::string h = "<h2>Hand-ins</h2>\n<table id=\"handins\">\n<tr><th>hand-in</th><th>total</th>";
  for (const auto& id : m.itemIds)
    h += "<th>" + EscapeMarkup(id) + "</th>";
  h += "</tr>\n";
  for (const auto& r : rows) {
    h += fmt::format(
        "<tr data-name=\"{}\" data-total=\"{}\" data-max=\"{}\"><td>{} (<a href=\"{}\">json</a>)"
        "</td><td class=\"n\">{} / {}</td>",
        EscapeMarkup(r.name), Pts(r.total), Pts(r.max), ReportLink(r.name), Href(r.name, ".json"),
        Pts(r.total), Pts(r.max));
    for (size_t i = 0; i < r.points.size() && i < m.itemIds.size(); ++i) {
      const bool lost = i < r.maxPoints.size() && r.points[i] < r.maxPoints[i];
      h += fmt::format("<td class=\"n{}\" data-item=\"{}\" data-points=\"{}\">{}</td>",
                       lost ? " lost" : "", EscapeMarkup(m.itemIds[i]), Pts(r.points[i]),
                       Pts(r.points[i]));
    }
    h += "</tr>\n";
  }
  return h + "</table>\n";
}

}  // namespace

std::string IndexHtml(const ClassManifest& m, const std::vector<SummaryRow>& rows) {
  std::string h = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Grades: "
      "{}</title>\n<style>{}</style>\n</head>\n<body>\n<h1>Grades: {}</h1>\n",
      EscapeMarkup(m.rubricName), kStyle, EscapeMarkup(m.rubricName));
  h += fmt::format(
      "<p>Rubric <code>{}</code> ({}), seed {}, device {}, {}. <span id=\"graded\">{}</span> of "
      "{} hand-in(s) graded{}.</p>\n",
      EscapeMarkup(m.rubricPath), EscapeMarkup(m.rubricHash), m.seed,
      EscapeMarkup(DeviceText(m.device, m.checkDevice)), EscapeMarkup(m.suite), rows.size(),
      m.classNames.size(), m.complete ? "" : " so far");
  if (!rows.empty()) {
    const double max = MaxOf(rows), mean = MeanTotal(rows), median = MedianTotal(rows);
    h += fmt::format(
        "<p>Mean <span id=\"mean\" data-value=\"{:.6g}\">{:.1f}</span> / {}, median <span "
        "id=\"median\" data-value=\"{:.6g}\">{:g}</span> / {}.</p>\n",
        mean, mean, Pts(max), median, median, Pts(max));
    const auto alone = RanAlone(m, rows, ReportLink);
    if (!alone.empty())
      h += "<p id=\"ran-alone\">" + EscapeMarkup(kRanAlone) + Join(alone, "; ") + ".</p>\n";
    h += HtmlHistogram(rows) + HtmlItems(StatsOf(m, rows));
  }
  return h + HtmlHandins(m, rows) + "</body>\n</html>\n";
}

}  // namespace rsb::grade
