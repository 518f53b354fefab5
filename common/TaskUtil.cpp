#include "TaskUtil.h"

#include "Errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace rsb {

size_t TuningValue(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoul(v, nullptr, 10) : fallback;
}

cl::Buffer& ScratchBuffer::Ensure(const cl::Context& context, size_t bytes) {
  bytes = std::max<size_t>(bytes, 16);
  if (bytes > capacity_) {
    buffer_ = cl::Buffer(context, CL_MEM_READ_WRITE, bytes);
    capacity_ = bytes;
  }
  return buffer_;
}

void RequireAllocation(const DeviceInfo& device, size_t bytes, const std::string& what) {
  if (bytes > device.maxAllocBytes)
    throw VariantSkipped(
        fmt::format("{} needs a buffer of {} MiB; the device allows at most {} "
                    "MiB per buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                    what, bytes >> 20, device.maxAllocBytes >> 20));
}

void Poison(cl::CommandQueue& queue, cl::Buffer& buffer, ElementType type, size_t count) {
  const size_t size = SizeOf(type);
  // In chunks of 2^30 patterns: NVIDIA's driver never completes a fill of 2^31 or more.
  const size_t chunk = size_t(1) << 30;
  for (size_t first = 0; first < count; first += chunk) {
    const size_t offset = first * size, bytes = std::min(chunk, count - first) * size;
    if (size == 4)
      queue.enqueueFillBuffer(buffer, cl_uint(0x01010101u * kPoisonByte), offset, bytes);
    else
      queue.enqueueFillBuffer(buffer, cl_ulong(0x0101010101010101ull * kPoisonByte), offset, bytes);
  }
}

HostArray ReadBack(cl::CommandQueue& queue, const cl::Buffer& buffer, ElementType type,
                   size_t count) {
  HostArray out(type, count);
  queue.enqueueReadBuffer(buffer, CL_TRUE, 0, out.Bytes(), out.Data());
  return out;
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
    const size_t limit = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(programs.Device());
    it = kernels_.emplace(key, Entry{kernel, limit}).first;
  }
  const size_t limit = it->second.maxLocalSize;
  if (localSize > limit)
    throw VariantSkipped(
        fmt::format("local size {} exceeds what kernel {} allows on this device "
                    "({}, CL_KERNEL_WORK_GROUP_SIZE)",
                    localSize, name, limit));
  return it->second.kernel;
}

}  // namespace rsb
