#include "HostData.h"

#include "Parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace rsb {

namespace {

// Integer sums wrap (two's complement), computed in the unsigned type so that the host never
// has undefined behaviour. The operator is a template argument: the loops below are compiled
// once per operator instead of switching per element.
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
    const bool sumBigger = std::abs(sum) >= std::abs(x);
    const double big = sumBigger ? sum : x, small = sumBigger ? x : sum;
    comp += (big - t) + small;
    sum = t;
  }
  void Add(const CompensatedSum& other) { Add(other.sum), Add(other.comp); }
  double Value() const { return sum + comp; }
};

// ceil(log2(terms + 1)): the levels of a balanced tree over `terms` terms (its bit width).
int Levels(size_t terms) {
  return terms ? 64 - __builtin_clzll(terms) : 0;
}

// The error bound of a sum of `terms` floating-point values whose magnitudes sum to absSum, in
// whatever order the device adds them.
template <class T>
double Bound(double absSum, size_t terms) {
  const double eps = std::numeric_limits<T>::epsilon();
  return eps * absSum * (Levels(terms) + 16.0);
}

// What a floating-point scan's element may be off by: the sum's bound plus the reference's
// rounding to T (half an ulp of it, or of the smallest subnormal).
template <class T>
double ScanBound(double absSum, size_t terms, T reference) {
  return Bound<T>(absSum, terms) +
         std::numeric_limits<T>::epsilon() * std::abs(static_cast<double>(reference)) +
         static_cast<double>(std::numeric_limits<T>::denorm_min());
}

template <class T>
std::string Show(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return fmt::format("{:.9g}", v);
  else
    return fmt::format("{}", v);
}

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// splitmix64's output function (Steele, Lea, Flood 2014).
uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A chunk's aggregate: the operator over its elements; for floating-point sums also the
// compensated double sum and sum |x|.
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

}  // namespace

HostArray RandomInput(ElementType type, size_t n, uint64_t seed) {
  HostArray a = HostArray::Uninitialized(type, n);
  const uint64_t key = Mix(seed);
  DispatchType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = a.As<T>();
    ParallelChunks(n, [&](size_t, size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        const uint64_t r = Mix(key + (i + 1) * kGolden);
        if constexpr (std::is_same_v<T, float>) {
          p[i] = static_cast<float>(static_cast<int32_t>(r >> 40) - (1 << 23)) * 0x1p-23f;
        } else if constexpr (std::is_same_v<T, double>) {
          p[i] = static_cast<double>(static_cast<int64_t>(r >> 11) - (int64_t(1) << 52)) * 0x1p-52;
        } else {
          // Lemire's multiply-shift: [0, 2000] from the top 32 bits (bias below 2^-20).
          const uint64_t v = ((r >> 32) * 2001) >> 32;
          if constexpr (std::is_signed_v<T>)
            p[i] = static_cast<T>(static_cast<int64_t>(v) - 1000);
          else
            p[i] = static_cast<T>(v);
        }
      }
    });
  });
  return a;
}

Expected::Expected(ElementType type, size_t n)
    : exact(HostArray::Uninitialized(type, n)), type_(type), n_(n) {}

Expected ReferenceReduce(const HostArray& input, Op op) {
  Expected e(input.Type(), 1);
  e.approximate = IsFloatingPoint(input.Type()) && op == Op::Sum;
  DispatchType(input.Type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    DispatchOp(op, [&](auto opTag) {
      constexpr Op O = decltype(opTag)::value;
      const T* x = input.As<T>();
      std::vector<ChunkAggregate<T>> chunks(HostChunks(input.Size()));
      ParallelChunks(input.Size(), [&](size_t c, size_t begin, size_t end) {
        chunks[c] = Aggregate<O>(x, begin, end, e.approximate);
      });
      ChunkAggregate<T> total{IdentityOf<T>(O), {}, 0};
      for (const auto& a : chunks) {
        total.acc = Apply<O>(total.acc, a.acc);
        total.sum.Add(a.sum), total.absSum += a.absSum;
      }
      if (e.approximate) {
        e.exact.As<T>()[0] = static_cast<T>(total.sum.Value());
        e.value = {total.sum.Value()};
        e.bound = {Bound<T>(total.absSum, input.Size())};
      } else {
        e.exact.As<T>()[0] = total.acc;
      }
    });
  });
  return e;
}

