// The tasks this program knows. Adding a task (say, convolution) means one line in Tasks.cpp;
// the runner and the reporter do not change.
#pragma once

#include "engine/IComputeTask.h"

#include <memory>
#include <string>
#include <vector>

namespace rsb {
std::vector<std::unique_ptr<IComputeTask>> MakeTasks();
// The fields of the tasks' parameters (FieldParams): the results' CSV columns after `op`, the
// fields a results file's reader looks for.
std::vector<std::string> TaskFields();
}  // namespace rsb
