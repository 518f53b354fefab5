#include "report/ReportUtil.h"

#include <fmt/format.h>

#include <algorithm>

namespace rsb {

namespace {

// The course's terms, as the explain outputs print them (the table and Markdown under the
// table, JSON in "legend").
const std::vector<std::pair<std::string, std::string>>& ExplainLegend() {
  static const std::vector<std::pair<std::string, std::string>> legend = {
      {"launches", "commands of one run (kernels and fills)"},
      {"S(n)",
       "parallel steps: the run's launches and, inside each, the phases between barriers, one "
       "after another"},
      {"W(n)", "work: operator applications in all (multiply-adds for a convolution)"},
      {"Wseq",
       "the sequential algorithm's work: n - 1 operator applications (a convolution: n W "
       "multiply-adds, n W^2 in 2-D)"},
      {"p",
       "work-items launched: the largest global size among the run's launches (whole "
       "work-groups)"},
      {"p*S(n)", "the cost"},
      {"work-opt",
       fmt::format("work-optimal, W(n) = O(Wseq(n)): yes where W/Wseq grows by less than {:.0f}% "
                   "with n and the local size both {} times larger (the same model, as many "
                   "work-groups: a constant factor stays, a log n or log L factor grows by 45% "
                   "and more)",
                   100 * (kExplainGrowth - 1), kExplainScale)},
      {"cost-opt", "cost-optimal, p*S(n) = O(Wseq(n)): yes where pS/Wseq grows so little"},
      {"bytes",
       "global memory read and written in one run: the traffic model GB/s is computed from"},
  };
  return legend;
}

std::string Verdict(const std::optional<bool>& v) {
  return v ? (*v ? "yes" : "no") : "-";
}

// The explain table's columns and one case's cells (numbers "-" for a skipped case).
std::vector<std::string> ExplainColumns(bool params) {
  std::vector<std::string> c = {"task",   "variant",  "type",     "op",       "kind",   "n",
                                "local",  "launches", "S(n)",     "W(n)",     "W/Wseq", "p",
                                "p*S(n)", "pS/Wseq",  "work-opt", "cost-opt", "bytes"};
  c.push_back(params ? "params" : "");
  return c;
}

std::vector<std::string> ExplainCells(const Explanation& e, bool params) {
  const Result& r = e.c;
  const bool ok = e.Explained();
  auto num = [&](uint64_t v) { return ok ? std::to_string(v) : std::string("-"); };
  std::vector<std::string> cells = CaseCells(r);
  cells.insert(
      cells.end(),
      {num(r.cost.launches), num(r.cost.steps), num(r.cost.ops),
       ok ? fmt::format("{:.2f}", e.workRatio) : "-", num(r.cost.workItems), num(e.Cost()),
       ok ? fmt::format("{:.2f}", e.costRatio) : "-", ok ? Verdict(e.workOptimal) : "skipped",
       ok ? Verdict(e.costOptimal) : "-", num(r.cost.BytesMoved()), params ? ParamsText(r) : ""});
  return cells;
}

std::vector<Explanation> ExplanationsOn(const RunInfo& info, const std::vector<Explanation>& all,
                                        size_t d) {
  std::vector<Explanation> out;
  for (const auto& e : all)
    if (&DeviceOf(info, e.c) == &info.devices[d])
      out.push_back(e);
  return out;
}

bool AnyParams(const std::vector<Explanation>& cases) {
  for (const auto& e : cases)
    if (!e.c.params.empty())
      return true;
  return false;
}

const char* kFewerSteps =
    "the plan's S(n) counts the phases between barriers and launches, not the operations each "
    "work-item does one after another (the course's S(n) is at least W(n) / p)";

const char* kExplainTitle =
    "explain: the course's measures of each case, from the launch plan that a run enqueues and "
    "times; nothing was run";

// Skipped cases, one line each; then, once, the variants whose plans count fewer steps than
// their work needs (their cases' message in CSV and JSON).
void WriteExplainNotes(std::ostream& out, const std::vector<Explanation>& cases,
                       const std::string& bullet) {
  bool first = true;
  std::vector<std::string> fewer;
  for (const auto& e : cases) {
    if (e.Explained()) {
      const std::string name = e.c.task + "/" + e.c.variant;
      if (!e.c.message.empty() && std::find(fewer.begin(), fewer.end(), name) == fewer.end())
        fewer.push_back(name);
      continue;
    }
    out << (first ? "\n" : "")
        << fmt::format("{}skipped {}: {}\n", bullet, CaseLabel(e.c), e.c.message);
    first = false;
  }
  if (fewer.empty())
    return;
  std::string names;
  for (const auto& n : fewer)
    names += (names.empty() ? "" : ", ") + n;
  out << (first ? "\n" : "")
      << fmt::format("{}p*S(n) < W(n) for {}: {}\n", bullet, names, kFewerSteps);
}

}  // namespace

void WriteExplainTable(std::ostream& out, const RunInfo& info,
                       const std::vector<Explanation>& all) {
  out << kExplainTitle << "\n";
  for (size_t d = 0; d < info.devices.size(); ++d) {
    const std::vector<Explanation> cases = ExplanationsOn(info, all, d);
    out << "\n" << DeviceLine(info, d) << "\n\n";
    std::vector<int> width = {-10, -14, -6, -4, -9, 10, 5, 8, 6, 13, 7, 11, 13, 8, -8, -8, 13, 0};
    for (const auto& e : cases)
      width[0] = std::min(width[0], -int(e.c.task.size()));
    const bool params = AnyParams(cases);
    auto line = [&](const std::vector<std::string>& cells) { out << AlignedRow(width, cells); };
    line(ExplainColumns(params));
    for (const auto& e : cases)
      line(ExplainCells(e, params));
    WriteExplainNotes(out, cases, "");
  }
  out << "\n";
  for (const auto& [term, meaning] : ExplainLegend())
    out << term << ": " << meaning << "\n";
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

void WriteExplainCsv(std::ostream& out, const RunInfo& info, const std::vector<Explanation>& all) {
  out << "device,driver_version,task,variant,type,op,scan_kind,n,width,height,params,local_size,"
         "status,message,launches,steps,work,sequential_work,work_items,cost,work_ratio,"
         "cost_ratio,scaled_work_ratio,scaled_cost_ratio,work_optimal,cost_optimal,bytes_read,"
         "bytes_written,bytes_moved\n";
  for (const auto& e : all) {
    const Result& r = e.c;
    const DeviceInfo& d = DeviceOf(info, r).info;
    auto flag = [](const std::optional<bool>& v) { return v ? (*v ? "1" : "0") : ""; };
    out << fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},"
        "{},{},{},{},{}\n",
        CsvQuote(d.name), CsvQuote(d.driverVersion), r.task, r.variant, ToString(r.type),
        ToString(r.op), r.scanKind ? ToString(*r.scanKind) : "", r.n,
        r.height ? r.n / r.height : r.n, r.height ? r.height : 1,
        CsvQuote(r.params.empty() ? "" : ParamsText(r)), r.localSize,
        e.Explained() ? "explained" : "skipped", CsvQuote(r.message), r.cost.launches, r.cost.steps,
        r.cost.ops, e.sequentialWork, r.cost.workItems, e.Cost(), e.workRatio, e.costRatio,
        e.scaledWorkRatio, e.scaledCostRatio, flag(e.workOptimal), flag(e.costOptimal),
        r.cost.bytesRead, r.cost.bytesWritten, r.cost.BytesMoved());
  }
}

