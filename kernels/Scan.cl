// Scan (prefix sum): every variant turns n elements x[0..n) of T into their prefixes under OP,
//   inclusive: y[i] = x[0] OP x[1] OP ... OP x[i]
//   exclusive: y[i] = x[0] OP ... OP x[i-1], y[0] = IDENTITY,
// out of place: the input buffer is only read.
//
// Built by the host once per (type, operator, local size) with
//   -DT=uint -DOP_SUM=1 -DIDENTITY=((T)0) -DLOCAL_SIZE=256
// The scan kind is a kernel argument: the host scans the block sums of the large-array variants
// exclusively whatever the kind asked for, with the same kernel.
//
// Notation: n elements, L = LOCAL_SIZE work-items per work-group, B = TILE_SIZE = 2L elements
// per work-group tile.
//
// Large arrays (kogge-stone, work-efficient, conflict-free): each work-group scans one tile and
// writes the tile's total to an array of block sums; the host scans the block sums with the same
// kernel (exclusively, in place: each tile is read and written by its own work-group only), level
// after level until one tile is left, then AddBlockOffsets combines each tile's offset (the
// exclusive prefix of the block sums) into all its elements, top level down.
// Levels: max(1, ceil(log_B n)).
#include "Common.clh"

#ifndef LOCAL_SIZE
#error "build with -DLOCAL_SIZE=<work-group size>"
#endif

#define TILE_SIZE (2 * LOCAL_SIZE)

// Local memory banks of a typical GPU: 32 banks of 4-byte words (NVIDIA, AMD RDNA).
#define LOG_NUM_BANKS 5
#define NUM_BANKS (1 << LOG_NUM_BANKS)
// One padding word after every NUM_BANKS words (GPU Gems 3, ch. 39).
#define CONFLICT_FREE_OFFSET(i) ((i) >> LOG_NUM_BANKS)

// ---------------------------------------------------------------------------------------------
// Work-item and work-group building blocks.

// LoadTile: work-item i of work-group g loads elements g*B + i and g*B + i + L (IDENTITY past
// n): consecutive work-items read consecutive addresses, so both loads coalesce.
// g*B <= n - 1 < 2^31 for every launched work-group, so the uint arithmetic cannot overflow.
inline void LoadTile(__global const T* src, uint n, T x[2]) {
  const uint i = get_group_id(0) * TILE_SIZE + get_local_id(0);
  x[0] = LoadOrIdentity(src, i, n);
  x[1] = LoadOrIdentity(src, i + LOCAL_SIZE, n);
}

// StoreTile: the inverse of LoadTile; elements past n are not written.
inline void StoreTile(__global T* dst, uint n, const T y[2]) {
  const uint i = get_group_id(0) * TILE_SIZE + get_local_id(0);
  if (i < n)
    dst[i] = y[0];
  if (i + LOCAL_SIZE < n)
    dst[i + LOCAL_SIZE] = y[1];
}

// WorkGroupScanKoggeStone: scans the tile held in x (two elements per work-item, as LoadTile
// leaves them) with Kogge-Stone (Hillis-Steele) steps in local memory. Step with offset o
// (1, 2, ..., B/2): element j becomes OP(element j - o, element j) for j >= o.
// Work B log2(B) - (B - 1) per tile (not work-efficient), steps log2(B).
// Double buffering: each step reads one array and writes the other, roles swapped each step, so
// one barrier per step is enough. With a single array a step would need two: a work-item would
// overwrite element j while another still has to read it (WAR) - read, barrier, write, barrier.
// Replaces x with the inclusive or exclusive prefixes; returns the tile's total.
inline T WorkGroupScanKoggeStone(__local T* ping, __local T* pong, T x[2], bool inclusive) {
  const uint lid = get_local_id(0);
  __local T* in = ping;
  __local T* out = pong;
  in[lid] = x[0];
  in[lid + LOCAL_SIZE] = x[1];
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: every element is stored before any neighbour reads it
  // The two elements are spelled out rather than looped over: pocl 3.1 fails an assertion
  // (ParallelRegion.cc) on a barrier loop holding an inner loop at LOCAL_SIZE 2.
  for (uint offset = 1; offset < TILE_SIZE; offset <<= 1) {
    const uint j = lid + LOCAL_SIZE;
    out[lid] = lid >= offset ? OP(in[lid - offset], in[lid]) : in[lid];
    out[j] = j >= offset ? OP(in[j - offset], in[j]) : in[j];
    // RAW: the next step reads what this step wrote. It also orders this step's reads of `in`
    // before the next step's writes into it (WAR), which is why one barrier suffices.
    barrier(CLK_LOCAL_MEM_FENCE);
    __local T* t = in;
    in = out;
    out = t;
  }
  // `in` holds the inclusive prefixes; the exclusive ones are those of the left neighbour.
  if (inclusive) {
    x[0] = in[lid];
    x[1] = in[lid + LOCAL_SIZE];
  } else {
    x[0] = lid > 0 ? in[lid - 1] : IDENTITY;
    x[1] = in[lid + LOCAL_SIZE - 1];
  }
  return in[TILE_SIZE - 1];
}

