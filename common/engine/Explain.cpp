#include "engine/Explain.h"

#include "engine/Case.h"

#include "platform/Errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace rsb {

namespace {

// p * S / Wseq and W / Wseq of a cost model (Wseq at least 1: n = 1 has no sequential work).
double Ratio(double x, uint64_t sequentialWork) {
  return x / double(std::max<uint64_t>(1, sequentialWork));
}

// The problem with n and the local size both kExplainScale times larger: an image grows by
// sqrt(kExplainScale) in each direction.
ProblemSpec Scaled(const ProblemSpec& spec) {
  ProblemSpec big = spec;
  big.n = spec.n * kExplainScale;
  if (spec.height)
    big.height = spec.height * 256;  // 256^2 = kExplainScale
  big.localSize = spec.localSize * kExplainScale;
  return big;
}

// The device as the model sees it at the larger size: no memory or work-group limit (the
// verdict is about the algorithm, not about what fits on this device).
DeviceInfo Unlimited(DeviceInfo device) {
  constexpr auto kLots = std::numeric_limits<unsigned long long>::max() / 4;
  device.globalMemBytes = device.maxAllocBytes = device.localMemBytes = kLots;
  device.maxWorkGroupSize = std::numeric_limits<size_t>::max() / 4;
  return device;
}

}  // namespace

Explanation Explain(const IComputeTask& task, const std::string& variant, ProblemSpec spec,
                    const DeviceInfo& device) {
  Explanation e;
  // The case as the runner resolves and checks it.
  const Case c = ResolveCase(task, variant, spec, device);
  spec = c.spec;
  e.c = NewResult(c, device);
  if (!c.Runs()) {
    e.c.status = Status::Skipped;
    e.c.message = c.skip;
    return e;
  }
  e.c.cost = c.cost;
  e.c.status = Status::Passed;
  e.sequentialWork = task.SequentialWork(variant, spec);
  e.workRatio = Ratio(double(e.c.cost.ops), e.sequentialWork);
  e.costRatio = Ratio(double(e.c.cost.workItems) * double(e.c.cost.steps), e.sequentialWork);
  if (e.c.cost.workItems * e.c.cost.steps < e.c.cost.ops)
    e.c.message =
        "p * S(n) < W(n): the plan's S(n) counts the phases between barriers and launches, not "
        "the operations each work-item does one after another (the course's S(n) is at least "
        "W(n) / p)";
  const ProblemSpec big = Scaled(spec);
  const Case scaled = ResolveCase(task, variant, big, Unlimited(device));
  if (!scaled.Runs())  // no model at the larger size: the verdicts stay unknown
    return e;
  const uint64_t sequential = task.SequentialWork(variant, big);
  e.scaledWorkRatio = Ratio(double(scaled.cost.ops), sequential);
  e.scaledCostRatio = Ratio(double(scaled.cost.workItems) * double(scaled.cost.steps), sequential);
  // From at least 1: at n = 1 a reduction does no work at all.
  e.workOptimal = e.scaledWorkRatio < kExplainGrowth * std::max(1.0, e.workRatio);
  e.costOptimal = e.scaledCostRatio < kExplainGrowth * std::max(1.0, e.costRatio);
  return e;
}

}  // namespace rsb
