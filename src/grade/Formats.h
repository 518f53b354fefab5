// The engines a course runs the grader in (--format): grade's one table of them, which --format's
// check and --help, the files a grading run writes for its engine (Engines.h: their writers) and
// its exit status read.
#pragma once

#include <string>
#include <vector>

namespace rsb::grade {

struct GradeFormat {
  const char* name;
  const char* engine;  // who reads it: "Gradescope"
  bool oneHandin;      // grades exactly one HANDIN: the engine runs one submission at a time
  const char* help;    // what it writes
  const char* file;    // DIR/file it writes after each hand-in; nullptr: stdout
  // Exit status 1 unless every hand-in got every point (an engine that passes on exit 0).
  bool exitsOneUnlessFull;
};

const std::vector<GradeFormat>& GradeFormats();
// The row of --format's value; nullptr for "" (no engine's files).
const GradeFormat* FindGradeFormat(const std::string& name);

}  // namespace rsb::grade
