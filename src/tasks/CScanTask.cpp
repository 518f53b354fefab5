#include "tasks/CScanTask.h"

#include "engine/Case.h"
#include "engine/HostSums.h"
#include "platform/Errors.h"

#include <fmt/format.h>

#include <algorithm>

namespace rsb {

namespace {
constexpr const char* kAddBlockOffsets = "AddBlockOffsets";
// Status words live in generations of 30 bits (see SinglePassScan.cl).
constexpr cl_uint kMaxGeneration = (1u << 30) - 1;

// Single-pass tiles: local size x items elements. GPU: 256 x 32 (best of a sweep on the H100);
// CPU: one work-item per work-group scanning a long run sequentially, the way a core likes it.
// Whole tiles are moved as 4-element vectors, so items is a multiple of 4.
const std::vector<TuningKnob> kKnobs = {
    {"scan-gpu-items", "single-pass scan, GPU path: elements per work-item (register tile)", 32, 4,
     64, 4},
    // The same tile in bytes for 64-bit types (256 x 16 x 8 bytes: 32 KiB of local memory).
    {"scan-gpu-items-64", "single-pass scan, GPU path, long/ulong/double: elements per work-item",
     16, 4, 64, 4},
    {"scan-cpu-items", "single-pass scan, CPU path: elements per work-item", 65536, 4, 1u << 20, 4},
    // A tile larger than a work-group's local memory passes through it in parts
    // (SinglePassTile.clh): 256 x 32 elements of 64 bits are 64 KiB, two parts of 32.
    {"scan-gpu-stages",
     "single-pass scan, GPU path: parts the tile passes through local memory in, 1, 2 or 4 "
     "(0: the fewest in which it fits)",
     0, 0, 4, 1},
};

bool Inclusive(const ProblemSpec& spec) {
  return CScanTask::KindOf(spec) == ScanKind::Inclusive;
}

// Multi-level shapes: the elements of every level, levels[0] = n; level l + 1 holds the tile
// totals of level l; the last level fits in one tile.
std::vector<size_t> TileLevels(size_t n, size_t tile) {
  std::vector<size_t> levels = {n};
  while (levels.back() > tile)
    levels.push_back(CeilDiv(levels.back(), tile));
  return levels;
}
}  // namespace

const std::vector<CScanTask::Variant>& CScanTask::DefaultTable() {
  static const std::vector<Variant> table = {
      {"naive", "ScanNaiveStep", "Scan.cl", Shape::GlobalSteps, 256, 64,
       "Hillis-Steele in global memory, one launch per step, ping-pong buffers, O(n log n) work"},
      {"kogge-stone", "ScanTileKoggeStone", "Scan.cl", Shape::KoggeStoneTiles, 128, 64,
       "Kogge-Stone per work-group in double-buffered local memory, block sums scanned "
       "recursively"},
      {"work-efficient", "ScanTileWorkEfficient", "Scan.cl", Shape::BlellochTiles, 128, 16,
       "Blelloch up-sweep/down-sweep in local memory, O(n) work, block sums scanned recursively"},
      {"conflict-free", "ScanTileConflictFree", "Scan.cl", Shape::BlellochTiles, 128, 64,
       "work-efficient with local memory padded against bank conflicts"},
      {"single-pass", "ScanSinglePass", "SinglePassScan.cl", Shape::SinglePass, 256, 1,
       "one launch: chained scan over tiles with decoupled look-back (by a warp where the "
       "device reports 32-wide warps), 2n element transfers"},
  };
  return table;
}

const std::vector<ShapeRow<CScanTask, ScanShape>>& CScanTask::Shapes() {
  static const std::vector<ShapeRow<CScanTask, Shape>> shapes = {
      {Shape::GlobalSteps, &CScanTask::GlobalStepsPlan, nullptr, &CScanTask::GlobalStepsBoundaries},
      {Shape::KoggeStoneTiles, &CScanTask::TilesPlan, &CScanTask::KoggeStoneTile,
       &CScanTask::TilesBoundaries},
      {Shape::BlellochTiles, &CScanTask::TilesPlan, &CScanTask::BlellochTile,
       &CScanTask::TilesBoundaries},
      {Shape::SinglePass, &CScanTask::SinglePassPlan, &CScanTask::SinglePassLocalTile,
       &CScanTask::SinglePassBoundaries},
  };
  return shapes;
}

CScanTask::CScanTask(std::vector<Variant> table) : TableTask(std::move(table), Shapes()) {}

std::vector<TuningKnob> CScanTask::Tunables() const {
  return WithSharedKnobs(kKnobs);
}

std::vector<TunedSpace> CScanTask::TunedSpaces() const {
  return {{"single-pass", "gpu", 4, {"scan-gpu-items"}},
          {"single-pass", "gpu", 8, {"scan-gpu-items-64"}},
          {"single-pass", "cpu", 0, {"scan-cpu-items"}}};
}

const std::vector<ScanKind>& AllScanKinds() {
  static const std::vector<ScanKind> all = {ScanKind::Inclusive, ScanKind::Exclusive};
  return all;
}

std::string ToString(ScanKind k) {
  return k == ScanKind::Inclusive ? "inclusive" : "exclusive";
}

std::vector<TaskParameter> CScanTask::Parameters() const {
  TaskParameter kind;
  kind.name = kKindParam;
  kind.help = "Scan kind(s)";
  kind.field = "scan_kind";
  for (ScanKind k : AllScanKinds())
    kind.names.push_back(ToString(k));
  kind.value = size_t(ScanKind::Inclusive);
  kind.checkValues = {size_t(ScanKind::Inclusive), size_t(ScanKind::Exclusive)};  // both
  return {kind};
}

ScanKind CScanTask::KindOf(const ProblemSpec& spec) {
  const auto it = spec.params.find(kKindParam);
  return it != spec.params.end() && it->second == size_t(ScanKind::Exclusive) ? ScanKind::Exclusive
                                                                              : ScanKind::Inclusive;
}

void CScanTask::SetKind(ProblemSpec& spec, ScanKind kind) {
  spec.params[kKindParam] = size_t(kind);
}

Expected CScanTask::Reference(const HostArray& input, const ProblemSpec& spec) const {
  return ReferenceScan(input, spec.op, KindOf(spec));
}

// Every chunk's aggregate (in parallel), then the chunks' offsets in order (one value per 2^16
// elements, on one core). The scan itself runs where it is used: in the comparison.
Expected CScanTask::ReferenceScan(const HostArray& input, Op op, ScanKind kind) {
  const size_t n = input.Size(), chunks = HostChunks(n);
  Expected e(input.Type(), n, 0);
  e.approximate = IsFloatingPoint(input.Type()) && op == Op::Sum;
  Expected::ScanOffsets& s = e.scan.emplace();
  s.op = op;
  s.inclusive = kind == ScanKind::Inclusive;
  DispatchType(input.Type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    DispatchOp(op, [&](auto opTag) {
      constexpr Op O = decltype(opTag)::value;
      const T* x = input.As<T>();
      std::vector<ChunkAggregate<T>> aggregates(chunks);
      ParallelChunks(n, [&](size_t c, size_t begin, size_t end) {
        aggregates[c] = Aggregate<O>(x, begin, end, e.approximate);
      });
      ChunkAggregate<T> running{IdentityOf<T>(O), {}, 0};
      if (e.approximate) {
        s.sum.resize(chunks), s.comp.resize(chunks), s.absSum.resize(chunks);
      } else {
        s.acc = HostArray(input.Type(), chunks);
      }
      for (size_t c = 0; c < chunks; ++c) {
        if (e.approximate) {
          s.sum[c] = running.sum.sum, s.comp[c] = running.sum.comp, s.absSum[c] = running.absSum;
          running.sum.Add(aggregates[c].sum), running.absSum += aggregates[c].absSum;
        } else {
          s.acc.As<T>()[c] = running.acc;
          running.acc = Apply<O>(running.acc, aggregates[c].acc);
        }
      }
    });
  });
  return e;
}

