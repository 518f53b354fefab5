// --cases FILE: exactly the cases a file lists, in its order, instead of the cross product of
// --task, --variant, --size, --type, --op, --scan-kind, --local-size and the task parameters.
// Any mix of sizes, types, variants and local sizes runs in one process this way, each case once.
//
//   {"cases": [{"task": "reduction", "variant": "interleaved", "type": "uint", "op": "sum",
//               "n": 4097, "local_size": 16},
//              {"task": "scan", "variant": "naive", "type": "int", "op": "min",
//               "scan_kind": "exclusive", "n": 1000},
//              {"task": "convolution", "variant": "tiled-2d", "type": "float", "op": "sum",
//               "n": 4096, "height": 64, "params": {"mask-width": 5}}]}
//
// A parameter that is a key of the case (TaskParameter::field: scan_kind) is a field of its own,
// required for its task. "local_size" absent or 0: auto; "height" > 0: an image of n / height
// columns. Each case is one job of one variant; the rest of the problem (seed, code path, --tune)
// is the command line's.
#pragma once

#include "engine/Runner.h"
#include "tasks/Tasks.h"

#include <string>
#include <vector>

namespace rsb {

// Throws UsageError naming the file, the case (1-based) and the field for anything the tasks
// do not compute, as the command line's own options are checked.
std::vector<Job> CasesFromFile(const std::string& path,
                               const std::vector<std::unique_ptr<IComputeTask>>& tasks,
                               const ProblemSpec& base);

}  // namespace rsb
