// Small helpers that every task's host code needs: buffers that grow on demand, poisoning,
// read-back, local-size checks and the kernel cache.
#pragma once

#include "CLUtil.h"
#include "HostData.h"
#include "IComputeTask.h"

#include "Errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace rsb {

inline size_t CeilDiv(size_t a, size_t b) {
  return (a + b - 1) / b;
}
inline size_t RoundUp(size_t a, size_t b) {
  return CeilDiv(a, b) * b;
}
inline bool IsPowerOfTwo(size_t x) {
  return x && !(x & (x - 1));
}
// ceil(log2(x)) for x >= 1.
inline unsigned CeilLog2(size_t x) {
  unsigned k = 0;
  while ((size_t(1) << k) < x)
    ++k;
  return k;
}

// Lookups in a task's table of variants (rows with name, description, gpuLocal, cpuLocal).
template <class Variant>
std::vector<std::string> VariantNames(const std::vector<Variant>& table) {
  std::vector<std::string> names;
  for (const auto& v : table)
    names.push_back(v.name);
  return names;
}

template <class Variant>
const Variant& FindVariant(const std::vector<Variant>& table, const std::string& task,
                           const std::string& name) {
  for (const auto& v : table)
    if (v.name == name)
      return v;
  throw UsageError(fmt::format("unknown {} variant '{}'", task, name));
}

// spec.localSize if set, else the row's default for the device type. On a CPU a work-group is
// one core's loop over its work-items and barriers are costly, so CPU defaults are small.
template <class Variant>
size_t DefaultLocalSize(const Variant& v, const ProblemSpec& spec, const DeviceInfo& device) {
  if (spec.localSize)
    return spec.localSize;
  return std::min(device.isGpu ? v.gpuLocal : v.cpuLocal, device.maxWorkGroupSize);
}

// A compiled-in tuning default, or the environment variable `name` when it is set: the knobs
// that the sweeps in docs/BENCHMARKS.md turn (RSB_TUNE_...). A value that is not a whole number
// from 1 to 2^20 ends the program with status 2 and one line naming the variable.
size_t TuningValue(const char* name, size_t fallback);

// A device buffer that is reallocated only when a larger one is needed.
class ScratchBuffer {
 public:
  cl::Buffer& Ensure(const cl::Context& context, size_t bytes);
  cl::Buffer& Get() { return buffer_; }
  void Release() {
    buffer_ = cl::Buffer();
    capacity_ = 0;
  }

 private:
  cl::Buffer buffer_;
  size_t capacity_ = 0;
};

// Throws VariantSkipped unless the device can allocate one buffer of `bytes`.
void RequireAllocation(const DeviceInfo& device, size_t bytes, const std::string& what);

// A problem's input on the device: VariantSkipped for double without fp64 or for a buffer
// beyond the device's limit; `input` gets the seeded random input unless it holds one already
// (tests pass their own), then it is uploaded into the returned read-only buffer.
cl::Buffer UploadInput(const ProblemSpec& spec, const DeviceInfo& device,
                       const cl::Context& context, cl::CommandQueue& queue, HostArray& input);

// Fills count elements of type with the poison pattern (HostData.h).
void Poison(cl::CommandQueue& queue, cl::Buffer& buffer, ElementType type, size_t count);

// Blocking read of count elements of type.
HostArray ReadBack(cl::CommandQueue& queue, const cl::Buffer& buffer, ElementType type,
                   size_t count);

// Kernels by (file, options, name), created once from the ProgramCache. Throws VariantSkipped
// when the compiled kernel cannot run work-groups of localSize on this device.
class KernelCache {
 public:
  cl::Kernel& Get(ProgramCache& programs, const std::string& file, const std::string& options,
                  const std::string& name, size_t localSize);

 private:
  struct Entry {
    cl::Kernel kernel;
    size_t maxLocalSize;  // CL_KERNEL_WORK_GROUP_SIZE, asked once
  };
  std::map<std::string, Entry> kernels_;
};

}  // namespace rsb
