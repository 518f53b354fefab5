// scan-trace: where the time of one single-pass scan launch goes, tile by tile (NVIDIA only).
// Builds kernels/SinglePassScan.cl's ScanSinglePass for uint (or ulong) sum with the suite's
// options and GPU tile, prints ptxas's register and local-memory report (-cl-nv-verbose), runs it,
// validates the output and prints the median event time. With --traced it builds the kernel with
// -DSP_TRACE=1 (kernels/SinglePassTrace.clh: per-tile timestamps in an extra last argument), reads
// the timestamps of the last launch and prints the mean time of each phase by start time, and how
// many tiles were running, and looking back, over time.
//
//   scan-trace [--kernels DIR] [--n 2^24] [--type uint|ulong] [--runs 30] [--traced] [--portable]
//              [--options "..."] [--tune NAME=V ...]
//
// --portable leaves out SP_NV_WARP_SCAN: the local-memory work-group scan and the one-word
// look-back, as on devices without 32-wide warps. Experiments only: the suite never uses it.
#include "cli/Cli.h"
#include "engine/TaskUtil.h"
#include "platform/CLUtil.h"
#include "platform/Errors.h"
#include "platform/Sizes.h"
#include "tasks/CScanTask.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace rsb {
namespace {

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

// Prints ptxas's lines for ScanSinglePass from the build log (all of it if the build failed).
void PrintPtxasReport(const std::string& log, bool failed) {
  std::istringstream lines(log);
  bool inScan = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("Compiling entry function") != std::string::npos)
      inScan = line.find("ScanSinglePass") != std::string::npos;
    if (failed || (inScan && line.find("Used") != std::string::npos))
      std::printf("%s\n", line.c_str());
  }
}

template <typename E>
int Run(const std::string& dir, size_t n, int runs, bool traced, bool portable,
        const std::string& extra, const std::map<std::string, size_t>& tuning) {
  cl::Device device;
  try {
    device = SelectDevice("NVIDIA", "");
  } catch (const UsageError&) {
    throw UsageError(
        "an NVIDIA GPU is needed; no NVIDIA platform is listed (is its ICD "
        "registered? see docs/USAGE.md)");
  }
  const DeviceInfo info = DescribeDevice(device);
  if (!info.isGpu || info.nvWarpSize == 0)
    throw UsageError("an NVIDIA GPU is needed (the trace reads %globaltimer through PTX)");
  ProblemSpec spec;
  spec.type = sizeof(E) == 8 ? ElementType::Ulong : ElementType::Uint;
  spec.tuning = tuning;
  CScanTask::SetKind(spec, ScanKind::Inclusive);
  spec.n = n;
  spec.codePath = CodePath::Gpu;
  spec.portable = portable;
  const CScanTask task;
  spec.localSize = task.LocalSize("single-pass", spec, info);
  const size_t local = spec.localSize;
  const size_t tileSize = task.SinglePassTile(info, spec);
  const size_t tiles = CeilDiv(n, tileSize);
  cl::Context context(device);
  cl::CommandQueue queue(context, device, CL_QUEUE_PROFILING_ENABLE);

  const std::string path = dir + "/SinglePassScan.cl";
  std::ifstream file(path);
  if (!file)
    throw UsageError("--kernels '" + dir + "': cannot read SinglePassScan.cl there");
  std::stringstream text;
  text << file.rdbuf();
  cl::Program program(context, text.str());
  // The suite's options for this kernel (its launch plan), plus ptxas's report.
  const LaunchPlan plan = task.PlanFor(info, "single-pass", spec);
  std::string options =
      "-cl-std=CL1.2 -cl-nv-verbose -I " + dir + " " + plan.BuildOptions() + " " + extra;
  if (traced)  // the timestamps, in an extra last kernel argument (SinglePassTrace.clh)
    options += " -DSP_TRACE=1";
  cl_int built = CL_SUCCESS;
  try {
    program.build({device}, options.c_str());
  } catch (const cl::Error& e) {
    built = e.err();
  }
  PrintPtxasReport(program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device), built != CL_SUCCESS);
  if (built != CL_SUCCESS)
    throw DeviceError("the build of " + path + " failed (log above)");
  cl::Kernel kernel(program, "ScanSinglePass");

  std::vector<E> input(n);
  std::mt19937 rng(1);
  for (E& v : input)
    v = rng() % 10;
  std::vector<cl_ulong> zeros(tiles * 8, 0);
  cl_uint zero = 0;
  cl::Buffer src(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(E), input.data());
  cl::Buffer dst(context, CL_MEM_READ_WRITE, n * sizeof(E));
  // One status word per tile, two for a 64-bit type (SinglePassLookBack.clh).
  cl::Buffer status(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, tiles * 8 * (sizeof(E) / 4),
                    zeros.data());
  cl::Buffer ticket(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero);
  kernel.setArg(0, src);
  kernel.setArg(1, dst);
  if (plan.index64)  // IDX n (kernels/Common.clh)
    kernel.setArg(2, cl_ulong(n));
  else
    kernel.setArg(2, cl_uint(n));
  kernel.setArg(3, cl_uint(1));  // inclusive
  kernel.setArg(4, status);
  kernel.setArg(5, ticket);
  cl::Buffer trace;
  if (traced) {
    trace = cl::Buffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, tiles * 64, zeros.data());
    try {
      kernel.setArg(8, trace);
    } catch (const cl::Error&) {
      throw UsageError("--traced: " + path +
                       " built with -DSP_TRACE=1 has no trace argument (SP_TRACE_ARG)");
    }
  }
  // The suite's protocol: a new generation per launch, the ticket counting on.
  std::vector<double> us;
  cl_uint ticketBase = 0;
  for (int r = 0; r < runs; ++r) {
    kernel.setArg(6, ticketBase);
    kernel.setArg(7, cl_uint(r + 1));
    cl::Event ev;
    queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(tiles * local),
                               cl::NDRange(local), nullptr, &ev);
    ev.wait();
    us.push_back((ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                  ev.getProfilingInfo<CL_PROFILING_COMMAND_START>()) /
                 1e3);
    ticketBase += cl_uint(tiles);
  }
  std::vector<E> out(n);
  queue.enqueueReadBuffer(dst, CL_TRUE, 0, n * sizeof(E), out.data());
  size_t wrong = 0;
  E run = 0;
  for (size_t i = 0; i < n; ++i) {
    run += input[i];
    wrong += out[i] != run;
  }
  std::vector<double> sorted = us;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  std::printf(
      "%s n=%zu tiles=%zu (%zu x %zu) runs=%d wrong elements=%zu median %.1f us (min %.1f) = "
      "%.1f Gelem/s\n",
      sizeof(E) == 8 ? "ulong" : "uint", n, tiles, local, tileSize / local, runs, wrong, median,
      sorted.front(), n / median / 1e3);
  if (traced) {
    std::vector<cl_ulong> raw(tiles * 8);
    queue.enqueueReadBuffer(trace, CL_TRUE, 0, tiles * 64, raw.data());
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
}  // namespace rsb

