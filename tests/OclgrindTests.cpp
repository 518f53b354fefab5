// --check --oclgrind (common/engine/Oclgrind.h): the suite's own kernels are clean under Oclgrind's
// checks (the CI gate), defects validation cannot see on pocl are caught (an out-of-bounds write,
// a missing barrier, a plain publish), instruction counts are deterministic and see extra work,
// and bad input is exit 2. The tests that run Oclgrind skip where it is not installed.
#include "TestSupport.h"

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
