// What a run prints and writes: the table, JSON, CSV and Markdown, output files, cases that fail
// alike, the status counts. Runs the real executable on the test device; the Report tests print
// results made in process.
#include "TestSupport.h"
#include "platform/DeviceLock.h"
#include "platform/Errors.h"
#include "platform/Sizes.h"
#include "platform/Subprocess.h"
#include "report/Report.h"
#include "tasks/CReductionTask.h"
#include "tasks/Tasks.h"
#include "tools/ResultFile.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include <chrono>
#include <csignal>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rsb::test {
namespace {

// A kernels folder whose name is not UTF-8 still gives valid JSON (once an exception after the
// whole run, exit 3).
TEST(Cli, NonUtf8PathGivesValidJson) {
  const std::string dir = CopyKernels(
      "bad\xff"
      "name");
  const CommandResult r =
      RunBench("--check -q --variant sequential --size 100 --format json --kernels '" + dir + "'");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["results"][0]["status"], "passed");
  EXPECT_NE(j["kernels"].get<std::string>().find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD
}

// A stubbed variant (its kernel returns at once) fails every case alike: a person reads one line
// for them, the first case and how many more (the table's notes, and the FAILED lines with -q),
// while the JSON keeps every case's own message.
TEST(Cli, CasesThatFailAlikeAreListedOnceWithTheirCount) {
  const std::string dir = CopyKernels("stubbed");
  Patch(dir + "/Scan.cl", "  const IDX i = get_global_id(0);\n  if (i >= n)\n    return;",
        "  const IDX i = get_global_id(0);\n  if (i >= 0)\n    return;");
  const std::string json = dir + "/results.json";
  const std::string sel =
      " --task scan --variant naive --size 1,2,3,257 --type int,uint --kernels " + dir;
  const auto count = [](const std::string& text, const std::string& what) {
    size_t k = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
      ++k;
    return k;
  };
  const CommandResult quiet = RunBench("--check -q --json " + json + sel);
  EXPECT_EQ(quiet.status, 1) << quiet.err;
  EXPECT_EQ(count(quiet.err, "FAILED "), 1u) << quiet.err;
  EXPECT_NE(quiet.err.find("FAILED scan/naive int sum inclusive n=1 L="), std::string::npos)
      << quiet.err;
  EXPECT_NE(quiet.err.find("(and 7 more cases with this message but for its numbers): naive: "
                           "wrong result at index 0"),
            std::string::npos)
      << quiet.err;
  EXPECT_EQ(count(quiet.out, "\nfailed "), 1u) << quiet.out;
  const auto j = nlohmann::json::parse(ReadFile(json));
  ASSERT_EQ(j["results"].size(), 8u);
  std::set<std::string> messages;
  for (const auto& r : j["results"])
    messages.insert(r["message"].get<std::string>());
  EXPECT_GT(messages.size(), 1u) << "each case's own message (its n, its values)";
  std::filesystem::remove_all(dir);
}

// Alike: the same status and device, and the same message but for its numbers; a number right
// after ':' (a file's line and column) counts, and passed cases are never grouped.
TEST(Cli, GroupAlikeIgnoresValuesButNotLinesOrStatus) {
  const auto result = [](Status s, const std::string& message, size_t device = 0) {
    Result r;
    r.status = s;
    r.message = message;
    r.device = device;
    return r;
  };
  const std::vector<Result> rs = {
      result(Status::Failed, "v: wrong result at index 0: expected 500, got 2139062143 (1 of 1)"),
      result(Status::Failed, "v: wrong result at index 7: expected -inf, got 1.38e+306 (9 of 9)"),
      result(Status::Error, "v: wrong result at index 7: expected -inf, got 1.38e+306 (9 of 9)"),
      result(Status::Failed, "v: wrong result at index 3: expected 5, got 0x7f0 (2 of 2)", 1),
      result(Status::Error, "kernel build failed: k/Scan.cl:171:13: expected ';'"),
      result(Status::Error, "kernel build failed: k/Scan.cl:172:13: expected ';'"),
      result(Status::Error, "kernel build failed: k/Scan.cl:171:13: expected ';'"),
      result(Status::Passed, "oclgrind: no diagnostic, 100 instructions"),
      result(Status::Passed, "oclgrind: no diagnostic, 200 instructions"),
  };
  std::vector<const Result*> all;
  for (const auto& r : rs)
    all.push_back(&r);
  std::vector<std::pair<size_t, size_t>> groups;
  for (const auto& g : GroupAlike(all))
    groups.emplace_back(g.first, g.count);
  EXPECT_EQ(groups, (std::vector<std::pair<size_t, size_t>>{
                        {0, 2}, {2, 1}, {3, 1}, {4, 2}, {5, 1}, {7, 1}, {8, 1}}));
  EXPECT_EQ(AlikeText(1), "");
  EXPECT_EQ(AlikeText(2), " (and 1 more case with this message but for its numbers)");
}

TEST(Cli, JsonOutputHasTheDocumentedFields) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  const CommandResult r = RunBench(
      "--format json -q --task reduction --variant sequential,atomic "
      "--type uint,float --size 2^16 --iterations 3 --time-budget 0");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "reduce-scan-bench/1");
  for (const char* k :
       {"platform", "name", "vendor", "driver_version", "opencl_c_version", "compute_units",
        "global_mem_bytes", "local_mem_bytes", "max_work_group_size", "nv_warp_size"})
    EXPECT_TRUE(j["device"].contains(k)) << k;
  ASSERT_EQ(j["results"].size(), 4u);
  for (const auto& res : j["results"]) {
    for (const char* k : {"task", "variant", "type", "op", "n", "local_size", "status", "message",
                          "iterations", "time_ms", "gelem_s", "gbytes_s", "bytes_moved",
                          "bandwidth_util", "cost", "launches_enqueued", "validated_runs"})
      EXPECT_TRUE(res.contains(k)) << k;
    EXPECT_EQ(res["status"], "passed");
    EXPECT_EQ(res["n"], 65536);
    EXPECT_EQ(res["iterations"], 3);
    EXPECT_EQ(res["validated_runs"], 2);  // the first run and the last timed run
    EXPECT_EQ(res["cost"]["launches"], res["launches_enqueued"]);
    for (const char* k : {"median", "min", "max", "mean", "stddev"})
      EXPECT_TRUE(res["time_ms"].contains(k)) << k;
    EXPECT_GT(res["time_ms"]["median"].get<double>(), 0.0);
    EXPECT_LE(res["time_ms"]["min"].get<double>(), res["time_ms"]["median"].get<double>());
    EXPECT_NEAR(res["gelem_s"].get<double>(),
                65536 / (res["time_ms"]["median"].get<double>() * 1e6), 1e-6);
    EXPECT_GT(res["bytes_moved"].get<double>(), 65536.0 * 4 * 0.99);
  }
}

