// Reduction: every kernel combines n elements of T with OP into one value.
//
// Built by the host once per (type, operator, local size) with
//   -DT=uint -DOP_SUM=1 -DIDENTITY=((T)0) -DLOCAL_SIZE=256 [-DHAS_INT64_BASE_ATOMICS=1 ...]
// Any n >= 1 works: loads past the end read IDENTITY, and the global-memory tree kernels copy
// an element through when its partner lies past the end.
//
// Notation: n elements, L = LOCAL_SIZE work-items per work-group.
#include "Common.clh"

#ifndef LOCAL_SIZE
#error "build with -DLOCAL_SIZE=<work-group size>"
#endif

// ---------------------------------------------------------------------------------------------
// Work-group building block.

// WorkGroupReduceSequential: reduces one value per work-item to one value for the work-group,
// sequential addressing in local memory (work-item i combines scratch[i] and scratch[i + s]):
// active work-items stay contiguous, so warps retire whole and no bank is hit twice.
// Work L - 1, steps log2(L). The stride bound is read at run time (get_local_size).
inline T WorkGroupReduceSequential(__local T* scratch, T value) {
  const uint lid = get_local_id(0);
  scratch[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: every work-item's value is stored before any is read
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s)
      scratch[lid] = OP(scratch[lid], scratch[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);  // RAW: the next step reads what this step wrote
  }
  return scratch[0];
}

