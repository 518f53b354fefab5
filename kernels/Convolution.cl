// Convolution: out[i] = sum_j mask[j] * in[i - R + j], j = 0 .. W-1, R = (W - 1) / 2, with ghost
// elements 0 (an index outside the input contributes nothing); in 2-D, for an image of width x
// height (row-major) and a square W x W mask, out[y][x] = sum_{a,b} mask[a][b] *
// in[y - R + a][x - R + b], ghost cells 0. The course's third pattern, after reduction trees and
// prefix sums.
//
// Built by the host once per (type, mask width, local size) with
//   -DT=float -DT_FLOAT=1 -DOP_SUM=1 -DIDENTITY=((T)0) -DMASK_WIDTH=5 -DLOCAL_SIZE=256
//   -DITEMS=4
// Any n >= MASK_WIDTH (any width, height >= MASK_WIDTH in 2-D) works. Index arithmetic is
// unsigned (IDX, Common.clh): an index left of 0 wraps past 2^32 - R (2^64 - R with 64-bit
// indices), above every n built with that index width (2^31 with 32-bit indices), so one
// comparison `k < n` finds the ghosts on both sides.
//
// Notation: n outputs, W = MASK_WIDTH, R = W / 2, L = LOCAL_SIZE work-items per work-group,
// K = ITEMS outputs per work-item in the tiled kernels (the host's convolution-items knob; for
// tiled-2d convolution-rows), TILE = L * K outputs per work-group
// (1-D). Traffic is counted in global-memory reads per output; the host's cost model
// (src/tasks/CConvolutionTask.cpp) adds them up exactly, ghosts excluded.
#include "Common.clh"

#define R (MASK_WIDTH / 2)
#define TILE (LOCAL_SIZE * ITEMS)

// The input element at k, or the ghost 0 outside [0, n) (k wrapped past the top of IDX on the
// left).
inline T InputOrGhost(__global const T* in, IDX k, IDX n) {
  return k < n ? in[k] : (T)0;
}

// ---------------------------------------------------------------------------------------------
// 1. basic-1d: one work-item per output, mask and input from global memory.
// Global reads per output: W input elements (fewer at the ends: ghosts are not read) and W mask
// elements, 2W in all. Neighbouring work-items read overlapping input: every element is read W
// times, from DRAM once and from the cache after that, if the cache keeps it. No halo and no
// barrier: every value comes straight from global memory.
#if RSB_WANTS(ConvolutionBasic1D)
RSB_WG_ATTR
__kernel void ConvolutionBasic1D(__global const T* in, __global const T* mask, __global T* out,
                                 IDX n) {
  // SOLUTION BEGIN
  const IDX i = get_global_id(0);
  if (i >= n)
    return;
  T acc = 0;
  for (uint j = 0; j < MASK_WIDTH; ++j)
    acc += mask[j] * InputOrGhost(in, i - R + j, n);
  out[i] = acc;
  // SOLUTION END
  //! // TODO (basic-1d): work-item i < n writes out[i] = sum over j of mask[j] * in[i - R + j],
  //! // with 0 for an index outside [0, n) (InputOrGhost).
}
#endif

// 2. constant-1d: basic-1d with the mask in __constant memory: all work-items read the same
// mask element at the same time, which a GPU's constant cache broadcasts to a whole warp in one
// transaction. Global reads per output: W input elements (the mask comes from the constant
// cache). No halo, no barrier.
#if RSB_WANTS(ConvolutionConstant1D)
RSB_WG_ATTR
__kernel void ConvolutionConstant1D(__global const T* in, __constant T* mask, __global T* out,
                                    IDX n) {
  // SOLUTION BEGIN
  const IDX i = get_global_id(0);
  if (i >= n)
    return;
  T acc = 0;
  for (uint j = 0; j < MASK_WIDTH; ++j)
    acc += mask[j] * InputOrGhost(in, i - R + j, n);
  out[i] = acc;
  // SOLUTION END
  //! // TODO (constant-1d): as basic-1d, with the mask read from __constant memory.
}
#endif

