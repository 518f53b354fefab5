#include "grade/Report.h"

#include "engine/TaskApi.h"
#include "grade/HandinFiles.h"
#include "grade/Text.h"
#include "platform/Errors.h"
#include "platform/Files.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace rsb::grade {

std::string Points(double p) {
  return fmt::format("{:g}", p);
}

std::string ItemMessage(const std::string& detail, const json& diagnosis) {
  // (The device's message and Oclgrind's own notes follow it: "1000 errors generated".)
  if (diagnosis.is_object() && !diagnosis.value("diagnostics", json::array()).empty())
    return detail.substr(0, detail.find('\n'));
  return Headline(detail);
}

void WriteFile(const fs::path& path, const std::string& text) {
  WriteWhole("--output-dir", path.string(), text);
}

namespace {

// A table cell: one line, pipes escaped.
std::string Cell(const std::string& s) {
  const std::string line = s.substr(0, s.find('\n'));
  std::string out;
  for (char c : line)
    out += c == '|' ? std::string("\\|") : std::string(1, c);
  if (out.size() > 160)
    out = out.substr(0, 157) + "...";
  return out;
}

// An item's section of the details (under its heading): the first wrong index, then the detail
// (the failing case, the compiler's message, Oclgrind's diagnostics) as a code block.
std::string Details(const ItemGrade& g) {
  std::string md;
  if (g.firstWrong)
    md += fmt::format("First wrong index {}: expected {}, actual {}.\n\n",
                      (*g.firstWrong)["index"].get<size_t>(),
                      (*g.firstWrong)["expected"].get<std::string>(),
                      (*g.firstWrong)["actual"].get<std::string>());
  return md + "```\n" + g.detail + (g.detail.empty() || g.detail.back() != '\n' ? "\n" : "") +
         "```\n";
}

// The compiler's log of each task whose host code does not build, once per task (its items'
// details give its first message and point here).
std::string HostLogs(const HandinGrade& h) {
  std::string md;
  for (const auto& [task, b] : h.host.tasks)
    if (!b.ok)
      md += fmt::format("\n## Host code of {} (does not build)\n\n```\n{}{}```\n", task, b.log,
                        b.log.empty() || b.log.back() != '\n' ? "\n" : "");
  return md;
}

// Why the items that failed or crashed were not run again under Oclgrind (said once for the
// hand-in), or "".
std::string NotDiagnosed(const HandinGrade& h) {
  for (const auto& g : h.items)
    if (g.diagnosis && !g.diagnosis->value("ran", true))
      return g.diagnosis->value("why", std::string());
  return "";
}

// The line of the reports that says it: "" where every failing case was diagnosed.
std::string NotDiagnosedLine(const HandinGrade& h) {
  const std::string why = NotDiagnosed(h);
  return why.empty()
             ? ""
             : "Oclgrind's diagnosis of the cases that failed or crashed: not run: " + why + ".\n";
}

}  // namespace

json ToJson(const RunInfo& ctx, const HandinGrade& h) {
  json items = json::array();
  for (const auto& g : h.items) {
    json cases = json::array();
    for (const auto& c : g.cases)
      cases.push_back({{"case", c.label}, {"status", c.status}, {"message", c.message}});
    items.push_back({{"id", g.item->id},
                     {"title", g.item->title},
                     {"task", g.item->task},
                     {"variant", g.item->variant},
                     {"status", g.status},
                     {"detail", g.detail},
                     {"first_wrong", g.firstWrong ? *g.firstWrong : json()},
                     {"speed", g.speed ? *g.speed : json()},
                     {"oclgrind", g.oclgrind ? *g.oclgrind : json()},
                     {"diagnosis", g.diagnosis ? *g.diagnosis : json()},
                     {"time_limit_s", g.timeLimitS},
                     {"ran_alone", g.ranAlone},
                     {"points", g.points},
                     {"max_points", g.item->points},
                     {"cases", cases}});
  }
  // Per task whose sources the hand-in brings: built, what was compiled (none: the suite's
  // sources), the compiler's log, the seconds of its compiles and link.
  json host = nullptr;
  if (!h.host.tasks.empty()) {
    const HandoutOf& from = h.host.handout;
    host = {{"seconds", h.host.seconds},
            {"tasks", json::object()},
            {"task_api", kTaskApiVersion},
            {"handin_task_api", from.taskApi ? json(*from.taskApi) : json()}};
    for (const auto& [task, b] : h.host.tasks)
      host["tasks"][task] = {{"built", b.ok}, {"compiled", b.compiled}, {"reused", b.reused},
                             {"log", b.log},  {"seconds", b.seconds},   {"api_note", b.apiNote}};
  }
  return {{"schema", "reduce-scan-bench-grade/1"},
          {"handin", h.name},
          {"path", h.path},
          {"rubric", ctx.rubric->name},
          {"rubric_file", ctx.rubric->path},
          {"seed", ctx.rubric->seed},
          {"device", ctx.device.empty() ? "-" : ctx.device},
          {"check_device", ctx.checkDevice.empty() ? "-" : ctx.checkDevice},
          {"timeout_s", ctx.timeoutS},
          {"host_code", host},
          {"files_from", h.from},
          {"diagnosis_not_run", NotDiagnosed(h).empty() ? json() : json(NotDiagnosed(h))},
          {"total", h.total},
          {"max", h.max},
          {"items", items}};
}

