// The per-kernel breakdown: how one run's events reduce to kernel times and gaps that add up to
// its span, how the median run is chosen, and what the executable reports (JSON, CSV, table) on
// the test device, for variants of one launch, of a few levels and of many steps.
#include "TestSupport.h"
#include "engine/Breakdown.h"
#include "report/Report.h"
#include "tasks/CReductionTask.h"
#include "tasks/CScanTask.h"
#include "tasks/Tasks.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

namespace rsb::test {
namespace {

uint64_t KernelNs(const RunBreakdown& run) {
  uint64_t ns = 0;
  for (const auto& k : run.kernels)
    ns += k.ns;
  return ns;
}

TEST(Breakdown, KernelTimesAndGapsAddUpToTheSpan) {
  // A, idle 5, B, idle 2, A again: two names, launch order kept, gaps between commands.
  const RunBreakdown run =
      BreakDownRun({{"A", 10, 100, 120}, {"B", 20, 125, 160}, {"A", 30, 162, 170}});
  EXPECT_EQ(run.spanNs, 70u);
  EXPECT_EQ(run.gapsNs, 7u);
  ASSERT_EQ(run.kernels.size(), 2u);
  EXPECT_EQ(run.kernels[0].name, "A");
  EXPECT_EQ(run.kernels[0].launches, 2u);
  EXPECT_EQ(run.kernels[0].bytes, 40u);
  EXPECT_EQ(run.kernels[0].ns, 28u);
  EXPECT_EQ(run.kernels[1].name, "B");
  EXPECT_EQ(run.kernels[1].ns, 35u);
  EXPECT_EQ(KernelNs(run) + run.gapsNs, run.spanNs);
}

// Commands that overlap (an out-of-order queue, or a device whose clock is coarse) are counted
// once: the identity holds exactly whatever the timestamps say.
TEST(Breakdown, OverlapsAreClippedSoTheIdentityStillHolds) {
  for (const auto& commands : std::vector<std::vector<CommandTiming>>{
           {{"A", 0, 100, 150}, {"B", 0, 140, 200}},                    // B starts before A ends
           {{"A", 0, 100, 250}, {"B", 0, 120, 200}},                    // A ends after the last one
           {{"A", 0, 100, 150}, {"B", 0, 90, 95}, {"C", 0, 160, 170}},  // B wholly before
           {{"A", 0, 100, 100}},                                        // zero length
           {{"A", 0, 100, 150}, {"B", 0, 160, 90}}}) {                  // end before start
    const RunBreakdown run = BreakDownRun(commands);
    EXPECT_EQ(KernelNs(run) + run.gapsNs, run.spanNs);
    const uint64_t begin = commands.front().startNs, end = commands.back().endNs;
    EXPECT_EQ(run.spanNs, end > begin ? end - begin : 0);
  }
}

RunBreakdown MakeRun(uint64_t a, uint64_t b, uint64_t gaps) {
  return {a + b + gaps, gaps, {{"A", 1, 100, a}, {"B", 3, 300, b}}, {}};
}

TEST(Breakdown, ReportsTheMedianRunSoItAddsUpToTheMedianSpan) {
  // Spans 30, 12, 21: the median run is the third one.
  const Breakdown odd =
      SummariseBreakdown({MakeRun(20, 5, 5), MakeRun(5, 5, 2), MakeRun(10, 10, 1)});
  ASSERT_EQ(odd.kernels.size(), 2u);
  EXPECT_DOUBLE_EQ(odd.kernels[0].timeMs, 10e-6);
  EXPECT_DOUBLE_EQ(odd.kernels[1].timeMs, 10e-6);
  EXPECT_DOUBLE_EQ(odd.gapsMs, 1e-6);
  EXPECT_DOUBLE_EQ(odd.kernels[0].timeMsMedian, 10e-6);  // median of 20, 5, 10
  EXPECT_DOUBLE_EQ(odd.kernels[1].timeMsMedian, 5e-6);   // median of 5, 5, 10
  EXPECT_DOUBLE_EQ(odd.kernels[0].share, 10.0 / 21);
  EXPECT_EQ(odd.kernels[1].launches, 3u);
  EXPECT_DOUBLE_EQ(odd.kernels[1].gbytesS, 300 / (10e-6 * 1e6));
  // Even count: the mean of the two middle runs, as the median span is.
  const Breakdown even = SummariseBreakdown(
      {MakeRun(20, 5, 5), MakeRun(5, 5, 2), MakeRun(10, 10, 1), MakeRun(1, 1, 1)});
  const double median = 0.5 * (12 + 21) * 1e-6;
  EXPECT_NEAR(even.kernels[0].timeMs + even.kernels[1].timeMs + even.gapsMs, median, 1e-15);
  EXPECT_DOUBLE_EQ(even.kernels[0].timeMs, 7.5e-6);
  EXPECT_TRUE(SummariseBreakdown({}).Empty());
}

// A task that does not name its commands (one not built on PlannedTask) still gets a breakdown:
// each command is named after its type.
TEST(Breakdown, UnnamedCommandsAreNamedByTheirType) {
  TaskContext& ctx = *Device().ctx;
  cl::Buffer buffer(ctx.context, CL_MEM_READ_WRITE, 1 << 20);
  RunEvents events;
  for (int i = 0; i < 3; ++i)
    ctx.queue.enqueueFillBuffer(buffer, cl_uint(i), 0, 1 << 20, nullptr, events.Next());
  ctx.queue.finish();
  const RunBreakdown run = BreakDownRun(events);
  ASSERT_EQ(run.kernels.size(), 1u);
  EXPECT_EQ(run.kernels[0].name, "unnamed fill");
  EXPECT_EQ(run.kernels[0].launches, 3u);
  EXPECT_EQ(KernelNs(run) + run.gapsNs, run.spanNs);
  EXPECT_GT(run.spanNs, 0u);
}

// The names of a plan's steps in order of first launch, with their launches.
std::vector<std::pair<std::string, size_t>> PlanNames(const LaunchPlan& plan) {
  std::vector<std::pair<std::string, size_t>> names;
  for (const auto& s : plan.steps) {
    auto it = std::find_if(names.begin(), names.end(),
                           [&](const auto& p) { return p.first == s.Name(); });
    if (it == names.end())
      names.push_back({s.Name(), 1});
    else
      ++it->second;
  }
  return names;
}

LaunchPlan PlanOf(const nlohmann::json& res) {
  ProblemSpec spec = Problem(ElementType::Uint, Op::Sum, std::nullopt, res["n"].get<size_t>(),
                             res["local_size"].get<size_t>(), 1);
  if (res["task"] == "scan") {
    CScanTask::SetKind(spec, ScanKind::Inclusive);
    return CScanTask().Plan(Device().info, res["variant"].get<std::string>(), spec);
  }
  return CReductionTask().Plan(Device().info, res["variant"].get<std::string>(), spec);
}

// Every kernel time plus the gaps is the median span; launches add up to what was enqueued; the
// kernels are named as the plan's steps, in launch order.
void ExpectConsistentBreakdown(const nlohmann::json& res) {
  SCOPED_TRACE(res["variant"].get<std::string>());
  ASSERT_EQ(res["status"], "passed");
  const double median = res["time_ms"]["median"].get<double>();
  double sum = res["gaps_ms"].get<double>(), shares = 0;
  size_t launches = 0;
  const auto expected = PlanNames(PlanOf(res));
  ASSERT_EQ(res["breakdown"].size(), expected.size()) << res["breakdown"].dump();
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& k = res["breakdown"][i];
    EXPECT_EQ(k["kernel"], expected[i].first);
    EXPECT_EQ(k["launches"], expected[i].second) << k["kernel"];
    EXPECT_GE(k["time_ms"].get<double>(), 0.0);
    EXPECT_GE(k["time_ms_median"].get<double>(), 0.0);
    if (k["time_ms"].get<double>() > 0) {
      EXPECT_NEAR(k["gbytes_s"].get<double>(),
                  k["bytes_moved"].get<double>() / (k["time_ms"].get<double>() * 1e6), 1e-6);
    }
    sum += k["time_ms"].get<double>();
    shares += k["share"].get<double>();
    launches += k["launches"].get<size_t>();
  }
  EXPECT_NEAR(sum, median, 1e-9 + 1e-9 * median);
  EXPECT_NEAR(shares + res["gaps_ms"].get<double>() / median, 1.0, 1e-9);
  EXPECT_EQ(launches, res["launches_enqueued"].get<size_t>());
  EXPECT_EQ(launches, res["cost"]["launches"].get<size_t>());
}

TEST(Breakdown, JsonAddsUpToTheSpanForOneFewAndManyLaunches) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  const CommandResult r = RunBench(
      "--format json -q --variant interleaved,sequential,decomposition,atomic,work-efficient,"
      "single-pass --size 2^18+3 --iterations 7 --time-budget 0");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 7u);
  for (const auto& res : j["results"])
    ExpectConsistentBreakdown(res);
  // The roles a plan gives its steps: the first pass over the input, then the smaller passes.
  const auto names = [](const nlohmann::json& res) {
    std::vector<std::string> v;
    for (const auto& k : res["breakdown"])
      v.push_back(k["kernel"].get<std::string>());
    return v;
  };
  EXPECT_EQ(names(j["results"][0]),
            (std::vector<std::string>{"ReduceInterleaved", "ReduceInterleaved (later steps)"}));
  EXPECT_EQ(names(j["results"][3]), (std::vector<std::string>{"FillBuffer", "ReduceAtomic"}));
  // Outside the span: the poison fills before the validated run, and the single-pass
  // reduction's counter reset before every run.
  for (const auto& res : j["results"]) {
    bool poison = false;
    for (const auto& u : res["untimed"])
      poison |= u["phase"] == "validation" && u["command"] == "Poison output";
    EXPECT_TRUE(poison) << res["untimed"].dump();
  }
  EXPECT_EQ(j["results"][4]["untimed"][0]["phase"], "prepare");
  EXPECT_EQ(j["results"][4]["untimed"][0]["command"], "FillBuffer (reset counter)");
  EXPECT_EQ(names(j["results"][5]),
            (std::vector<std::string>{"ScanTileWorkEfficient", "ScanTileWorkEfficient (block sums)",
                                      "AddBlockOffsets (block sums)", "AddBlockOffsets"}));
}

