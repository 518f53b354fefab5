// The CPU reference and the comparison, on hand-computed cases: if these are wrong, every
// validation is.
#include "engine/HostData.h"
#include "engine/LaunchPlan.h"
#include "engine/Runner.h"
#include "platform/Parallel.h"
#include "tasks/CReductionTask.h"
#include "tasks/CScanTask.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rsb {
namespace {

template <class T>
HostArray Make(ElementType type, std::vector<T> values) {
  HostArray a(type, values.size());
  std::copy(values.begin(), values.end(), a.As<T>());
  return a;
}

TEST(Reference, ReduceIntegersByHand) {
  const auto a = Make<int32_t>(ElementType::Int, {3, -1, 7, 0, 4, 1, 6, 3});
  EXPECT_EQ(CReductionTask::ReferenceReduce(a, Op::Sum).exact.As<int32_t>()[0], 23);
  EXPECT_EQ(CReductionTask::ReferenceReduce(a, Op::Min).exact.As<int32_t>()[0], -1);
  EXPECT_EQ(CReductionTask::ReferenceReduce(a, Op::Max).exact.As<int32_t>()[0], 7);
}

TEST(Reference, UnsignedSumWrapsLikeTheDevice) {
  const auto a = Make<uint32_t>(ElementType::Uint, {0xFFFFFFFFu, 2u});
  EXPECT_EQ(CReductionTask::ReferenceReduce(a, Op::Sum).exact.As<uint32_t>()[0], 1u);
}

TEST(Reference, ScanCourseExamples) {
  const auto a = Make<uint32_t>(ElementType::Uint, {3, 1, 7, 0, 4, 1, 6, 3});
  const auto inc = CScanTask::ReferenceScan(a, Op::Sum, ScanKind::Inclusive);
  const auto exc = CScanTask::ReferenceScan(a, Op::Sum, ScanKind::Exclusive);
  const std::vector<uint32_t> wantInc = {3, 4, 11, 11, 15, 16, 22, 25};
  const std::vector<uint32_t> wantExc = {0, 3, 4, 11, 11, 15, 16, 22};
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(ExpectedValues(inc, a).As<uint32_t>()[i], wantInc[i]) << i;
    EXPECT_EQ(ExpectedValues(exc, a).As<uint32_t>()[i], wantExc[i]) << i;
  }
}

TEST(Reference, ExclusiveScanStartsWithTheIdentity) {
  const auto a = Make<int64_t>(ElementType::Long, {5, -2, 9});
  EXPECT_EQ(
      ExpectedValues(CScanTask::ReferenceScan(a, Op::Min, ScanKind::Exclusive), a).As<int64_t>()[0],
      std::numeric_limits<int64_t>::max());
  EXPECT_EQ(
      ExpectedValues(CScanTask::ReferenceScan(a, Op::Max, ScanKind::Exclusive), a).As<int64_t>()[0],
      std::numeric_limits<int64_t>::min());
  const auto maxScan = ExpectedValues(CScanTask::ReferenceScan(a, Op::Max, ScanKind::Inclusive), a);
  EXPECT_EQ(maxScan.As<int64_t>()[1], 5);
  EXPECT_EQ(maxScan.As<int64_t>()[2], 9);
}

TEST(Reference, FloatSumIsComputedInDoubleWithABound) {
  const auto a = Make<float>(ElementType::Float, {1e8f, 1.0f, -1e8f});
  const auto e = CReductionTask::ReferenceReduce(a, Op::Sum);
  ASSERT_TRUE(e.approximate);
  EXPECT_DOUBLE_EQ(e.value[0], 1.0);  // float arithmetic would give 0
  EXPECT_GT(e.bound[0], 0.0);
  EXPECT_LT(e.bound[0], 1e3);
}