// The local-memory address of tile element i: plain, or padded by one word per NUM_BANKS words.
// `padded` is a literal at every call site, so the compiler folds the choice away.
inline uint LocalIndex(uint i, bool padded) {
  return padded ? i + CONFLICT_FREE_OFFSET(i) : i;
}

// WorkGroupScanExclusiveBlelloch: exclusive scan of the tile held in x (two elements per
// work-item) with Blelloch's work-efficient tree in local memory:
//   up-sweep (reduce): step with offset o = 1, 2, ..., L, B/(2o) work-items active; work-item t
//     combines a = o(2t+1) - 1 into b = o(2t+2) - 1, so the root (element B-1) ends as the total;
//   the root is replaced by IDENTITY;
//   down-sweep: o = L, ..., 1; work-item t passes its prefix (at b) to the left child (a) and
//     OP(prefix, left subtree's total) to the right child (b).
// Work 2(B - 1) per tile (O(n)), steps 2 log2(B). Every step reads what the previous step wrote
// at other work-items' addresses, so every step starts with a barrier (RAW; in the down-sweep
// also WAR: a step overwrites elements the previous step read).
// Replaces x with the exclusive prefixes; returns the tile's total, in work-item 0 only.
inline T WorkGroupScanExclusiveBlelloch(__local T* tile, T x[2], bool padded) {
  const uint lid = get_local_id(0);
  tile[LocalIndex(lid, padded)] = x[0];
  tile[LocalIndex(lid + LOCAL_SIZE, padded)] = x[1];
  uint offset = 1;
  for (uint active = LOCAL_SIZE; active > 0; active >>= 1, offset <<= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);  // RAW: the load or the previous level wrote the children
    if (lid < active) {
      const uint a = LocalIndex(offset * (2 * lid + 1) - 1, padded);
      const uint b = LocalIndex(offset * (2 * lid + 2) - 1, padded);
      tile[b] = OP(tile[a], tile[b]);
    }
  }
  // No barrier: work-item 0 wrote the root itself in the last up-sweep step, and nobody else
  // touches it before the next barrier.
  T total = IDENTITY;
  if (lid == 0) {
    const uint root = LocalIndex(TILE_SIZE - 1, padded);
    total = tile[root];
    tile[root] = IDENTITY;
  }
  for (uint active = 1; active <= LOCAL_SIZE; active <<= 1) {
    offset >>= 1;
    // RAW: the parent's prefix was written by the previous step (or the root reset above);
    // WAR: this step overwrites elements the previous step read.
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < active) {
      const uint a = LocalIndex(offset * (2 * lid + 1) - 1, padded);
      const uint b = LocalIndex(offset * (2 * lid + 2) - 1, padded);
      const T left = tile[a];
      tile[a] = tile[b];
      tile[b] = OP(tile[b], left);
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: the last step wrote elements other work-items own
  x[0] = tile[LocalIndex(lid, padded)];
  x[1] = tile[LocalIndex(lid + LOCAL_SIZE, padded)];
  return total;
}

// ScanTileBlelloch: one tile of src scanned into dst with WorkGroupScanExclusiveBlelloch, its
// total written to blockSums. Inclusive prefixes are the exclusive ones combined with the
// element itself: OP(exclusive[i], x[i]), one more operator per element.
inline void ScanTileBlelloch(__global const T* src, __global T* dst, __global T* blockSums, uint n,
                             uint inclusive, __local T* tile, bool padded) {
  T x[2], y[2];
  LoadTile(src, n, x);
  y[0] = x[0];
  y[1] = x[1];
  const T total = WorkGroupScanExclusiveBlelloch(tile, y, padded);
  if (inclusive) {
    y[0] = OP(y[0], x[0]);
    y[1] = OP(y[1], x[1]);
  }
  StoreTile(dst, n, y);
  if (get_local_id(0) == 0)
    blockSums[get_group_id(0)] = total;
}