TEST(Cli, CsvHasAHeaderAndOneRowPerCase) {
  const CommandResult r = RunBench(
      "--format csv --check -q --task reduction --op sum,min,max "
      "--size 1000");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("device,driver_version,task,variant,type,op,scan_kind,n,", 0), 0u) << r.out;
  const size_t variants = CReductionTask().Variants().size();
  EXPECT_EQ(size_t(std::count(r.out.begin(), r.out.end(), '\n')), 1 + variants * 3) << r.out;
}

TEST(Cli, OutputFileReceivesTheReport) {
  const std::string path = std::filesystem::temp_directory_path() / "rsb-cli-output.json";
  const CommandResult r =
      RunBench("--format json --check -q --variant atomic --size 999 -o " + path);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["results"][0]["variant"], "atomic");
  std::filesystem::remove(path);
}

// Markdown: a pipe table with the table's columns, untimed cells "-", every case a row.
TEST(Cli, MarkdownIsAPipeTableWithARowPerCase) {
  const CommandResult r = RunBench(
      "--check -q --size 100,200 --task reduction --variant sequential,atomic "
      "--format markdown");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("| task | variant | type |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("|---|---|"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| reduction | atomic | uint | sum | - | 200 |"), std::string::npos)
      << r.out;
  size_t rows = 0;
  for (size_t at = r.out.find("\n| reduction"); at != std::string::npos;
       at = r.out.find("\n| reduction", at + 1))
    ++rows;
  EXPECT_EQ(rows, 4u) << r.out;
}

