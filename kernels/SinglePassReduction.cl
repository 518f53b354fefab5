// single-pass: the fast reduction. One launch reads the input once and leaves the result.
// The course's variants, the steps that lead here, are in Reduction.cl.
//
// Built by the host once per (type, operator, local size) with
//   -DT=uint -DOP_SUM=1 -DIDENTITY=((T)0) -DLOCAL_SIZE=256 -DVEC=4 -DUNROLL=8
//   [-DCONTIGUOUS_CHUNKS=1] [-DHAS_INT64_BASE_ATOMICS=1 ...]
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
#include "Atomics.clh"
#include "Common.clh"
#include "WorkGroup.clh"

#if !defined(VEC)
#define VEC 4
#endif
#if !defined(UNROLL)
#define UNROLL 4
#endif
#define TV RSB_VEC_TYPE(T, VEC)

// The host loads 16 bytes at a time: VEC = 16 / sizeof(T), 4 lanes of a 32-bit T, 2 of a 64-bit.
#if VEC == 2
#define VEC_REDUCE(v) OP((v).s0, (v).s1)
#elif VEC == 4
#define VEC_REDUCE(v) OP(OP((v).s0, (v).s1), OP((v).s2, (v).s3))
#else
#error "build with -DVEC=2 or -DVEC=4 (16-byte vectors)"
#endif

// ThreadReduceVectors: this work-item's share of the input, reduced in registers.
inline T ThreadReduceVectors(__global const T* src, IDX n) {
  __global const TV* v = (__global const TV*)src;
  const IDX nv = n / VEC;
  TV acc[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u)
    acc[u] = (TV)(IDENTITY);
    // Vectors first, first + step, ... below end; the two loop orders differ only in these.
#if defined(CONTIGUOUS_CHUNKS)
  const IDX chunk = (nv + get_global_size(0) - 1) / get_global_size(0);
  const IDX first = min((IDX)get_global_id(0) * chunk, nv), end = min(first + chunk, nv);
  const IDX step = 1;
#else
  const IDX first = get_global_id(0), end = nv, step = get_global_size(0);
#endif
  IDX i = first;
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
  for (IDX t = nv * VEC + get_global_id(0); t < n; t += get_global_size(0))
    r = OP(r, src[t]);
  return r;
}

RSB_WG_ATTR
__kernel void ReduceSinglePass(__global const T* src, __global T* result, IDX n,
                               __global ATOMIC_BITS* partials, __global uint* counter, uint zero) {
#if defined(NO_ATOMIC_FOR_T)
  // Never launched: the host reports the variant as skipped on this device.
#else
  __local T scratch[LOCAL_SIZE];
  __local uint isLast;
  const uint lid = get_local_id(0), groups = get_num_groups(0);
  const T mine = WorkGroupReduceUnrolled(scratch, ThreadReduceVectors(src, n));
  if (lid == 0) {
    const ATOMIC_BITS old = ATOMIC_XCHG_BITS(&partials[get_group_id(0)], AS_BITS(mine));
    isLast = atomic_inc(counter + (uint)(old & zero)) == groups - 1;
  }
  barrier(CLK_LOCAL_MEM_FENCE);  // RAW: isLast is read by the whole group; also WAR on scratch
  if (!isLast)
    return;  // uniform across the work-group
  T acc = IDENTITY;
  for (uint g = lid; g < groups; g += LOCAL_SIZE)
    acc = OP(acc, AS_T(ATOMIC_READ_BITS(&partials[g])));
  const T total = WorkGroupReduceUnrolled(scratch, acc);
  if (lid == 0) {
    result[0] = total;
    atomic_xchg(counter, 0u);  // ready for the next launch (the launch boundary publishes it)
  }
#endif
}
