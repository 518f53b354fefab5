// PlannedTask: a task as plans. A task derived from it provides a table of variants (TableTask),
// one of shapes (a plan function per shape, its tile and boundary sizes), its CPU reference and
// the size of its output; PlanFor makes the plan every use of a case takes (ResolveCase), and the
// runner runs it (RunData.h).
#pragma once

#include "engine/IComputeTask.h"
#include "engine/TaskUtil.h"
#include "platform/Errors.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace rsb {

// What a variant keeps in local memory at one local size (spec.localSize) and, where a knob
// sizes its tile (elements or rows per work-item), the knob's value: --tune's where given, else
// the largest from the knob's default down (in steps of its multipleOf) whose tile fits the
// device's local memory as its driver counts it (FitsLocalMemory). A task's Tile() is the one
// rule: the plan builds with its value and skips with LocalMemorySkip where it does not fit, the
// automatic local size halves until it fits, and results record its value.
struct LocalTile {
  std::string variant;
  size_t localSize = 0;
  std::string knob;              // empty: no knob sizes the tile
  size_t value = 0;              // the knob's value
  bool given = false;            // from --tune (never shrunk)
  unsigned long long bytes = 0;  // what the kernel's __local arrays declare
  bool fits = true;
  std::map<std::string, size_t> chosen;  // other knobs whose value the tile settles (0 = auto)
};
// The tile of a variant with no knob: `bytes` at spec.localSize.
LocalTile FixedTile(const DeviceInfo& device, const std::string& variant, const ProblemSpec& spec,
                    unsigned long long bytes);
// The tile of a variant whose knob `knob` (of knobs) sizes it: bytesAt(value) declared.
LocalTile FitTile(const DeviceInfo& device, const std::vector<TuningKnob>& knobs,
                  const std::string& variant, const ProblemSpec& spec, const std::string& knob,
                  const std::function<unsigned long long(size_t)>& bytesAt);
// The reason a tile that does not fit is skipped: what it needs, what the device has.
std::string LocalMemorySkip(const DeviceInfo& device, const LocalTile& tile);

class PlannedTask : public IComputeTask {
 public:
  std::string CodePathOf(const DeviceInfo& device, const ProblemSpec& spec) const override;

  // One run of the variant on this problem (spec.localSize already resolved), as the task's
  // table and plan functions write it. Throws VariantSkipped when the variant cannot run so on
  // this device.
  virtual LaunchPlan Plan(const DeviceInfo& device, const std::string& variant,
                          const ProblemSpec& spec) const = 0;
  // The plan as it runs: Plan() in the problem's index width (Index64), its output size and
  // memory, checked against the device's memory (VariantSkipped with the bytes needed and
  // available: a buffer beyond CL_DEVICE_MAX_MEM_ALLOC_SIZE, or input, output and scratch
  // together beyond CL_DEVICE_GLOBAL_MEM_SIZE).
  LaunchPlan PlanFor(const DeviceInfo& device, const std::string& variant,
                     const ProblemSpec& spec) const override;
  // The plan's cost and build options (what ResolveCase records from it; the tests read them).
  CostModel Cost(const DeviceInfo& device, const std::string& variant,
                 const ProblemSpec& spec) const {
    return CostOf(PlanFor(device, variant, spec));
  }
  std::string KernelOptions(const DeviceInfo& device, const std::string& variant,
                            const ProblemSpec& spec) const {
    return PlanFor(device, variant, spec).BuildOptions();
  }
  Expected KeyedReference(const HostArray& input, const ProblemSpec& spec,
                          const std::string& /*key*/) const override {
    return Reference(input, spec);
  }

  // The kernels index with 64-bit IDX: where n > kMaxElements32BitIndex, or asked for with the
  // knob index-bits=64 (tests of the 64-bit path at small n).
  static bool Index64(const ProblemSpec& spec);
  // A task's own knobs and the knobs every planned task takes (index-bits).
  static std::vector<TuningKnob> WithSharedKnobs(std::vector<TuningKnob> knobs);

  // The variant's local memory and tile at spec.localSize (> 0) on this device (LocalTile).
  // Default: none.
  virtual LocalTile Tile(const DeviceInfo& device, const std::string& variant,
                         const ProblemSpec& spec) const {
    return FixedTile(device, variant, spec, 0);
  }
  // Every knob as Tuned() gives it, the tile's knob as Tile() picks it at spec.localSize (0: not
  // resolved; the knobs as Tuned() gives them).
  std::map<std::string, size_t> Tuning(const DeviceInfo& device, const std::string& variant,
                                       const ProblemSpec& spec) const override;

