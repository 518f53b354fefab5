// Reduction: every kernel combines n elements of T with OP into one value.
//
// Built by the host once per (type, operator, local size) with
//   -DT=uint -DOP_SUM=1 -DIDENTITY=((T)0) -DLOCAL_SIZE=256 [-DHAS_INT64_BASE_ATOMICS=1 ...]
// Any n >= 1 works: loads past the end read IDENTITY, and the global-memory tree kernels copy
// an element through when its partner lies past the end.
//
// Notation: n elements, L = LOCAL_SIZE work-items per work-group.
//
// The work-group trees (WorkGroupReduceSequential, WorkGroupReduceUnrolled) are in
// WorkGroup.clh, the atomics on T in Atomics.clh; the fast variant, single-pass, is in
// SinglePassReduction.cl.
#include "Atomics.clh"
#include "Common.clh"
#include "WorkGroup.clh"

// ---------------------------------------------------------------------------------------------
// 1. interleaved: tree in global memory, one launch per step, interleaved addressing.
// Step with stride s (1, 2, 4, ...): work-item i combines element 2*s*i with element 2*s*i + s
// and writes element 2*s*i of dst. The host launches ceil(n / 2s) work-items per step; the first
// step reads the input (src) and writes the work buffer, later steps work in place (each
// element is read and written by one work-item only, so no hazard inside a launch; the launch
// boundary orders the steps). The last step writes the result.
// Work n - 1, steps (launches) ceil(log2 n). The strided accesses are not coalesced: at stride s
// a warp touches 32 elements 2s apart, so most of each memory transaction is wasted.
#if RSB_WANTS(ReduceInterleaved)
RSB_WG_ATTR
__kernel void ReduceInterleaved(__global const T* src, __global T* dst, IDX n, IDX stride,
                                IDX count) {
  // SOLUTION BEGIN
  const IDX i = get_global_id(0);
  if (i >= count)
    return;
  const IDX idx = 2 * stride * i;
  const T a = src[idx];
  dst[idx] = idx + stride < n ? OP(a, src[idx + stride]) : a;
  // SOLUTION END
  //! // TODO (interleaved): work-items i >= count do nothing; work-item i combines element
  //! // 2*stride*i with element 2*stride*i + stride (copies it through when that partner lies at
  //! // or past n) and writes the result to element 2*stride*i of dst.
}
#endif

// 2. sequential: the same tree with sequential addressing: m elements left, h = ceil(m / 2);
// work-item i < h combines element i with element i + h (or copies element i through when
// i + h >= m). Consecutive work-items touch consecutive elements: loads and stores coalesce.
// In place is safe: work-item i writes element i < h and reads i and i + h >= h, which no other
// work-item writes. Work n - 1, steps (launches) ceil(log2 n).
#if RSB_WANTS(ReduceSequential)
RSB_WG_ATTR
__kernel void ReduceSequential(__global const T* src, __global T* dst, IDX m, IDX h) {
  // SOLUTION BEGIN
  const IDX i = get_global_id(0);
  if (i >= h)
    return;
  const T a = src[i];
  dst[i] = i + h < m ? OP(a, src[i + h]) : a;
  // SOLUTION END
  //! // TODO (sequential): work-items i >= h do nothing; work-item i combines element i with
  //! // element i + h (copies element i through when i + h >= m) and writes dst[i].
}
#endif

// 3. decomposition: each work-group reduces 2L consecutive elements in local memory and writes
// one partial result; the host launches again on the partials until one value is left,
// alternating two buffers: a work-group writing dst[g] in place could overwrite elements
// another work-group of the same launch has not read yet (write-after-read across groups,
// which no barrier orders). Each work-item combines two elements while loading, which halves
// the work-groups and does the first tree level at the cost of a load.
// Per level: work n - 1 in total, steps 1 + log2(L); levels ceil(log_{2L} n).
#if RSB_WANTS(ReduceDecomposition)
RSB_WG_ATTR
__kernel void ReduceDecomposition(__global const T* src, __global T* dst, IDX n) {
  // SOLUTION BEGIN
  __local T scratch[LOCAL_SIZE];
  const IDX base = get_group_id(0) * 2 * LOCAL_SIZE + get_local_id(0);
  const T v = OP(LoadOrIdentity(src, base, n), LoadOrIdentity(src, base + LOCAL_SIZE, n));
  const T r = WorkGroupReduceSequential(scratch, v);
  if (get_local_id(0) == 0)
    dst[get_group_id(0)] = r;
  // SOLUTION END
  //! // TODO (decomposition): each work-item combines two elements of the group's 2L while
  //! // loading (LoadOrIdentity, Common.clh), the work-group reduces the L values in local memory
  //! // (WorkGroupReduceSequential, WorkGroup.clh), and work-item 0 writes dst[group].
}
#endif

