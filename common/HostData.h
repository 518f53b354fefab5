// Host-side data shared by every task: typed arrays, the random input, the CPU reference
// (reduce and scan) and the element-by-element comparison used for validation.
#pragma once

#include "Types.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
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

// An array of n elements of a run-time type.
class HostArray {
 public:
  HostArray() = default;
  HostArray(ElementType type, size_t n) : type_(type), n_(n), bytes_(n * SizeOf(type)) {}
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
  std::vector<unsigned char> bytes_;
};

// Random input, seeded: signed integers in [-1000, 1000], unsigned in [0, 2000], floating
// point in [-1, 1). Never zeros or a sequence: compressible data inflates bandwidth on some
// GPUs. Sums of int stay far from overflow; unsigned sums wrap as they do on the device.
HostArray RandomInput(ElementType type, size_t n, uint64_t seed);

// The expected output of a run: exact values for integers; for floating point the reference
// (double, compensated for double) and an error bound per element that grows with the number
// of terms and their magnitude: eps(T) * sum|x| * (ceil(log2(terms)) + 16).
class Expected {
 public:
  Expected() = default;
  Expected(ElementType type, size_t n);
  size_t Size() const { return n_; }
  ElementType Type() const { return type_; }

  HostArray exact;            // integer types, and min/max of floating types
  std::vector<double> value;  // floating-point sums: reference value
  std::vector<double> bound;  // floating-point sums: allowed |actual - value|
  bool approximate = false;   // true: compare with value/bound, false: compare with exact

 private:
  ElementType type_ = ElementType::Uint;
  size_t n_ = 0;
};

Expected ReferenceReduce(const HostArray& input, Op op);
Expected ReferenceScan(const HostArray& input, Op op, ScanKind kind);

// Compares actual (same type, Size() elements) with expected. On failure the message names
// the variant, the first wrong index, the expected and the actual value, and how many
// elements are wrong.
Validation CompareResults(const std::string& variant, const Expected& expected,
                          const HostArray& actual);

}  // namespace rsb
