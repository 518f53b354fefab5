// CUB reference for reduce-scan-bench: cub::DeviceReduce::Sum, cub::DeviceScan::InclusiveSum, a
// device-to-device cudaMemcpy and cub::DeviceSelect::If (stream compaction, "keep x < t" on x
// uniform in [0, 100) with 1%, 50% and 99% kept, checked against std::copy_if), for the suite's
// types and sizes, timed with CUDA events, median of repeated runs after a warm-up. Prints one
// JSON object per line.
//
// usage: cub-reference [--sizes 2^24,2^26] [--types uint,float] [--reps 40]
#include "Reference.h"

#include <cub/cub.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e = (x);                                                                           \
    if (e != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); \
      std::exit(3);                                                                                \
    }                                                                                              \
  } while (0)

namespace {

template <class F>
float MedianMs(int reps, F f) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 5; ++i)
    f();
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return t[t.size() / 2];
}

template <class T>
void Run(int reps, const std::string& type, size_t n) {
  std::vector<T> h(n);
  std::mt19937_64 g(1);
  for (auto& x : h)
    x = static_cast<T>(g() % 2001);
  T *in, *out;
  CK(cudaMalloc(&in, n * sizeof(T)));
  CK(cudaMalloc(&out, n * sizeof(T)));
  CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  size_t tr = 0, ts = 0;
  CK(cub::DeviceReduce::Sum(nullptr, tr, in, out, static_cast<int64_t>(n)));
  CK(cub::DeviceScan::InclusiveSum(nullptr, ts, in, out, static_cast<int64_t>(n)));
  size_t tb = std::max(tr, ts);
  void* tmp = nullptr;
  CK(cudaMalloc(&tmp, std::max<size_t>(tb, 1)));
  const float r = MedianMs(
      reps, [&] { CK(cub::DeviceReduce::Sum(tmp, tb, in, out, static_cast<int64_t>(n))); });
  rsb::bench::PrintResult("reduction", "cub::DeviceReduce::Sum", type, n, r, n * sizeof(T));
  const float s = MedianMs(
      reps, [&] { CK(cub::DeviceScan::InclusiveSum(tmp, tb, in, out, static_cast<int64_t>(n))); });
  rsb::bench::PrintResult("scan", "cub::DeviceScan::InclusiveSum", type, n, s, 2 * n * sizeof(T));
  const float c = MedianMs(
      reps, [&] { CK(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
  rsb::bench::PrintResult("copy", "cudaMemcpy D2D", type, n, c, 2 * n * sizeof(T));
  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(tmp));
}

template <class T>
struct Below {
  T t;
  __host__ __device__ bool operator()(const T& x) const { return x < t; }
};

// cub::DeviceSelect::If keeping x < kept on x uniform in [0, 100): kept% of the input, in order.
// Each fraction's output is checked against std::copy_if (exit 1 where it differs), so that a
// broken build cannot report a speed.
template <class T>
void RunSelect(int reps, const std::string& type, size_t n) {
  std::vector<T> h(n);
  std::mt19937_64 g(7);
  for (auto& x : h)
    x = static_cast<T>(g() % 100);
  T *in, *out;
  int64_t* count;
  CK(cudaMalloc(&in, n * sizeof(T)));
  CK(cudaMalloc(&out, n * sizeof(T)));
  CK(cudaMalloc(&count, sizeof(int64_t)));
  CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  for (int kept : rsb::bench::SelectKeptPercents()) {
    const Below<T> pred{static_cast<T>(kept)};
    const int64_t items = static_cast<int64_t>(n);
    size_t tb = 0;
    CK(cub::DeviceSelect::If(nullptr, tb, in, out, count, items, pred));
    void* tmp = nullptr;
    CK(cudaMalloc(&tmp, std::max<size_t>(tb, 1)));
    const float ms =
        MedianMs(reps, [&] { CK(cub::DeviceSelect::If(tmp, tb, in, out, count, items, pred)); });
    int64_t k = 0;
    CK(cudaMemcpy(&k, count, sizeof(k), cudaMemcpyDeviceToHost));
    std::vector<T> got(static_cast<size_t>(k)), want;
    CK(cudaMemcpy(got.data(), out, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
    std::copy_if(h.begin(), h.end(), std::back_inserter(want), [&](T x) { return pred(x); });
    if (got != want) {
      std::fprintf(stderr, "cub-reference: select %s n=%zu kept %d%%: %lld kept, expected %zu\n",
                   type.c_str(), n, kept, static_cast<long long>(k), want.size());
      std::exit(1);
    }
    rsb::bench::PrintSelect("cub::DeviceSelect::If", type, n, kept, ms,
                            (n + want.size()) * sizeof(T));
    CK(cudaFree(tmp));
  }
  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(count));
}

template <class T>
void RunAll(int reps, const std::string& type, size_t n) {
  Run<T>(reps, type, n);
  RunSelect<T>(reps, type, n);
}

}  // namespace

int main(int argc, char** argv) {
  rsb::bench::ReferenceOptions o;
  o.sizes = {size_t(1) << 20, size_t(1) << 24, size_t(1) << 26, size_t(1) << 28};
  o.types = {"uint", "float"};
  o.reps = 40;
  rsb::bench::ParseReferenceOptions(argc, argv, "cub-reference",
                                    {"int", "uint", "long", "ulong", "float", "double"}, false, o);
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::fprintf(stderr, "cub-reference on %s (%d SMs)\n", p.name, p.multiProcessorCount);
  for (size_t n : o.sizes)
    for (const auto& t : o.types) {
      if (t == "uint")
        RunAll<uint32_t>(o.reps, t, n);
      else if (t == "int")
        RunAll<int32_t>(o.reps, t, n);
      else if (t == "float")
        RunAll<float>(o.reps, t, n);
      else if (t == "ulong")
        RunAll<uint64_t>(o.reps, t, n);
      else if (t == "long")
        RunAll<int64_t>(o.reps, t, n);
      else
        RunAll<double>(o.reps, t, n);
    }
  return 0;
}
