// The engines a course runs the grader in (--format): grade's one table of them, which --format's
// check and --help, the files a grading run writes for its engine, its exit status and
// `grade autograding` (GitHub Classroom's tests, one per rubric item) read.
#pragma once

#include "tools/grade/Report.h"
#include "tools/grade/Rubric.h"

#include <string>
#include <vector>

namespace rsb::grade {

struct GradeFormat {
  const char* name;
  const char* engine;  // who reads it: "Gradescope"
  bool oneHandin;      // grades exactly one HANDIN: the engine runs one submission at a time
  const char* help;    // what it writes
  const char* file;    // DIR/file it writes after each hand-in; nullptr: stdout
  // A hand-in's part of it (the writers are Report.h's, PrairieLearn.h's and Junit.h's).
  std::string (*part)(const RunInfo& run, const HandinGrade& h);
  // The file of every part written so far, in the class's order; nullptr: the last part alone.
  std::string (*document)(const std::string& rubricName, const std::vector<std::string>& parts);
  // Exit status 1 unless every hand-in got every point (an engine that passes on exit 0).
  bool exitsOneUnlessFull;
};

const std::vector<GradeFormat>& GradeFormats();
// The row of --format's value; nullptr for "" (no engine's files).
const GradeFormat* FindGradeFormat(const std::string& name);

// GitHub Classroom's autograding.json of a rubric: one test per item, worth its points, each
// running `grade --format github-classroom --items ID .` on the grader that the first test's
// setup builds (grading/github-classroom/setup.sh).
std::string AutogradingJson(const Rubric& rubric);
// `reduce-scan-bench grade autograding [--rubric FILE]`: AutogradingJson on stdout.
int GradeAutograding(int argc, char** argv);

}  // namespace rsb::grade
