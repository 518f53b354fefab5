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
//
// WorkGroupScanKoggeStone, shared with the single-pass scan, is in WorkGroup.clh; the fast
// variant, single-pass, is in SinglePassScan.cl.
#include "Common.clh"
#include "WorkGroup.clh"

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
// g*B <= n - 1 for every launched work-group, so i + L < n + B cannot overflow IDX (n <= 2^31
// when IDX is 32-bit).
inline void LoadTile(__global const T* src, IDX n, T x[2]) {
  const IDX i = get_group_id(0) * TILE_SIZE + get_local_id(0);
  x[0] = LoadOrIdentity(src, i, n);
  x[1] = LoadOrIdentity(src, i + LOCAL_SIZE, n);
}

// StoreTile: the inverse of LoadTile; elements past n are not written.
inline void StoreTile(__global T* dst, IDX n, const T y[2]) {
  const IDX i = get_group_id(0) * TILE_SIZE + get_local_id(0);
  if (i < n)
    dst[i] = y[0];
  if (i + LOCAL_SIZE < n)
    dst[i + LOCAL_SIZE] = y[1];
}

// The local-memory address of tile element i: plain, or padded by one word per NUM_BANKS words.
// `padded` is a literal at every call site, so the compiler folds the choice away.
inline uint LocalIndex(uint i, bool padded) {
  // SOLUTION BEGIN
  return padded ? i + CONFLICT_FREE_OFFSET(i) : i;
  // SOLUTION END
  //! // TODO (conflict-free): when padded, skip one word after every NUM_BANKS words
  //! // (CONFLICT_FREE_OFFSET).
  //! return i;
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
  // SOLUTION BEGIN
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
  // SOLUTION END
  //! // TODO (work-efficient): store x in the tile (at LocalIndex), up-sweep, save the total and
  //! // reset the root, down-sweep, load x back; a barrier before every step (see above).
  //! return IDENTITY;
}

// ScanTileBlelloch: one tile of src scanned into dst with WorkGroupScanExclusiveBlelloch, its
// total written to blockSums. Inclusive prefixes are the exclusive ones combined with the
// element itself: OP(exclusive[i], x[i]), one more operator per element.
inline void ScanTileBlelloch(__global const T* src, __global T* dst, __global T* blockSums, IDX n,
                             uint inclusive, __local T* tile, bool padded) {
  // SOLUTION BEGIN
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
  // SOLUTION END
  //! // TODO (work-efficient): LoadTile, WorkGroupScanExclusiveBlelloch, for an inclusive scan
  //! // combine each prefix with its element, StoreTile, and work-item 0 writes the tile's total
  //! // to blockSums[group].
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
inline T LoadShifted(__global const T* src, IDX i, uint shift) {
  return shift ? (i > 0 ? src[i - 1] : IDENTITY) : src[i];
}

#if RSB_WANTS(ScanNaiveStep)
RSB_WG_ATTR
__kernel void ScanNaiveStep(__global const T* src, __global T* dst, IDX n, IDX offset, uint shift) {
  // SOLUTION BEGIN
  const IDX i = get_global_id(0);
  if (i >= n)
    return;
  T v = LoadShifted(src, i, shift);
  if (i >= offset)
    v = OP(LoadShifted(src, i - offset, shift), v);
  dst[i] = v;
  // SOLUTION END
  //! // TODO (naive): work-items i >= n do nothing; dst[i] = OP(x[i - offset], x[i]) for
  //! // i >= offset, else x[i], reading x through LoadShifted (the exclusive scan's first step).
}
#endif

// 2. kogge-stone: each work-group scans a tile of B = 2L elements with WorkGroupScanKoggeStone
// (local memory, double buffered, one barrier per step) and writes the tile's total to
// blockSums; large arrays as described at the top of the file.
// Per level: work (n/B)(B log2(B) - B + 1) = O(n log B), steps log2(B).
#if RSB_WANTS(ScanTileKoggeStone)
RSB_WG_ATTR
__kernel void ScanTileKoggeStone(__global const T* src, __global T* dst, __global T* blockSums,
                                 IDX n, uint inclusive) {
  // SOLUTION BEGIN
  __local T ping[TILE_SIZE];
  __local T pong[TILE_SIZE];
  T x[2];
  LoadTile(src, n, x);
  const T total = WorkGroupScanKoggeStone(ping, pong, x, inclusive);
  StoreTile(dst, n, x);
  if (get_local_id(0) == 0)
    blockSums[get_group_id(0)] = total;
  // SOLUTION END
  //! // TODO (kogge-stone): load the group's tile (LoadTile), scan it in local memory
  //! // (WorkGroupScanKoggeStone, WorkGroup.clh), store it (StoreTile), and work-item 0 writes
  //! // the tile's total to blockSums[group].
}
#endif

// 3. work-efficient: each work-group of L work-items scans a tile of B = 2L elements (IDENTITY
// past n) with Blelloch's up-sweep / down-sweep (WorkGroupScanExclusiveBlelloch); the tile's
// total, saved before the root is reset, goes to blockSums; large arrays as described at the top
// of the file. Per level: work 2(n - n/B) (+ n for inclusive) = O(n), steps 2 log2(B).
#if RSB_WANTS(ScanTileWorkEfficient)
RSB_WG_ATTR
__kernel void ScanTileWorkEfficient(__global const T* src, __global T* dst, __global T* blockSums,
                                    IDX n, uint inclusive) {
  // SOLUTION BEGIN
  __local T tile[TILE_SIZE];
  ScanTileBlelloch(src, dst, blockSums, n, inclusive, tile, false);
  // SOLUTION END
  //! // TODO (work-efficient): scan the group's tile with ScanTileBlelloch in a local tile of
  //! // TILE_SIZE elements, unpadded.
}
#endif

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
#if RSB_WANTS(ScanTileConflictFree)
RSB_WG_ATTR
__kernel void ScanTileConflictFree(__global const T* src, __global T* dst, __global T* blockSums,
                                   IDX n, uint inclusive) {
  // SOLUTION BEGIN
  __local T tile[TILE_SIZE + CONFLICT_FREE_OFFSET(TILE_SIZE)];
  ScanTileBlelloch(src, dst, blockSums, n, inclusive, tile, true);
  // SOLUTION END
  //! // TODO (conflict-free): as ScanTileWorkEfficient, padded: how many elements must the
  //! // local tile hold then?
}
#endif

// AddBlockOffsets: the last phase of the large-array variants. data holds the scans of its
// tiles; offsets holds the exclusive scan of the tiles' totals. Work-group g combines
// offsets[g + 1] into every element of tile g + 1 (tile 0's offset is the identity, so it is not
// launched). Work n - B, one step. The host launches it once per level, top level down: a level's
// offsets must be final before they are added to the level below (the launch boundary orders
// them).
#if RSB_WANTS(AddBlockOffsets)
RSB_WG_ATTR
__kernel void AddBlockOffsets(__global T* data, __global const T* offsets, IDX n) {
  // SOLUTION BEGIN
  const uint tile = get_group_id(0) + 1;
  const T offset = offsets[tile];
  const IDX i = (IDX)tile * TILE_SIZE + get_local_id(0);
  if (i < n)
    data[i] = OP(offset, data[i]);
  if (i + LOCAL_SIZE < n)
    data[i + LOCAL_SIZE] = OP(offset, data[i + LOCAL_SIZE]);
  // SOLUTION END
  //! // TODO: work-group g combines offsets[g + 1] into the elements of tile g + 1 below n (two
  //! // per work-item, as LoadTile reads them).
}
#endif
