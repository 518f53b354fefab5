#include "grade/Formats.h"

namespace rsb::grade {

const std::vector<GradeFormat>& GradeFormats() {
  static const std::vector<GradeFormat> formats = {
      {"gradescope", "Gradescope", true,
       "DIR/results.json of the one HANDIN, Gradescope's autograder results "
       "(grading/gradescope/run_autograder)",
       "results.json", false},
      {"prairielearn", "PrairieLearn", true,
       "DIR/results.json of the one HANDIN, PrairieLearn's external grader results "
       "(grading/prairielearn/run)",
       "results.json", false},
      // The autograding action's log shows stdout; it passes a test whose command exits 0.
      {"github-classroom", "GitHub Classroom", false,
       "each hand-in's report on stdout, and exit status 1 unless every item got all its points "
       "(grading/github-classroom/autograding.json runs one item a test)",
       nullptr, true},
      {"junit", "a CI", false,
       "DIR/junit.xml: JUnit XML, a testcase per item per hand-in, for any CI", "junit.xml",
       false}};
  return formats;
}

const GradeFormat* FindGradeFormat(const std::string& name) {
  for (const auto& f : GradeFormats())
    if (name == f.name)
      return &f;
  return nullptr;
}

}  // namespace rsb::grade
