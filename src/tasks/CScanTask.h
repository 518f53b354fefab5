// CScanTask: prefix sum (scan) of n elements with the operator (sum, min, max), inclusive or
// exclusive, out of place, in the variants of the course material (kernels/Scan.cl) and a
// single-pass variant (kernels/SinglePassScan.cl).
#pragma once

#include "engine/PlannedTask.h"

#include <string>
#include <vector>

namespace rsb {

// How the host drives a scan kernel; several variants share one shape.
enum class ScanShape {
  GlobalSteps,  // one launch per Hillis-Steele step in global memory, ping-pong buffers
  // Multi-level: tiles of 2L scanned per work-group, the tile totals (block sums) scanned level
  // after level with the same kernel, then AddBlockOffsets per level. The two differ only in
  // the cost model of the work-group scan.
  KoggeStoneTiles,
  BlellochTiles,
  // One launch: chained scan with decoupled look-back over tiles of LocalSize * items.
  SinglePass,
};

// Inclusive: element i is the operator over x[0..i]; exclusive: over x[0..i) (the identity at
// 0). The task's parameter scan-kind (--scan-kind; results' scan_kind), by index.
enum class ScanKind { Inclusive, Exclusive };
const std::vector<ScanKind>& AllScanKinds();
std::string ToString(ScanKind k);

class CScanTask : public TableTask<ScanShape> {
 public:
  using Shape = ScanShape;
  static const std::vector<Variant>& DefaultTable();
  // One row per shape: its plan, tile and boundary sizes (the functions below).
  static const std::vector<ShapeRow<CScanTask, Shape>>& Shapes();
  explicit CScanTask(std::vector<Variant> table = DefaultTable());

  std::string Name() const override { return "scan"; }
  static constexpr const char* kKindParam = "scan-kind";
  // The scan kind: a parameter recorded in a field of its own (scan_kind), inclusive by default,
  // both in the check matrix.
  std::vector<TaskParameter> Parameters() const override;
  static ScanKind KindOf(const ProblemSpec& spec);
  static void SetKind(ProblemSpec& spec, ScanKind kind);
  // The CPU reference in the scan form of HostData's Expected: each chunk's offset (parallel
  // over fixed chunks, Parallel.h), the scan itself computed again as the output is compared.
  static Expected ReferenceScan(const HostArray& input, Op op, ScanKind kind);
  std::vector<TuningKnob> Tunables() const override;
  std::vector<TunedSpace> TunedSpaces() const override;
  // The single-pass tile (local size x items per work-item) for this problem on this device.
  size_t SinglePassTile(const DeviceInfo& device, const ProblemSpec& spec) const;

 protected:
  Expected Reference(const HostArray& input, const ProblemSpec& spec) const override;
  size_t OutputElements(const ProblemSpec& spec) const override { return spec.n; }
  uint64_t ReferenceBytes(const ProblemSpec& spec) const override {
    return ScanReferenceBytes(spec.type, spec.n);
  }

 private:
  // One plan function per shape (the tiles' two share one).
  LaunchPlan GlobalStepsPlan(const DeviceInfo& device, const Variant& v,
                             const ProblemSpec& spec) const;
  LaunchPlan TilesPlan(const DeviceInfo& device, const Variant& v, const ProblemSpec& spec) const;
  LaunchPlan SinglePassPlan(const DeviceInfo& device, const Variant& v,
                            const ProblemSpec& spec) const;
  // The plan of the multi-launch shapes starts from: the variant's file, the build options, its
  // tile checked.
  LaunchPlan StartPlan(const DeviceInfo& device, const Variant& v, const ProblemSpec& spec) const;
  // Local memory: kogge-stone's two buffers of 2L, work-efficient's and conflict-free's tile of
  // 2L (padded: the shape's larger), single-pass's tile of L x items (padded) on the GPU path
  // with its work-group scan's scratch, items (scan-gpu-items, -64 for 64-bit types) shrunk
  // from the default in steps of 4 to fit the device.
  LocalTile KoggeStoneTile(const DeviceInfo& device, const Variant& v,
                           const ProblemSpec& spec) const;
  LocalTile BlellochTile(const DeviceInfo& device, const Variant& v, const ProblemSpec& spec) const;
  LocalTile SinglePassLocalTile(const DeviceInfo& device, const Variant& v,
                                const ProblemSpec& spec) const;
  // Where each shape's plan changes (CScanTask.cpp).
  std::vector<size_t> GlobalStepsBoundaries(const DeviceInfo& device, const Variant& v,
                                            const ProblemSpec& spec) const;
  std::vector<size_t> TilesBoundaries(const DeviceInfo& device, const Variant& v,
                                      const ProblemSpec& spec) const;
  std::vector<size_t> SinglePassBoundaries(const DeviceInfo& device, const Variant& v,
                                           const ProblemSpec& spec) const;
  // Single-pass elements per work-item at spec.localSize: Tile()'s on the GPU path, the CPU
  // path's knob else.
  size_t SinglePassItems(const DeviceInfo& device, const std::string& variant,
                         const ProblemSpec& spec) const;
};

}  // namespace rsb
