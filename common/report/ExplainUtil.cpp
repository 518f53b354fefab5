#include "report/ReportUtil.h"

#include <fmt/format.h>

#include <algorithm>

namespace rsb {

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

namespace {

std::string Verdict(const std::optional<bool>& v) {
  return v ? (*v ? "yes" : "no") : "-";
}

const char* kFewerSteps =
    "the plan's S(n) counts the phases between barriers and launches, not the operations each "
    "work-item does one after another (the course's S(n) is at least W(n) / p)";

}  // namespace

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

// The cases explained on device d, in order.
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

const char* const kExplainTitle =
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

}  // namespace rsb
