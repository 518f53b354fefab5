#include "CReductionTask.h"

#include "Errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace rsb {

namespace {
constexpr const char* kFile = "Reduction.cl";
// Single-pass tuning, by device type (XTUNE environment overrides are for experiments only).
const size_t kGpuUnroll = TuningValue("RSB_TUNE_GPU_UNROLL", 8);
const size_t kGpuThreadsPerCu = TuningValue("RSB_TUNE_GPU_THREADS_PER_CU", 1024);
const size_t kCpuUnroll = TuningValue("RSB_TUNE_CPU_UNROLL", 4);
const size_t kCpuGroupsPerCu = TuningValue("RSB_TUNE_CPU_GROUPS", 4);
}  // namespace

const std::vector<CReductionTask::Variant>& CReductionTask::VariantTable() {
  static const std::vector<Variant> table = {
      {"interleaved", "ReduceInterleaved", Shape::GlobalInterleaved, 128, 16,
       "tree in global memory, interleaved addressing, one launch per step"},
      {"sequential", "ReduceSequential", Shape::GlobalSequential, 128, 64,
       "tree in global memory, sequential (coalesced) addressing, one launch per step"},
      {"decomposition", "ReduceDecomposition", Shape::MultiLevel, 256, 16,
       "work-group trees in local memory, one launch per level, ping-pong buffers"},
      {"unrolled", "ReduceUnrolled", Shape::MultiLevel, 256, 16,
       "decomposition with the tree unrolled at compile-time strides"},
      {"atomic", "ReduceAtomic", Shape::Atomic, 256, 16,
       "one level of work-group trees, results combined with atomics, one launch"},
      {"single-pass", "ReduceSinglePass", Shape::SinglePass, 256, 1,
       "one launch, wide loads, many elements per work-item, last work-group combines"},
  };
  return table;
}

std::vector<std::string> CReductionTask::Variants() const {
  return VariantNames(VariantTable());
}

const CReductionTask::Variant& CReductionTask::Find(const std::string& name) const {
  return FindVariant(VariantTable(), Name(), name);
}

std::string CReductionTask::Describe(const std::string& variant) const {
  return Find(variant).description;
}

size_t CReductionTask::LocalSize(const std::string& variant, const ProblemSpec& spec,
                                 const DeviceInfo& device) const {
  return DefaultLocalSize(Find(variant), spec, device);
}

void CReductionTask::InitResources(const ProblemSpec& spec, ProgramCache& programs,
                                   cl::CommandQueue& queue) {
  programs_ = &programs;
  device_ = DescribeDevice(programs.Device());
  op_ = spec.op;
  input_ = HostArray();
  input_d_ = UploadInput(spec, device_, programs.Context(), queue, input_);
  result_d_ = cl::Buffer(programs.Context(), CL_MEM_READ_WRITE, sizeof(cl_ulong));
}

void CReductionTask::ComputeCPU() {
  expected_ = ReferenceReduce(input_, op_);
}

void CReductionTask::ReleaseResources() {
  input_d_ = cl::Buffer();
  result_d_ = cl::Buffer();
  work_[0].Release();
  work_[1].Release();
  input_ = HostArray();
}

cl::Kernel& CReductionTask::Kernel(const Variant& v, const ProblemSpec& spec) {
  std::string options =
      KernelBuildOptions(spec.type, spec.op) + fmt::format(" -DLOCAL_SIZE={}", spec.localSize);
  if (device_.int64BaseAtomics)
    options += " -DHAS_INT64_BASE_ATOMICS=1";
  if (device_.int64ExtendedAtomics)
    options += " -DHAS_INT64_EXTENDED_ATOMICS=1";
  if (v.shape == Shape::SinglePass) {
    // 16-byte loads. GPU: UNROLL independent loads in flight per work-item, grid-stride order.
    // CPU: each work-item streams through its own contiguous chunk.
    options += fmt::format(" -DVEC={} -DUNROLL={}", 16 / SizeOf(spec.type),
                           GpuPath() ? kGpuUnroll : kCpuUnroll);
    if (!GpuPath())
      options += " -DCONTIGUOUS_CHUNKS=1";
  }
  const char* file = v.shape == Shape::SinglePass ? "SinglePassReduction.cl" : kFile;
  return kernels_.Get(*programs_, file, options, v.kernel, spec.localSize);
}

