// scan-trace: where the time of one single-pass scan launch goes, tile by tile (NVIDIA only).
// Builds kernels/Scan.cl's ScanSinglePass for uint sum at the suite's GPU tile (256 x 32),
// prints ptxas's register and local-memory report (-cl-nv-verbose), runs it, validates the
// output and prints the median event time. With a folder made by bench/instrument_scan.py and
// --traced it also reads the per-tile timestamps of the last launch and prints the mean time of
// each phase by start time, and how many tiles were running, and looking back, over time.
//
//   scan-trace --kernels DIR [--n 16777216] [--runs 30] [--traced] [--portable] [--options "..."]
//
// --portable leaves out SP_NV_WARP_SCAN: the local-memory work-group scan and the one-word
// look-back, as on devices without 32-wide warps. Experiments only: the suite never uses it.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void Check(cl_int err, const char* what) {
  if (err != CL_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed with OpenCL error " +
                             std::to_string(err));
}

cl_device_id NvidiaGpu() {
  cl_uint count = 0;
  Check(clGetPlatformIDs(0, nullptr, &count), "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(count);
  Check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  for (cl_platform_id p : platforms) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    cl_device_id d = nullptr;
    if (std::string(name).find("NVIDIA") != std::string::npos &&
        clGetDeviceIDs(p, CL_DEVICE_TYPE_GPU, 1, &d, nullptr) == CL_SUCCESS)
      return d;
  }
  throw std::runtime_error("no NVIDIA GPU platform (is the NVIDIA ICD registered?)");
}

struct Tile {
  double t[5];  // µs from the launch's first tile start: ticket, loaded, scanned, prefix, stored
};

void PrintTimeline(const std::vector<Tile>& tiles) {
  double end = 0;
  for (const Tile& t : tiles)
    end = std::max(end, t.t[4]);
  std::printf("first tile start to last tile end: %.1f us\n", end);
  std::printf(
      "started (us)  tiles  load+reduce  wg-scan  prefix(publish+look-back)  scan+store"
      "  total (mean us)\n");
  for (double b = 0; b < end; b += 10) {
    double sum[5] = {};
    int count = 0;
    for (const Tile& t : tiles) {
      if (t.t[0] < b || t.t[0] >= b + 10)
        continue;
      ++count;
      for (int p = 0; p < 4; ++p)
        sum[p] += t.t[p + 1] - t.t[p];
      sum[4] += t.t[4] - t.t[0];
    }
    if (count)
      std::printf("%5.0f-%-5.0f  %5d  %11.2f  %7.2f  %25.2f  %10.2f  %6.2f\n", b, b + 10, count,
                  sum[0] / count, sum[1] / count, sum[2] / count, sum[3] / count, sum[4] / count);
  }
  std::printf("running tiles / of them waiting for their prefix, every 2.5 us:\n");
  for (double at = 0; at < end + 2.5; at += 2.5) {
    int running = 0, waiting = 0;
    for (const Tile& t : tiles) {
      running += t.t[0] <= at && at < t.t[4];
      waiting += t.t[2] <= at && at < t.t[3];
    }
    std::printf("%.1f:%d/%d%s", at, running, waiting, at + 2.5 < end + 2.5 ? " " : "\n");
  }
}

