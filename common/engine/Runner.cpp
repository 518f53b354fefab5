#include "engine/Runner.h"

#include "engine/Case.h"
#include "engine/TaskUtil.h"
#include "platform/CLUtil.h"
#include "platform/Errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>

namespace rsb {

std::optional<std::pair<size_t, size_t>> MedianCiRanks(size_t k) {
  if (k < 6)
    return std::nullopt;
  // P(X <= i) for X ~ Binomial(k, 1/2), summed in log space (2^-k underflows past k = 1074).
  double cdf = 0;
  size_t l = 0;
  for (size_t i = 0; i < k / 2; ++i) {
    const double logPmf = std::lgamma(double(k) + 1) - std::lgamma(double(i) + 1) -
                          std::lgamma(double(k - i) + 1) - double(k) * std::log(2.0);
    cdf += std::exp(logPmf);
    if (cdf > 0.025)
      break;
    l = i + 1;  // P(X <= i) <= 2.5%: rank i + 1 (0-based) still bounds the median
  }
  // l >= 1 here: P(X = 0) = 2^-k <= 1/64 for k >= 6. The interval is [x_(l-1), x_(k-l)] 0-based.
  return std::make_pair(l - 1, k - l);
}

bool CiWithin(const TimeStats& s, double target) {
  if (s.ciHigh <= 0 || s.median <= 0)
    return false;
  return s.median - s.ciLow <= target * s.median && s.ciHigh - s.median <= target * s.median;
}

TimeStats Summarise(std::vector<double> t) {
  TimeStats s;
  if (t.empty())
    return s;
  std::sort(t.begin(), t.end());
  const size_t k = t.size();
  s.median = k % 2 ? t[k / 2] : 0.5 * (t[k / 2 - 1] + t[k / 2]);
  if (const auto ranks = MedianCiRanks(k)) {
    s.ciLow = t[ranks->first];
    s.ciHigh = t[ranks->second];
  }
  s.min = t.front();
  s.max = t.back();
  s.mean = std::accumulate(t.begin(), t.end(), 0.0) / double(k);
  double var = 0;
  for (double x : t)
    var += (x - s.mean) * (x - s.mean);
  s.stddev = k > 1 ? std::sqrt(var / double(k - 1)) : 0.0;
  return s;
}

std::vector<double> TimeRepeatedly(const RunSettings& settings,
                                   const std::function<double()>& once) {
  for (size_t i = 0; i < settings.warmup; ++i)
    once();
  std::vector<double> samples;
  const auto begin = std::chrono::steady_clock::now();
  while (samples.size() < settings.maxIterations) {
    samples.push_back(once());
    const double spent =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (samples.size() < settings.minIterations)
      continue;
    if (spent >= settings.timeBudgetS)
      break;
    if (settings.ciTarget > 0 && CiWithin(Summarise(samples), settings.ciTarget))
      break;
  }
  return samples;
}

namespace {
double SpanMs(const cl::Event& first, const cl::Event& last) {
  const cl_ulong start = first.getProfilingInfo<CL_PROFILING_COMMAND_START>();
  const cl_ulong end = last.getProfilingInfo<CL_PROFILING_COMMAND_END>();
  return end > start ? 1e-6 * double(end - start) : 0.0;
}
}  // namespace

double StreamGBs(const std::vector<double>& samplesMs, double bytesMoved) {
  const double ms = Summarise(samplesMs).min;  // the fastest run: what the device reached
  return ms > 0 ? bytesMoved / (ms * 1e6) : 0.0;
}

namespace {

// The two stream sizes: a GPU streams 1 GiB (a 256 MiB read takes ~90 us on an H100, where a
// launch and the grid's tail are a few percent); a CPU 256 MiB (its host copy of the input is
// made per run). The streams run again over just past twice the last-level cache: the smallest
// input the `c` mark (SetUtilisation) leaves unmarked. A cache that keeps part of what it
// streamed from one run to the next (pocl's 32 MiB L3 on 64 MiB inputs: up to 135% of the 256
// MiB read stream) makes such an input faster than a stream far past the cache; a
// case smaller than the large streams is held against the faster of the two sizes (CeilingFor).
// RSB_CEILINGS_MAX_BYTES (a test setting, bytes): caps the streams' buffer. The test suite times
// a few hundred short runs; each would otherwise stream four times the last-level cache (on pocl
// a gigabyte: about 8 CPU-seconds a run). The ceilings' buffer_bytes says what was measured.
size_t TestCeilingsCap() {
  const char* cap = std::getenv("RSB_CEILINGS_MAX_BYTES");
  if (cap == nullptr || *cap == '\0')
    return std::numeric_limits<size_t>::max();
  return std::max<size_t>(std::strtoull(cap, nullptr, 10), 4096);
}

void SizeStreams(const DeviceInfo& info, Ceilings& c) {
  size_t bytes = std::max<size_t>(4 * info.globalMemCacheBytes,
                                  info.isGpu ? size_t(1) << 30 : size_t(256) << 20);
  bytes = std::min<size_t>(bytes, info.globalMemBytes / 4);
  bytes = std::min<size_t>(bytes, info.maxAllocBytes / 2);
  bytes = std::min<size_t>(bytes, TestCeilingsCap());
  bytes -= bytes % 16;
  c.bufferBytes = bytes;
  const size_t near = (2 * info.globalMemCacheBytes + 4096 + 15) / 16 * 16;
  if (info.globalMemCacheBytes > 0 && near < bytes)
    c.nearBufferBytes = near;
}

// Random input (compressible data would flatter some GPUs) of `bytes` on the device.
cl::Buffer RandomInput(TaskContext& ctx, size_t bytes, const std::atomic<bool>* stop) {
  std::vector<uint32_t> host(bytes / 4);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < host.size(); ++i) {  // xorshift64*
    if (i % (size_t(1) << 20) == 0 && stop && *stop)
      throw CeilingsStopped();
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    host[i] = static_cast<uint32_t>((x * 2685821657736338717ull) >> 32);
  }
  cl::Buffer in(ctx.context, CL_MEM_READ_WRITE, bytes);
  ctx.queue.enqueueWriteBuffer(in, CL_TRUE, 0, bytes, host.data());
  return in;
}

// Bandwidth.cl's streams (read, write, copy) in two shapes each, timed on buffers of up to
// `bytes`; a ceiling is the fastest shape's.
class Streams {
 public:
  Streams(TaskContext& ctx, const RunSettings& settings, const std::atomic<bool>* stop,
          size_t bytes, bool host)
      : ctx_(ctx),
        settings_(settings),
        stop_(stop),
        host_(host),
        cpu_(!ctx.info.isGpu),
        // Tiled shape: TILE_ITEMS 16-byte elements per work-item, a work-group per tile; on a
        // CPU a tile of 256 KiB, the single-pass scan's default CPU tile (65,536 4-byte
        // elements), which it reads and writes a tile at a time and which moved more than the
        // contiguous runs' copy did (pocl: up to 110% of it).
        tileItems_(cpu_ ? size_t(16384) : size_t(8)),
        program_(ctx.programs.Get(
            "Bandwidth.cl",
            fmt::format("{}-DTILE_ITEMS={}", cpu_ ? "-DCPU_SHAPE=1 " : "", tileItems_))),
        // GPU: 8 work-groups of 256 per compute unit (grid-stride), or a work-group per tile;
        // CPU: 4 work-items (each a run) per core, or a work-group of one per tile.
        local_(cpu_ ? 1 : std::min<size_t>(256, ctx.info.maxWorkGroupSize)),
        strided_((cpu_ ? 4 : 8 * local_) * std::max<size_t>(1, ctx.info.computeUnits)),
        out_(ctx.context, CL_MEM_READ_WRITE, bytes),
        // The sink has a word per work-item of the larger grid.
        sink_(ctx.context, CL_MEM_WRITE_ONLY, std::max(strided_, Tiled(bytes)) * sizeof(cl_uint)) {}

