#include "HostData.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <random>
#include <type_traits>

namespace rsb {

namespace {

// Integer sums wrap (two's complement), computed in the unsigned type so that the host never
// has undefined behaviour.
template <class T>
T Apply(Op op, T a, T b) {
  switch (op) {
    case Op::Sum:
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      } else {
        return a + b;
      }
    case Op::Min:
      return b < a ? b : a;
    case Op::Max:
    default:
      return a < b ? b : a;
  }
}

// Neumaier's compensated summation: the double reference for double data.
struct CompensatedSum {
  double sum = 0, comp = 0;
  void Add(double x) {
    const double t = sum + x;
    comp += std::abs(sum) >= std::abs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  double Value() const { return sum + comp; }
};

template <class T>
double Bound(double absSum, size_t terms) {
  const double eps = std::numeric_limits<T>::epsilon();
  const double levels = std::ceil(std::log2(static_cast<double>(terms) + 1.0));
  return eps * absSum * (levels + 16.0);
}

// Writes the reference for one output position.
template <class T>
void Store(Expected& e, size_t i, T exactValue, const CompensatedSum& s, double absSum,
           size_t terms) {
  e.exact.As<T>()[i] = exactValue;
  if (e.approximate) {
    e.value[i] = s.Value();
    e.bound[i] = Bound<T>(absSum, terms);
  }
}

template <class T>
std::string Show(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return fmt::format("{:.9g}", v);
  else
    return fmt::format("{}", v);
}

}  // namespace

HostArray RandomInput(ElementType type, size_t n, uint64_t seed) {
  HostArray a(type, n);
  std::mt19937_64 rng(seed);
  DispatchType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = a.As<T>();
    if constexpr (std::is_floating_point_v<T>) {
      std::uniform_real_distribution<T> dist(T(-1), T(1));
      for (size_t i = 0; i < n; ++i)
        p[i] = dist(rng);
    } else if constexpr (std::is_signed_v<T>) {
      std::uniform_int_distribution<int64_t> dist(-1000, 1000);
      for (size_t i = 0; i < n; ++i)
        p[i] = static_cast<T>(dist(rng));
    } else {
      std::uniform_int_distribution<uint64_t> dist(0, 2000);
      for (size_t i = 0; i < n; ++i)
        p[i] = static_cast<T>(dist(rng));
    }
  });
  return a;
}

Expected::Expected(ElementType type, size_t n) : exact(type, n), type_(type), n_(n) {}

Expected ReferenceReduce(const HostArray& input, Op op) {
  Expected e(input.Type(), 1);
  e.approximate = IsFloatingPoint(input.Type()) && op == Op::Sum;
  if (e.approximate)
    e.value.resize(1), e.bound.resize(1);
  DispatchType(input.Type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = input.As<T>();
    T acc = IdentityOf<T>(op);
    CompensatedSum s;
    double absSum = 0;
    for (size_t i = 0; i < input.Size(); ++i) {
      acc = Apply(op, acc, x[i]);
      if (e.approximate)
        s.Add(static_cast<double>(x[i])), absSum += std::abs(double(x[i]));
    }
    Store<T>(e, 0, acc, s, absSum, input.Size());
  });
  return e;
}

Expected ReferenceScan(const HostArray& input, Op op, ScanKind kind) {
  const size_t n = input.Size();
  Expected e(input.Type(), n);
  e.approximate = IsFloatingPoint(input.Type()) && op == Op::Sum;
  if (e.approximate)
    e.value.resize(n), e.bound.resize(n);
  DispatchType(input.Type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = input.As<T>();
    T acc = IdentityOf<T>(op);
    CompensatedSum s;
    double absSum = 0;
    for (size_t i = 0; i < n; ++i) {
      if (kind == ScanKind::Exclusive)
        Store<T>(e, i, acc, s, absSum, i);
      acc = Apply(op, acc, x[i]);
      if (e.approximate)
        s.Add(static_cast<double>(x[i])), absSum += std::abs(double(x[i]));
      if (kind == ScanKind::Inclusive)
        Store<T>(e, i, acc, s, absSum, i + 1);
    }
  });
  return e;
}

Validation CompareResults(const std::string& variant, const Expected& expected,
                          const HostArray& actual) {
  Validation v;
  if (actual.Size() != expected.Size() || actual.Type() != expected.Type()) {
    v.message = fmt::format("{}: output has {} elements, expected {}", variant, actual.Size(),
                            expected.Size());
    return v;
  }
  return DispatchType(actual.Type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* got = actual.As<T>();
    const T* want = expected.exact.As<T>();
    T poison;
    std::memset(&poison, kPoisonByte, sizeof(T));
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < expected.Size(); ++i) {
      bool ok;
      if (expected.approximate) {
        const double d = std::abs(static_cast<double>(got[i]) - expected.value[i]);
        ok = d <= expected.bound[i];  // false for NaN
      } else {
        ok = std::memcmp(&got[i], &want[i], sizeof(T)) == 0;
      }
      if (!ok && wrong++ == 0)
        first = i;
    }
    if (wrong == 0) {
      v.passed = true;
      return v;
    }
    const std::string want0 =
        expected.approximate
            ? fmt::format("{:.9g} (+-{:.3g})", expected.value[first], expected.bound[first])
            : Show(want[first]);
    const bool unwritten = std::memcmp(&got[first], &poison, sizeof(T)) == 0;
    v.message = fmt::format(
        "{}: wrong result at index {}: expected {}, got {}{} ({} of {} "
        "elements wrong)",
        variant, first, want0, Show(got[first]),
        unwritten ? " (never written: still holds the poison)" : "", wrong, expected.Size());
    return v;
  });
}

}  // namespace rsb
