// Host-side data shared by every task: typed arrays, the random input, the forms of a CPU
// reference (Expected; each task computes its own) and the element-by-element comparison.
#pragma once

#include "platform/Parallel.h"
#include "platform/Types.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rsb {

struct Validation {
  bool passed = false;
  std::string message;        // on failure: variant, first wrong index, expected, actual
  bool neverWritten = false;  // the first wrong element still holds the poison
};

// Poison written into outputs before a validated run: 0x7F in every byte is implausible for
// every type (int 2139062143, float 3.4e38), so an element never written cannot pass.
constexpr unsigned char kPoisonByte = 0x7F;

// The operator's identity: 0 for sum, the type's largest value for min, its smallest for max
// (infinities for floating point), as in kernels/Common.clh.
template <class T>
T IdentityOf(Op op) {
  if (op == Op::Sum)
    return T(0);
  if constexpr (std::is_floating_point_v<T>) {
    return op == Op::Min ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
  } else {
    return op == Op::Min ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
  }
}

// An allocator that leaves elements uninitialised where no value is given: the large arrays
// below are written in parallel, and zeroing them first would cost a pass on one core.
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// An array of n elements of a run-time type.
class HostArray {
 public:
  HostArray() = default;
  // n elements, zeroed.
  HostArray(ElementType type, size_t n) : type_(type), n_(n), bytes_(n * SizeOf(type), 0) {}
  // n elements, not initialised: for an array the caller writes in full.
  static HostArray Uninitialized(ElementType type, size_t n) {
    HostArray a;
    a.type_ = type, a.n_ = n;
    a.bytes_.resize(n * SizeOf(type));
    return a;
  }
  ElementType Type() const { return type_; }
  size_t Size() const { return n_; }
  size_t Bytes() const { return bytes_.size(); }
  void* Data() { return bytes_.data(); }
  const void* Data() const { return bytes_.data(); }
  template <class T>
  T* As() {
    return reinterpret_cast<T*>(bytes_.data());
  }
  template <class T>
  const T* As() const {
    return reinterpret_cast<const T*>(bytes_.data());
  }

 private:
  ElementType type_ = ElementType::Uint;
  size_t n_ = 0;
  std::vector<unsigned char, DefaultInitAllocator<unsigned char>> bytes_;
};

// Random input, seeded: signed integers in [-1000, 1000], unsigned in [0, 2000], floating
// point in [-1, 1) (multiples of 2^-23 for float, 2^-52 for double). Never zeros or a sequence:
// compressible data inflates bandwidth on some GPUs. Sums of int stay far from overflow;
// unsigned sums wrap as they do on the device. Element i depends only on the seed and i
// (splitmix64's stream read at position i), so the input is the same on any number of cores.
HostArray RandomInput(ElementType type, size_t n, uint64_t seed);

// The expected output of a run, and how far the actual output may be from it. Three forms:
// - exact: `exact`, compared bit for bit (integer reductions, min/max reductions);
// - bounded: `value` and `bound`, one of each per element: |actual - value| <= bound
//   (floating-point sums of reductions, the convolution);
// - a scan: no array of the output's size. `scan` holds each chunk's offset (the operator over
//   the input before the chunk, for chunks of kHostChunk elements, Parallel.h) and the
//   comparison scans the input again from those offsets, in parallel, as it compares: integers
//   and min/max bit for bit; floating-point sums against a compensated double sum rounded to T,
//   within eps(T) * sum|x| * (ceil(log2(terms)) + 16) over the terms summed into the element,
//   plus that rounding, eps(T) * |reference|. A validated scan then holds on the host only its
//   input and one piece of the read-back (OutputComparison).
class Expected {
 public:
  // Where a scan starts each chunk from.
  struct ScanOffsets {
    Op op = Op::Sum;
    bool inclusive = true;  // element i: x[0..i] (inclusive) or x[0..i) (exclusive)
    HostArray acc;          // integers, min/max: the operator over the input before the chunk
    // Floating-point sums: the compensated sum (sum + comp) of the input before the chunk, and
    // sum |x| before it.
    std::vector<double> sum, comp, absSum;
  };

  Expected() = default;
  // n output elements; `exact` holds `stored` elements (n, or 0 for a scan), not initialised:
  // the reference writes every one.
  Expected(ElementType type, size_t n, size_t stored);
  Expected(ElementType type, size_t n) : Expected(type, n, n) {}
  size_t Size() const { return n_; }
  ElementType Type() const { return type_; }

  HostArray exact;            // the exact form
  std::vector<double> value;  // the bounded form: reference value
  std::vector<double> bound;  // the bounded form: allowed |actual - value|
  bool approximate = false;   // true: compared within a bound (bounded, or a floating-point sum)
  std::optional<ScanOffsets> scan;  // the scan form

 private:
  ElementType type_ = ElementType::Uint;
  size_t n_ = 0;
};

// The tasks' references (their Reference: the reduction's and the scan's in their task's files,
// from the sums of HostSums.h) fill these forms.

// The reference's values as an array of the output's type (a scan's computed from input, a
// bounded form's rounded to the type): for tests and for showing them, not for validation.
HostArray ExpectedValues(const Expected& expected, const HostArray& input);

// Compares an output with its reference piece by piece, as the output is read back, so that the
// host needs no array of the output's size. Pieces start at multiples of kHostChunk and together
// cover the output once, in any order; each is compared in parallel over its chunks. input is
// the array the reference was computed from (a scan's comparison reads it).
class OutputComparison {
 public:
  OutputComparison(std::string variant, const Expected& expected, const HostArray& input);
  // Output elements [first, first + count) are the first count elements of piece.
  void Add(size_t first, const HostArray& piece, size_t count);
  // On failure the message names the variant, the first wrong index, the expected and the
  // actual value, and how many elements are wrong.
  Validation Result() const;

 private:
  std::string variant_;
  const Expected& expected_;
  const HostArray& input_;
  size_t compared_ = 0, wrong_ = 0;
  size_t first_ = 0;        // the first wrong index, where wrong_ > 0
  std::string want_, got_;  // at first_
  bool unwritten_ = false;  // at first_: still the poison
};

// The host memory a reference takes, by its form (Expected): exact over `outputs` elements,
// bounded (a value and a bound per element besides the exact one), or a scan's chunk offsets.
uint64_t ExactReferenceBytes(ElementType type, size_t outputs);
uint64_t BoundedReferenceBytes(ElementType type, size_t outputs);
uint64_t ScanReferenceBytes(ElementType type, size_t n);

// Host memory this process can still take: MemAvailable (/proc/meminfo), or less where the
// process's RLIMIT_AS (over its VmSize) or RLIMIT_DATA (over its VmData) leaves less; `limit`
// names which ("MemAvailable", "RLIMIT_AS", "RLIMIT_DATA"). Unknown: UINT64_MAX.
struct HostMemory {
  uint64_t bytes = std::numeric_limits<uint64_t>::max();
  std::string limit;
};
HostMemory AvailableHostMemory();
// nullopt where `needed` bytes fit in `available`; else why not: "needs 12.0 GiB of host memory,
// 3.1 GiB available (MemAvailable)".
std::optional<std::string> HostMemoryShortfall(uint64_t needed, const HostMemory& available);

// The whole output at once (same type and Size() elements): an OutputComparison with one piece.
Validation CompareResults(const std::string& variant, const Expected& expected,
                          const HostArray& actual, const HostArray& input);

}  // namespace rsb