// Loads count input elements from in[first] on (first may lie left of 0, wrapped) into tile,
// ghosts as 0; the work-group's L work-items stride through it, so consecutive work-items load
// consecutive elements (coalesced).
inline void LoadTile1D(__local T* tile, __global const T* in, IDX first, uint count, IDX n) {
  for (uint t = get_local_id(0); t < count; t += LOCAL_SIZE)
    tile[t] = InputOrGhost(in, first + t, n);
}

// 3. tiled-1d: each work-group computes TILE = L * K consecutive outputs. It first loads its
// input tile with the left and right halo, TILE + 2R elements, into local memory (the halo
// elements are the neighbouring tiles' edge elements, loaded again by this work-group; ghosts
// are 0), then every output is computed from local memory. Work-item l computes outputs
// l, l + L, ..., l + (K-1)L of the tile: consecutive work-items write consecutive outputs
// (coalesced) and read consecutive local words (no bank conflicts).
// Global reads per output: (TILE + 2R) / TILE input elements (1 + 2R / TILE), the mask from the
// constant cache. Steps: 2 (load, compute).
#if RSB_WANTS(ConvolutionTiled1D)
RSB_WG_ATTR
__kernel void ConvolutionTiled1D(__global const T* in, __constant T* mask, __global T* out, IDX n) {
  // SOLUTION BEGIN
  __local T tile[TILE + 2 * R];
  const IDX start = (IDX)get_group_id(0) * TILE;
  LoadTile1D(tile, in, start - R, TILE + 2 * R, n);
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: outputs read tile elements other work-items loaded
  for (uint k = 0; k < ITEMS; ++k) {
    const uint t = get_local_id(0) + k * LOCAL_SIZE;
    if (start + t >= n)
      break;
    T acc = 0;
    for (uint j = 0; j < MASK_WIDTH; ++j)
      acc += mask[j] * tile[t + j];
    out[start + t] = acc;
  }
  // SOLUTION END
  //! // TODO (tiled-1d): load the group's TILE input elements with R halo elements on each side
  //! // into local memory (LoadTile1D, from start - R), wait for the whole tile, then compute
  //! // outputs start + l + k*L (k < ITEMS, below n) from the tile.
}
#endif

// 4. cached-1d: only the tile's own TILE elements go to local memory; an output near the tile's
// edge reads its halo elements straight from global memory, where the neighbouring work-group
// has just loaded them into the cache (L1/L2 on a GPU): the local tile has no halo to load, and
// the branch on "inside the tile?" replaces it.
// Global reads per output: 1 for the own element, plus R(R+1) / TILE halo reads on average
// (an output at distance d < R from an edge reads R - d halo elements), through the cache.
// Steps: 2 (load, compute).
#if RSB_WANTS(ConvolutionCached1D)
RSB_WG_ATTR
__kernel void ConvolutionCached1D(__global const T* in, __constant T* mask, __global T* out,
                                  IDX n) {
  // SOLUTION BEGIN
  __local T tile[TILE];
  const IDX start = (IDX)get_group_id(0) * TILE;
  LoadTile1D(tile, in, start, TILE, n);
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: outputs read tile elements other work-items loaded
  for (uint k = 0; k < ITEMS; ++k) {
    const uint t = get_local_id(0) + k * LOCAL_SIZE;
    if (start + t >= n)
      break;
    T acc = 0;
    for (uint j = 0; j < MASK_WIDTH; ++j) {
      const uint u = t - R + j;  // wraps left of the tile
      // Left of the tile u is negative as an int: sign-extended, it wraps IDX the same way.
      acc += mask[j] * (u < TILE ? tile[u] : InputOrGhost(in, start + (IDX)(int)u, n));
    }
    out[start + t] = acc;
  }
  // SOLUTION END
  //! // TODO (cached-1d): load only the group's TILE elements into local memory, wait, then
  //! // compute each output reading tile elements from local memory and the halo (indices
  //! // outside the tile) from global memory (InputOrGhost).
}
#endif