LaunchPlan CScanTask::StartPlan(const DeviceInfo& device, const Variant& v,
                                const ProblemSpec& spec) const {
  FittingTile(device, v, spec);
  LaunchPlan plan;
  plan.file = v.file;
  plan.options =
      KernelBuildOptions(spec.type, spec.op) + fmt::format(" -DLOCAL_SIZE={}", spec.localSize);
  return plan;
}

// Where each shape's plan changes (L = spec.localSize):
//  - naive: L and 2L (one work-group of work-items; the steps change at every power of two);
//  - tiles: L (a tile's second half), a tile of 2L, a tile and a half (AddBlockOffsets' second
//    half of the last tile), and each level of block sums, (2L)^2 and (2L)^3;
//  - single-pass: one work-item's ITEMS elements, a tile of L x ITEMS, two tiles (a look-back
//    past an aggregate) and 33 tiles (past a warp's look-back window of 32 predecessors).
std::vector<size_t> CScanTask::GlobalStepsBoundaries(const DeviceInfo&, const Variant&,
                                                     const ProblemSpec& spec) const {
  return {spec.localSize, 2 * spec.localSize};
}

std::vector<size_t> CScanTask::TilesBoundaries(const DeviceInfo&, const Variant&,
                                               const ProblemSpec& spec) const {
  const size_t L = spec.localSize, tile = 2 * L;
  return {L, tile, tile + L, tile * tile, tile * tile * tile};
}

