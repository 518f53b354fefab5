// What the grader writes for the engine a course runs it in (--format; Formats.h, the table of
// them): each format's writers, and `grade autograding` (GitHub Classroom's tests, one per rubric
// item).
#pragma once

#include "grade/Formats.h"
#include "grade/Report.h"
#include "grade/Rubric.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace rsb::grade {

// JUnit XML for any CI (`grade --format junit`: DIR/junit.xml): a <testsuite> per hand-in, a
// <testcase> per item, failed (<failure>, a validation or a point lost) or in error (<error>: an
// OpenCL error, a crash, a timeout, code that does not build), its points in <system-out>.
//
// The hand-in's <testsuite name="NAME" tests= failures= errors=>, a <testcase classname="NAME"
// name="ITEM"> per item.
std::string JunitTestsuite(const RunInfo& run, const HandinGrade& h);
// The document: <testsuites name="RUBRIC" tests= failures= errors=> around the suites (in the
// class's order), its counts summed from them.
std::string JunitDocument(const std::string& rubricName, const std::vector<std::string>& suites);

// PrairieLearn's external grader results (https://prairielearn.readthedocs.io, "Externally graded
// questions"): the results.json that `grade --format prairielearn` writes of its one hand-in and
// grading/prairielearn/run copies to /grade/results/results.json:
// {gradable: true, score: total / max (0-1), message (the total and the run's settings), output
// (the .md report), tests: one per item {name, description (its title), points, max_points,
// message (status and the line that says most), output (the item's details)}}.
nlohmann::json ToPrairieLearn(const RunInfo& run, const HandinGrade& h);

// How a format's files are made: a hand-in's part (Report.h's and the writers above) and the
// file of every part written so far, in the class's order (nullptr: the last part alone). Every
// row of GradeFormats() has its writers here.
struct EngineWriters {
  std::string (*part)(const RunInfo& run, const HandinGrade& h);
  std::string (*document)(const std::string& rubricName, const std::vector<std::string>& parts);
};
const EngineWriters* WritersOf(const GradeFormat& format);

// GitHub Classroom's autograding.json of a rubric: one test per item, worth its points, each
// running `grade --format github-classroom --items ID .` on the grader that the first test's
// setup builds (grading/github-classroom/setup.sh).
std::string AutogradingJson(const Rubric& rubric);
// `reduce-scan-bench grade autograding [--rubric FILE]`: AutogradingJson on stdout.
int GradeAutograding(int argc, char** argv);

}  // namespace rsb::grade
