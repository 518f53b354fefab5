// IComputeTask: what a task (reduction, scan, ...) provides to the shared runner.
//
// A task describes its variants and problems and plans each case: one LaunchPlan per run, its
// CPU reference and its read-only inputs. It holds nothing of a case: the runner (Runner.h)
// owns the input, the references and the device buffers (RunData.h), runs the plan, times it
// and validates it. A task never prints, never times itself and never parses options.
//
// Most tasks derive from PlannedTask (PlannedTask.h), which makes the plan from a table of
// variants and one of shapes.
#pragma once

#include "engine/HostData.h"
#include "engine/LaunchPlan.h"
#include "engine/TaskApi.h"
#include "platform/OpenCL.h"
#include "platform/TaskContext.h"
#include "platform/Types.h"

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rsb {

// Which shape of kernel the single-pass variants use: from the device type (auto), or forced,
// e.g. to check the GPU shape on a CPU device.
enum class CodePath { Auto, Gpu, Cpu };
std::string ToString(CodePath p);

// A tuning knob of a task (--tune NAME=VALUE): its default and what values are safe.
struct TuningKnob {
  std::string name, help;
  size_t value = 0;  // the default
  size_t min = 1, max = 1, multipleOf = 1;
  bool Allows(size_t v) const { return v >= min && v <= max && v % multipleOf == 0; }
  std::string AllowedText() const;  // "a multiple of 4 from 4 to 64"
};

// What `tune` searches for one variant (src/tools/Tune.h) on a code path ("gpu", "cpu"; "":
// either) at a type width (4, 8; 0: either), besides the local size: the knobs in the order its
// coordinate descent walks them.
struct TunedSpace {
  std::string variant, codePath;
  size_t typeBytes = 0;
  std::vector<std::string> knobs;
};

// A parameter of a task's problem (a convolution's --mask-width, a scan's --scan-kind): the
// command line gets --NAME V[,V...] (a swept axis, like --size), every result records the value
// it ran with. A case file's and a rubric's key is the name with '_' for '-' (mask_width).
struct TaskParameter {
  std::string name, help;
  size_t value = 0;  // the default
  size_t min = 1, max = 1;
  bool odd = false;                 // odd values only
  std::vector<size_t> checkValues;  // what a bare --check runs (empty: the default)
  // Named values: value i is names[i] wherever it is written or read (the command line, with
  // "all" for every one; results, case files, rubrics); min and max are ignored. Empty: numbers.
  std::vector<std::string> names;
  // Not empty: a key of the case like its type and operator, recorded in a field of its own of
  // this name (JSON key; CSV column after `op`; the table's `kind`; case labels after the
  // operator), not in `params`; given on the command line, --check is not the bare matrix.
  std::string field;
  bool Allows(size_t v) const {
    return names.empty() ? v >= min && v <= max && (!odd || v % 2 == 1) : v < names.size();
  }
  std::string AllowedText() const;   // "an odd number from 1 to 63", "inclusive or exclusive"
  std::string Text(size_t v) const;  // the value as written: its name, or the number
  std::optional<size_t> Parse(const std::string& text) const;  // a named value, by its name
  std::string Key() const;  // the case file's and rubric's key: the name with '_' for '-'
};

// An element count as the command line gives it: a plain count (height 0), or an image of
// n / height columns and height rows (--size WxH, row-major).
struct Extent {
  size_t n = 1;
  size_t height = 0;
  bool operator==(const Extent& o) const { return n == o.n && height == o.height; }
};

// Where a case's local size and tuning values came from (every result records it): "default"
// (the variant's own), "profile" (an entry of the device's tuning profile, src/run/Profile.h) or
// "command line" (--local-size or --tune set one of them; a profile may have set the others).
// profile and profileDate: the profile's file and creation date where one was used; note: why
// it is taken with a caveat (made with another driver version, or for another device).
struct SettingsSource {
  std::string source = "default";
  std::string profile, profileDate, note;
};

// One problem: what to compute, on how many elements, and how.
struct ProblemSpec {
  ElementType type = ElementType::Uint;
  Op op = Op::Sum;
  size_t n = 1;
  // > 0: the n elements are an image of n / height columns and height rows (--size WxH), for
  // the variants that take shapes (IComputeTask::TakesShape); 0: a plain count.
  size_t height = 0;
  size_t Width() const { return height ? n / height : n; }
  size_t Height() const { return height ? height : 1; }
  size_t localSize = 0;  // 0: the variant's best local size for the device (Task::LocalSize)
  uint64_t seed = 1;
  // Code-path choices: the command line sets them, the results record them.
  CodePath codePath = CodePath::Auto;
  bool portable = false;          // single-pass: no vendor path (NVIDIA warp shuffles)
  bool lookbackFallback = false;  // single-pass scan: every look-back recomputes from the input
  std::map<std::string, size_t> tuning;  // knobs set with --tune; the others take defaults
  // The task's parameters set (named ones by index); the others take defaults.
  std::map<std::string, size_t> params;
  SettingsSource settings;  // where localSize and tuning came from
  // This input instead of the seeded random one (tests: the course's worked examples).
  std::shared_ptr<const HostArray> input;
};

// A knob's value for this problem: spec.tuning's if set, else the knob's default.
size_t Tuned(const std::vector<TuningKnob>& knobs, const ProblemSpec& spec,
             const std::string& name);

// A parameter's value for this problem: spec.params' if set, else the parameter's default.
size_t Param(const std::vector<TaskParameter>& params, const ProblemSpec& spec,
             const std::string& name);

// The parameters' values as results record them: every declared one (its default where `values`
// has none), those with a field of their own in `fields` (field: the value's Text), the others in
// `params`.
void RecordParams(const std::vector<TaskParameter>& declared,
                  const std::map<std::string, size_t>& values,
                  std::map<std::string, std::string>& fields,
                  std::map<std::string, size_t>& params);

// Collects the events of one run. The task passes Next() to every command it enqueues, naming
// the command (its kernel, qualified by its role where one kernel plays two: "ScanWorkEfficient
// (block sums)") and giving its share of the traffic model. The run is timed from the first
// command's start to the last command's end; with everyCommand (the default) every command's
// event is kept too, for the per-kernel breakdown (Breakdown.h), else only the first and the last.
// A command without a name is named after its command type ("unnamed kernel").
struct CommandEvent {
  std::string name;
  CostModel cost;
  cl::Event event;
};

class RunEvents {
 public:
  explicit RunEvents(bool everyCommand = true) : everyCommand_(everyCommand) {}
  cl::Event* Next(std::string name = {}, const CostModel& cost = {}) {
    ++count_;
    if (everyCommand_) {
      commands_.push_back({std::move(name), cost, cl::Event()});
      return &commands_.back().event;  // a deque: earlier pointers stay valid
    }
    if (count_ == 1)
      return &first_;
    last_ = cl::Event();  // released: a fill writes the raw handle over it
    return &last_;
  }
  size_t Count() const { return count_; }
  const cl::Event& First() const { return everyCommand_ ? commands_.front().event : first_; }
  const cl::Event& Last() const {
    return everyCommand_ ? commands_.back().event : count_ > 1 ? last_ : first_;
  }
  // Every command in launch order (empty unless everyCommand).
  const std::deque<CommandEvent>& Commands() const { return commands_; }

 private:
  bool everyCommand_;
  size_t count_ = 0;
  cl::Event first_, last_;
  std::deque<CommandEvent> commands_;
};

class IComputeTask {
 public:
  virtual ~IComputeTask() = default;

  virtual std::string Name() const = 0;
  virtual std::vector<std::string> Variants() const = 0;
  virtual std::string Describe(const std::string& variant) const = 0;
  virtual std::vector<TuningKnob> Tunables() const { return {}; }
  // The variants `tune` searches, and which of their knobs (the first space that matches).
  virtual std::vector<TunedSpace> TunedSpaces() const { return {}; }
  // The parameters of its problems (swept axes of their own: a convolution's mask width, a
  // scan's kind).
  virtual std::vector<TaskParameter> Parameters() const { return {}; }
  // The element types and operators it computes: other combinations are not run (the command
  // line says so where it asked for them).
  virtual std::vector<ElementType> Types() const { return AllElementTypes(); }
  virtual std::vector<Op> Ops() const { return AllOps(); }
  // True: the variant runs on images (--size WxH); false: on plain element counts. A run
  // gives each variant the sizes of its kind.
  virtual bool TakesShape(const std::string& /*variant*/) const { return false; }
  // Sizes run when the command line gives none (empty: the command line's default, 2^24).
  virtual std::vector<Extent> DefaultSizes() const { return {}; }
  // Throws UsageError (exit status 2, one line naming the option) when the problem is not one
  // the variants can compute (a convolution mask wider than the input). Checked before
  // anything runs. Default: every problem is.
  virtual void CheckProblem(const ProblemSpec& /*spec*/,
                            const std::vector<std::string>& /*variants*/) const {}
  // The .cl files (in the kernels folder) these variants load: checked before anything runs.
  virtual std::vector<std::string> KernelFiles(const std::vector<std::string>& variants) const = 0;

  // The local size the variant will use: spec.localSize if set, else its best for the device.
  virtual size_t LocalSize(const std::string& variant, const ProblemSpec& spec,
                           const DeviceInfo& device) const = 0;
  // The value of every knob (Tunables) the variant runs with on this device: --tune's where
  // given, else its default, or what fits the device (a tile shrunk to its local memory).
  // spec.localSize: resolved (ResolveCase), or 0 where no device is known yet. Results record it.
  virtual std::map<std::string, size_t> Tuning(const DeviceInfo& device, const std::string& variant,
                                               const ProblemSpec& spec) const;
  // "gpu" or "cpu": the kernel shape the variant runs with on this device for this problem.
  virtual std::string CodePathOf(const DeviceInfo& device, const ProblemSpec& spec) const = 0;

  // The plan of one run of the variant on this problem (spec.localSize set), as it runs: its
  // steps, scratch buffers, cost (CostOf), build options (BuildOptions), output size and memory.
  // Throws VariantSkipped when the variant cannot run so on this device. ResolveCase calls it.
  virtual LaunchPlan PlanFor(const DeviceInfo& device, const std::string& variant,
                             const ProblemSpec& spec) const = 0;
  // Read-only inputs besides the input (a convolution's mask), made from spec (its seed) and
  // uploaded with the input; a plan refers to the i-th as BufferArg{kFirstConstInput + i}.
  virtual std::vector<HostArray> ConstInputs(const ProblemSpec& /*spec*/) const { return {}; }
  // Variants that compute different things from one input (a 1-D and a 2-D convolution) are
  // validated against different references: the variant's key (default: one for all) and the
  // CPU reference of a key, which the runner computes once per input, when first needed.
  virtual std::string ReferenceKey(const std::string& /*variant*/) const { return {}; }
  virtual Expected KeyedReference(const HostArray& input, const ProblemSpec& spec,
                                  const std::string& key) const = 0;

  // The work of the sequential algorithm on this problem, in the units of CostModel::ops: what a
  // variant's work W(n) is compared with (--explain, common/engine/Explain.h). Default: n - 1
  // applications of the operator (a reduction, or a scan, by one processor).
  virtual uint64_t SequentialWork(const std::string& /*variant*/, const ProblemSpec& spec) const {
    return spec.n > 0 ? spec.n - 1 : 0;
  }

  // The element counts at which the variant's launch plan changes shape for this problem on
  // this device (spec.localSize and spec.type set): the n that just fills a work-group, a tile,
  // a level of block sums, the whole grid... The check matrix (src/run/CheckMatrix.h) runs each one
  // and its neighbours, besides 1, 2, 3 and a large odd n. Default: none.
  virtual std::vector<size_t> BoundarySizes(const DeviceInfo& /*device*/,
                                            const std::string& /*variant*/,
                                            const ProblemSpec& /*spec*/) const {
    return {};
  }
  // For a variant that takes shapes (TakesShape): the images the check matrix runs, each as it
  // is (the tile's edges and their neighbours, thin ones such as 1 x n and n x 1, odd squares).
  // Shapes CheckProblem rejects are left out. Default: none.
  virtual std::vector<Extent> BoundaryShapes(const DeviceInfo& /*device*/,
                                             const std::string& /*variant*/,
                                             const ProblemSpec& /*spec*/) const {
    return {};
  }
};

// The tasks' parameters that have a field of their own (TaskParameter::field), in the tasks'
// order, each field once: the results' keys after `op` (a scan's kind).
std::vector<TaskParameter> FieldParams(const std::vector<std::unique_ptr<IComputeTask>>& tasks);
// Those parameters' fields, in their order, each once.
std::vector<std::string> FieldNames(const std::vector<TaskParameter>& params);

}  // namespace rsb
