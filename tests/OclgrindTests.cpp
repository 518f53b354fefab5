// --check --oclgrind (common/engine/Oclgrind.h): the suite's own kernels are clean under Oclgrind's
// checks (the CI gate), defects validation cannot see on pocl are caught (an out-of-bounds write,
// a missing barrier, a plain publish), instruction counts are deterministic and see extra work,
// and bad input is exit 2. The tests that run Oclgrind skip where it is not installed.
#include "TestSupport.h"

#include "engine/Oclgrind.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <unistd.h>

using namespace rsb;
using namespace rsb::test;
namespace fs = std::filesystem;

namespace {

bool OclgrindInstalled() {
  return std::system("command -v oclgrind >/dev/null 2>&1") == 0;
}

#define SKIP_WITHOUT_OCLGRIND()                                              \
  if (!OclgrindInstalled())                                                  \
  GTEST_SKIP() << "oclgrind is not installed (the Debian package oclgrind, " \
                  "scripts/install-deps.sh)"

// A run's JSON report (--format json -o FILE): its results.
nlohmann::json Results(const std::string& args, CommandResult& run) {
  const std::string out =
      (fs::temp_directory_path() / fmt::format("rsb-oclgrind-{}.json", getpid())).string();
  run = RunBench(args + " -q --format json -o " + out);
  std::ifstream in(out);
  nlohmann::json j = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  fs::remove(out);
  return j.is_object() && j.contains("results") ? j["results"] : nlohmann::json::array();
}

// A copy of the kernels with one defect patched in.
std::string PatchedKernels(const std::string& name, const std::string& file,
                           const std::string& from, const std::string& to) {
  const std::string dir = CopyKernels(name);
  Patch(dir + "/" + file, from, to);
  return dir;
}

}  // namespace

// The CI gate: every variant of every task, the bare --oclgrind matrix, no diagnostic.
TEST(Oclgrind, EveryVariantOfEveryTaskIsCleanUnderTheBareGate) {
  SKIP_WITHOUT_OCLGRIND();
  CommandResult run;
  const nlohmann::json results = Results("--check --oclgrind --task all --variant all", run);
  EXPECT_EQ(run.status, 0) << run.err;
  ASSERT_FALSE(results.empty()) << run.err;
  std::set<std::string> variants;
  for (const auto& r : results) {
    variants.insert(r["task"].get<std::string>() + "/" + r["variant"].get<std::string>());
    EXPECT_EQ(r["status"], "passed") << r["task"] << "/" << r["variant"] << ": " << r["message"];
    ASSERT_TRUE(r["oclgrind"].is_object()) << r.dump();
    EXPECT_TRUE(r["oclgrind"]["diagnostics"].empty()) << r["oclgrind"].dump();
    if (r["n"].get<size_t>() > 1) {
      EXPECT_GT(r["oclgrind"]["instructions"].get<uint64_t>(), 0u) << r.dump();
    }
  }
  EXPECT_EQ(variants.size(), 6u + 5u + 6u);  // reduction, scan, convolution
}

// An out-of-bounds write that pocl does not notice (dst[n] lies in the buffer's padding or
// beyond it without a fault): plain --check passes, Oclgrind names the file and line.
TEST(Oclgrind, NaiveScanWritingPastTheEndFailsWithFileAndLine) {
  SKIP_WITHOUT_OCLGRIND();
  const std::string dir = PatchedKernels("oclgrind-oob", "Scan.cl", "  dst[i] = v;\n",
                                         "  dst[i] = v;\n  if (i == n - 1)\n    dst[n] = v;\n");
  std::string patched;
  {
    std::ifstream in(dir + "/Scan.cl");
    std::stringstream s;
    s << in.rdbuf();
    patched = s.str();
  }
  const size_t at = patched.find("    dst[n] = v;");
  const size_t line = std::count(patched.begin(), patched.begin() + at, '\n') + 1;
  const std::string sel =
      " --task scan --variant naive --size 1000 --local-size 64 --kernels " + dir;
  const CommandResult plain = RunBench("--check -q" + sel);
  EXPECT_EQ(plain.status, 0) << "plain --check was expected to miss it on pocl\n" << plain.err;
  const CommandResult gate = RunBench("--check --oclgrind -q" + sel);
  EXPECT_EQ(gate.status, 1) << gate.err;
  EXPECT_NE(gate.err.find(fmt::format("oclgrind: invalid-write at Scan.cl:{}", line)),
            std::string::npos)
      << gate.err;
  fs::remove_all(dir);
}

