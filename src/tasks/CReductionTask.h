// CReductionTask: reduce n elements to one value with the operator (sum, min, max), in the
// variants of the course material (kernels/Reduction.cl) and a single-pass variant
// (kernels/SinglePassReduction.cl).
#pragma once

#include "engine/PlannedTask.h"

#include <string>
#include <vector>

namespace rsb {

// How the host drives a reduction kernel; several variants share one shape.
enum class ReductionShape {
  GlobalInterleaved,  // one launch per step, stride doubling (ReduceInterleaved)
  GlobalSequential,   // one launch per step, halving (ReduceSequential)
  MultiLevel,         // one launch per level of work-group partials, ping-pong buffers
  Atomic,             // fill with the identity, then one launch combining with atomics
  SinglePass,         // one launch: wide loads, work-group trees, last work-group combines
};

class CReductionTask : public TableTask<ReductionShape> {
 public:
  using Shape = ReductionShape;
  static const std::vector<Variant>& DefaultTable();
  // One row per shape: its plan, tile and boundary sizes (the functions below).
  static const std::vector<ShapeRow<CReductionTask, Shape>>& Shapes();
  // A task with another table (tests: a variant added as a kernel and one row).
  explicit CReductionTask(std::vector<Variant> table = DefaultTable());

  std::string Name() const override { return "reduction"; }
  std::vector<TuningKnob> Tunables() const override;
  std::vector<TunedSpace> TunedSpaces() const override;
  // The CPU reference, in parallel over fixed chunks of the input (Parallel.h): the same on any
  // number of cores, to the last bit for floating point; a floating-point sum with its bound.
  static Expected ReferenceReduce(const HostArray& input, Op op);

 protected:
  Expected Reference(const HostArray& input, const ProblemSpec& spec) const override;
  size_t OutputElements(const ProblemSpec&) const override { return 1; }

 private:
  // One plan function per shape.
  LaunchPlan GlobalTreePlan(const DeviceInfo& device, const Variant& v,
                            const ProblemSpec& spec) const;
  LaunchPlan MultiLevelPlan(const DeviceInfo& device, const Variant& v,
                            const ProblemSpec& spec) const;
  LaunchPlan AtomicPlan(const DeviceInfo& device, const Variant& v, const ProblemSpec& spec) const;
  LaunchPlan SinglePassPlan(const DeviceInfo& device, const Variant& v,
                            const ProblemSpec& spec) const;
  // The plan every shape starts from: the variant's file, the build options, its tile checked.
  LaunchPlan StartPlan(const DeviceInfo& device, const Variant& v, const ProblemSpec& spec) const;
  // Local memory: the work-group tree's L elements (decomposition, unrolled, atomic), with the
  // single-pass flag; none for the trees in global memory.
  LocalTile TreeTile(const DeviceInfo& device, const Variant& v, const ProblemSpec& spec) const;
  LocalTile SinglePassTile(const DeviceInfo& device, const Variant& v,
                           const ProblemSpec& spec) const;
  // Where each shape's plan changes (CReductionTask.cpp).
  std::vector<size_t> OneTileBoundaries(const DeviceInfo& device, const Variant& v,
                                        const ProblemSpec& spec) const;
  std::vector<size_t> LevelBoundaries(const DeviceInfo& device, const Variant& v,
                                      const ProblemSpec& spec) const;
  std::vector<size_t> SinglePassBoundaries(const DeviceInfo& device, const Variant& v,
                                           const ProblemSpec& spec) const;
};

}  // namespace rsb
