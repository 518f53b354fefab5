// Host-side data shared by every task: typed arrays, the random input, the CPU reference
// (reduce and scan) and the element-by-element comparison used for validation.
#pragma once

#include "Types.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rsb {

struct Validation {
  bool passed = false;
  std::string message;  // on failure: variant, first wrong index, expected, actual
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

// The expected output of a run, and how far the actual output may be from it:
// - integer types, and min/max of every type: `exact`, compared bit for bit;
// - floating-point scans (sum): `exact` holds the reference, a compensated double sum rounded to
//   the type; element i may differ from it by eps(T) * sum|x| * (ceil(log2(terms)) + 16) over
//   the terms summed into i, plus the reference's own rounding, eps(T) * |reference|. That
//   bound is not stored: the comparison sums |x| again from the input, chunk by chunk, from the
//   offsets in `absBefore`, so that the host holds only input, reference and read-back;
// - other floating-point results (the reduction's one element, the convolution): `value` and
//   `bound`, one of each per element: |actual - value| <= bound.
class Expected {
 public:
  Expected() = default;
  // `exact` holds n elements, not initialised: the reference writes every one.
  Expected(ElementType type, size_t n);
  size_t Size() const { return n_; }
  ElementType Type() const { return type_; }

  HostArray exact;            // see above
  std::vector<double> value;  // per-element bound: reference value
  std::vector<double> bound;  // per-element bound: allowed |actual - value|
  bool approximate = false;   // true: compare within a bound, false: compare with exact
  // Floating-point scans (approximate with no `value`): sum |x| of the input before each chunk of
  // kHostChunk elements (Parallel.h), and whether element i sums x[0..i] (inclusive) or
  // x[0..i) (exclusive).
  std::vector<double> absBefore;
  bool inclusive = true;

 private:
  ElementType type_ = ElementType::Uint;
  size_t n_ = 0;
};

// The references, in parallel over fixed chunks of the input (Parallel.h): the same on any number
// of cores, to the last bit for floating point.
Expected ReferenceReduce(const HostArray& input, Op op);
Expected ReferenceScan(const HostArray& input, Op op, ScanKind kind);

// Compares actual (same type, Size() elements) with expected, the reference computed from
// input (which floating-point scans need for their bound). On failure the message names the
// variant, the first wrong index, the expected and the actual value, and how many elements are
// wrong.
Validation CompareResults(const std::string& variant, const Expected& expected,
                          const HostArray& actual, const HostArray& input);

}  // namespace rsb