int Run(const std::string& dir, size_t n, int runs, bool traced, bool portable,
        const std::string& extra) {
  const size_t local = 256, items = 32, tileSize = local * items;
  const size_t tiles = (n + tileSize - 1) / tileSize;
  cl_device_id dev = NvidiaGpu();
  cl_int err = CL_SUCCESS;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  Check(err, "clCreateContext");
  cl_command_queue queue = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
  Check(err, "clCreateCommandQueue");

  std::ifstream file(dir + "/Scan.cl");
  if (!file)
    throw std::runtime_error("cannot read " + dir + "/Scan.cl");
  std::stringstream text;
  text << file.rdbuf();
  const std::string source = text.str();
  const char* sources[] = {source.c_str()};
  cl_program program = clCreateProgramWithSource(ctx, 1, sources, nullptr, &err);
  Check(err, "clCreateProgramWithSource");
  std::string options = "-cl-std=CL1.2 -cl-nv-verbose -I " + dir +
                        " -DT=uint -DT_UINT=1 -DOP_SUM=1 -DIDENTITY=((T)0) -DLOCAL_SIZE=256"
                        " -DITEMS=32 -DHAS_INT64_BASE_ATOMICS=1 " +
                        (portable ? "" : "-DSP_NV_WARP_SCAN=1 ") + extra;
  const cl_int built = clBuildProgram(program, 1, &dev, options.c_str(), nullptr, nullptr);
  size_t logSize = 0;
  clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &logSize);
  std::string log(logSize, '\0');
  clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, logSize, log.data(), nullptr);
  std::istringstream lines(log);
  bool inScan = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("Compiling entry function") != std::string::npos)
      inScan = line.find("ScanSinglePass") != std::string::npos;
    if (built != CL_SUCCESS || (inScan && line.find("Used") != std::string::npos))
      std::printf("%s\n", line.c_str());
  }
  Check(built, "clBuildProgram");
  cl_kernel kernel = clCreateKernel(program, "ScanSinglePass", &err);
  Check(err, "clCreateKernel");

  std::vector<cl_uint> input(n);
  std::mt19937 rng(1);
  for (cl_uint& v : input)
    v = rng() % 10;
  std::vector<cl_ulong> zeros(tiles * 8, 0);
  cl_uint zero = 0;
  auto buffer = [&](size_t bytes, const void* init) {
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                              const_cast<void*>(init), &err);
    Check(err, "clCreateBuffer");
    return b;
  };
  cl_mem src = buffer(n * 4, input.data()), dst = buffer(n * 4, nullptr);
  cl_mem status = buffer(tiles * 8, zeros.data()), ticket = buffer(4, &zero);
  cl_mem trace = buffer(tiles * 64, zeros.data());
  const cl_uint count = cl_uint(n), inclusive = 1;
  Check(clSetKernelArg(kernel, 0, sizeof src, &src), "clSetKernelArg");
  Check(clSetKernelArg(kernel, 1, sizeof dst, &dst), "clSetKernelArg");
  Check(clSetKernelArg(kernel, 2, sizeof count, &count), "clSetKernelArg");
  Check(clSetKernelArg(kernel, 3, sizeof inclusive, &inclusive), "clSetKernelArg");
  Check(clSetKernelArg(kernel, 4, sizeof status, &status), "clSetKernelArg");
  Check(clSetKernelArg(kernel, 5, sizeof ticket, &ticket), "clSetKernelArg");
  if (traced)
    Check(clSetKernelArg(kernel, 8, sizeof trace, &trace),
          "clSetKernelArg (trace: --traced "
          "needs an instrumented folder)");
  std::vector<double> us;
  cl_uint ticketBase = 0;
  for (int r = 0; r < runs; ++r) {
    const cl_uint gen = cl_uint(r + 1);  // the suite's protocol: a new generation per launch
    Check(clSetKernelArg(kernel, 6, sizeof ticketBase, &ticketBase), "clSetKernelArg");
    Check(clSetKernelArg(kernel, 7, sizeof gen, &gen), "clSetKernelArg");
    const size_t global = tiles * local;
    cl_event ev = nullptr;
    Check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, &ev),
          "clEnqueueNDRangeKernel");
    Check(clWaitForEvents(1, &ev), "clWaitForEvents");
    cl_ulong start = 0, stop = 0;
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof stop, &stop, nullptr);
    us.push_back((stop - start) / 1e3);
    clReleaseEvent(ev);
    ticketBase += cl_uint(tiles);
  }
  std::vector<cl_uint> out(n);
  Check(clEnqueueReadBuffer(queue, dst, CL_TRUE, 0, n * 4, out.data(), 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
  size_t wrong = 0;
  cl_uint run = 0;
  for (size_t i = 0; i < n; ++i) {
    run += input[i];
    wrong += out[i] != run;
  }
  std::vector<double> sorted = us;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  std::printf(
      "n=%zu tiles=%zu runs=%d wrong elements=%zu median %.1f us (min %.1f) = %.1f "
      "Gelem/s\n",
      n, tiles, runs, wrong, median, sorted.front(), n / median / 1e3);
  if (traced) {
    std::vector<cl_ulong> raw(tiles * 8);
    Check(
        clEnqueueReadBuffer(queue, trace, CL_TRUE, 0, tiles * 64, raw.data(), 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
    cl_ulong first = ~0ull;
    for (size_t t = 0; t < tiles; ++t)
      first = std::min(first, raw[t * 8]);
    std::vector<Tile> timeline(tiles);
    for (size_t t = 0; t < tiles; ++t)
      for (int p = 0; p < 5; ++p)
        timeline[t].t[p] = (raw[t * 8 + p] - first) / 1e3;
    std::printf("last launch: %.1f us\n", us.back());
    PrintTimeline(timeline);
  }
  return wrong ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"scan-trace: the single-pass scan's time, tile by tile, on an NVIDIA GPU"};
  std::string dir = "kernels", options;
  size_t n = size_t(1) << 24;
  int runs = 30;
  bool traced = false, portable = false;
  app.add_option("--kernels", dir, "kernels folder (instrumented for --traced)");
  app.add_option("--n", n, "elements (uint), e.g. 16777216")
      ->check(CLI::Range(size_t(1), size_t(1) << 31));
  app.add_option("--runs", runs, "launches; the median is printed")->check(CLI::Range(1, 100000));
  app.add_flag("--traced", traced, "the folder is from bench/instrument_scan.py: print phases");
  app.add_flag("--portable", portable, "build without SP_NV_WARP_SCAN");
  app.add_option("--options", options, "extra build options, e.g. -cl-nv-maxrregcount=48");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;  // a bad option is a usage error, as in the suite
  }
  try {
    return Run(dir, n, runs, traced, portable, options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scan-trace: %s\n", e.what());
    return 3;
  }
}
