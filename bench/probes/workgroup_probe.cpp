// One-off probe (2026-11-23, results in docs/results/h100-workgroup-probe.txt): what makes
// NVIDIA's OpenCL report CL_KERNEL_WORK_GROUP_SIZE 256, and does a launch above it run?
// Each build of a one-line kernel (work-item 0 of a group writes get_local_size(0), the others
// 1) prints the driver's figures, then launches at 256, 512 and 1024 and shows out[0].
//   g++ -std=c++17 -O1 -o /tmp/probe bench/probes/workgroup_probe.cpp -lOpenCL
//   /tmp/probe [FILE KERNEL OPTIONS...]   (a suite kernel: its figures per option string)
// Not built by CMake: a record of how docs/BENCHMARKS.md's "Work-group sizes past 256" was found.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
static cl_device_id dev;
static cl_context ctx;
static cl_command_queue q;
static void Try(const char* name, const std::string& src, const std::string& opts,
                const char* kname, bool launch) {
  const char* s = src.c_str();
  cl_int e;
  cl_program p = clCreateProgramWithSource(ctx, 1, &s, nullptr, &e);
  e = clBuildProgram(p, 1, &dev, opts.c_str(), nullptr, nullptr);
  if (e) {
    char log[4096] = {0};
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, nullptr);
    printf("%-34s build error %d %s\n", name, e, log);
    return;
  }
  cl_kernel k = clCreateKernel(p, kname, &e);
  size_t wg = 0, pref = 0, cwg[3] = {0};
  cl_ulong lm = 0;
  clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, nullptr);
  clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof pref, &pref,
                           nullptr);
  clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof lm, &lm, nullptr);
  clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof cwg, cwg, nullptr);
  printf("%-34s wg-max %4zu pref %zu local %llu compile %zu", name, wg, pref,
         (unsigned long long)lm, cwg[0]);
  if (launch) {
    for (size_t L : {256, 512, 1024}) {
      cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4 * 4096, nullptr, &e);
      std::vector<int> h(4096, 0);
      clEnqueueWriteBuffer(q, b, CL_TRUE, 0, 4 * 4096, h.data(), 0, nullptr, nullptr);
      clSetKernelArg(k, 0, sizeof b, &b);
      size_t g = 4096;
      e = clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, &L, 0, nullptr, nullptr);
      cl_int f = clFinish(q);
      clEnqueueReadBuffer(q, b, CL_TRUE, 0, 4 * 4096, h.data(), 0, nullptr, nullptr);
      printf(" | L=%zu enqueue %d finish %d out[0]=%d", L, e, f, h[0]);
      clReleaseMemObject(b);
    }
  }
  printf("\n");
  clReleaseKernel(k);
  clReleaseProgram(p);
}
int main(int argc, char** argv) {
  cl_uint np;
  cl_platform_id ps[8];
  clGetPlatformIDs(8, ps, &np);
  for (cl_uint i = 0; i < np; ++i) {
    char n[256];
    clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof n, n, nullptr);
    if (std::string(n).find("NVIDIA") != std::string::npos)
      clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 1, &dev, nullptr);
  }
  ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, nullptr);
  q = clCreateCommandQueue(ctx, dev, 0, nullptr);
  std::string plain =
      "__kernel void k(__global int* a) { size_t i = get_global_id(0); a[i] = get_local_id(0) == 0 "
      "? (int)get_local_size(0) : 1; }\n";
  std::string bar =
      "__kernel void k(__global int* a) { __local int s[1]; if (get_local_id(0) == 0) s[0] = "
      "(int)get_local_size(0); barrier(CLK_LOCAL_MEM_FENCE); size_t i = get_global_id(0); a[i] = "
      "get_local_id(0) == 0 ? s[0] : 1; }\n";
  std::string req = "__attribute__((reqd_work_group_size(1024,1,1)))\n" + plain;
  Try("plain", plain, "", "k", true);
  Try("plain -cl-std=CL1.2", plain, "-cl-std=CL1.2", "k", true);
  Try("plain -cl-std=CL3.0", plain, "-cl-std=CL3.0", "k", true);
  Try("plain -cl-nv-verbose", plain, "-cl-nv-verbose", "k", true);
  Try("plain -cl-opt-disable", plain, "-cl-opt-disable", "k", true);
  Try("plain -cl-nv-maxrregcount=32", plain, "-cl-nv-maxrregcount=32", "k", true);
  Try("plain -DX=1", plain, "-DX=1", "k", true);
  Try("plain -I kernels", plain, "-I kernels", "k", true);
  Try("barrier", bar, "", "k", true);
  Try("barrier -cl-std=CL1.2", bar, "-cl-std=CL1.2", "k", true);
  Try("reqd 1024", req, "", "k", true);
  Try("reqd 1024 -cl-std=CL1.2", req, "-cl-std=CL1.2", "k", true);
  if (argc > 1) {
    std::ifstream f(argv[1]);
    std::stringstream t;
    t << f.rdbuf();
    for (int j = 3; j < argc; ++j)
      Try((std::string(argv[2]) + " opts#" + std::to_string(j - 2)).c_str(), t.str(), argv[j],
          argv[2], false);
  }
}
