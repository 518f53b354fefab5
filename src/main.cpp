// reduce-scan-bench: the benchmark run (src/run/Bench.h) or one of the subcommands of the table
// below (src/tools/, and the wing above the benchmark); an error that escapes as its exit status.
// Exit statuses: 0 all passed, 1 a validation failed, 2 bad input, 3 an OpenCL/system error (in a
// case or outside), 130 interrupted. `serve` runs requests from a parent (src/run/Serve.h).
#include "grade/Grade.h"
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

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

using namespace rsb;

namespace {

// A subcommand: the first argument that picks it, what runs it (argv[0] its name) and the lines
// --help lists for it (usage, what it does; none: not listed).
struct Subcommand {
  const char* name;
  int (*run)(int argc, char** argv);
  std::vector<std::pair<const char*, const char*>> help;
};

// The one place a subcommand is named and chosen; --help's list is made from it.
const std::vector<Subcommand>& Subcommands() {
  static const std::vector<Subcommand> table = {
      {"grade", Grade, GradeHelp()},
      {"compare",
       Compare,
       {{"compare BASE NEW", "per-case ratios of two result files, with significance"}}},
      {"ab",
       [](int argc, char** argv) { return AB(argc, argv, MakeTasks()); },
       {{"ab --kernels-b DIR ...", "two kernel folders or builds timed in turns, paired rounds"}}},
      {"plot", Plot, {{"plot RESULTS...", "throughput plots (PNG/SVG) of result files"}}},
      {"report",
       Report,
       {{"report RESULTS... -o F",
         "one self-contained HTML page of result files (and their comparison); or Markdown"}}},
      {"tune",
       [](int argc, char** argv) { return Tune(argc, argv, MakeTasks()); },
       {{"tune", "search this device's best settings and write its profile"}}},
      {"serve", Serve, {}},
  };
  return table;
}

// The benchmark's --help after its options: the subcommands, a line each.
std::string SubcommandsHelp() {
  std::string text = "Subcommands (each with its own --help):\n";
  for (const auto& s : Subcommands())
    for (const auto& [usage, what] : s.help)
      text += fmt::format("  {:<24} {}\n", usage, what);
  return text +
         "Beside it: build/kernel-info (a kernel's registers, local and private memory per "
         "device).";
}

}  // namespace

int main(int argc, char** argv) {
  SaveEnvironment();
  for (const auto& s : Subcommands())
    if (argc > 1 && std::string(argv[1]) == s.name)
      return s.run(argc - 1, argv + 1);
  return RunCommand(argc, argv, SubcommandsHelp());
}
