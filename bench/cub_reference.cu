// CUB reference for reduce-scan-bench: cub::DeviceReduce (Sum/Min/Max) and cub::DeviceScan
// (InclusiveSum / ExclusiveSum, or with Min/Max), for the suite's types and sizes, timed with
// CUDA events, median of repeated runs after a warm-up. Prints one JSON object per line.
//
// usage: cub-reference [--sizes 2^24,2^26] [--types uint,float] [--reps 40]
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

int reps = 40;

template <class F>
float MedianMs(F f) {
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

void Print(const char* task, const char* algo, const char* type, size_t n, float ms, size_t bytes) {
  std::printf(
      "{\"task\":\"%s\",\"algorithm\":\"%s\",\"type\":\"%s\",\"op\":\"sum\",\"n\":%zu,"
      "\"time_ms\":%.6f,\"gelem_s\":%.3f,\"gbytes_s\":%.3f}\n",
      task, algo, type, n, ms, n / (ms * 1e6), bytes / (ms * 1e6));
  std::fflush(stdout);
}

template <class T>
void Run(const char* type, size_t n) {
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
  const float r =
      MedianMs([&] { CK(cub::DeviceReduce::Sum(tmp, tb, in, out, static_cast<int64_t>(n))); });
  Print("reduction", "cub::DeviceReduce::Sum", type, n, r, n * sizeof(T));
  const float s = MedianMs(
      [&] { CK(cub::DeviceScan::InclusiveSum(tmp, tb, in, out, static_cast<int64_t>(n))); });
  Print("scan", "cub::DeviceScan::InclusiveSum", type, n, s, 2 * n * sizeof(T));
  const float c =
      MedianMs([&] { CK(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
  Print("copy", "cudaMemcpy D2D", type, n, c, 2 * n * sizeof(T));
  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(tmp));
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos)
      end = s.size();
    if (end > start)
      out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

size_t ParseSize(const std::string& s) {
  if (s.rfind("2^", 0) == 0)
    return size_t(1) << std::stoul(s.substr(2));
  return std::stoull(s);
}

}  // namespace

int main(int argc, char** argv) {
  std::string sizes = "2^20,2^24,2^26,2^28", types = "uint,float";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--sizes"))
      sizes = argv[i + 1];
    else if (!std::strcmp(argv[i], "--types"))
      types = argv[i + 1];
    else if (!std::strcmp(argv[i], "--reps"))
      reps = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: cub-reference [--sizes LIST] [--types LIST] [--reps N]\n");
      return 2;
    }
  }
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::fprintf(stderr, "cub-reference on %s (%d SMs)\n", p.name, p.multiProcessorCount);
  for (const auto& s : Split(sizes))
    for (const auto& t : Split(types)) {
      const size_t n = ParseSize(s);
      if (t == "uint")
        Run<uint32_t>("uint", n);
      else if (t == "int")
        Run<int32_t>("int", n);
      else if (t == "float")
        Run<float>("float", n);
      else if (t == "ulong")
        Run<uint64_t>("ulong", n);
      else if (t == "long")
        Run<int64_t>("long", n);
      else if (t == "double")
        Run<double>("double", n);
      else {
        std::fprintf(stderr, "unknown type %s\n", t.c_str());
        return 2;
      }
    }
  return 0;
}
