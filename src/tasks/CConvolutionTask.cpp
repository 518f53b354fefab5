#include "tasks/CConvolutionTask.h"

#include "platform/Errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace rsb {

namespace {

const std::vector<TuningKnob> kKnobs = {
    {"convolution-items", "tiled-1d, cached-1d: outputs per work-item (tile = local size x items)",
     4, 1, 16},
    // 8 rows: on the H100 (NVIDIA 580.159.04) at 8192x8192, L = 256 (docs/BENCHMARKS.md, "The
    // tiled 2-D convolution"), with the whole load share in flight: 343-344 Gelem/s at mask 5 and
    // 244-245 at mask 9 against 341.5 and 207.4 at 4 rows: a tile row read into registers serves
    // more outputs.
    {"convolution-rows", "tiled-2d: rows (outputs) per work-item", 8, 1, 16},
    // Wider tiles read less halo per output (HP columns each side of 4 x across).
    {"convolution-across", "tiled-2d: work-items across a tile (at most; 4 columns each)", 16, 1,
     64},
};

const char* kMaskWidth = "mask-width";

// The traffic helpers below are [[maybe_unused]]: the hand-out's plan stubs do not call them.

// Taps of all len outputs that fall inside [0, len) with a mask of radius r (ghosts excluded):
// sum over i of |[i - r, i + r] n [0, len)|.
[[maybe_unused]] uint64_t InBoundsTaps(uint64_t len, uint64_t r) {
  if (len >= 2 * r + 1)
    return len * (2 * r + 1) - r * (r + 1);
  uint64_t taps = 0;
  for (uint64_t i = 0; i < len; ++i)
    taps += std::min(len - 1, i + r) - (i >= r ? i - r : 0) + 1;
  return taps;
}

// Sum over the tiles of one group's count(g), tiles of `tile` outputs over len outputs, with a
// halo of r: the groups within r of an end are counted one by one, the others all equal one
// interior group's (the count is the same wherever the halo stays inside [0, len)).
template <class Count>
uint64_t OverTiles(uint64_t len, uint64_t tile, uint64_t r, Count count) {
  const uint64_t groups = CeilDiv(len, tile), edge = r / tile + 2;
  if (groups <= 2 * edge + 1) {
    uint64_t total = 0;
    for (uint64_t g = 0; g < groups; ++g)
      total += count(g);
    return total;
  }
  uint64_t total = (groups - 2 * edge) * count(edge);
  for (uint64_t g = 0; g < edge; ++g)
    total += count(g) + count(groups - 1 - g);
  return total;
}

// Input elements a tile loads with its halo: [g*tile - r, g*tile + tile + r) n [0, len).
[[maybe_unused]] uint64_t TileWithHaloReads(uint64_t len, uint64_t tile, uint64_t r) {
  return OverTiles(len, tile, r, [&](uint64_t g) {
    const uint64_t s = g * tile;
    return std::min(len, s + tile + r) - (s >= r ? s - r : 0);
  });
}

// Halo reads from global memory of cached-1d: the taps inside [0, len) and outside the tile.
[[maybe_unused]] uint64_t CachedHaloReads(uint64_t len, uint64_t tile, uint64_t r) {
  return OverTiles(len, tile, r, [&](uint64_t g) {
    const uint64_t s = g * tile, e = std::min(len, s + tile);
    uint64_t reads = 0;
    for (uint64_t i = s; i < e; ++i) {
      const uint64_t lo = i >= r ? i - r : 0, hi = std::min(len - 1, i + r);
      reads += (lo < s ? s - lo : 0) + (hi >= s + tile ? hi - (s + tile) + 1 : 0);
    }
    return reads;
  });
}

// An error bound for a sum of `terms` products whose magnitudes add up to absSum, computed in T.
template <class T>
double Bound(double absSum, size_t terms) {
  return std::numeric_limits<T>::epsilon() * double(terms + 2) * absSum;
}

}  // namespace