// ---------------------------------------------------------------------------------------------
// 2-D: an image of width x height, row-major; a W x W mask, row-major (mask[a * W + b] weighs
// the input a - R rows and b - R columns away). The host launches a 1-D range; the kernels
// find their row and column from it.

// 5. basic-2d: one work-item per output (i = y * width + x), mask and input from global memory.
// Global reads per output: W^2 input elements (fewer at the borders: ghosts are not read) and
// W^2 mask elements. No halo, no barrier.
#if RSB_WANTS(ConvolutionBasic2D)
RSB_WG_ATTR
__kernel void ConvolutionBasic2D(__global const T* in, __global const T* mask, __global T* out,
                                 IDX width, IDX height) {
  // SOLUTION BEGIN
  const IDX i = get_global_id(0);
  if (i >= width * height)
    return;
  const IDX x = i % width, y = i / width;
  T acc = 0;
  for (uint a = 0; a < MASK_WIDTH; ++a) {
    const IDX row = y - R + a;
    if (row >= height)
      continue;  // a ghost row
    for (uint b = 0; b < MASK_WIDTH; ++b) {
      const IDX col = x - R + b;
      if (col < width)
        acc += mask[a * MASK_WIDTH + b] * in[row * width + col];
    }
  }
  out[i] = acc;
  // SOLUTION END
  //! // TODO (basic-2d): work-item i < width * height computes output (x, y) = (i % width,
  //! // i / width): the sum over a, b of mask[a * W + b] * in[(y - R + a) * width + x - R + b],
  //! // 0 where the row or the column lies outside the image.
}
#endif