TEST(Compare, NamesVariantIndexExpectedAndActual) {
  const auto a = Make<int32_t>(ElementType::Int, {1, 2, 3});
  const auto e = CScanTask::ReferenceScan(a, Op::Sum, ScanKind::Inclusive);
  auto got = Make<int32_t>(ElementType::Int, {1, 3, 7});
  const Validation v = CompareResults("naive", e, got, a);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.message.find("naive"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("index 2"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("expected 6"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("got 7"), std::string::npos) << v.message;
  got.As<int32_t>()[2] = 6;
  EXPECT_TRUE(CompareResults("naive", e, got, a).passed);
}

TEST(Compare, ReportsAnUnwrittenElementAsPoison) {
  const auto a = Make<float>(ElementType::Float, {0.5f, 0.25f});
  const auto e = CScanTask::ReferenceScan(a, Op::Sum, ScanKind::Inclusive);
  HostArray got(ElementType::Float, 2);
  std::memset(got.Data(), kPoisonByte, got.Bytes());
  got.As<float>()[0] = 0.5f;
  const Validation v = CompareResults("x", e, got, a);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.message.find("index 1"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("poison"), std::string::npos) << v.message;
}

TEST(Compare, FloatOutsideTheBoundFailsAndNaNFails) {
  const auto a = Make<float>(ElementType::Float, {0.5f, 0.25f});
  const auto e = CReductionTask::ReferenceReduce(a, Op::Sum);
  EXPECT_TRUE(CompareResults("x", e, Make<float>(ElementType::Float, {0.75f}), a).passed);
  EXPECT_FALSE(CompareResults("x", e, Make<float>(ElementType::Float, {0.7501f}), a).passed);
  EXPECT_FALSE(CompareResults("x", e, Make<float>(ElementType::Float, {NAN}), a).passed);
  const auto scan = CScanTask::ReferenceScan(a, Op::Sum, ScanKind::Inclusive);
  EXPECT_TRUE(CompareResults("x", scan, Make<float>(ElementType::Float, {0.5f, 0.75f}), a).passed);
  EXPECT_FALSE(
      CompareResults("x", scan, Make<float>(ElementType::Float, {0.5f, 0.7501f}), a).passed);
  EXPECT_FALSE(CompareResults("x", scan, Make<float>(ElementType::Float, {NAN, 0.75f}), a).passed);
}

TEST(RandomInput, IsSeededAndNotConstant) {
  const auto a = RandomInput(ElementType::Uint, 1000, 42);
  const auto b = RandomInput(ElementType::Uint, 1000, 42);
  const auto c = RandomInput(ElementType::Uint, 1000, 43);
  EXPECT_EQ(std::memcmp(a.Data(), b.Data(), a.Bytes()), 0);
  EXPECT_NE(std::memcmp(a.Data(), c.Data(), a.Bytes()), 0);
  size_t distinct = 0;
  for (size_t i = 1; i < 1000; ++i)
    distinct += a.As<uint32_t>()[i] != a.As<uint32_t>()[0];
  EXPECT_GT(distinct, 900u);
}

// Sets RSB_HOST_THREADS for the life of the object (the host-side loops read it at each call).
class HostThreadsScope {
 public:
  explicit HostThreadsScope(size_t threads) {
    if (const char* old = std::getenv("RSB_HOST_THREADS"))
      old_ = old;
    setenv("RSB_HOST_THREADS", std::to_string(threads).c_str(), 1);
  }
  ~HostThreadsScope() {
    if (old_)
      setenv("RSB_HOST_THREADS", old_->c_str(), 1);
    else
      unsetenv("RSB_HOST_THREADS");
  }

 private:
  std::optional<std::string> old_;
};

// Several chunks and a ragged last one.
const size_t kManyChunks = 4 * kHostChunk + 1234;

const std::vector<ElementType> kTestedTypes = {ElementType::Uint, ElementType::Int,
                                               ElementType::Float, ElementType::Double};

bool SameBytes(const HostArray& a, const HostArray& b) {
  return a.Bytes() == b.Bytes() && std::memcmp(a.Data(), b.Data(), a.Bytes()) == 0;
}

TEST(Parallel, EveryIndexOnceAndTheFirstErrorRethrown) {
  HostThreadsScope four(4);
  EXPECT_EQ(HostThreads(), 4u);
  std::vector<std::atomic<int>> seen(1000);
  ParallelFor(seen.size(), [&](size_t i) { ++seen[i]; });
  for (size_t i = 0; i < seen.size(); ++i)
    EXPECT_EQ(seen[i].load(), 1) << i;
  EXPECT_THROW(ParallelFor(100,
                           [](size_t i) {
                             if (i == 37)
                               throw std::runtime_error("chunk 37");
                           }),
               std::runtime_error);
}

TEST(RandomInput, ValuesInTheirRanges) {
  for (ElementType type : kTestedTypes) {
    const HostArray a = RandomInput(type, kManyChunks, 5);
    DispatchType(type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = a.As<T>();
      const T lo = std::is_floating_point_v<T> ? T(-1) : std::is_signed_v<T> ? T(-1000) : T(0);
      const T hi = std::is_floating_point_v<T> ? T(1) : std::is_signed_v<T> ? T(1000) : T(2000);
      T min = x[0], max = x[0];
      for (size_t i = 0; i < a.Size(); ++i) {
        ASSERT_GE(x[i], lo) << ToString(type) << " " << i;
        if (std::is_floating_point_v<T>)
          ASSERT_LT(x[i], hi) << ToString(type) << " " << i;
        else
          ASSERT_LE(x[i], hi) << ToString(type) << " " << i;
        min = std::min(min, x[i]), max = std::max(max, x[i]);
      }
      // The whole range is used, not a corner of it.
      EXPECT_LT(double(min), double(lo) + 0.01 * (double(hi) - double(lo))) << ToString(type);
      EXPECT_GT(double(max), double(hi) - 0.01 * (double(hi) - double(lo))) << ToString(type);
    });
  }
}

// The input, the references and the comparison do not depend on how many threads compute them:
// chunk boundaries are fixed, so even floating-point sums agree to the last bit.
TEST(Reference, SameOnOneAndOnFourThreads) {
  for (ElementType type : kTestedTypes) {
    HostArray input[2];
    Expected inc[2], exc[2], red[2], min[2];
    for (size_t t : {0, 1}) {
      HostThreadsScope threads(t == 0 ? 1 : 4);
      input[t] = RandomInput(type, kManyChunks, 11);
      inc[t] = CScanTask::ReferenceScan(input[t], Op::Sum, ScanKind::Inclusive);
      exc[t] = CScanTask::ReferenceScan(input[t], Op::Sum, ScanKind::Exclusive);
      min[t] = CScanTask::ReferenceScan(input[t], Op::Min, ScanKind::Inclusive);
      red[t] = CReductionTask::ReferenceReduce(input[t], Op::Sum);
    }
    const std::string name = ToString(type);
    EXPECT_TRUE(SameBytes(input[0], input[1])) << name;
    for (const Expected* e : {inc, exc, min}) {
      EXPECT_TRUE(SameBytes(ExpectedValues(e[0], input[0]), ExpectedValues(e[1], input[1])))
          << name;
      EXPECT_TRUE(SameBytes(e[0].scan->acc, e[1].scan->acc)) << name;
      EXPECT_EQ(e[0].scan->sum, e[1].scan->sum) << name;
      EXPECT_EQ(e[0].scan->comp, e[1].scan->comp) << name;
      EXPECT_EQ(e[0].scan->absSum, e[1].scan->absSum) << name;
    }
    EXPECT_EQ(inc[0].scan->absSum.size(), IsFloatingPoint(type) ? HostChunks(kManyChunks) : 0u);
    EXPECT_TRUE(SameBytes(red[0].exact, red[1].exact)) << name;
    EXPECT_EQ(red[0].value, red[1].value) << name;
    EXPECT_EQ(red[0].bound, red[1].bound) << name;
    // A different seed, a different input.
    EXPECT_FALSE(SameBytes(input[0], RandomInput(type, kManyChunks, 12))) << name;
  }
}

// Integers: the chunked reference equals the plain sequential loop, for every operator and
// both scan kinds.
TEST(Reference, ChunkedEqualsSequentialForIntegers) {
  HostThreadsScope threads(3);
  auto check = [](auto tag, ElementType type) {
    using T = typename decltype(tag)::type;
    using U = std::make_unsigned_t<T>;
    const HostArray a = RandomInput(type, kManyChunks, 3);
    const T* x = a.As<T>();
    for (Op op : AllOps()) {
      auto apply = [op](T p, T q) {
        return op == Op::Sum ? T(U(p) + U(q)) : op == Op::Min ? std::min(p, q) : std::max(p, q);
      };
      const HostArray inc = ExpectedValues(CScanTask::ReferenceScan(a, op, ScanKind::Inclusive), a);
      const HostArray exc = ExpectedValues(CScanTask::ReferenceScan(a, op, ScanKind::Exclusive), a);
      T acc = IdentityOf<T>(op);
      for (size_t i = 0; i < a.Size(); ++i) {
        ASSERT_EQ(exc.As<T>()[i], acc) << ToString(type) << " " << ToString(op) << " " << i;
        acc = apply(acc, x[i]);
        ASSERT_EQ(inc.As<T>()[i], acc) << ToString(type) << " " << ToString(op) << " " << i;
      }
      EXPECT_EQ(CReductionTask::ReferenceReduce(a, op).exact.As<T>()[0], acc)
          << ToString(type) << ToString(op);
    }
  };
  check(TypeTag<uint32_t>{}, ElementType::Uint);
  check(TypeTag<int32_t>{}, ElementType::Int);
  check(TypeTag<uint64_t>{}, ElementType::Ulong);
  check(TypeTag<int64_t>{}, ElementType::Long);
}

// Floating point: the chunked reference is within its rounding of a long double sequential sum,
// and a device that sums in T, in order, one element after the other, passes the comparison.
TEST(Reference, ChunkedFloatSumsWithinTheBound) {
  HostThreadsScope threads(3);
  auto check = [](auto tag, ElementType type) {
    using T = typename decltype(tag)::type;
    const HostArray a = RandomInput(type, kManyChunks, 9);
    const T* x = a.As<T>();
    for (ScanKind kind : AllScanKinds()) {
      const bool inclusive = kind == ScanKind::Inclusive;
      const Expected e = CScanTask::ReferenceScan(a, Op::Sum, kind);
      ASSERT_TRUE(e.approximate);
      const HostArray values = ExpectedValues(e, a);
      HostArray naive(type, a.Size());
      long double exact = 0;
      T inOrder = 0;
      for (size_t i = 0; i < a.Size(); ++i) {
        if (inclusive)
          exact += x[i], inOrder += x[i];
        const double want = values.As<T>()[i];
        ASSERT_LE(std::abs(want - double(exact)),
                  std::numeric_limits<T>::epsilon() * std::abs(double(exact)) + 1e-300)
            << ToString(type) << " " << ToString(kind) << " " << i;
        naive.As<T>()[i] = inOrder;
        if (!inclusive)
          exact += x[i], inOrder += x[i];
      }
      const Validation v = CompareResults("in-order", e, naive, a);
      EXPECT_TRUE(v.passed) << v.message;
    }
    const Expected r = CReductionTask::ReferenceReduce(a, Op::Sum);
    long double exact = 0;
    for (size_t i = 0; i < a.Size(); ++i)
      exact += x[i];
    EXPECT_NEAR(r.value[0], double(exact), 1e-9);
  };
  check(TypeTag<float>{}, ElementType::Float);
  check(TypeTag<double>{}, ElementType::Double);
}

// The first wrong index is the smallest over the chunks, in the first and in the last chunk,
// and the count adds up every chunk's.
TEST(Compare, FirstWrongIndexAndCountAcrossChunks) {
  HostThreadsScope threads(4);
  const size_t n = kManyChunks;
  for (ElementType type : {ElementType::Uint, ElementType::Float}) {
    const HostArray a = RandomInput(type, n, 21);
    const Expected e = CScanTask::ReferenceScan(a, Op::Sum, ScanKind::Inclusive);
    HostArray got = ExpectedValues(e, a);
    ASSERT_TRUE(CompareResults("v", e, got, a).passed) << ToString(type);
    auto spoil = [&](size_t i) {
      DispatchType(type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        got.As<T>()[i] += T(100);
      });
    };
    spoil(n - 1);  // the last element of the last (short) chunk
    Validation v = CompareResults("v", e, got, a);
    EXPECT_FALSE(v.passed);
    EXPECT_NE(v.message.find(fmt::format("index {}:", n - 1)), std::string::npos) << v.message;
    EXPECT_NE(v.message.find(fmt::format("(1 of {} elements wrong)", n)), std::string::npos)
        << v.message;
    spoil(2 * kHostChunk + 7);
    spoil(kHostChunk);  // the first element of the second chunk
    v = CompareResults("v", e, got, a);
    EXPECT_NE(v.message.find(fmt::format("index {}:", kHostChunk)), std::string::npos) << v.message;
    EXPECT_NE(v.message.find(fmt::format("(3 of {} elements wrong)", n)), std::string::npos)
        << v.message;
    spoil(0);
    spoil(1);
    v = CompareResults("v", e, got, a);
    EXPECT_NE(v.message.find("index 0:"), std::string::npos) << v.message;
    EXPECT_NE(v.message.find(fmt::format("(5 of {} elements wrong)", n)), std::string::npos)
        << v.message;
    if (type == ElementType::Float) {  // the expected value comes with its bound
      EXPECT_NE(v.message.find("(+-"), std::string::npos) << v.message;
    }
  }
}

