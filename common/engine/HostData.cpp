#include "engine/HostData.h"

#include "engine/HostSums.h"
#include "engine/TaskUtil.h"
#include "platform/Parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include <sys/resource.h>

namespace rsb {

namespace {

// What a floating-point scan's element may be off by: the sum's bound plus the reference's
// rounding to T (half an ulp of it, or of the smallest subnormal), eps(T) * (sum|x| *
// (levels + 16) + |reference|) + denorm_min. Along a chunk terms grows by one per element and the
// levels change only at powers of two: they are not recomputed per element.
template <class T>
class ScanBounds {
 public:
  double operator()(double absSum, size_t terms, T reference) {
    if (terms >= levelsBelow_) {
      const int levels = Levels(terms);
      levelsBelow_ = size_t(1) << levels;
      factor_ = levels + 16.0;
    }
    const double eps = std::numeric_limits<T>::epsilon();
    return eps * absSum * factor_ + eps * std::abs(static_cast<double>(reference)) +
           static_cast<double>(std::numeric_limits<T>::denorm_min());
  }

 private:
  size_t levelsBelow_ = 0;  // the levels hold for terms below this
  double factor_ = 0;
};

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

Expected::Expected(ElementType type, size_t n, size_t stored)
    : exact(HostArray::Uninitialized(type, stored)), type_(type), n_(n) {}

namespace {

template <class T>
bool SameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// What the comparison of one chunk found: how many are wrong, and the first of them.
struct ChunkVerdict {
  size_t wrong = 0, first = 0;
  std::string want, got;
  bool unwritten = false;
};

// The chunk's first wrong element, for the message; out of the hot loops.
template <class T>
[[gnu::noinline, gnu::cold]] void RecordFirst(ChunkVerdict& v, size_t i, T got, std::string want) {
  v.first = i, v.want = std::move(want), v.got = Show(got);
  T poison;
  std::memset(&poison, kPoisonByte, sizeof(T));
  v.unwritten = SameBits(got, poison);
}

std::string ShowBounded(double value, double bound) {
  return fmt::format("{:.9g} (+-{:.3g})", value, bound);
}

// A scan's reference of chunk c, element by element: f(i, reference, absSum, terms) for every i
// of [begin, end); absSum (sum |x| over the terms summed into i) for floating-point sums only.
template <Op O, bool Inclusive, class T, class F>
void ScanChunkOf(const Expected::ScanOffsets& s, const T* x, size_t c, size_t begin, size_t end,
                 F& f) {
  if constexpr (std::is_floating_point_v<T> && O == Op::Sum) {
    CompensatedSum sum{s.sum[c], s.comp[c]};
    double abs = s.absSum[c];
    for (size_t i = begin; i < end; ++i) {
      if (!Inclusive)
        f(i, static_cast<T>(sum.Value()), abs, i);
      sum.Add(static_cast<double>(x[i])), abs += std::abs(static_cast<double>(x[i]));
      if (Inclusive)
        f(i, static_cast<T>(sum.Value()), abs, i + 1);
    }
  } else {
    T acc = s.acc.As<T>()[c];
    for (size_t i = begin; i < end; ++i) {
      if (!Inclusive)
        f(i, acc, 0.0, i);
      acc = Apply<O>(acc, x[i]);
      if (Inclusive)
        f(i, acc, 0.0, i + 1);
    }
  }
}

template <Op O, class T, class F>
void ScanChunk(const Expected& e, const T* x, size_t c, size_t begin, size_t end, F&& f) {
  if (e.scan->inclusive)
    ScanChunkOf<O, true>(*e.scan, x, c, begin, end, f);
  else
    ScanChunkOf<O, false>(*e.scan, x, c, begin, end, f);
}

// Output elements [begin, end) of chunk c against the reference; got[i - first] is element i.
template <class T>
ChunkVerdict CompareChunk(const Expected& e, const HostArray& input, const T* got, size_t first,
                          size_t c, size_t begin, size_t end) {
  ChunkVerdict v;
  if (e.scan) {
    const T* x = input.As<T>();
    ScanBounds<T> bounds;
    DispatchOp(e.scan->op, [&](auto opTag) {
      constexpr Op O = decltype(opTag)::value;
      ScanChunk<O>(e, x, c, begin, end, [&](size_t i, T ref, double abs, size_t terms) {
        const T g = got[i - first];
        if constexpr (std::is_floating_point_v<T> && O == Op::Sum) {
          const double bound = bounds(abs, terms, ref);
          // NaN fails
          if (__builtin_expect(
                  !(std::abs(static_cast<double>(g) - static_cast<double>(ref)) <= bound), 0) &&
              v.wrong++ == 0)
            RecordFirst(v, i, g, ShowBounded(static_cast<double>(ref), bound));
        } else {
          if (__builtin_expect(!SameBits(g, ref), 0) && v.wrong++ == 0)
            RecordFirst(v, i, g, Show(ref));
        }
      });
    });
  } else if (e.approximate) {
    for (size_t i = begin; i < end; ++i) {
      const T g = got[i - first];
      if (!(std::abs(static_cast<double>(g) - e.value[i]) <= e.bound[i]) && v.wrong++ == 0)
        RecordFirst(v, i, g, ShowBounded(e.value[i], e.bound[i]));
    }
  } else {
    const T* want = e.exact.As<T>();
    if (std::memcmp(got + (begin - first), want + begin, (end - begin) * sizeof(T)) != 0)
      for (size_t i = begin; i < end; ++i)
        if (!SameBits(got[i - first], want[i]) && v.wrong++ == 0)
          RecordFirst(v, i, got[i - first], Show(want[i]));
  }
  return v;
}

}  // namespace

HostArray ExpectedValues(const Expected& e, const HostArray& input) {
  HostArray out = HostArray::Uninitialized(e.Type(), e.Size());
  DispatchType(e.Type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.As<T>();
    if (e.scan) {
      const T* x = input.As<T>();
      DispatchOp(e.scan->op, [&](auto opTag) {
        constexpr Op O = decltype(opTag)::value;
        ParallelChunks(e.Size(), [&](size_t c, size_t begin, size_t end) {
          ScanChunk<O>(e, x, c, begin, end, [&](size_t i, T ref, double, size_t) { o[i] = ref; });
        });
      });
    } else if (e.approximate) {
      for (size_t i = 0; i < e.Size(); ++i)
        o[i] = static_cast<T>(e.value[i]);
    } else {
      std::memcpy(o, e.exact.Data(), out.Bytes());
    }
  });
  return out;
}

OutputComparison::OutputComparison(std::string variant, const Expected& expected,
                                   const HostArray& input)
    : variant_(std::move(variant)), expected_(expected), input_(input) {
  if (expected.scan && (input.Size() != expected.Size() || input.Type() != expected.Type()))
    throw std::invalid_argument(
        "OutputComparison: a scan is compared with the input its reference was computed from");
}

void OutputComparison::Add(size_t first, const HostArray& piece, size_t count) {
  if (piece.Type() != expected_.Type() || count > piece.Size() || first % kHostChunk != 0 ||
      first + count > expected_.Size())
    throw std::invalid_argument(
        fmt::format("OutputComparison: piece [{}, {}) of {}: not a piece of this output", first,
                    first + count, expected_.Size()));
  DispatchType(piece.Type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const size_t firstChunk = first / kHostChunk;
    std::vector<ChunkVerdict> verdicts(HostChunks(count));
    ParallelChunks(count, [&](size_t c, size_t begin, size_t end) {
      verdicts[c] = CompareChunk<T>(expected_, input_, piece.As<T>(), first, firstChunk + c,
                                    first + begin, first + end);
    });
    for (ChunkVerdict& v : verdicts) {
      if (v.wrong == 0)
        continue;
      if (wrong_ == 0 || v.first < first_)
        first_ = v.first, want_ = std::move(v.want), got_ = std::move(v.got),
        unwritten_ = v.unwritten;
      wrong_ += v.wrong;
    }
  });
  compared_ += count;
}