// ---------------------------------------------------------------------------------------------
// 1. naive: Hillis-Steele in global memory, one launch per step. Step with offset o (1, 2, 4,
// ... < n): y[i] = OP(x[i - o], x[i]) for i >= o, else x[i] copied through. A launch must not
// read what it writes (work-item i would read element i - o that work-item i - o may already have
// overwritten: RAW across work-groups, which no barrier orders), so the host alternates two
// buffers (ping-pong), ordered so that the last step writes the output; the first step reads the
// input buffer, which is never written. The launch boundary orders one step after the other.
// Exclusive: the first step reads the input shifted by one (`shift`): element i sees x[i - 1],
// element 0 the identity. n = 1 (no offset < n) is one launch with o = 1: a copy (or shift).
// Work sum over steps of (n - o) = O(n log n), steps (launches) ceil(log2 n).
inline T LoadShifted(__global const T* src, uint i, uint shift) {
  return shift ? (i > 0 ? src[i - 1] : IDENTITY) : src[i];
}

__kernel void ScanNaiveStep(__global const T* src, __global T* dst, uint n, uint offset,
                            uint shift) {
  const uint i = get_global_id(0);
  if (i >= n)
    return;
  T v = LoadShifted(src, i, shift);
  if (i >= offset)
    v = OP(LoadShifted(src, i - offset, shift), v);
  dst[i] = v;
}

// 2. kogge-stone: each work-group scans a tile of B = 2L elements with WorkGroupScanKoggeStone
// (local memory, double buffered, one barrier per step) and writes the tile's total to
// blockSums; large arrays as described at the top of the file.
// Per level: work (n/B)(B log2(B) - B + 1) = O(n log B), steps log2(B).
__kernel void ScanTileKoggeStone(__global const T* src, __global T* dst, __global T* blockSums,
                                 uint n, uint inclusive) {
  __local T ping[TILE_SIZE];
  __local T pong[TILE_SIZE];
  T x[2];
  LoadTile(src, n, x);
  const T total = WorkGroupScanKoggeStone(ping, pong, x, inclusive);
  StoreTile(dst, n, x);
  if (get_local_id(0) == 0)
    blockSums[get_group_id(0)] = total;
}

// 3. work-efficient: each work-group of L work-items scans a tile of B = 2L elements (IDENTITY
// past n) with Blelloch's up-sweep / down-sweep (WorkGroupScanExclusiveBlelloch); the tile's
// total, saved before the root is reset, goes to blockSums; large arrays as described at the top
// of the file. Per level: work 2(n - n/B) (+ n for inclusive) = O(n), steps 2 log2(B).
__kernel void ScanTileWorkEfficient(__global const T* src, __global T* dst, __global T* blockSums,
                                    uint n, uint inclusive) {
  __local T tile[TILE_SIZE];
  ScanTileBlelloch(src, dst, blockSums, n, inclusive, tile, false);
}

// 4. conflict-free: work-efficient with the local-memory addresses padded by one word per
// NUM_BANKS words: element i lives at i + (i >> 5) (CONFLICT_FREE_OFFSET).
// Which accesses conflicted: local memory is split into 32 banks of one word, word w in bank
// w % 32, and the work-items of a warp that hit different words of one bank are served one after
// the other. In the sweeps, the step with offset o = 2^d has work-item t access o(2t+1) - 1 and
// o(2t+2) - 1: neighbouring work-items are 2o words apart, so only 32/(2o) distinct banks are hit
// and a warp makes 2o-way conflicts - 2, 4, 8, 16, then 32-way as d grows (fewer ways once fewer
// than 32 work-items are active).
// Why the padding removes them: each run of 32 words is shifted by one more bank than the run
// before, so addresses a multiple of 32 words apart no longer share a bank. With 4-byte elements
// and L <= 512 every sweep access of a warp hits 32 distinct banks (at L = 1024 the strides of 64
// words and more keep 2-way conflicts); 8-byte elements, served per half-warp, keep at most 2-way
// conflicts instead of up to 16-way. The loads and stores at lid and lid + L stay conflict-free.
// Costs B/32 more elements of local memory. Same work and steps as 3.
// (Bank conflicts cost time on GPUs only; on a CPU device the two variants run alike.)
__kernel void ScanTileConflictFree(__global const T* src, __global T* dst, __global T* blockSums,
                                   uint n, uint inclusive) {
  __local T tile[TILE_SIZE + CONFLICT_FREE_OFFSET(TILE_SIZE)];
  ScanTileBlelloch(src, dst, blockSums, n, inclusive, tile, true);
}