// Isolated runs hand their results over as JSON: the breakdown comes through, utilisation set
// against the bandwidth the parent knows.
TEST(Breakdown, SurvivesWorkerProcesses) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  const CommandResult r = RunBench(
      "--format json -q --isolate --variant work-efficient --size 100000 --iterations 3 "
      "--time-budget 0");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 1u);
  ExpectConsistentBreakdown(j["results"][0]);
  EXPECT_GT(j["results"][0]["breakdown"][0]["bandwidth_util"].get<double>(), 0.0);
}

// --repetitions: the breakdown is that of every round's timed runs, so that it adds up to the
// median of all of them (time_ms), in process and from worker processes; not round 1's alone.
TEST(Breakdown, AddsUpToTheMedianOfEveryRoundUnderRepetitions) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  for (const char* mode : {"--no-isolate", "--isolate"}) {
    const CommandResult r = RunBench(fmt::format(
        "--format json -q --variant decomposition,work-efficient --size 100000 --iterations 5 "
        "--time-budget 0 --ci-target 0 --no-ceilings --repetitions 3 {}",
        mode));
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["results"].size(), 2u);
    for (const auto& res : j["results"]) {
      ASSERT_EQ(res["samples_ms"].size(), 3u) << mode;
      EXPECT_FALSE(res.contains("timed_runs")) << "a worker's field, not the file's";
      ExpectConsistentBreakdown(res);
    }
  }
}