const std::vector<CConvolutionTask::Variant>& CConvolutionTask::DefaultTable() {
  static const std::vector<Variant> table = {
      {"basic-1d", "ConvolutionBasic1D", "Convolution.cl", Shape::Basic1D, 256, 64,
       "1-D, one work-item per output, mask and input from global memory"},
      {"constant-1d", "ConvolutionConstant1D", "Convolution.cl", Shape::Constant1D, 256, 64,
       "1-D, one work-item per output, the mask in __constant memory"},
      {"tiled-1d", "ConvolutionTiled1D", "Convolution.cl", Shape::Tiled1D, 256, 64,
       "1-D, input tile with both halos loaded into local memory, computed from there"},
      {"cached-1d", "ConvolutionCached1D", "Convolution.cl", Shape::Cached1D, 256, 64,
       "1-D, the tile's own elements in local memory, halo read through the cache"},
      {"basic-2d", "ConvolutionBasic2D", "Convolution.cl", Shape::Basic2D, 256, 64,
       "2-D image, one work-item per output, mask and input from global memory"},
      {"tiled-2d", "ConvolutionTiled2D", "Convolution.cl", Shape::Tiled2D, 256, 64,
       "2-D image, input tile with its halo in local memory, rows per work-item in registers"},
  };
  return table;
}

const std::vector<ShapeRow<CConvolutionTask, ConvolutionShape>>& CConvolutionTask::Shapes() {
  using Task = CConvolutionTask;
  static const std::vector<ShapeRow<Task, Shape>> shapes = {
      {Shape::Basic1D, &Task::PerOutputPlan, nullptr, &Task::PerOutputBoundaries},
      {Shape::Constant1D, &Task::PerOutputPlan, nullptr, &Task::PerOutputBoundaries},
      {Shape::Tiled1D, &Task::Tiled1DPlan, &Task::Tiled1DTile, &Task::Tiled1DBoundaries},
      {Shape::Cached1D, &Task::Tiled1DPlan, &Task::Tiled1DTile, &Task::Tiled1DBoundaries},
      {Shape::Basic2D, &Task::PerOutputPlan, nullptr, nullptr, /*image=*/true},
      {Shape::Tiled2D, &Task::Tiled2DPlan, &Task::Tiled2DTile, nullptr, /*image=*/true},
  };
  return shapes;
}

CConvolutionTask::CConvolutionTask(std::vector<Variant> table)
    : TableTask(std::move(table), Shapes()) {}

std::vector<TuningKnob> CConvolutionTask::Tunables() const {
  return WithSharedKnobs(kKnobs);
}

// tiled-2d's width before its rows, whose best depends on it (H200: 10 rows at 32 across, 8 at
// 16).
std::vector<TunedSpace> CConvolutionTask::TunedSpaces() const {
  return {{"tiled-1d", "", 0, {"convolution-items"}},
          {"cached-1d", "", 0, {"convolution-items"}},
          {"tiled-2d", "", 0, {"convolution-across", "convolution-rows"}}};
}

std::vector<TaskParameter> CConvolutionTask::Parameters() const {
  TaskParameter width;
  width.name = kMaskWidth;
  width.help = "mask width W (odd; 2-D masks are W x W, at most 31)";
  width.value = 5;
  width.min = 1, width.max = kMaxMask1D;
  width.odd = true;
  // Every class: no halo (1), a radius of one (3), the default, a halo wider than a small tile
  // (17), the widest 2-D and 1-D masks.
  width.checkValues = {1, 3, 5, 17, kMaxMask2D, kMaxMask1D};
  return {width};
}

std::vector<Extent> CConvolutionTask::DefaultSizes() const {
  return {{size_t(1) << 24, 0}, {size_t(1) << 24, 4096}};
}

size_t CConvolutionTask::MaskWidth(const ProblemSpec& spec) const {
  return Param(Parameters(), spec, kMaskWidth);
}

size_t CConvolutionTask::Items(const DeviceInfo& device, const std::string& variant,
                               const ProblemSpec& spec) const {
  const LocalTile tile = Tile(device, variant, spec);
  return tile.knob.empty() ? Tuned(kKnobs, spec, "convolution-items") : tile.value;
}