// AddBlockOffsets: the last phase of the large-array variants. data holds the scans of its
// tiles; offsets holds the exclusive scan of the tiles' totals. Work-group g combines
// offsets[g + 1] into every element of tile g + 1 (tile 0's offset is the identity, so it is not
// launched). Work n - B, one step. The host launches it once per level, top level down: a level's
// offsets must be final before they are added to the level below (the launch boundary orders
// them).
__kernel void AddBlockOffsets(__global T* data, __global const T* offsets, uint n) {
  const uint tile = get_group_id(0) + 1;
  const T offset = offsets[tile];
  const uint i = tile * TILE_SIZE + get_local_id(0);
  if (i < n)
    data[i] = OP(offset, data[i]);
  if (i + LOCAL_SIZE < n)
    data[i + LOCAL_SIZE] = OP(offset, data[i + LOCAL_SIZE]);
}

// ---------------------------------------------------------------------------------------------
// 5. single-pass: chained scan with decoupled look-back (Merrill and Garland, 2016). One launch
// reads the input once and writes the output once: 2n element transfers, the minimum.
//
// Each work-group takes a tile of SP_TILE = LOCAL_SIZE * ITEMS consecutive elements, ITEMS per
// work-item. Its tile number comes from an atomic ticket, not from get_group_id: tiles are
// numbered in the order work-groups start, so a work-group only ever waits for tiles that are
// already running (the launch order of work-groups is unspecified).
//  1. Load: the tile comes in with coalesced 16-byte loads through local memory (GPU; see
//     SpLoadTile), each work-item takes ITEMS consecutive elements and reduces them in registers.
//     On a CPU (SP_RELOAD) each work-item streams its elements from memory instead.
//  2. Work-group scan of the LOCAL_SIZE per-work-item values: each work-item's exclusive prefix
//     within the tile, and the tile's aggregate (Kogge-Stone in local memory, double-buffered;
//     on NVIDIA, SP_NV_WARP_SCAN, Kogge-Stone within each warp through shuffles).
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
// Cross-work-group memory (see ../shared/gpu/README.md): OpenCL 1.2's mem_fence does not order
// memory between work-groups on NVIDIA, so a tile publishes its flag AND its value in ONE
// 64-bit word written with atom_xchg and read with an atomic: a reader can never see a flag
// without its value. Word layout: [63:34] generation, [33:32] flag, [31:0] value bits. The
// generation (a kernel argument, new for every launch) makes the words of earlier launches
// invalid, so no reset is needed between launches; the ticket counter likewise keeps counting
// and the host passes the ticket of this launch's first tile.
// A look-back never spins forever: after SPIN_LIMIT reads of a word that is still not
// published, the looking work-item computes that tile's aggregate itself from the input and
// goes on (slow, but it only happens if a predecessor is stalled).
//
// 32-bit types only: a 64-bit value and its flag do not fit in one atomic word (OpenCL 1.2 has
// no 128-bit atomics); the host reports the variant as skipped for long, ulong and double.
//
// -DSP_TRACE=1 (bench/scan-trace, NVIDIA only) adds a last kernel argument in which each tile
// records when it passed each phase (SinglePassTrace.clh).
#if !defined(T_IS_64BIT) && defined(HAS_INT64_BASE_ATOMICS)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#include "SinglePassTrace.clh"

#ifndef ITEMS
#define ITEMS 8
#endif
#ifndef SPIN_LIMIT
#define SPIN_LIMIT 4096
#endif
#define SP_TILE (LOCAL_SIZE * ITEMS)
#define SP_AGGREGATE 1ul
#define SP_PREFIX 2ul
#if ITEMS % 4 != 0
#error "ITEMS must be a multiple of 4 (whole tiles are loaded as 4-element vectors)"
#endif

#if defined(T_FLOAT)
#define SP_BITS(v) as_uint(v)
#define SP_FROM_BITS(b) as_float(b)
#elif defined(T_INT)
#define SP_BITS(v) as_uint(v)
#define SP_FROM_BITS(b) as_int(b)
#else
#define SP_BITS(v) (v)
#define SP_FROM_BITS(b) (b)
#endif
#define SP_T4 RSB_SP_CAT(T, 4)
#define RSB_SP_CAT(a, b) RSB_SP_CAT2(a, b)
#define RSB_SP_CAT2(a, b) a##b

