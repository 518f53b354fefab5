// Explain (--explain): the course's measures of one case, from the launch plan the runner
// enqueues and times (CostModel), without running anything: launches, parallel steps S(n), work
// W(n), the work-items launched p, the cost p * S(n), the bytes moved, and whether the variant is
// work-optimal and cost-optimal. A plan needs only the device's description (DeviceInfo), no
// context: nothing is built, enqueued or timed. The reporter prints (Report.h).
//
// The verdicts are asymptotic, as in the course: W(n) = O(Wseq(n)) and p * S(n) = O(Wseq(n)),
// with Wseq the sequential algorithm's work (IComputeTask::SequentialWork: n - 1 operator
// applications; n W multiply-adds for a convolution). The same model is evaluated again with n
// and the local size both kExplainScale times larger (as many work-groups as at n: the course's
// analyses let a work-group's tree or network grow with the input), and a ratio to Wseq that
// grows by the factor kExplainGrowth or more (from at least 1) is not O(1). A log n or log L factor
// grows by at least 45% there (log2 n <= 31 becomes log2 n + 16); a constant ratio stays as it is
// (tiles, levels and partials keep their number).
#pragma once

#include "engine/IComputeTask.h"
#include "engine/Runner.h"
#include "platform/CLUtil.h"

#include <cstdint>
#include <optional>
#include <string>

namespace rsb {

constexpr uint64_t kExplainScale = uint64_t(1) << 16;  // n and L, for the verdicts
constexpr double kExplainGrowth = 1.3;  // a ratio to Wseq that grows this much is not bounded

struct Explanation {
  // The case: what it is, its resolved local size and its cost model (c.cost: launches, steps
  // S(n), ops W(n), workItems p, bytes); status passed (explained) or skipped (c.message why: the
  // runner would skip it on this device). c.device: which device of the run.
  Result c;
  uint64_t sequentialWork = 0;  // Wseq(n)
  // W / Wseq and p S / Wseq (Wseq taken as at least 1), at n and at kExplainScale n.
  double workRatio = 0, costRatio = 0;
  double scaledWorkRatio = 0, scaledCostRatio = 0;
  // nullopt where the model at the larger size could not be made.
  std::optional<bool> workOptimal, costOptimal;

  bool Explained() const { return c.status == Status::Passed; }
  uint64_t Cost() const { return c.cost.workItems * c.cost.steps; }  // p * S(n)
};

// The measures of one variant on one problem (spec.localSize 0: the variant's best, as a run
// resolves it) on this device.
Explanation Explain(const IComputeTask& task, const std::string& variant, ProblemSpec spec,
                    const DeviceInfo& device);

}  // namespace rsb