LocalTile CConvolutionTask::Tiled1DTile(const DeviceInfo& device, const Variant& v,
                                        const ProblemSpec& spec) const {
  const size_t size = SizeOf(spec.type), r = MaskWidth(spec) / 2, L = spec.localSize;
  const size_t halos = v.shape == Shape::Tiled1D ? 2 * r : 0;
  return FitTile(device, kKnobs, v.name, spec, "convolution-items",
                 [&](size_t items) { return (L * items + halos) * size; });
}

LocalTile CConvolutionTask::Tiled2DTile(const DeviceInfo& device, const Variant& v,
                                        const ProblemSpec& spec) const {
  const size_t size = SizeOf(spec.type), r = MaskWidth(spec) / 2;
  return FitTile(device, kKnobs, v.name, spec, "convolution-rows", [&](size_t rows) {
    const auto [ox, oy] = Tile2D(spec, rows);
    const size_t hp = (r + 3) / 4 * 4;  // the rows start HP columns left of the tile
    return uint64_t(ox + 2 * hp) * (oy + 2 * r) * size;
  });
}

uint64_t CConvolutionTask::SequentialWork(const std::string& variant,
                                          const ProblemSpec& spec) const {
  const uint64_t w = MaskWidth(spec);
  return uint64_t(spec.n) * (TakesShape(variant) ? w * w : w);
}

// The tiled-2d output tile (kernels/Convolution.cl): TPX = min(L, convolution-across, 16 by
// default) work-items across, each computing 4 columns, and L / TPX down, each computing `rows`
// rows.
std::pair<size_t, size_t> CConvolutionTask::Tile2D(const ProblemSpec& spec, size_t rows) {
  const size_t tpx = std::max<size_t>(
      1, std::min<size_t>(spec.localSize, Tuned(kKnobs, spec, "convolution-across")));
  return {4 * tpx, spec.localSize / tpx * rows};
}

void CConvolutionTask::CheckProblem(const ProblemSpec& spec,
                                    const std::vector<std::string>& variants) const {
  const size_t w = MaskWidth(spec);
  std::vector<std::string> twoD;
  for (const auto& v : variants)
    if (TakesShape(v))
      twoD.push_back(v);
  if (twoD.size() < variants.size() && w > spec.n)
    throw UsageError(
        fmt::format("--mask-width {}: wider than the input (n = {}); allowed: an odd width up to n",
                    w, spec.n));
  if (twoD.empty())
    return;
  if (w > kMaxMask2D)
    throw UsageError(fmt::format(
        "--mask-width {}: too wide for the 2-D variants ({}); allowed: an odd width from 1 to {} "
        "for them (1-D variants take up to {})",
        w, fmt::format("{}", fmt::join(twoD, ", ")), kMaxMask2D, kMaxMask1D));
  if (w > spec.Width() || w > spec.Height())
    throw UsageError(fmt::format(
        "--mask-width {}: wider than the image ({}x{}); allowed: an odd width up to the image's "
        "width and height",
        w, spec.Width(), spec.Height()));
}

HostArray CConvolutionTask::Mask1D(const ProblemSpec& spec, size_t width) {
  return RandomInput(spec.type, width, spec.seed * 0x9E3779B97F4A7C15ull + 1);
}

HostArray CConvolutionTask::Mask2D(const ProblemSpec& spec, size_t width) {
  return RandomInput(spec.type, width * width, spec.seed * 0x9E3779B97F4A7C15ull + 2);
}

std::vector<HostArray> CConvolutionTask::ConstInputs(const ProblemSpec& spec) const {
  const size_t w = MaskWidth(spec);
  return {Mask1D(spec, w), Mask2D(spec, std::min(w, kMaxMask2D))};
}

Expected CConvolutionTask::Reference1D(const HostArray& input, const HostArray& mask) {
  const size_t n = input.Size(), w = mask.Size(), r = w / 2;
  Expected e(input.Type(), n);
  e.approximate = true;
  e.value.resize(n), e.bound.resize(n);
  DispatchType(input.Type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = input.As<T>();
    const T* m = mask.As<T>();
    for (size_t i = 0; i < n; ++i) {
      double sum = 0, abs = 0;
      for (size_t j = 0; j < w; ++j) {
        const size_t k = i + j - r;  // wraps left of 0
        if (k < n) {
          const double p = double(m[j]) * double(x[k]);
          sum += p, abs += std::abs(p);
        }
      }
      e.value[i] = sum;
      e.bound[i] = Bound<T>(abs, w);
      e.exact.As<T>()[i] = T(sum);
    }
  });
  return e;
}