inline ulong SpPack(uint gen, ulong flag, T v) {
  return ((ulong)gen << 34) | (flag << 32) | (ulong)SP_BITS(v);
}
inline bool SpValid(ulong w, uint gen) {
  return (uint)(w >> 34) == gen && ((w >> 32) & 3ul);
}

#if !defined(SP_RELOAD)  // register tiles (GPU); pocl would compile the unrolled loops anyway
// The GPU's tile lives in local memory on its way in and out, so that global memory is read
// and written in coalesced order: work-item lid moves 16-byte vectors lid, lid + L, lid + 2L...
// (consecutive work-items, consecutive addresses), while the scan needs each work-item to own
// ITEMS CONSECUTIVE elements. Loading those directly, a warp's load would span 32 * ITEMS
// elements and use a fraction of every memory transaction. The padding (one word per 32)
// spreads the ITEMS-strided local reads of consecutive work-items over different banks.
#define SP_PAD(i) ((i) + ((i) >> 5))

// SpLoadTile: the tile into local memory (IDENTITY past n), then each work-item's ITEMS
// consecutive elements into x.
inline void SpLoadTile(__global const T* src, uint n, uint tileBase, __local T* buf, T x[ITEMS]) {
  const uint lid = get_local_id(0);
  if (tileBase + SP_TILE <= n) {
    __global const SP_T4* v = (__global const SP_T4*)(src + tileBase);
#pragma unroll
    for (uint k = 0; k < ITEMS / 4; ++k) {
      const uint vi = k * LOCAL_SIZE + lid;
      const SP_T4 q = v[vi];
      buf[SP_PAD(4 * vi)] = q.s0;
      buf[SP_PAD(4 * vi + 1)] = q.s1;
      buf[SP_PAD(4 * vi + 2)] = q.s2;
      buf[SP_PAD(4 * vi + 3)] = q.s3;
    }
  } else {
#pragma unroll
    for (uint k = 0; k < ITEMS; ++k) {
      const uint i = k * LOCAL_SIZE + lid;
      buf[SP_PAD(i)] = tileBase + i < n ? src[tileBase + i] : IDENTITY;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: the whole tile is in local memory before runs are read
#pragma unroll
  for (uint k = 0; k < ITEMS; ++k)
    x[k] = buf[SP_PAD(lid * ITEMS + k)];
}

// SpStoreTile: each work-item's ITEMS results into local memory, then the tile out in
// coalesced order. The caller guarantees a barrier since every work-item read buf (WAR).
inline void SpStoreTile(__global T* dst, uint n, uint tileBase, __local T* buf, const T y[ITEMS]) {
  const uint lid = get_local_id(0);
#pragma unroll
  for (uint k = 0; k < ITEMS; ++k)
    buf[SP_PAD(lid * ITEMS + k)] = y[k];
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: every result is in local memory before it is copied out
  if (tileBase + SP_TILE <= n) {
    __global SP_T4* v = (__global SP_T4*)(dst + tileBase);
#pragma unroll
    for (uint k = 0; k < ITEMS / 4; ++k) {
      const uint vi = k * LOCAL_SIZE + lid;
      v[vi] = (SP_T4)(buf[SP_PAD(4 * vi)], buf[SP_PAD(4 * vi + 1)], buf[SP_PAD(4 * vi + 2)],
                      buf[SP_PAD(4 * vi + 3)]);
    }
  } else {
#pragma unroll
    for (uint k = 0; k < ITEMS; ++k) {
      const uint i = k * LOCAL_SIZE + lid;
      if (tileBase + i < n)
        dst[tileBase + i] = buf[SP_PAD(i)];
    }
  }
}

#endif

// SP_RELOAD (CPU devices): no register tile; the work-item streams its ITEMS elements from
// global memory twice, reducing, then scanning; the second read hits the core's cache.
// The reduction takes 8 elements per iteration as one vector (8 lanes of partial results, the
// CPU's SIMD registers). The scan takes 4 per iteration: the in-group prefixes do not depend on
// run, so the loop-carried chain is one OP per 4 elements, which is what makes the CPU's serial
// scan fast. (An 8-wide vector scan, prefix within the vector by shifts, measured slower on
// pocl: 2.2-2.5 against 3.4 Gelem/s at 2^24.)
// A work-item's elements are [start, start + ITEMS) clipped to n; a work-item of the last tile
// may hold none (start >= n: with n = 1 and two work-items, say), which reduces to IDENTITY and
// stores nothing.
#define SP_T8 RSB_SP_CAT(T, 8)
inline T SpThreadReduceGlobal(__global const T* src, uint n, uint start) {
  const uint begin = min(start, n), end = min(start + ITEMS, n);
  const uint whole = begin + (end - begin) / 8 * 8;
  SP_T8 a = (SP_T8)(IDENTITY);
  uint i = begin;
  for (; i < whole; i += 8)
    a = OP(a, vload8(0, src + i));
  T r = OP(OP(OP(a.s0, a.s1), OP(a.s2, a.s3)), OP(OP(a.s4, a.s5), OP(a.s6, a.s7)));
  for (; i < end; ++i)
    r = OP(r, src[i]);
  return r;
}

inline void SpThreadScanGlobal(__global const T* restrict src, __global T* restrict dst, uint n,
                               uint start, T run, uint inclusive) {
  const uint begin = min(start, n), end = min(start + ITEMS, n);
  const uint whole = begin + (end - begin) / 4 * 4;
  uint i = begin;
  if (inclusive) {
    for (; i < whole; i += 4) {
      const T a = src[i], b = src[i + 1], c = src[i + 2], d = src[i + 3];
      const T ab = OP(a, b), abc = OP(ab, c), abcd = OP(abc, d);  // independent of run
      dst[i] = OP(run, a);
      dst[i + 1] = OP(run, ab);
      dst[i + 2] = OP(run, abc);
      run = OP(run, abcd);
      dst[i + 3] = run;
    }
  } else {
    for (; i < whole; i += 4) {
      const T a = src[i], b = src[i + 1], c = src[i + 2], d = src[i + 3];
      const T ab = OP(a, b), abc = OP(ab, c), abcd = OP(abc, d);
      dst[i] = run;
      dst[i + 1] = OP(run, a);
      dst[i + 2] = OP(run, ab);
      dst[i + 3] = OP(run, abc);
      run = OP(run, abcd);
    }
  }
  for (; i < end; ++i) {
    const T v = src[i];
    const T next = OP(run, v);
    dst[i] = inclusive ? next : run;
    run = next;
  }
}

#if !defined(SP_RELOAD)
inline T SpThreadReduce(const T x[ITEMS]) {
  T a = x[0];
#pragma unroll
  for (int k = 1; k < ITEMS; ++k)
    a = OP(a, x[k]);
  return a;
}
#endif

#if defined(SP_NV_WARP_SCAN)
// NVIDIA path (the host defines SP_NV_WARP_SCAN only for a device that reports, through
// cl_nv_device_attribute_query, a warp of 32 work-items, and for a LOCAL_SIZE that is a multiple
// of 32): the work-group scan with warp shuffles in inline PTX. OpenCL 1.2 has no subgroups, and
// dropping barriers on the strength of warps running in lockstep is unsafe since Volta, so the
// shuffles are the explicit .sync kind, with every lane of the warp taking part.
inline uint SpShuffleUp(uint v, uint delta) {
  uint r;
  asm volatile("shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;" : "=r"(r) : "r"(v), "r"(delta));
  return r;
}

// SpWorkGroupScan: Kogge-Stone within each warp through shuffles (5 steps, no local memory),
// the warps' totals through local memory (one barrier), each work-item combining the totals of
// the warps before its own. Returns the work-item's EXCLUSIVE prefix; *total receives the
// work-group's aggregate. warpTotals (SP_SCAN_SCRATCH values) is used once per launch.
#define SP_SCAN_SCRATCH (LOCAL_SIZE / 32)
inline T SpWorkGroupScan(__local T* warpTotals, T v, T* total) {
  const uint lid = get_local_id(0), lane = lid & 31, warp = lid >> 5;
  T x = v;
#pragma unroll
  for (uint d = 1; d < 32; d <<= 1) {
    const T y = SP_FROM_BITS(SpShuffleUp(SP_BITS(x), d));
    if (lane >= d)
      x = OP(y, x);
  }
  if (lane == 31)
    warpTotals[warp] = x;
  T excl = SP_FROM_BITS(SpShuffleUp(SP_BITS(x), 1));
  if (lane == 0)
    excl = IDENTITY;
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: every warp's total stored before any work-item reads
  T before = IDENTITY, all = IDENTITY;
#pragma unroll
  for (uint w = 0; w < LOCAL_SIZE / 32; ++w) {
    const T t = warpTotals[w];
    if (w < warp)
      before = OP(before, t);
    all = OP(all, t);
  }
  *total = all;
  return OP(before, excl);
}
#else
// SpWorkGroupScan: Kogge-Stone over one value per work-item, two local buffers (the halves of
// scratch) swapped every step. Returns the work-item's EXCLUSIVE prefix; *total receives the
// work-group's aggregate.
#define SP_SCAN_SCRATCH (2 * LOCAL_SIZE)
inline T SpWorkGroupScan(__local T* scratch, T v, T* total) {
  const uint lid = get_local_id(0);
  __local T* ping = scratch;
  __local T* pong = scratch + LOCAL_SIZE;
  ping[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: every value stored before any neighbour reads it
  for (uint off = 1; off < LOCAL_SIZE; off <<= 1) {
    pong[lid] = lid >= off ? OP(ping[lid - off], ping[lid]) : ping[lid];
    barrier(CLK_LOCAL_MEM_FENCE);  // RAW: this step's results visible to the next step; the
                                   // swap means no step overwrites what it is still reading
    __local T* t = ping;
    ping = pong;
    pong = t;
  }
  *total = ping[LOCAL_SIZE - 1];
  const T excl = lid ? ping[lid - 1] : IDENTITY;
  barrier(CLK_LOCAL_MEM_FENCE);  // WAR: everyone has read before the buffers are reused
  return excl;
}
#endif

// SpTileAggregate (one work-item): a tile's aggregate computed from the input, for a
// look-back that found the tile's status word unpublished after SPIN_LIMIT reads.
inline T SpTileAggregate(__global const T* src, uint n, uint tile) {
  const uint begin = tile * SP_TILE, end = min(begin + SP_TILE, n);
  T a = IDENTITY;
  for (uint i = begin; i < end; ++i)
    a = OP(a, src[i]);
  return a;
}

// SpStatus: predecessor j's status word, read with an atomic (a plain load after an atomic has
// been seen to return stale data on NVIDIA).
inline ulong SpStatus(__global ulong* status, int j) {
#if defined(SP_FALLBACK_ONLY)
  return 0;  // tests: treat every predecessor as unpublished
#else
  return atom_add(&status[j], 0ul);
#endif
}

// SpAwait: predecessor j's word once published, reading it again while it is not; after
// SPIN_LIMIT reads it gives up and returns the unpublished word (the caller then reduces j's
// tile from the input), so that no walk can spin forever, whatever order the device runs
// work-groups in.
inline ulong SpAwait(__global ulong* status, uint gen, int j) {
  ulong w = SpStatus(status, j);
#if !defined(SP_FALLBACK_ONLY)
  for (uint spins = 0; !SpValid(w, gen) && spins < SPIN_LIMIT; ++spins)
    w = SpStatus(status, j);
#endif
  return w;
}

#if defined(SP_NV_WARP_SCAN)
inline uint SpBallot(uint pred) {
  uint r;
  asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; vote.sync.ballot.b32 %0, p, 0xffffffff; }"
               : "=r"(r)
               : "r"(pred));
  return r;
}
inline uint SpShuffleXor(uint v, uint mask) {
  uint r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(mask));
  return r;
}