std::vector<size_t> CScanTask::SinglePassBoundaries(const DeviceInfo& device, const Variant& v,
                                                    const ProblemSpec& spec) const {
  const size_t items = SinglePassItems(device, v.name, spec);
  const size_t spTile = spec.localSize * items;
  return {items, spTile, 2 * spTile, 33 * spTile};
}

// One launch per offset 1, 2, 4, ... < n (one, a copy or shift, for n = 1), alternating the
// output and a ping-pong buffer so that the last step lands in the output. Each step reads and
// writes every element; the partners read at i - o are elements other work-items read too,
// served by the caches: not counted again.
LaunchPlan CScanTask::GlobalStepsPlan(const DeviceInfo& device, const Variant& v,
                                      const ProblemSpec& spec) const {
  const size_t size = SizeOf(spec.type), n = spec.n;
  const size_t steps = std::max<unsigned>(1, CeilLog2(n));
  LaunchPlan plan = StartPlan(device, v, spec);
  const size_t pingPong = plan.AddScratch(n * size);
  // SOLUTION BEGIN
  size_t src = kInputBuffer;
  for (size_t s = 0; s < steps; ++s) {
    const size_t dst = (steps - 1 - s) % 2 == 0 ? size_t(kOutputBuffer) : pingPong;
    const size_t offset = size_t(1) << s;
    plan.steps.push_back(KernelStep(v.kernel,
                                    {BufferArg{src}, BufferArg{dst}, IndexArg{n}, IndexArg{offset},
                                     cl_uint(s == 0 && !Inclusive(spec))},
                                    n, spec.localSize)
                             .Costs(n * size, n * size, n > offset ? n - offset : 0, 1));
    src = dst;
  }
  // SOLUTION END
  //! // TODO (naive): one launch per offset 1, 2, 4, ... < n (`steps` launches), alternating the
  //! // output and pingPong so that the last step writes the output; the first step reads the
  //! // input (shifted by one for an exclusive scan). This stub enqueues only the first step.
  //! const size_t dst = (steps - 1) % 2 == 0 ? size_t(kOutputBuffer) : pingPong;
  //! plan.steps.push_back(KernelStep(v.kernel,
  //!                                 {BufferArg{kInputBuffer}, BufferArg{dst}, IndexArg{n},
  //!                                  IndexArg{1}, cl_uint(!Inclusive(spec))},
  //!                                 n, spec.localSize)
  //!                          .Costs(n * size, n * size, n - 1, 1));
  return plan;
}