// 4. unrolled: decomposition with the work-group tree fully unrolled at compile-time-known
// strides (WorkGroupReduceUnrolled). Same work, steps and levels as 3, fewer instructions per
// step.
#if RSB_WANTS(ReduceUnrolled)
RSB_WG_ATTR
__kernel void ReduceUnrolled(__global const T* src, __global T* dst, IDX n) {
  // SOLUTION BEGIN
  __local T scratch[LOCAL_SIZE];
  const IDX base = get_group_id(0) * 2 * LOCAL_SIZE + get_local_id(0);
  const T v = OP(LoadOrIdentity(src, base, n), LoadOrIdentity(src, base + LOCAL_SIZE, n));
  const T r = WorkGroupReduceUnrolled(scratch, v);
  if (get_local_id(0) == 0)
    dst[get_group_id(0)] = r;
  // SOLUTION END
  //! // TODO (unrolled): as ReduceDecomposition, with the unrolled work-group tree
  //! // (WorkGroupReduceUnrolled, WorkGroup.clh).
}
#endif

// ---------------------------------------------------------------------------------------------
// 5. atomic: one level of decomposition, then each work-group's result is combined into the
// single result with one atomic operation, so one launch suffices (the host first fills the
// result with IDENTITY). Atomics exist in OpenCL 1.2 for 32-bit integers (core) and, with
// cl_khr_int64_base/extended_atomics, 64-bit integers; floating point and missing 64-bit
// min/max use a compare-and-swap loop on the value's bits.
// Work n - 1 + ceil(n / 2L) atomics, steps 1 + log2(L) + 1.

#if !defined(NO_ATOMIC_FOR_T)  // (Atomics.clh) a 64-bit T on a device without 64-bit atomics
// AtomicCombine: *p = OP(*p, v), atomically.
inline void AtomicCombine(__global T* p, T v) {
  // SOLUTION BEGIN
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
  // our swap. Compares bits, so it terminates for every value (NaN included). The first guess
  // is read atomically too: a plain read beside other work-groups' swaps is a data race.
  volatile __global ATOMIC_BITS* bits = (volatile __global ATOMIC_BITS*)p;
  ATOMIC_BITS old = ATOMIC_READ_BITS(bits), assumed;
  do {
    assumed = old;
    T cur = AS_T(assumed);
    T next = OP(cur, v);
    old = ATOMIC_CMPXCHG_BITS(bits, assumed, AS_BITS(next));
  } while (old != assumed);
#endif
  // SOLUTION END
  //! // TODO (atomic): *p = OP(*p, v) as one atomic operation: atomic_add/min/max for int and
  //! // uint, atom_add/min/max for long and ulong where the device has them (HAS_INT64_...),
  //! // otherwise a compare-and-swap loop on the value's bits (ATOMIC_BITS, AS_T, AS_BITS,
  //! // ATOMIC_READ_BITS, ATOMIC_CMPXCHG_BITS from Atomics.clh) that retries until no other
  //! // work-group changed *p; its first guess read with ATOMIC_READ_BITS, not a plain read.
}
#endif

#if RSB_WANTS(ReduceAtomic)
RSB_WG_ATTR
__kernel void ReduceAtomic(__global const T* src, __global T* result, IDX n) {
  // SOLUTION BEGIN
#if defined(NO_ATOMIC_FOR_T)
  // Never launched: the host reports the variant as skipped on this device.
#else
  __local T scratch[LOCAL_SIZE];
  const IDX base = get_group_id(0) * 2 * LOCAL_SIZE + get_local_id(0);
  const T v = OP(LoadOrIdentity(src, base, n), LoadOrIdentity(src, base + LOCAL_SIZE, n));
  const T r = WorkGroupReduceUnrolled(scratch, v);
  if (get_local_id(0) == 0)
    AtomicCombine(result, r);
#endif
  // SOLUTION END
  //! #if !defined(NO_ATOMIC_FOR_T)  // else never launched: the host skips the variant
  //! // TODO (atomic): reduce the group's 2L elements as in ReduceUnrolled, then work-item 0
  //! // combines the group's value into *result with AtomicCombine.
  //! #endif
}
#endif