Expected CConvolutionTask::Reference2D(const HostArray& input, const HostArray& mask, size_t width,
                                       size_t height) {
  const size_t n = input.Size(), w = size_t(std::lround(std::sqrt(double(mask.Size())))), r = w / 2;
  Expected e(input.Type(), n);
  e.approximate = true;
  e.value.resize(n), e.bound.resize(n);
  DispatchType(input.Type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = input.As<T>();
    const T* m = mask.As<T>();
    for (size_t y = 0; y < height; ++y)
      for (size_t c = 0; c < width; ++c) {
        double sum = 0, abs = 0;
        for (size_t a = 0; a < w; ++a) {
          const size_t row = y + a - r;
          if (row >= height)
            continue;
          for (size_t b = 0; b < w; ++b) {
            const size_t col = c + b - r;
            if (col < width) {
              const double p = double(m[a * w + b]) * double(x[row * width + col]);
              sum += p, abs += std::abs(p);
            }
          }
        }
        const size_t i = y * width + c;
        e.value[i] = sum;
        e.bound[i] = Bound<T>(abs, w * w);
        e.exact.As<T>()[i] = T(sum);
      }
  });
  return e;
}

std::string CConvolutionTask::ReferenceKey(const std::string& variant) const {
  return TakesShape(variant) ? "2d" : "1d";
}

Expected CConvolutionTask::Reference(const HostArray& input, const ProblemSpec& spec) const {
  return Reference1D(input, Mask1D(spec, MaskWidth(spec)));
}

Expected CConvolutionTask::KeyedReference(const HostArray& input, const ProblemSpec& spec,
                                          const std::string& key) const {
  if (key != "2d")
    return Reference(input, spec);
  return Reference2D(input, Mask2D(spec, MaskWidth(spec)), spec.Width(), spec.Height());
}

std::string CConvolutionTask::Options(const ProblemSpec& spec, size_t items) const {
  std::string options = KernelBuildOptions(spec.type, Op::Sum) +
                        fmt::format(" -DMASK_WIDTH={} -DLOCAL_SIZE={} -DITEMS={}", MaskWidth(spec),
                                    spec.localSize, items);
  // Only where it is not the default, so that a hand-in's Convolution.cl of before the knob
  // (which defines TPX from 16 itself) builds as it did.
  if (const size_t across = Tuned(kKnobs, spec, "convolution-across"); across != 16)
    options += fmt::format(" -DTPX_MAX={}", across);
  return options;
}

LaunchPlan CConvolutionTask::StartPlan(const DeviceInfo& device, const Variant& v,
                                       const ProblemSpec& spec) const {
  FittingTile(device, v, spec);
  LaunchPlan plan;
  plan.file = v.file;
  plan.options = Options(spec, Items(device, v.name, spec));
  // tiled-2d's loops unrolled only on a GPU: on a CPU device they gain no speed and cost the
  // compiler up to 4x the time, and on a simulator (Oclgrind: a GPU that times nothing) they cost
  // its compiler half of the bare gate's convolution time (Convolution.cl, UNROLL). Every
  // variant's build says so, not only tiled-2d's: the other variants' builds compile the whole
  // file first (ProgramCache::Get), its tiled-2d kernel included.
  if (!device.isGpu || device.isSimulator)
    plan.options += " -DNO_UNROLL=1";
  return plan;
}

// Where the plans change shape (L = spec.localSize, TILE = L * items): the mask width (the
// narrowest input), a work-group of L outputs, a tile, two tiles (the first interior halo).
std::vector<size_t> CConvolutionTask::PerOutputBoundaries(const DeviceInfo&, const Variant&,
                                                          const ProblemSpec& spec) const {
  return {MaskWidth(spec), spec.localSize};
}

