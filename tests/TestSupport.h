// Shared by the test suites: one OpenCL device per test process (pocl by default; set
// RSB_TEST_PLATFORM / RSB_TEST_DEVICE to an index or name substring to test another device),
// a validate-only runner, and a way to run the reduce-scan-bench executable.
#pragma once

#include "engine/IComputeTask.h"
#include "engine/Runner.h"
#include "platform/CLUtil.h"
#include "tasks/CScanTask.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <set>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace rsb::test {

struct TestDevice {
  std::unique_ptr<TaskContext> ctx;  // with the kernels of the source tree
  DeviceInfo info;
};

// Created on first use.
TestDevice& Device();

// A device made up for the tests of what fits it (nothing runs on it): its type, local memory
// (and how its driver counts it: scale x declared + overhead), maximum work-group size; fp64
// and 64-bit atomics, 132 compute units, 80 GiB of memory.
DeviceInfo FabricatedDevice(bool gpu, unsigned long long localMemBytes, size_t maxWorkGroupSize,
                            unsigned localMemScale = 1, unsigned long long localMemOverhead = 0);

// The local memory the kernels of the variant's plan declare, as the driver reports it
// (CL_KERNEL_LOCAL_MEM_SIZE, the largest of the plan's kernels), built on the test device.
unsigned long long KernelLocalMemBytes(const IComputeTask& task, const std::string& variant,
                                       const ProblemSpec& spec);

// What is wrong with the automatic choices of the task's variants on the device for this problem
// (spec.localSize 0), one line each (empty: nothing): a local size that is not a power of two
// or exceeds the device's maximum work-group size, a plan that skips, a tile beyond its local
// memory as the driver counts it.
std::string AutoChoiceProblems(const IComputeTask& task, const ProblemSpec& spec,
                               const DeviceInfo& device);

// A problem spelt as the tests spell it; everything else at its default.
ProblemSpec Problem(ElementType type, Op op, std::optional<ScanKind> kind, size_t n,
                    size_t localSize, uint64_t seed);

// Runs the variants on one problem through the shared runner (validation only: no warm-up, no
// timing; validateRuns validated runs) and returns one result per variant.
std::vector<Result> Validate(IComputeTask& task, const ProblemSpec& spec,
                             const std::vector<std::string>& variants, size_t validateRuns = 1);
// The same with the kernels of kernelDir (an edited copy) in a context of their own.
std::vector<Result> ValidateWithKernels(IComputeTask& task, const ProblemSpec& spec,
                                        const std::vector<std::string>& variants,
                                        const std::string& kernelDir);

// What a test may need of the device beyond OpenCL 1.2.
enum class Need {
  Fp64,          // cl_khr_fp64: double
  Int64Atomics,  // cl_khr_int64_base_atomics: the single-pass variants, 64-bit atomic reductions
  UsableTimer,   // profiling timestamps that measure time (rusticl 22.3's count 0, 1, 2, ...)
  EndlessLoops,  // a kernel's loop that never ends runs until stopped (llvmpipe ends it)
};
// Why the test device lacks `need`, or "" where it has it: the reason a test skips with.
std::string Lacks(Need need);
// Why the test device has less than `bytes` of local memory, or "".
std::string LacksLocalMemory(size_t bytes);
// Why the test device cannot run `variant` on `spec` (the task's own reason, from the plan it
// would run and its compiled kernels: 64-bit atomics, local memory, work-group size, buffer
// sizes; or double without fp64), or "".
std::string CannotRun(const IComputeTask& task, const std::string& variant,
                      const ProblemSpec& spec);
// As above, for a case named as a result names it (task "scan", variant, type) at size n, the
// task's first operator and scan kind: whether a case of the suite's own kernels may be skipped.
std::string CannotRun(const std::string& task, const std::string& variant, ElementType type,
                      size_t n);
// The variants of `variants` that the test device can run on `spec` (all of them on pocl): for a
// test whose subject is not what some device lacks.
std::vector<std::string> Runnable(const IComputeTask& task,
                                  const std::vector<std::string>& variants,
                                  const ProblemSpec& spec);
// The test device as a cost model sees it, with the 64-bit atomics the single-pass plans need:
// for tests that only make and cost plans (nothing runs), so that every device checks them all.
DeviceInfo PlanningDevice();
// Skips the current test with the reason `why` unless it is empty:
//   RSB_SKIP_IF(Lacks(Need::Int64Atomics));
#define RSB_SKIP_IF(why)                                    \
  if (const std::string rsb_why_ = (why); rsb_why_.empty()) \
    ;                                                       \
  else                                                      \
    GTEST_SKIP() << rsb_why_

// A validated case: `passed`, or `untimed` where the device's timer cannot be trusted (the
// runner validates it all the same, it only shows no time).
bool Ok(const std::string& status);
bool Ok(Status status);

// Joins every non-passed result into one readable line per case (empty if all passed; skipped
// results count as failures unless allowSkip).
std::string Failures(const std::vector<Result>& results, bool allowSkip = false);