// The runner compares the output piece by piece as it is read back (ReadBackAndCompare): pieces
// in any order give the verdict and message of the whole output at once.
TEST(Compare, PiecesInAnyOrderGiveTheWholeVerdict) {
  HostThreadsScope threads(2);
  for (ElementType type : {ElementType::Int, ElementType::Double}) {
    const HostArray a = RandomInput(type, kManyChunks, 4);
    const Expected e = CScanTask::ReferenceScan(a, Op::Sum, ScanKind::Exclusive);
    HostArray got = ExpectedValues(e, a);
    DispatchType(type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      got.As<T>()[kHostChunk + 3] += T(50);
      got.As<T>()[3 * kHostChunk + 1] -= T(50);
      std::memset(&got.As<T>()[kManyChunks - 1], kPoisonByte, sizeof(T));
    });
    const Validation whole = CompareResults("v", e, got, a);
    EXPECT_FALSE(whole.passed);
    EXPECT_NE(whole.message.find(fmt::format("index {}:", kHostChunk + 3)), std::string::npos)
        << whole.message;
    EXPECT_NE(whole.message.find("(3 of"), std::string::npos) << whole.message;
    // Pieces of two chunks, last first, each copied into its own array.
    OutputComparison pieces("v", e, a);
    const size_t piece = 2 * kHostChunk;
    for (size_t k = HostChunks(kManyChunks) / 2 + 1; k-- > 0;) {
      const size_t first = k * piece;
      if (first >= kManyChunks)
        continue;
      const size_t count = std::min(piece, kManyChunks - first);
      HostArray p(type, piece);
      std::memcpy(p.Data(), got.As<unsigned char>() + first * SizeOf(type), count * SizeOf(type));
      pieces.Add(first, p, count);
    }
    const Validation v = pieces.Result();
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.message, whole.message);
    // Only the last element wrong, never written: named as such.
    HostArray right = ExpectedValues(e, a);
    std::memset(right.As<unsigned char>() + (kManyChunks - 1) * SizeOf(type), kPoisonByte,
                SizeOf(type));
    const Validation poisoned = CompareResults("v", e, right, a);
    EXPECT_NE(poisoned.message.find(fmt::format("index {}:", kManyChunks - 1)), std::string::npos)
        << poisoned.message;
    EXPECT_NE(poisoned.message.find("still holds the poison"), std::string::npos)
        << poisoned.message;
    // No verdict before every piece is in.
    OutputComparison part("v", e, a);
    part.Add(0, right, kHostChunk);
    EXPECT_THROW(part.Result(), std::logic_error);
  }
}