  // The three streams over `size` bytes of `in`, in both shapes, into `rates` (each the best).
  void Time(const cl::Buffer& in, size_t size, StreamRates& rates) {
    const cl_uint n4 = static_cast<cl_uint>(size / 16);
    const std::vector<std::pair<std::string, size_t>> shapes = {{"", strided_},
                                                                {"Tiled", Tiled(size)}};
    for (const auto& [suffix, global] : shapes) {
      cl::Kernel read(program_, ("Read4" + suffix).c_str()),
          write(program_, ("Write4" + suffix).c_str()), copy(program_, ("Copy4" + suffix).c_str());
      read.setArg(0, in), read.setArg(1, sink_), read.setArg(2, n4);
      write.setArg(0, out_), write.setArg(1, n4);
      copy.setArg(0, in), copy.setArg(1, out_), copy.setArg(2, n4);
      rates.readGBs = std::max(rates.readGBs, TimeKernel(read, global, double(size)));
      rates.writeGBs = std::max(rates.writeGBs, TimeKernel(write, global, double(size)));
      rates.copyGBs = std::max(rates.copyGBs, TimeKernel(copy, global, 2.0 * double(size)));
    }
  }

 private:
  // The tiled grid for a stream of `size` bytes: a work-group per tile.
  size_t Tiled(size_t size) const { return CeilDiv(size / 16, tileItems_ * local_) * local_; }