// Up: scan every level's tiles of B = 2L (level 0 from the input into the output, the block
// sums in place and exclusively), each writing its tiles' totals to the next level; down: add
// each level's offsets into the level below (AddBlockOffsets, top level down). Full tiles are
// computed (IDENTITY past the end).
LaunchPlan CScanTask::TilesPlan(const DeviceInfo& device, const Variant& v,
                                const ProblemSpec& spec) const {
  const size_t size = SizeOf(spec.type), L = spec.localSize, tile = 2 * L;
  const unsigned logTile = CeilLog2(tile);
  const std::vector<size_t> levels = TileLevels(spec.n, tile);
  LaunchPlan plan = StartPlan(device, v, spec);
  std::vector<size_t> sums;  // sums[l]: the tile totals of level l, i.e. level l + 1's data
  for (size_t m : levels)
    sums.push_back(plan.AddScratch(CeilDiv(m, tile) * size));
  // SOLUTION BEGIN
  auto data = [&](size_t l) { return l ? sums[l - 1] : size_t(kOutputBuffer); };
  for (size_t l = 0; l < levels.size(); ++l) {
    const size_t m = levels[l], tiles = CeilDiv(m, tile);
    uint64_t ops = 0, steps = 0;
    if (v.shape == Shape::KoggeStoneTiles) {
      steps = logTile;
      ops = tiles * (tile * logTile - (tile - 1));
    } else {
      steps = 2 * logTile;
      ops = tiles * (2 * (tile - 1) + (l == 0 && Inclusive(spec) ? tile : 0));
    }
    plan.steps.push_back(
        KernelStep(v.kernel,
                   {BufferArg{l ? data(l) : size_t(kInputBuffer)}, BufferArg{data(l)},
                    BufferArg{sums[l]}, IndexArg{m}, cl_uint(l == 0 && Inclusive(spec))},
                   tiles * L, L)
            .Costs(m * size, (m + tiles) * size, ops, steps)
            .As(l ? "block sums" : ""));
  }
  // Every element past the first tile gets its tile's offset, one offset read per tile.
  for (size_t l = levels.size() - 1; l-- > 0;) {
    const size_t m = levels[l], tiles = CeilDiv(m, tile);
    plan.steps.push_back(KernelStep(kAddBlockOffsets,
                                    {BufferArg{data(l)}, BufferArg{sums[l]}, IndexArg{m}},
                                    (tiles - 1) * L, L)
                             .Costs((m - tile + tiles - 1) * size, (m - tile) * size, m - tile, 1)
                             .As(l ? "block sums" : ""));
  }
  // SOLUTION END
  //! // TODO (kogge-stone, work-efficient, conflict-free): up, level by level: scan the tiles of
  //! // levels[l] elements (level 0 from the input into the output, higher levels in place in
  //! // sums[l - 1] and exclusively), each tile's total going to sums[l]; down, top level first:
  //! // AddBlockOffsets adds the scanned sums[l] into the tiles of level l but the first. This
  //! // stub enqueues only level 0: right for n <= 2L only.
  //! const size_t m = spec.n, tiles = CeilDiv(m, tile);
  //! plan.steps.push_back(KernelStep(v.kernel,
  //!                                 {BufferArg{kInputBuffer}, BufferArg{kOutputBuffer},
  //!                                  BufferArg{sums[0]}, IndexArg{m}, cl_uint(Inclusive(spec))},
  //!                                 tiles * L, L)
  //!                          .Costs(m * size, (m + tiles) * size, 0, logTile));
  return plan;
}

