#include "run/Jobs.h"

#include "engine/Case.h"
#include "platform/Errors.h"
#include "run/CheckMatrix.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

namespace rsb {

namespace {

template <class C, class V>
bool Contains(const C& c, const V& v) {
  return std::find(c.begin(), c.end(), v) != c.end();
}

// The values of `asked` the task computes; where none was asked for on the command line and the
// task computes none of the defaults, its first.
template <class E>
std::vector<E> Supported(const std::vector<E>& asked, const std::vector<E>& supported, bool given) {
  std::vector<E> out;
  for (E e : asked)
    if (Contains(supported, e))
      out.push_back(e);
  if (out.empty() && !given && !supported.empty())
    out.push_back(supported.front());
  return out;
}

// What one task of MakeJobs runs: its selected variants, types and operators, and why the
// command line's asks it leaves out.
struct TaskSelection {
  std::vector<std::string> variants;
  std::vector<ElementType> types;
  std::vector<Op> ops;
  std::vector<std::string> why;
};

TaskSelection SelectFor(const Options& o, const IComputeTask& task) {
  TaskSelection s;
  for (const auto& v : task.Variants())
    if (o.variants.empty() || Contains(o.variants, v))
      s.variants.push_back(v);
  s.types = Supported(o.types, task.Types(), o.typesGiven);
  s.ops = Supported(o.ops, task.Ops(), o.opsGiven);
  if (s.types.size() < o.types.size() && o.typesGiven)
    s.why.push_back(fmt::format("{} computes {} only", task.Name(), JoinNames(task.Types())));
  if (s.ops.size() < o.ops.size() && o.opsGiven)
    s.why.push_back(fmt::format("{} has the operator {} only", task.Name(), JoinNames(task.Ops())));
  return s;
}

// The jobs of one size: every type, operator and parameter combination, for the variants
// that take sizes of its kind (added to `ran`).
void AddSizeJobs(const Options& o, IComputeTask& task, const TaskSelection& s, const Extent& size,
                 std::vector<std::string>& ran, std::vector<Job>& jobs) {
  std::vector<std::string> takers;
  for (const auto& v : s.variants)
    if (task.TakesShape(v) == (size.height > 0))
      takers.push_back(v);
  if (takers.empty() || s.types.empty() || s.ops.empty())
    return;
  for (const auto& v : takers)
    ran.push_back(task.Name() + "/" + v);
  for (ElementType type : s.types)
    for (Op op : s.ops)
      for (const auto& params : ParamCombinations(o, task, ParamValues::Default)) {
        Job job{&task, o.problem, takers};
        job.spec.type = type;
        job.spec.op = op;
        job.spec.n = size.n;
        job.spec.height = size.height;
        job.spec.params = params;
        jobs.push_back(job);
      }
}

// After a task's jobs: its variants left without a case are said in `notes`, and are a
// UsageError where the command line named the task or the variants.
void CheckLeftOut(const Options& o, const IComputeTask& task, TaskSelection& s,
                  const std::vector<std::string>& ran, std::vector<std::string>* notes) {
  std::vector<std::string> left;
  for (const auto& v : s.variants)
    if (!Contains(ran, task.Name() + "/" + v))
      left.push_back(v);
  if (!left.empty() && !s.types.empty() && !s.ops.empty())
    s.why.push_back(
        fmt::format("{} {} {}", fmt::join(left, ", "), left.size() > 1 ? "take" : "takes",
                    task.TakesShape(left.front()) ? "images only (--size WIDTHxHEIGHT)"
                                                  : "plain element counts only (--size N)"));
  if (!s.why.empty() && notes)
    notes->push_back(fmt::format("{}: {}", task.Name(), fmt::join(s.why, "; ")));
  if (left.size() == s.variants.size() && o.tasksGiven)
    throw UsageError(fmt::format("--task {}: no case to run: {}; allowed: {}", task.Name(),
                                 fmt::join(s.why, "; "),
                                 "types, operators and sizes the task computes"));
  if (!left.empty() && !o.variants.empty())
    throw UsageError(fmt::format("--variant {}: no case to run: {}", fmt::join(left, ","),
                                 fmt::join(s.why, "; ")));
}

}  // namespace

std::vector<std::map<std::string, size_t>> ParamCombinations(const Options& o,
                                                             const IComputeTask& task,
                                                             ParamValues which) {
  std::vector<std::map<std::string, size_t>> combos = {{}};
  for (const auto& p : task.Parameters()) {
    const auto given = o.params.find(p.name);
    const std::vector<size_t> values = given != o.params.end() ? given->second
                                       : which == ParamValues::Check && !p.checkValues.empty()
                                           ? p.checkValues
                                           : std::vector<size_t>{p.value};
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

std::vector<Job> MakeJobs(const Options& o, const Tasks& tasks, std::vector<std::string>* notes) {
  std::vector<Job> jobs;
  std::vector<std::string> ran;  // variants (task/variant) with a job
  for (const auto& task : tasks) {
    if (!Contains(o.tasks, task->Name()))
      continue;
    TaskSelection s = SelectFor(o, *task);
    if (s.variants.empty())
      continue;
    const std::vector<Extent> sizes =
        o.sizesGiven || task->DefaultSizes().empty() ? o.sizes : task->DefaultSizes();
    for (const Extent& size : sizes)
      AddSizeJobs(o, *task, s, size, ran, jobs);
    CheckLeftOut(o, *task, s, ran, notes);
  }
  return jobs;
}

std::vector<Job> DeviceJobs(const Options& o, const Tasks& tasks, const std::vector<Job>& problems,
                            const DeviceInfo& device, const std::optional<Profile>& profile) {
  const Profile* p = profile ? &*profile : nullptr;
  if (!o.casesFile.empty() || o.BareCheck()) {
    // --cases: each case as the file gives it, its local size with it; a bare --check: the same
    // tasks and variants over the correctness matrix (for a simulator under --oclgrind).
    std::vector<Job> jobs = !o.casesFile.empty() ? problems
                            : o.oclgrind         ? OclgrindMatrixJobs(o, tasks, device)
                                                 : CheckMatrixJobs(o, tasks, device);
    for (Job& job : jobs)
      ApplyProfile(job, p, device, o.localSizeGiven);
    return jobs;
  }
  std::vector<Job> jobs;
  for (const Job& problem : problems) {
    std::map<std::string, std::vector<size_t>> ran;  // variant -> the local sizes it runs at
    for (size_t local : o.localSizes) {
      Job job = problem;
      job.spec.localSize = local;
      ApplyProfile(job, p, device, o.localSizeGiven);
      job.variants.clear();
      for (const auto& v : problem.variants) {
        const size_t resolved =
            ResolveCase(*problem.task, v, job.SpecFor(v), device).spec.localSize;
        if (!Contains(ran[v], resolved)) {
          ran[v].push_back(resolved);
          job.variants.push_back(v);
        }
      }
      if (!job.variants.empty())
        jobs.push_back(job);
    }
  }
  return jobs;
}

void CheckKernelFiles(const std::string& dir, const std::vector<Job>& jobs, bool timed) {
  std::vector<std::string> needed, missing;
  if (timed)
    needed.push_back("Bandwidth.cl");
  for (const auto& job : jobs)
    for (const auto& file : job.task->KernelFiles(job.variants))
      if (!Contains(needed, file))
        needed.push_back(file);
  for (const auto& file : needed)
    if (!std::filesystem::is_regular_file(std::filesystem::path(dir) / file))
      missing.push_back(file);
  if (!missing.empty())
    throw UsageError(fmt::format(
        "--kernels '{}': no {} there; allowed: a folder holding every file the selected cases "
        "load ({})",
        dir, fmt::join(missing, ", "), fmt::join(needed, ", ")));
}

}  // namespace rsb