namespace {

// One case of the explain JSON's "cases": its keys, and its measures where it was explained.
nlohmann::json ExplainCaseJson(const RunInfo& info, const Explanation& e) {
  auto verdict = [](const std::optional<bool>& v) { return v ? nlohmann::json(*v) : nullptr; };
  const Result& r = e.c;
  nlohmann::json o = CaseJson(r);
  o.update({{"code_path", r.codePath},
            {"tuning", r.tuning},
            {"params", r.params},
            {"status", e.Explained() ? "explained" : "skipped"},
            {"message", r.message}});
  if (r.scanKind)
    o["scan_kind"] = ToString(*r.scanKind);
  if (r.height)
    o["shape"] = SizeText(r.n, r.height);
  if (info.devices.size() > 1)
    o["device"] = ResultDeviceJson(info, r);
  if (e.Explained()) {
    o["launches"] = r.cost.launches;
    o["steps"] = r.cost.steps;
    o["work"] = r.cost.ops;
    o["sequential_work"] = e.sequentialWork;
    o["work_items"] = r.cost.workItems;
    o["cost"] = e.Cost();
    o["work_ratio"] = e.workRatio;
    o["cost_ratio"] = e.costRatio;
    o["scaled"] = {{"work_ratio", e.scaledWorkRatio}, {"cost_ratio", e.scaledCostRatio}};
    o["work_optimal"] = verdict(e.workOptimal);
    o["cost_optimal"] = verdict(e.costOptimal);
    o["bytes_read"] = r.cost.bytesRead;
    o["bytes_written"] = r.cost.bytesWritten;
    o["bytes_moved"] = r.cost.BytesMoved();
  }
  return o;
}

// A device, without the ceilings: nothing was measured.
nlohmann::json ExplainDeviceJson(const DeviceRun& run) {
  nlohmann::json o = DeviceJson(run);
  o.erase("ceilings");
  o.erase("copy_gbytes_s");
  o.erase("timer");
  return o;
}

}  // namespace

void WriteExplainJson(std::ostream& out, const RunInfo& info, const std::vector<Explanation>& all) {
  nlohmann::json j;
  j["schema"] = "reduce-scan-bench-explain/1";
  j["suite"] = SuiteJson();
  j["date"] = info.date;
  j["host"] = info.host;
  j["command"] = info.command;
  j["device"] = ExplainDeviceJson(info.devices.empty() ? DeviceRun() : info.devices.front());
  if (info.devices.size() > 1) {
    j["devices"] = nlohmann::json::array();
    for (const auto& d : info.devices)
      j["devices"].push_back(ExplainDeviceJson(d));
  }
  j["legend"] = nlohmann::json::object();
  for (const auto& [term, meaning] : ExplainLegend())
    j["legend"][term] = meaning;
  j["scale"] = kExplainScale;
  j["growth_limit"] = kExplainGrowth;
  j["cases"] = nlohmann::json::array();
  for (const auto& e : all)
    j["cases"].push_back(ExplainCaseJson(info, e));
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace rsb
