// CScanTask: prefix sum (scan) of n elements with the operator (sum, min, max), inclusive or
// exclusive, out of place, in the variants of the course material (kernels/Scan.cl).
#pragma once

#include "HostData.h"
#include "IComputeTask.h"
#include "TaskUtil.h"

#include <string>
#include <vector>

namespace rsb {

class CScanTask : public IComputeTask {
 public:
  // How the host drives a variant's kernel; several variants share one shape.
  enum class Shape {
    GlobalSteps,  // one launch per Hillis-Steele step in global memory, ping-pong buffers
    // Multi-level: tiles of 2L scanned per work-group, the tile totals (block sums) scanned
    // level after level with the same kernel, then AddBlockOffsets per level. The two differ
    // only in the cost model of the work-group scan.
    KoggeStoneTiles,
    BlellochTiles,
    // One launch: chained scan with decoupled look-back over tiles of LocalSize * items.
    SinglePass,
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

  std::string Name() const override { return "scan"; }
  std::vector<std::string> Variants() const override;
  std::string Describe(const std::string& variant) const override;
  std::vector<ScanKind> ScanKinds() const override { return AllScanKinds(); }
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

  // For tests: scans the given input (spec.type, input.Size() elements) once with the variant
  // through the same code paths as a benchmark run and returns the output array. spec.localSize
  // 0 means the variant's default. Throws VariantSkipped like a run would.
  HostArray RunOnce(cl::CommandQueue& queue, ProgramCache& programs, const std::string& variant,
                    ProblemSpec spec, const HostArray& input);

  // The single-pass tile: local size x these elements per work-item, by code path.
  static size_t SinglePassGpuItems();
  static size_t SinglePassCpuItems();

  // For tests: every look-back computes each predecessor's aggregate from the input, as if no
  // predecessor had published: exercises the fallback path deterministically.
  void SetFallbackOnly(bool on) { fallbackOnly_ = on; }
  // For tests: single-pass uses its GPU code path (register tiles, coalesced loads through
  // local memory) whatever the device, so that CI's CPU device checks it too.
  void ForceGpuCodePath(bool on) { forceGpuPath_ = on; }
  // For tests: the GPU code path's portable work-group scan (local memory, barriers) even where
  // the device's warp-shuffle scan would be used, so that both are checked on such a device.
  void SetPortableWorkGroupScan(bool on) { portableOnly_ = on; }

 private:
  const Variant& Find(const std::string& name) const;
  void Upload(const ProblemSpec& spec, ProgramCache& programs, cl::CommandQueue& queue,
              HostArray input);

  ProgramCache* programs_ = nullptr;
  DeviceInfo device_;
  HostArray input_;
  Expected expected_;
  Op op_ = Op::Sum;
  ScanKind kind_ = ScanKind::Inclusive;
  cl::Buffer input_d_, output_d_;
  // GlobalSteps: the ping-pong partner of the output. Multi-level: blockSums_[l] holds the tile
  // totals of level l (the elements of level l + 1), scanned in place to become level l's
  // tile offsets.
  ScratchBuffer pingPong_;
  std::vector<ScratchBuffer> blockSums_;
  // Set by PrepareRun for the variant and spec of the next ComputeGPU (owned by kernels_).
  cl::Kernel* scanKernel_ = nullptr;
  cl::Kernel* addKernel_ = nullptr;
  std::vector<size_t> levels_;  // multi-level: elements per level, levels_[0] = n
  // SinglePass: one status word per tile and the ticket counter. Each launch gets a new
  // generation and the ticket of its first tile, so nothing is reset between launches.
  size_t SinglePassItems() const { return GpuPath() ? SinglePassGpuItems() : SinglePassCpuItems(); }
  size_t SinglePassTiles(size_t n, size_t L) const { return CeilDiv(n, L * SinglePassItems()); }
  ScratchBuffer status_, ticket_;
  size_t statusTiles_ = 0;
  cl_uint generation_ = 0, ticketBase_ = 0;
  KernelCache kernels_;
  bool fallbackOnly_ = false;
  bool portableOnly_ = false;
  bool forceGpuPath_ = false;
  bool GpuPath() const { return device_.isGpu || forceGpuPath_; }
};

}  // namespace rsb
