// The grader's command line: `reduce-scan-bench grade [options] HANDIN...` (Grade.h).
#pragma once

#include "grade/GradeOptions.h"

namespace rsb::grade {

// The options, checked (a bad one: UsageError naming it, before anything runs). help: --help was
// given (the help is printed; nothing else is checked).
GradeOptions ParseGradeOptions(int argc, char** argv, bool& help);

}  // namespace rsb::grade