size_t CReductionTask::SinglePassGroups(const ProblemSpec& spec) const {
  const size_t L = spec.localSize;
  const size_t vectors = std::max<size_t>(1, spec.n / (16 / SizeOf(spec.type)));
  // GPU: 1024 work-items per compute unit, UNROLL = 8 loads in flight each (best of a sweep on
  // the H100, docs/BENCHMARKS.md);
  // CPU: a few work-groups per core so that the cores share the work evenly.
  const size_t perCu = GpuPath() ? std::max<size_t>(1, kGpuThreadsPerCu / L) : kCpuGroupsPerCu;
  return std::max<size_t>(1, std::min(device_.computeUnits * perCu, CeilDiv(vectors, L)));
}

void CReductionTask::PrepareRun(cl::CommandQueue& queue, const std::string& variant,
                                const ProblemSpec& spec, bool poison) {
  const Variant& v = Find(variant);
  const size_t size = SizeOf(spec.type), L = spec.localSize, n = spec.n;
  if ((v.shape == Shape::Atomic || v.shape == Shape::SinglePass) && SizeOf(spec.type) == 8 &&
      !device_.int64BaseAtomics)
    throw VariantSkipped(
        fmt::format("{} has no 64-bit atomics on this device "
                    "(cl_khr_int64_base_atomics)",
                    ToString(spec.type)));
  switch (v.shape) {
    case Shape::GlobalInterleaved:
    case Shape::GlobalSequential:
      work_[0].Ensure(programs_->Context(), n * size);
      break;
    case Shape::MultiLevel:
      work_[0].Ensure(programs_->Context(), CeilDiv(n, 2 * L) * size);
      work_[1].Ensure(programs_->Context(), CeilDiv(n, 4 * L * L) * size);
      break;
    case Shape::Atomic:
      break;
    case Shape::SinglePass:
      partials_.Ensure(programs_->Context(), SinglePassGroups(spec) * sizeof(cl_ulong));
      // The kernel leaves its ticket counter at zero; zero it here too in case a run broke.
      queue.enqueueFillBuffer(counter_.Ensure(programs_->Context(), sizeof(cl_uint)), cl_uint(0), 0,
                              sizeof(cl_uint));
      break;
  }
  if (poison)
    Poison(queue, result_d_, spec.type, 1);
}

