#include "report/ReportUtil.h"

namespace rsb {

void WriteMarkdown(std::ostream& out, const RunInfo& info, const std::vector<Result>& all) {
  for (size_t d = 0; d < info.devices.size(); ++d) {
    const std::vector<Result> results = ResultsOn(info, all, d);
    if (d)
      out << "\n";
    out << MarkdownEscape(DeviceLine(info, d));
    if (info.devices[d].ceilings.Known())
      out << "; " << CeilingsLine(info.devices[d].ceilings);
    if (info.devices[d].ceilings.timer.Unusable())
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

}  // namespace rsb