  double TimeKernel(cl::Kernel& k, size_t global, double bytesMoved) {
    const auto samples = TimeRepeatedly(settings_, [&] {
      if (stop_ && *stop_)
        throw CeilingsStopped();
      cl::Event e;
      if (host_) {  // the host's clock around a finished queue, as a host-timed case
        ctx_.queue.finish();
        const auto begin = std::chrono::steady_clock::now();
        ctx_.queue.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(global), cl::NDRange(local_));
        ctx_.queue.finish();
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin)
            .count();
      }
      ctx_.queue.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(global), cl::NDRange(local_),
                                      nullptr, &e);
      e.wait();
      return SpanMs(e, e);
    });
    return StreamGBs(samples, bytesMoved);
  }

  TaskContext& ctx_;
  const RunSettings& settings_;
  const std::atomic<bool>* stop_;
  bool host_;  // timed by the host's clock (the device's timer failed its check, or --timer host)
  bool cpu_;
  size_t tileItems_;
  cl::Program& program_;
  size_t local_, strided_;
  cl::Buffer out_, sink_;
};

}  // namespace

Ceilings MeasureCeilings(TaskContext& ctx, const RunSettings& runSettings,
                         const std::atomic<bool>* stop) {
  RunSettings settings = runSettings;
  settings.timeBudgetS = std::min(runSettings.timeBudgetS, kCeilingStreamBudgetS);
  Ceilings c;
  // Streams timed by a timer that measures nothing would be ceilings of nothing.
  c.timer = CheckTimer(ctx);
  c.timer.mode = settings.timer;
  if (c.timer.Clock().empty())
    return c;
  SizeStreams(ctx.info, c);
  const cl::Buffer in = RandomInput(ctx, c.bufferBytes, stop);
  if (stop && *stop)
    throw CeilingsStopped();
  Streams streams(ctx, settings, stop, c.bufferBytes, c.timer.Clock() == "host");
  streams.Time(in, c.bufferBytes, c);
  if (c.nearBufferBytes)
    streams.Time(in, c.nearBufferBytes, c.near);
  return c;
}

Ceilings TryMeasureCeilings(TaskContext& ctx, const RunSettings& settings,
                            const std::atomic<bool>* stop, std::string& why) {
  why.clear();
  try {
    return MeasureCeilings(ctx, settings, stop);
  } catch (const CeilingsStopped&) {
    return Ceilings();
  } catch (const cl::Error& e) {
    why = fmt::format("OpenCL error {} in {}", ClErrorName(e.err()), e.what());
  } catch (const std::bad_alloc&) {
    why = "out of host memory";
    return Ceilings();
  } catch (const std::exception& e) {  // DeviceError (Bandwidth.cl does not build), VariantSkipped
    why = e.what();
    return Ceilings();
  }
  try {  // after an OpenCL error the context may be broken
    ctx.Recreate();
  } catch (const cl::Error& e) {
    why += fmt::format("; afterwards the device gave no new context ({} in {})",
                       ClErrorName(e.err()), e.what());
  }
  return Ceilings();
}