// A device of the sample run: every field set, nothing measured on a real one.
DeviceRun SampleDevice(const std::string& name, bool gpu, bool timerUsable) {
  DeviceRun d;
  d.info = FabricatedDevice(gpu, 65536, 1024);
  d.info.name = name;
  d.info.platform = gpu ? "Sample CL" : "Portable Computing Language";
  d.info.vendor = gpu ? "Sample Vendor" : "AuthenticAMD";
  d.info.driverVersion = gpu ? "580.1" : "6.0";
  d.info.deviceVersion = "OpenCL 3.0 sample";
  d.info.openclCVersion = "OpenCL C 1.2";
  d.info.globalMemCacheBytes = 4u << 20;
  d.info.profilingResolutionNs = timerUsable ? 1000 : 0;
  // The unusable timer's device ran with --timer events: its cases untimed.
  d.ceilings.timer = {true, timerUsable, timerUsable ? "" : "resolution 0 ns",
                      timerUsable ? TimerMode::Auto : TimerMode::Events};
  if (!timerUsable)
    return d;
  d.ceilings.readGBs = 100.5;
  d.ceilings.writeGBs = 90.25;
  d.ceilings.copyGBs = 80.125;
  d.ceilings.bufferBytes = size_t(1) << 30;
  d.ceilings.near = {150, 140, 130};
  d.ceilings.nearBufferBytes = size_t(16) << 20;
  return d;
}

// A timed case on the first device, with a breakdown of two kernels and untimed commands.
Result SampleTimed() {
  Result r;
  r.task = "reduction", r.variant = "decomposition", r.n = size_t(1) << 20, r.localSize = 256;
  r.codePath = "gpu", r.tuning = {{"reduction-gpu-unroll", 8}}, r.kernelOptions = "-DT=uint";
  r.status = Status::Passed, r.iterations = 120, r.validatedRuns = 1, r.launchesEnqueued = 2;
  r.timeMs = {0.125, 0.12, 0.2, 0.13, 0.01, 0.124, 0.126};
  r.ciMet = true, r.ciTarget = 0.01, r.gelemS = 8.388608, r.gbytesS = 33.6;
  r.timer = "events", r.timerResolutionNs = 1000;
  r.samplesMs = {{0.12, 0.125, 0.2}, {0.124, 0.126, 0.13}};  // --repetitions 2
  r.roundsMs = {0.1375, 0.125, 0.15, 0.1375, 0.0125, 0, 0};
  r.bandwidthUtil = 0.42, r.ceiling = "read", r.ceilingGBs = 100.5, r.utilisation = 0.334;
  r.ceilingStreamBytes = size_t(1) << 30;
  r.cost = {2, 18, 1048575, 4202512, 8212, 0, 524288};
  r.breakdown.kernels = {
      {"ReduceDecomposition", 1, 0.1, 0.101, 0.8, 4202496, 42.02, 0.41, 4202496, ""},
      {"ReduceDecomposition (partials)", 1, 0.02, 0.02, 0.16, 8228, 0.41, 0, 8228, ""}};
  r.breakdown.untimed = {{"FillBuffer (reset counter)", "prepare", 1, 0.003},
                         {"Poison output", "validation", 1, 0.004}};
  r.breakdown.gapsMs = 0.005, r.breakdown.gapsMsMedian = 0.006;
  return r;
}

// The sample run's results: on one device every status but two, every mark (* c ?), a scan kind,
// an image with task parameters; on two devices a timed case on the first and the other two
// statuses on the second, whose timer is unusable.
std::vector<Result> SampleResults(bool twoDevices) {
  Result failed = SampleTimed();
  failed.variant = "sequential", failed.status = Status::Failed, failed.iterations = 0;
  failed.message = "index 5: expected 3, got 4", failed.breakdown = {};
  if (twoDevices) {
    Result untimed = failed;
    untimed.device = 1, untimed.status = Status::Untimed, untimed.message = "";
    Result error = untimed;
    error.variant = "interleaved", error.status = Status::Error;
    error.message = "CL_OUT_OF_RESOURCES in clEnqueueNDRangeKernel";
    return {SampleTimed(), untimed, error};
  }
  std::vector<Result> v = {SampleTimed()};
  Result scan = SampleTimed();
  scan.task = "scan", scan.variant = "single-pass", scan.type = ElementType::Float;
  scan.op = Op::Max, scan.fields["scan_kind"] = "exclusive", scan.n = 4096, scan.localSize = 64;
  scan.ciMet = false, scan.fitsInCache = true, scan.utilisation = 1.5, scan.breakdown = {};
  v.push_back(scan);
  Result conv = SampleTimed();
  conv.task = "convolution", conv.variant = "tiled-2d", conv.n = 2048, conv.height = 32;
  conv.params = {{"mask-width", 5}}, conv.type = ElementType::Float, conv.utilisation = 1.2;
  conv.utilisationSuspect = "above 105% of the ceiling: sample", conv.settings.source = "profile";
  conv.settings.profile = "sample.json", conv.breakdown.kernels[0].utilisationSuspect = "x";
  v.push_back(conv);
  v.push_back(failed);
  Result skipped;
  skipped.task = "reduction", skipped.variant = "atomic", skipped.type = ElementType::Double;
  skipped.n = 1000, skipped.message = "double needs cl_khr_fp64";
  v.push_back(skipped);
  return v;
}