std::vector<size_t> CConvolutionTask::Tiled1DBoundaries(const DeviceInfo& device, const Variant& v,
                                                        const ProblemSpec& spec) const {
  const size_t w = MaskWidth(spec), L = spec.localSize, tile = L * Items(device, v.name, spec);
  return {w, L, tile, tile + w / 2, 2 * tile};
}

// Images around the 2-D tile (Tile2D: OX x OY) and its neighbours, the mask itself, thin images
// (1 x n, n x 1, which only a mask of 1 fits), odd squares and a large odd image (smaller for
// wide masks: W^2 taps per output on a CPU).
std::vector<Extent> CConvolutionTask::BoundaryShapes(const DeviceInfo& device,
                                                     const std::string& variant,
                                                     const ProblemSpec& spec) const {
  const size_t w = MaskWidth(spec);
  // The rows its tile takes; basic-2d (no tile): around the tile tiled-2d takes by default.
  const LocalTile tile = Tile(device, variant, spec);
  const size_t rows =
      tile.knob == "convolution-rows" ? tile.value : Tuned(kKnobs, spec, "convolution-rows");
  const auto [ox, oy] = Tile2D(spec, rows);
  const std::vector<std::pair<size_t, size_t>> shapes = {
      {1, 1},
      {2, 1},
      {1, 2},
      {1, 1000},
      {1000, 1},
      {w, w},
      {w + 1, w + 1},
      {w, w + 1},
      {w + 1, w},
      {w, 1000},
      {1000, w},
      {ox, oy},
      {ox - 1, oy + 1},
      {ox + 1, oy - 1},
      {ox + 1, oy + 1},
      {2 * ox + 1, 2 * oy - 1},
      {33, 33},
      {101, 101},
      w <= 9 ? std::pair<size_t, size_t>{1001, 999} : std::pair<size_t, size_t>{257, 255}};
  std::vector<Extent> out;
  for (const auto& [width, height] : shapes) {
    const Extent e{width * height, height};
    if (width && height && std::find(out.begin(), out.end(), e) == out.end())
      out.push_back(e);
  }
  return out;
}

// One work-item per output. Reads: the input taps inside the input (ghosts are not read) and
// the mask: basic-1d every mask element per output, basic-2d one per input tap read (it skips
// the mask with the ghost), constant-1d none from global memory (the constant cache).
LaunchPlan CConvolutionTask::PerOutputPlan(const DeviceInfo& device, const Variant& v,
                                           const ProblemSpec& spec) const {
  const size_t size = SizeOf(spec.type), w = MaskWidth(spec), r = w / 2, n = spec.n;
  LaunchPlan plan = StartPlan(device, v, spec);
  // SOLUTION BEGIN
  if (v.shape == Shape::Basic2D) {
    const uint64_t taps = InBoundsTaps(spec.Width(), r) * InBoundsTaps(spec.Height(), r);
    plan.steps.push_back(
        KernelStep(v.kernel,
                   {BufferArg{kInputBuffer}, BufferArg{kFirstConstInput + 1},
                    BufferArg{kOutputBuffer}, IndexArg{spec.Width()}, IndexArg{spec.Height()}},
                   n, spec.localSize)
            .Costs(2 * taps * size, n * size, n * w * w, 1)
            .Repeated((2 * taps - n - w * w) * size));  // distinct: each pixel, each mask cell
  } else {
    const uint64_t taps = InBoundsTaps(n, r);
    const uint64_t maskReads = v.shape == Shape::Basic1D ? n * w : 0;
    plan.steps.push_back(KernelStep(v.kernel,
                                    {BufferArg{kInputBuffer}, BufferArg{kFirstConstInput},
                                     BufferArg{kOutputBuffer}, IndexArg{n}},
                                    n, spec.localSize)
                             .Costs((taps + maskReads) * size, n * size, n * w, 1)
                             .Repeated((taps + maskReads - n - (maskReads ? w : 0)) * size));
  }
  // SOLUTION END
  //! // TODO (basic-1d, constant-1d, basic-2d): one launch of v.kernel with one work-item per
  //! // output: arguments input, mask (BufferArg{kFirstConstInput} in 1-D,
  //! // kFirstConstInput + 1 in 2-D), output, then n (1-D) or width and height (2-D).
  //! static_cast<void>(v), static_cast<void>(size), static_cast<void>(r), static_cast<void>(n);
  return plan;
}