void CReductionTask::ComputeGPU(cl::CommandQueue& queue, const std::string& variant,
                                const ProblemSpec& spec, RunEvents& events) {
  const Variant& v = Find(variant);
  cl::Kernel& k = Kernel(v, spec);
  const size_t L = spec.localSize, n = spec.n;
  auto launch = [&](size_t workItems) {
    queue.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(RoundUp(workItems, L)), cl::NDRange(L),
                               nullptr, events.Next());
  };
  cl::Buffer* src = &input_d_;
  switch (v.shape) {
    case Shape::GlobalInterleaved:
      // Stride 1, 2, 4, ...: ceil(n / 2s) work-items; the step with 2s >= n is the last.
      for (size_t stride = 1;; stride *= 2) {
        const size_t count = CeilDiv(n, 2 * stride);
        const bool last = count == 1;
        cl::Buffer& dst = last ? result_d_ : work_[0].Get();
        k.setArg(0, *src);
        k.setArg(1, dst);
        k.setArg(2, cl_uint(n));
        k.setArg(3, cl_uint(stride));
        k.setArg(4, cl_uint(count));
        launch(count);
        if (last)
          break;
        src = &dst;
      }
      break;
    case Shape::GlobalSequential:
      // m elements left; h = ceil(m / 2) work-items combine i with i + h.
      for (size_t m = n;;) {
        const size_t half = CeilDiv(m, 2);
        const bool last = half == 1;
        cl::Buffer& dst = last ? result_d_ : work_[0].Get();
        k.setArg(0, *src);
        k.setArg(1, dst);
        k.setArg(2, cl_uint(m));
        k.setArg(3, cl_uint(half));
        launch(half);
        if (last)
          break;
        src = &dst;
        m = half;
      }
      break;
    case Shape::MultiLevel:
      // Each level turns m values into ceil(m / 2L) partials, alternating two buffers.
      for (size_t m = n, level = 0;; ++level) {
        const size_t groups = CeilDiv(m, 2 * L);
        const bool last = groups == 1;
        cl::Buffer& dst = last ? result_d_ : work_[level % 2].Get();
        k.setArg(0, *src);
        k.setArg(1, dst);
        k.setArg(2, cl_uint(m));
        launch(groups * L);
        if (last)
          break;
        src = &dst;
        m = groups;
      }
      break;
    case Shape::Atomic:
      DispatchType(spec.type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        queue.enqueueFillBuffer(result_d_, IdentityOf<T>(spec.op), 0, sizeof(T), nullptr,
                                events.Next());
      });
      k.setArg(0, input_d_);
      k.setArg(1, result_d_);
      k.setArg(2, cl_uint(n));
      launch(CeilDiv(n, 2 * L) * L);
      break;
    case Shape::SinglePass:
      k.setArg(0, input_d_);
      k.setArg(1, result_d_);
      k.setArg(2, cl_uint(n));
      k.setArg(3, partials_.Get());
      k.setArg(4, counter_.Get());
      k.setArg(5, cl_uint(0));
      launch(SinglePassGroups(spec) * L);
      break;
  }
}

Validation CReductionTask::ValidateResults(cl::CommandQueue& queue, const std::string& variant,
                                           const ProblemSpec& spec) {
  return CompareResults(variant, expected_, ReadBack(queue, result_d_, spec.type, 1));
}

CostModel CReductionTask::Cost(const std::string& variant, const ProblemSpec& spec) const {
  const Variant& v = Find(variant);
  const size_t size = SizeOf(spec.type), L = spec.localSize, n = spec.n;
  CostModel c;
  c.ops = n - 1;
  switch (v.shape) {
    case Shape::GlobalInterleaved:
    case Shape::GlobalSequential:
      // Each step reads the m values left and writes ceil(m / 2).
      for (size_t m = n;;) {
        const size_t half = CeilDiv(m, 2);
        c.bytesMoved += (m + half) * size;
        ++c.launches;
        if (half == 1)
          break;
        m = half;
      }
      c.steps = c.launches;
      break;
    case Shape::MultiLevel:
      for (size_t m = n;;) {
        const size_t groups = CeilDiv(m, 2 * L);
        c.bytesMoved += (m + groups) * size;
        ++c.launches;
        c.steps += 1 + CeilLog2(L);
        if (groups == 1)
          break;
        m = groups;
      }
      break;
    case Shape::Atomic: {
      const size_t groups = CeilDiv(n, 2 * L);
      c.launches = 2;
      c.steps = 2 + CeilLog2(L);
      c.ops += groups;
      c.bytesMoved = (n + 2 * groups + 1) * size;
      break;
    }
    case Shape::SinglePass: {
      const size_t groups = SinglePassGroups(spec);
      c.launches = 1;
      c.steps = CeilDiv(n, groups * L) + 2 * CeilLog2(L) + CeilDiv(groups, L) + 2;
      c.bytesMoved = n * size + 2 * groups * sizeof(cl_ulong) + size;
      break;
    }
  }
  return c;
}

}  // namespace rsb
