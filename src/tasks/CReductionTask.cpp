#include "tasks/CReductionTask.h"

#include "engine/HostSums.h"
#include "platform/Errors.h"

#include <fmt/format.h>

#include <algorithm>

namespace rsb {

namespace {

// Single-pass tuning, by code path (defaults: the best of sweeps on the H100 and on pocl,
// docs/BENCHMARKS.md).
const std::vector<TuningKnob> kKnobs = {
    {"reduction-gpu-unroll",
     "single-pass reduction, GPU path: 16-byte loads in flight per work-item", 8, 1, 32},
    {"reduction-gpu-threads-per-cu",
     "single-pass reduction, GPU path: work-items launched per compute unit", 1024, 1, 65536},
    {"reduction-cpu-unroll",
     "single-pass reduction, CPU path: independent accumulators per work-item", 4, 1, 32},
    // 32: enough work-groups that the cores end together (pocl, 2 cores, two rounds: 13.0-13.9
    // against 11.0-12.3 Gelem/s at 2^24, 8.6-8.9 against 8.1-8.5 at 2^26, uint and float; 128 no
    // better), as the ceilings' tiled streams do.
    {"reduction-cpu-groups-per-cu",
     "single-pass reduction, CPU path: work-groups launched per compute unit", 32, 1, 1024},
};

std::string BaseOptions(const DeviceInfo& device, const ProblemSpec& spec) {
  std::string options =
      KernelBuildOptions(spec.type, spec.op) + fmt::format(" -DLOCAL_SIZE={}", spec.localSize);
  if (device.int64BaseAtomics)
    options += " -DHAS_INT64_BASE_ATOMICS=1";
  if (device.int64ExtendedAtomics)
    options += " -DHAS_INT64_EXTENDED_ATOMICS=1";
  return options;
}

// Single-pass: work-groups launched once the input fills them all (the grid of the device).
size_t SinglePassMaxGroups(const DeviceInfo& device, const ProblemSpec& spec, bool gpu) {
  const size_t perCu =
      gpu ? std::max<size_t>(1,
                             Tuned(kKnobs, spec, "reduction-gpu-threads-per-cu") / spec.localSize)
          : Tuned(kKnobs, spec, "reduction-cpu-groups-per-cu");
  return std::max<size_t>(1, device.computeUnits * perCu);
}

void RequireAtomicsFor(const DeviceInfo& device, ElementType type) {
  if (SizeOf(type) == 8 && !device.int64BaseAtomics)
    throw VariantSkipped(fmt::format(
        "{} has no 64-bit atomics on this device (cl_khr_int64_base_atomics)", ToString(type)));
}
}  // namespace

const std::vector<CReductionTask::Variant>& CReductionTask::DefaultTable() {
  static const std::vector<Variant> table = {
      {"interleaved", "ReduceInterleaved", "Reduction.cl", Shape::GlobalInterleaved, 128, 16,
       "tree in global memory, interleaved addressing, one launch per step"},
      {"sequential", "ReduceSequential", "Reduction.cl", Shape::GlobalSequential, 128, 64,
       "tree in global memory, sequential (coalesced) addressing, one launch per step"},
      {"decomposition", "ReduceDecomposition", "Reduction.cl", Shape::MultiLevel, 256, 16,
       "work-group trees in local memory, one launch per level, ping-pong buffers"},
      {"unrolled", "ReduceUnrolled", "Reduction.cl", Shape::MultiLevel, 256, 16,
       "decomposition with the tree unrolled at compile-time strides"},
      {"atomic", "ReduceAtomic", "Reduction.cl", Shape::Atomic, 256, 16,
       "one level of work-group trees, results combined with atomics, one launch"},
      {"single-pass", "ReduceSinglePass", "SinglePassReduction.cl", Shape::SinglePass, 256, 1,
       "one launch, wide loads, many elements per work-item, last work-group combines"},
  };
  return table;
}

const std::vector<ShapeRow<CReductionTask, ReductionShape>>& CReductionTask::Shapes() {
  static const std::vector<ShapeRow<CReductionTask, Shape>> shapes = {
      {Shape::GlobalInterleaved, &CReductionTask::GlobalTreePlan, nullptr,
       &CReductionTask::OneTileBoundaries},
      {Shape::GlobalSequential, &CReductionTask::GlobalTreePlan, nullptr,
       &CReductionTask::OneTileBoundaries},
      {Shape::MultiLevel, &CReductionTask::MultiLevelPlan, &CReductionTask::TreeTile,
       &CReductionTask::LevelBoundaries},
      {Shape::Atomic, &CReductionTask::AtomicPlan, &CReductionTask::TreeTile,
       &CReductionTask::OneTileBoundaries},
      {Shape::SinglePass, &CReductionTask::SinglePassPlan, &CReductionTask::SinglePassTile,
       &CReductionTask::SinglePassBoundaries},
  };
  return shapes;
}

CReductionTask::CReductionTask(std::vector<Variant> table)
    : TableTask(std::move(table), Shapes()) {}

std::vector<TuningKnob> CReductionTask::Tunables() const {
  return WithSharedKnobs(kKnobs);
}

std::vector<TunedSpace> CReductionTask::TunedSpaces() const {
  return {{"single-pass", "gpu", 0, {"reduction-gpu-unroll", "reduction-gpu-threads-per-cu"}},
          {"single-pass", "cpu", 0, {"reduction-cpu-unroll", "reduction-cpu-groups-per-cu"}}};
}

Expected CReductionTask::Reference(const HostArray& input, const ProblemSpec& spec) const {
  return ReferenceReduce(input, spec.op);
}

// Every chunk's aggregate (in parallel), then the chunks' combined in chunk order.
Expected CReductionTask::ReferenceReduce(const HostArray& input, Op op) {
  Expected e(input.Type(), 1);
  e.approximate = IsFloatingPoint(input.Type()) && op == Op::Sum;
  DispatchType(input.Type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    DispatchOp(op, [&](auto opTag) {
      constexpr Op O = decltype(opTag)::value;
      const T* x = input.As<T>();
      std::vector<ChunkAggregate<T>> chunks(HostChunks(input.Size()));
      ParallelChunks(input.Size(), [&](size_t c, size_t begin, size_t end) {
        chunks[c] = Aggregate<O>(x, begin, end, e.approximate);
      });
      ChunkAggregate<T> total{IdentityOf<T>(O), {}, 0};
      for (const auto& a : chunks) {
        total.acc = Apply<O>(total.acc, a.acc);
        total.sum.Add(a.sum), total.absSum += a.absSum;
      }
      if (e.approximate) {
        e.exact.As<T>()[0] = static_cast<T>(total.sum.Value());
        e.value = {total.sum.Value()};
        e.bound = {SumBound<T>(total.absSum, input.Size())};
      } else {
        e.exact.As<T>()[0] = total.acc;
      }
    });
  });
  return e;
}

