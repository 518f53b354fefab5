// Case: one variant on one problem, resolved on a device. ResolveCase is the one place a case's
// local size, tile and tuning values and plan are worked out (the plan once: every run takes it)
// and the one check, before a run, of what the device lacks for it (its maximum work-group size,
// double precision, what the plan skips for); the runner, the worker, --explain, tune, the jobs and
// the check matrix take it.
#pragma once

#include "engine/IComputeTask.h"

#include <map>
#include <string>

namespace rsb {

struct Case {
  const IComputeTask* task = nullptr;
  std::string variant;
  ProblemSpec spec;                      // spec.localSize resolved
  std::map<std::string, size_t> tuning;  // every knob's value, the tile's as it fits the device
  bool planned = false;                  // the plan was made: cost and kernelOptions are its
  LaunchPlan plan;                       // what every run of the case enqueues (RunData.h)
  CostModel cost;
  std::string kernelOptions;
  MemoryNeeds memory;  // what the case holds at once, from its plan
  std::string skip;    // why the case cannot run on the device; empty: it can
  bool Runs() const { return skip.empty(); }
};

// The case of `variant` on `spec` on the device: spec.localSize as given, else the variant's best
// for the device; then, in this order, the skips for a local size beyond the device's maximum
// work-group size, for what the plan cannot do on the device, and for double precision the
// device lacks (Case::skip, the VariantSkipped reason word for word).
Case ResolveCase(const IComputeTask& task, const std::string& variant, const ProblemSpec& spec,
                 const DeviceInfo& device);
// The case as the command line gives it, before a device is known (a progress line's label): its
// local size as given (0: auto), the knobs' defaults and --tune's; not planned.
Case UnresolvedCase(const IComputeTask& task, const std::string& variant, const ProblemSpec& spec);

}  // namespace rsb
