// --explain: the course's measures of every case from its launch plan, checked against values
// worked out by hand from the course's algorithms and the kernels (kernels/*.cl) for n = 2^20
// at local size 256. Runs the real executable; nothing is built or run on the device.
#include "TestSupport.h"
#include "report/Report.h"
#include "tasks/Tasks.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>

namespace rsb::test {
namespace {

constexpr uint64_t kN = uint64_t(1) << 20;  // 1048576

// What --explain must say about one case.
struct Hand {
  uint64_t launches, steps, work, sequentialWork, workItems, cost, bytes;
  bool workOptimal, costOptimal;
};

// The cases of `--explain --size 2^20 --local-size 256 ...` (JSON), by task/variant.
std::map<std::string, nlohmann::json> Explained(const std::string& args) {
  const CommandResult r =
      RunBench("--explain -q --size 2^20 --local-size 256 --format json " + args);
  EXPECT_EQ(r.status, 0) << r.err;
  std::map<std::string, nlohmann::json> cases;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "reduce-scan-bench-explain/1");
  for (const auto& c : j["cases"])
    cases[c["task"].get<std::string>() + "/" + c["variant"].get<std::string>()] = c;
  return cases;
}

void ExpectHand(const nlohmann::json& c, const Hand& h) {
  ASSERT_EQ(c["status"], "explained") << c.dump();
  const std::string what = c["task"].get<std::string>() + "/" + c["variant"].get<std::string>();
  EXPECT_EQ(c["n"], kN) << what;
  EXPECT_EQ(c["local_size"], 256) << what;
  EXPECT_EQ(c["launches"], h.launches) << what;
  EXPECT_EQ(c["steps"], h.steps) << what;
  EXPECT_EQ(c["work"], h.work) << what;
  EXPECT_EQ(c["sequential_work"], h.sequentialWork) << what;
  EXPECT_EQ(c["work_items"], h.workItems) << what;
  EXPECT_EQ(c["cost"], h.cost) << what;
  EXPECT_EQ(h.cost, h.workItems * h.steps) << what << ": the hand values disagree";
  EXPECT_EQ(c["bytes_moved"], h.bytes) << what;
  EXPECT_NEAR(c["work_ratio"].get<double>(), double(h.work) / double(h.sequentialWork), 1e-9);
  EXPECT_NEAR(c["cost_ratio"].get<double>(), double(h.cost) / double(h.sequentialWork), 1e-9);
  EXPECT_EQ(c["work_optimal"], h.workOptimal) << what;
  EXPECT_EQ(c["cost_optimal"], h.costOptimal) << what;
}

// Reduction of n = 2^20 uint, L = 256 (kernels/Reduction.cl).
TEST(Explain, ReductionsMatchTheHandCount) {
  auto cases = Explained("--task reduction --variant interleaved,sequential,decomposition");
  // interleaved: one launch per tree level, m = 2^20, 2^19, ..., 2 values left, each launch
  // ceil(m / 2) work-items combining one pair: 20 launches, S = 20 (one step each), W = 2^19 +
  // ... + 1 = 2^20 - 1 = Wseq (work-optimal). p = the first launch's 2^19 = 524288 work-items
  // (a multiple of 256). Cost 524288 * 20 = 10485760 = (n/2) log2 n: not O(n), as in the course
  // (n/2 processors for log n steps; Brent: n / log n would be). Bytes: each launch reads m and
  // writes m/2 elements of 4 bytes: 4 (2^21 - 2) + 4 (2^20 - 1) = 8388600 + 4194300.
  const Hand tree{20, 20, kN - 1, kN - 1, 524288, 10485760, 12582900, true, false};
  ExpectHand(cases["reduction/interleaved"], tree);
  // sequential: the same tree with sequential addressing (element i with i + m/2): the same
  // launches, steps, work, work-items and traffic.
  ExpectHand(cases["reduction/sequential"], tree);
  // decomposition: each work-group reduces 2L = 512 elements: 2048 groups, then 4, then 1
  // (3 launches). Per launch S = 1 (the pair combined while loading) + log2 256 = 8 tree steps
  // between barriers = 9, so S = 27. W = (2^20 - 2048) + (2048 - 4) + (4 - 1) = 2^20 - 1. p =
  // 2048 * 256 = 524288; cost 524288 * 27 = 14155776 (13.5 n: the tree depth grows with L and
  // the levels with n, not O(n)). Bytes: reads 4 (2^20 + 2048 + 4) = 4202512, writes the
  // partials 4 (2048 + 4 + 1) = 8212.
  ExpectHand(cases["reduction/decomposition"],
             {3, 27, kN - 1, kN - 1, 524288, 14155776, 4202512 + 8212, true, false});
}

// Inclusive scan of n = 2^20 uint, L = 256 (kernels/Scan.cl).
TEST(Explain, ScansMatchTheHandCount) {
  auto cases = Explained("--task scan --variant naive,work-efficient");
  // naive (Hillis-Steele): one launch per offset 1, 2, ..., 2^19: 20 launches of n work-items,
  // S = 20; step with offset o combines n - o pairs: W = 20 n - (2^20 - 1) = 19922945 =
  // n log2 n - (n - 1), against Wseq = n - 1: O(n log n), not work-optimal. p = n; cost
  // 20 n = 20971520. Bytes: every launch reads and writes all n elements: 20 * 8 n.
  ExpectHand(cases["scan/naive"],
             {20, 20, 19922945, kN - 1, kN, 20971520, 20 * 8 * kN, false, false});
  // work-efficient (Blelloch) on tiles of B = 2L = 512: levels of 2^20, 2048 and 4 elements
  // (2048, 4 and 1 tiles), one scan launch each, then AddBlockOffsets for levels 1 and 0: 5
  // launches. A tile: up-sweep B - 1 = 511 and down-sweep 511 operator applications, 9 steps
  // each (S = 2 log2 B = 18 between barriers); level 0 is inclusive, one more per element (512
  // per tile); the block sums are scanned exclusively, whole tiles (IDENTITY past the end).
  // AddBlockOffsets adds an offset to every element past the first tile: m - B, one step.
  //   W = 2048 (1022 + 512) + 4 * 1022 + 1 * 1022 + (2048 - 512) + (2^20 - 512)
  //     = 3141632 + 4088 + 1022 + 1536 + 1048064 = 4196342   (about 4 n: O(n), work-optimal)
  //   S = 3 * 18 + 2 * 1 = 56; p = 2048 * 256 = 524288 (AddBlockOffsets: 2047 * 256);
  //   cost = 524288 * 56 = 29360128 (28 n; the course's n/2 processors for 2 log n steps: not
  //   cost-optimal).
  // Bytes (4 each): scans read m and write m + tiles: (2^20 + 2048 + 4) read, (2^20 + 2048) +
  // (2048 + 4) + (4 + 1) written; AddBlockOffsets reads m - B + tiles - 1 and writes m - B:
  // (2048 - 512 + 3) + (2^20 - 512 + 2047) read, (2048 - 512) + (2^20 - 512) written.
  const uint64_t read = 4 * ((kN + 2048 + 4) + (2048 - 512 + 3) + (kN - 512 + 2047));
  const uint64_t written = 4 * ((kN + 2048) + (2048 + 4) + (4 + 1) + (2048 - 512) + (kN - 512));
  ExpectHand(cases["scan/work-efficient"],
             {5, 56, 4196342, kN - 1, 524288, 29360128, read + written, true, false});
  EXPECT_EQ(read + written, 16818236u);
}

// Convolution of n = 2^20 floats with a mask of 5 (kernels/Convolution.cl).
TEST(Explain, ConvolutionMatchesTheHandCount) {
  auto cases = Explained("--task convolution --variant basic-1d");
  // basic-1d: one launch of n work-items, each W = 5 multiply-adds (ghosts times 0 included):
  // W(n) = 5 n = Wseq (the sequential loop does the same). The plan counts S = 1: one launch, no
  // barrier (LaunchPlan's steps are the phases between barriers and launches). In the course's
  // sense, where a step is one operation per processor, S = 5 (each work-item's five
  // multiply-adds one after another) and the cost p S = 5 n = W; the plan's p S = n is less than
  // W, which --explain says in the case's message. Either way work- and cost-optimal.
  // Bytes: the input taps inside [0, n), 5n - 2 * 3 (ghosts are not read), plus 5 mask reads per
  // output, read; n outputs written; 4 bytes each.
  const uint64_t bytes = 4 * ((5 * kN - 6) + 5 * kN + kN);
  ExpectHand(cases["convolution/basic-1d"], {1, 1, 5 * kN, 5 * kN, kN, kN, bytes, true, true});
  EXPECT_NE(cases["convolution/basic-1d"]["message"].get<std::string>().find("p * S(n) < W(n)"),
            std::string::npos);
}

// Every variant of every task is explained (2-D convolution on an image) in every format, with
// the legend; nothing is built: the kernels folder may lack the programs.
TEST(Explain, EveryVariantInEveryFormatWithoutBuildingAnything) {
  const std::string dir = CopyKernels("explain");
  for (const char* file : {"Reduction.cl", "Scan.cl", "Convolution.cl", "Bandwidth.cl"})
    std::filesystem::remove(dir + "/" + file);
  const std::string args = "--explain -q --size 2^16,64x32 --kernels " + dir;
  const CommandResult json = RunBench(args + " --format json");
  ASSERT_EQ(json.status, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_FALSE(j["device"].contains("ceilings"));
  EXPECT_TRUE(j["legend"].contains("S(n)"));
  std::map<std::string, int> variants;
  for (const auto& c : j["cases"]) {
    ++variants[c["task"].get<std::string>() + "/" + c["variant"].get<std::string>()];
    if (c["status"] == "skipped") {  // only what the device cannot run (64-bit atomics)
      EXPECT_NE(CannotRun(c["task"].get<std::string>(), c["variant"].get<std::string>(),
                          ElementType::Uint, c["n"].get<size_t>()),
                "")
          << c.dump();
      continue;
    }
    EXPECT_EQ(c["status"], "explained") << c.dump();
    EXPECT_GE(c["work"].get<uint64_t>(), c["sequential_work"].get<uint64_t>()) << c.dump();
    EXPECT_GT(c["work_items"].get<uint64_t>(), 0u) << c.dump();
    EXPECT_TRUE(c["work_optimal"].is_boolean() && c["cost_optimal"].is_boolean()) << c.dump();
  }
  size_t all = 0;  // every variant of every task's table
  for (const auto& task : MakeTasks())
    all += task->Variants().size();
  EXPECT_EQ(variants.size(), all);
  const CommandResult table = RunBench(args);
  ASSERT_EQ(table.status, 0) << table.err;
  for (const char* s : {"S(n)", "W(n)", "p*S(n)", "work-opt", "cost-opt", "tiled-2d",
                        "p: work-items launched: the largest global size", "Wseq: "})
    EXPECT_NE(table.out.find(s), std::string::npos) << s << "\n" << table.out;
  const CommandResult csv = RunBench(args + " --format csv");
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(size_t(std::count(csv.out.begin(), csv.out.end(), '\n')), 1 + j["cases"].size());
  const CommandResult md = RunBench(args + " --format markdown");
  ASSERT_EQ(md.status, 0) << md.err;
  EXPECT_NE(md.out.find("| task | variant |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("- W(n): work"), std::string::npos) << md.out;
  std::filesystem::remove_all(dir);
}

// An explained case of the sample (its measures made up, not a plan's).
Explanation SampleExplained(const std::string& task, const std::string& variant, size_t n) {
  Explanation e;
  e.c.task = task, e.c.variant = variant, e.c.n = n, e.c.localSize = 256, e.c.codePath = "gpu";
  e.c.status = Status::Passed, e.c.tuning = {{"scan-gpu-items", 16}};
  e.c.cost = {3, 27, n - 1, 4 * n + 8200, 8212, 0, n / 2};
  e.sequentialWork = n - 1;
  e.workRatio = 1, e.costRatio = 13.5, e.scaledWorkRatio = 1, e.scaledCostRatio = 21.5;
  e.workOptimal = true, e.costOptimal = false;
  return e;
}

// The sample's cases: verdicts yes and no and unknown, a plan with fewer steps than its work
// needs (its message), an image with task parameters, a skipped case; on two devices the last
// ran on the second.
std::vector<Explanation> SampleExplanations(bool twoDevices) {
  std::vector<Explanation> v = {SampleExplained("reduction", "decomposition", 1 << 20)};
  Explanation scan = SampleExplained("scan", "single-pass", 4096);
  scan.c.fields["scan_kind"] = "inclusive", scan.c.type = ElementType::Float;
  scan.c.message = "p*S(n) < W(n)", scan.costOptimal = std::nullopt;
  v.push_back(scan);
  Explanation conv = SampleExplained("convolution", "tiled-2d", 2048);
  conv.c.height = 32, conv.c.params = {{"mask-width", 5}}, conv.workOptimal = false;
  v.push_back(conv);
  Explanation skipped = SampleExplained("reduction", "atomic", 1000);
  skipped.c.status = Status::Skipped, skipped.c.message = "local size 1048576 > 1024";
  skipped.c.device = twoDevices ? 1 : 0;
  v.push_back(skipped);
  return v;
}

// Every printer's --explain, on one device and on two, byte for byte as the writers before the
// printers wrote them.
TEST(Report, ExplainInEveryFormatKeepsItsBytes) {
  for (const bool two : {false, true}) {
    RunInfo info;
    info.fields = TaskFields();
    for (size_t d = 0; d < (two ? 2u : 1u); ++d) {
      info.devices.push_back({FabricatedDevice(d == 0, 65536, 1024), Ceilings()});
      info.devices.back().info.name = d ? "Sample CPU" : "Sample GPU";
      info.devices.back().info.platform = "Sample CL";
      info.devices.back().info.driverVersion = "1.0";
      info.devices.back().info.openclCVersion = "OpenCL C 1.2";
    }
    info.host = "sample-host", info.command = "reduce-scan-bench --explain";
    info.date = "2026-11-28T00:00:00Z";
    const std::vector<Explanation> cases = SampleExplanations(two);
    const std::string name = std::string("explain-") + (two ? "two-devices" : "one-device");
    for (const std::string& format : FormatNames()) {
      std::ostringstream out;
      MakePrinter(ParseFormat(format))->Explain(out, info, cases);
      ExpectGolden(name + "." + GoldenExtension(format), out.str());
    }
  }
}

// Explain and check are two modes: both at once is a usage error; a local size beyond the
// device is skipped, as a run would skip it.
TEST(Explain, ItsCasesAreTheRunsCases) {
  const CommandResult both = RunBench("--explain --check");
  EXPECT_EQ(both.status, 2) << both.err;
  const CommandResult r = RunBench(
      "--explain -q --task reduction --variant atomic --size 1000 --local-size 16,1048576 "
      "--format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["cases"].size(), 2u);
  EXPECT_EQ(j["cases"][0]["status"], "explained");
  EXPECT_EQ(j["cases"][1]["status"], "skipped");
  EXPECT_NE(j["cases"][1]["message"].get<std::string>().find("local size 1048576"),
            std::string::npos);
}

}  // namespace
}  // namespace rsb::test
