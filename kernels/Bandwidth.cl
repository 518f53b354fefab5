// The memory ceilings a variant's GB/s is measured against (common/Runner.h, MeasureCeilings):
// a read-only, a write-only and a copy stream over buffers well past the last-level cache,
// shaped as the fastest variants are, so that a ceiling is what the device can reach with that
// traffic:
//   GPU (default): 16-byte elements, grid-stride (each step of the grid reads one contiguous,
//                  coalesced stretch), enough work-items to fill every compute unit;
//   CPU (-DCPU_SHAPE=1): each work-item streams one contiguous run of elements (pocl runs a
//                  work-item's loop on one core; a grid-stride would interleave cores' lines).
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
#define FOR_EACH(i, n4)   \
  uint begin_, end_;      \
  Run(n4, &begin_, &end_); \
  for (uint i = begin_; i < end_; ++i)
#else
#define FOR_EACH(i, n4) \
  for (uint i = get_global_id(0); i < n4; i += get_global_size(0))
#endif

// Reads every element; writes one word per work-item only when the XOR of what it read is a
// value the random input practically never gives (so the compiler must keep every load).
__kernel void Read4(__global const uint4* in, __global uint* sink, uint n4) {
  uint4 acc = (uint4)(0);
  FOR_EACH(i, n4) acc ^= in[i];
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x9E3779B9u)
    sink[get_global_id(0)] = acc.x;
}

// Writes every element with a value that changes per element (never a constant fill).
__kernel void Write4(__global uint4* out, uint n4) {
  FOR_EACH(i, n4) out[i] = (uint4)(i, i ^ 0x55555555u, i * 2654435761u, ~i);
}

// out[i] = in[i].
__kernel void Copy4(__global const uint4* in, __global uint4* out, uint n4) {
  FOR_EACH(i, n4) out[i] = in[i];
}