// A float scan's bound grows with the prefix: element 0 of an exclusive scan must be 0 within a
// hair, and the bound of element i is eps * sum|x| * (ceil(log2(terms)) + 16), plus the
// reference's rounding.
TEST(Compare, FloatScanBoundFollowsThePrefix) {
  const auto a = Make<float>(ElementType::Float, {1.0f, -3.0f, 0.5f, 2.0f});
  const Expected exc = CScanTask::ReferenceScan(a, Op::Sum, ScanKind::Exclusive);
  EXPECT_TRUE(
      CompareResults("x", exc, Make<float>(ElementType::Float, {0, 1, -2, -1.5f}), a).passed);
  Validation v =
      CompareResults("x", exc, Make<float>(ElementType::Float, {1e-30f, 1, -2, -1.5f}), a);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.message.find("index 0: expected 0 (+-"), std::string::npos) << v.message;
  const Expected inc = CScanTask::ReferenceScan(a, Op::Sum, ScanKind::Inclusive);
  const float eps = std::numeric_limits<float>::epsilon();
  // Element 3: sum|x| = 6.5 over 4 terms (3 levels), reference 0.5: bound 6.5 * 19 + 0.5 eps.
  const double bound = eps * (6.5 * 19 + 0.5);
  EXPECT_TRUE(
      CompareResults("x", inc,
                     Make<float>(ElementType::Float, {1, -2, -1.5f, 0.5f + float(0.9 * bound)}), a)
          .passed);
  v = CompareResults("x", inc,
                     Make<float>(ElementType::Float, {1, -2, -1.5f, 0.5f + float(1.2 * bound)}), a);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.message.find(fmt::format("index 3: expected 0.5 (+-{:.3g})", bound)),
            std::string::npos)
      << v.message;
}

