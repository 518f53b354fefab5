// npp-reference: what a CUDA user would pick instead of writing a 2-D convolution: NPP's
// general float filter (nppiFilterBorder_32f_C1R_Ctx, single channel, W x W float mask), timed
// on the same image sizes and masks as the suite's `convolution` task (docs/BENCHMARKS.md).
//
//   npp-reference [--width 8192] [--height 8192] [--masks 5,9] [--iterations 50]
//
// Prints one line per mask: median, min kernel time (CUDA events, after 3 warm-up runs) and
// Gelem/s of outputs. NPP's border control replicates the edge (NPP_BORDER_REPLICATE: the
// filters with border control offer no zero border), where the suite's kernels read ghost
// cells as 0: the same work per output, different values at the border, so only timings are
// compared. Self-contained (no other header of the suite), so that a bare
// `nvcc -O3 bench/npp_reference.cu -lnppif -lnppc` builds it where CMake is not at hand.
#include <cuda_runtime.h>
#include <npp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "error: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(3);
  }
}

void Check(NppStatus s, const char* what) {
  if (s != NPP_SUCCESS) {
    std::fprintf(stderr, "error: %s: NppStatus %d\n", what, static_cast<int>(s));
    std::exit(3);
  }
}

unsigned long Number(const char* option, const std::string& v) {
  char* end = nullptr;
  const unsigned long x = std::strtoul(v.c_str(), &end, 10);
  if (v.empty() || *end || x == 0) {
    std::fprintf(stderr, "error: %s '%s': not allowed; allowed: a whole number >= 1\n", option,
                 v.c_str());
    std::exit(2);
  }
  return x;
}

NppStreamContext StreamContext(cudaStream_t stream) {
  NppStreamContext ctx{};
  int device = 0;
  Check(cudaGetDevice(&device), "cudaGetDevice");
  ctx.hStream = stream;
  ctx.nCudaDeviceId = device;
  Check(cudaDeviceGetAttribute(&ctx.nMultiProcessorCount, cudaDevAttrMultiProcessorCount, device),
        "cudaDeviceGetAttribute");
  Check(cudaDeviceGetAttribute(&ctx.nMaxThreadsPerMultiProcessor,
                               cudaDevAttrMaxThreadsPerMultiProcessor, device),
        "cudaDeviceGetAttribute");
  Check(cudaDeviceGetAttribute(&ctx.nMaxThreadsPerBlock, cudaDevAttrMaxThreadsPerBlock, device),
        "cudaDeviceGetAttribute");
  int shared = 0;
  Check(cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerBlock, device),
        "cudaDeviceGetAttribute");
  ctx.nSharedMemPerBlock = static_cast<size_t>(shared);
  Check(cudaDeviceGetAttribute(&ctx.nCudaDevAttrComputeCapabilityMajor,
                               cudaDevAttrComputeCapabilityMajor, device),
        "cudaDeviceGetAttribute");
  Check(cudaDeviceGetAttribute(&ctx.nCudaDevAttrComputeCapabilityMinor,
                               cudaDevAttrComputeCapabilityMinor, device),
        "cudaDeviceGetAttribute");
  unsigned flags = 0;
  Check(cudaStreamGetFlags(stream, &flags), "cudaStreamGetFlags");
  ctx.nStreamFlags = flags;
  return ctx;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned long width = 8192, height = 8192, iterations = 50;
  std::vector<unsigned long> masks = {5, 9};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "error: %s: needs a value\n", a.c_str());
      return 2;
    }
    const std::string v = argv[++i];
    if (a == "--width") {
      width = Number("--width", v);
    } else if (a == "--height") {
      height = Number("--height", v);
    } else if (a == "--iterations") {
      iterations = Number("--iterations", v);
    } else if (a == "--masks") {
      masks.clear();
      std::stringstream ss(v);
      for (std::string m; std::getline(ss, m, ',');) {
        const unsigned long w = Number("--masks", m);
        if (w % 2 == 0 || w > 31) {
          std::fprintf(stderr, "error: --masks '%s': not allowed; allowed: odd widths 1 to 31\n",
                       m.c_str());
          return 2;
        }
        masks.push_back(w);
      }
    } else {
      std::fprintf(stderr, "error: %s: unknown option; allowed: --width --height --masks "
                   "--iterations\n", a.c_str());
      return 2;
    }
  }
  const size_t n = size_t(width) * height;
  std::vector<float> host(n);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (float& x : host)
    x = dist(rng);
  float *src = nullptr, *dst = nullptr, *mask = nullptr;
  Check(cudaMalloc(&src, n * sizeof(float)), "cudaMalloc");
  Check(cudaMalloc(&dst, n * sizeof(float)), "cudaMalloc");
  Check(cudaMalloc(&mask, 31 * 31 * sizeof(float)), "cudaMalloc");
  Check(cudaMemcpy(src, host.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
  cudaStream_t stream;
  Check(cudaStreamCreate(&stream), "cudaStreamCreate");
  const NppStreamContext ctx = StreamContext(stream);
  cudaEvent_t start, stop;
  Check(cudaEventCreate(&start), "cudaEventCreate");
  Check(cudaEventCreate(&stop), "cudaEventCreate");
  const int step = static_cast<int>(width * sizeof(float));
  const NppiSize size{static_cast<int>(width), static_cast<int>(height)};
  for (unsigned long w : masks) {
    std::vector<float> m(w * w);
    for (float& x : m)
      x = dist(rng);
    Check(cudaMemcpy(mask, m.data(), m.size() * sizeof(float), cudaMemcpyHostToDevice),
          "cudaMemcpy");
    const NppiSize kernel{static_cast<int>(w), static_cast<int>(w)};
    const NppiPoint anchor{static_cast<int>(w / 2), static_cast<int>(w / 2)};
    auto once = [&] {
      Check(nppiFilterBorder_32f_C1R_Ctx(src, step, size, NppiPoint{0, 0}, dst, step, size, mask,
                                         kernel, anchor, NPP_BORDER_REPLICATE, ctx),
            "nppiFilterBorder_32f_C1R_Ctx");
    };
    for (int i = 0; i < 3; ++i)
      once();
    std::vector<float> ms;
    for (unsigned long i = 0; i < iterations; ++i) {
      Check(cudaEventRecord(start, stream), "cudaEventRecord");
      once();
      Check(cudaEventRecord(stop, stream), "cudaEventRecord");
      Check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float t = 0;
      Check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    std::printf("npp nppiFilterBorder_32f_C1R %lux%lu mask %lu: median %.4f ms, min %.4f ms, "
                "%.2f Gelem/s, %.1f GB/s (read + write once)\n",
                width, height, w, median, ms.front(), double(n) / (median * 1e6),
                2.0 * double(n) * sizeof(float) / (median * 1e6));
  }
  cudaFree(src), cudaFree(dst), cudaFree(mask);
  return 0;
}
