// The command line: parsed with CLI11, each option checked by its own validator so that bad input
// of any kind ends in a UsageError naming the option, the value and what is allowed (exit
// status 2), before anything runs or any file is touched.
#pragma once

#include "engine/IComputeTask.h"
#include "engine/Runner.h"
#include "platform/Types.h"
#include "report/Report.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class Validator;
}

namespace rsb {

// "16M" (a plain count) or "8192x8192" (an image, width x height, each written as a size);
// nullopt when malformed or beyond kMaxElements.
std::optional<Extent> ParseExtent(const std::string& v);
// "FIRST:LAST" (doubling) or "FIRST:LAST:FACTOR" (FACTOR >= 2), each bound read by parse: FIRST,
// FIRST * FACTOR, ... while at most LAST. nullopt where malformed or FIRST is 0 or above LAST.
std::optional<std::vector<unsigned long long>> ExpandRange(
    const std::string& v,
    const std::function<std::optional<unsigned long long>(const std::string&)>& parse);

struct Options {
  bool help = false;
  std::string helpText;
  bool listDevices = false;
  bool listVariants = false;
  bool quiet = false;
  bool verbose = false;   // --verbose: a build log says the kernel's build options
  bool failFast = false;  // --fail-fast: stop after the first case that failed, errored or hung
  std::string platform, kernels, output;
  // --device: each an index or a name substring, or "all" (empty: the first GPU, else the first
  // device); the selection runs on each device selected (CLUtil.h's SelectDevices).
  std::vector<std::string> devices;
  std::vector<std::string> tasks;     // selected tasks, in the order known to the program
  std::vector<std::string> variants;  // empty: every variant of every selected task
  // The axes every selected task is swept over.
  std::vector<ElementType> types = {ElementType::Uint};
  std::vector<Op> ops = {Op::Sum};
  // Element counts, or images (--size WxH) for the variants that take shapes.
  std::vector<Extent> sizes = {Extent{size_t(1) << 24, 0}};
  // Values of the tasks' parameters (--mask-width 5,9; --scan-kind all: named values by index),
  // by name: swept like the sizes; a task's parameter not given takes its default.
  std::map<std::string, std::vector<size_t>> params;
  // --local-size: every case runs at each (0: auto, the variant's best for the device); a variant
  // whose sizes resolve to the same one (auto = 256) runs at it once.
  std::vector<size_t> localSizes = {0};
  // --cases FILE: exactly the cases the file lists (src/run/CaseFile.h) instead of the cross
  // product of the options above.
  std::string casesFile;
  // Everything else a case takes (seed, code path, tuning), the same for every case; its local
  // size is set per job from localSizes.
  ProblemSpec problem;
  // Tuning profiles (src/run/Profile.h): --profile FILE instead of the device's own; --no-profile:
  // none, every variant's defaults.
  std::string profile;
  bool noProfile = false;
  OutputFormat format = DefaultFormat();
  // --json FILE, --csv FILE, --markdown FILE: the report in that format to a file of its own as
  // well, beside --format's on stdout or --output; each its own file (one twice is refused).
  struct FileOutput {
    OutputFormat format;
    std::string option, path;  // option: "--json"
  };
  std::vector<FileOutput> files;
  bool breakdown = false;  // --breakdown: the per-kernel breakdown under each case in the table
  RunSettings run;
  // --explain: the course's measures of every selected case from its launch plan (launches, S(n),
  // W(n), p, cost, the optimality verdicts, bytes), nothing run or timed (common/engine/Explain.h).
  bool explain = false;
  // Cases in worker processes the suite can kill (the default; engine/Worker.h): one for all
  // (isolate), or one per problem (perProblem, --isolate); --no-isolate: in this process.
  bool isolate = true;
  bool perProblem = false;
  bool noIsolate = false;
  // --no-ceilings: timed without measuring the memory ceilings first (no utilisation); the
  // profiling timer is still checked.
  bool noCeilings = false;
  // --repetitions: the selection timed in this many rounds, one case after another in each
  // (src/run/Bench.cpp); 1: one round.
  size_t repetitions = 1;
  double timeoutS = 0;  // --timeout: seconds a case may run (0: no limit)
  // --check --oclgrind: the cases run on Oclgrind, its diagnostics fail them
  // (common/engine/Oclgrind.h); implies isolation; the device is Oclgrind's, whatever --platform
  // and --device say.
  bool oclgrind = false;
  // Set when this process is a worker started by an isolated run (a `serve` request's "worker",
  // src/run/Serve.h): it runs the variants of job `job` from the skip-th on and reports each on
  // file descriptor fd.
  struct Worker {
    int fd = -1;
    size_t job = 0, skip = 0;
    std::string scope = "job";  // how far it runs: job, rest (every job after) or case
    size_t device = 0;          // which of the selected devices (--device all: their order)
    bool bandwidth = false;     // measure the copy bandwidth first
    // The device's profiling timer as an earlier worker found it (TimerText): "usable", or why
    // it is not; empty: not known yet (a timed run's worker checks it and says so).
    std::string timer;
    std::vector<std::string> buildFailed;  // programs known not to build (BuildKey, Runner.h)
  } worker;
  // Which of these were on the command line: a bare --check (none of --size, --type, --op and
  // the parameters that are keys of a case, TaskParameter::field: --scan-kind) runs the
  // correctness matrix (src/run/CheckMatrix.h); an explicit --local-size narrows it to those
  // local sizes.
  bool sizesGiven = false, typesGiven = false, opsGiven = false;
  std::vector<std::string> keyParamsGiven;  // their names
  bool localSizeGiven = false;
  bool tasksGiven = false;  // --task on the command line (not all): a task left with no case is
                            // a usage error
  // --check without --size, --type, --op or a parameter that is a key of a case.
  bool BareCheck() const {
    return !run.timed && !explain && casesFile.empty() && !sizesGiven && !typesGiven && !opsGiven &&
           keyParamsGiven.empty();
  }
};

// What the parser needs to know of each task.
struct TaskEntry {
  std::string name;
  std::vector<std::string> variants;
  std::vector<TuningKnob> knobs;
  std::vector<TaskParameter> params;
  std::vector<TunedSpace> spaces;  // what `tune` searches (IComputeTask::TunedSpaces)
};
using TaskCatalog = std::vector<TaskEntry>;

// What the command line knows of each task: its name, variants, knobs, parameters, tuned spaces.
TaskCatalog CatalogOf(const std::vector<std::unique_ptr<IComputeTask>>& tasks);

// --tune NAME=VALUE: one of `knobs` with a value it allows, else "'NAME=VALUE': not allowed;
// allowed: ..." or "unknown knob" (CLI11 adds the option's name).
CLI::Validator TuneCheck(const std::vector<TuningKnob>& knobs);
// The values of --tune arguments that TuneCheck passed, by knob name.
std::map<std::string, size_t> TuningOf(const std::vector<std::string>& tune);

// Throws UsageError on bad input. subcommandsHelp: --help's footer (main's table of subcommands).
Options ParseCommandLine(int argc, const char* const* argv, const TaskCatalog& catalog,
                         const std::string& subcommandsHelp = "");

}  // namespace rsb