RunInfo SampleRunInfo(bool twoDevices) {
  RunInfo info;
  info.devices.push_back(SampleDevice("Sample GPU", true, true));
  if (twoDevices)
    info.devices.push_back(SampleDevice("Sample CPU", false, false));
  info.host = "sample-host";
  info.fields = TaskFields();
  info.kernelHashes = {{"Reduction.cl", "0123abcd"}, {"Scan.cl", "4567ef01"}};
  info.cold = twoDevices;
  info.ciTarget = 0.01;
  info.command = "reduce-scan-bench --sample \"quoted\"";
  info.date = "2026-11-28T00:00:00Z";
  info.kernelDir = "/sample/kernels";
  return info;
}

// Every printer's results, on one device and on two, byte for byte as the writers before the
// printers wrote them; the table also with --breakdown.
TEST(Report, ResultsInEveryFormatKeepTheirBytes) {
  for (const bool two : {false, true}) {
    const RunInfo info = SampleRunInfo(two);
    const std::vector<Result> results = SampleResults(two);
    const std::string name = std::string("results-") + (two ? "two-devices" : "one-device");
    for (const std::string& format : FormatNames()) {
      std::ostringstream out;
      MakePrinter(ParseFormat(format))->Results(out, info, results);
      ExpectGolden(name + "." + GoldenExtension(format), out.str());
    }
    std::ostringstream breakdown;
    MakePrinter(OutputFormat::Table, {/*breakdown=*/true})->Results(breakdown, info, results);
    ExpectGolden(name + "-breakdown.txt", breakdown.str());
  }
}

// CSV that tools read: the last column, `row`, says what each row is (case, kernel, untimed); a
// device name with a comma (rusticl's) is quoted, so every row has the header's fields for a CSV
// reader; and docs/OUTPUT.md's awk recipe, -F, '$NF == "case"', finds exactly the case rows.
TEST(Report, CsvRowsSayWhatTheyAreAndANameWithACommaStaysOneField) {
  RunInfo info = SampleRunInfo(false);
  info.devices[0].info.name = "llvmpipe (LLVM 15.0.6, 256 bits)";
  const std::vector<Result> results = SampleResults(false);
  std::ostringstream out;
  MakePrinter(OutputFormat::Csv)->Results(out, info, results);
  const auto rows = CsvRows(out.str());
  ASSERT_GT(rows.size(), 1u);
  EXPECT_EQ(rows[0].back(), "row");
  std::map<std::string, size_t> kinds;
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), rows[0].size()) << "row " << i << ": " << out.str();
    EXPECT_EQ(rows[i][0], "llvmpipe (LLVM 15.0.6, 256 bits)");
    ++kinds[rows[i].back()];
  }
  size_t kernels = 0, untimed = 0;
  for (const auto& r : results)
    kernels += r.breakdown.kernels.size(), untimed += r.breakdown.untimed.size();
  EXPECT_EQ(kinds["case"], results.size());
  EXPECT_EQ(kinds["kernel"], kernels);
  EXPECT_EQ(kinds["untimed"], untimed);
  EXPECT_EQ(kinds.size(), 3u);
  const std::string file = fmt::format("/tmp/rsb-rows-{}.csv", getpid());
  {
    std::ofstream csv(file);
    csv << out.str();
  }
  const CommandResult awk = RunCommand(fmt::format("awk -F, '$NF == \"case\"' '{}'", file));
  std::remove(file.c_str());
  EXPECT_EQ(size_t(std::count(awk.out.begin(), awk.out.end(), '\n')), results.size())
      << awk.out << awk.err;
}