 protected:
  // The single-pass kernels' shape: GPU (wide coalesced loads, tiles through local memory) or
  // CPU (one work-item streams a contiguous run), from spec.codePath or the device type.
  static bool GpuPath(const DeviceInfo& device, const ProblemSpec& spec);

  virtual Expected Reference(const HostArray& input, const ProblemSpec& spec) const = 0;
  virtual size_t OutputElements(const ProblemSpec& spec) const = 0;
  // The host memory of Reference()'s result (HostData.h; default: exact over the output).
  virtual uint64_t ReferenceBytes(const ProblemSpec& spec) const {
    return ExactReferenceBytes(spec.type, OutputElements(spec));
  }
};

// One row of a task's table of variants: adding a variant of an existing shape is its kernel
// and one row.
template <class Shape>
struct VariantRow {
  std::string name;
  std::string kernel;
  std::string file;  // kernels/<file> holds the kernel
  Shape shape;
  // Default local size by device type: the best of a sweep on the H100 (GPU) and on pocl (CPU),
  // docs/BENCHMARKS.md. --local-size overrides it.
  size_t gpuLocal, cpuLocal;
  std::string description;
};

// One row of a task's table of shapes: how the host drives the variants of one shape, as
// functions of the task (Task, its class): the plan (required), the tile its kernels keep in
// local memory (none: none) and the sizes where the plan changes, which a bare --check runs
// (none: none of its own); image: its variants run on images (--size WxH, TakesShape). A new
// shape is its enum value, its row and its functions.
template <class Task, class Shape>
struct ShapeRow {
  template <class R>
  using Function = R (Task::*)(const DeviceInfo&, const VariantRow<Shape>&,
                               const ProblemSpec&) const;
  Shape shape;
  Function<LaunchPlan> plan = nullptr;
  Function<LocalTile> tile = nullptr;
  Function<std::vector<size_t>> boundaries = nullptr;
  bool image = false;
};

// A PlannedTask whose variants are the rows of a table and whose shapes, given, the rows of a
// second: Plan, Tile and BoundarySizes are then the variant's shape row's functions.
template <class Shape>
class TableTask : public PlannedTask {
 public:
  using Variant = VariantRow<Shape>;
  // Variants alone: the task overrides Plan (and Tile, BoundarySizes where it has them).
  explicit TableTask(std::vector<Variant> table) : table_(std::move(table)) {}
  // Variants and shapes; std::invalid_argument, naming the variant or the shape, where a
  // variant's shape has no row, a row has no plan or two rows have one shape.
  template <class Task>
  TableTask(std::vector<Variant> table, const std::vector<ShapeRow<Task, Shape>>& shapes)
      : table_(std::move(table)) {
    static_assert(std::is_base_of_v<TableTask, Task>, "a shape row names the task's functions");
    for (const auto& row : shapes)
      shapes_.push_back(
          {row.shape, Bind(row.plan), Bind(row.tile), Bind(row.boundaries), row.image});
    CheckShapes();
  }

  const std::vector<Variant>& Table() const { return table_; }
  std::vector<std::string> Variants() const override {
    std::vector<std::string> names;
    for (const auto& v : table_)
      names.push_back(v.name);
    return names;
  }
  std::string Describe(const std::string& variant) const override {
    return Find(variant).description;
  }
  std::vector<std::string> KernelFiles(const std::vector<std::string>& variants) const override {
    std::vector<std::string> files;
    for (const auto& name : variants)
      if (std::find(files.begin(), files.end(), Find(name).file) == files.end())
        files.push_back(Find(name).file);
    return files;
  }
  // spec.localSize if set, else the row's default for the device type. On a CPU a work-group is
  // one core's loop over its work-items and barriers are costly, so CPU defaults are small.
  // The default is capped at the device's maximum work-group size (a power of two below it),
  // then halved until the variant's tile (Tile(), its knob shrunk as far as it goes unless
  // --tune gave it) fits the device's local memory; where none does, 1 (its plan then skips,
  // saying what even that needs).
  size_t LocalSize(const std::string& variant, const ProblemSpec& spec,
                   const DeviceInfo& device) const override {
    if (spec.localSize)
      return spec.localSize;
    const Variant& v = Find(variant);
    ProblemSpec s = spec;
    s.localSize =
        FloorPowerOfTwo(std::min(device.isGpu ? v.gpuLocal : v.cpuLocal, device.maxWorkGroupSize));
    while (s.localSize > 1 && !Tile(device, variant, s).fits)
      s.localSize /= 2;
    return s.localSize;
  }