TEST(Stats, MedianMinMaxMeanStddev) {
  const TimeStats s = Summarise({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.stddev, std::sqrt(5.0 / 3.0), 1e-12);
}

// The 95% interval of a median from order statistics, against the binomial tables (1-based
// ranks 1..6 of 6, 2..9 of 10, 6..15 of 20, 40..61 of 100); none below 6 samples.
TEST(Stats, MedianConfidenceIntervalRanks) {
  EXPECT_FALSE(MedianCiRanks(5).has_value());
  EXPECT_EQ(MedianCiRanks(6), std::make_pair(size_t(0), size_t(5)));
  EXPECT_EQ(MedianCiRanks(10), std::make_pair(size_t(1), size_t(8)));
  EXPECT_EQ(MedianCiRanks(20), std::make_pair(size_t(5), size_t(14)));
  EXPECT_EQ(MedianCiRanks(100), std::make_pair(size_t(39), size_t(60)));
  const auto big = MedianCiRanks(5000);  // 2^-5000 underflows: summed in log space
  ASSERT_TRUE(big.has_value());
  EXPECT_NEAR(double(big->first), 2500 - 1.96 * std::sqrt(5000.0) / 2, 2);
  EXPECT_EQ(big->first + big->second, 4999u);
  std::vector<double> t;
  for (int i = 20; i >= 1; --i)
    t.push_back(i);
  const TimeStats s = Summarise(t);
  EXPECT_DOUBLE_EQ(s.ciLow, 6);
  EXPECT_DOUBLE_EQ(s.ciHigh, 15);
  EXPECT_FALSE(CiWithin(s, 0.01));
  EXPECT_TRUE(CiWithin(s, 0.5));
}

// A variant's ceiling is that of its own traffic: reads only, the read stream; as many writes as
// reads, the copy stream; a mix, the copy for the common part and the rest alone, in turn.
TEST(Stats, CeilingOfATrafficMix) {
  Ceilings c;
  c.readGBs = 3000, c.writeGBs = 2000, c.copyGBs = 2500;
  EXPECT_EQ(CeilingFor(c, 1000, 0).name, "read");
  EXPECT_DOUBLE_EQ(CeilingFor(c, 1000, 0).gbytesS, 3000);
  EXPECT_EQ(CeilingFor(c, 0, 1000).name, "write");
  EXPECT_DOUBLE_EQ(CeilingFor(c, 0, 1000).gbytesS, 2000);
  EXPECT_EQ(CeilingFor(c, 1000, 1000).name, "copy");
  EXPECT_DOUBLE_EQ(CeilingFor(c, 1000, 1000).gbytesS, 2500);
  // 2000 read, 1000 written: 1000 + 1000 bytes as a copy, then 1000 read-only.
  EXPECT_EQ(CeilingFor(c, 2000, 1000).name, "copy+read");
  EXPECT_NEAR(CeilingFor(c, 2000, 1000).gbytesS, 3000 / (2000 / 2500.0 + 1000 / 3000.0), 1e-9);
  EXPECT_EQ(CeilingFor(c, 1000, 3000).name, "copy+write");
  EXPECT_NEAR(CeilingFor(c, 1000, 3000).gbytesS, 4000 / (2000 / 2500.0 + 2000 / 2000.0), 1e-9);
  EXPECT_EQ(CeilingFor(Ceilings{}, 1000, 0).gbytesS, 0);  // not measured
}

// An input smaller than the large streams may keep more of itself in the cache than they do: it
// is held against each stream's faster of the two sizes; an input of the large streams' size or
// more against theirs alone. Each records the smallest stream size its ceiling took rates from.
TEST(Stats, SmallerInputsMeetTheNearCacheStreams) {
  Ceilings c;
  c.readGBs = 30, c.writeGBs = 20, c.copyGBs = 25, c.bufferBytes = 256 << 20;
  c.near.readGBs = 40, c.near.writeGBs = 18, c.near.copyGBs = 35, c.nearBufferBytes = 64 << 20;
  const uint64_t small = 100 << 20, large = 256 << 20;
  EXPECT_DOUBLE_EQ(CeilingFor(c, small, 0).gbytesS, 40);
  EXPECT_EQ(CeilingFor(c, small, 0).streamBytes, 64u << 20);
  EXPECT_DOUBLE_EQ(CeilingFor(c, 0, small).gbytesS, 20);  // the faster write stream: the large
  EXPECT_DOUBLE_EQ(CeilingFor(c, small, small).gbytesS, 35);
  EXPECT_DOUBLE_EQ(CeilingFor(c, large, 0).gbytesS, 30);
  EXPECT_EQ(CeilingFor(c, large, 0).streamBytes, 256u << 20);
  EXPECT_DOUBLE_EQ(CeilingFor(c, large, large).gbytesS, 25);
  c.nearBufferBytes = 0;  // not run (no cache size): the large streams for every input
  EXPECT_DOUBLE_EQ(CeilingFor(c, small, 0).gbytesS, 30);
  Result r;
  r.cost.bytesRead = small, r.cost.bytesWritten = small;
  r.timeMs.median = 10;
  r.gbytesS = 2.0 * small / 1e7;
  DeviceInfo device;
  device.globalMemCacheBytes = 32 << 20;
  c.nearBufferBytes = 64 << 20;
  SetUtilisation(r, c, device);
  EXPECT_EQ(r.ceilingStreamBytes, 64u << 20);
  EXPECT_NEAR(r.utilisation, r.gbytesS / 35, 1e-12);
}

// Utilisation holds the bytes that must cross the memory interface against the ceiling of their
// mix: a convolution-like case reads 5 GB, 4 of them repeats the cache serves, and writes 1 GB
// in 1 s: 2 GB/s of copy traffic against the copy ceiling, while GB/s counts all 6 GB.
TEST(Stats, UtilisationLeavesOutRepeatedReads) {
  Ceilings c;
  c.readGBs = 3, c.writeGBs = 2, c.copyGBs = 2.5;
  Result r;
  r.cost.bytesRead = 5'000'000'000, r.cost.bytesReadRepeated = 4'000'000'000;
  r.cost.bytesWritten = 1'000'000'000;
  r.timeMs.median = 1000;
  r.gbytesS = 6;
  DeviceInfo device;
  device.globalMemCacheBytes = 50'000'000;
  SetUtilisation(r, c, device);
  EXPECT_EQ(r.ceiling, "copy");
  EXPECT_NEAR(r.utilisation, 2 / 2.5, 1e-12);
  EXPECT_NEAR(r.bandwidthUtil, 6 / 2.5, 1e-12);  // the older figure: every byte, against copy
  EXPECT_FALSE(r.fitsInCache);                   // 1 GB distinct, past the 50 MB cache
}

// A ceiling is the fastest run of its stream (a shared machine's median moves with others'
// load, and a variant's median then passes it); no runs, no ceiling.
// A launch's reads of what the launch before wrote are served by the cache where that fits in
// it: a three-level tree of 64, 32 and 16 MiB reads (each level writing half) on a 32 MiB cache
// reads the 32 and 16 MiB levels from the cache; with a 16 MiB cache only the last level.
TEST(Stats, ReadsOfTheLaunchBeforeComeFromTheCacheWhereTheyFit) {
  const uint64_t M = 1 << 20;
  LaunchPlan plan;
  for (uint64_t read : {64 * M, 32 * M, 16 * M})
    plan.steps.push_back(KernelStep("Level", {}, 1, 1).Costs(read, read / 2, 0, 1));
  LaunchPlan cached = plan;
  CountCacheServedReads(cached, 32 * M);
  EXPECT_EQ(CostOf(cached).bytesReadRepeated, 48 * M);
  EXPECT_EQ(CostOf(cached).MemoryBytes(), 64 * M + 56 * M);
  cached = plan;
  CountCacheServedReads(cached, 16 * M);
  EXPECT_EQ(CostOf(cached).bytesReadRepeated, 16 * M);
  cached = plan;
  CountCacheServedReads(cached, 0);  // no cache size reported: every read from memory
  EXPECT_EQ(CostOf(cached).bytesReadRepeated, 0u);
  // A read that repeats already (a halo) is not counted twice: at most the distinct reads.
  plan.steps[1].Repeated(30 * M);
  CountCacheServedReads(plan, 32 * M);
  EXPECT_EQ(plan.steps[1].cost.bytesReadRepeated, 32 * M);
}

TEST(Stats, CeilingIsTheFastestRun) {
  EXPECT_NEAR(StreamGBs({10, 8, 12, 9, 11}, 1e9), 125, 1e-9);  // 1 GB in 8 ms
  EXPECT_EQ(StreamGBs({}, 1e9), 0);
}

// The cache mark: inputs up to twice the last-level cache, where a part can stay cached
// between runs; one byte more is past it.
TEST(Stats, CacheMarkCoversTwiceTheLastLevelCache) {
  Ceilings c;
  c.readGBs = c.writeGBs = c.copyGBs = 1;
  DeviceInfo device;
  device.globalMemCacheBytes = 32 << 20;
  Result r;
  r.timeMs.median = 1;
  r.gbytesS = 1;
  r.cost.bytesRead = 64 << 20;
  SetUtilisation(r, c, device);
  EXPECT_TRUE(r.fitsInCache);
  r.cost.bytesRead = (64 << 20) + 1;
  SetUtilisation(r, c, device);
  EXPECT_FALSE(r.fitsInCache);
  device.globalMemCacheBytes = 0;  // unknown: never marked
  r.cost.bytesRead = 1;
  SetUtilisation(r, c, device);
  EXPECT_FALSE(r.fitsInCache);
}

}  // namespace
}  // namespace rsb
