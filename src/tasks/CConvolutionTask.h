// CConvolutionTask: convolve n elements (1-D) or a width x height image (2-D, row-major) with a
// random odd-width mask, ghost elements 0, in the variants of the course material
// (kernels/Convolution.cl): basic, mask in constant memory, tiled with the halo in local memory,
// tiled with the halo through the cache; basic and tiled in 2-D. Float and double.
#pragma once

#include "engine/PlannedTask.h"

#include <string>
#include <vector>

namespace rsb {

// How the host drives a convolution kernel (and what its traffic model counts).
enum class ConvolutionShape {
  Basic1D,     // one work-item per output; input and mask reads from global memory
  Constant1D,  // one work-item per output; input from global memory, mask from __constant
  Tiled1D,     // work-groups of TILE = L * K outputs; input tile and halo through local memory
  Cached1D,    // work-groups of TILE outputs; tile through local memory, halo from global
  Basic2D,     // one work-item per output pixel; input and mask from global memory
  Tiled2D,     // work-groups of OX x OY outputs; input tile and halo through local memory
};

class CConvolutionTask : public TableTask<ConvolutionShape> {
 public:
  using Shape = ConvolutionShape;
  static const std::vector<Variant>& DefaultTable();
  // One row per shape: its plan, tile and boundary sizes (the functions below).
  static const std::vector<ShapeRow<CConvolutionTask, Shape>>& Shapes();
  explicit CConvolutionTask(std::vector<Variant> table = DefaultTable());

  // The widest masks: 1-D and 2-D (--mask-width).
  static constexpr size_t kMaxMask1D = 63, kMaxMask2D = 31;

  std::string Name() const override { return "convolution"; }
  std::vector<TuningKnob> Tunables() const override;
  std::vector<TunedSpace> TunedSpaces() const override;
  std::vector<TaskParameter> Parameters() const override;
  std::vector<ElementType> Types() const override {
    return {ElementType::Float, ElementType::Double};
  }
  // A convolution is a sum of products: its results record the operator sum.
  std::vector<Op> Ops() const override { return {Op::Sum}; }
  std::vector<Extent> DefaultSizes() const override;
  void CheckProblem(const ProblemSpec& spec,
                    const std::vector<std::string>& variants) const override;

  // --explain: W multiply-adds for each of the n outputs in 1-D, W^2 in 2-D, ghost taps
  // included, as the plans count their work.
  uint64_t SequentialWork(const std::string& variant, const ProblemSpec& spec) const override;
  std::vector<Extent> BoundaryShapes(const DeviceInfo& device, const std::string& variant,
                                     const ProblemSpec& spec) const override;

  // The masks of a problem (random from its seed): W elements, and W x W row-major.
  static HostArray Mask1D(const ProblemSpec& spec, size_t width);
  static HostArray Mask2D(const ProblemSpec& spec, size_t width);
  // The CPU references, in double, with an error bound per output (HostData.h's Expected):
  // eps(T) * (terms + 2) * sum |mask * input| over the output's terms (W, or W^2 in 2-D), the
  // worst case of a sequential float sum of that many products.
  static Expected Reference1D(const HostArray& input, const HostArray& mask);
  static Expected Reference2D(const HostArray& input, const HostArray& mask, size_t width,
                              size_t height);

 protected:
  Expected Reference(const HostArray& input, const ProblemSpec& spec) const override;
  Expected KeyedReference(const HostArray& input, const ProblemSpec& spec,
                          const std::string& key) const override;
  std::string ReferenceKey(const std::string& variant) const override;
  size_t OutputElements(const ProblemSpec& spec) const override { return spec.n; }
  uint64_t ReferenceBytes(const ProblemSpec& spec) const override {
    return BoundedReferenceBytes(spec.type, spec.n);
  }
  std::vector<HostArray> ConstInputs(const ProblemSpec& spec) const override;

 private:
  size_t MaskWidth(const ProblemSpec& spec) const;
  // The variant's ITEMS: tiled-1d, cached-1d outputs per work-item, tiled-2d rows per
  // work-item (Tile()'s value); the others build with convolution-items' value (unused).
  size_t Items(const DeviceInfo& device, const std::string& variant, const ProblemSpec& spec) const;
  // tiled-2d: OX, OY outputs at spec.localSize and `rows` rows per work-item.
  static std::pair<size_t, size_t> Tile2D(const ProblemSpec& spec, size_t rows);
  std::string Options(const ProblemSpec& spec, size_t items) const;  // build options
  // One plan function per family of shapes.
  LaunchPlan PerOutputPlan(const DeviceInfo& device, const Variant& v,
                           const ProblemSpec& spec) const;
  LaunchPlan Tiled1DPlan(const DeviceInfo& device, const Variant& v, const ProblemSpec& spec) const;
  LaunchPlan Tiled2DPlan(const DeviceInfo& device, const Variant& v, const ProblemSpec& spec) const;
  // The plan every shape starts from: the variant's file, the build options at its ITEMS
  // (Items()), its tile checked.
  LaunchPlan StartPlan(const DeviceInfo& device, const Variant& v, const ProblemSpec& spec) const;
  // tiled-1d, cached-1d: the tile of L x convolution-items elements (tiled-1d with its two
  // halos of W / 2); tiled-2d: the (OX + 2 HP) x (OY + 2R) cells of Tile2D with its halo, OY
  // from convolution-rows. Each knob shrinks (from its default) to fit the device's local memory.
  LocalTile Tiled1DTile(const DeviceInfo& device, const Variant& v, const ProblemSpec& spec) const;
  LocalTile Tiled2DTile(const DeviceInfo& device, const Variant& v, const ProblemSpec& spec) const;
  // Where the 1-D plans change shape (CConvolutionTask.cpp); the 2-D ones: BoundaryShapes.
  std::vector<size_t> PerOutputBoundaries(const DeviceInfo& device, const Variant& v,
                                          const ProblemSpec& spec) const;
  std::vector<size_t> Tiled1DBoundaries(const DeviceInfo& device, const Variant& v,
                                        const ProblemSpec& spec) const;
};

}  // namespace rsb
