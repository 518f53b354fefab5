// The shared runner: validates and times every requested variant of every task, the same way
// for all tasks. It knows nothing about what a task computes.
#pragma once

#include "CLUtil.h"
#include "IComputeTask.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rsb {

struct RunSettings {
  size_t warmup = 2;           // untimed runs after validation (build and first launch)
  size_t minIterations = 3;    // timed runs, at least
  size_t maxIterations = 100;  // timed runs, at most (--iterations)
  double timeBudgetS = 0.5;    // stop timing a case once this much wall time is spent
  bool measureCopyBandwidth = true;
  bool timed = true;        // false: validate only (--check), no warm-up or timing
  size_t validateRuns = 1;  // validated runs per case (--validate-runs): a stress test
};

struct TimeStats {
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0;  // milliseconds
};

enum class Status { Passed, Failed, Skipped };
std::string ToString(Status s);

struct Result {
  std::string task, variant, description;
  ElementType type = ElementType::Uint;
  Op op = Op::Sum;
  std::optional<ScanKind> scanKind;
  size_t n = 0;
  size_t localSize = 0;
  Status status = Status::Skipped;
  std::string message;
  size_t iterations = 0;
  TimeStats timeMs;
  double gelemS = 0;         // n / median time
  double gbytesS = 0;        // cost.bytesMoved / median time
  double bandwidthUtil = 0;  // gbytesS / the device's measured copy bandwidth (0: unknown)
  CostModel cost;
  size_t launchesCounted = 0;  // commands the run actually enqueued
  size_t validatedRuns = 0;    // runs whose every output element was checked
};

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

class Runner {
 public:
  Runner(cl::Context context, cl::Device device, ProgramCache& programs, RunSettings settings);

  const DeviceInfo& Device() const { return info_; }
  // GB/s (bytes read + written) of a wide copy kernel over a large buffer; 0 if not measured.
  double CopyBandwidthGBs() const { return copyGBs_; }

  // Measures the copy bandwidth once (kernels/Bandwidth.cl), if settings ask for it.
  void MeasureCopyBandwidth();

  std::vector<Result> Run(const std::vector<Job>& jobs, const ProgressFn& progress = {});

 private:
  Result RunVariant(IComputeTask& task, const std::string& variant, ProblemSpec spec);
  double RunOnceMs(IComputeTask& task, const std::string& variant, const ProblemSpec& spec,
                   size_t* commands);

  cl::Context context_;
  cl::Device device_;
  cl::CommandQueue queue_;
  ProgramCache& programs_;
  RunSettings settings_;
  DeviceInfo info_;
  double copyGBs_ = 0;
};

}  // namespace rsb
