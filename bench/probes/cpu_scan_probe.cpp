// cpu_scan_probe: what the single-pass scan's CPU shape can reach on this host's cores, without
// OpenCL: the same tiles (a ticket per tile, each tile reduced, its predecessor's prefix awaited,
// then scanned and stored, as kernels/SinglePassThread.clh's SP_RELOAD path does on pocl), on
// two threads, against a copy of the same bytes (memcpy, and with streaming stores, which skip
// reading each output line before writing it), the scan with streaming stores, and a one-pass
// scan that waits for nothing (not a correct scan: the bound a scan with one read of each element
// could reach).
//   g++ -O3 -march=native -std=c++17 -pthread -o /tmp/cpu-scan-probe
//     bench/probes/cpu_scan_probe.cpp     (one command)
//   /tmp/cpu-scan-probe LOG2N [TILE]     e.g. 24 65536
// Prints, per shape, the median and the fastest of 60 runs (uint sums; the two-pass results are
// checked). x86 only (SSE2 intrinsics, as the kernel's 4-vectors compile to).
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

enum class Shape { Copy, CopyStreamingStores, TwoPass, TwoPassStreamingStores, OnePassNoWait };

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

uint32_t Reduce(const uint32_t* p, size_t n) {
  uint32_t a = 0;
  for (size_t i = 0; i < n; ++i)
    a += p[i];
  return a;
}

// The kernel's loop: the 4-vector's prefix by two shifted adds, the run added, stored, the last
// lane broadcast as the next run.
void Scan(const uint32_t* p, uint32_t* q, size_t n, uint32_t run, bool streaming) {
  __m128i r = _mm_set1_epi32(static_cast<int>(run));
  for (size_t i = 0; i < n; i += 4) {
    __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    x = _mm_add_epi32(x, _mm_slli_si128(x, 4));
    x = _mm_add_epi32(x, _mm_slli_si128(x, 8));
    x = _mm_add_epi32(x, r);
    if (streaming)
      _mm_stream_si128(reinterpret_cast<__m128i*>(q + i), x);
    else
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), x);
    r = _mm_shuffle_epi32(x, 0xff);
  }
}

double RunOnce(Shape shape, const uint32_t* in, uint32_t* out, size_t tiles, size_t tile) {
  std::atomic<size_t> ticket{0};
  std::vector<std::atomic<uint64_t>> status(tiles);  // bit 32: the prefix is there
  for (auto& s : status)
    s = 0;
  const double t0 = Now();
  auto work = [&] {
    for (size_t k; (k = ticket++) < tiles;) {
      const uint32_t* p = in + k * tile;
      uint32_t* q = out + k * tile;
      if (shape == Shape::Copy) {
        std::memcpy(q, p, tile * sizeof(uint32_t));
        continue;
      }
      if (shape == Shape::CopyStreamingStores) {
        for (size_t i = 0; i < tile; i += 4)
          _mm_stream_si128(reinterpret_cast<__m128i*>(q + i),
                           _mm_load_si128(reinterpret_cast<const __m128i*>(p + i)));
        continue;
      }
      if (shape == Shape::OnePassNoWait) {
        Scan(p, q, tile, 0, false);
        continue;
      }
      const uint32_t aggregate = Reduce(p, tile);
      uint32_t prefix = 0;
      if (k) {
        uint64_t s;
        while (!((s = status[k - 1].load(std::memory_order_acquire)) >> 32)) {
        }
        prefix = static_cast<uint32_t>(s);
      }
      status[k].store((uint64_t(1) << 32) | (prefix + aggregate), std::memory_order_release);
      Scan(p, q, tile, prefix, shape == Shape::TwoPassStreamingStores);
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  return Now() - t0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::atoi(argv[1]) < 16 || std::atoi(argv[1]) > 30) {
    std::fprintf(stderr, "usage: %s LOG2N (16-30) [TILE (a multiple of 4 dividing n)]\n", argv[0]);
    return 2;
  }
  const size_t n = size_t(1) << std::atoi(argv[1]);
  const size_t tile = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 65536;
  if (tile == 0 || tile % 4 || n % tile) {
    std::fprintf(stderr, "TILE must be a multiple of 4 that divides n\n");
    return 2;
  }
  auto* in = static_cast<uint32_t*>(std::aligned_alloc(64, n * sizeof(uint32_t)));
  auto* out = static_cast<uint32_t*>(std::aligned_alloc(64, n * sizeof(uint32_t)));
  for (size_t i = 0; i < n; ++i)
    in[i] = static_cast<uint32_t>(i * 2654435761u) >> 20;
  std::memset(out, 0, n * sizeof(uint32_t));
  const std::pair<Shape, const char*> shapes[] = {
      {Shape::Copy, "copy (memcpy per tile)"},
      {Shape::CopyStreamingStores, "copy, streaming stores"},
      {Shape::TwoPass, "two-pass scan (the kernel's shape)"},
      {Shape::TwoPassStreamingStores, "two-pass scan, streaming stores"},
      {Shape::OnePassNoWait, "one pass, no wait (not a scan)"}};
  for (const auto& [shape, name] : shapes) {
    std::vector<double> t;
    for (int run = 0; run < 60; ++run)
      t.push_back(RunOnce(shape, in, out, n / tile, tile));
    std::sort(t.begin(), t.end());
    std::string check;
    if (shape == Shape::TwoPass || shape == Shape::TwoPassStreamingStores) {
      uint32_t r = 0;
      check = ", checked";
      for (size_t i = 0; i < n; ++i)
        if (out[i] != (r += in[i])) {
          check = ", WRONG at " + std::to_string(i);
          break;
        }
    }
    const double bytes = 2.0 * n * sizeof(uint32_t);
    std::printf("%-36s median %7.3f ms %5.2f Gelem/s %5.1f GB/s; fastest %5.1f GB/s%s\n", name,
                t[t.size() / 2] * 1e3, n / t[t.size() / 2] / 1e9, bytes / t[t.size() / 2] / 1e9,
                bytes / t[0] / 1e9, check.c_str());
  }
  std::free(in);
  std::free(out);
  return 0;
}