namespace {

// "Files not where the hand-in has them: kernels/Scan.cl (found at Scan.cl); kernels/Common.clh
// (the hand-out's: not in the hand-in)." or "".
std::string FilesFrom(const HandinGrade& h) {
  std::vector<std::string> said;
  for (const auto& [file, from] : h.from)
    said.push_back(from == kFromHandout ? file + " (the hand-out's: not in the hand-in)"
                                        : file + " (found at " + from + ")");
  return said.empty() ? "" : "Files not where the hand-in has them: " + Join(said, "; ") + ".\n";
}

}  // namespace

std::string ToMarkdown(const RunInfo& ctx, const HandinGrade& h) {
  std::string md = fmt::format("# {}: {} / {} points\n\n", h.name, Points(h.total), Points(h.max));
  md += fmt::format("Hand-in `{}`, rubric {} (`{}`), device {}, seed {}, timeout {:g} s.\n", h.path,
                    ctx.rubric->name, ctx.rubric->path, DeviceText(ctx.device, ctx.checkDevice),
                    ctx.rubric->seed, ctx.timeoutS);
  if (h.host.tasks.empty())
    md += "Host code: the suite's (the hand-in brings no task sources).\n";
  else {
    std::vector<std::string> tasks;
    for (const auto& [task, b] : h.host.tasks)
      tasks.push_back(fmt::format(
          "{} {}", task,
          !b.ok ? "FAILED"
          : b.compiled.empty()
              ? "the same as the suite's"
              : fmt::format("built ({}, {:.1f} s{})", Join(b.compiled, ", "), b.seconds,
                            b.reused.empty() ? ""
                                             : "; the objects of " + Join(b.reused, ", ") +
                                                   " from an identical compile of this run")));
    const bool built = std::any_of(h.host.tasks.begin(), h.host.tasks.end(),
                                   [](const auto& t) { return !t.second.compiled.empty(); });
    md += built ? fmt::format(
                      "Host code: the hand-in's task sources, built against the suite's "
                      "runner in {:.1f} s: {}.\n",
                      h.host.seconds, Join(tasks, "; "))
                : fmt::format("Host code: the hand-in's task sources, nothing to build: {}.\n",
                              Join(tasks, "; "));
  }
  md += FilesFrom(h) + NotDiagnosedLine(h);
  md +=
      "\n| item | task | variant | status | detail | speed | points |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const auto& g : h.items) {
    std::string speed = "-";
    if (g.speed && g.speed->contains("ratio"))
      speed = fmt::format("{:.2f}x (floor {:g}x)", (*g.speed)["ratio"].get<double>(),
                          g.item->speedFloor.value_or(0));
    else if (g.speed)
      speed = fmt::format("not timed (floor {:g}x)", g.item->speedFloor.value_or(0));
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} / {} |\n", g.item->id, g.item->task,
                      g.item->variant, g.status, Cell(g.detail), speed, Points(g.points),
                      Points(g.item->points));
  }
  md += fmt::format("| **total** | | | | | | **{} / {}** |\n", Points(h.total), Points(h.max));
  bool header = false;
  for (const auto& g : h.items) {
    if (g.status == "passed" && g.detail.empty())
      continue;
    if (!header)
      md += "\n## Details\n";
    header = true;
    md += fmt::format("\n### {} ({})\n\n", g.item->id, g.status) + Details(g);
  }
  return md + HostLogs(h);
}

// Gradescope shows `output` per test; a test is `passed` only with all its points (an item that
// is correct but too slow, or deducted by Oclgrind, is `failed` there, its output says why).
json ToGradescope(const RunInfo& ctx, const HandinGrade& h) {
  json tests = json::array();
  for (const auto& g : h.items) {
    const bool full = g.status == "passed" && g.points >= g.item->points;
    std::string output =
        fmt::format("**{}**: {} / {} points\n", g.status, Points(g.points), Points(g.item->points));
    if (!(g.status == "passed" && g.detail.empty()))
      output += "\n" + Details(g);
    tests.push_back(
        {{"name", g.item->title.empty() ? g.item->id : g.item->id + ": " + g.item->title},
         {"score", g.points},
         {"max_score", g.item->points},
         {"status", full ? "passed" : "failed"},
         {"output", output},
         {"output_format", "md"},
         {"visibility", "visible"}});
  }
  std::string output =
      fmt::format("{} / {} points. Rubric {}, device {}, seed {}, timeout {:g} s.", Points(h.total),
                  Points(h.max), ctx.rubric->name, DeviceText(ctx.device, ctx.checkDevice),
                  ctx.rubric->seed, ctx.timeoutS);
  const std::string files = FilesFrom(h) + NotDiagnosedLine(h);
  if (!files.empty())
    output += "\n" + files.substr(0, files.size() - 1);
  // Nothing could be graded (no kernels/, host code that does not build): the reason up front.
  if (!h.items.empty() && std::all_of(h.items.begin(), h.items.end(),
                                      [](const ItemGrade& g) { return g.status == "error"; }))
    output = fmt::format("Not graded: {}\n{}", Headline(h.items.front().detail), output);
  output += HostLogs(h);
  return {{"score", h.total},
          {"output", output},
          {"visibility", "visible"},
          {"stdout_visibility", "hidden"},
          {"tests", tests}};
}

}  // namespace rsb::grade