Ceiling CeilingFor(const Ceilings& c, uint64_t bytesRead, uint64_t bytesWritten) {
  if (!c.Known() || bytesRead + bytesWritten == 0)
    return {};
  const bool near = c.nearBufferBytes > 0 && bytesRead < c.bufferBytes;
  const double read = near ? std::max(c.readGBs, c.near.readGBs) : c.readGBs;
  const double write = near ? std::max(c.writeGBs, c.near.writeGBs) : c.writeGBs;
  const double copy = near ? std::max(c.copyGBs, c.near.copyGBs) : c.copyGBs;
  const double both = double(std::min(bytesRead, bytesWritten));
  const double readOnly = double(bytesRead) - both, writeOnly = double(bytesWritten) - both;
  // Seconds per GB at each ceiling, summed over the parts (GB/s = bytes / ns).
  const double t = 2 * both / copy + readOnly / read + writeOnly / write;
  const std::string name = both == 0       ? (readOnly > 0 ? "read" : "write")
                           : readOnly > 0  ? "copy+read"
                           : writeOnly > 0 ? "copy+write"
                                           : "copy";
  return {double(bytesRead + bytesWritten) / t, name, near ? c.nearBufferBytes : c.bufferBytes};
}

void SetUtilisation(Result& r, const Ceilings& c, const DeviceInfo& device) {
  // Within twice the last-level cache a part of the input can stay cached from one run to the
  // next (caches that do not evict in LRU order: pocl's 64 MiB inputs on a 32 MiB L3 ran at up
  // to 162% of the read ceiling); such a case may pass the ceilings.
  r.fitsInCache = device.globalMemCacheBytes > 0 &&
                  r.cost.DistinctBytesRead() <= 2 * device.globalMemCacheBytes;
  if (r.gbytesS <= 0 || !c.Known())
    return;
  // Against the memory ceilings, the bytes that must cross the memory interface: the distinct
  // reads (a read the cache can serve is not DRAM traffic) and the writes.
  const Ceiling ceiling = CeilingFor(c, r.cost.DistinctBytesRead(), r.cost.bytesWritten);
  const auto memoryGBs = [](uint64_t bytes, double ms) {
    return ms > 0 ? double(bytes) / (ms * 1e6) : 0;
  };
  r.ceiling = ceiling.name;
  r.ceilingGBs = ceiling.gbytesS;
  r.ceilingStreamBytes = ceiling.streamBytes;
  r.utilisation = Utilisation(memoryGBs(r.cost.MemoryBytes(), r.timeMs.median), ceiling.gbytesS);
  r.bandwidthUtil = Utilisation(r.gbytesS, c.copyGBs);
  // Past the ceiling, and no cache to explain it (pocl: kernels of a breakdown at
  // 494-510%): a figure to doubt, said so beside it.
  const auto suspect = [&](double util) {
    return !r.fitsInCache && util > kSuspectUtilisation ? UtilisationSuspectReason(device) : "";
  };
  r.utilisationSuspect = suspect(r.utilisation);
  // A kernel's traffic is not split into reads and writes: against the case's own ceiling.
  for (auto& k : r.breakdown.kernels) {
    k.bandwidthUtil = Utilisation(memoryGBs(k.memoryBytes, k.timeMs), ceiling.gbytesS);
    k.utilisationSuspect = suspect(k.bandwidthUtil);
  }
}

std::string UtilisationSuspectReason(const DeviceInfo& device) {
  return device.globalMemCacheBytes > 0
             ? "above 105% of the ceiling: the ceilings were measured in a slow spell or the "
               "traffic model overcounts"
             : "above 105% of the ceiling: the device reports no cache size, so an input its "
               "cache holds is not marked c; else the ceilings were measured in a slow spell or "
               "the traffic model overcounts";
}

namespace {
// VariantSkipped where the host has no room for a case: its host arrays, and on a CPU device
// (pocl) its device buffers, which live in host memory there too. Checked before anything is
// allocated: past it pocl ends the process on an assertion, or the kernel's OOM killer does.
void RequireHostMemory(const MemoryNeeds& need, const DeviceInfo& device) {
  const uint64_t bytes = need.hostBytes + (device.isGpu ? 0 : need.deviceBytes);
  if (bytes == 0)
    return;
  if (const auto why = HostMemoryShortfall(bytes, AvailableHostMemory()))
    throw VariantSkipped(*why + (device.isGpu ? "" : "; a CPU device's buffers are host memory"));
}
}  // namespace

Runner::Runner(TaskContext& ctx, RunSettings settings)
    : ctx_(ctx),
      settings_(settings),
      lock_(std::make_shared<const DeviceLock>(settings.deviceLock)),
      turns_(settings.turnsFd) {}

