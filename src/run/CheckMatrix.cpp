#include "run/CheckMatrix.h"

#include "run/Jobs.h"

#include "engine/Case.h"

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
  const size_t best = ResolveCase(task, variant, spec, device).spec.localSize;
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
  return ResolveCase(task, variant, spec, device).Runs();
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

namespace {

// (n, height, local size) -> the variants that run it, in table order.
using MatrixCases = std::map<std::tuple<size_t, size_t, size_t>, std::vector<std::string>>;

// The sizes (or shapes) of a variant's matrix at spec's local size: its boundary sizes that the
// problem allows; only the first where the variant cannot run here (one case reports the skip).
std::vector<Extent> MatrixExtents(const IComputeTask& task, const std::string& variant,
                                  const ProblemSpec& spec, const DeviceInfo& device) {
  std::vector<Extent> extents;
  if (task.TakesShape(variant)) {
    for (const Extent& e : task.BoundaryShapes(device, variant, spec)) {
      ProblemSpec s = spec;
      s.n = e.n, s.height = e.height;
      if (Valid(task, variant, s))
        extents.push_back(e);
    }
  } else {
    for (size_t n : CheckMatrixSizes(task, variant, spec, device)) {
      ProblemSpec s = spec;
      s.n = n;
      if (Valid(task, variant, s))
        extents.push_back({n, 0});
    }
  }
  if (!extents.empty() && !Runs(task, variant, spec, device))
    extents.resize(1);
  return extents;
}

// One job per case of `cases`, each from `base` (its type, operator, kind and parameters).
void AddMatrixJobs(IComputeTask& task, const ProblemSpec& base, const MatrixCases& cases,
                   std::vector<Job>& jobs) {
  for (const auto& [key, names] : cases) {
    Job job{&task, base, names};
    job.spec.n = std::get<0>(key);
    job.spec.height = std::get<1>(key);
    job.spec.localSize = std::get<2>(key);
    jobs.push_back(job);
  }
}

// The matrix of one (type, operator, kind, parameters): every selected variant at each of its
// local sizes over its boundary sizes.
void AddProblemMatrix(const Options& o, IComputeTask& task,
                      const std::vector<std::string>& variants, const ProblemSpec& base,
                      const DeviceInfo& device, std::vector<Job>& jobs) {
  MatrixCases cases;
  for (const auto& variant : variants)
    for (size_t local : LocalSizes(o, task, variant, device)) {
      ProblemSpec spec = base;
      spec.localSize = local;
      spec.n = kCheckMatrixLargeSize;
      for (const Extent& e : MatrixExtents(task, variant, spec, device)) {
        auto& names = cases[{e.n, e.height, local}];
        if (std::find(names.begin(), names.end(), variant) == names.end())
          names.push_back(variant);
      }
    }
  AddMatrixJobs(task, base, cases, jobs);
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
    for (ElementType type : Both(AllElementTypes(), task->Types()))
      for (Op op : Both(AllOps(), task->Ops()))
        for (const auto& params : ParamCombinations(o, *task, ParamValues::Check)) {
          ProblemSpec base = o.problem;
          base.type = type;
          base.op = op;
          base.params = params;
          AddProblemMatrix(o, *task, variants, base, device, jobs);
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
    return ResolveCase(task, variant, spec, device).kernelOptions;
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace

namespace {

// The code paths an Oclgrind case runs: the one asked for, and under auto the other too where
// its kernels differ (a CPU shape on a GPU, a GPU shape on a CPU).
std::vector<CodePath> OclgrindPaths(const Options& o, const IComputeTask& task,
                                    const std::string& variant, ProblemSpec spec,
                                    const DeviceInfo& device) {
  std::vector<CodePath> paths = {o.problem.codePath};
  if (o.problem.codePath != CodePath::Auto)
    return paths;
  spec.n = kOclgrindSizes[std::size(kOclgrindSizes) - 1];
  const CodePath other = device.isGpu ? CodePath::Cpu : CodePath::Gpu;
  const std::string mine = OptionsOn(task, variant, spec, CodePath::Auto, device);
  const std::string theirs = OptionsOn(task, variant, spec, other, device);
  if (!theirs.empty() && theirs != mine)
    paths.push_back(other);
  return paths;
}

// The Oclgrind matrix of one (kind, parameters, local size) in `base`: every selected variant
// over kOclgrindSizes or kOclgrindShapes on each of its code paths.
void AddOclgrindCases(const Options& o, IComputeTask& task,
                      const std::vector<std::string>& variants, const ProblemSpec& base,
                      const DeviceInfo& device, std::vector<Job>& jobs) {
  // (n, height, code path) -> the variants that run it, in table order.
  std::map<std::tuple<size_t, size_t, int>, std::vector<std::string>> cases;
  for (const auto& variant : variants) {
    std::vector<Extent> extents;
    if (task.TakesShape(variant))
      extents.assign(std::begin(kOclgrindShapes), std::end(kOclgrindShapes));
    else
      for (size_t n : kOclgrindSizes)
        extents.push_back({n, 0});
    const std::vector<CodePath> paths = OclgrindPaths(o, task, variant, base, device);
    for (const Extent& e : extents) {
      ProblemSpec s = base;
      s.n = e.n, s.height = e.height;
      if (!Valid(task, variant, s))
        continue;
      for (CodePath path : paths)
        cases[{e.n, e.height, int(path)}].push_back(variant);
    }
  }
  for (const auto& [key, names] : cases) {
    Job job{&task, base, names};
    job.spec.n = std::get<0>(key);
    job.spec.height = std::get<1>(key);
    job.spec.codePath = CodePath(std::get<2>(key));
    jobs.push_back(job);
  }
}

}  // namespace

std::vector<Job> OclgrindMatrixJobs(const Options& o,
                                    const std::vector<std::unique_ptr<IComputeTask>>& tasks,
                                    const DeviceInfo& device) {
  std::vector<Job> jobs;
  for (const auto& task : tasks) {
    const std::vector<std::string> variants = SelectedVariants(o, *task);
    const std::vector<ElementType> types = task->Types();
    const std::vector<Op> ops = task->Ops();
    if (variants.empty() || types.empty() || ops.empty())
      continue;
    const bool hasUint = std::find(types.begin(), types.end(), ElementType::Uint) != types.end();
    const bool hasSum = std::find(ops.begin(), ops.end(), Op::Sum) != ops.end();
    std::vector<size_t> locals(std::begin(kOclgrindLocalSizes), std::end(kOclgrindLocalSizes));
    if (o.localSizeGiven)
      locals = o.localSizes;
    for (const auto& params : ParamCombinations(o, *task, ParamValues::Check))
      for (size_t local : locals) {
        ProblemSpec base = o.problem;
        base.type = hasUint ? ElementType::Uint : types.front();
        base.op = hasSum ? Op::Sum : ops.front();
        base.params = params;
        base.localSize = local;
        AddOclgrindCases(o, *task, variants, base, device, jobs);
      }
  }
  return jobs;
}

}  // namespace rsb