LaunchPlan CReductionTask::StartPlan(const DeviceInfo& device, const Variant& v,
                                     const ProblemSpec& spec) const {
  FittingTile(device, v, spec);
  LaunchPlan plan;
  plan.file = v.file;
  plan.options = BaseOptions(device, spec);
  return plan;
}

LocalTile CReductionTask::TreeTile(const DeviceInfo& device, const Variant& v,
                                   const ProblemSpec& spec) const {
  return FixedTile(device, v.name, spec, uint64_t(spec.localSize) * SizeOf(spec.type));
}

LocalTile CReductionTask::SinglePassTile(const DeviceInfo& device, const Variant& v,
                                         const ProblemSpec& spec) const {
  return FixedTile(device, v.name, spec,
                   uint64_t(spec.localSize) * SizeOf(spec.type) + sizeof(cl_uint));  // and isLast
}

// Where each shape's plan changes (L = spec.localSize):
//  - global trees: L and 2L (the first step's ceil(n / 2) work-items fill one work-group);
//  - atomic: L and 2L (one work-group's tile);
//  - multi-level: L (the second load of a work-item past n), a tile of 2L (one work-group),
//    and each level of partials, (2L)^2 and (2L)^3 (one more launch);
//  - single-pass: one 16-byte vector of VEC elements (n % VEC elements after the last one), a
//    work-group's L vectors, L^2 vectors (more partials than the last work-group has
//    work-items, when the grid allows that many work-groups), the whole grid of G work-groups,
//    and UNROLL vectors per work-item (the unrolled loop's first iteration).
std::vector<size_t> CReductionTask::OneTileBoundaries(const DeviceInfo&, const Variant&,
                                                      const ProblemSpec& spec) const {
  return {spec.localSize, 2 * spec.localSize};
}

std::vector<size_t> CReductionTask::LevelBoundaries(const DeviceInfo&, const Variant&,
                                                    const ProblemSpec& spec) const {
  const size_t L = spec.localSize, tile = 2 * L;
  return {L, tile, tile * tile, tile * tile * tile};
}

