// Host-side parallelism for the input, the CPU reference and the comparison: a loop over
// indices spread over every core with std::thread. The work is split into pieces fixed by the
// data (chunks of a fixed number of elements), never by the thread count, so that every result,
// floating-point sums included, is the same on 1 core or 16.
// Why not oneTBB's parallel_for: it would be one more package for every user's first run
// (scripts/install-deps.sh installs libtbb-dev only for the CPU reference program, --references)
// and one more shared library the binary needs wherever it is carried; the loop here is a few
// lines, and the fixed chunks, not the scheduler, are what keeps the results deterministic.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>

namespace rsb {

// Threads for host-side work: RSB_HOST_THREADS where it is set to a whole number from 1 (tests
// and measurements), else std::thread::hardware_concurrency() (1 where that is unknown).
size_t HostThreads();

// Calls fn(i) once for every i in [0, count), on up to HostThreads() threads (the caller's among
// them), in no particular order: fn writes only what belongs to i. The first exception fn throws
// is rethrown once every thread has finished; the indices not started by then are skipped.
void ParallelFor(size_t count, const std::function<void(size_t)>& fn);

// Elements per chunk of the host-side loops: fixed, so that chunk boundaries (and with them the
// order of every floating-point sum) do not depend on the number of threads.
constexpr size_t kHostChunk = size_t(1) << 16;

inline size_t HostChunks(size_t n) {
  return (n + kHostChunk - 1) / kHostChunk;
}

// fn(chunk, begin, end) for every chunk of [0, n), in parallel.
template <class F>
void ParallelChunks(size_t n, F&& fn) {
  ParallelFor(HostChunks(n), [&](size_t c) {
    const size_t begin = c * kHostChunk;
    fn(c, begin, std::min(n, begin + kHostChunk));
  });
}

}  // namespace rsb
