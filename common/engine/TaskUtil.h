// Small helpers that every task's host code needs: integer arithmetic of sizes, buffers that
// grow on demand, input upload, poisoning and read-back (compared as it arrives).
#pragma once

#include "engine/HostData.h"
#include "engine/IComputeTask.h"
#include "platform/CLUtil.h"

#include <functional>
#include <string>
#include <vector>

namespace rsb {

inline size_t CeilDiv(size_t a, size_t b) {
  return (a + b - 1) / b;
}
inline bool IsPowerOfTwo(size_t x) {
  return x && !(x & (x - 1));
}
// The largest power of two <= x (0 for 0).
inline size_t FloorPowerOfTwo(size_t x) {
  size_t p = x ? 1 : 0;
  while (p && p <= x / 2)
    p *= 2;
  return p;
}
// ceil(log2(x)) for x >= 1.
inline unsigned CeilLog2(size_t x) {
  unsigned k = 0;
  while ((size_t(1) << k) < x)
    ++k;
  return k;
}

// A device buffer that is reallocated only when a larger one is needed.
class ScratchBuffer {
 public:
  cl::Buffer& Ensure(const cl::Context& context, size_t bytes);
  cl::Buffer& Get() { return buffer_; }

 private:
  cl::Buffer buffer_;
  size_t capacity_ = 0;
};

// "17179869212 bytes (16.0 GiB)": a size in a message, exact and readable; BytesShort: "16.0 GiB"
// (under 1 MiB both are "812 bytes").
std::string BytesText(uint64_t bytes);
std::string BytesShort(uint64_t bytes);

// Throws VariantSkipped unless the device can allocate one buffer of `bytes`.
void RequireAllocation(const DeviceInfo& device, size_t bytes, const std::string& what);

// A problem's input on the device: VariantSkipped for double without fp64 or for a buffer
// beyond the device's limit; `input` gets the seeded random input unless it holds one already
// (tests pass their own), then it is uploaded into the returned read-only buffer.
cl::Buffer UploadInput(const ProblemSpec& spec, const DeviceInfo& device,
                       const cl::Context& context, cl::CommandQueue& queue, HostArray& input);

// FillPattern: the first `bytes` of buffer (a multiple of the pattern's size) set to the pattern
// repeated, in pieces of at most 1 GiB, each command's event from nextEvent (may return null).
// clEnqueueFillBuffer for the pieces that end within 2^31 - 1 patterns, a blocking write from
// the host for the rest: NVIDIA's driver (580.159.04, H100) counts a fill's patterns in 32 bits,
// so a fill that reaches past 2^31 patterns faults (12-13 GiB of 4-byte patterns: the queue is
// lost) or silently writes nothing (16-17 GiB), while fills below that complete (probe,
// docs/BENCHMARKS.md "Large sizes: the index width and NVIDIA's fill"). Uploads and read-backs at
// those offsets are sound. (maxFillPatterns: tests lower it to reach the write path on a small
// buffer.)
constexpr size_t kMaxFillPatterns = (size_t(1) << 31) - 1;
void FillPattern(cl::CommandQueue& queue, const cl::Buffer& buffer,
                 const std::vector<unsigned char>& pattern, size_t bytes,
                 const std::function<cl::Event*()>& nextEvent,
                 size_t maxFillPatterns = kMaxFillPatterns);

// Fills count elements of type with the poison pattern (HostData.h); each command takes its
// event from `events` if given ("Poison output").
void Poison(cl::CommandQueue& queue, cl::Buffer& buffer, ElementType type, size_t count,
            RunEvents* events = nullptr);

// Elements per piece of ReadBackAndCompare (a multiple of kHostChunk).
constexpr size_t kReadBackPiece = size_t(1) << 24;

// The host arrays ReadBackAndCompare holds for an output of count elements.
uint64_t ReadBackHostBytes(ElementType type, size_t count);

// Reads the count elements of buffer (of expected's type) and compares them with expected as they
// arrive, kReadBackPiece at a time into two host arrays in turn (the next piece is read while the
// last is compared): the host holds no array of the output's size. input is what the reference
// was computed from. The same verdict and message as CompareResults on the whole output.
Validation ReadBackAndCompare(cl::CommandQueue& queue, const cl::Buffer& buffer, size_t count,
                              const std::string& variant, const Expected& expected,
                              const HostArray& input);

}  // namespace rsb