std::vector<size_t> CReductionTask::SinglePassBoundaries(const DeviceInfo& device, const Variant&,
                                                         const ProblemSpec& spec) const {
  const size_t L = spec.localSize;
  const bool gpu = GpuPath(device, spec);
  const size_t vec = 16 / SizeOf(spec.type), groups = SinglePassMaxGroups(device, spec, gpu);
  const size_t unroll = Tuned(kKnobs, spec, gpu ? "reduction-gpu-unroll" : "reduction-cpu-unroll");
  std::vector<size_t> sizes = {vec, vec * L, vec * L * groups, vec * L * groups * unroll};
  if (groups > L)
    sizes.push_back(vec * L * L);
  return sizes;
}

// One launch per step of the tree; m values left, each step leaves ceil(m / 2): it reads m and
// writes ceil(m / 2), and the last step writes the result. Interleaved: step s combines elements
// 2si and 2si + s in place; sequential: element i with element i + ceil(m / 2).
LaunchPlan CReductionTask::GlobalTreePlan(const DeviceInfo& device, const Variant& v,
                                          const ProblemSpec& spec) const {
  const size_t size = SizeOf(spec.type), L = spec.localSize, n = spec.n;
  LaunchPlan plan = StartPlan(device, v, spec);
  const size_t work = plan.AddScratch(n * size);
  // SOLUTION BEGIN
  size_t src = kInputBuffer;
  for (size_t m = n, stride = 1;; stride *= 2) {
    const size_t half = CeilDiv(m, 2);
    const bool last = half == 1;
    const size_t dst = last ? size_t(kOutputBuffer) : work;
    std::vector<KernelArg> args = {BufferArg{src}, BufferArg{dst}};
    if (v.shape == Shape::GlobalInterleaved)
      args.insert(args.end(), {IndexArg{n}, IndexArg{stride}, IndexArg{half}});
    else
      args.insert(args.end(), {IndexArg{m}, IndexArg{half}});
    plan.steps.push_back(KernelStep(v.kernel, args, half, L)
                             .Costs(m * size, half * size, m - half, 1)
                             .As(m < n ? "later steps" : ""));
    if (last)
      break;
    src = dst;
    m = half;
  }
  // SOLUTION END
  //! // TODO (interleaved, sequential): one launch per step of the tree while more than one
  //! // value is left: m values (n at first) leave ceil(m / 2); interleaved doubles the stride at
  //! // every step. The first step reads the input, later ones the work buffer in place; the
  //! // last one writes the output. This stub enqueues only the first step.
  //! const size_t half = CeilDiv(n, 2);
  //! const size_t dst = half == 1 ? size_t(kOutputBuffer) : work;
  //! std::vector<KernelArg> args = {BufferArg{kInputBuffer}, BufferArg{dst}};
  //! if (v.shape == Shape::GlobalInterleaved)
  //!   args.insert(args.end(), {IndexArg{n}, IndexArg{1}, IndexArg{half}});
  //! else
  //!   args.insert(args.end(), {IndexArg{n}, IndexArg{half}});
  //! plan.steps.push_back(
  //!     KernelStep(v.kernel, args, half, L).Costs(n * size, half * size, n - half, 1));
  return plan;
}

// Each level turns m values into ceil(m / 2L) work-group partials, alternating two buffers:
// reads m, writes the partials; a work-group's tree takes 1 + log2(L) steps.
LaunchPlan CReductionTask::MultiLevelPlan(const DeviceInfo& device, const Variant& v,
                                          const ProblemSpec& spec) const {
  const size_t size = SizeOf(spec.type), L = spec.localSize, n = spec.n;
  LaunchPlan plan = StartPlan(device, v, spec);
  const size_t work[2] = {plan.AddScratch(CeilDiv(n, 2 * L) * size),
                          plan.AddScratch(CeilDiv(n, 4 * L * L) * size)};
  // SOLUTION BEGIN
  size_t src = kInputBuffer;
  for (size_t m = n, level = 0;; ++level) {
    const size_t groups = CeilDiv(m, 2 * L);
    const bool last = groups == 1;
    const size_t dst = last ? size_t(kOutputBuffer) : work[level % 2];
    plan.steps.push_back(
        KernelStep(v.kernel, {BufferArg{src}, BufferArg{dst}, IndexArg{m}}, groups * L, L)
            .Costs(m * size, groups * size, m - groups, 1 + CeilLog2(L))
            .As(level ? "partials" : ""));
    if (last)
      break;
    src = dst;
    m = groups;
  }
  // SOLUTION END
  //! // TODO (decomposition, unrolled): one launch per level while more than one value is left:
  //! // m values (n at first) leave ceil(m / 2L) work-group partials. The first level reads the
  //! // input; a level must not write the buffer it reads (alternate work[0] and work[1]); the
  //! // last level writes the output. This stub enqueues only the first level.
  //! const size_t groups = CeilDiv(n, 2 * L);
  //! const size_t dst = groups == 1 ? size_t(kOutputBuffer) : work[0];
  //! const std::vector<KernelArg> args = {BufferArg{kInputBuffer}, BufferArg{dst}, IndexArg{n}};
  //! plan.steps.push_back(KernelStep(v.kernel, args, groups * L, L)
  //!                          .Costs(n * size, groups * size, n - groups, 1 + CeilLog2(L)));
  return plan;
}

