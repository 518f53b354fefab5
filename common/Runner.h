// The shared runner: validates and times every requested variant of every task, the same way
// for all tasks. It knows nothing about what a task computes.
#pragma once

#include "Breakdown.h"
#include "IComputeTask.h"
#include "TaskContext.h"

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rsb {

struct RunSettings {
  size_t warmup = 2;           // untimed runs before timing (build and first launch)
  size_t minIterations = 3;    // timed runs, at least
  size_t maxIterations = 100;  // timed runs, at most (--iterations)
  double timeBudgetS = 0.5;    // stop timing a case once this much wall time is spent
  bool timed = true;           // false: validate only (--check), no warm-up or timing
  size_t validateRuns = 1;     // validated runs per case (--validate-runs): a stress test
  bool breakdown = true;       // keep every command's event (per-kernel breakdown); false: only
                               // the first and the last (--no-breakdown)
};

struct TimeStats {
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0;  // milliseconds
};

// error: an OpenCL or system error in that case; timeout: still running after --timeout.
enum class Status { Passed, Failed, Skipped, Error, Timeout };
std::string ToString(Status s);

struct Result {
  std::string task, variant;
  ElementType type = ElementType::Uint;
  Op op = Op::Sum;
  std::optional<ScanKind> scanKind;
  size_t n = 0;
  size_t localSize = 0;
  std::string codePath;                  // "gpu" or "cpu": the kernel shape that ran
  bool portable = false;                 // --portable
  bool lookbackFallback = false;         // --lookback-fallback
  std::map<std::string, size_t> tuning;  // the task's tuning knobs, as used
  Status status = Status::Skipped;
  std::string message;
  size_t iterations = 0;
  TimeStats timeMs;
  double gelemS = 0;            // n / median time
  double gbytesS = 0;           // cost.BytesMoved() / median time
  double bandwidthUtil = 0;     // gbytesS / the device's measured copy bandwidth (0: unknown)
  CostModel cost;               // the variant's launch plan, summed
  size_t launchesEnqueued = 0;  // commands the validated run actually enqueued
  size_t validatedRuns = 0;     // runs whose every output element was checked
  Breakdown breakdown;          // per kernel, from the timed runs (Breakdown.h)
};

// The bandwidth utilisation of the result and of each kernel of its breakdown, against the
// device's measured copy bandwidth (0: unknown).
void SetUtilisation(Result& r, double copyGBs);

// "scan/single-pass uint sum inclusive n=1000": one case, named the same way everywhere.
// With a local size (not 0) it ends in " L=<local size>".
std::string CaseLabel(const std::string& task, const std::string& variant, ElementType type, Op op,
                      const std::optional<ScanKind>& kind, size_t n, size_t localSize = 0);
std::string CaseLabel(const Result& r);

// One problem for one task, and which of its variants to run on it.
struct Job {
  IComputeTask* task = nullptr;
  ProblemSpec spec;
  std::vector<std::string> variants;
};

struct Progress {
  size_t index = 0, total = 0;  // 1-based case number of total
  const Job* job = nullptr;
  std::string variant;
  const Result* result = nullptr;  // null when the case starts, set when it ends
};
using ProgressFn = std::function<void(const Progress&)>;

TimeStats Summarise(std::vector<double> samplesMs);

// Runs `once` (one run, returning its device time in ms) settings.warmup times untimed, then
// until the time budget or the iteration cap; returns the samples.
std::vector<double> TimeRepeatedly(const RunSettings& settings,
                                   const std::function<double()>& once);

// GB/s (bytes read + written) of a wide copy kernel (kernels/Bandwidth.cl) over buffers well
// past the last-level cache, timed like a variant.
double MeasureCopyBandwidth(TaskContext& ctx, const RunSettings& settings);

// A new, empty result for one case (what it is, nothing measured yet).
Result NewResult(const IComputeTask& task, const std::string& variant, const ProblemSpec& spec,
                 const DeviceInfo& device);

// Every case stands alone: an OpenCL or system error in one (a build failure, an allocation
// failure, a queue broken by an out-of-bounds write) makes that case `error` with the error's
// name and what failed; the context and queue are made anew and the run goes on.
class Runner {
 public:
  Runner(TaskContext& ctx, RunSettings settings);
  void SetCopyBandwidth(double gbytesS) { copyGBs_ = gbytesS; }
  // Checked between cases: once it reads true, Run returns what has finished.
  void SetStopFlag(const std::atomic<bool>* stop) { stop_ = stop; }
  std::vector<Result> Run(const std::vector<Job>& jobs, const ProgressFn& progress = {});
  // The variants of one job, from the skip-th on, one result each (progress as in Run).
  std::vector<Result> RunJob(const Job& job, size_t skip, const ProgressFn& progress, size_t& index,
                             size_t total);

 private:
  Result RunVariant(IComputeTask& task, const std::string& variant, ProblemSpec spec);
  void TimeVariant(IComputeTask& task, const std::string& variant, const ProblemSpec& spec,
                   Result& r);
  bool ValidateRuns(IComputeTask& task, const std::string& variant, const ProblemSpec& spec,
                    Result& r);
  // One untimed-prepared, timed run, reduced to its span and per-kernel sums.
  RunBreakdown RunOnce(IComputeTask& task, const std::string& variant, const ProblemSpec& spec);
  // The task's input and reference for spec at this seed (a new input for every validated run).
  void UseInput(IComputeTask& task, const ProblemSpec& spec, uint64_t seed);
  // After an OpenCL error: a new context and queue, the job's resources made again on them.
  void Recover(IComputeTask& task);

  TaskContext& ctx_;
  RunSettings settings_;
  double copyGBs_ = 0;
  const std::atomic<bool>* stop_ = nullptr;
  std::optional<uint64_t> inputSeed_;  // the seed of the task's current input (none: not made)
};

}  // namespace rsb