// 6. tiled-2d: each work-group computes an output tile of OX = 4 * TPX columns by OY = TPY * K
// rows, its L work-items arranged TPX = min(L, 16) across (convolution-across: TPX_MAX) and
// TPY = L / TPX down. It loads the
// input tile with its halo (ghosts 0) into local memory; then work-item (tx, ty) computes a block
// of 4 columns x K rows of the tile (register blocking): it walks the tile rows its block needs,
// reads each row's cells from local memory as vectors of 4 (Q of them: the block's 4 columns
// and the halo on both sides) into registers, and uses each cell for up to 4 x G outputs
// (every output whose window covers it, for the G mask rows held in registers). The mask is
// taken G rows at a time (G = W up to W = 5, 3 up to 9, else 1): G x W registers, read once
// from the constant cache per work-item; each pass over the mask reads K + G - 1 tile rows, so
// local memory is read about (W / G)(K + G - 1) Q / (4K) vectors per output instead of W^2
// cells, and the registers (the mask's G rows, 4K sums, 4Q cells) stay few enough for several
// work-groups per compute unit.
// The tile's rows start HP = R rounded up to 4 cells left of the tile, so every vector read is
// aligned. Where the width is a multiple of 4 the tile is loaded as 4-cell vectors from x0 - HP
// (TWP = OX + 2HP cells a row; a vector lies wholly inside the image or wholly outside), else
// cell by cell from x0 - R (TW = OX + 2R; the HP - R cells at each end are then never written
// and never read into a sum). The load keeps a work-item's whole share of the tile in flight
// (NV vectors or NS cells; batches of at most 12 vectors or 40 cells where the share is larger),
// then stores it: one round trip to memory per tile at the usual shapes. (Reading the next tile
// while computing this one, software pipelining, was measured on the H100 and was no faster; nor
// was half the work-items computing while the other half loads the rest of the tile: both cost
// registers, and with them work-groups per compute unit. docs/BENCHMARKS.md, "The tiled 2-D
// convolution".) Consecutive work-items own consecutive 4-column blocks: their vector reads of a
// tile row are contiguous (no bank conflicts) and their stores coalesce. Global reads per output:
// (OX + 2HP)(OY + 2R) / (OX OY) input cells (OX + 2R across where the width is not a multiple of
// 4), the mask from the constant cache. Steps: 2 (load, compute).
#ifndef TPX_MAX
#define TPX_MAX 16  // the host's convolution-across
#endif
// UNROLL: `#pragma unroll` for the loop that follows (each has compile-time bounds, below); where
// the host passes -DNO_UNROLL=1 (a CPU device, Oclgrind: every variant's build, as each compiles
// the whole file), nothing: there the unrolled loops gain no speed and cost compile time (pocl's
// tiled-2d check matrix compiles about 4 times as long unrolled, Oclgrind's gate twice as long),
// the most at wide masks. The GPU's code is the same as with `#pragma unroll`.
#ifdef NO_UNROLL
#define UNROLL
#else
#define UNROLL _Pragma("unroll")
#endif
#define TPX (LOCAL_SIZE < TPX_MAX ? LOCAL_SIZE : TPX_MAX)
#define TPY (LOCAL_SIZE / TPX)
#define OX (4 * TPX)
#define OY (TPY * ITEMS)
#define HP ((R + 3) / 4 * 4)
#define OFF (HP - R)
#define TWP (OX + 2 * HP)
#define TW4 (TWP / 4)
#define TW (OX + 2 * R)
#define TH (OY + 2 * R)
#define Q ((OFF + MASK_WIDTH + 2) / 4 + 1)
#define NV ((TW4 * TH + LOCAL_SIZE - 1) / LOCAL_SIZE)  // vectors of the tile per work-item
#define NS ((TW * TH + LOCAL_SIZE - 1) / LOCAL_SIZE)   // cells of the tile per work-item
#define VBATCH (NV < 12 ? NV : 12)
#define SBATCH (NS < 40 ? NS : 40)
#define T4 RSB_VEC_TYPE(T, 4)
#if MASK_WIDTH <= 5
#define G MASK_WIDTH
#elif MASK_WIDTH <= 9
#define G 3
#else
#define G 1
#endif

