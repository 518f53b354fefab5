// CReductionTask: reduce n elements to one value with the operator (sum, min, max), in the
// variants of the course material (kernels/Reduction.cl).
#pragma once

#include "HostData.h"
#include "IComputeTask.h"
#include "TaskUtil.h"

#include <string>
#include <vector>

namespace rsb {

class CReductionTask : public IComputeTask {
 public:
  // How the host drives a variant's kernel; several variants share one shape.
  enum class Shape {
    GlobalInterleaved,  // one launch per step, stride doubling (ReduceInterleaved)
    GlobalSequential,   // one launch per step, halving (ReduceSequential)
    MultiLevel,         // one launch per level of work-group partials, ping-pong buffers
    Atomic,             // fill with the identity, then one launch combining with atomics
    SinglePass,         // one launch: wide loads, work-group trees, last work-group combines
  };
  struct Variant {
    std::string name;
    std::string kernel;
    Shape shape;
    // Default local size by device type: the best of a sweep on the H100 (GPU) and on pocl
    // (CPU), docs/BENCHMARKS.md. --local-size overrides it.
    size_t gpuLocal, cpuLocal;
    std::string description;
  };
  static const std::vector<Variant>& VariantTable();

  std::string Name() const override { return "reduction"; }
  std::vector<std::string> Variants() const override;
  std::string Describe(const std::string& variant) const override;
  size_t LocalSize(const std::string& variant, const ProblemSpec& spec,
                   const DeviceInfo& device) const override;

  void InitResources(const ProblemSpec& spec, ProgramCache& programs,
                     cl::CommandQueue& queue) override;
  void ComputeCPU() override;
  void ReleaseResources() override;

  void PrepareRun(cl::CommandQueue& queue, const std::string& variant, const ProblemSpec& spec,
                  bool poison) override;
  void ComputeGPU(cl::CommandQueue& queue, const std::string& variant, const ProblemSpec& spec,
                  RunEvents& events) override;
  Validation ValidateResults(cl::CommandQueue& queue, const std::string& variant,
                             const ProblemSpec& spec) override;
  CostModel Cost(const std::string& variant, const ProblemSpec& spec) const override;

  // For tests: single-pass uses its GPU loop order and launch shape whatever the device, so
  // that CI's CPU device checks that code path too.
  void ForceGpuCodePath(bool on) { forceGpuPath_ = on; }

 private:
  bool GpuPath() const { return device_.isGpu || forceGpuPath_; }
  bool forceGpuPath_ = false;
  const Variant& Find(const std::string& name) const;
  cl::Kernel& Kernel(const Variant& v, const ProblemSpec& spec);
  // Work-groups of the single-pass launch: enough to fill the device, never more than the
  // input has vectors for.
  size_t SinglePassGroups(const ProblemSpec& spec) const;

  ProgramCache* programs_ = nullptr;
  DeviceInfo device_;
  HostArray input_;
  Expected expected_;
  Op op_ = Op::Sum;
  cl::Buffer input_d_, result_d_;
  ScratchBuffer work_[2];
  ScratchBuffer partials_, counter_;
  KernelCache kernels_;
};

}  // namespace rsb