struct CommandResult {
  int status = -1;
  std::string out, err;
};
// The test device's selectors from the environment (RSB_TEST_PLATFORM, RSB_TEST_DEVICE) as
// shell words, each with a leading space: " --platform 'P' --device 'D'", or "".
std::string DeviceSelectors();
// The same as separate arguments (for a command line that no shell reads).
std::vector<std::string> DeviceSelectorArgs();
// Runs reduce-scan-bench with args (shell words) and DeviceSelectors(), capturing stdout,
// stderr and the exit status.
CommandResult RunBench(const std::string& args);
// RunBench with the memory ceilings at their own size: the test run caps their streams
// (RSB_CEILINGS_MAX_BYTES, tests/CMakeLists.txt); kFullCeilings, before a command, lifts the cap.
inline constexpr const char* kFullCeilings = "RSB_CEILINGS_MAX_BYTES= ";
CommandResult RunBenchWithFullCeilings(const std::string& args);
// Runs a shell command line (no device selectors added), capturing as RunBench does.
CommandResult RunCommand(const std::string& command);
// Ctrl-C while pocl links a kernel (with `ld` from PATH): runs the shell line `command` as a job of
// its own (a process group, SIGINT at its default) with an `ld` first on PATH that waits a second
// before the real one (a Python wrapper: a shell would unblock signals at its start), sends SIGINT
// to the job's group once a link has begun, and returns its exit status; "no-link" where none
// began within a minute, "no-ld" without ld or python3. dir: a folder of the test's own.
std::string InterruptDuringLink(const std::string& dir, const std::string& command);

// The whole file at path, byte for byte ("" where it cannot be read).
std::string ReadFile(const std::filesystem::path& path);
// tests/fixtures/NAME in the source tree.
std::string FixturePath(const std::string& name);
// How often `what` occurs in text (overlapping occurrences too).
size_t CountOf(const std::string& text, const std::string& what);
// The lines of text that hold every one of parts.
size_t LinesWith(const std::string& text, const std::vector<std::string>& parts);
// Sets an environment variable for the scope; the old value (or its absence) comes back after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// Copies the source kernels folder to a fresh temporary folder and returns its path.
std::string CopyKernels(const std::string& name);
// The kernel `name` of a kernels file (path), from `__kernel void name(` to its closing brace,
// renamed newName: a student's copy of a variant, taken from the file as it is (the tests quote
// no solution: in the hand-out the copy is the student's own code).
std::string KernelCopy(const std::string& path, const std::string& name,
                       const std::string& newName);
// Replaces the first occurrence of `from` with `to` in file (path), or fails the test.
void Patch(const std::string& path, const std::string& from, const std::string& to);

// A (variant, element type) pair: the parameter of the per-variant test suites.
struct VariantTypeParam {
  std::string variant;
  ElementType type;
};
void PrintTo(const VariantTypeParam& p, std::ostream* os);
std::vector<VariantTypeParam> VariantTypeParams(const std::vector<std::string>& variants);
// "single_pass_uint": a test name made of the parameter.
std::string VariantTypeName(const testing::TestParamInfo<VariantTypeParam>& info);

// What a bare `--check --task T --variant V` checks (run/CheckMatrix.h: every operator and scan
// kind, every boundary size, the device's local size and a small one; or the `localSizes` given,
// as --local-size gives them), for one element type, run in this process through the shared
// runner: the cases that failed, one line each, and the reasons of those skipped.
struct MatrixOutcome {
  size_t passed = 0;
  std::string failures;
  std::set<std::string> skips;
};
MatrixOutcome RunCheckMatrix(const std::string& task, const std::string& variant, ElementType type,
                             const std::string& localSizes = "");
// The per-variant tests' assertion: the variant passes its check matrix at the type (uint also
// at local size 256, a large work-group on every device that has one); a case the device cannot
// run skips the test with its reason once the others have passed.
void ExpectCheckMatrixPasses(const std::string& task, const std::string& variant, ElementType type);

// tests/fixtures/base.json with `edit` applied to its results, written to `path`; "987654.321",
// where an edit put that number, is then replaced in the text by `raw` (JSON the library would
// never write: 1e400, NaN). Returns path.
std::string WriteEditedResultFile(const std::string& path,
                                  const std::function<void(nlohmann::json&)>& edit,
                                  const std::string& raw = "");

// The output formats' bytes pinned: text must equal tests/fixtures/printer/NAME, each file
// written by the writers as they were before they became one printer interface (commit
// 3028cc7; RSB_WRITE_GOLDEN=1 writes NAME from text instead, for a deliberate change of a
// format). This build's suite fields (version, git revision, build: JSON `suite`, the CSV
// columns suite_version to build) are replaced by placeholders first, in JSON (NAME ending in
// .json) and CSV (.csv) alike, so that no commit changes a golden file.
void ExpectGolden(const std::string& name, std::string text);
// A format's golden files end in: "txt" (the table), "csv", "json", "md" (Markdown).
std::string GoldenExtension(const std::string& format);

// RFC 4180 rows: fields split at commas outside quotes, "" a quote.
std::vector<std::vector<std::string>> CsvRows(const std::string& text);

}  // namespace rsb::test
