// One-off probe (2026-11-23, results in docs/BENCHMARKS.md "Convolution", H100): the FP32
// multiply-add rate an OpenCL kernel sustains on the first NVIDIA device, the compute ceiling of
// tiled-2d at wide masks. Each work-item runs CHAINS independent a = a * b + c chains (enough to
// hide the FMA latency), ITERS times; 64 work-groups of 256 per compute unit; best of 10 runs.
//   g++ -std=c++17 -O1 -o /tmp/fma bench/probes/fma_probe.cpp -lOpenCL && /tmp/fma
// Not built by CMake: a record of how the compute ceiling in docs/BENCHMARKS.md was measured.
#include <cstdio>
#include <string>
#include <vector>
#include "NvidiaDevice.h"

static const char* kSource = R"(
#define CHAINS 16
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void Fma(__global float* out, float b, float c, uint iters) {
  float a[CHAINS];
  for (uint i = 0; i < CHAINS; ++i) a[i] = get_global_id(0) + i;
  for (uint k = 0; k < iters; ++k) {
#pragma unroll
    for (uint i = 0; i < CHAINS; ++i) a[i] = fma(a[i], b, c);
  }
  float s = 0;
  for (uint i = 0; i < CHAINS; ++i) s += a[i];
  out[get_global_id(0)] = s;
}
)";

int main() {
  cl_device_id dev = FirstNvidiaDevice();
  if (!dev) {
    printf("no NVIDIA device\n");
    return 1;
  }
  cl_uint cus = 0, mhz = 0;
  clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, nullptr);
  clGetDeviceInfo(dev, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof mhz, &mhz, nullptr);
  cl_int e;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &e);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &e);
  cl_program p = clCreateProgramWithSource(ctx, 1, &kSource, nullptr, &e);
  if (clBuildProgram(p, 1, &dev, "", nullptr, nullptr) != CL_SUCCESS) {
    printf("build failed\n");
    return 1;
  }
  cl_kernel k = clCreateKernel(p, "Fma", &e);
  const size_t local = 256, global = size_t(cus) * 64 * local;
  cl_mem out = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, global * 4, nullptr, &e);
  const float b = 0.999f, c = 0.001f;
  const cl_uint iters = 4096;
  clSetKernelArg(k, 0, sizeof out, &out);
  clSetKernelArg(k, 1, sizeof b, &b);
  clSetKernelArg(k, 2, sizeof c, &c);
  clSetKernelArg(k, 3, sizeof iters, &iters);
  double best = 1e30;
  for (int r = 0; r < 11; ++r) {
    cl_event ev;
    clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, &ev);
    clWaitForEvents(1, &ev);
    cl_ulong t0, t1;
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, nullptr);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, nullptr);
    if (r > 0 && double(t1 - t0) < best)
      best = double(t1 - t0);
    clReleaseEvent(ev);
  }
  const double fmas = double(global) * iters * 16;
  printf(
      "fma probe: %u compute units, max clock %u MHz: %.1f T FMA/s sustained (%.3f ms), "
      "%.0f%% of %u x 128 lanes x %u MHz\n",
      cus, mhz, fmas / best * 1e-3, best * 1e-6,
      100.0 * fmas / best * 1e-3 / (cus * 128.0 * mhz * 1e-6), cus, mhz);
}
