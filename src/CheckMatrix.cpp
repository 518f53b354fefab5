#include "CheckMatrix.h"

#include "Errors.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace rsb {

namespace {

// Boundary sizes above this are left out: on a CPU device a level edge such as (2L)^3 at the
// default L = 64 (2 Mi elements, three sizes, every type, operator and kind) would cost more
// than the rest of the matrix; the large odd size and the small local size still cross as many
// levels. A GPU takes larger ones in its stride.
size_t EdgeCap(const DeviceInfo& device) {
  return device.isGpu ? size_t(1) << 22 : size_t(1) << 20;
}

// The variant's default local size on the device, and a small one.
std::vector<size_t> LocalSizes(const Options& o, const IComputeTask& task,
                               const std::string& variant, const DeviceInfo& device) {
  if (o.localSizeGiven)
    return {o.problem.localSize};
  ProblemSpec spec = o.problem;
  spec.localSize = 0;
  const size_t best = task.LocalSize(variant, spec, device);
  const size_t small = best == 4 ? 8 : 4;
  return {best, small};
}

// True when the variant can run the problem on the device (its plan is made without a skip).
bool Runs(const IComputeTask& task, const std::string& variant, const ProblemSpec& spec,
          const DeviceInfo& device) {
  if (spec.type == ElementType::Double && !device.fp64)
    return false;
  if (spec.localSize > device.maxWorkGroupSize)
    return false;
  try {
    task.Cost(device, variant, spec);
    return true;
  } catch (const VariantSkipped&) {
    return false;
  }
}

}  // namespace

std::vector<size_t> CheckMatrixSizes(const IComputeTask& task, const std::string& variant,
                                     const ProblemSpec& spec, const DeviceInfo& device) {
  std::set<size_t> sizes = {1, 2, 3, kCheckMatrixLargeSize};
  for (size_t edge : task.BoundarySizes(device, variant, spec))
    if (edge >= 1 && edge + 1 <= EdgeCap(device))
      sizes.insert({edge - 1, edge, edge + 1});
  sizes.erase(0);
  return {sizes.begin(), sizes.end()};
}

std::vector<Job> CheckMatrixJobs(const Options& o,
                                 const std::vector<std::unique_ptr<IComputeTask>>& tasks,
                                 const DeviceInfo& device) {
  std::vector<Job> jobs;
  for (const auto& task : tasks) {
    if (std::find(o.tasks.begin(), o.tasks.end(), task->Name()) == o.tasks.end())
      continue;
    std::vector<std::string> variants;
    for (const auto& v : task->Variants())
      if (o.variants.empty() ||
          std::find(o.variants.begin(), o.variants.end(), v) != o.variants.end())
        variants.push_back(v);
    std::vector<std::optional<ScanKind>> kinds = {std::nullopt};
    const std::vector<ScanKind> scanKinds = task->ScanKinds();
    if (!scanKinds.empty())
      kinds.assign(scanKinds.begin(), scanKinds.end());
    for (ElementType type : AllElementTypes())
      for (Op op : AllOps())
        for (const auto& kind : kinds) {
          // (n, local size) -> the variants that run it, in table order.
          std::map<std::pair<size_t, size_t>, std::vector<std::string>> cases;
          for (const auto& variant : variants)
            for (size_t local : LocalSizes(o, *task, variant, device)) {
              ProblemSpec spec = o.problem;
              spec.type = type;
              spec.op = op;
              spec.scanKind = kind;
              spec.localSize = local;
              spec.n = kCheckMatrixLargeSize;
              const std::vector<size_t> sizes =
                  Runs(*task, variant, spec, device)
                      ? CheckMatrixSizes(*task, variant, spec, device)
                      : std::vector<size_t>{1};  // one case reports the skip
              for (size_t n : sizes) {
                auto& names = cases[{n, local}];
                if (std::find(names.begin(), names.end(), variant) == names.end())
                  names.push_back(variant);
              }
            }
          for (const auto& [key, names] : cases) {
            Job job{task.get(), o.problem, names};
            job.spec.type = type;
            job.spec.op = op;
            job.spec.scanKind = kind;
            job.spec.n = key.first;
            job.spec.localSize = key.second;
            jobs.push_back(job);
          }
        }
  }
  return jobs;
}

}  // namespace rsb
