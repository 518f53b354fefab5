// One-off probe (2026-11-23, results in docs/results/h100-fill-probe.txt): which
// clEnqueueFillBuffer ranges NVIDIA's driver completes on a 17 GiB buffer; one process per fill
// (a fault loses the context), each under `timeout 20`.
//   g++ -std=c++17 -O1 -o /tmp/fill bench/probes/fill_probe.cpp -lOpenCL
//   /tmp/fill OFFSET_GIB SIZE_GIB PATTERN_BYTES
// Not built by CMake: a record of how docs/BENCHMARKS.md's "Sizes past 2^31" found the limit.
#include <cstdio>
#include <cstdlib>
#include <string>
#include "NvidiaDevice.h"
int main(int argc, char** argv) {
  if (argc < 4) {
    printf("usage: %s OFFSET_GIB SIZE_GIB PATTERN_BYTES\n", argv[0]);
    return 2;
  }
  const size_t G = size_t(1) << 30;
  const size_t off = size_t(atof(argv[1]) * G), size = size_t(atof(argv[2]) * G),
               pat = atoi(argv[3]);
  cl_device_id dev = FirstNvidiaDevice();
  if (!dev) {
    printf("no NVIDIA device\n");
    return 1;
  }
  cl_int e;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &e);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 17 * G, nullptr, &e);
  unsigned long long p = 0x7f7f7f7f7f7f7f7full;
  e = clEnqueueFillBuffer(q, b, &p, pat, off, size, 0, nullptr, nullptr);
  cl_int f = clFinish(q);
  unsigned char h[16] = {0};
  cl_int r = clEnqueueReadBuffer(q, b, CL_TRUE, off + size - 16, 16, h, 0, nullptr, nullptr);
  printf(
      "fill offset %.2f GiB size %.2f GiB pattern %zu: enqueue %d finish %d read %d last byte "
      "%#x\n",
      atof(argv[1]), atof(argv[2]), pat, e, f, r, h[15]);
}
