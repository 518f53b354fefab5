#include "tools/grade/Engines.h"

#include "cli/CliChecks.h"
#include "platform/Errors.h"
#include "tools/grade/Junit.h"
#include "tools/grade/Options.h"
#include "tools/grade/PrairieLearn.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <iostream>

using nlohmann::json;

namespace rsb::grade {

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

const std::vector<GradeFormat>& GradeFormats() {
  static const std::vector<GradeFormat> formats = {
      {"gradescope", "Gradescope", true,
       "DIR/results.json of the one HANDIN, Gradescope's autograder results "
       "(grading/gradescope/run_autograder)",
       "results.json", GradescopePart, nullptr, false},
      {"prairielearn", "PrairieLearn", true,
       "DIR/results.json of the one HANDIN, PrairieLearn's external grader results "
       "(grading/prairielearn/run)",
       "results.json", PrairieLearnPart, nullptr, false},
      // The autograding action's log shows stdout; it passes a test whose command exits 0.
      {"github-classroom", "GitHub Classroom", false,
       "each hand-in's report on stdout, and exit status 1 unless every item got all its points "
       "(grading/github-classroom/autograding.json runs one item a test)",
       nullptr, ToMarkdown, nullptr, true},
      {"junit", "a CI", false,
       "DIR/junit.xml: JUnit XML, a testcase per item per hand-in, for any CI", "junit.xml",
       JunitTestsuite, JunitDocument, false}};
  return formats;
}

const GradeFormat* FindGradeFormat(const std::string& name) {
  for (const auto& f : GradeFormats())
    if (name == f.name)
      return &f;
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
