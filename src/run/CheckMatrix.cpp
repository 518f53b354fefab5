#include "run/CheckMatrix.h"

#include "platform/Errors.h"

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

// The variant's default local size on the device, and a small one; with --local-size, its
// sizes (auto resolved to the default), each once.
std::vector<size_t> LocalSizes(const Options& o, const IComputeTask& task,
                               const std::string& variant, const DeviceInfo& device) {
  ProblemSpec spec = o.problem;
  spec.localSize = 0;
  const size_t best = task.LocalSize(variant, spec, device);
  if (o.localSizeGiven) {
    std::vector<size_t> sizes;
    for (size_t l : o.localSizes)
      if (std::find(sizes.begin(), sizes.end(), l ? l : best) == sizes.end())
        sizes.push_back(l ? l : best);
    return sizes;
  }
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

// The task's parameters the matrix runs: --NAME's values where given, else each parameter's
// check values (or its default); one map per combination.
std::vector<std::map<std::string, size_t>> ParamCombinations(const Options& o,
                                                             const IComputeTask& task) {
  std::vector<std::map<std::string, size_t>> combos = {{}};
  for (const auto& p : task.Parameters()) {
    const auto given = o.params.find(p.name);
    const std::vector<size_t> values = given != o.params.end() ? given->second
                                       : p.checkValues.empty() ? std::vector<size_t>{p.value}
                                                               : p.checkValues;
    std::vector<std::map<std::string, size_t>> next;
    for (const auto& c : combos)
      for (size_t v : values) {
        next.push_back(c);
        next.back()[p.name] = v;
      }
    combos = next;
  }
  return combos;
}

// True when CheckProblem takes the problem for the variant.
bool Valid(const IComputeTask& task, const std::string& variant, const ProblemSpec& spec) {
  try {
    task.CheckProblem(spec, {variant});
    return true;
  } catch (const UsageError&) {
    return false;
  }
}

template <class E>
std::vector<E> Both(const std::vector<E>& a, const std::vector<E>& b) {
  std::vector<E> out;
  for (E e : a)
    if (std::find(b.begin(), b.end(), e) != b.end())
      out.push_back(e);
  return out;
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

namespace {

// The task's variants the options select (none when the task is not selected).
std::vector<std::string> SelectedVariants(const Options& o, const IComputeTask& task) {
  std::vector<std::string> variants;
  if (std::find(o.tasks.begin(), o.tasks.end(), task.Name()) == o.tasks.end())
    return variants;
  for (const auto& v : task.Variants())
    if (o.variants.empty() ||
        std::find(o.variants.begin(), o.variants.end(), v) != o.variants.end())
      variants.push_back(v);
  return variants;
}

}  // namespace

std::vector<Job> CheckMatrixJobs(const Options& o,
                                 const std::vector<std::unique_ptr<IComputeTask>>& tasks,
                                 const DeviceInfo& device) {
  std::vector<Job> jobs;
  for (const auto& task : tasks) {
    const std::vector<std::string> variants = SelectedVariants(o, *task);
    if (variants.empty())
      continue;
    std::vector<std::optional<ScanKind>> kinds = {std::nullopt};
    const std::vector<ScanKind> scanKinds = task->ScanKinds();
    if (!scanKinds.empty())
      kinds.assign(scanKinds.begin(), scanKinds.end());
    for (ElementType type : Both(AllElementTypes(), task->Types()))
      for (Op op : Both(AllOps(), task->Ops()))
        for (const auto& kind : kinds)
          for (const auto& params : ParamCombinations(o, *task)) {
            // (n, height, local size) -> the variants that run it, in table order.
            std::map<std::tuple<size_t, size_t, size_t>, std::vector<std::string>> cases;
            for (const auto& variant : variants)
              for (size_t local : LocalSizes(o, *task, variant, device)) {
                ProblemSpec spec = o.problem;
                spec.type = type;
                spec.op = op;
                spec.scanKind = kind;
                spec.localSize = local;
                spec.params = params;
                spec.n = kCheckMatrixLargeSize;
                std::vector<Extent> extents;
                const bool runs = Runs(*task, variant, spec, device);
                if (task->TakesShape(variant)) {
                  for (const Extent& e : task->BoundaryShapes(device, variant, spec)) {
                    ProblemSpec s = spec;
                    s.n = e.n, s.height = e.height;
                    if (Valid(*task, variant, s))
                      extents.push_back(e);
                  }
                } else {
                  for (size_t n : CheckMatrixSizes(*task, variant, spec, device)) {
                    ProblemSpec s = spec;
                    s.n = n;
                    if (Valid(*task, variant, s))
                      extents.push_back({n, 0});
                  }
                }
                if (extents.empty())
                  continue;
                if (!runs)  // one case reports the skip
                  extents.resize(1);
                for (const Extent& e : extents) {
                  auto& names = cases[{e.n, e.height, local}];
                  if (std::find(names.begin(), names.end(), variant) == names.end())
                    names.push_back(variant);
                }
              }
            for (const auto& [key, names] : cases) {
              Job job{task.get(), o.problem, names};
              job.spec.type = type;
              job.spec.op = op;
              job.spec.scanKind = kind;
              job.spec.n = std::get<0>(key);
              job.spec.height = std::get<1>(key);
              job.spec.localSize = std::get<2>(key);
              job.spec.params = params;
              jobs.push_back(job);
            }
          }
  }
  return jobs;
}

namespace {

// The kernels' build options on a code path ("" where the variant cannot run there).
std::string OptionsOn(const IComputeTask& task, const std::string& variant, ProblemSpec spec,
                      CodePath path, const DeviceInfo& device) {
  spec.codePath = path;
  try {
    return task.KernelOptions(device, variant, spec);
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace

std::vector<Job> OclgrindMatrixJobs(const Options& o,
                                    const std::vector<std::unique_ptr<IComputeTask>>& tasks,
                                    const DeviceInfo& device) {
  std::vector<Job> jobs;
  for (const auto& task : tasks) {
    const std::vector<std::string> variants = SelectedVariants(o, *task);
    if (variants.empty())
      continue;
    const std::vector<ElementType> types = task->Types();
    const std::vector<Op> ops = task->Ops();
    if (types.empty() || ops.empty())
      continue;
    const bool hasUint = std::find(types.begin(), types.end(), ElementType::Uint) != types.end();
    const bool hasSum = std::find(ops.begin(), ops.end(), Op::Sum) != ops.end();
    std::vector<std::optional<ScanKind>> kinds = {std::nullopt};
    const std::vector<ScanKind> scanKinds = task->ScanKinds();
    if (!scanKinds.empty())
      kinds.assign(scanKinds.begin(), scanKinds.end());
    std::vector<size_t> locals(std::begin(kOclgrindLocalSizes), std::end(kOclgrindLocalSizes));
    if (o.localSizeGiven)
      locals = o.localSizes;
    for (const auto& kind : kinds)
      for (const auto& params : ParamCombinations(o, *task))
        for (size_t local : locals) {
          // (n, height, code path) -> the variants that run it, in table order.
          std::map<std::tuple<size_t, size_t, int>, std::vector<std::string>> cases;
          for (const auto& variant : variants) {
            ProblemSpec spec = o.problem;
            spec.type = hasUint ? ElementType::Uint : types.front();
            spec.op = hasSum ? Op::Sum : ops.front();
            spec.scanKind = kind;
            spec.params = params;
            spec.localSize = local;
            std::vector<Extent> extents;
            if (task->TakesShape(variant))
              extents.assign(std::begin(kOclgrindShapes), std::end(kOclgrindShapes));
            else
              for (size_t n : kOclgrindSizes)
                extents.push_back({n, 0});
            std::vector<CodePath> paths = {o.problem.codePath};
            if (o.problem.codePath == CodePath::Auto) {
              spec.n = kOclgrindSizes[std::size(kOclgrindSizes) - 1];
              const CodePath other = device.isGpu ? CodePath::Cpu : CodePath::Gpu;
              const std::string mine = OptionsOn(*task, variant, spec, CodePath::Auto, device);
              const std::string theirs = OptionsOn(*task, variant, spec, other, device);
              if (!theirs.empty() && theirs != mine)
                paths.push_back(other);
            }
            for (const Extent& e : extents) {
              ProblemSpec s = spec;
              s.n = e.n, s.height = e.height;
              if (!Valid(*task, variant, s))
                continue;
              for (CodePath path : paths)
                cases[{e.n, e.height, int(path)}].push_back(variant);
            }
          }
          for (const auto& [key, names] : cases) {
            Job job{task.get(), o.problem, names};
            job.spec.type = hasUint ? ElementType::Uint : types.front();
            job.spec.op = hasSum ? Op::Sum : ops.front();
            job.spec.scanKind = kind;
            job.spec.n = std::get<0>(key);
            job.spec.height = std::get<1>(key);
            job.spec.codePath = CodePath(std::get<2>(key));
            job.spec.localSize = local;
            job.spec.params = params;
            jobs.push_back(job);
          }
        }
  }
  return jobs;
}

}  // namespace rsb
