#include "engine/RunData.h"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>
#include <variant>

namespace rsb {

namespace {

cl::Buffer& BufferOf(RunData& data, size_t id) {
  if (id == kInputBuffer)
    return data.inputBuffer;
  if (id == kOutputBuffer)
    return data.outputBuffer;
  if (id >= kFirstConstInput)
    return data.constBuffers.at(id - kFirstConstInput);
  return data.scratch.at(id - kFirstScratch).Get();
}

void SetArg(cl::Kernel& k, cl_uint i, const KernelArg& arg, const LaunchStep& s,
            const LaunchPlan& plan, RunData& data) {
  std::visit(
      [&](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, BufferArg>) {
          k.setArg(i, BufferOf(data, a.id));
        } else if constexpr (std::is_same_v<A, IndexArg>) {
          if (plan.index64)
            k.setArg(i, cl_ulong(a.value));
          else if (a.value <= std::numeric_limits<cl_uint>::max())
            k.setArg(i, cl_uint(a.value));
          else  // a plan bug: Index64 keeps every 32-bit plan's indices below 2^32
            throw std::logic_error(
                fmt::format("{} argument {} = {} needs 64-bit indices", s.kernel, i, a.value));
        } else if constexpr (std::is_same_v<A, RunArg>) {
          k.setArg(i, cl_uint(a.which == RunArg::kRunNumber ? data.runs + 1 : data.groups));
        } else {
          k.setArg(i, a);
        }
      },
      arg);
}

// The work-groups of the step's launch where it takes a RunArg (what the next run's
// kGroupsBefore counts); else 0.
uint64_t CountedGroups(const LaunchStep& s) {
  for (const KernelArg& a : s.args)
    if (std::holds_alternative<RunArg>(a))
      return s.globalSize / s.localSize;
  return 0;
}

void Enqueue(TaskContext& ctx, const LaunchPlan& plan, const std::vector<LaunchStep>& steps,
             RunData& data, RunEvents* events) {
  for (const LaunchStep& s : steps) {
    cl::Event* event = events ? events->Next(s.Name(), s.cost) : nullptr;
    if (s.kernel.empty()) {
      const cl::Buffer& b = BufferOf(data, s.fillBuffer);
      const cl_int err =
          clEnqueueFillBuffer(ctx.queue(), b(), s.pattern.data(), s.pattern.size(), 0, s.fillBytes,
                              0, nullptr, event ? &(*event)() : nullptr);
      if (err != CL_SUCCESS)
        throw cl::Error(err, "clEnqueueFillBuffer");
      continue;
    }
    cl::Kernel& k =
        ctx.kernels.Get(ctx.programs, plan.file, plan.BuildOptions(), s.kernel, s.localSize);
    for (size_t i = 0; i < s.args.size(); ++i)
      SetArg(k, cl_uint(i), s.args[i], s, plan, data);
    ctx.queue.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(s.globalSize),
                                   cl::NDRange(s.localSize), nullptr, event);
  }
}

bool Fills(const std::vector<LaunchStep>& steps, size_t buffer) {
  for (const LaunchStep& s : steps)
    if (s.kernel.empty() && s.fillBuffer == buffer)
      return true;
  return false;
}

// Scratch buffer i's poison (LaunchPlan::poison): the plan's, else the poison byte unless a
// prepare or reset step fills it.
std::vector<unsigned char> PoisonOf(const LaunchPlan& plan, size_t i, uint64_t runs) {
  if (i < plan.poison.size()) {
    const ScratchPoison& p = plan.poison[i];
    if (p.runShift < 0 || p.pattern.size() != sizeof(cl_ulong))
      return p.pattern;
    cl_ulong word = 0;
    std::copy(p.pattern.begin(), p.pattern.end(), reinterpret_cast<unsigned char*>(&word));
    word |= cl_ulong(runs) << p.runShift;
    const auto* w = reinterpret_cast<const unsigned char*>(&word);
    return std::vector<unsigned char>(w, w + sizeof word);
  }
  if (Fills(plan.prepare, kFirstScratch + i) || Fills(plan.resets, kFirstScratch + i))
    return {};
  return std::vector<unsigned char>(4, kPoisonByte);
}