namespace {

// The line of `text` in the file (1-based; 0 where it is not there).
size_t LineOf(const std::string& path, const std::string& text) {
  const std::string all = rsb::test::ReadFile(path);
  const size_t at = all.find(text);
  return at == std::string::npos ? 0 : size_t(std::count(all.begin(), all.begin() + at, '\n')) + 1;
}

// An out-of-bounds access planted in a copy of the kernels, and where Oclgrind's finding must
// point: the file and line of the access and, where it is in a helper function, the helper and
// the lines of the kernel's calls to it.
struct PlantedAccess {
  std::string name, file, from, to, access;  // access: the text of the accessing line
  std::string selection, kind, kernel, helper, callerFile;
  std::vector<std::string> calls;  // the texts of the calling lines in callerFile
};

// A naive scan that reads past the end (its bound check moved to the write): the read is in
// LoadShifted, inlined twice, and Oclgrind's optimiser merges each pair of loads into one, which
// it reports at line 0; the same for a header's helper (Common.clh's LoadOrIdentity reading
// in[n]), and a write past the end in a kernel and in a header's helper (the work-group tree's
// local array).
std::vector<PlantedAccess> PlantedAccesses() {
  const std::string naive = " --task scan --variant naive --size 1000 --local-size 64";
  const std::string decomposition =
      " --task reduction --variant decomposition --size 1000 --local-size 64";
  return {
      {"kernel-read",
       "Scan.cl",
       "  if (i >= n)\n    return;\n  T v = LoadShifted(src, i, shift);\n  if (i >= offset)\n"
       "    v = OP(LoadShifted(src, i - offset, shift), v);\n  dst[i] = v;",
       "  T v = LoadShifted(src, i, shift);\n  if (i >= offset)\n"
       "    v = OP(LoadShifted(src, i - offset, shift), v);\n  if (i < n)\n    dst[i] = v;",
       "  return shift ? (i > 0 ? src[i - 1] : IDENTITY) : src[i];",
       naive,
       "invalid-read",
       "ScanNaiveStep",
       "LoadShifted",
       "Scan.cl",
       {"  T v = LoadShifted(src, i, shift);",
        "    v = OP(LoadShifted(src, i - offset, shift), v);"}},
      {"kernel-write",
       "Scan.cl",
       "  dst[i] = v;\n",
       "  dst[i] = v;\n  if (i == n - 1)\n    dst[n] = v;\n",
       "    dst[n] = v;",
       naive,
       "invalid-write",
       "ScanNaiveStep",
       "",
       "",
       {}},
      {"header-read",
       "Common.clh",
       "  return i < n ? in[i] : IDENTITY;",
       "  return i <= n ? in[i] : IDENTITY;",
       "  return i <= n ? in[i] : IDENTITY;",
       decomposition,
       "invalid-read",
       "ReduceDecomposition",
       "LoadOrIdentity",
       "Reduction.cl",
       {"  const T v = OP(LoadOrIdentity(src, base, n), LoadOrIdentity(src, base + LOCAL_SIZE, "
        "n));\n  const T r = WorkGroupReduceSequential"}},
      {"header-write",
       "WorkGroup.clh",
       "  scratch[lid] = value;\n  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: every work-item's",
       "  scratch[lid + 1] = value;\n  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: every work-item's",
       "  scratch[lid + 1] = value;",
       decomposition,
       "invalid-write",
       "ReduceDecomposition",
       "WorkGroupReduceSequential",
       "Reduction.cl",
       {"  const T r = WorkGroupReduceSequential(scratch, v);"}},
  };
}

}  // namespace

// Each planted access: the diagnostic names the access's own file and line (never 0), and where
// it is in a helper, the helper and the kernel's calls to it, in the JSON and in the message.
TEST(Oclgrind, OutOfBoundsAccessesNameTheirLineAndTheHelpersCaller) {
  SKIP_WITHOUT_OCLGRIND();
  for (const PlantedAccess& a : PlantedAccesses()) {
    SCOPED_TRACE(a.name);
    const std::string dir = PatchedKernels("oclgrind-" + a.name, a.file, a.from, a.to);
    const size_t line = LineOf(dir + "/" + a.file, a.access);
    ASSERT_GT(line, 0u);
    CommandResult run;
    const nlohmann::json results =
        Results("--check --oclgrind" + a.selection + " --kernels " + dir, run);
    ASSERT_EQ(results.size(), 1u) << run.err;
    ASSERT_FALSE(results[0]["oclgrind"]["diagnostics"].empty()) << results[0].dump();
    const auto& d = results[0]["oclgrind"]["diagnostics"][0];
    EXPECT_EQ(d["kind"], a.kind);
    EXPECT_EQ(d["kernel"], a.kernel);
    EXPECT_EQ(d["file"], a.file);
    EXPECT_EQ(d["line"], line) << d.dump();
    EXPECT_EQ(d["function"], a.helper) << d.dump();
    std::string where = fmt::format("oclgrind: {} at {}:{} in {}", a.kind, a.file, line, a.kernel);
    if (!a.helper.empty()) {
      std::vector<size_t> lines;
      for (const auto& call : a.calls)
        lines.push_back(LineOf(dir + "/" + a.callerFile, call));
      ASSERT_EQ(d["called_from"].size(), 1u) << d.dump();
      EXPECT_EQ(d["called_from"][0]["function"], a.kernel);
      EXPECT_EQ(d["called_from"][0]["file"], a.callerFile);
      EXPECT_EQ(d["called_from"][0]["lines"].get<std::vector<size_t>>(), lines) << d.dump();
      where += fmt::format(" ({}, called at {}:{}", a.helper, a.callerFile, lines[0]);
    }
    EXPECT_NE(results[0]["message"].get<std::string>().find(where), std::string::npos)
        << results[0]["message"];
    fs::remove_all(dir);
  }
}