// The rows of a CSV report without the fields that differ from run to run (date, command).
std::vector<std::vector<std::string>> CsvRowsOfTheCases(const std::string& text) {
  auto rows = CsvRows(text);
  for (const char* column : {"date", "command"}) {
    const auto at = std::find(rows.at(0).begin(), rows.at(0).end(), column);
    EXPECT_NE(at, rows[0].end()) << column;
    for (size_t i = 1; i < rows.size() && at != rows[0].end(); ++i)
      rows[i].at(size_t(at - rows[0].begin())).clear();
  }
  return rows;
}

// --json, --csv and --markdown FILE in one run, beside the table on stdout: the JSON is a result
// file compare's reader takes, the CSV has the rows of --format csv, the Markdown is --format
// markdown's, and stdout is the table of a run without them (a --check run: nothing timed).
TEST(Cli, OneRunWritesEveryOutputFileBesideTheTable) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("rsb-cli-files-{}", (long)::getpid());
  std::filesystem::create_directories(dir);
  const std::string run = "--check -q --task reduction --variant sequential,atomic --size 100,1000";
  const std::string json = (dir / "r.json").string(), csv = (dir / "r.csv").string(),
                    md = (dir / "r.md").string();
  const CommandResult r =
      RunBench(fmt::format("{} --json '{}' --csv '{}' --markdown '{}'", run, json, csv, md));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, RunBench(run).out);
  const ResultFile file = LoadResultFile(json, "RESULTS");
  EXPECT_EQ(file.results.size(), 4u);
  const CommandResult asCsv = RunBench(run + " --format csv");
  ASSERT_EQ(asCsv.status, 0) << asCsv.err;
  EXPECT_EQ(CsvRowsOfTheCases(ReadFile(csv)), CsvRowsOfTheCases(asCsv.out));
  EXPECT_EQ(CsvRowsOfTheCases(ReadFile(csv)).size(), 5u);
  const CommandResult asMarkdown = RunBench(run + " --format markdown");
  ASSERT_EQ(asMarkdown.status, 0) << asMarkdown.err;
  EXPECT_EQ(ReadFile(md), asMarkdown.out);
  // Any subset, --format and -o as they were: here JSON to -o and Markdown to a file, no stdout.
  const CommandResult some =
      RunBench(fmt::format("{} --format json -o '{}' --markdown '{}'", run, csv, md));
  ASSERT_EQ(some.status, 0) << some.err;
  EXPECT_EQ(some.out, "");
  EXPECT_EQ(LoadResultFile(csv, "RESULTS").results.size(), 4u);
  EXPECT_EQ(ReadFile(md), asMarkdown.out);
  std::filesystem::remove_all(dir);
}

// Timing stops once the median is known to the target; the interval holds the median, and a
// case that runs out of iterations first is marked.
TEST(Cli, TimedResultsCarryTheMediansInterval) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  const CommandResult r =
      RunBench("-q --size 2^12 --task reduction --variant sequential --iterations 5 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto res = nlohmann::json::parse(r.out)["results"][0];
  EXPECT_EQ(res["iterations"], 5);
  EXPECT_FALSE(res["ci_met"].get<bool>()) << "5 runs cannot bound a median at 95%";
  EXPECT_EQ(res["time_ms"]["ci_high"], 0.0);
  const CommandResult t =
      RunBench("-q --size 2^12 --task reduction --variant sequential --iterations 5");
  EXPECT_NE(t.out.find("* the median's 95% interval is wider than +-1.0%"), std::string::npos)
      << t.out;
  const CommandResult loose = RunBench(
      "-q --size 2^12 --task reduction --variant sequential --ci-target 50% --format json");
  ASSERT_EQ(loose.status, 0) << loose.err;
  const auto l = nlohmann::json::parse(loose.out)["results"][0];
  EXPECT_TRUE(l["ci_met"].get<bool>());
  EXPECT_LT(l["iterations"].get<int>(), 1000);  // it stopped at the target, not the cap
  EXPECT_LE(l["time_ms"]["ci_low"].get<double>(), l["time_ms"]["median"].get<double>());
  EXPECT_GE(l["time_ms"]["ci_high"].get<double>(), l["time_ms"]["median"].get<double>());
}

