#include "Tasks.h"

#include "CConvolutionTask.h"
#include "CReductionTask.h"
#include "CScanTask.h"

namespace rsb {

std::vector<std::unique_ptr<IComputeTask>> MakeTasks() {
  std::vector<std::unique_ptr<IComputeTask>> tasks;
  tasks.push_back(std::make_unique<CReductionTask>());
  tasks.push_back(std::make_unique<CScanTask>());
  tasks.push_back(std::make_unique<CConvolutionTask>());
  return tasks;
}

}  // namespace rsb