// SpLookBack (the 32 work-items of warp 0, together): the exclusive prefix of `tile`. The first
// round reads the nearest SP_FIRST_WINDOW predecessors, later rounds 32 at a time, lane i
// reading predecessor j - i: one round trip to L2 per round. A ballot finds the nearest word
// holding an inclusive prefix; the lanes up to it reduce their values with shuffles.
#ifndef SP_FIRST_WINDOW
#define SP_FIRST_WINDOW 1
#endif
#define SP_LOOKBACK_ITEMS 32
inline T SpLookBack(__global const T* src, uint n, __global ulong* status, uint gen, uint tile) {
  const int lane = (int)(get_local_id(0) & 31);
  T prefix = IDENTITY;
  int width = SP_FIRST_WINDOW;
  for (int j = (int)tile - 1; j >= 0; j -= width, width = 32) {
    const int pred = j - lane;
    T v = IDENTITY;
    uint isPrefix = 0;
    if (lane < width && pred >= 0) {
      const ulong w = SpAwait(status, gen, pred);
      if (SpValid(w, gen)) {
        v = SP_FROM_BITS((uint)w);
        isPrefix = ((w >> 32) & 3ul) == SP_PREFIX;
      } else {
        v = SpTileAggregate(src, n, (uint)pred);
      }
    }
    const uint prefixes = SpBallot(isPrefix);
    const int stop = prefixes ? 31 - (int)clz(prefixes & (0u - prefixes)) : 31;
    if (lane > stop)
      v = IDENTITY;  // before the nearest inclusive prefix: already in it
#pragma unroll
    for (uint m = 16; m > 0; m >>= 1)
      v = OP(v, SP_FROM_BITS(SpShuffleXor(SP_BITS(v), m)));
    prefix = OP(v, prefix);
    if (prefixes)
      break;
  }
  return prefix;
}
#else
// SpLookBack (one work-item): the exclusive prefix of `tile`, combining its predecessors'
// published values from tile - 1 downwards until one holds an inclusive prefix.
#define SP_LOOKBACK_ITEMS 1
inline T SpLookBack(__global const T* src, uint n, __global ulong* status, uint gen, uint tile) {
  T prefix = IDENTITY;
  for (int j = (int)tile - 1; j >= 0; --j) {
    const ulong w = SpAwait(status, gen, j);
    if (!SpValid(w, gen)) {
      prefix = OP(SpTileAggregate(src, n, (uint)j), prefix);
      continue;
    }
    prefix = OP(SP_FROM_BITS((uint)w), prefix);
    if (((w >> 32) & 3ul) == SP_PREFIX)
      break;
  }
  return prefix;
}
#endif