void PoisonScratch(TaskContext& ctx, const LaunchPlan& plan, RunData& data, RunEvents& untimed) {
  for (size_t i = 0; i < plan.scratchBytes.size(); ++i) {
    const std::vector<unsigned char> pattern = PoisonOf(plan, i, data.runs);
    const size_t bytes =
        plan.scratchBytes[i] - plan.scratchBytes[i] % std::max<size_t>(1, pattern.size());
    if (!pattern.empty())
      FillPattern(ctx.queue, data.scratch[i].Get(), pattern, bytes,
                  [&] { return untimed.Next("Poison scratch"); });
  }
}

void AllocateBuffers(TaskContext& ctx, const LaunchPlan& plan, RunData& data) {
  const size_t outputBytes = plan.outputElements * SizeOf(data.problem.type);
  if (data.outputBytes != outputBytes) {
    data.outputBuffer =
        cl::Buffer(ctx.context, CL_MEM_READ_WRITE, std::max<size_t>(outputBytes, 1));
    data.outputBytes = outputBytes;
  }
  if (data.scratch.size() < plan.scratchBytes.size())
    data.scratch.resize(plan.scratchBytes.size());
  for (size_t i = 0; i < plan.scratchBytes.size(); ++i)  // PlanFor checked each
    data.scratch[i].Ensure(ctx.context, plan.scratchBytes[i]);
}

}  // namespace

void MakeInput(TaskContext& ctx, const IComputeTask& task, const ProblemSpec& spec, RunData& data) {
  data.problem = spec;
  data.expected.clear();
  data.input = spec.input ? *spec.input : HostArray();
  data.inputBuffer = UploadInput(spec, ctx.info, ctx.context, ctx.queue, data.input);
  data.constBuffers.clear();
  for (const HostArray& a : task.ConstInputs(spec)) {
    data.constBuffers.emplace_back(ctx.context, CL_MEM_READ_ONLY, std::max<size_t>(a.Bytes(), 16));
    ctx.queue.enqueueWriteBuffer(data.constBuffers.back(), CL_TRUE, 0, a.Bytes(), a.Data());
  }
}

void PrepareRun(TaskContext& ctx, const LaunchPlan& plan, RunData& data, bool poison,
                RunEvents& untimed) {
  AllocateBuffers(ctx, plan, data);
  // Every kernel of the run is built and checked against the device's limits before anything
  // is enqueued, so that a variant that cannot run here is skipped before it starts.
  for (const LaunchStep& s : plan.steps)
    if (!s.kernel.empty())
      ctx.kernels.Get(ctx.programs, plan.file, plan.BuildOptions(), s.kernel, s.localSize);
  if (data.resetDue || (plan.resetEvery && data.runs >= plan.resetEvery)) {
    Enqueue(ctx, plan, plan.resets, data, &untimed);
    data.runs = data.groups = 0;
    data.resetDue = false;
  }
  Enqueue(ctx, plan, plan.prepare, data, &untimed);
  if (poison) {
    PoisonScratch(ctx, plan, data, untimed);
    Poison(ctx.queue, data.outputBuffer, data.problem.type, plan.outputElements, &untimed);
  }
}

void EnqueueRun(TaskContext& ctx, const LaunchPlan& plan, RunData& data, RunEvents& events) {
  Enqueue(ctx, plan, plan.steps, data, &events);
  for (const LaunchStep& s : plan.steps)
    data.groups += CountedGroups(s);
  ++data.runs;
}

// An output left as poisoned where no step of the plan writes it: the host code's plan, not a
// kernel, is at fault; said so (--explain lists the plan's launches).
Validation ValidateRun(TaskContext& ctx, const IComputeTask& task, const std::string& variant,
                       const LaunchPlan& plan, RunData& data) {
  const std::string key = task.ReferenceKey(variant);
  auto it = data.expected.find(key);
  if (it == data.expected.end())
    it = data.expected.emplace(key, task.KeyedReference(data.input, data.problem, key)).first;
  Validation v = ReadBackAndCompare(ctx.queue, data.outputBuffer, plan.outputElements, variant,
                                    it->second, data.input);
  if (v.passed || !v.neverWritten)
    return v;
  if (!StepsTouch(plan, kOutputBuffer))
    v.message += fmt::format(
        "; no launch of the plan writes the output (its {} command(s) write only scratch "
        "buffers): the host code's plan stops short, not a kernel; `--explain --task {} "
        "--variant {}` lists its launches",
        plan.steps.size(), task.Name(), variant);
  return v;
}

}  // namespace rsb
