#include "platform/TaskContext.h"

#include "platform/Errors.h"

#include <fmt/format.h>

namespace rsb {

size_t AllowedLocalSize(size_t kernelWorkGroupSize, const std::array<size_t, 3>& compiled,
                        size_t deviceMax) {
  const size_t declared = compiled[0] * compiled[1] * compiled[2];
  if (declared > kernelWorkGroupSize && declared <= deviceMax)
    return declared;
  return kernelWorkGroupSize;
}

cl::Kernel& KernelCache::Get(ProgramCache& programs, const std::string& file,
                             const std::string& options, const std::string& name,
                             size_t localSize) {
  const std::string key = file + '\n' + options + '\n' + name;
  auto it = kernels_.find(key);
  if (it == kernels_.end()) {
    cl::Program& program = programs.Get(file, options);
    cl::Kernel kernel;
    try {
      kernel = cl::Kernel(program, name.c_str());
    } catch (const cl::Error& e) {
      throw DeviceError(
          fmt::format("cannot create kernel {} from {}: {}", name, file, ClErrorName(e.err())));
    }
    const cl::Device& d = programs.Device();
    const auto compiled = kernel.getWorkGroupInfo<CL_KERNEL_COMPILE_WORK_GROUP_SIZE>(d);
    it = kernels_
             .emplace(key,
                      Entry{kernel,
                            AllowedLocalSize(kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(d),
                                             {compiled[0], compiled[1], compiled[2]},
                                             d.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>()),
                            kernel.getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(d),
                            d.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>()})
             .first;
  }
  const Entry& e = it->second;
  if (localSize > e.maxLocalSize)
    throw VariantSkipped(
        fmt::format("local size {} exceeds what kernel {} allows on this device "
                    "({}: CL_KERNEL_WORK_GROUP_SIZE, or the size it declares)",
                    localSize, name, e.maxLocalSize));
  if (e.localBytes > e.deviceLocalBytes)
    throw VariantSkipped(fmt::format(
        "kernel {} needs {} KiB of local memory at local size {}; the device has {} KiB", name,
        e.localBytes >> 10, localSize, e.deviceLocalBytes >> 10));
  return it->second.kernel;
}

TaskContext::TaskContext(const cl::Device& d, const std::string& kernelDir)
    : device(d),
      context(DeviceContext(d)),
      queue(context, device, CL_QUEUE_PROFILING_ENABLE),
      info(DescribeDevice(device)),
      programs(context, device, kernelDir),
      kernelDir(kernelDir) {}

void TaskContext::Recreate() {
  // Everything of the old context goes first: a driver may keep a faulted context's resources
  // (and refuse new contexts) while anything still refers to it.
  queue = cl::CommandQueue();
  kernels = KernelCache();
  programs = ProgramCache(cl::Context(), device, kernelDir);
  context = cl::Context();
  DropDeviceContext(device);
  context = DeviceContext(device);
  programs = ProgramCache(context, device, kernelDir);
  queue = cl::CommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE);
}

}  // namespace rsb
