#include "CScanTask.h"

#include "Errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace rsb {

namespace {
constexpr const char* kFile = "Scan.cl";
constexpr const char* kAddBlockOffsets = "AddBlockOffsets";
// Single-pass tiles: LocalSize * items elements. GPU: 256 x 32 (best of a sweep on the H100);
// one work-item per work-group scanning a long run sequentially, the way a core likes it.
const size_t kGpuItems = TuningValue("RSB_TUNE_SCAN_GPU_ITEMS", 32);
const size_t kGpuLocal = TuningValue("RSB_TUNE_SCAN_GPU_LOCAL", 256);
const size_t kCpuItems = TuningValue("RSB_TUNE_SCAN_CPU_ITEMS", 65536);
const size_t kCpuLocal = TuningValue("RSB_TUNE_SCAN_CPU_LOCAL", 1);
// Status words live in generations of 30 bits (see SinglePassLookBack.clh).
constexpr cl_uint kMaxGeneration = (1u << 30) - 1;

ScanKind KindOf(const ProblemSpec& spec) {
  return spec.scanKind.value_or(ScanKind::Inclusive);
}

// GlobalSteps: one launch per offset 1, 2, 4, ... < n, and one (a copy or shift) for n = 1.
size_t NaiveSteps(size_t n) {
  return std::max<unsigned>(1, CeilLog2(n));
}

// Multi-level shapes: the elements of every level, levels[0] = n; level l + 1 holds the tile totals
// of level l; the last level fits in one tile.
std::vector<size_t> TileLevels(size_t n, size_t tile) {
  std::vector<size_t> levels = {n};
  while (levels.back() > tile)
    levels.push_back(CeilDiv(levels.back(), tile));
  return levels;
}
}  // namespace

const std::vector<CScanTask::Variant>& CScanTask::VariantTable() {
  static const std::vector<Variant> table = {
      {"naive", "ScanNaiveStep", Shape::GlobalSteps, 256, 64,
       "Hillis-Steele in global memory, one launch per step, ping-pong buffers, O(n log n) work"},
      {"kogge-stone", "ScanTileKoggeStone", Shape::KoggeStoneTiles, 128, 64,
       "Kogge-Stone per work-group in double-buffered local memory, block sums scanned "
       "recursively"},
      {"work-efficient", "ScanTileWorkEfficient", Shape::BlellochTiles, 128, 16,
       "Blelloch up-sweep/down-sweep in local memory, O(n) work, block sums scanned recursively"},
      {"conflict-free", "ScanTileConflictFree", Shape::BlellochTiles, 128, 64,
       "work-efficient with local memory padded against bank conflicts"},
      {"single-pass", "ScanSinglePass", Shape::SinglePass, kGpuLocal, kCpuLocal,
       "one launch: chained scan over tiles with decoupled look-back (by a warp where the "
       "device reports 32-wide warps), 2n element transfers"},
  };
  return table;
}

std::vector<std::string> CScanTask::Variants() const {
  return VariantNames(VariantTable());
}

const CScanTask::Variant& CScanTask::Find(const std::string& name) const {
  return FindVariant(VariantTable(), Name(), name);
}

std::string CScanTask::Describe(const std::string& variant) const {
  return Find(variant).description;
}

size_t CScanTask::LocalSize(const std::string& variant, const ProblemSpec& spec,
                            const DeviceInfo& device) const {
  return DefaultLocalSize(Find(variant), spec, device);
}

void CScanTask::InitResources(const ProblemSpec& spec, ProgramCache& programs,
                              cl::CommandQueue& queue) {
  Upload(spec, programs, queue, HostArray());
}

void CScanTask::Upload(const ProblemSpec& spec, ProgramCache& programs, cl::CommandQueue& queue,
                       HostArray input) {
  programs_ = &programs;
  device_ = DescribeDevice(programs.Device());
  statusTiles_ = 0;  // single-pass: zero the status words before the first launch
  op_ = spec.op;
  kind_ = KindOf(spec);
  input_ = std::move(input);
  input_d_ = UploadInput(spec, device_, programs.Context(), queue, input_);
  output_d_ = cl::Buffer(programs.Context(), CL_MEM_READ_WRITE, spec.n * SizeOf(spec.type));
}

void CScanTask::ComputeCPU() {
  expected_ = ReferenceScan(input_, op_, kind_);
}

void CScanTask::ReleaseResources() {
  input_d_ = cl::Buffer();
  output_d_ = cl::Buffer();
  pingPong_.Release();
  blockSums_.clear();
  levels_.clear();
  scanKernel_ = addKernel_ = nullptr;
  input_ = HostArray();
}

size_t CScanTask::SinglePassGpuItems() {
  return kGpuItems;
}

size_t CScanTask::SinglePassCpuItems() {
  return kCpuItems;
}

