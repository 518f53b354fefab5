// The CPU reference and the comparison, on hand-computed cases: if these are wrong, every
// validation is.
#include "HostData.h"
#include "Runner.h"

#include <gtest/gtest.h>

#include <cmath>

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
  EXPECT_EQ(ReferenceReduce(a, Op::Sum).exact.As<int32_t>()[0], 23);
  EXPECT_EQ(ReferenceReduce(a, Op::Min).exact.As<int32_t>()[0], -1);
  EXPECT_EQ(ReferenceReduce(a, Op::Max).exact.As<int32_t>()[0], 7);
}

TEST(Reference, UnsignedSumWrapsLikeTheDevice) {
  const auto a = Make<uint32_t>(ElementType::Uint, {0xFFFFFFFFu, 2u});
  EXPECT_EQ(ReferenceReduce(a, Op::Sum).exact.As<uint32_t>()[0], 1u);
}

TEST(Reference, ScanCourseExamples) {
  const auto a = Make<uint32_t>(ElementType::Uint, {3, 1, 7, 0, 4, 1, 6, 3});
  const auto inc = ReferenceScan(a, Op::Sum, ScanKind::Inclusive);
  const auto exc = ReferenceScan(a, Op::Sum, ScanKind::Exclusive);
  const std::vector<uint32_t> wantInc = {3, 4, 11, 11, 15, 16, 22, 25};
  const std::vector<uint32_t> wantExc = {0, 3, 4, 11, 11, 15, 16, 22};
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(inc.exact.As<uint32_t>()[i], wantInc[i]) << i;
    EXPECT_EQ(exc.exact.As<uint32_t>()[i], wantExc[i]) << i;
  }
}

TEST(Reference, ExclusiveScanStartsWithTheIdentity) {
  const auto a = Make<int64_t>(ElementType::Long, {5, -2, 9});
  EXPECT_EQ(ReferenceScan(a, Op::Min, ScanKind::Exclusive).exact.As<int64_t>()[0],
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ReferenceScan(a, Op::Max, ScanKind::Exclusive).exact.As<int64_t>()[0],
            std::numeric_limits<int64_t>::min());
  const auto maxScan = ReferenceScan(a, Op::Max, ScanKind::Inclusive);
  EXPECT_EQ(maxScan.exact.As<int64_t>()[1], 5);
  EXPECT_EQ(maxScan.exact.As<int64_t>()[2], 9);
}

TEST(Reference, FloatSumIsComputedInDoubleWithABound) {
  const auto a = Make<float>(ElementType::Float, {1e8f, 1.0f, -1e8f});
  const auto e = ReferenceReduce(a, Op::Sum);
  ASSERT_TRUE(e.approximate);
  EXPECT_DOUBLE_EQ(e.value[0], 1.0);  // float arithmetic would give 0
  EXPECT_GT(e.bound[0], 0.0);
  EXPECT_LT(e.bound[0], 1e3);
}

TEST(Compare, NamesVariantIndexExpectedAndActual) {
  const auto a = Make<int32_t>(ElementType::Int, {1, 2, 3});
  const auto e = ReferenceScan(a, Op::Sum, ScanKind::Inclusive);
  auto got = Make<int32_t>(ElementType::Int, {1, 3, 7});
  const Validation v = CompareResults("naive", e, got);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.message.find("naive"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("index 2"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("expected 6"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("got 7"), std::string::npos) << v.message;
  got.As<int32_t>()[2] = 6;
  EXPECT_TRUE(CompareResults("naive", e, got).passed);
}

TEST(Compare, ReportsAnUnwrittenElementAsPoison) {
  const auto a = Make<float>(ElementType::Float, {0.5f, 0.25f});
  const auto e = ReferenceScan(a, Op::Sum, ScanKind::Inclusive);
  HostArray got(ElementType::Float, 2);
  std::memset(got.Data(), kPoisonByte, got.Bytes());
  got.As<float>()[0] = 0.5f;
  const Validation v = CompareResults("x", e, got);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.message.find("index 1"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("poison"), std::string::npos) << v.message;
}

TEST(Compare, FloatOutsideTheBoundFailsAndNaNFails) {
  const auto a = Make<float>(ElementType::Float, {0.5f, 0.25f});
  const auto e = ReferenceReduce(a, Op::Sum);
  EXPECT_TRUE(CompareResults("x", e, Make<float>(ElementType::Float, {0.75f})).passed);
  EXPECT_FALSE(CompareResults("x", e, Make<float>(ElementType::Float, {0.7501f})).passed);
  EXPECT_FALSE(CompareResults("x", e, Make<float>(ElementType::Float, {NAN})).passed);
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

}  // namespace
}  // namespace rsb