TEST(Cli, TableNamesTheDeviceAndEveryVariant) {
  const CommandResult r = RunBench("-q --task reduction --size 4096 --iterations 3");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("device: "), std::string::npos);
  EXPECT_NE(r.out.find("driver"), std::string::npos);
  for (const char* v : {"interleaved", "sequential", "decomposition", "unrolled", "atomic"})
    EXPECT_NE(r.out.find(v), std::string::npos) << v;
  EXPECT_NE(r.out.find("Gelem/s"), std::string::npos);
}

// Every run's and check's table ends with its count, alone on the last line: passed and failed
// always, the other statuses where there are any.
TEST(Cli, TableEndsWithTheCountOfEachStatus) {
  CommandResult r = RunBench("--check -q --task reduction --variant sequential,atomic --size 100");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1), "2 passed, 0 failed\n") << r.out;
  const std::string dir = CopyKernels("count-line");
  Patch(dir + "/Reduction.cl", "  dst[i] = i + h < m ? OP(a, src[i + h]) : a;",
        "  dst[i] = i + h < m ? OP(a, src[i + h]) : a + (T)1;");
  Patch(dir + "/Scan.cl", "__kernel", "this is not C; __kernel");
  r = RunBench(
      "--check -q --variant sequential,atomic,naive --size 100 --type uint,double "
      "--kernels " +
      dir);
  EXPECT_EQ(r.status, 3) << r.err;
  const std::string last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  const size_t skipped = Lacks(Need::Fp64).empty() ? 0 : 3;
  const std::string want =
      skipped ? "1 passed, 1 failed, 3 skipped, 1 error\n" : "2 passed, 2 failed, 2 errors\n";
  EXPECT_EQ(last, want) << r.out;
  std::filesystem::remove_all(dir);
}

// --fail-fast: the run stops after the first case that does not pass (here the sequential
// reduction, wrong at every size), in a worker process and in this one alike; without it every
// case runs.
TEST(Cli, FailFastStopsAfterTheFirstCaseThatDoesNotPass) {
  const std::string dir = CopyKernels("fail-fast");
  Patch(dir + "/Reduction.cl", "  dst[i] = i + h < m ? OP(a, src[i + h]) : a;", "  dst[i] = (T)7;");
  const std::string args =
      "--check --task reduction --variant atomic,sequential "
      "--size 100,1000,10000 --kernels " +
      dir;
  for (const char* mode : {"", " --no-isolate"}) {
    const CommandResult fast = RunBench(args + mode + " --fail-fast");
    EXPECT_EQ(fast.status, 1) << mode << fast.err;
    EXPECT_EQ(LinesWith(fast.out, {"reduction ", " failed "}), 1u) << mode << fast.out;
    // The first case (variants run in table order: sequential before atomic) fails.
    EXPECT_NE(fast.out.find("\n0 passed, 1 failed\n"), std::string::npos) << mode << fast.out;
    EXPECT_NE(fast.err.find("stopped after the first case that did not pass (--fail-fast): 1 "),
              std::string::npos)
        << mode << fast.err;
  }
  const CommandResult all = RunBench(args + " -q");
  EXPECT_EQ(all.status, 1) << all.err;
  EXPECT_NE(all.out.find("\n3 passed, 3 failed\n"), std::string::npos) << all.out;
  std::filesystem::remove_all(dir);
}

// --list-variants in every format, byte for byte: the table as it always read, Markdown the
// README's variant table (tests/generated_test.py), CSV and JSON with each variant's kernel file.
TEST(Report, VariantListInEveryFormatKeepsItsBytes) {
  const std::vector<VariantListing> rows = {
      {"reduction", "interleaved", "Reduction.cl", "tree in global memory, one launch per step"},
      {"scan", "single-pass", "SinglePassScan.cl", "one launch, a \"chained\" scan | look-back"}};
  for (const std::string& format : FormatNames()) {
    std::ostringstream out;
    MakePrinter(ParseFormat(format))->Variants(out, rows);
    ExpectGolden("variants." + GoldenExtension(format), out.str());
  }
  const CommandResult r = RunBench("--list-variants --format markdown");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("| task | variant | what it does |\n|---|---|---|\n| reduction | `", 0), 0u)
      << r.out;
}

}  // namespace
}  // namespace rsb::test