  // The shape row's image; no row: none.
  bool TakesShape(const std::string& variant) const override {
    const Row* row = RowOf(Find(variant).shape);
    return row && row->image;
  }

  // The shape row's plan.
  LaunchPlan Plan(const DeviceInfo& device, const std::string& variant,
                  const ProblemSpec& spec) const override {
    const Variant& v = Find(variant);
    const Row* row = RowOf(v.shape);
    if (!row)
      throw std::logic_error(Name() + " variant '" + variant + "': no plan (" + NoRow(v) + ")");
    return row->plan(*this, device, v, spec);
  }
  // The shape row's tile; none: no local memory.
  LocalTile Tile(const DeviceInfo& device, const std::string& variant,
                 const ProblemSpec& spec) const override {
    const Variant& v = Find(variant);
    const Row* row = RowOf(v.shape);
    return row && row->tile ? row->tile(*this, device, v, spec)
                            : FixedTile(device, variant, spec, 0);
  }
  // The shape row's boundary sizes; none: none.
  std::vector<size_t> BoundarySizes(const DeviceInfo& device, const std::string& variant,
                                    const ProblemSpec& spec) const override {
    const Variant& v = Find(variant);
    const Row* row = RowOf(v.shape);
    return row && row->boundaries ? row->boundaries(*this, device, v, spec) : std::vector<size_t>{};
  }

 protected:
  const Variant& Find(const std::string& name) const {
    for (const auto& v : table_)
      if (v.name == name)
        return v;
    throw UsageError("unknown " + Name() + " variant '" + name + "'");
  }
  // The variant's tile at spec.localSize (Tile()); VariantSkipped (LocalMemorySkip) where it
  // does not fit the device's local memory.
  LocalTile FittingTile(const DeviceInfo& device, const Variant& v, const ProblemSpec& spec) const {
    LocalTile tile = Tile(device, v.name, spec);
    if (!tile.fits)
      throw VariantSkipped(LocalMemorySkip(device, tile));
    return tile;
  }

 private:
  template <class R>
  using Function =
      std::function<R(const TableTask&, const DeviceInfo&, const Variant&, const ProblemSpec&)>;
  struct Row {
    Shape shape;
    Function<LaunchPlan> plan;
    Function<LocalTile> tile;
    Function<std::vector<size_t>> boundaries;
    bool image = false;
  };
  // A function of the task (Task) called on this task; none for none.
  template <class Task, class R>
  static Function<R> Bind(R (Task::*f)(const DeviceInfo&, const Variant&, const ProblemSpec&)
                              const) {
    if (!f)
      return {};
    return [f](const TableTask& task, const DeviceInfo& device, const Variant& v,
               const ProblemSpec& spec) {
      return (static_cast<const Task&>(task).*f)(device, v, spec);
    };
  }
  const Row* RowOf(Shape shape) const {
    for (const auto& row : shapes_)
      if (row.shape == shape)
        return &row;
    return nullptr;
  }
  static std::string NoRow(const Variant& v) {
    return "its shape, number " + std::to_string(static_cast<long long>(v.shape)) +
           ", has no row in the task's table of shapes";
  }
  // Name() is not called: the task is not yet made.
  void CheckShapes() const {
    for (size_t i = 0; i < shapes_.size(); ++i) {
      const std::string shape =
          "shape number " + std::to_string(static_cast<long long>(shapes_[i].shape));
      if (!shapes_[i].plan)
        throw std::invalid_argument(shape + ": its row in the task's table of shapes has no plan");
      for (size_t j = 0; j < i; ++j)
        if (shapes_[j].shape == shapes_[i].shape)
          throw std::invalid_argument(shape + ": two rows in the task's table of shapes");
    }
    for (const auto& v : table_)
      if (!RowOf(v.shape))
        throw std::invalid_argument("variant '" + v.name + "': " + NoRow(v));
  }

  std::vector<Variant> table_;
  std::vector<Row> shapes_;  // empty: the task plans itself (Plan overridden)
};

}  // namespace rsb