// The naive scan at 2^24 is 24 launches a run: every event of every run is kept and reduced.
TEST(Breakdown, ManyLaunchesPerRunWork) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  const CommandResult r = RunBench(
      "--format json -q --task scan --variant naive --size 2^24 --iterations 3 --warmup 1 "
      "--time-budget 0");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto res = nlohmann::json::parse(r.out)["results"][0];
  ExpectConsistentBreakdown(res);
  EXPECT_EQ(res["breakdown"][0]["launches"], 24);
}

// CSV: a row per kernel after its case's row, the case's keys repeated, every row as wide as the
// header; the kernel rows' times plus the case's gaps are its median.
TEST(Breakdown, CsvHasAKernelRowPerKernel) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  const CommandResult r = RunBench(
      "--format csv -q --variant interleaved,work-efficient --size 5000 --local-size 16 "
      "--iterations 3 --time-budget 0");  // L = 16: three levels of block sums on every device
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream in(r.out);
  std::string line;
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::string field;
    bool quoted = false;
    for (char c : line) {
      if (c == '"')
        quoted = !quoted;
      else if (c == ',' && !quoted)
        fields.push_back(std::exchange(field, ""));
      else
        field += c;
    }
    fields.push_back(field);
    rows.push_back(fields);
  }
  ASSERT_GE(rows.size(), 3u);
  const auto& header = rows[0];
  const auto col = [&](const std::string& name) {
    return size_t(std::find(header.begin(), header.end(), name) - header.begin());
  };
  ASSERT_LT(col("kernel_bandwidth_util"), header.size());
  size_t cases = 0, kernels = 0;
  double median = 0, sum = 0;
  std::string variant, names;
  auto checkCase = [&] {
    if (cases) {
      EXPECT_NEAR(sum, median, 1e-5) << variant;  // fields printed to 1e-6 ms
    }
  };
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), header.size()) << i;
    if (rows[i][col("kernel")].empty()) {
      checkCase();
      ++cases;
      variant = rows[i][col("variant")];
      median = std::stod(rows[i][col("time_ms_median")]);
      sum = std::stod(rows[i][col("gaps_ms")]);
    } else if (rows[i][col("kernel_phase")] != "run") {
      EXPECT_TRUE(rows[i][col("kernel_share")].empty());
    } else {
      ++kernels;
      names += rows[i][col("kernel")] + "; ";
      EXPECT_EQ(rows[i][col("variant")], variant);
      EXPECT_EQ(rows[i][col("n")], "5000");
      EXPECT_TRUE(rows[i][col("time_ms_median")].empty());
      sum += std::stod(rows[i][col("kernel_time_ms")]);
    }
  }
  checkCase();
  EXPECT_EQ(cases, 2u);
  EXPECT_EQ(kernels, 2u + 4u) << names;
}

