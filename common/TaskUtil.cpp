#include "TaskUtil.h"

#include "Errors.h"
#include "Sizes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace rsb {

size_t TuningValue(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  if (!v)
    return fallback;
  const auto value = ParseUnsigned(v);
  if (!value || *value == 0 || *value > (1u << 20)) {
    // Read while the program starts (the defaults are namespace-scope constants): no exception
    // can be caught there, so the usage error ends the program here, with status 2.
    std::fprintf(stderr, "%s='%s': allowed: a whole number from 1 to 1048576\n", name, v);
    std::exit(2);
  }
  return static_cast<size_t>(*value);
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

cl::Buffer UploadInput(const ProblemSpec& spec, const DeviceInfo& device,
                       const cl::Context& context, cl::CommandQueue& queue, HostArray& input) {
  if (spec.type == ElementType::Double && !device.fp64)
    throw VariantSkipped("the device has no double precision (cl_khr_fp64)");
  const size_t bytes = spec.n * SizeOf(spec.type);
  RequireAllocation(device, bytes, fmt::format("n = {} {}", spec.n, ToString(spec.type)));
  if (!input.Size())
    input = RandomInput(spec.type, spec.n, spec.seed);
  cl::Buffer buffer(context, CL_MEM_READ_ONLY, bytes);
  queue.enqueueWriteBuffer(buffer, CL_TRUE, 0, bytes, input.Data());
  return buffer;
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