int main(int argc, char** argv) {
  CLI::App app{"scan-trace: the single-pass scan's time, tile by tile, on an NVIDIA GPU"};
  std::string dir = "kernels", size = "2^24", options, type = "uint";
  std::vector<std::string> tunes;
  int runs = 30;
  bool traced = false, portable = false;
  app.add_option("--kernels", dir, "kernels folder");
  app.add_option("--n", size, "elements: 16777216, 16M, 2^24 or 2^24+3");
  app.add_option("--type", type, "uint or ulong (default uint)")
      ->check(CLI::IsMember({"uint", "ulong"}));
  app.add_option("--tune", tunes,
                 "the suite's knob NAME=VALUE (repeatable), e.g. scan-gpu-items=16")
      ->check(rsb::TuneCheck(rsb::CScanTask().Tunables()));
  app.add_option("--runs", runs, "launches; the median is printed")->check(CLI::Range(1, 100000));
  app.add_flag("--traced", traced, "build with -DSP_TRACE=1: print each phase's time per tile");
  app.add_flag("--portable", portable, "build without SP_NV_WARP_SCAN");
  app.add_option("--options", options, "extra build options, e.g. -cl-nv-maxrregcount=48");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;  // a bad option is a usage error, as in the suite
  }
  const auto n = rsb::ParseSize(size);
  if (!n || *n > rsb::kMaxElements) {
    std::fprintf(stderr,
                 "scan-trace: --n '%s': allowed: 1 to 2^40, written 16777216, 16M, 2^24 "
                 "or 2^24+3\n",
                 size.c_str());
    return 2;
  }
  const std::map<std::string, size_t> tuning = rsb::TuningOf(tunes);
  try {
    return type == "ulong" ? rsb::Run<cl_ulong>(dir, *n, runs, traced, portable, options, tuning)
                           : rsb::Run<cl_uint>(dir, *n, runs, traced, portable, options, tuning);
  } catch (const rsb::UsageError& e) {
    std::fprintf(stderr, "scan-trace: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scan-trace: %s\n", e.what());
    return 3;
  }
}