// Three steps, each over fixed chunks: every chunk's aggregate (in parallel), the chunks'
// offsets (in order, on one core: one value per 2^16 elements), every chunk's scan from its
// offset (in parallel).
Expected ReferenceScan(const HostArray& input, Op op, ScanKind kind) {
  const size_t n = input.Size();
  Expected e(input.Type(), n);
  e.approximate = IsFloatingPoint(input.Type()) && op == Op::Sum;
  e.inclusive = kind == ScanKind::Inclusive;
  DispatchType(input.Type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    DispatchOp(op, [&](auto opTag) {
      constexpr Op O = decltype(opTag)::value;
      const T* x = input.As<T>();
      T* out = e.exact.As<T>();
      std::vector<ChunkAggregate<T>> offsets(HostChunks(n));
      ParallelChunks(n, [&](size_t c, size_t begin, size_t end) {
        offsets[c] = Aggregate<O>(x, begin, end, e.approximate);
      });
      ChunkAggregate<T> running{IdentityOf<T>(O), {}, 0};
      if (e.approximate)
        e.absBefore.resize(offsets.size());
      for (size_t c = 0; c < offsets.size(); ++c) {
        const ChunkAggregate<T> chunk = offsets[c];
        offsets[c] = running;
        if (e.approximate)
          e.absBefore[c] = running.absSum;
        running.acc = Apply<O>(running.acc, chunk.acc);
        running.sum.Add(chunk.sum), running.absSum += chunk.absSum;
      }
      const bool inclusive = e.inclusive;
      ParallelChunks(n, [&](size_t c, size_t begin, size_t end) {
        if constexpr (std::is_floating_point_v<T> && O == Op::Sum) {
          CompensatedSum s = offsets[c].sum;
          for (size_t i = begin; i < end; ++i) {
            if (!inclusive)
              out[i] = static_cast<T>(s.Value());
            s.Add(static_cast<double>(x[i]));
            if (inclusive)
              out[i] = static_cast<T>(s.Value());
          }
        } else {
          T acc = offsets[c].acc;
          for (size_t i = begin; i < end; ++i) {
            if (!inclusive)
              out[i] = acc;
            acc = Apply<O>(acc, x[i]);
            if (inclusive)
              out[i] = acc;
          }
        }
      });
    });
  });
  return e;
}

Validation CompareResults(const std::string& variant, const Expected& expected,
                          const HostArray& actual, const HostArray& input) {
  Validation v;
  if (actual.Size() != expected.Size() || actual.Type() != expected.Type()) {
    v.message = fmt::format("{}: output has {} elements, expected {}", variant, actual.Size(),
                            expected.Size());
    return v;
  }
  const bool scanBound = expected.approximate && expected.value.empty();
  if (scanBound && (input.Size() != expected.Size() || input.Type() != expected.Type() ||
                    expected.absBefore.size() != HostChunks(expected.Size())))
    throw std::invalid_argument(
        "CompareResults: a floating-point scan needs the input its reference was computed from");
  return DispatchType(actual.Type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* got = actual.As<T>();
    const T* want = expected.exact.As<T>();
    const T* x = input.As<T>();
    const size_t n = expected.Size();
    // The scan's bound at i: sum |x| from the chunk's offset, in the same order whatever the
    // thread count.
    auto scanBoundAt = [&](size_t i) {
      const size_t begin = i / kHostChunk * kHostChunk;
      double abs = expected.absBefore[i / kHostChunk];
      for (size_t j = begin; j < i + expected.inclusive; ++j)
        abs += std::abs(static_cast<double>(x[j]));
      return ScanBound<T>(abs, i + expected.inclusive, want[i]);
    };
    // Per chunk: how many are wrong and the first of them.
    std::vector<size_t> wrong(HostChunks(n)), first(HostChunks(n));
    ParallelChunks(n, [&](size_t c, size_t begin, size_t end) {
      size_t count = 0, at = end;
      auto check = [&](size_t i, bool ok) {
        if (!ok && count++ == 0)
          at = i;
      };
      if (!expected.approximate) {
        if (std::memcmp(got + begin, want + begin, (end - begin) * sizeof(T)) != 0)
          for (size_t i = begin; i < end; ++i)
            check(i, std::memcmp(&got[i], &want[i], sizeof(T)) == 0);
      } else if (!scanBound) {
        for (size_t i = begin; i < end; ++i)  // false for NaN
          check(i, std::abs(static_cast<double>(got[i]) - expected.value[i]) <= expected.bound[i]);
      } else if constexpr (std::is_floating_point_v<T>) {
        double abs = expected.absBefore[c];
        for (size_t i = begin; i < end; ++i) {
          const double before = abs;
          abs += std::abs(static_cast<double>(x[i]));
          const size_t terms = i + expected.inclusive;
          const double bound = ScanBound<T>(expected.inclusive ? abs : before, terms, want[i]);
          check(i, std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i])) <= bound);
        }
      }
      wrong[c] = count, first[c] = at;
    });
    size_t total = 0, firstWrong = n;
    for (size_t c = 0; c < wrong.size(); ++c)
      if (wrong[c]) {
        total += wrong[c];
        firstWrong = std::min(firstWrong, first[c]);
      }
    if (total == 0) {
      v.passed = true;
      return v;
    }
    std::string want0;
    if (!expected.approximate)
      want0 = Show(want[firstWrong]);
    else if (!scanBound)
      want0 =
          fmt::format("{:.9g} (+-{:.3g})", expected.value[firstWrong], expected.bound[firstWrong]);
    else
      want0 = fmt::format("{:.9g} (+-{:.3g})", static_cast<double>(want[firstWrong]),
                          scanBoundAt(firstWrong));
    T poison;
    std::memset(&poison, kPoisonByte, sizeof(T));
    const bool unwritten = std::memcmp(&got[firstWrong], &poison, sizeof(T)) == 0;
    v.message = fmt::format(
        "{}: wrong result at index {}: expected {}, got {}{} ({} of {} "
        "elements wrong)",
        variant, firstWrong, want0, Show(got[firstWrong]),
        unwritten ? " (never written: still holds the poison)" : "", total, n);
    return v;
  });
}

}  // namespace rsb