namespace {
// The knob of the single-pass scan's elements per work-item: by path and element size.
const char* SinglePassItemsKnob(bool gpu, const ProblemSpec& spec) {
  return !gpu ? "scan-cpu-items" : SizeOf(spec.type) == 8 ? "scan-gpu-items-64" : "scan-gpu-items";
}
// Whether the GPU tile (L x items elements of `size` bytes) splits into `stages` parts
// (SinglePassTile.clh): whole work-items per part, whole 16-byte vectors per work-item and part.
bool SinglePassStagesSplit(size_t L, size_t items, size_t size, size_t stages) {
  const size_t perVector = 16 / size;
  return (stages == 1 || stages == 2 || stages == 4) && L % stages == 0 &&
         items % (stages * perVector) == 0;
}
// The warp-shuffle work-group scan (inline PTX) where the device says it has 32-wide warps.
bool NvWarpScan(const DeviceInfo& device, const ProblemSpec& spec) {
  return device.nvWarpSize == 32 && spec.localSize % 32 == 0 && !spec.portable;
}
}  // namespace

LocalTile CScanTask::KoggeStoneTile(const DeviceInfo& device, const Variant& v,
                                    const ProblemSpec& spec) const {
  return FixedTile(device, v.name, spec, 2 * 2 * spec.localSize * SizeOf(spec.type));  // ping, pong
}

LocalTile CScanTask::BlellochTile(const DeviceInfo& device, const Variant& v,
                                  const ProblemSpec& spec) const {
  const uint64_t L = spec.localSize;
  return FixedTile(device, v.name, spec, (2 * L + (2 * L >> 5)) * SizeOf(spec.type));  // padded
}

LocalTile CScanTask::SinglePassLocalTile(const DeviceInfo& device, const Variant& v,
                                         const ProblemSpec& spec) const {
  const uint64_t size = SizeOf(spec.type), L = spec.localSize;
  // SinglePassScan.cl: the work-group scan's scratch, lTile and lPrefix; on the GPU path the
  // tile, or one of its parts, padded one element per 128 bytes (SP_PAD).
  const bool gpu = GpuPath(device, spec);
  const uint64_t scratch = gpu && NvWarpScan(device, spec) ? L / 32 : 4 * L;
  const uint64_t fixed = (scratch + 1) * size + sizeof(cl_uint);
  if (!gpu)
    return FixedTile(device, v.name, spec, fixed);
  const auto bytesAt = [&](size_t items, size_t stages) -> uint64_t {
    const uint64_t part = L * items / stages;
    return fixed + (part + (part >> (size == 8 ? 4 : 5))) * size;
  };
  // The stages given, else the fewest of 1, 2, 4 that can split the tile and fit (if none fits,
  // the most that can split it: the skip then names the least the tile needs).
  const size_t given = Tuned(kKnobs, spec, "scan-gpu-stages");
  const auto stagesAt = [&](size_t items) -> size_t {
    if (given != 0)
      return given;
    size_t most = 1;
    for (size_t s : {1, 2, 4})
      if (SinglePassStagesSplit(L, items, size, s)) {
        most = s;
        if (FitsLocalMemory(device, bytesAt(items, s)))
          return s;
      }
    return most;
  };
  LocalTile t = FitTile(device, kKnobs, v.name, spec, SinglePassItemsKnob(true, spec),
                        [&](size_t items) { return bytesAt(items, stagesAt(items)); });
  t.chosen["scan-gpu-stages"] = stagesAt(t.value);
  return t;
}

size_t CScanTask::SinglePassItems(const DeviceInfo& device, const std::string& variant,
                                  const ProblemSpec& spec) const {
  return GpuPath(device, spec) ? Tile(device, variant, spec).value
                               : Tuned(kKnobs, spec, SinglePassItemsKnob(false, spec));
}

size_t CScanTask::SinglePassTile(const DeviceInfo& device, const ProblemSpec& spec) const {
  const Case c = ResolveCase(*this, "single-pass", spec, device);
  return c.spec.localSize * SinglePassItems(device, "single-pass", c.spec);
}