// Work-groups of L work-items, each computing TILE = L * items consecutive outputs. tiled-1d
// reads its tile and both halos (inside the input); cached-1d reads its tile, and each output's
// halo taps from global memory.
LaunchPlan CConvolutionTask::Tiled1DPlan(const DeviceInfo& device, const Variant& v,
                                         const ProblemSpec& spec) const {
  const size_t size = SizeOf(spec.type), w = MaskWidth(spec), r = w / 2, n = spec.n;
  LaunchPlan plan = StartPlan(device, v, spec);
  const size_t L = spec.localSize, tile = L * Items(device, v.name, spec);
  // SOLUTION BEGIN
  const uint64_t reads =
      v.shape == Shape::Tiled1D ? TileWithHaloReads(n, tile, r) : n + CachedHaloReads(n, tile, r);
  plan.steps.push_back(KernelStep(v.kernel,
                                  {BufferArg{kInputBuffer}, BufferArg{kFirstConstInput},
                                   BufferArg{kOutputBuffer}, IndexArg{n}},
                                  CeilDiv(n, tile) * L, L)
                           .Costs(reads * size, n * size, n * w, 2)
                           .Repeated((reads - n) * size));  // halos: the neighbours' elements
  // SOLUTION END
  //! // TODO (tiled-1d, cached-1d): one launch of v.kernel with ceil(n / tile) work-groups of L:
  //! // arguments input, mask (BufferArg{kFirstConstInput}), output, n.
  //! static_cast<void>(v), static_cast<void>(size), static_cast<void>(r), static_cast<void>(n);
  //! static_cast<void>(tile);
  return plan;
}

// Work-groups of L work-items, each computing an OX x OY tile of the image; each loads the
// tile with its halo (the cells inside the image: the product of the columns and the rows).
LaunchPlan CConvolutionTask::Tiled2DPlan(const DeviceInfo& device, const Variant& v,
                                         const ProblemSpec& spec) const {
  const size_t size = SizeOf(spec.type), w = MaskWidth(spec), r = w / 2, n = spec.n;
  LaunchPlan plan = StartPlan(device, v, spec);
  const size_t L = spec.localSize;
  const auto [ox, oy] = Tile2D(spec, Items(device, v.name, spec));  // rows per work-item
  const size_t width = spec.Width(), height = spec.Height();
  // SOLUTION BEGIN
  const size_t groups = CeilDiv(width, ox) * CeilDiv(height, oy);
  // Where the width is a multiple of 4 the tile's rows are loaded as aligned 4-cell vectors, from
  // HP = r rounded up to 4 columns left of the tile to HP right of it.
  const size_t across = width % 4 == 0 ? (r + 3) / 4 * 4 : r;
  const uint64_t reads = TileWithHaloReads(width, ox, across) * TileWithHaloReads(height, oy, r);
  plan.steps.push_back(KernelStep(v.kernel,
                                  {BufferArg{kInputBuffer}, BufferArg{kFirstConstInput + 1},
                                   BufferArg{kOutputBuffer}, IndexArg{width}, IndexArg{height}},
                                  groups * L, L)
                           .Costs(reads * size, n * size, n * w * w, 2)
                           .Repeated((reads - n) * size));  // halos: the neighbours' cells
  // SOLUTION END
  //! // TODO (tiled-2d): one launch of v.kernel with ceil(width / OX) * ceil(height / OY)
  //! // work-groups of L: arguments input, mask (BufferArg{kFirstConstInput + 1}), output, width,
  //! // height.
  //! static_cast<void>(v), static_cast<void>(size), static_cast<void>(r), static_cast<void>(n);
  //! static_cast<void>(width), static_cast<void>(height), static_cast<void>(ox);
  //! static_cast<void>(oy), static_cast<void>(L);
  return plan;
}

}  // namespace rsb
