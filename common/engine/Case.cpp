#include "engine/Case.h"

#include "platform/Errors.h"

#include <fmt/format.h>

namespace rsb {

Case ResolveCase(const IComputeTask& task, const std::string& variant, const ProblemSpec& spec,
                 const DeviceInfo& device) {
  Case c;
  c.task = &task;
  c.variant = variant;
  c.spec = spec;
  c.spec.localSize = task.LocalSize(variant, spec, device);
  c.tuning = task.Tuning(device, variant, c.spec);
  try {
    if (c.spec.localSize > device.maxWorkGroupSize)
      throw VariantSkipped(
          fmt::format("local size {} exceeds the device's maximum work-group size {}",
                      c.spec.localSize, device.maxWorkGroupSize));
    c.plan = task.PlanFor(device, variant, c.spec);
    c.cost = CostOf(c.plan);
    c.kernelOptions = c.plan.BuildOptions();
    c.memory = c.plan.memory;
    c.planned = true;
    if (spec.type == ElementType::Double && !device.fp64)
      throw VariantSkipped("the device has no double precision (cl_khr_fp64)");
  } catch (const VariantSkipped& e) {
    c.skip = e.what();
  }
  return c;
}

Case UnresolvedCase(const IComputeTask& task, const std::string& variant, const ProblemSpec& spec) {
  Case c;
  c.task = &task;
  c.variant = variant;
  c.spec = spec;
  c.tuning = task.Tuning(DeviceInfo(), variant, spec);
  return c;
}

}  // namespace rsb
