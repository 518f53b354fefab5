#include "report/ReportUtil.h"

#include <fmt/format.h>

namespace rsb {

namespace {

void WriteResultsMarkdown(std::ostream& out, const RunInfo& info, const std::vector<Result>& all) {
  for (size_t d = 0; d < info.devices.size(); ++d) {
    const std::vector<Result> results = ResultsOn(info, all, d);
    if (d)
      out << "\n";
    out << MarkdownEscape(DeviceLine(info, d));
    if (info.devices[d].ceilings.Known())
      out << "; " << CeilingsLine(info.devices[d].ceilings);
    if (info.devices[d].ceilings.timer.checked)
      out << "; " << MarkdownEscape(TimerLine(info.devices[d]));
    out << (info.cold ? "; cold cache" : "") << "\n\n";
    const bool params = AnyParams(results);
    auto cells = [&](std::vector<std::string> c) {
      if (!params)
        c.pop_back();
      return c;
    };
    const std::vector<std::string> columns = cells(Columns(params));
    out << MarkdownRow(columns);
    out << "|";
    for (size_t i = 0; i < columns.size(); ++i)
      out << (i < 5 || i == 7 || i == kColumns.size() ? "---|" : "--:|");
    out << "\n";
    for (const auto& r : results)
      out << MarkdownRow(cells(Cells(r, params)));
    WriteNotes(out, info, info.devices[d], results, "- ");
  }
}

void WriteExplainMarkdown(std::ostream& out, const RunInfo& info,
                          const std::vector<Explanation>& all) {
  out << MarkdownEscape(kExplainTitle) << "\n";
  for (size_t d = 0; d < info.devices.size(); ++d) {
    const std::vector<Explanation> cases = ExplanationsOn(info, all, d);
    out << "\n" << MarkdownEscape(DeviceLine(info, d)) << "\n\n";
    const bool params = AnyParams(cases);
    auto row = [&](std::vector<std::string> cells) {
      if (!params)
        cells.pop_back();
      out << MarkdownRow(cells);
    };
    const std::vector<std::string> columns = ExplainColumns(params);
    row(columns);
    out << "|";
    for (size_t i = 0; i + (params ? 0 : 1) < columns.size(); ++i)
      out << (i < 5 || i == 14 || i == 15 || i == 17 ? "---|" : "--:|");
    out << "\n";
    for (const auto& e : cases)
      row(ExplainCells(e, params));
    WriteExplainNotes(out, cases, "- ");
  }
  out << "\n";
  for (const auto& [term, meaning] : ExplainLegend())
    out << "- " << MarkdownEscape(term) << ": " << MarkdownEscape(meaning) << "\n";
}

void WriteCompareMarkdown(std::ostream& out, const CompareReport& report) {
  const Comparison& c = report.comparison;
  out << fmt::format("BASE: `{}`: {}  \nNEW: `{}`: {}\n\n", report.base.path,
                     DeviceList(report.base.devices), report.fresh.path,
                     DeviceList(report.fresh.devices));
  out << kRatioMeaning << "; " << CompareRule(c, report.settings) << ".\n\n";
  out << "| task | variant | type | op | kind | n | local | BASE ms | BASE 95% CI | NEW ms | "
         "NEW 95% CI | ratio | change | note |\n";
  out << "|---|---|---|---|---|--:|--:|--:|---|--:|---|--:|---|---|\n";
  for (const auto& m : c.matched)
    out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                       m.base.result.task, m.base.result.variant, ToString(m.base.result.type),
                       ToString(m.base.result.op), KindOrDash(m.base.result), m.base.result.n,
                       LocalText(m), JudgedMsText(m, false), JudgedCiText(m, false),
                       JudgedMsText(m, true), JudgedCiText(m, true), RatioText(m),
                       m.regression ? "**slower**" : ToString(m.change), NoteWithExtra(m));
  auto list = [&](const char* title, const std::vector<StoredResult>& v) {
    if (v.empty())
      return;
    out << fmt::format("\nOnly in {} ({}):\n\n", title, v.size());
    for (const auto& r : v)
      out << fmt::format("- {}{}\n", r.Label(), OnDevice(r, report));
  };
  list("BASE", c.onlyBase);
  list("NEW", c.onlyNew);
  for (const auto& n : c.notes)
    out << "\nNote: " << n << "\n";
  out << "\n" << CompareSummaryLine(c, report.settings) << "\n";
}

// --list-variants as the README's variant table (its block is this output,
// tests/generated_test.py).
void WriteVariantsMarkdown(std::ostream& out, const std::vector<VariantListing>& rows) {
  out << MarkdownRow({"task", "variant", "what it does"}) << "|---|---|---|\n";
  for (const auto& r : rows)
    out << MarkdownRow({r.task, "`" + r.variant + "`", r.description});
}

// The table's rows as Markdown pipe tables, under a device line: for READMEs, issues, reports.
class MarkdownPrinter : public Printer {
 public:
  void Results(std::ostream& out, const RunInfo& info,
               const std::vector<Result>& results) const override {
    WriteResultsMarkdown(out, info, results);
  }
  void Explain(std::ostream& out, const RunInfo& info,
               const std::vector<Explanation>& cases) const override {
    WriteExplainMarkdown(out, info, cases);
  }
  void Compare(std::ostream& out, const CompareReport& report) const override {
    WriteCompareMarkdown(out, report);
  }
  void Variants(std::ostream& out, const std::vector<VariantListing>& rows) const override {
    WriteVariantsMarkdown(out, rows);
  }
};

}  // namespace

std::unique_ptr<Printer> MakeMarkdownPrinter(const PrinterOptions&) {
  return std::make_unique<MarkdownPrinter>();
}

}  // namespace rsb