// The result is filled with the identity, then one level of work-group trees combines each
// group's value into it with an atomic (a read and a write of the result per group).
LaunchPlan CReductionTask::AtomicPlan(const DeviceInfo& device, const Variant& v,
                                      const ProblemSpec& spec) const {
  LaunchPlan plan = StartPlan(device, v, spec);
  RequireAtomicsFor(device, spec.type);
  // SOLUTION BEGIN
  const size_t size = SizeOf(spec.type), L = spec.localSize, n = spec.n;
  const size_t groups = CeilDiv(n, 2 * L);
  DispatchType(spec.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    plan.steps.push_back(
        FillStep(kOutputBuffer, IdentityOf<T>(spec.op), size).Costs(0, size, 0, 1));
  });
  plan.steps.push_back(
      KernelStep(v.kernel, {BufferArg{kInputBuffer}, BufferArg{kOutputBuffer}, IndexArg{n}},
                 groups * L, L)
          .Costs((n + groups) * size, groups * size, n - 1 + groups, 1 + CeilLog2(L)));
  // SOLUTION END
  //! // TODO (atomic): fill the result (kOutputBuffer) with the operator's identity (FillStep,
  //! // IdentityOf<T> through DispatchType), then launch v.kernel with enough work-groups of L
  //! // for each to combine 2L elements of the input into the result. This stub enqueues nothing.
  //! static_cast<void>(v), static_cast<void>(spec);
  return plan;
}

// One launch. GPU path: UNROLL independent 16-byte loads in flight per work-item, grid-stride
// order, enough work-groups to fill the device; CPU path: each work-item streams through its own
// contiguous chunk, a few work-groups per core. Each work-group publishes its partial (a 64-bit
// word written and later read by the last work-group); the last one writes the result. The
// ticket counter is zeroed before every run (untimed; the kernel leaves it at zero too).
LaunchPlan CReductionTask::SinglePassPlan(const DeviceInfo& device, const Variant& v,
                                          const ProblemSpec& spec) const {
  LaunchPlan plan = StartPlan(device, v, spec);
  RequireAtomicsFor(device, spec.type);
  const size_t size = SizeOf(spec.type), L = spec.localSize, n = spec.n;
  const bool gpu = GpuPath(device, spec);
  const size_t vec = 16 / size, vectors = std::max<size_t>(1, n / vec);
  const size_t groups =
      std::max<size_t>(1, std::min(SinglePassMaxGroups(device, spec, gpu), CeilDiv(vectors, L)));
  plan.options +=
      fmt::format(" -DVEC={} -DUNROLL={}", vec,
                  Tuned(kKnobs, spec, gpu ? "reduction-gpu-unroll" : "reduction-cpu-unroll"));
  if (!gpu)
    plan.options += " -DCONTIGUOUS_CHUNKS=1";
  const size_t partials = plan.AddScratch(groups * sizeof(cl_ulong));
  const size_t counter = plan.AddScratch(sizeof(cl_uint));
  plan.prepare.push_back(FillStep(counter, cl_uint(0), sizeof(cl_uint)).As("reset counter"));
  const uint64_t steps = CeilDiv(n, groups * L) + 2 * CeilLog2(L) + CeilDiv(groups, L) + 2;
  plan.steps.push_back(KernelStep(v.kernel,
                                  {BufferArg{kInputBuffer}, BufferArg{kOutputBuffer}, IndexArg{n},
                                   BufferArg{partials}, BufferArg{counter}, cl_uint(0)},
                                  groups * L, L)
                           .Costs(n * size + groups * sizeof(cl_ulong),
                                  groups * sizeof(cl_ulong) + size, n - 1, steps));
  return plan;
}

}  // namespace rsb
