// `reduce-scan-bench grade [--rubric FILE] [--timeout S] [--output-dir DIR] HANDIN...`: scores
// hand-ins (folders with kernels/ and optionally src/tasks/CReductionTask.*, src/tasks/CScanTask.*)
// against a rubric. A hand-in's code never runs in this process: every rubric item is a child run
// of the suite's own binary (or of one built from the hand-in's task sources against the suite's
// runner, validation and reference) under a deadline enforced here. Writes DIR/<name>.md,
// DIR/<name>.json, DIR/summary.csv, DIR/index.md, DIR/index.html and DIR/grading.json.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace rsb {

// --jobs' default: on a CPU device the cores; on a GPU 16 where resident child runs take the
// hand-ins' runs (residents on, --sandbox none: process starts no longer serialise in the
// driver), else 4; never more than the cores, never 0 (docs/COURSE.md, docs/BENCHMARKS.md).
size_t DefaultJobs(bool cpuDevice, bool residents, bool sandboxNone, size_t cores);

// argv[0] is "grade". Returns the exit status: 0 reports written, 2 bad input, 3 system error
// (output folder not writable), 130 interrupted.
int Grade(int argc, char** argv);

// The lines the benchmark's --help lists for `grade` (usage, what it does).
std::vector<std::pair<const char*, const char*>> GradeHelp();

}  // namespace rsb