__kernel void ScanSinglePass(__global const T* src, __global T* dst, uint n, uint inclusive,
                             __global ulong* status, __global uint* ticket, uint ticketBase,
                             uint gen SP_TRACE_ARG) {
  __local T scratch[SP_SCAN_SCRATCH];
  __local uint lTile;
  __local T lPrefix;
  const uint lid = get_local_id(0);
  if (lid == 0)
    lTile = atomic_inc(ticket) - ticketBase;
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: the tile number reaches every work-item
  const uint tile = lTile;
  SP_TRACE_STAMP(0);
  const uint start = tile * SP_TILE + lid * ITEMS;

#if defined(SP_RELOAD)
  const T mine = SpThreadReduceGlobal(src, n, start);
#else
  __local T buf[SP_PAD(SP_TILE)];
  T x[ITEMS];
  SpLoadTile(src, n, tile * SP_TILE, buf, x);
  const T mine = SpThreadReduce(x);
#endif
  SP_TRACE_STAMP(1);
  T tileAggregate;
  const T inTile = SpWorkGroupScan(scratch, mine, &tileAggregate);
  SP_TRACE_STAMP(2);

  if (lid < SP_LOOKBACK_ITEMS) {  // work-item 0 publishes, SP_LOOKBACK_ITEMS look back
    // Tile 0's aggregate is its inclusive prefix already.
    if (lid == 0)
      atom_xchg(&status[tile], SpPack(gen, tile ? SP_AGGREGATE : SP_PREFIX, tileAggregate));
    const T p = SpLookBack(src, n, status, gen, tile);  // IDENTITY for tile 0
    if (lid == 0) {
      if (tile != 0)
        atom_xchg(&status[tile], SpPack(gen, SP_PREFIX, OP(p, tileAggregate)));
      lPrefix = p;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: the tile's prefix reaches every work-item
  const T tilePrefix = lPrefix;
  SP_TRACE_STAMP(3);

  T run = OP(tilePrefix, inTile);
#if defined(SP_RELOAD)
  SpThreadScanGlobal(src, dst, n, start, run, inclusive);
#else
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const T v = x[k];
    const T next = OP(run, v);
    x[k] = inclusive ? next : run;
    run = next;
  }
  SpStoreTile(dst, n, tile * SP_TILE, buf, x);
#endif
  SP_TRACE_STAMP(4);
  SP_TRACE_STORE(tile);
}
#else
__kernel void ScanSinglePass(__global const T* src, __global T* dst, uint n, uint inclusive,
                             __global ulong* status, __global uint* ticket, uint ticketBase,
                             uint gen) {
  // Never launched: the host reports the variant as skipped (64-bit type or no 64-bit atomics).
}
#endif
