// The shared runner: validates and times every requested variant of every task, the same way
// for all tasks. It knows nothing about what a task computes.
#pragma once

#include "engine/Case.h"
#include "engine/IComputeTask.h"
#include "engine/Result.h"
#include "engine/RunData.h"
#include "platform/DeviceLock.h"
#include "platform/ProfilingTimer.h"
#include "platform/TaskContext.h"
#include "platform/TimedTurns.h"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rsb {

struct RunSettings {
  size_t warmup = 2;            // untimed runs before timing (build and first launch)
  size_t minIterations = 3;     // timed runs, at least
  size_t maxIterations = 1000;  // timed runs, at most (--iterations)
  double timeBudgetS = 0.5;     // stop timing a case once this much wall time is spent
  // Stop as soon as the median is known to +-ciTarget (relative) with 95% confidence
  // (--ci-target; 0: time until the budget or the cap).
  double ciTarget = 0.01;
  bool cold = false;        // --cold: the last-level cache flushed (untimed) before every timed run
  bool timed = true;        // false: validate only (--check), no warm-up or timing
  size_t validateRuns = 1;  // validated runs per case (--validate-runs): a stress test
  bool breakdown = true;    // keep every command's event (per-kernel breakdown); false: only
                            // the first and the last (--no-breakdown)
  // --timer: the profiling events, the host's clock around a finished queue, or the events where
  // the device's timer passes the check and else the host's clock (ProfilingTimer.h).
  TimerMode timer = TimerMode::Auto;
  // --device-lock FILE: validated runs hold it shared, each timed loop alone (DeviceLock.h);
  // empty: none.
  std::string deviceLock;
  // An fd of a turns socket (a `serve` request's "turns"): each timed run (warm-ups too) waits
  // for its turn against another process (TimedTurns.h); -1: none.
  int turnsFd = -1;
  // --repetitions: each result keeps its timed runs reduced (Result::timedRuns), so that the
  // rounds' runs make one breakdown (AddRound).
  bool keepRuns = false;
};

// One problem for one task, and which of its variants to run on it.
struct Job {
  Job() = default;
  Job(IComputeTask* t, ProblemSpec s, std::vector<std::string> v)
      : task(t), spec(std::move(s)), variants(std::move(v)) {}
  IComputeTask* task = nullptr;
  ProblemSpec spec;
  std::vector<std::string> variants;
  // A variant whose case differs from `spec` in its local size, tuning or their source (a tuning
  // profile's entry, src/run/Profile.h): its own spec, the same problem (input, type, n).
  std::map<std::string, ProblemSpec> variantSpecs;
  const ProblemSpec& SpecFor(const std::string& variant) const {
    const auto it = variantSpecs.find(variant);
    return it == variantSpecs.end() ? spec : it->second;
  }
};

struct Progress {
  size_t index = 0, total = 0;  // 1-based case number of total
  const Job* job = nullptr;
  std::string variant;
  const Result* result = nullptr;  // null when the case starts, set when it ends
};
using ProgressFn = std::function<void(const Progress&)>;

TimeStats Summarise(std::vector<double> samplesMs);

// The 0-based ranks (l, u) in k sorted samples that bound the median with at least 95%
// confidence: l the largest with P(Binomial(k, 1/2) < l + 1) <= 2.5%, u = k - 1 - l. Distribution
// free (order statistics). nullopt below 6 samples, where even (min, max) is not 95%.
std::optional<std::pair<size_t, size_t>> MedianCiRanks(size_t k);
// Whether stats' interval lies within +-target (relative) of its median.
bool CiWithin(const TimeStats& stats, double target);

// Runs `once` (one run, returning its device time in ms) settings.warmup times untimed, then
// until the median is known to settings.ciTarget, the time budget is spent or the iteration cap
// is reached; returns the samples.
std::vector<double> TimeRepeatedly(const RunSettings& settings,
                                   const std::function<double()>& once);

