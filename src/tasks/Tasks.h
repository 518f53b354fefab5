// The tasks this program knows. Adding a task (say, convolution) means one line in Tasks.cpp;
// the runner and the reporter do not change.
#pragma once

#include "engine/IComputeTask.h"

#include <memory>
#include <vector>

namespace rsb {
std::vector<std::unique_ptr<IComputeTask>> MakeTasks();
}