// Without Oclgrind: a message at line 0 (accesses the optimiser merged) takes the line of the
// unoptimised run's message of the same work-item, and a line in a helper gets the helper and the
// kernel's calls to it, read from the source (comments, strings and directives not taken for code).
TEST(Oclgrind, ALineZeroIsLocatedAndAHelperNamesItsCallers) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("rsb-locate-{}", getpid());
  fs::create_directories(dir);
  std::ofstream(dir / "Common.clh") << "#define T int\n";
  std::ofstream(dir / "K.cl") << "// Get(p, 9) in a comment is no call\n"
                                 "inline int Get(__global const int* p, uint i) {\n"
                                 "  return p[i];\n"
                                 "}\n"
                                 "#define CALL Get(p, 7)\n"
                                 "__kernel void K(__global const int* p, __global int* q) {\n"
                                 "  q[0] = Get(p, 1); /* Get(p, 8) */\n"
                                 "  q[1] = Get(p, 2) + (int)\"Get(\";\n"
                                 "}\n";
  const auto message = [](const std::string& item, size_t line) {
    return fmt::format(
        "\nInvalid read of size 4 at global memory address 0x10\n\tKernel: K\n\tEntity: "
        "Global({0},0,0) Local({0},0,0) Group(0,0,0)\n\t  %0 = load\n\tAt line {1} (column 3) "
        "of input.cl:\n\t  (source not available)\n",
        item, line);
  };
  OclgrindReport report;
  ParseOclgrindLog(message("1", 0), dir.string(), report);
  ASSERT_EQ(report.diagnostics.size(), 1u);
  EXPECT_EQ(report.diagnostics[0].file, "K.cl");
  EXPECT_TRUE(NeedsLocating(report));
  LocateFrom(report, OclgrindMessages(message("0", 7) + message("1", 3), dir.string()),
             dir.string());
  ASSERT_EQ(report.diagnostics.size(), 1u);
  const OclgrindDiagnostic& d = report.diagnostics[0];
  EXPECT_FALSE(NeedsLocating(report));
  EXPECT_EQ(d.line, 3u);
  EXPECT_EQ(d.function, "Get");
  ASSERT_EQ(d.calledFrom.size(), 1u);
  EXPECT_EQ(d.calledFrom[0].function, "K");
  EXPECT_EQ(d.calledFrom[0].file, "K.cl");
  EXPECT_EQ(d.calledFrom[0].lines, (std::vector<size_t>{7, 8}));
  EXPECT_NE(OclgrindSummary(report).find("invalid-read at K.cl:3 in K (Get, called at K.cl:7, 8)"),
            std::string::npos)
      << OclgrindSummary(report);
  fs::remove_all(dir);
}

// Blelloch's down-sweep without its barriers: a race pocl hides (it runs work-items in turn).
TEST(Oclgrind, WorkEfficientScanWithoutDownSweepBarriersIsARace) {
  SKIP_WITHOUT_OCLGRIND();
  const std::string dir = PatchedKernels(
      "oclgrind-down-sweep", "Scan.cl",
      "    barrier(CLK_LOCAL_MEM_FENCE);\n    if (lid < active) {", "    if (lid < active) {");
  const CommandResult gate = RunBench(
      "--check --oclgrind -q --task scan --variant work-efficient --size 333 --local-size 16 "
      "--kernels " +
      dir);
  EXPECT_EQ(gate.status, 1) << gate.err;
  EXPECT_NE(gate.err.find("oclgrind: data-race at Scan.cl:"), std::string::npos) << gate.err;
  fs::remove_all(dir);
}

