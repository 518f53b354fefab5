#include "Runner.h"

#include "Errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace rsb {

std::string ToString(Status s) {
  switch (s) {
    case Status::Passed:
      return "passed";
    case Status::Failed:
      return "failed";
    case Status::Skipped:
    default:
      return "skipped";
  }
}

TimeStats Summarise(std::vector<double> t) {
  TimeStats s;
  if (t.empty())
    return s;
  std::sort(t.begin(), t.end());
  const size_t k = t.size();
  s.median = k % 2 ? t[k / 2] : 0.5 * (t[k / 2 - 1] + t[k / 2]);
  s.min = t.front();
  s.max = t.back();
  s.mean = std::accumulate(t.begin(), t.end(), 0.0) / double(k);
  double var = 0;
  for (double x : t)
    var += (x - s.mean) * (x - s.mean);
  s.stddev = k > 1 ? std::sqrt(var / double(k - 1)) : 0.0;
  return s;
}

Runner::Runner(cl::Context context, cl::Device device, ProgramCache& programs, RunSettings settings)
    : context_(std::move(context)),
      device_(std::move(device)),
      queue_(context_, device_, CL_QUEUE_PROFILING_ENABLE),
      programs_(programs),
      settings_(settings),
      info_(DescribeDevice(device_)) {}

void Runner::MeasureCopyBandwidth() {
  if (!settings_.measureCopyBandwidth)
    return;
  // 64 MiB per buffer or what the device allows: large enough to leave every cache.
  size_t bytes = size_t(64) << 20;
  bytes = std::min<size_t>(bytes, info_.maxAllocBytes / 2);
  bytes -= bytes % 16;
  const cl_uint n4 = static_cast<cl_uint>(bytes / 16);
  cl::Buffer in(context_, CL_MEM_READ_ONLY, bytes), out(context_, CL_MEM_WRITE_ONLY, bytes);
  queue_.enqueueFillBuffer(in, cl_uint(0x9E3779B9u), 0, bytes);
  cl::Kernel copy(programs_.Get("Bandwidth.cl", ""), "Copy4");
  copy.setArg(0, in);
  copy.setArg(1, out);
  copy.setArg(2, n4);
  const size_t local = std::min<size_t>(256, info_.maxWorkGroupSize);
  std::vector<double> samples;
  for (int i = 0; i < 23; ++i) {
    cl::Event e;
    queue_.enqueueNDRangeKernel(copy, cl::NullRange, cl::NDRange((n4 + local - 1) / local * local),
                                cl::NDRange(local), nullptr, &e);
    e.wait();
    if (i < 3)
      continue;  // warm-up
    samples.push_back(1e-6 * double(e.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                    e.getProfilingInfo<CL_PROFILING_COMMAND_START>()));
  }
  const double ms = Summarise(samples).median;
  copyGBs_ = ms > 0 ? 2.0 * double(bytes) / (ms * 1e6) : 0.0;
}

double Runner::RunOnceMs(IComputeTask& task, const std::string& variant, const ProblemSpec& spec,
                         size_t* commands) {
  task.PrepareRun(queue_, variant, spec, /*poison=*/false);
  RunEvents events;
  task.ComputeGPU(queue_, variant, spec, events);
  queue_.finish();
  if (commands)
    *commands = events.Count();
  if (events.Count() == 0)
    return 0.0;
  const cl_ulong start = events.First().getProfilingInfo<CL_PROFILING_COMMAND_START>();
  const cl_ulong end = events.Last().getProfilingInfo<CL_PROFILING_COMMAND_END>();
  return end > start ? 1e-6 * double(end - start) : 0.0;
}

namespace {
Result NewResult(const IComputeTask& task, const std::string& variant, const ProblemSpec& spec) {
  Result r;
  r.task = task.Name();
  r.variant = variant;
  r.description = task.Describe(variant);
  r.type = spec.type;
  r.op = spec.op;
  r.scanKind = spec.scanKind;
  r.n = spec.n;
  return r;
}
}  // namespace

Result Runner::RunVariant(IComputeTask& task, const std::string& variant, ProblemSpec spec) {
  Result r = NewResult(task, variant, spec);
  try {
    spec.localSize = task.LocalSize(variant, spec, info_);
    r.localSize = spec.localSize;
    if (spec.localSize > info_.maxWorkGroupSize)
      throw VariantSkipped(
          fmt::format("local size {} exceeds the device's maximum work-group "
                      "size {}",
                      spec.localSize, info_.maxWorkGroupSize));
    r.cost = task.Cost(variant, spec);

    // The validated runs: poisoned output, every element checked.
    for (size_t run = 0; run < std::max<size_t>(1, settings_.validateRuns); ++run) {
      task.PrepareRun(queue_, variant, spec, /*poison=*/true);
      RunEvents events;
      task.ComputeGPU(queue_, variant, spec, events);
      queue_.finish();
      r.launchesCounted = events.Count();
      const Validation v = task.ValidateResults(queue_, variant, spec);
      ++r.validatedRuns;
      if (!v.passed) {
        r.status = Status::Failed;
        r.message = run ? fmt::format("{} (validated run {})", v.message, run + 1) : v.message;
        return r;
      }
    }

    r.status = Status::Passed;
    if (!settings_.timed)
      return r;

    for (size_t i = 0; i < settings_.warmup; ++i)
      RunOnceMs(task, variant, spec, nullptr);

    std::vector<double> samples;
    const auto begin = std::chrono::steady_clock::now();
    while (samples.size() < settings_.maxIterations) {
      samples.push_back(RunOnceMs(task, variant, spec, nullptr));
      const double spent =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      if (samples.size() >= settings_.minIterations && spent >= settings_.timeBudgetS)
        break;
    }
    r.iterations = samples.size();
    r.timeMs = Summarise(samples);
    if (r.timeMs.median > 0) {
      r.gelemS = double(spec.n) / (r.timeMs.median * 1e6);
      r.gbytesS = double(r.cost.bytesMoved) / (r.timeMs.median * 1e6);
      if (copyGBs_ > 0)
        r.bandwidthUtil = r.gbytesS / copyGBs_;
    }
  } catch (const VariantSkipped& e) {
    r.status = Status::Skipped;
    r.message = e.what();
  }
  return r;
}

std::vector<Result> Runner::Run(const std::vector<Job>& jobs, const ProgressFn& progress) {
  size_t total = 0, index = 0;
  for (const auto& j : jobs)
    total += j.variants.size();
  std::vector<Result> results;
  for (const auto& job : jobs) {
    IComputeTask& task = *job.task;
    std::optional<std::string> skipAll;
    try {
      task.InitResources(job.spec, programs_, queue_);
      task.ComputeCPU();
    } catch (const VariantSkipped& e) {
      skipAll = e.what();
    }
    for (const auto& variant : job.variants) {
      Progress p{++index, total, &job, variant, nullptr};
      if (progress)
        progress(p);
      Result r;
      if (skipAll) {
        r = NewResult(task, variant, job.spec);
        r.message = *skipAll;
      } else {
        r = RunVariant(task, variant, job.spec);
      }
      results.push_back(r);
      p.result = &results.back();
      if (progress)
        progress(p);
    }
    task.ReleaseResources();
  }
  return results;
}

}  // namespace rsb
