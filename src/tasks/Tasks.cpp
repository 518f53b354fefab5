#include "tasks/Tasks.h"

#include "tasks/CConvolutionTask.h"
#include "tasks/CReductionTask.h"
#include "tasks/CScanTask.h"

namespace rsb {

std::vector<std::unique_ptr<IComputeTask>> MakeTasks() {
  std::vector<std::unique_ptr<IComputeTask>> tasks;
  tasks.push_back(std::make_unique<CReductionTask>());
  tasks.push_back(std::make_unique<CScanTask>());
  tasks.push_back(std::make_unique<CConvolutionTask>());
  return tasks;
}

std::vector<std::string> TaskFields() {
  return FieldNames(FieldParams(MakeTasks()));
}

}  // namespace rsb
