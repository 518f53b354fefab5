#include "engine/TaskUtil.h"

#include "platform/Errors.h"
#include "platform/Sizes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace rsb {

std::string ToString(CodePath p) {
  return p == CodePath::Gpu ? "gpu" : p == CodePath::Cpu ? "cpu" : "auto";
}

std::string TuningKnob::AllowedText() const {
  if (multipleOf > 1 && max - min == multipleOf)  // two values: index-bits
    return fmt::format("{} or {}", min, max);
  return multipleOf > 1 ? fmt::format("a multiple of {} from {} to {}", multipleOf, min, max)
                        : fmt::format("a whole number from {} to {}", min, max);
}

size_t Tuned(const std::vector<TuningKnob>& knobs, const ProblemSpec& spec,
             const std::string& name) {
  const auto it = spec.tuning.find(name);
  if (it != spec.tuning.end())
    return it->second;
  for (const auto& k : knobs)
    if (k.name == name)
      return k.value;
  throw std::logic_error("no tuning knob " + name);
}

std::map<std::string, size_t> IComputeTask::Tuning(const DeviceInfo& /*device*/,
                                                   const std::string& /*variant*/,
                                                   const ProblemSpec& spec) const {
  std::map<std::string, size_t> values;
  const std::vector<TuningKnob> knobs = Tunables();
  for (const auto& knob : knobs)
    values[knob.name] = Tuned(knobs, spec, knob.name);
  return values;
}

std::string TaskParameter::AllowedText() const {
  if (!names.empty())
    return fmt::format("{}", fmt::join(names, " "));
  return fmt::format("{} from {} to {}", odd ? "an odd number" : "a whole number", min, max);
}

std::string TaskParameter::Text(size_t v) const {
  return v < names.size() ? names[v] : std::to_string(v);
}

std::optional<size_t> TaskParameter::Parse(const std::string& text) const {
  for (size_t i = 0; i < names.size(); ++i)
    if (Lower(text) == names[i])
      return i;
  return std::nullopt;
}

