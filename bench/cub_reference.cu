// CUB reference for reduce-scan-bench: cub::DeviceReduce::Sum, cub::DeviceScan::InclusiveSum and
// a device-to-device cudaMemcpy, for the suite's types and sizes, timed with CUDA events, median
// of repeated runs after a warm-up. Prints one JSON object per line.
//
// usage: cub-reference [--sizes 2^24,2^26] [--types uint,float] [--reps 40]
#include "Reference.h"

#include <cub/cub.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
        Run<uint32_t>(o.reps, t, n);
      else if (t == "int")
        Run<int32_t>(o.reps, t, n);
      else if (t == "float")
        Run<float>(o.reps, t, n);
      else if (t == "ulong")
        Run<uint64_t>(o.reps, t, n);
      else if (t == "long")
        Run<int64_t>(o.reps, t, n);
      else
        Run<double>(o.reps, t, n);
    }
  return 0;
}