void CScanTask::PrepareRun(cl::CommandQueue& queue, const std::string& variant,
                           const ProblemSpec& spec, bool poison) {
  const Variant& v = Find(variant);
  const size_t size = SizeOf(spec.type), L = spec.localSize, n = spec.n;
  std::string options = KernelBuildOptions(spec.type, spec.op) + fmt::format(" -DLOCAL_SIZE={}", L);
  if (v.shape == Shape::SinglePass) {
    if (SizeOf(spec.type) == 8)
      throw VariantSkipped(fmt::format(
          "single-pass publishes a tile's status and value in one 64-bit atomic word: a {} "
          "value does not fit (OpenCL 1.2 has no 128-bit atomics)",
          ToString(spec.type)));
    if (!device_.int64BaseAtomics)
      throw VariantSkipped("single-pass needs 64-bit atomics (cl_khr_int64_base_atomics)");
    options += fmt::format(" -DITEMS={} -DHAS_INT64_BASE_ATOMICS=1", SinglePassItems());
    if (!GpuPath())
      options += " -DSP_RELOAD=1";
    // The warp-shuffle work-group scan (inline PTX) where the device says it has 32-wide warps.
    else if (device_.nvWarpSize == 32 && L % 32 == 0 && !portableOnly_)
      options += " -DSP_NV_WARP_SCAN=1";
    if (fallbackOnly_)
      options += " -DSP_FALLBACK_ONLY=1";
  }
  auto kernel = [&](const std::string& name) {
    const char* file = v.shape == Shape::SinglePass ? "SinglePassScan.cl" : kFile;
    cl::Kernel& k = kernels_.Get(*programs_, file, options, name, L);
    const auto local = k.getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(programs_->Device());
    if (local > device_.localMemBytes)
      throw VariantSkipped(fmt::format(
          "kernel {} needs {} KiB of local memory at local size {}; the device has {} KiB", name,
          local >> 10, L, device_.localMemBytes >> 10));
    return &k;
  };
  scanKernel_ = kernel(v.kernel);
  switch (v.shape) {
    case Shape::GlobalSteps:
      if (3 * n * size > device_.globalMemBytes)
        throw VariantSkipped(
            fmt::format("{} needs input, output and a ping-pong buffer of {} MiB each; the "
                        "device has {} MiB",
                        v.name, (n * size) >> 20, device_.globalMemBytes >> 20));
      pingPong_.Ensure(programs_->Context(), n * size);
      break;
    case Shape::KoggeStoneTiles:
    case Shape::BlellochTiles:
      addKernel_ = kernel(kAddBlockOffsets);
      levels_ = TileLevels(n, 2 * L);
      if (blockSums_.size() < levels_.size())
        blockSums_.resize(levels_.size());
      for (size_t l = 0; l < levels_.size(); ++l)
        blockSums_[l].Ensure(programs_->Context(), CeilDiv(levels_[l], 2 * L) * size);
      break;
    case Shape::SinglePass: {
      // Zero the status words and the ticket only for a new problem (InitResources clears
      // statusTiles_), for more tiles than before, or when the generation would wrap. Every
      // other launch, validated or timed, just moves on to a new generation.
      const size_t tiles = SinglePassTiles(n, L);
      if (tiles > statusTiles_ || generation_ >= kMaxGeneration) {
        queue.enqueueFillBuffer(status_.Ensure(programs_->Context(), tiles * sizeof(cl_ulong)),
                                cl_ulong(0), 0, tiles * sizeof(cl_ulong));
        queue.enqueueFillBuffer(ticket_.Ensure(programs_->Context(), sizeof(cl_uint)), cl_uint(0),
                                0, sizeof(cl_uint));
        statusTiles_ = tiles;
        generation_ = 0;
        ticketBase_ = 0;
      }
      break;
    }
  }
  if (poison)
    Poison(queue, output_d_, spec.type, n);
}