std::string TaskParameter::Key() const {
  std::string key = name;
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

void RecordParams(const std::vector<TaskParameter>& declared,
                  const std::map<std::string, size_t>& values,
                  std::map<std::string, std::string>& fields,
                  std::map<std::string, size_t>& params) {
  for (const auto& p : declared) {
    const auto it = values.find(p.name);
    const size_t v = it != values.end() ? it->second : p.value;
    if (p.field.empty())
      params[p.name] = v;
    else
      fields[p.field] = p.Text(v);
  }
}

std::vector<TaskParameter> FieldParams(const std::vector<std::unique_ptr<IComputeTask>>& tasks) {
  std::vector<TaskParameter> out;
  for (const auto& task : tasks)
    for (const auto& p : task->Parameters())
      if (!p.field.empty() && std::none_of(out.begin(), out.end(), [&](const TaskParameter& q) {
            return q.field == p.field;
          }))
        out.push_back(p);
  return out;
}

std::vector<std::string> FieldNames(const std::vector<TaskParameter>& params) {
  std::vector<std::string> out;
  for (const auto& p : params)
    if (!p.field.empty() && std::find(out.begin(), out.end(), p.field) == out.end())
      out.push_back(p.field);
  return out;
}

size_t Param(const std::vector<TaskParameter>& params, const ProblemSpec& spec,
             const std::string& name) {
  const auto it = spec.params.find(name);
  if (it != spec.params.end())
    return it->second;
  for (const auto& p : params)
    if (p.name == name)
      return p.value;
  throw std::logic_error("no task parameter " + name);
}

cl::Buffer& ScratchBuffer::Ensure(const cl::Context& context, size_t bytes) {
  bytes = std::max<size_t>(bytes, 16);
  if (bytes > capacity_) {
    buffer_ = cl::Buffer(context, CL_MEM_READ_WRITE, bytes);
    capacity_ = bytes;
  }
  return buffer_;
}

std::string BytesShort(uint64_t bytes) {
  const double mib = double(bytes) / (1 << 20);
  if (mib < 1)
    return fmt::format("{} bytes", bytes);
  return mib >= 1024 ? fmt::format("{:.1f} GiB", mib / 1024) : fmt::format("{:.1f} MiB", mib);
}

std::string BytesText(uint64_t bytes) {
  return bytes < (1 << 20) ? BytesShort(bytes)
                           : fmt::format("{} bytes ({})", bytes, BytesShort(bytes));
}

void RequireAllocation(const DeviceInfo& device, size_t bytes, const std::string& what) {
  if (bytes > device.maxAllocBytes)
    throw VariantSkipped(
        fmt::format("{} needs a buffer of {}; the device allows at most {} per buffer "
                    "(CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                    what, BytesText(bytes), BytesText(device.maxAllocBytes)));
}

namespace {
// Host transfers and fills of a buffer in pieces of at most 1 GiB: inputs past 2^31 elements are
// 8 to 16 GiB; NVIDIA's transfers of those sizes complete at any offset (validated runs at
// n = 2^32 + 7 on the H100), its fills do not past 2^31 patterns (FillPattern). A precaution,
// untimed: one call per GiB costs nothing measurable.
constexpr size_t kTransferChunk = size_t(1) << 30;
}  // namespace

cl::Buffer UploadInput(const ProblemSpec& spec, const DeviceInfo& device,
                       const cl::Context& context, cl::CommandQueue& queue, HostArray& input) {
  if (spec.type == ElementType::Double && !device.fp64)
    throw VariantSkipped("the device has no double precision (cl_khr_fp64)");
  const size_t bytes = spec.n * SizeOf(spec.type);
  RequireAllocation(device, bytes,
                    fmt::format("the input (n = {} {})", spec.n, ToString(spec.type)));
  if (!input.Size())
    input = RandomInput(spec.type, spec.n, spec.seed);
  cl::Buffer buffer(context, CL_MEM_READ_ONLY, bytes);
  const auto* data = static_cast<const unsigned char*>(input.Data());
  for (size_t offset = 0; offset < bytes; offset += kTransferChunk)
    queue.enqueueWriteBuffer(buffer, CL_TRUE, offset, std::min(kTransferChunk, bytes - offset),
                             data + offset);
  return buffer;
}

void FillPattern(cl::CommandQueue& queue, const cl::Buffer& buffer,
                 const std::vector<unsigned char>& pattern, size_t bytes,
                 const std::function<cl::Event*()>& nextEvent, size_t maxFillPatterns) {
  const size_t p = pattern.size();
  const size_t chunk = kTransferChunk - kTransferChunk % p;
  const size_t fillable = maxFillPatterns * p;  // NVIDIA: patterns counted in 32 bits
  std::vector<unsigned char> host;              // the pattern repeated, for the writes
  for (size_t offset = 0; offset < bytes; offset += chunk) {
    const size_t n = std::min(chunk, bytes - offset);
    cl::Event* event = nextEvent();
    if (offset + n <= fillable) {
      const cl_int err = clEnqueueFillBuffer(queue(), buffer(), pattern.data(), p, offset, n, 0,
                                             nullptr, event ? &(*event)() : nullptr);
      if (err != CL_SUCCESS)
        throw cl::Error(err, "clEnqueueFillBuffer");
      continue;
    }
    if (host.size() < n) {  // made once: only the last piece can be shorter
      host.resize(n);
      for (size_t i = 0; i < n; ++i)
        host[i] = pattern[i % p];
    }
    queue.enqueueWriteBuffer(buffer, CL_TRUE, offset, n, host.data(), nullptr, event);
  }
}

void Poison(cl::CommandQueue& queue, cl::Buffer& buffer, ElementType type, size_t count,
            RunEvents* events) {
  const std::vector<unsigned char> pattern(SizeOf(type), kPoisonByte);
  FillPattern(queue, buffer, pattern, count * SizeOf(type),
              [&] { return events ? events->Next("Poison output") : nullptr; });
}

static_assert(kReadBackPiece % kHostChunk == 0, "pieces are whole chunks");

uint64_t ReadBackHostBytes(ElementType type, size_t count) {
  const size_t piece = std::min(count, kReadBackPiece);
  return uint64_t(count > piece ? 2 : 1) * piece * SizeOf(type);
}

Validation ReadBackAndCompare(cl::CommandQueue& queue, const cl::Buffer& buffer, size_t count,
                              const std::string& variant, const Expected& expected,
                              const HostArray& input) {
  if (count != expected.Size()) {
    Validation v;
    v.message =
        fmt::format("{}: output has {} elements, expected {}", variant, count, expected.Size());
    return v;
  }
  const ElementType type = expected.Type();
  const size_t piece = std::min(count, kReadBackPiece), pieces = CeilDiv(count, piece);
  HostArray host[2] = {HostArray::Uninitialized(type, piece),
                       HostArray::Uninitialized(type, pieces > 1 ? piece : 0)};
  cl::Event read[2];
  auto enqueue = [&](size_t k) {
    const size_t first = k * piece, elements = std::min(piece, count - first);
    queue.enqueueReadBuffer(buffer, CL_FALSE, first * SizeOf(type), elements * SizeOf(type),
                            host[k % 2].Data(), nullptr, &read[k % 2]);
  };
  OutputComparison comparison(variant, expected, input);
  try {
    enqueue(0);
    for (size_t k = 0; k < pieces; ++k) {
      if (k + 1 < pieces)
        enqueue(k + 1);
      read[k % 2].wait();
      comparison.Add(k * piece, host[k % 2], std::min(piece, count - k * piece));
    }
  } catch (...) {
    queue.finish();  // no read may still be writing into `host` as it goes
    throw;
  }
  return comparison.Result();
}

}  // namespace rsb
