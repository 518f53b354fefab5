#include "Tasks.h"

#include "CConvolutionTask.h"
#include "CReductionTask.h"
#include "CScanTask.h"

namespace rsb {

namespace {

// The convolution's sequential work (--explain): W multiply-adds for each of the n outputs in
// 1-D, W^2 in 2-D, ghost taps included, as its plans count their work. It belongs in
// CConvolutionTask itself; it lives here while that file is being reworked on another branch.
class ConvolutionTask final : public CConvolutionTask {
 public:
  uint64_t SequentialWork(const std::string& variant, const ProblemSpec& spec) const override {
    const uint64_t w = Param(Parameters(), spec, "mask-width");
    return uint64_t(spec.n) * (TakesShape(variant) ? w * w : w);
  }
};

}  // namespace

std::vector<std::unique_ptr<IComputeTask>> MakeTasks() {
  std::vector<std::unique_ptr<IComputeTask>> tasks;
  tasks.push_back(std::make_unique<CReductionTask>());
  tasks.push_back(std::make_unique<CScanTask>());
  tasks.push_back(std::make_unique<ConvolutionTask>());
  return tasks;
}

}  // namespace rsb
