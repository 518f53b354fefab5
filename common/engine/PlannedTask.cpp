#include "engine/PlannedTask.h"

#include "platform/Errors.h"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>
#include <tuple>
#include <variant>

namespace rsb {

namespace {
// Knobs of every planned task.
const std::vector<TuningKnob> kSharedKnobs = {
    {"index-bits",
     "kernel indices at least this wide: 32 (64-bit only where n > 2^31) or 64 (always: tests "
     "the 64-bit path at any n; slower)",
     32, 32, 64, 32},
};
// "47616 bytes (46.5 KiB)"
std::string LocalBytesText(unsigned long long bytes) {
  return fmt::format("{} bytes ({:.1f} KiB)", bytes, double(bytes) / 1024);
}
}  // namespace

LocalTile FixedTile(const DeviceInfo& device, const std::string& variant, const ProblemSpec& spec,
                    unsigned long long bytes) {
  LocalTile t;
  t.variant = variant;
  t.localSize = spec.localSize;
  t.bytes = bytes;
  t.fits = bytes == 0 || FitsLocalMemory(device, bytes);
  return t;
}

LocalTile FitTile(const DeviceInfo& device, const std::vector<TuningKnob>& knobs,
                  const std::string& variant, const ProblemSpec& spec, const std::string& knob,
                  const std::function<unsigned long long(size_t)>& bytesAt) {
  const auto k = std::find_if(knobs.begin(), knobs.end(),
                              [&](const TuningKnob& kn) { return kn.name == knob; });
  if (k == knobs.end())
    throw std::logic_error("no tuning knob " + knob);
  LocalTile t = FixedTile(device, variant, spec, bytesAt(Tuned(knobs, spec, knob)));
  t.knob = knob;
  t.value = Tuned(knobs, spec, knob);
  t.given = spec.tuning.count(knob) > 0;
  // From the default down in steps of the knob's multiple: the first that fits, else the
  // smallest (what even that needs is the skip's reason).
  for (size_t v = t.value; !t.given && !t.fits && v >= k->min + k->multipleOf;) {
    v -= k->multipleOf;
    t.value = v;
    t.bytes = bytesAt(v);
    t.fits = FitsLocalMemory(device, t.bytes);
  }
  return t;
}

std::string LocalMemorySkip(const DeviceInfo& device, const LocalTile& t) {
  const unsigned long long needed = LocalMemNeeded(device, t.bytes);
  const std::string counted =
      needed == t.bytes
          ? std::string()
          : fmt::format(" (the driver counts {} x the {} its arrays declare{})",
                        device.localMemScale, LocalBytesText(t.bytes),
                        device.localMemOverhead ? fmt::format(" + {}", device.localMemOverhead)
                                                : std::string());
  const std::string knob = t.knob.empty() ? std::string() : fmt::format(", {}={}", t.knob, t.value);
  std::string advice;
  if (!t.knob.empty() && !t.given)
    advice = fmt::format("; {} is at its smallest", t.knob);
  if (t.localSize > 1)
    advice += ": use a smaller --local-size";
  if (t.given)
    advice +=
        fmt::format("{} --tune {}", t.localSize > 1 ? " or a smaller" : ": use a smaller", t.knob);
  return fmt::format(
      "{} at local size {}{} needs {} of local memory{}; the device has {} "
      "(CL_DEVICE_LOCAL_MEM_SIZE){}",
      t.variant, t.localSize, knob, LocalBytesText(needed), counted,
      LocalBytesText(device.localMemBytes), advice);
}

std::map<std::string, size_t> PlannedTask::Tuning(const DeviceInfo& device,
                                                  const std::string& variant,
                                                  const ProblemSpec& spec) const {
  std::map<std::string, size_t> values = IComputeTask::Tuning(device, variant, spec);
  if (spec.localSize == 0)  // not resolved (no device yet): the defaults and --tune's
    return values;
  const LocalTile tile = Tile(device, variant, spec);
  if (!tile.knob.empty())
    values[tile.knob] = tile.value;
  for (const auto& [knob, value] : tile.chosen)
    values[knob] = value;
  return values;
}

bool PlannedTask::Index64(const ProblemSpec& spec) {
  return spec.n > kMaxElements32BitIndex || Tuned(kSharedKnobs, spec, "index-bits") == 64;
}

std::vector<TuningKnob> PlannedTask::WithSharedKnobs(std::vector<TuningKnob> knobs) {
  knobs.insert(knobs.end(), kSharedKnobs.begin(), kSharedKnobs.end());
  return knobs;
}

namespace {

// Everything a plan is made from: what the device reports (every field a plan or its checks
// read), the variant and every field of the problem but its seed and input (a plan sizes and
// launches; it never reads the data), and the task's PlanState(). Compared field by field: no
// allocation on a timed run's way to its plan.
template <class Case>
bool SameCase(const Case& c, const DeviceInfo& d, const std::string& variant, const ProblemSpec& s,
              const std::string& state) {
  const auto device = [](const DeviceInfo& x) {
    return std::tie(x.maxWorkGroupSize, x.localMemBytes, x.localMemScale, x.localMemOverhead,
                    x.globalMemBytes, x.maxAllocBytes, x.globalMemCacheBytes, x.computeUnits,
                    x.isGpu, x.fp64, x.int64BaseAtomics, x.int64ExtendedAtomics, x.nvWarpSize,
                    x.platform, x.name, x.driverVersion, x.extensions);
  };
  const auto problem = [](const ProblemSpec& x) {
    return std::tie(x.n, x.height, x.localSize, x.type, x.op, x.codePath, x.portable,
                    x.lookbackFallback, x.tuning, x.params);
  };
  return problem(c.spec) == problem(s) && c.variant == variant && c.state == state &&
         device(c.device) == device(d);
}

}  // namespace

const LaunchPlan& PlannedTask::PlanFor(const DeviceInfo& device, const std::string& variant,
                                       const ProblemSpec& spec) const {
  std::string state = PlanState();
  if (planCase_ && SameCase(*planCase_, device, variant, spec, state))
    return plan_;
  planCase_.reset();
  plan_ = Plan(device, variant, spec);
  LaunchPlan& plan = plan_;
  CountCacheServedReads(plan, device.globalMemCacheBytes);
  plan.index64 = Index64(spec);
  const uint64_t size = SizeOf(spec.type);
  const uint64_t input = uint64_t(spec.n) * size, output = OutputElements(spec) * size;
  RequireAllocation(device, input,
                    fmt::format("the input (n = {} {})", spec.n, ToString(spec.type)));
  RequireAllocation(device, output, "the output");
  uint64_t scratch = 0;
  for (size_t bytes : plan.scratchBytes) {
    RequireAllocation(device, bytes, variant + "'s scratch buffer");
    scratch += bytes;
  }
  if (input + output + scratch > device.globalMemBytes)
    throw VariantSkipped(fmt::format(
        "{} needs {} of device memory in all (input {}, output {}, scratch {}); the device has "
        "{} (CL_DEVICE_GLOBAL_MEM_SIZE)",
        variant, BytesText(input + output + scratch), BytesShort(input), BytesShort(output),
        BytesShort(scratch), BytesText(device.globalMemBytes)));
  PlanCase made{device, variant, std::move(state), spec};
  made.spec.input.reset();  // a plan never reads the data: the case does not keep it
  planCase_ = std::move(made);
  return plan;
}

bool PlannedTask::GpuPath(const DeviceInfo& device, const ProblemSpec& spec) {
  return spec.codePath == CodePath::Gpu || (spec.codePath == CodePath::Auto && device.isGpu);
}

std::string PlannedTask::CodePathOf(const DeviceInfo& device, const ProblemSpec& spec) const {
  return GpuPath(device, spec) ? "gpu" : "cpu";
}

void PlannedTask::InitResources(TaskContext& ctx, const ProblemSpec& spec) {
  problem_ = spec;
  input_ = spec.input ? *spec.input : HostArray();
  input_d_ = UploadInput(spec, ctx.info, ctx.context, ctx.queue, input_);
  const size_t bytes = OutputElements(spec) * SizeOf(spec.type);
  RequireAllocation(ctx.info, bytes, "the output");
  output_d_ = cl::Buffer(ctx.context, CL_MEM_READ_WRITE, bytes);
  const_d_.clear();
  for (const HostArray& a : ConstInputs(spec)) {
    const_d_.emplace_back(ctx.context, CL_MEM_READ_ONLY, std::max<size_t>(a.Bytes(), 16));
    ctx.queue.enqueueWriteBuffer(const_d_.back(), CL_TRUE, 0, a.Bytes(), a.Data());
  }
}

void PlannedTask::ComputeCPU() {
  // Each reference (one per ReferenceKey) is computed when a variant is first validated.
  expected_.clear();
}

const Expected& PlannedTask::ExpectedFor(const std::string& variant) {
  const std::string key = ReferenceKey(variant);
  auto it = expected_.find(key);
  if (it == expected_.end())
    it = expected_.emplace(key, KeyedReference(input_, problem_, key)).first;
  return it->second;
}

void PlannedTask::ReleaseResources() {
  input_d_ = cl::Buffer();
  output_d_ = cl::Buffer();
  const_d_.clear();
  scratch_.clear();
  input_ = HostArray();
  expected_.clear();
}

cl::Buffer& PlannedTask::Buffer(size_t id) {
  if (id == kInputBuffer)
    return input_d_;
  if (id == kOutputBuffer)
    return output_d_;
  if (id >= kFirstConstInput)
    return const_d_.at(id - kFirstConstInput);
  return scratch_.at(id - kFirstScratch).Get();
}

void PlannedTask::Enqueue(TaskContext& ctx, const LaunchPlan& plan,
                          const std::vector<LaunchStep>& steps, RunEvents* events) {
  for (const LaunchStep& s : steps) {
    cl::Event* event = events ? events->Next(s.Name(), s.cost) : nullptr;
    if (s.kernel.empty()) {
      const cl::Buffer& b = Buffer(s.fillBuffer);
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
      std::visit(
          [&](const auto& a) {
            using A = std::decay_t<decltype(a)>;
            if constexpr (std::is_same_v<A, BufferArg>) {
              k.setArg(cl_uint(i), Buffer(a.id));
            } else if constexpr (std::is_same_v<A, IndexArg>) {
              if (plan.index64)
                k.setArg(cl_uint(i), cl_ulong(a.value));
              else if (a.value <= std::numeric_limits<cl_uint>::max())
                k.setArg(cl_uint(i), cl_uint(a.value));
              else  // a plan bug: Index64 keeps every 32-bit plan's indices below 2^32
                throw std::logic_error(
                    fmt::format("{} argument {} = {} needs 64-bit indices", s.kernel, i, a.value));
            } else {
              k.setArg(cl_uint(i), a);
            }
          },
          s.args[i]);
    ctx.queue.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(s.globalSize),
                                   cl::NDRange(s.localSize), nullptr, event);
  }
}

void PlannedTask::PrepareRun(TaskContext& ctx, const std::string& variant, const ProblemSpec& spec,
                             bool poison, RunEvents& untimed) {
  const LaunchPlan& plan = PlanFor(ctx.info, variant, spec);
  if (scratch_.size() < plan.scratchBytes.size())
    scratch_.resize(plan.scratchBytes.size());
  for (size_t i = 0; i < plan.scratchBytes.size(); ++i) {
    RequireAllocation(ctx.info, plan.scratchBytes[i], variant + "'s scratch buffer");
    scratch_[i].Ensure(ctx.context, plan.scratchBytes[i]);
  }
  // Every kernel of the run is built and checked against the device's limits before anything
  // is enqueued, so that a variant that cannot run here is skipped before it starts.
  for (const LaunchStep& s : plan.steps)
    if (!s.kernel.empty())
      ctx.kernels.Get(ctx.programs, plan.file, plan.BuildOptions(), s.kernel, s.localSize);
  Enqueue(ctx, plan, plan.prepare, &untimed);
  Prepared(plan, variant);
  if (poison) {
    PoisonScratch(ctx, plan, variant, untimed);
    Poison(ctx.queue, output_d_, spec.type, OutputElements(spec), &untimed);
  }
}

std::vector<unsigned char> PlannedTask::ScratchPoison(const LaunchPlan& plan,
                                                      const std::string& /*variant*/,
                                                      size_t index) const {
  for (const LaunchStep& s : plan.prepare)
    if (s.kernel.empty() && s.fillBuffer == kFirstScratch + index)
      return {};
  return std::vector<unsigned char>(4, kPoisonByte);
}

void PlannedTask::PoisonScratch(TaskContext& ctx, const LaunchPlan& plan,
                                const std::string& variant, RunEvents& untimed) {
  for (size_t i = 0; i < plan.scratchBytes.size(); ++i) {
    const std::vector<unsigned char> pattern = ScratchPoison(plan, variant, i);
    const size_t bytes =
        plan.scratchBytes[i] - plan.scratchBytes[i] % std::max<size_t>(1, pattern.size());
    if (!pattern.empty())
      FillPattern(ctx.queue, scratch_[i].Get(), pattern, bytes,
                  [&] { return untimed.Next("Poison scratch"); });
  }
}

void PlannedTask::ComputeGPU(TaskContext& ctx, const std::string& variant, const ProblemSpec& spec,
                             RunEvents& events) {
  const LaunchPlan& plan = PlanFor(ctx.info, variant, spec);
  Enqueue(ctx, plan, plan.steps, &events);
  Enqueued(plan, variant);
}

// An output left as poisoned where no step of the plan writes it: the host code's plan, not a
// kernel, is at fault; said so (--explain lists the plan's launches).
Validation PlannedTask::ValidateResults(TaskContext& ctx, const std::string& variant,
                                        const ProblemSpec& spec) {
  Validation v = ReadBackAndCompare(ctx.queue, output_d_, OutputElements(spec), variant,
                                    ExpectedFor(variant), input_);
  if (v.passed || !v.neverWritten)
    return v;
  const LaunchPlan& plan = PlanFor(ctx.info, variant, spec);
  if (!StepsTouch(plan, kOutputBuffer))
    v.message += fmt::format(
        "; no launch of the plan writes the output (its {} command(s) write only scratch "
        "buffers): the host code's plan stops short, not a kernel; `--explain --task {} "
        "--variant {}` lists its launches",
        plan.steps.size(), Name(), variant);
  return v;
}

CostModel PlannedTask::Cost(const DeviceInfo& device, const std::string& variant,
                            const ProblemSpec& spec) const {
  return CostOf(PlanFor(device, variant, spec));
}

std::string PlannedTask::KernelOptions(const DeviceInfo& device, const std::string& variant,
                                       const ProblemSpec& spec) const {
  return PlanFor(device, variant, spec).BuildOptions();
}

MemoryNeeds PlannedTask::MemoryNeeded(const DeviceInfo& device, const std::string& variant,
                                      const ProblemSpec& spec) const {
  const LaunchPlan& plan = PlanFor(device, variant, spec);
  const uint64_t size = SizeOf(spec.type), input = uint64_t(spec.n) * size;
  const size_t outputs = OutputElements(spec);
  MemoryNeeds m;
  m.deviceBytes = input + outputs * size;
  for (size_t bytes : plan.scratchBytes)
    m.deviceBytes += bytes;
  m.hostBytes = input + ReferenceBytes(spec) + ReadBackHostBytes(spec.type, outputs);
  return m;
}

}  // namespace rsb
