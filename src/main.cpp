// reduce-scan-bench: the benchmark run (src/run/Bench.h) or one of its subcommands (grade,
// compare, ab, plot, report, tune: src/tools/); an error that escapes as its exit status. Exit
// statuses: 0 all passed, 1 a validation failed, 2 bad input, 3 an OpenCL/system error (in a case
// or outside), 130 interrupted. `serve` is the grader's resident child run (src/run/Serve.h).
#include "platform/CLUtil.h"
#include "platform/Errors.h"
#include "platform/Subprocess.h"
#include "run/Bench.h"
#include "run/Serve.h"
#include "tasks/Tasks.h"
#include "tools/AB.h"
#include "tools/Compare.h"
#include "tools/Plot.h"
#include "tools/Report.h"
#include "tools/Tune.h"
#include "tools/grade/Grade.h"

#include <iostream>
#include <string>

using namespace rsb;

int main(int argc, char** argv) {
  SaveEnvironment();
  if (argc > 1 && std::string(argv[1]) == "grade")
    return Grade(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "compare")
    return Compare(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "ab")
    return AB(argc - 1, argv + 1, MakeTasks());
  if (argc > 1 && std::string(argv[1]) == "plot")
    return Plot(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "report")
    return Report(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "tune")
    return Tune(argc - 1, argv + 1, MakeTasks());
  if (argc > 1 && std::string(argv[1]) == "serve")
    return Serve(argc - 1, argv + 1);
  return RunCommand(argc, argv);
}
