#include "engine/LaunchPlan.h"

#include "platform/CLUtil.h"

#include <algorithm>
#include <set>

namespace rsb {

LaunchStep& LaunchStep::Costs(uint64_t read, uint64_t written, uint64_t opCount,
                              uint64_t stepCount) {
  cost.bytesRead = read;
  cost.bytesWritten = written;
  cost.ops = opCount;
  cost.steps = stepCount;
  return *this;
}

LaunchStep& LaunchStep::Repeated(uint64_t bytes) {
  cost.bytesReadRepeated = std::min(bytes, cost.bytesRead);
  return *this;
}

LaunchStep& LaunchStep::As(std::string stepRole) {
  role = std::move(stepRole);
  return *this;
}

std::string LaunchStep::Name() const {
  const std::string base = kernel.empty() ? "FillBuffer" : kernel;
  return role.empty() ? base : base + " (" + role + ")";
}

LaunchStep KernelStep(std::string kernel, std::vector<KernelArg> args, size_t workItems,
                      size_t localSize) {
  LaunchStep s;
  s.kernel = std::move(kernel);
  s.args = std::move(args);
  s.localSize = localSize;
  s.globalSize = (workItems + localSize - 1) / localSize * localSize;
  return s;
}

void CountCacheServedReads(LaunchPlan& plan, uint64_t cacheBytes) {
  if (cacheBytes == 0)
    return;
  uint64_t before = 0;  // what the previous command wrote
  for (LaunchStep& s : plan.steps) {
    if (before > 0 && before <= cacheBytes)
      s.cost.bytesReadRepeated += std::min(s.cost.DistinctBytesRead(), before);
    before = s.cost.bytesWritten;
  }
}

std::string LaunchPlan::BuildOptions() const {
  std::string o = index64 ? options + " -DRSB_INDEX64=1" : options;
  std::set<std::string> kernels;
  for (const auto* list : {&prepare, &steps})
    for (const LaunchStep& s : *list)
      if (!s.kernel.empty())
        kernels.insert(s.kernel);
  if (!kernels.empty())
    o += kKernelSelection;
  for (const auto& k : kernels)
    o += " -DRSB_KERNEL_" + k + "=1";
  return o;
}

bool StepsTouch(const LaunchPlan& plan, size_t buffer) {
  for (const LaunchStep& s : plan.steps) {
    if (s.kernel.empty() && s.fillBuffer == buffer)
      return true;
    for (const KernelArg& a : s.args)
      if (const auto* b = std::get_if<BufferArg>(&a); b && b->id == buffer)
        return true;
  }
  return false;
}

CostModel CostOf(const LaunchPlan& plan) {
  CostModel c;
  for (const LaunchStep& s : plan.steps) {
    ++c.launches;
    c.steps += s.cost.steps;
    c.ops += s.cost.ops;
    c.bytesRead += s.cost.bytesRead;
    c.bytesWritten += s.cost.bytesWritten;
    c.bytesReadRepeated += s.cost.bytesReadRepeated;
    c.workItems = std::max<uint64_t>(c.workItems, s.globalSize);
  }
  return c;
}

}  // namespace rsb