void CScanTask::ComputeGPU(cl::CommandQueue& queue, const std::string& variant,
                           const ProblemSpec& spec, RunEvents& events) {
  const Variant& v = Find(variant);
  const size_t L = spec.localSize, n = spec.n;
  const bool inclusive = KindOf(spec) == ScanKind::Inclusive;
  auto launch = [&](cl::Kernel& k, size_t workItems) {
    queue.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(RoundUp(workItems, L)), cl::NDRange(L),
                               nullptr, events.Next());
  };
  cl::Kernel& scan = *scanKernel_;
  switch (v.shape) {
    case Shape::GlobalSteps: {
      // Step s writes the output when steps - 1 - s is even, so the last step ends there.
      const size_t steps = NaiveSteps(n);
      cl::Buffer* src = &input_d_;
      for (size_t s = 0; s < steps; ++s) {
        cl::Buffer& dst = (steps - 1 - s) % 2 == 0 ? output_d_ : pingPong_.Get();
        scan.setArg(0, *src);
        scan.setArg(1, dst);
        scan.setArg(2, cl_uint(n));
        scan.setArg(3, cl_uint(size_t(1) << s));
        scan.setArg(4, cl_uint(s == 0 && !inclusive));
        launch(scan, n);
        src = &dst;
      }
      break;
    }
    case Shape::KoggeStoneTiles:
    case Shape::BlellochTiles: {
      // Up: scan every level's tiles (level 0 from the input into the output, the block sums
      // in place and exclusively); down: add each level's offsets into the level below.
      cl::Kernel& add = *addKernel_;
      const size_t tile = 2 * L, top = levels_.size() - 1;
      auto data = [&](size_t l) -> cl::Buffer& { return l ? blockSums_[l - 1].Get() : output_d_; };
      for (size_t l = 0; l <= top; ++l) {
        scan.setArg(0, l ? data(l) : input_d_);
        scan.setArg(1, data(l));
        scan.setArg(2, blockSums_[l].Get());
        scan.setArg(3, cl_uint(levels_[l]));
        scan.setArg(4, cl_uint(l == 0 && inclusive));
        launch(scan, CeilDiv(levels_[l], tile) * L);
      }
      for (size_t l = top; l-- > 0;) {
        add.setArg(0, data(l));
        add.setArg(1, blockSums_[l].Get());
        add.setArg(2, cl_uint(levels_[l]));
        launch(add, (CeilDiv(levels_[l], tile) - 1) * L);
      }
      break;
    }
    case Shape::SinglePass: {
      ++generation_;
      scan.setArg(0, input_d_);
      scan.setArg(1, output_d_);
      scan.setArg(2, cl_uint(n));
      scan.setArg(3, cl_uint(inclusive));
      scan.setArg(4, status_.Get());
      scan.setArg(5, ticket_.Get());
      scan.setArg(6, ticketBase_);
      scan.setArg(7, generation_);
      const size_t tiles = SinglePassTiles(n, L);
      launch(scan, tiles * L);
      ticketBase_ += cl_uint(tiles);  // wraps modulo 2^32 like the device counter
      break;
    }
  }
}

Validation CScanTask::ValidateResults(cl::CommandQueue& queue, const std::string& variant,
                                      const ProblemSpec& spec) {
  return CompareResults(variant, expected_, ReadBack(queue, output_d_, spec.type, spec.n));
}

HostArray CScanTask::RunOnce(cl::CommandQueue& queue, ProgramCache& programs,
                             const std::string& variant, ProblemSpec spec, const HostArray& input) {
  spec.type = input.Type();
  spec.n = input.Size();
  Upload(spec, programs, queue, input);
  spec.localSize = LocalSize(variant, spec, device_);
  PrepareRun(queue, variant, spec, /*poison=*/true);
  RunEvents events;
  ComputeGPU(queue, variant, spec, events);
  queue.finish();
  return ReadBack(queue, output_d_, spec.type, spec.n);
}

CostModel CScanTask::Cost(const std::string& variant, const ProblemSpec& spec) const {
  const Variant& v = Find(variant);
  const size_t size = SizeOf(spec.type), L = std::max<size_t>(1, spec.localSize), n = spec.n;
  const bool inclusive = KindOf(spec) == ScanKind::Inclusive;
  CostModel c;
  switch (v.shape) {
    case Shape::GlobalSteps:
      // Each step reads and writes every element. The n - o partners read at i - o are
      // elements other work-items read too, served by the caches: not counted again.
      for (size_t s = 0, steps = NaiveSteps(n); s < steps; ++s) {
        const size_t offset = size_t(1) << s, combined = n > offset ? n - offset : 0;
        c.ops += combined;
        c.bytesMoved += 2 * n * size;
        ++c.launches;
        ++c.steps;
      }
      break;
    case Shape::KoggeStoneTiles:
    case Shape::BlellochTiles: {
      const size_t tile = 2 * L;
      const unsigned logTile = CeilLog2(tile);
      const std::vector<size_t> levels = TileLevels(n, tile);
      for (size_t l = 0; l < levels.size(); ++l) {
        // Tile scan: full tiles (IDENTITY past the end) are computed; reads m, writes m and
        // one total per tile.
        const size_t m = levels[l], tiles = CeilDiv(m, tile);
        ++c.launches;
        c.bytesMoved += (2 * m + tiles) * size;
        if (v.shape == Shape::KoggeStoneTiles) {
          c.steps += logTile;
          c.ops += tiles * (tile * logTile - (tile - 1));
        } else {
          c.steps += 2 * logTile;
          c.ops += tiles * (2 * (tile - 1) + (l == 0 && inclusive ? tile : 0));
        }
        // AddBlockOffsets: every element past the first tile, one offset read per tile.
        if (tiles > 1) {
          ++c.launches;
          ++c.steps;
          c.ops += m - tile;
          c.bytesMoved += (2 * (m - tile) + tiles - 1) * size;
        }
      }
      break;
    }
    case Shape::SinglePass: {
      // Read n, write n; per tile a status word written twice and read about once.
      const size_t items = SinglePassItems(), tiles = SinglePassTiles(n, L);
      c.launches = 1;
      c.steps = 2 * items + CeilLog2(L) + 2;
      c.ops = 2 * n + tiles * (L * CeilLog2(L) + 2);
      c.bytesMoved = 2 * n * size + 3 * tiles * sizeof(cl_ulong);
      break;
    }
  }
  return c;
}

}  // namespace rsb
