// The host's sums, as the CPU references compute them (the tasks' Reference, HostData's
// comparison): the operator applied as the device applies it, Neumaier's compensated double sum
// of floating-point sums and its error bound, and one chunk's aggregate. Chunks are those of
// ParallelChunks (Parallel.h): a reference built from them is the same on any number of cores.
#pragma once

#include "engine/HostData.h"

#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

namespace rsb {

// Integer sums wrap (two's complement), computed in the unsigned type so that the host never
// has undefined behaviour. The operator is a template argument: the loops are compiled once per
// operator instead of switching per element.
template <Op O, class T>
T Apply(T a, T b) {
  if constexpr (O == Op::Sum) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  } else if constexpr (O == Op::Min) {
    return b < a ? b : a;
  } else {
    return a < b ? b : a;
  }
}

// Calls f(std::integral_constant<Op, op>{}): the operator as a compile-time value.
template <class F>
decltype(auto) DispatchOp(Op op, F&& f) {
  switch (op) {
    case Op::Sum:
      return f(std::integral_constant<Op, Op::Sum>{});
    case Op::Min:
      return f(std::integral_constant<Op, Op::Min>{});
    case Op::Max:
    default:
      return f(std::integral_constant<Op, Op::Max>{});
  }
}

// Neumaier's compensated summation: the double reference of floating-point sums. Chunks are
// summed on their own and their (sum, comp) pairs added in chunk order, so the result depends on
// the chunk size only, never on the thread count.
struct CompensatedSum {
  double sum = 0, comp = 0;
  void Add(double x) {
    const double t = sum + x;
    // Both candidates, then a select: no branch on the data.
    const double sumBigger = (sum - t) + x, xBigger = (x - t) + sum;
    comp += std::abs(sum) >= std::abs(x) ? sumBigger : xBigger;
    sum = t;
  }
  void Add(const CompensatedSum& other) { Add(other.sum), Add(other.comp); }
  double Value() const { return sum + comp; }
};

// ceil(log2(terms + 1)): the levels of a balanced tree over `terms` terms (its bit width).
inline int Levels(size_t terms) {
  return terms ? 64 - __builtin_clzll(terms) : 0;
}

// The error bound of a sum of `terms` floating-point values whose magnitudes sum to absSum, in
// whatever order the device adds them.
template <class T>
double SumBound(double absSum, size_t terms) {
  const double eps = std::numeric_limits<T>::epsilon();
  return eps * absSum * (Levels(terms) + 16.0);
}

// A chunk's aggregate: the operator over its elements; for floating-point sums (approximate)
// also the compensated double sum and sum |x|.
template <class T>
struct ChunkAggregate {
  T acc;
  CompensatedSum sum;
  double absSum = 0;
};

template <Op O, class T>
ChunkAggregate<T> Aggregate(const T* x, size_t begin, size_t end, bool approximate) {
  ChunkAggregate<T> a{IdentityOf<T>(O), {}, 0};
  if (approximate) {
    for (size_t i = begin; i < end; ++i)
      a.sum.Add(static_cast<double>(x[i])), a.absSum += std::abs(static_cast<double>(x[i]));
  } else {
    for (size_t i = begin; i < end; ++i)
      a.acc = Apply<O>(a.acc, x[i]);
  }
  return a;
}

}  // namespace rsb