Validation OutputComparison::Result() const {
  Validation v;
  if (compared_ != expected_.Size())
    throw std::logic_error(
        fmt::format("OutputComparison: {} of {} elements compared", compared_, expected_.Size()));
  if (wrong_ == 0) {
    v.passed = true;
    return v;
  }
  v.neverWritten = unwritten_;
  v.message = fmt::format(
      "{}: wrong result at index {}: expected {}, got {}{} ({} of {} "
      "elements wrong)",
      variant_, first_, want_, got_, unwritten_ ? " (never written: still holds the poison)" : "",
      wrong_, expected_.Size());
  return v;
}

Validation CompareResults(const std::string& variant, const Expected& expected,
                          const HostArray& actual, const HostArray& input) {
  if (actual.Size() != expected.Size() || actual.Type() != expected.Type()) {
    Validation v;
    v.message = fmt::format("{}: output has {} elements, expected {}", variant, actual.Size(),
                            expected.Size());
    return v;
  }
  OutputComparison comparison(variant, expected, input);
  comparison.Add(0, actual, actual.Size());
  return comparison.Result();
}

uint64_t ExactReferenceBytes(ElementType type, size_t outputs) {
  return uint64_t(outputs) * SizeOf(type);
}

uint64_t BoundedReferenceBytes(ElementType type, size_t outputs) {
  return uint64_t(outputs) * (SizeOf(type) + 2 * sizeof(double));
}

uint64_t ScanReferenceBytes(ElementType type, size_t n) {
  return uint64_t(HostChunks(n)) * std::max<uint64_t>(SizeOf(type), 3 * sizeof(double));
}

namespace {
// A "Name:   123 kB" line's value in bytes from a /proc file (0 if absent).
uint64_t ProcKiB(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + ":", 0) == 0) {
      std::istringstream fields(line.substr(name.size() + 1));
      uint64_t kib = 0;
      fields >> kib;
      return kib * 1024;
    }
  return 0;
}
}  // namespace

HostMemory AvailableHostMemory() {
  HostMemory m;
  if (const uint64_t avail = ProcKiB("/proc/meminfo", "MemAvailable"))
    m = {avail, "MemAvailable"};
  const std::pair<int, const char*> limits[] = {{RLIMIT_AS, "VmSize"}, {RLIMIT_DATA, "VmData"}};
  for (const auto& [resource, used] : limits) {
    rlimit l{};
    if (getrlimit(resource, &l) != 0 || l.rlim_cur == RLIM_INFINITY)
      continue;
    const uint64_t inUse = ProcKiB("/proc/self/status", used);
    const uint64_t left = l.rlim_cur > inUse ? l.rlim_cur - inUse : 0;
    if (left < m.bytes)
      m = {left, resource == RLIMIT_AS ? "RLIMIT_AS" : "RLIMIT_DATA"};
  }
  return m;
}

std::optional<std::string> HostMemoryShortfall(uint64_t needed, const HostMemory& available) {
  if (needed <= available.bytes)
    return std::nullopt;
  return fmt::format("needs {} of host memory, {} available ({})", BytesShort(needed),
                     BytesShort(available.bytes), available.limit);
}

}  // namespace rsb