// The device's memory ceilings in GB/s (bytes read plus written): read-only, write-only and copy
// streams (kernels/Bandwidth.cl, shaped for the device type) over a random buffer at least four
// times the last-level cache (CL_DEVICE_GLOBAL_MEM_CACHE_SIZE) and 1 GiB on a GPU, 256 MiB on a
// CPU, each stream repeated like a variant (the interval target as for variants); a ceiling is
// the FASTEST run's throughput, what the device reached with that traffic: on a shared CPU the
// median of a stream moved by 10-20% from run to run with other load, and a variant's median
// then passed it (pocl: a reduction at 120-160% of a median read stream). The
// fastest of the shapes (GPU: grid-stride and tiled) is taken per stream.
struct StreamRates {  // one set of streams' GB/s
  double readGBs = 0, writeGBs = 0, copyGBs = 0;
};
// The base rates (inherited): the streams over bufferBytes, well past the last-level cache.
// `near`: the same streams over nearBufferBytes, just past twice that cache (0: not run); a case
// that reads less than bufferBytes is held against each stream's faster of the two (CeilingFor).
struct Ceilings : StreamRates {
  size_t bufferBytes = 0;
  StreamRates near;
  size_t nearBufferBytes = 0;
  // The device's profiling timer, checked first (CheckTimer): where it is unusable no stream is
  // measured and no case is timed.
  TimerVerdict timer;
  bool Known() const { return readGBs > 0 && writeGBs > 0 && copyGBs > 0; }
};
// Each stream is timed for at most kCeilingStreamBudgetS (the default --time-budget), or
// --time-budget where shorter (its other settings, --iterations and --ci-target, apply): a run
// with a long budget for its cases does not spend 12 times as long on the ceilings, and a quick
// one (a test's) does not spend 6 s on them. Once *stop
// reads true (checked between runs and during the set-up) it throws CeilingsStopped.
constexpr double kCeilingStreamBudgetS = 0.5;
struct CeilingsStopped {};
Ceilings MeasureCeilings(TaskContext& ctx, const RunSettings& settings,
                         const std::atomic<bool>* stop = nullptr);
// MeasureCeilings, or unknown (zero) ceilings: with `why` (an OpenCL error, a kernel that does
// not build, no host memory) where it failed, the cases then run without utilisation; with an
// empty `why` where *stop was set. After an OpenCL error the context is made anew for the cases.
Ceilings TryMeasureCeilings(TaskContext& ctx, const RunSettings& settings,
                            const std::atomic<bool>* stop, std::string& why);
// A stream's GB/s from its timed runs (ms) moving bytesMoved each: the fastest run's.
double StreamGBs(const std::vector<double>& samplesMs, double bytesMoved);

// The ceiling of a run that reads R and writes W bytes: min(R, W) of each moved as a copy, the
// rest as a read-only (R > W) or write-only stream, one after the other; its name says which
// ("read", "write", "copy", "copy+read", "copy+write"). 0 and "" when unknown or no traffic.
// A case that reads less than the streams' size may keep more of its input in the cache than
// they do: its rates are each stream's faster over the two sizes (Ceilings::near); a larger
// case takes the large streams' alone.
struct Ceiling {
  double gbytesS = 0;
  std::string name;
  size_t streamBytes = 0;  // the smallest stream size it took rates from
};
Ceiling CeilingFor(const Ceilings& c, uint64_t bytesRead, uint64_t bytesWritten);

// Fills r's ceiling, utilisation and bandwidthUtil from its GB/s and traffic (a timed result).
// A utilisation above kSuspectUtilisation (the result's, or a kernel's in its breakdown) is
// marked suspect with the reason, unless the case fits in the cache (fitsInCache).
void SetUtilisation(Result& r, const Ceilings& c, const DeviceInfo& device);
constexpr double kSuspectUtilisation = 1.05;
// The reason a suspect utilisation gets on this device (one that reports no cache size cannot
// mark a cached input, which is said too).
std::string UtilisationSuspectReason(const DeviceInfo& device);

// --repetitions: a later round's result of the same case joins r. Its samples become a round of
// r's; time_ms, the throughput and utilisation are those of every round's samples together, and
// roundsMs summarises the rounds' medians; the breakdown is that of every round's timed runs
// (Result::timedRuns), so that it adds up to time_ms' median. A round that did not pass makes the
// case that round's status and message ("round 3: ...").
void AddRound(Result& r, const Result& next, const Ceilings& c, const DeviceInfo& device);

// A new, empty result for one case (what it is, nothing measured yet): its local size and knobs
// as the case has them (ResolveCase; UnresolvedCase before a device is known).
Result NewResult(const Case& c, const DeviceInfo& device);

