// The memory ceilings a variant's GB/s is measured against (common/engine/Runner.h,
// MeasureCeilings): a read-only, a write-only and a copy stream over buffers well past the
// last-level cache, shaped as the fastest variants are, so that a ceiling is what the device can
// reach with that traffic:
//   GPU (default): 16-byte elements, grid-stride (each step of the grid reads one contiguous,
//                  coalesced stretch), UNROLL independent accesses in flight per work-item
//                  (as the single-pass reduction has), enough work-items to fill every unit;
//   CPU (-DCPU_SHAPE=1): each work-item streams one contiguous run of elements (pocl runs a
//                  work-item's loop on one core; a grid-stride would interleave cores' lines).
//   GPU, tiled (Read4Tiled, Write4Tiled, Copy4Tiled): as the single-pass scan moves its tiles,
//                  one work-group per tile of TILE_ITEMS x L consecutive 16-byte elements, all of
//                  a work-item's loads issued before its stores, as many work-groups as tiles.
//                  The host takes the faster of the two GPU shapes per stream: on the H100 the
//                  grid-stride copy reached 2.82 TB/s while the scan moved 2.97 (issue 10).
// Each kernel reads n4 and/or writes n4 uint4 elements once: bytes = 16 * n4 per direction.
// One pass, no barriers, no local memory.

#ifndef CPU_SHAPE
#define CPU_SHAPE 0
#endif

#if CPU_SHAPE
// This work-item's contiguous run [*begin, *end) of n4 elements.
inline void Run(uint n4, uint* begin, uint* end) {
  const uint per = (n4 + get_global_size(0) - 1) / get_global_size(0);
  *begin = min(n4, (uint)get_global_id(0) * per);
  *end = min(n4, *begin + per);
}
#define FOR_EACH(i, n4)    \
  uint begin_, end_;       \
  Run(n4, &begin_, &end_); \
  for (uint i = begin_; i < end_; ++i)
#else
#define FOR_EACH(i, n4) for (uint i = get_global_id(0); i < n4; i += get_global_size(0))
#endif

#define UNROLL 8
// GPU: UNROLL grid strides at a time (their accesses independent, issued back to back), then
// the rest one stride at a time. BODY(j) handles element j.
#define GRID_STRIDE_UNROLLED(n4, BODY)                                   \
  {                                                                      \
    const uint gs = get_global_size(0);                                  \
    uint i = get_global_id(0);                                           \
    for (; (ulong)i + (UNROLL - 1) * (ulong)gs < n4; i += UNROLL * gs) { \
      _Pragma("unroll") for (uint u = 0; u < UNROLL; ++u) {              \
        BODY(i + u * gs);                                                \
      }                                                                  \
    }                                                                    \
    for (; i < n4; i += gs) {                                            \
      BODY(i);                                                           \
    }                                                                    \
  }

// What each stream does with element j, in every shape: Read4 XORs every element into acc and
// writes one word per work-item only when the XOR is a value the random input practically never
// gives (so the compiler must keep every load); Write4 writes a value that changes per element
// (never a constant fill); Copy4 copies.
#define READ(j) acc ^= in[j]
#define WRITE(j) out[j] = (uint4)((j), (j) ^ 0x55555555u, (j)*2654435761u, ~(j))
#define COPY(j) out[j] = in[j]
inline void Sink(uint4 acc, __global uint* sink) {
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x9E3779B9u)
    sink[get_global_id(0)] = acc.x;
}

__kernel void Read4(__global const uint4* in, __global uint* sink, uint n4) {
  uint4 acc = (uint4)(0);
#if CPU_SHAPE
  FOR_EACH(i, n4) READ(i);
#else
  GRID_STRIDE_UNROLLED(n4, READ)
#endif
  Sink(acc, sink);
}

__kernel void Write4(__global uint4* out, uint n4) {
#if CPU_SHAPE
  FOR_EACH(i, n4) WRITE(i);
#else
  GRID_STRIDE_UNROLLED(n4, WRITE)
#endif
}

__kernel void Copy4(__global const uint4* in, __global uint4* out, uint n4) {
#if CPU_SHAPE
  FOR_EACH(i, n4) COPY(i);
#else
  GRID_STRIDE_UNROLLED(n4, COPY)
#endif
}

#ifndef TILE_ITEMS
#define TILE_ITEMS 8  // the host passes its own (common/engine/Runner.cpp)
#endif
#if CPU_SHAPE
// CPU, tiled: each work-group (of one work-item) streams its own tile of TILE_ITEMS consecutive
// elements, as many work-groups as tiles, taken by the cores in turn: the single-pass scan's CPU
// tiles, which a core reads and writes a tile at a time (the contiguous runs above hand each
// work-item an eighth of the buffer).
#define TILED(n4, BODY)                                            \
  {                                                                \
    const ulong base_ = (ulong)get_group_id(0) * TILE_ITEMS;       \
    const uint end_ = (uint)min((ulong)n4, base_ + TILE_ITEMS);    \
    for (uint i_ = (uint)min((ulong)n4, base_); i_ < end_; ++i_) { \
      BODY(i_);                                                    \
    }                                                              \
  }
#else
// GPU, tiled: element k of this work-item's TILE_ITEMS is base + k * L (consecutive work-items,
// consecutive addresses), base in this work-group's tile.
#define TILED(n4, BODY)                                                                            \
  {                                                                                                \
    const ulong base_ = (ulong)get_group_id(0) * get_local_size(0) * TILE_ITEMS + get_local_id(0); \
    _Pragma("unroll") for (uint k = 0; k < TILE_ITEMS; ++k) {                                      \
      const ulong i_ = base_ + (ulong)k * get_local_size(0);                                       \
      if (i_ < n4) {                                                                               \
        BODY((uint)i_);                                                                            \
      }                                                                                            \
    }                                                                                              \
  }
#endif

__kernel void Read4Tiled(__global const uint4* in, __global uint* sink, uint n4) {
  uint4 acc = (uint4)(0);
  TILED(n4, READ)
  Sink(acc, sink);
}

__kernel void Write4Tiled(__global uint4* out, uint n4){TILED(n4, WRITE)}

__kernel void Copy4Tiled(__global const uint4* in, __global uint4* out, uint n4) {
#if CPU_SHAPE
  TILED(n4, COPY)
#else
  // All TILE_ITEMS loads first (into registers), then the stores: the scan's order.
  uint4 v[TILE_ITEMS];
#define LOAD(j) v[k] = in[j];
  TILED(n4, LOAD)
#define STORE(j) out[j] = v[k];
  TILED(n4, STORE)
#endif
}
