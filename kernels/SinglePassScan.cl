// single-pass: the fast scan, chained scan with decoupled look-back (Merrill and Garland, 2016).
// One launch reads the input once and writes the output once: 2n element transfers, the
// minimum. The course's variants, the steps that lead here, are in Scan.cl; what a scan
// computes is said at its top.
//
// Built by the host once per (type, operator, local size) with
//   -DT=uint -DOP_SUM=1 -DIDENTITY=((T)0) -DLOCAL_SIZE=256 -DITEMS=32 -DHAS_INT64_BASE_ATOMICS=1
//   (GPU: -DSP_STAGES=2 or 4 where the tile passes through local memory in parts)
//   and -DSP_RELOAD=1 on a CPU device, -DSP_NV_WARP_SCAN=1 on a device with 32-wide warps
//   (tests also -DSP_FALLBACK_ONLY=1); -DSP_TRACE=1 for bench/scan-trace (SinglePassTrace.clh).
//
// Each work-group takes a tile of SP_TILE = LOCAL_SIZE * ITEMS consecutive elements, ITEMS per
// work-item. Its tile number comes from an atomic ticket, not from get_group_id: tiles are
// numbered in the order work-groups start, so a work-group only ever waits for tiles that are
// already running (the launch order of work-groups is unspecified). The ticket counter keeps
// counting from launch to launch; the host passes the ticket of this launch's first tile.
//  1. Load: the tile comes in with coalesced 16-byte loads through local memory (GPU; see
//     SpLoadTile), each work-item takes ITEMS consecutive elements and reduces them in registers.
//     On a CPU (SP_RELOAD) each work-item streams its elements from memory instead, and a
//     work-group goes on to the next free tile, scanning this one in the loop that reduces
//     the next (the CPU kernel below the GPU one).
//  2. Work-group scan of the LOCAL_SIZE per-work-item values: each work-item's exclusive prefix
//     within the tile, and the tile's aggregate (the course's Kogge-Stone in local memory,
//     double-buffered; on NVIDIA, SP_NV_WARP_SCAN, Kogge-Stone within each warp through
//     shuffles).
//  3. Publish the aggregate (flag AGGREGATE; tile 0 publishes its inclusive prefix, flag PREFIX).
//  4. Look back: walk the predecessors' status words from tile - 1 downwards, combining their
//     values, until one with flag PREFIX (an inclusive prefix of everything before it). One
//     work-item, one word per round trip; on NVIDIA a warp, 32 words per round trip.
//  5. Publish the tile's inclusive prefix (flag PREFIX), so successors stop here.
//  6. Each work-item scans its ITEMS elements sequentially, starting from
//     OP(tile prefix, its exclusive prefix in the tile), and stores them.
// Work O(n): about 2n operator applications plus the look-back; steps: ITEMS + log2(L) + ITEMS,
// plus the look-back. The look-back is what limits a tile: on the H100 a tile waited about 9 of
// its 12 us for its predecessors with one word per round trip, about 5 us with 32 (see
// docs/BENCHMARKS.md), which is why the NVIDIA path reads a warp's worth at a time.
//
// The pieces, by scope (as CUB layers its code):
//   SinglePassThread.clh         one work-item's elements: reduce, scan (registers or memory)
//   SinglePassTile.clh           the tile between global and local memory, coalesced (GPU)
//   SinglePassWorkGroupScan.clh  the work-group scan (WorkGroup.clh's, or warp shuffles)
//   SinglePassLookBack.clh       the status words and the look-back over the predecessors
//   NvWarp.clh                   NVIDIA warp shuffles and ballot, in inline PTX
//   SinglePassTrace.clh          the optional per-tile timestamps (SP_TRACE)
//
// Every type: a 64-bit value and its flag do not fit in one atomic word (OpenCL 1.2 has no
// 128-bit atomics), so a tile of long, ulong or double publishes two words, each with the flag
// (SinglePassLookBack.clh). Without cl_khr_int64_base_atomics the host skips the variant.
#include "Atomics.clh"
#include "Common.clh"
#include "WorkGroup.clh"

#if defined(HAS_INT64_BASE_ATOMICS)

#ifndef ITEMS
#define ITEMS 8
#endif
#ifndef SPIN_LIMIT
#define SPIN_LIMIT 4096
#endif
#define SP_TILE (LOCAL_SIZE * ITEMS)
#if ITEMS % 4 != 0
#error "ITEMS must be a multiple of 4 (whole tiles are loaded as 4-element vectors)"
#endif

#include "SinglePassLookBack.clh"
#include "SinglePassThread.clh"
#include "SinglePassTile.clh"
#include "SinglePassTrace.clh"
#include "SinglePassWorkGroupScan.clh"