// The program a case builds, as a key: its task and kernel build options (Result::kernelOptions,
// which name the kernels it selects, so the file too).
std::string BuildKey(const Result& r);

// Every case stands alone: an OpenCL or system error in one (a build failure, an allocation
// failure, a queue broken by an out-of-bounds write) makes that case `error` with the error's
// name and what failed; the context and queue are made anew and the run goes on.
class Runner {
 public:
  Runner(TaskContext& ctx, RunSettings settings);
  // The ceilings and the timer's verdict, which with settings.timer picks the clock of every run.
  void SetCeilings(const Ceilings& c) {
    ceilings_ = c;
    ceilings_.timer.mode = settings_.timer;
  }
  // The bytes --cold writes before each timed run: twice the device's last-level cache
  // (CL_DEVICE_GLOBAL_MEM_CACHE_SIZE), at least 128 MiB (a driver may report a per-unit cache).
  static size_t FlushBytes(const DeviceInfo& device);
  // Checked between cases: once it reads true, Run returns what has finished.
  void SetStopFlag(const std::atomic<bool>* stop) {
    stop_ = [stop] { return stop->load(); };
  }
  void SetStop(std::function<bool()> stop) { stop_ = std::move(stop); }
  std::vector<Result> Run(const std::vector<Job>& jobs, const ProgressFn& progress = {});
  // The variants of one job, from the skip-th on, one result each (progress as in Run).
  std::vector<Result> RunJob(const Job& job, size_t skip, const ProgressFn& progress, size_t& index,
                             size_t total);
  // In a worker process: after a case's OpenCL error the job ends there instead of going on in
  // a new context (the process ends and a fresh one takes the rest: NVIDIA's driver refused new
  // contexts to a process whose kernel had faulted). EndedEarly() then says so.
  void SetEndJobAfterError(bool on) { endJobAfterError_ = on; }
  bool EndedEarly() const { return endedEarly_; }
  // Programs an earlier worker of the run found not to build (BuildKey): a case that needs one is
  // `error` at once, without a build, its message kKnownBuildFailure (the run that passed them
  // puts the first failure's message and log in its place).
  void SetKnownBuildFailures(std::set<std::string> keys) { knownBuildFailures_ = std::move(keys); }

 private:
  Result RunVariant(const IComputeTask& task, const std::string& variant, const ProblemSpec& spec);
  void TimeVariant(const Case& c, Result& r);
  bool ValidateRuns(const Case& c, Result& r);
  // One untimed-prepared, timed run of the case's plan, reduced to its span and per-kernel sums.
  RunBreakdown RunOnce(const LaunchPlan& plan);
  // The same run timed by the host's monotonic clock around a finished queue (clFinish before
  // and after): a span and nothing else, since the events' times are not trusted.
  RunBreakdown RunOnceHost(const LaunchPlan& plan);
  // --cold: the last-level cache flushed (an untimed fill enqueued).
  void EnqueueFlush();
  // The input for spec at this seed (a new input for every validated run), in data_.
  void UseInput(const IComputeTask& task, const ProblemSpec& spec, uint64_t seed);
  // After an OpenCL error: the old context released, then a new context and queue (unless the
  // job ends here). Never throws: what failed goes into r.message and later cases say so.
  void Recover(Result& r);

  TaskContext& ctx_;
  RunSettings settings_;
  std::shared_ptr<const DeviceLock> lock_;
  TimedTurns turns_;
  Ceilings ceilings_;
  std::function<bool()> stop_;
  RunData data_;                       // the job's input, references and buffers
  std::optional<uint64_t> inputSeed_;  // the seed of data_'s input (none: not made)
  bool endJobAfterError_ = false, endedEarly_ = false;
  bool lastCase_ = false;    // the case running is the run's last (Run knows the total)
  std::string contextLost_;  // why the device gave no new context after an error (empty: it did)
  cl::Buffer flush_;         // --cold: written before every timed run to evict the cache
  size_t flushBytes_ = 0;
  std::set<std::string> knownBuildFailures_;
};

inline constexpr const char* kKnownBuildFailure =
    "kernel build failed: the program of an earlier case of this run, with the same options";

}  // namespace rsb
