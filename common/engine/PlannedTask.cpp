#include "engine/PlannedTask.h"

#include "platform/Errors.h"

#include <fmt/format.h>

#include <stdexcept>

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

LaunchPlan PlannedTask::PlanFor(const DeviceInfo& device, const std::string& variant,
                                const ProblemSpec& spec) const {
  LaunchPlan plan = Plan(device, variant, spec);
  CountCacheServedReads(plan, device.globalMemCacheBytes);
  plan.index64 = Index64(spec);
  plan.outputElements = OutputElements(spec);
  const uint64_t size = SizeOf(spec.type);
  const uint64_t input = uint64_t(spec.n) * size, output = plan.outputElements * size;
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
  plan.memory.deviceBytes = input + output + scratch;
  plan.memory.hostBytes =
      input + ReferenceBytes(spec) + ReadBackHostBytes(spec.type, plan.outputElements);
  return plan;
}

bool PlannedTask::GpuPath(const DeviceInfo& device, const ProblemSpec& spec) {
  return spec.codePath == CodePath::Gpu || (spec.codePath == CodePath::Auto && device.isGpu);
}

std::string PlannedTask::CodePathOf(const DeviceInfo& device, const ProblemSpec& spec) const {
  return GpuPath(device, spec) ? "gpu" : "cpu";
}

}  // namespace rsb