#if RSB_WANTS(ConvolutionTiled2D)
RSB_WG_ATTR
__kernel void ConvolutionTiled2D(__global const T* in, __constant T* mask, __global T* out,
                                 IDX width, IDX height) {
  // SOLUTION BEGIN
  __local T4 tile4[TW4 * TH];  // a vector type: every row and every vector read aligned
  __local T* tile = (__local T*)tile4;
  const IDX groupsX = (width + OX - 1) / OX;
  const IDX x0 = (get_group_id(0) % groupsX) * OX, y0 = (get_group_id(0) / groupsX) * OY;
  if (width % 4 == 0) {
    // Vectors: t = row * TW4 + vector, the tile's layout exactly.
    for (uint base = 0; base < TW4 * TH; base += VBATCH * LOCAL_SIZE) {
      T4 v[VBATCH];
      UNROLL
      for (uint i = 0; i < VBATCH; ++i) {
        const uint t = base + get_local_id(0) + i * LOCAL_SIZE;
        const IDX row = y0 - R + t / TW4, col = x0 - HP + 4 * (t % TW4);
        v[i] = t < TW4 * TH && row < height && col < width
                   ? *(__global const T4*)(in + row * width + col)
                   : (T4)0;
      }
      UNROLL
      for (uint i = 0; i < VBATCH; ++i) {
        const uint t = base + get_local_id(0) + i * LOCAL_SIZE;
        if (t < TW4 * TH)
          tile4[t] = v[i];
      }
    }
  } else {
    for (uint base = 0; base < TW * TH; base += SBATCH * LOCAL_SIZE) {
      T v[SBATCH];
      UNROLL
      for (uint i = 0; i < SBATCH; ++i) {
        const uint t = base + get_local_id(0) + i * LOCAL_SIZE;
        const IDX row = y0 - R + t / TW, col = x0 - R + t % TW;
        v[i] = t < TW * TH && row < height && col < width ? in[row * width + col] : (T)0;
      }
      UNROLL
      for (uint i = 0; i < SBATCH; ++i) {
        const uint t = base + get_local_id(0) + i * LOCAL_SIZE;
        if (t < TW * TH)
          tile[t / TW * TWP + OFF + t % TW] = v[i];
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: outputs read tile cells other work-items loaded
  const uint tx = get_local_id(0) % TPX, ty = get_local_id(0) / TPX;
  if (ty >= TPY)
    return;  // L not a multiple of TPX: the last work-items only help to load
  T acc[ITEMS][4];
  UNROLL
  for (uint k = 0; k < ITEMS; ++k) {
    UNROLL
    for (uint x = 0; x < 4; ++x)
      acc[k][x] = 0;
  }
  // Every loop below has compile-time bounds and is unrolled, so the mask rows, the sums and
  // the row's cells stay in registers and every test on them is settled by the compiler.
  // The block's first tile row: every row it reads is a constant offset from this one pointer.
  // (Each row's address as tile4 + a uint index was a 64-bit register of its own: 80 registers
  // at mask 9 against 64, and 6% slower on the H100.)
  const __local T4* rows = tile4 + ty * (ITEMS * TW4) + tx;
  UNROLL
  for (uint g = 0; g < MASK_WIDTH; g += G) {  // mask rows g .. g + G - 1
    T m[G * MASK_WIDTH];
    UNROLL
    for (uint i = 0; i < G * MASK_WIDTH; ++i) {
      m[i] = g * MASK_WIDTH + i < MASK_WIDTH * MASK_WIDTH ? mask[g * MASK_WIDTH + i] : (T)0;
    }
    // Tile row ty * K + g + rr feeds output row k = rr - j with mask row g + j.
    UNROLL
    for (uint rr = 0; rr < ITEMS + G - 1; ++rr) {
      if (g + rr >= ITEMS + MASK_WIDTH - 1)
        break;  // the last pass holds fewer than G mask rows
      T cell[4 * Q];
      const __local T4* row = rows + (g + rr) * TW4;
      UNROLL
      for (uint q = 0; q < Q; ++q)
        vstore4(row[q], q, cell);
      UNROLL
      for (uint j = 0; j < G; ++j) {
        if (g + j >= MASK_WIDTH || rr < j || rr - j >= ITEMS)
          continue;
        UNROLL
        for (uint b = 0; b < MASK_WIDTH; ++b) {
          UNROLL
          for (uint x = 0; x < 4; ++x)
            acc[rr - j][x] += m[j * MASK_WIDTH + b] * cell[OFF + x + b];
        }
      }
    }
  }
  const IDX x = x0 + 4 * tx;
  UNROLL
  for (uint k = 0; k < ITEMS; ++k) {
    const IDX y = y0 + ty * ITEMS + k;
    if (y >= height)
      break;
    if (width % 4 == 0 && x + 3 < width) {  // the row and the block 16-byte aligned: one store
      *(__global T4*)(out + y * width + x) = (T4)(acc[k][0], acc[k][1], acc[k][2], acc[k][3]);
    } else {
      UNROLL
      for (uint c = 0; c < 4; ++c)
        if (x + c < width)
          out[y * width + x + c] = acc[k][c];
    }
  }
  // SOLUTION END
  //! // TODO (tiled-2d): load the group's input tile with its halo from (x0 - R, y0 - R), ghosts
  //! // 0, into local memory (tile cell (row, col) at tile[row * TWP + OFF + col]); wait; then
  //! // work-item (tx, ty) computes columns x0 + 4tx .. + 3, rows y0 + ty*ITEMS .. + ITEMS-1
  //! // from the tile (inside the image only).
}
#endif