// --breakdown prints the kernels under each case; --no-breakdown keeps only the span's events.
TEST(Breakdown, TableOnRequestAndNoBreakdownWithoutEveryEvent) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  CommandResult r =
      RunBench("-q --breakdown --variant interleaved --size 5000 --iterations 3 --time-budget 0");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\n  ReduceInterleaved (later steps) "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  gaps (queue idle between commands) "), std::string::npos) << r.out;
  r = RunBench("-q --variant interleaved --size 5000 --iterations 3 --time-budget 0");
  EXPECT_EQ(r.out.find("ReduceInterleaved"), std::string::npos) << r.out;
  r = RunBench(
      "-q --format json --no-breakdown --task reduction --variant interleaved --size 5000 "
      "--iterations 3 --time-budget 0");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto res = nlohmann::json::parse(r.out)["results"][0];
  EXPECT_TRUE(res["breakdown"].empty());
  EXPECT_GT(res["time_ms"]["median"].get<double>(), 0.0);
  r = RunBench("-q --breakdown --no-breakdown --size 5000");
  EXPECT_EQ(r.status, 2) << r.err;
}

// A utilisation past 105% of the ceiling, the case's or a kernel's, is marked suspect with the
// reason (table "?", JSON utilisation_suspect), unless the case fits in the cache ("c").
TEST(Utilisation, AboveTheCeilingIsSuspectUnlessTheCacheExplainsIt) {
  Ceilings c;
  c.readGBs = c.writeGBs = c.copyGBs = 10;  // GB/s
  c.bufferBytes = 256 << 20;
  c.timer = {true, true, ""};
  DeviceInfo device;
  device.name = "test device";
  device.globalMemCacheBytes = 1 << 20;
  const auto make = [](uint64_t bytesRead) {
    Result r;
    r.task = "reduction";
    r.variant = "sequential";
    r.n = bytesRead / 4;
    r.localSize = 256;
    r.status = Status::Passed;
    r.iterations = 10;
    r.cost.launches = 2;
    r.cost.bytesRead = bytesRead;
    r.timeMs.median = double(bytesRead) / 20e6;  // 20 GB/s read against a 10 GB/s ceiling
    r.gbytesS = double(r.cost.BytesMoved()) / (r.timeMs.median * 1e6);
    r.gelemS = double(r.n) / (r.timeMs.median * 1e6);
    r.breakdown.kernels = {
        {"Big", 1, 0.9 * r.timeMs.median, 0, 0.9, bytesRead, 0, 0, bytesRead, ""},
        {"Small", 1, 0.1 * r.timeMs.median, 0, 0.1, 0, 0, 0, 0, ""}};
    return r;
  };
  Result big = make(uint64_t(64) << 20);  // far past twice the 1 MiB cache
  SetUtilisation(big, c, device);
  EXPECT_NEAR(big.utilisation, 2.0, 1e-9);
  EXPECT_FALSE(big.fitsInCache);
  const std::string why = UtilisationSuspectReason(device);
  EXPECT_EQ(why,
            "above 105% of the ceiling: the ceilings were measured in a slow spell or the traffic "
            "model overcounts");
  EXPECT_EQ(big.utilisationSuspect, why);
  EXPECT_EQ(big.breakdown.kernels[0].utilisationSuspect, why);
  EXPECT_EQ(big.breakdown.kernels[1].utilisationSuspect, "");  // no traffic, no utilisation
  // At the ceiling (within 105%): believed.
  Result fair = make(uint64_t(64) << 20);
  fair.timeMs.median *= 2 / 1.04;
  fair.gbytesS *= 1.04 / 2;
  SetUtilisation(fair, c, device);
  EXPECT_NEAR(fair.utilisation, 1.04, 1e-9);
  EXPECT_EQ(fair.utilisationSuspect, "");
  // Within twice the cache: the c mark explains it.
  Result cached = make(uint64_t(1) << 20);
  SetUtilisation(cached, c, device);
  EXPECT_TRUE(cached.fitsInCache);
  EXPECT_NEAR(cached.utilisation, 2.0, 1e-9);
  EXPECT_EQ(cached.utilisationSuspect, "");
  EXPECT_EQ(cached.breakdown.kernels[0].utilisationSuspect, "");
  // A device that reports no cache cannot mark a cached input: the reason says so.
  DeviceInfo noCache = device;
  noCache.globalMemCacheBytes = 0;
  Result unmarked = make(uint64_t(1) << 20);
  SetUtilisation(unmarked, c, noCache);
  EXPECT_FALSE(unmarked.fitsInCache);
  EXPECT_NE(unmarked.utilisationSuspect.find("the device reports no cache size"), std::string::npos)
      << unmarked.utilisationSuspect;

  RunInfo info;
  info.fields = TaskFields();
  info.devices.push_back({device, c});
  std::ostringstream table, json;
  MakePrinter(OutputFormat::Table, {/*breakdown=*/true})->Results(table, info, {big, cached});
  EXPECT_NE(table.str().find(" 200%? "), std::string::npos) << table.str();
  EXPECT_NE(table.str().find(" 200%c "), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("?: " + why), std::string::npos) << table.str();
  // The kernel's line: 64 MiB in 90% of the time is 222% of the ceiling.
  EXPECT_NE(table.str().find(" 222%? "), std::string::npos) << table.str();
  MakePrinter(OutputFormat::Json)->Results(json, info, {big, cached});
  const auto j = nlohmann::json::parse(json.str());
  EXPECT_EQ(j["results"][0]["utilisation_suspect"], why);
  EXPECT_EQ(j["results"][0]["breakdown"][0]["utilisation_suspect"], why);
  EXPECT_FALSE(j["results"][0]["breakdown"][1].contains("utilisation_suspect"));
  EXPECT_FALSE(j["results"][1].contains("utilisation_suspect"));
  // And back (how a worker hands a result over).
  const Result back = ResultFromJson(j["results"][0], TaskFields());
  EXPECT_EQ(back.utilisationSuspect, why);
  EXPECT_EQ(back.breakdown.kernels[0].utilisationSuspect, why);
}

}  // namespace
}  // namespace rsb::test