size_t Runner::FlushBytes(const DeviceInfo& device) {
  return std::max<size_t>(2 * device.globalMemCacheBytes, size_t(128) << 20);
}

void Runner::EnqueueFlush() {
  if (!flushBytes_) {
    flushBytes_ = FlushBytes(ctx_.info);
    flush_ = cl::Buffer(ctx_.context, CL_MEM_READ_WRITE, flushBytes_);
  }
  ctx_.queue.enqueueFillBuffer(flush_, cl_uint(0x5A5A5A5A), 0, flushBytes_);
}

RunBreakdown Runner::RunOnce(const LaunchPlan& plan) {
  RunEvents untimed(settings_.breakdown), events(settings_.breakdown);
  PrepareRun(ctx_, plan, data_, /*poison=*/false, untimed);
  if (settings_.cold)  // after the resets, so that only the run's own accesses are timed
    EnqueueFlush();
  EnqueueRun(ctx_, plan, data_, events);
  ctx_.queue.finish();
  RunBreakdown run = BreakDownRun(events);
  run.untimed = SumCommands(untimed);
  return run;  // the events are released here
}

RunBreakdown Runner::RunOnceHost(const LaunchPlan& plan) {
  RunEvents untimed(/*everyCommand=*/false), events(/*everyCommand=*/false);
  PrepareRun(ctx_, plan, data_, /*poison=*/false, untimed);
  if (settings_.cold)
    EnqueueFlush();
  ctx_.queue.finish();  // the resets and the flush done: the clock sees the run alone
  const auto begin = std::chrono::steady_clock::now();
  EnqueueRun(ctx_, plan, data_, events);
  ctx_.queue.finish();
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now() - begin);
  RunBreakdown run;
  run.spanNs = uint64_t(std::max<int64_t>(1, ns.count()));
  return run;
}

Result NewResult(const Case& c, const DeviceInfo& device) {
  const IComputeTask& task = *c.task;
  const ProblemSpec& spec = c.spec;
  Result r;
  r.task = task.Name();
  r.variant = c.variant;
  r.type = spec.type;
  r.op = spec.op;
  r.n = spec.n;
  r.height = spec.height;
  r.localSize = spec.localSize;
  r.codePath = task.CodePathOf(device, spec);
  r.portable = spec.portable;
  r.lookbackFallback = spec.lookbackFallback;
  r.tuning = c.tuning;
  r.settings = spec.settings;
  RecordParams(task.Parameters(), spec.params, r.fields, r.params);
  return r;
}

void Runner::UseInput(const IComputeTask& task, const ProblemSpec& spec, uint64_t seed) {
  // A given input (spec.input, the tests' worked examples) is the same whatever the seed.
  const uint64_t key = spec.input ? spec.seed : seed;
  if (inputSeed_ == key)
    return;
  inputSeed_.reset();
  ProblemSpec s = spec;
  s.seed = key;
  MakeInput(ctx_, task, s, data_);
  inputSeed_ = key;
}

void Runner::Recover(Result& r) {
  inputSeed_.reset();
  flush_ = cl::Buffer();
  flushBytes_ = 0;
  data_.Release();
  if (endJobAfterError_) {
    endedEarly_ = true;
    return;
  }
  if (lastCase_)  // no case left for a new context (NVIDIA refuses one for seconds after a fault)
    return;
  try {
    ctx_.Recreate();
  } catch (const cl::Error& e) {
    contextLost_ = fmt::format("{} in {}", ClErrorName(e.err()), e.what());
    r.message += "; afterwards the device gave no new context (" + contextLost_ + ")";
  }
}

// The validated runs: poisoned output and scratch, every element checked; run k scans the input
// of seed + k, so a value left over from an earlier run is wrong in this one. False (and r
// failed) on the first wrong run.
bool Runner::ValidateRuns(const Case& c, Result& r) {
  const ProblemSpec& spec = c.spec;
  const auto shared = lock_->Shared();  // no other process times while these run
  for (size_t run = 0; run < std::max<size_t>(1, settings_.validateRuns); ++run) {
    UseInput(*c.task, spec, spec.seed + run);
    RunEvents untimed(settings_.breakdown), events(/*everyCommand=*/false);
    PrepareRun(ctx_, c.plan, data_, /*poison=*/true, untimed);
    EnqueueRun(ctx_, c.plan, data_, events);
    ctx_.queue.finish();
    if (run == 0 && settings_.timed)  // what a validated run costs beyond a timed one: poison
      r.breakdown.untimed = Untimed(SumCommands(untimed), "validation");
    r.launchesEnqueued = events.Count();
    const Validation v = ValidateRun(ctx_, *c.task, c.variant, c.plan, data_);
    ++r.validatedRuns;
    if (!v.passed) {
      r.status = Status::Failed;
      r.message = run ? fmt::format("{} (validated run {})", v.message, run + 1) : v.message;
      return false;
    }
  }
  return true;
}

