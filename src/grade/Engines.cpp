#include "grade/Engines.h"

#include "cli/CliChecks.h"
#include "grade/Text.h"
#include "platform/Errors.h"
#include "platform/Pattern.h"
#include "report/ReportUtil.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <iostream>

using nlohmann::json;

namespace rsb::grade {

namespace {

std::string Testcase(const HandinGrade& h, const ItemGrade& g, size_t& failures, size_t& errors) {
  std::string x = fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n",
                              EscapeMarkup(h.name), EscapeMarkup(g.item->id));
  const std::string message =
      EscapeMarkup(g.status + (g.detail.empty() ? "" : ": " + Headline(g.detail)));
  const bool full = g.status == "passed" && g.points >= g.item->points;
  if (!full && (g.status == "passed" || g.status == "failed")) {
    ++failures;
    x += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", message, g.status,
                     EscapeMarkup(g.detail));
  } else if (!full) {
    ++errors;
    x += fmt::format("      <error message=\"{}\" type=\"{}\">{}</error>\n", message, g.status,
                     EscapeMarkup(g.detail));
  }
  return x + fmt::format("      <system-out>{}: {} / {} points</system-out>\n    </testcase>\n",
                         EscapeMarkup(g.status), Points(g.points), Points(g.item->points));
}

}  // namespace

std::string JunitTestsuite(const RunInfo& run, const HandinGrade& h) {
  size_t failures = 0, errors = 0;
  std::string cases;
  for (const auto& g : h.items)
    cases += Testcase(h, g, failures, errors);
  return fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\">\n"
      "    <properties>\n      <property name=\"points\" value=\"{}\"/>\n"
      "      <property name=\"max_points\" value=\"{}\"/>\n"
      "      <property name=\"rubric\" value=\"{}\"/>\n"
      "      <property name=\"device\" value=\"{}\"/>\n    </properties>\n{}  </testsuite>\n",
      EscapeMarkup(h.name), h.items.size(), failures, errors, Points(h.total), Points(h.max),
      EscapeMarkup(run.rubric->name), EscapeMarkup(DeviceText(run.device, run.checkDevice)), cases);
}

std::string JunitDocument(const std::string& rubricName, const std::vector<std::string>& suites) {
  size_t counts[3] = {0, 0, 0};
  static const Pattern head(
      R"re(<testsuite name="[^"]*" tests="(\d+)" failures="(\d+)" errors="(\d+)")re");
  std::string body;
  for (const auto& s : suites) {
    if (const auto m = head.Search(s))
      for (int i = 0; i < 3; ++i)
        counts[i] += std::stoul((*m)[i + 1]);
    body += s;
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\" tests=\"{}\" "
      "failures=\"{}\" errors=\"{}\">\n{}</testsuites>\n",
      EscapeMarkup(rubricName), counts[0], counts[1], counts[2], body);
}

json ToPrairieLearn(const RunInfo& run, const HandinGrade& h) {
  json tests = json::array();
  for (const auto& g : h.items) {
    const std::string headline = Headline(g.detail);
    std::string output =
        fmt::format("{}: {} / {} points\n", g.status, Points(g.points), Points(g.item->points));
    if (!g.detail.empty())
      output += "\n" + g.detail + (g.detail.back() == '\n' ? "" : "\n");
    tests.push_back({{"name", g.item->id},
                     {"description", g.item->title},
                     {"points", g.points},
                     {"max_points", g.item->points},
                     {"message", headline.empty() ? g.status : g.status + ": " + headline},
                     {"output", output}});
  }
  return {{"gradable", true},
          {"score", h.max > 0 ? h.total / h.max : 0.0},
          {"message", fmt::format("{} / {} points. Rubric {}, device {}, seed {}.", Points(h.total),
                                  Points(h.max), run.rubric->name,
                                  DeviceText(run.device, run.checkDevice), run.rubric->seed)},
          {"output", ToMarkdown(run, h)},
          {"tests", tests}};
}

namespace {

std::string Text(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string GradescopePart(const RunInfo& run, const HandinGrade& h) {
  return Text(ToGradescope(run, h));
}

std::string PrairieLearnPart(const RunInfo& run, const HandinGrade& h) {
  return Text(ToPrairieLearn(run, h));
}

// Where setup.sh builds the grader, and what each test runs there on the student's repository.
constexpr const char* kGrader = "\"$HOME/rsb-grader/build/reduce-scan-bench\"";
constexpr const char* kRubric = "\"$HOME/rsb-grader/grading/rubric.json\"";
constexpr const char* kSetup = "bash .github/classroom/setup.sh";
// Minutes a test may take: the first builds the grader in its setup.
constexpr int kFirstTestMinutes = 30, kTestMinutes = 10;

}  // namespace

const EngineWriters* WritersOf(const GradeFormat& format) {
  static const std::vector<std::pair<std::string, EngineWriters>> writers = {
      {"gradescope", {GradescopePart, nullptr}},
      {"prairielearn", {PrairieLearnPart, nullptr}},
      {"github-classroom", {ToMarkdown, nullptr}},
      {"junit", {JunitTestsuite, JunitDocument}}};
  for (const auto& [name, w] : writers)
    if (name == format.name)
      return &w;
  return nullptr;
}

std::string AutogradingJson(const Rubric& rubric) {
  nlohmann::ordered_json tests = nlohmann::ordered_json::array();
  for (const auto& item : rubric.items) {
    nlohmann::ordered_json t;
    t["name"] = item.id + (item.title.empty() ? "" : ": " + item.title);
    t["setup"] = tests.empty() ? kSetup : "";
    t["run"] = fmt::format(
        "{} grade --format github-classroom --sandbox none --rubric {} --items {} --output-dir "
        "\"$HOME/rsb-grades\" .",
        kGrader, kRubric, item.id);
    t["input"] = "";
    t["output"] = "";
    t["comparison"] = "included";
    t["timeout"] = tests.empty() ? kFirstTestMinutes : kTestMinutes;
    if (item.points == std::floor(item.points))
      t["points"] = static_cast<long long>(item.points);
    else
      t["points"] = item.points;
    tests.push_back(t);
  }
  nlohmann::ordered_json doc;
  doc["tests"] = tests;
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

int GradeAutograding(int argc, char** argv) {
  return ExitStatusOf([&] {
    std::string rubric;
    bool help = false;
    CLI::App app{
        "reduce-scan-bench grade autograding: GitHub Classroom's autograding.json for a rubric on "
        "stdout,\na test per item worth its points (grading/github-classroom/autograding.json is "
        "the shipped rubric's).",
        "reduce-scan-bench grade autograding"};
    app.set_help_flag();
    app.add_flag("-h,--help", help, "Print this help and exit");
    app.add_option("--rubric", rubric,
                   "Rubric JSON (default: grading/rubric.json of the suite's source tree)")
        ->check(cli::Allowed("a readable rubric JSON file", [](const std::string& v) {
          std::error_code ec;
          return std::filesystem::is_regular_file(v, ec);
        }));
    cli::Parse(app, argc, argv);
    if (help) {
      std::cout << app.help();
      return kExitOk;
    }
    std::cout << AutogradingJson(LoadRubric(rubric.empty() ? DefaultRubric() : rubric));
    return kExitOk;
  });
}

}  // namespace rsb::grade