#if defined(SP_RELOAD)
// The CPU path: a work-group, once it has a tile, keeps going. It reduces its first tile and
// publishes the aggregate; then, per tile: look back for the tile's prefix, publish the
// inclusive prefix, take the next ticket, and in ONE loop per work-item scan and store the
// current tile while reducing the next one (SpThreadScanReduceGlobal), then the work-group scan
// of the next tile's per-work-item values and its aggregate published. A core then reads memory
// (the next tile) and writes it (the current one) at once, as a copy does; one tile a
// work-group read each tile twice from memory's side, a reading pass, then a writing one.
// Tickets are taken only while tiles are left (SpNextTile), so a launch consumes exactly one
// ticket per tile whatever number of work-groups ran, as the host counts (the launch has one
// work-group per tile; those that find none left end at once). A work-group waits only for
// tiles taken before its own, by work-groups already running: no deadlock.
inline uint SpNextTile(__global uint* ticket, uint ticketBase, uint tiles) {
  uint seen = atomic_add(ticket, 0u);
  while (seen - ticketBase < tiles) {
    const uint got = atomic_cmpxchg(ticket, seen, seen + 1);
    if (got == seen)
      return seen - ticketBase;
    seen = got;
  }
  return tiles;  // none left
}

inline void SpScanTilesInTurn(__global const T* src, __global T* dst, IDX n, uint inclusive,
                              __global ulong* status, __global uint* ticket, uint ticketBase,
                              uint gen, __local T* scratch, __local uint* lTile,
                              __local T* lPrefix) {
  const uint lid = get_local_id(0);
  const uint tiles = (uint)((n + SP_TILE - 1) / SP_TILE);
  if (lid == 0)
    *lTile = SpNextTile(ticket, ticketBase, tiles);
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: the tile number reaches every work-item
  uint tile = *lTile;
  if (tile >= tiles)
    return;  // every tile taken: the same for the whole work-group
  IDX start = (IDX)tile * SP_TILE + lid * ITEMS;
  T tileAggregate;
  T inTile = SpWorkGroupScan(scratch, SpThreadReduceGlobal(src, n, start), &tileAggregate);
  if (lid == 0)
    SpPublish(status, tile, gen, tile ? SP_AGGREGATE : SP_PREFIX, tileAggregate);
  for (;;) {
    if (lid < SP_LOOKBACK_ITEMS) {
      SpResolvePrefix(src, n, status, gen, tile, tileAggregate, lPrefix);
      if (lid == 0)
        *lTile = SpNextTile(ticket, ticketBase, tiles);
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // RAW: the prefix and the next tile reach every work-item
    const T run = OP(*lPrefix, inTile);
    const uint next = *lTile;
    barrier(CLK_LOCAL_MEM_FENCE);  // WAR: all have read lPrefix and lTile before they change
    if (next >= tiles) {
      SpThreadScanGlobal(src, dst, n, start, run, inclusive);
      return;
    }
    const IDX nextStart = (IDX)next * SP_TILE + lid * ITEMS;
    const T mine = SpThreadScanReduceGlobal(src, dst, n, start, run, inclusive, nextStart);
    tile = next;
    start = nextStart;
    inTile = SpWorkGroupScan(scratch, mine, &tileAggregate);
    if (lid == 0)
      SpPublish(status, tile, gen, SP_AGGREGATE, tileAggregate);  // tile > 0: taken after one
  }
}
#endif

RSB_WG_ATTR
__kernel void ScanSinglePass(__global const T* src, __global T* dst, IDX n, uint inclusive,
                             __global ulong* status, __global uint* ticket, uint ticketBase,
                             uint gen SP_TRACE_ARG) {
  __local T scratch[SP_SCAN_SCRATCH];
  __local uint lTile;
  __local T lPrefix;
#if defined(SP_RELOAD)
  SpScanTilesInTurn(src, dst, n, inclusive, status, ticket, ticketBase, gen, scratch, &lTile,
                    &lPrefix);
#else
  const uint lid = get_local_id(0);
  if (lid == 0)
    lTile = atomic_inc(ticket) - ticketBase;
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: the tile number reaches every work-item
  const uint tile = lTile;
  SP_TRACE_STAMP(0);

  __local T buf[SP_PAD(SP_PART)];  // the tile, or one part of it (SinglePassTile.clh)
  T x[ITEMS];
  SpLoadTile(src, n, (IDX)tile * SP_TILE, buf, x);
  const T mine = SpThreadReduce(x);
  SP_TRACE_STAMP(1);
  T tileAggregate;
  const T inTile = SpWorkGroupScan(scratch, mine, &tileAggregate);
  SP_TRACE_STAMP(2);

  if (lid < SP_LOOKBACK_ITEMS) {  // work-item 0 publishes, SP_LOOKBACK_ITEMS look back
    // Tile 0's aggregate is its inclusive prefix already.
    if (lid == 0)
      SpPublish(status, tile, gen, tile ? SP_AGGREGATE : SP_PREFIX, tileAggregate);
    SpResolvePrefix(src, n, status, gen, tile, tileAggregate, &lPrefix);
  }
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: the tile's prefix reaches every work-item
  const T tilePrefix = lPrefix;
  SP_TRACE_STAMP(3);

  const T run = OP(tilePrefix, inTile);
  SpThreadScan(x, run, inclusive);
  SpStoreTile(dst, n, (IDX)tile * SP_TILE, buf, x);
  SP_TRACE_STAMP(4);
  SP_TRACE_STORE(tile);
#endif
}
#else
RSB_WG_ATTR
__kernel void ScanSinglePass(__global const T* src, __global T* dst, IDX n, uint inclusive,
                             __global ulong* status, __global uint* ticket, uint ticketBase,
                             uint gen) {
  // Never launched: the host reports the variant as skipped (no 64-bit atomics).
}
#endif