// One launch over tiles of L x items; per tile a status word (two for a 64-bit type) written
// twice (aggregate, then inclusive prefix) and read about once by its successor's look-back.
LaunchPlan CScanTask::SinglePassPlan(const DeviceInfo& device, const Variant& v,
                                     const ProblemSpec& spec) const {
  const size_t size = SizeOf(spec.type), L = spec.localSize, n = spec.n;
  if (!device.int64BaseAtomics)
    throw VariantSkipped("single-pass needs 64-bit atomics (cl_khr_int64_base_atomics)");
  const bool gpu = GpuPath(device, spec);
  const LocalTile tile = FittingTile(device, v, spec);
  const size_t items = SinglePassItems(device, v.name, spec);
  const size_t stages = gpu ? tile.chosen.at("scan-gpu-stages") : 1;
  if (gpu && !SinglePassStagesSplit(L, items, size, stages))
    throw VariantSkipped(fmt::format(
        "single-pass at local size {}, {}={}: scan-gpu-stages={} cannot split its tile; allowed: "
        "1, 2 or 4 parts that divide the local size and leave each work-item a multiple of {} "
        "elements per part (0: the fewest in which the tile fits)",
        L, SinglePassItemsKnob(true, spec), items, stages, 16 / size));
  const size_t words = size == 8 ? 2 : 1;  // status words per tile (SinglePassLookBack.clh)
  LaunchPlan plan;
  plan.file = v.file;
  plan.options = KernelBuildOptions(spec.type, spec.op) +
                 fmt::format(" -DLOCAL_SIZE={} -DITEMS={} -DHAS_INT64_BASE_ATOMICS=1", L, items);
  if (!gpu)
    plan.options += " -DSP_RELOAD=1";
  else if (NvWarpScan(device, spec))
    plan.options += " -DSP_NV_WARP_SCAN=1";
  if (stages > 1)
    plan.options += fmt::format(" -DSP_STAGES={}", stages);
  if (spec.lookbackFallback)
    plan.options += " -DSP_FALLBACK_ONLY=1";
  const size_t tiles = CeilDiv(n, L * items);
  const size_t status = plan.AddScratch(tiles * words * sizeof(cl_ulong));
  const size_t ticket = plan.AddScratch(sizeof(cl_uint));
  // The status words and the ticket counter live across launches: each launch gets its number
  // (the generation) and the ticket of its first tile, so they are zeroed only before a case's
  // first launch and when the generation would wrap.
  plan.resets.push_back(
      FillStep(status, cl_ulong(0), tiles * words * sizeof(cl_ulong)).As("reset status words"));
  plan.resets.push_back(FillStep(ticket, cl_uint(0), sizeof(cl_uint)).As("reset ticket"));
  plan.resetEvery = kMaxGeneration;
  // Before a validated run the status words claim an inclusive prefix of poison from the run
  // before (its generation): a kernel that checks the generation ignores them, one that does not
  // returns poison. The ticket counter stays as the protocol left it.
  const cl_ulong stale = (cl_ulong(2) << 32) | 0x7F7F7F7Full;
  const auto* p = reinterpret_cast<const unsigned char*>(&stale);
  plan.poison = {{std::vector<unsigned char>(p, p + sizeof stale), 34}, {}};
  plan.steps.push_back(KernelStep(v.kernel,
                                  {BufferArg{kInputBuffer}, BufferArg{kOutputBuffer}, IndexArg{n},
                                   cl_uint(Inclusive(spec)), BufferArg{status}, BufferArg{ticket},
                                   RunArg{RunArg::kGroupsBefore}, RunArg{RunArg::kRunNumber}},
                                  tiles * L, L)
                           .Costs(n * size + tiles * words * sizeof(cl_ulong),
                                  n * size + 2 * tiles * words * sizeof(cl_ulong),
                                  2 * n + tiles * (L * CeilLog2(L) + 2),
                                  2 * items + CeilLog2(L) + 2));
  return plan;
}

}  // namespace rsb