// WorkGroupReduceUnrolled: the same tree with the strides known at compile time (LOCAL_SIZE),
// so the compiler unrolls it completely: no loop counter, no shift, no compare per step, and
// the `lid < s` tests against constants. The barriers stay: OpenCL gives no guarantee that the
// work-items of a warp or wavefront run in lockstep (and NVIDIA GPUs since Volta do not).
inline T WorkGroupReduceUnrolled(__local T* scratch, T value) {
  const uint lid = get_local_id(0);
  scratch[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: every value is stored before any is read
#pragma unroll
  for (uint s = LOCAL_SIZE / 2; s > 0; s >>= 1) {
    if (lid < s)
      scratch[lid] = OP(scratch[lid], scratch[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);  // RAW: the next step reads what this step wrote
  }
  return scratch[0];
}

// ---------------------------------------------------------------------------------------------
// 1. interleaved: tree in global memory, one launch per step, interleaved addressing.
// Step with stride s (1, 2, 4, ...): work-item i combines element 2*s*i with element 2*s*i + s
// and writes element 2*s*i of dst. The host launches ceil(n / 2s) work-items per step; the first
// step reads the input (src) and writes the work buffer, later steps work in place (each
// element is read and written by one work-item only, so no hazard inside a launch; the launch
// boundary orders the steps). The last step writes the result.
// Work n - 1, steps (launches) ceil(log2 n). The strided accesses are not coalesced: at stride s
// a warp touches 32 elements 2s apart, so most of each memory transaction is wasted.
__kernel void ReduceInterleaved(__global const T* src, __global T* dst, uint n, uint stride,
                                uint count) {
  const uint i = get_global_id(0);
  if (i >= count)
    return;
  const uint idx = 2 * stride * i;
  const T a = src[idx];
  dst[idx] = idx + stride < n ? OP(a, src[idx + stride]) : a;
}

// 2. sequential: the same tree with sequential addressing: m elements left, h = ceil(m / 2);
// work-item i < h combines element i with element i + h (or copies element i through when
// i + h >= m). Consecutive work-items touch consecutive elements: loads and stores coalesce.
// In place is safe: work-item i writes element i < h and reads i and i + h >= h, which no other
// work-item writes. Work n - 1, steps (launches) ceil(log2 n).
__kernel void ReduceSequential(__global const T* src, __global T* dst, uint m, uint h) {
  const uint i = get_global_id(0);
  if (i >= h)
    return;
  const T a = src[i];
  dst[i] = i + h < m ? OP(a, src[i + h]) : a;
}

// 3. decomposition: each work-group reduces 2L consecutive elements in local memory and writes
// one partial result; the host launches again on the partials until one value is left,
// alternating two buffers: a work-group writing dst[g] in place could overwrite elements
// another work-group of the same launch has not read yet (write-after-read across groups,
// which no barrier orders). Each work-item combines two elements while loading, which halves
// the work-groups and does the first tree level at the cost of a load.
// Per level: work n - 1 in total, steps 1 + log2(L); levels ceil(log_{2L} n).
__kernel void ReduceDecomposition(__global const T* src, __global T* dst, uint n) {
  __local T scratch[LOCAL_SIZE];
  const uint base = get_group_id(0) * 2 * LOCAL_SIZE + get_local_id(0);
  const T v = OP(LoadOrIdentity(src, base, n), LoadOrIdentity(src, base + LOCAL_SIZE, n));
  const T r = WorkGroupReduceSequential(scratch, v);
  if (get_local_id(0) == 0)
    dst[get_group_id(0)] = r;
}

// 4. unrolled: decomposition with the work-group tree fully unrolled at compile-time-known
// strides (WorkGroupReduceUnrolled). Same work, steps and levels as 3, fewer instructions per
// step.
__kernel void ReduceUnrolled(__global const T* src, __global T* dst, uint n) {
  __local T scratch[LOCAL_SIZE];
  const uint base = get_group_id(0) * 2 * LOCAL_SIZE + get_local_id(0);
  const T v = OP(LoadOrIdentity(src, base, n), LoadOrIdentity(src, base + LOCAL_SIZE, n));
  const T r = WorkGroupReduceUnrolled(scratch, v);
  if (get_local_id(0) == 0)
    dst[get_group_id(0)] = r;
}

// ---------------------------------------------------------------------------------------------
// 5. atomic: one level of decomposition, then each work-group's result is combined into the
// single result with one atomic operation, so one launch suffices (the host first fills the
// result with IDENTITY). Atomics exist in OpenCL 1.2 for 32-bit integers (core) and, with
// cl_khr_int64_base/extended_atomics, 64-bit integers; floating point and missing 64-bit
// min/max use a compare-and-swap loop on the value's bits.
// Work n - 1 + ceil(n / 2L) atomics, steps 1 + log2(L) + 1.

#if defined(T_IS_64BIT)
#if defined(HAS_INT64_BASE_ATOMICS)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
#if defined(HAS_INT64_EXTENDED_ATOMICS)
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#endif
#endif

#if defined(T_FLOAT)
#define ATOMIC_BITS uint
#define AS_BITS as_uint
#define AS_T as_float
#define CMPXCHG atomic_cmpxchg
#elif defined(T_IS_64BIT)
#define ATOMIC_BITS ulong
#define AS_BITS as_ulong
#define CMPXCHG atom_cmpxchg
#if defined(T_DOUBLE)
#define AS_T as_double
#elif defined(T_LONG)
#define AS_T as_long
#else
#define AS_T as_ulong
#endif
#endif

#if defined(T_IS_64BIT) && !defined(HAS_INT64_BASE_ATOMICS)
#define NO_ATOMIC_FOR_T 1  // the host skips the atomic variant for this type
#else
// AtomicCombine: *p = OP(*p, v), atomically.
inline void AtomicCombine(__global T* p, T v) {
#if defined(T_INT) || defined(T_UINT)
#if defined(OP_SUM)
  atomic_add(p, v);
#elif defined(OP_MIN)
  atomic_min(p, v);
#else
  atomic_max(p, v);
#endif
#elif (defined(T_LONG) || defined(T_ULONG)) && defined(OP_SUM)
  atom_add(p, v);
#elif (defined(T_LONG) || defined(T_ULONG)) && defined(HAS_INT64_EXTENDED_ATOMICS) && \
    defined(OP_MIN)
  atom_min(p, v);
#elif (defined(T_LONG) || defined(T_ULONG)) && defined(HAS_INT64_EXTENDED_ATOMICS) && \
    defined(OP_MAX)
  atom_max(p, v);
#else
  // Compare-and-swap loop: retry until no other work-group changed *p between our read and
  // our swap. Compares bits, so it terminates for every value (NaN included).
  volatile __global ATOMIC_BITS* bits = (volatile __global ATOMIC_BITS*)p;
  ATOMIC_BITS old = *bits, assumed;
  do {
    assumed = old;
    T cur = AS_T(assumed);
    T next = OP(cur, v);
    old = CMPXCHG(bits, assumed, AS_BITS(next));
  } while (old != assumed);
#endif
}
#endif

__kernel void ReduceAtomic(__global const T* src, __global T* result, uint n) {
#if defined(NO_ATOMIC_FOR_T)
  // Never launched: the host reports the variant as skipped on this device.
#else
  __local T scratch[LOCAL_SIZE];
  const uint base = get_group_id(0) * 2 * LOCAL_SIZE + get_local_id(0);
  const T v = OP(LoadOrIdentity(src, base, n), LoadOrIdentity(src, base + LOCAL_SIZE, n));
  const T r = WorkGroupReduceUnrolled(scratch, v);
  if (get_local_id(0) == 0)
    AtomicCombine(result, r);
#endif
}

// ---------------------------------------------------------------------------------------------
// 6. single-pass: the fast reduction. One launch reads the input once and leaves the result.
//
// Each work-item combines many elements in registers with wide loads (VEC elements of T, 16
// bytes, per load) and UNROLL independent accumulators, so many loads are in flight at once and
// the loop runs at memory speed; then the work-group reduces in local memory; then the
// work-groups' results are combined within the same launch by the last work-group to finish.
// Work n - 1; steps n / (global size) + log2(L) + the final pass over G partials.
//
// Loop order, chosen by the host from the device type:
//  - GPU (default): vector i of work-item g is g + i * (global size): a warp reads consecutive
//    16-byte vectors, i.e. whole cache lines (coalesced).
//  - CPU (-DCONTIGUOUS_CHUNKS): each work-item streams through its own contiguous chunk, the
//    order a core's prefetcher and caches want.
//
// Combining the work-groups. OpenCL 1.2 has no device-wide fence: on NVIDIA, mem_fence orders
// memory only within the work-group. So partials are published and read only with atomics
// (performed at the device's coherence point), and a work-group takes its ticket only after
// its publish has completed: the ticket's address depends on the value the publishing
// atomic_xchg returned (`old & zero`, zero a kernel argument the compiler cannot see through),
// so the two cannot be reordered. The work-group that draws the last ticket reads every
// partial with atomics, reduces them and resets the counter for the next launch.
//
// 64-bit types need cl_khr_int64_base_atomics (the host skips them without it).

#if !defined(VEC)
#define VEC 4
#endif
#if !defined(UNROLL)
#define UNROLL 4
#endif
#define RSB_CAT(a, b) a##b
#define RSB_VEC_TYPE(t, n) RSB_CAT(t, n)
#define TV RSB_VEC_TYPE(T, VEC)

#if VEC == 2
#define VEC_REDUCE(v) OP((v).s0, (v).s1)
#elif VEC == 4
#define VEC_REDUCE(v) OP(OP((v).s0, (v).s1), OP((v).s2, (v).s3))
#elif VEC == 8
#define VEC_REDUCE(v) \
  OP(OP(OP((v).s0, (v).s1), OP((v).s2, (v).s3)), OP(OP((v).s4, (v).s5), OP((v).s6, (v).s7)))
#endif

#if !defined(NO_ATOMIC_FOR_T)
#if defined(T_IS_64BIT)
#define ATOMIC_XCHG_BITS atom_xchg
#define ATOMIC_READ_BITS(p) atom_add((p), (ulong)0)
#else
#define ATOMIC_XCHG_BITS atomic_xchg
#define ATOMIC_READ_BITS(p) atomic_add((p), 0u)
#endif
#if defined(T_FLOAT) || defined(T_DOUBLE)
#define BITS_OF(x) AS_BITS(x)
#define T_OF(b) AS_T(b)
#elif defined(T_IS_64BIT)
#define BITS_OF(x) as_ulong(x)
#define T_OF(b) AS_T(b)
#else
#define BITS_OF(x) as_uint(x)
#define T_OF(b) ((T)(b))
#endif
#if !defined(T_IS_64BIT) && !defined(T_FLOAT)
#undef ATOMIC_BITS
#define ATOMIC_BITS uint
#endif
#endif

// ThreadReduceVectors: this work-item's share of the input, reduced in registers.
inline T ThreadReduceVectors(__global const T* src, uint n) {
  __global const TV* v = (__global const TV*)src;
  const uint nv = n / VEC;
  TV acc[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u)
    acc[u] = (TV)(IDENTITY);
    // Vectors first, first + step, ... below end; the two loop orders differ only in these.
#if defined(CONTIGUOUS_CHUNKS)
  const uint chunk = (nv + get_global_size(0) - 1) / get_global_size(0);
  const uint first = min((uint)get_global_id(0) * chunk, nv), end = min(first + chunk, nv);
  const uint step = 1;
#else
  const uint first = get_global_id(0), end = nv, step = get_global_size(0);
#endif
  uint i = first;
  for (; i + (UNROLL - 1) * step < end; i += UNROLL * step) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      acc[u] = OP(acc[u], v[i + u * step]);
  }
  for (; i < end; i += step)
    acc[0] = OP(acc[0], v[i]);
#pragma unroll
  for (int u = 1; u < UNROLL; ++u)
    acc[0] = OP(acc[0], acc[u]);
  T r = VEC_REDUCE(acc[0]);
  // The n % VEC elements after the last whole vector.
  for (uint t = nv * VEC + get_global_id(0); t < n; t += get_global_size(0))
    r = OP(r, src[t]);
  return r;
}

__kernel void ReduceSinglePass(__global const T* src, __global T* result, uint n,
                               __global ATOMIC_BITS* partials, __global uint* counter, uint zero) {
#if defined(NO_ATOMIC_FOR_T)
  // Never launched: the host reports the variant as skipped on this device.
#else
  __local T scratch[LOCAL_SIZE];
  __local uint isLast;
  const uint lid = get_local_id(0), groups = get_num_groups(0);
  const T mine = WorkGroupReduceUnrolled(scratch, ThreadReduceVectors(src, n));
  if (lid == 0) {
    const ATOMIC_BITS old = ATOMIC_XCHG_BITS(&partials[get_group_id(0)], BITS_OF(mine));
    isLast = atomic_inc(counter + (uint)(old & zero)) == groups - 1;
  }
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: isLast is read by the whole group; also WAR on scratch
  if (!isLast)
    return;  // uniform across the work-group
  T acc = IDENTITY;
  for (uint g = lid; g < groups; g += LOCAL_SIZE)
    acc = OP(acc, T_OF(ATOMIC_READ_BITS(&partials[g])));
  const T total = WorkGroupReduceUnrolled(scratch, acc);
  if (lid == 0) {
    result[0] = total;
    atomic_xchg(counter, 0u);  // ready for the next launch (the launch boundary publishes it)
  }
#endif
}