// Warm-up and timed runs, then the last timed run's output is validated too: a variant that goes
// wrong under repetition fails instead of being timed.
void Runner::TimeVariant(const Case& c, Result& r) {
  std::vector<RunBreakdown> runs;  // warm-up runs first
  std::vector<double> samples;
  const std::string clock = ceilings_.timer.Clock();
  const bool host = clock == "host";
  {
    const auto alone = lock_->Alone();  // no other process's kernels or transfers meanwhile
    samples = TimeRepeatedly(settings_, [&] {
      turns_.Take();  // in turns: this run and the other process's alternate
      runs.push_back(host ? RunOnceHost(c.plan) : RunOnce(c.plan));
      return runs.back().SpanMs();
    });
  }
  runs.erase(runs.begin(), runs.end() - std::ptrdiff_t(samples.size()));
  const Validation v = ValidateRun(ctx_, *c.task, c.variant, c.plan, data_);
  if (!v.passed) {
    r.status = Status::Failed;
    r.message =
        fmt::format("wrong after {} timed runs: {}", settings_.warmup + samples.size(), v.message);
    return;
  }
  ++r.validatedRuns;
  r.iterations = samples.size();
  r.timeMs = Summarise(samples);
  r.samplesMs = {samples};
  r.ciTarget = settings_.ciTarget;
  r.ciMet = CiWithin(r.timeMs, settings_.ciTarget > 0 ? settings_.ciTarget : 0.01);
  r.cold = settings_.cold;
  if (r.timeMs.median > 0) {
    r.gelemS = double(c.spec.n) / (r.timeMs.median * 1e6);
    r.gbytesS = double(r.cost.BytesMoved()) / (r.timeMs.median * 1e6);
  }
  r.timer = clock;
  r.timerResolutionNs = ClockResolutionNs(clock, ctx_.info.profilingResolutionNs);
  std::vector<UntimedTime> validation = std::move(r.breakdown.untimed);
  r.breakdown = host ? Breakdown() : SummariseBreakdown(runs);  // host: no event is trusted
  if (!host)
    r.breakdown.untimed.insert(r.breakdown.untimed.end(), validation.begin(), validation.end());
  if (!host && settings_.keepRuns)
    r.timedRuns = std::move(runs);
  SetUtilisation(r, ceilings_, ctx_.info);
}

namespace {

// The breakdown of r's and next's timed runs together (the first validated run's commands kept);
// without either's runs, none: round 1's alone would not add up to the median of all rounds.
void JoinBreakdown(Result& r, const Result& next) {
  if (r.breakdown.Empty())
    return;
  if (r.timedRuns.empty() || next.timedRuns.empty()) {
    r.breakdown = Breakdown();
    r.timedRuns.clear();
    return;
  }
  r.timedRuns.insert(r.timedRuns.end(), next.timedRuns.begin(), next.timedRuns.end());
  std::vector<UntimedTime> validation;
  for (const auto& u : r.breakdown.untimed)
    if (u.phase == "validation")
      validation.push_back(u);
  r.breakdown = SummariseBreakdown(r.timedRuns);
  r.breakdown.untimed.insert(r.breakdown.untimed.end(), validation.begin(), validation.end());
}

}  // namespace

