// TaskContext: everything a task needs from the device, made once per device by whoever runs
// the tasks (the program, the tests) and handed to every task call: the OpenCL context and its
// profiling queue, the device's description, and the caches of built programs and kernels.
#pragma once

#include "platform/CLUtil.h"
#include "platform/OpenCL.h"

#include <array>
#include <map>
#include <string>

namespace rsb {

// Kernels by (file, options, name), created once from the ProgramCache. Throws VariantSkipped
// when the compiled kernel cannot run work-groups of localSize, or needs more local memory than
// the device has.
// AllowedLocalSize: the largest work-group a compiled kernel runs. Normally the driver's
// CL_KERNEL_WORK_GROUP_SIZE; but a kernel that declares reqd_work_group_size (every kernel here,
// RSB_WG_ATTR) was compiled for exactly that many work-items (the compiler fits its registers
// to it, or the build fails), so its declared size counts, up to the device's maximum.
// Why: NVIDIA's driver (580.159.04, H100) reports CL_KERNEL_WORK_GROUP_SIZE 256 for every
// kernel, a one-line kernel of 12 registers and one declaring 1024 alike, while launches of 512
// and 1024 work-items run and compute right (docs/BENCHMARKS.md, "The course variants on the GPU").
// If a launch still fails for resources, its enqueue error is the case's error.
size_t AllowedLocalSize(size_t kernelWorkGroupSize, const std::array<size_t, 3>& compiled,
                        size_t deviceMax);

class KernelCache {
 public:
  cl::Kernel& Get(ProgramCache& programs, const std::string& file, const std::string& options,
                  const std::string& name, size_t localSize);

 private:
  struct Entry {
    cl::Kernel kernel;
    size_t maxLocalSize;                  // CL_KERNEL_WORK_GROUP_SIZE, asked once
    unsigned long long localBytes;        // CL_KERNEL_LOCAL_MEM_SIZE
    unsigned long long deviceLocalBytes;  // CL_DEVICE_LOCAL_MEM_SIZE
  };
  std::map<std::string, Entry> kernels_;
};

struct TaskContext {
  TaskContext(const cl::Device& device, const std::string& kernelDir);
  // A new context, queue and caches on the same device (after an error that may have left the
  // old ones unusable, e.g. a kernel's out-of-bounds write). Buffers of the old context are void.
  void Recreate();

  cl::Device device;
  cl::Context context;
  cl::CommandQueue queue;  // in order, profiling enabled
  DeviceInfo info;
  ProgramCache programs;
  KernelCache kernels;
  std::string kernelDir;
};

}  // namespace rsb
