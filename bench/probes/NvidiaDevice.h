// Shared by the one-off probes in bench/probes: the first device of the first OpenCL platform
// whose name contains "NVIDIA" (nullptr when there is none).
#pragma once
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <string>

inline cl_device_id FirstNvidiaDevice() {
  cl_uint np = 0;
  cl_platform_id ps[8];
  clGetPlatformIDs(8, ps, &np);
  for (cl_uint i = 0; i < np && i < 8; ++i) {
    char n[256] = {0};
    clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof n, n, nullptr);
    cl_device_id dev = nullptr;
    if (std::string(n).find("NVIDIA") != std::string::npos &&
        clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 1, &dev, nullptr) == CL_SUCCESS)
      return dev;
  }
  return nullptr;
}