void AddRound(Result& r, const Result& next, const Ceilings& c, const DeviceInfo& device) {
  if (r.status != Status::Passed)  // the first round that did not pass decides
    return;
  if (next.status != Status::Passed) {
    r.status = next.status;
    r.message = fmt::format("round {}: {}", r.samplesMs.size() + 1, next.message);
    return;
  }
  r.validatedRuns += next.validatedRuns;
  if (r.samplesMs.empty() || next.samplesMs.empty())  // not timed
    return;
  r.samplesMs.push_back(next.samplesMs.front());
  JoinBreakdown(r, next);
  std::vector<double> all, medians;
  for (const auto& round : r.samplesMs) {
    all.insert(all.end(), round.begin(), round.end());
    medians.push_back(Summarise(round).median);
  }
  r.iterations = all.size();
  r.timeMs = Summarise(all);
  r.roundsMs = Summarise(medians);
  r.ciMet = CiWithin(r.timeMs, r.ciTarget > 0 ? r.ciTarget : 0.01);
  if (r.timeMs.median > 0) {
    r.gelemS = double(r.n) / (r.timeMs.median * 1e6);
    r.gbytesS = double(r.cost.BytesMoved()) / (r.timeMs.median * 1e6);
  }
  SetUtilisation(r, c, device);
}

std::string BuildKey(const Result& r) {
  return r.task + "\n" + r.kernelOptions;
}

Result Runner::RunVariant(const IComputeTask& task, const std::string& variant,
                          const ProblemSpec& spec) {
  const Case c = ResolveCase(task, variant, spec, ctx_.info);
  Result r = NewResult(c, ctx_.info);
  if (!contextLost_.empty()) {
    r.status = Status::Error;
    r.message =
        "not run: after an earlier case's error the device gave this process no new OpenCL "
        "context (" +
        contextLost_ + "); with --isolate a fresh worker process goes on";
    return r;
  }
  try {
    r.cost = c.cost;
    r.kernelOptions = c.kernelOptions;
    if (!c.Runs())
      throw VariantSkipped(c.skip);
    if (knownBuildFailures_.count(BuildKey(r))) {
      r.status = Status::Error;
      r.message = kKnownBuildFailure;
      return r;
    }
    if (!inputSeed_)  // the problem is not made yet: the host must have room for it
      RequireHostMemory(c.memory, ctx_.info);
    data_.StartCase();
    if (!ValidateRuns(c, r))
      return r;
    r.status = Status::Passed;
    if (settings_.timed && ceilings_.timer.Clock().empty()) {  // validated, and that is all
      r.status = Status::Untimed;
      r.message = "validated; not timed: " + TimerUnusable(ctx_.info.name, ceilings_.timer);
      r.breakdown = Breakdown();
    } else if (settings_.timed) {
      TimeVariant(c, r);
    }
  } catch (const VariantSkipped& e) {
    r.status = Status::Skipped;
    r.message = e.what();
  } catch (const KernelBuildError& e) {  // the context is still fine
    r.status = Status::Error;
    r.message = e.what();
    r.buildLog = e.Log();
  } catch (const DeviceError& e) {
    r.status = Status::Error;
    r.message = e.what();
  } catch (const cl::Error& e) {
    r.status = Status::Error;
    r.message = fmt::format("OpenCL error {} in {}", ClErrorName(e.err()), e.what());
    Recover(r);
  } catch (const std::bad_alloc&) {
    r.status = Status::Error;
    r.message = "out of host memory";
    Recover(r);
  }
  if (r.status == Status::Error && r.validatedRuns)
    r.message += fmt::format(" (after {} validated runs)", r.validatedRuns);
  return r;
}

std::vector<Result> Runner::RunJob(const Job& job, size_t skip, const ProgressFn& progress,
                                   size_t& index, size_t total) {
  std::vector<Result> results;
  inputSeed_.reset();
  for (size_t i = skip; i < job.variants.size(); ++i) {
    if (stop_ && stop_())
      break;
    Progress p{++index, total, &job, job.variants[i], nullptr};
    lastCase_ = total > 0 && index == total;
    if (progress)
      progress(p);
    results.push_back(RunVariant(*job.task, job.variants[i], job.SpecFor(job.variants[i])));
    p.result = &results.back();
    if (progress)
      progress(p);
    if (endedEarly_)
      break;
  }
  data_.Release();
  inputSeed_.reset();
  return results;
}

std::vector<Result> Runner::Run(const std::vector<Job>& jobs, const ProgressFn& progress) {
  size_t total = 0, index = 0;
  for (const auto& j : jobs)
    total += j.variants.size();
  std::vector<Result> results;
  for (const auto& job : jobs) {
    if (stop_ && stop_())
      break;
    for (auto& r : RunJob(job, 0, progress, index, total))
      results.push_back(std::move(r));
  }
  return results;
}

}  // namespace rsb