// The single-pass reduction publishing its partial with a plain store: x86 and the H100 both
// hide it (BrokenKernelTests); Oclgrind reports the race with the last work-group's atomic read.
TEST(Oclgrind, SinglePassReductionPublishingWithAPlainStoreIsARace) {
  SKIP_WITHOUT_OCLGRIND();
  const std::string dir = PatchedKernels(
      "oclgrind-plain-publish", "SinglePassReduction.cl",
      "    const ATOMIC_BITS old = ATOMIC_XCHG_BITS(&partials[get_group_id(0)], AS_BITS(mine));",
      "    partials[get_group_id(0)] = AS_BITS(mine);\n    const ATOMIC_BITS old = 0;");
  const std::string sel =
      " --task reduction --variant single-pass --size 3001 --local-size 16 --kernels " + dir;
  const CommandResult plain = RunBench("--check -q" + sel);
  EXPECT_EQ(plain.status, 0) << "plain --check was expected to miss it on pocl\n" << plain.err;
  CommandResult gate;
  const nlohmann::json results = Results("--check --oclgrind" + sel, gate);
  EXPECT_EQ(gate.status, 1) << gate.err;
  ASSERT_FALSE(results.empty()) << gate.err;
  for (const auto& r : results) {
    EXPECT_EQ(r["status"], "failed") << r.dump();
    ASSERT_FALSE(r["oclgrind"]["diagnostics"].empty()) << r.dump();
    const auto& d = r["oclgrind"]["diagnostics"][0];
    EXPECT_EQ(d["kind"], "data-race");
    EXPECT_EQ(d["file"], "SinglePassReduction.cl");
    EXPECT_EQ(d["kernel"], "ReduceSinglePass");
    EXPECT_GT(d["line"].get<size_t>(), 0u);
    EXPECT_NE(d["work_item"].get<std::string>().find("Global("), std::string::npos);
  }
  fs::remove_all(dir);
}

// The same case twice: the same counts, per kernel and in all.
TEST(Oclgrind, InstructionCountsAreTheSameEveryRun) {
  SKIP_WITHOUT_OCLGRIND();
  const std::string sel =
      "--check --oclgrind --task reduction,scan --variant single-pass,decomposition --size 3001 "
      "--local-size 16";
  CommandResult a, b;
  const nlohmann::json first = Results(sel, a), second = Results(sel, b);
  ASSERT_EQ(first.size(), second.size()) << a.err << b.err;
  ASSERT_FALSE(first.empty()) << a.err;
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_GT(first[i]["oclgrind"]["instructions"].get<uint64_t>(), 0u) << first[i].dump();
    EXPECT_EQ(first[i]["oclgrind"]["instructions"], second[i]["oclgrind"]["instructions"])
        << first[i]["variant"];
    EXPECT_EQ(first[i]["oclgrind"]["kernels"], second[i]["oclgrind"]["kernels"]);
  }
}

// A reduction whose every work-item sums its group's whole block alone (L times the work, the
// same result): validation passes, the count shows it.
TEST(Oclgrind, InstructionCountsSeeLTimesTheWork) {
  SKIP_WITHOUT_OCLGRIND();
  const std::string dir = PatchedKernels(
      "oclgrind-work", "Reduction.cl",
      "  const T v = OP(LoadOrIdentity(src, base, n), LoadOrIdentity(src, base + LOCAL_SIZE, "
      "n));\n  const T r = WorkGroupReduceSequential(scratch, v);",
      "  (void)scratch;\n  const IDX block = base - get_local_id(0);\n  T r = IDENTITY;\n"
      "  for (uint k = 0; k < 2 * LOCAL_SIZE; ++k)\n"
      "    r = OP(r, LoadOrIdentity(src, block + k, n));");
  const std::string sel =
      "--check --oclgrind --task reduction --variant decomposition --size "
      "3001 --local-size 64";
  CommandResult own, slow;
  const nlohmann::json suite = Results(sel, own),
                       patched = Results(sel + " --kernels " + dir, slow);
  ASSERT_EQ(suite.size(), 1u) << own.err;
  ASSERT_EQ(patched.size(), 1u) << slow.err;
  EXPECT_EQ(patched[0]["status"], "passed") << patched[0]["message"];
  const uint64_t base = suite[0]["oclgrind"]["instructions"].get<uint64_t>();
  const uint64_t more = patched[0]["oclgrind"]["instructions"].get<uint64_t>();
  EXPECT_GT(base, 0u);
  EXPECT_GT(more, 2 * base) << "suite " << base << ", L times the work " << more;
  fs::remove_all(dir);
}

TEST(Oclgrind, WithoutCheckIsAUsageError) {
  const CommandResult r = RunBench("--oclgrind --task reduction --size 1000");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--oclgrind"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--check"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(Oclgrind, WithoutOclgrindOnPathNamesThePackage) {
  const fs::path empty = fs::temp_directory_path() / fmt::format("rsb-no-oclgrind-{}", getpid());
  fs::create_directories(empty);
  const CommandResult r = RunCommand(
      fmt::format("PATH={} {} --check --oclgrind --task reduction", empty.string(), RSB_BINARY));
  fs::remove_all(empty);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("oclgrind"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Debian package oclgrind"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("scripts/install-deps.sh"), std::string::npos) << r.err;
}
