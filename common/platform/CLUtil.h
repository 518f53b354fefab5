// CLUtil: the OpenCL plumbing every task shares: finding platforms and devices, describing a
// device, and loading and building programs from the kernels folder (cached by file + options).
#pragma once

#include "platform/Errors.h"
#include "platform/OpenCL.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace rsb {

struct DeviceInfo {
  std::string platform;
  std::string name;
  std::string vendor;
  std::string driverVersion;
  std::string deviceVersion;
  std::string openclCVersion;
  std::string type;  // "GPU", "CPU", "accelerator", ...
  unsigned computeUnits = 0;
  unsigned long long globalMemBytes = 0;
  unsigned long long maxAllocBytes = 0;
  unsigned long long localMemBytes = 0;
  // How the driver counts a kernel's local memory (CL_KERNEL_LOCAL_MEM_SIZE, what the device's
  // limit is held against): localMemScale x the bytes its __local arrays declare, plus
  // localMemOverhead of its own. Measured once per device with two probe kernels
  // (DescribeDevice): pocl 1 x + 0, NVIDIA 580 1 x + 16, Mesa rusticl 22.3 (llvmpipe) 2 x + 0.
  unsigned localMemScale = 1;
  unsigned long long localMemOverhead = 0;
  unsigned long long globalMemCacheBytes = 0;  // CL_DEVICE_GLOBAL_MEM_CACHE_SIZE (0: none)
  size_t maxWorkGroupSize = 0;
  size_t profilingResolutionNs = 0;  // CL_DEVICE_PROFILING_TIMER_RESOLUTION (rusticl 22.3: 0)
  bool isGpu = false;
  // Oclgrind (its platform): a simulated device, whose runs are checked and counted, never timed
  // against hardware.
  bool isSimulator = false;
  bool fp64 = false;
  bool int64BaseAtomics = false;
  bool int64ExtendedAtomics = false;
  // Work-items per warp where the device reports it (cl_nv_device_attribute_query), else 0.
  unsigned nvWarpSize = 0;
  std::string extensions;
};

// probeLocalMemory: measure localMemScale and localMemOverhead (a context and a tiny program
// build, once per device and process; on failure they stay 1 and 0).
// The process's OpenCL context on the device: made on first use and then shared by everything of
// the process on that device (the local-memory probe below, every TaskContext, a resident child
// run's many runs, src/run/Serve.h). Contexts cost: on NVIDIA's driver (580, H100) a process that
// made its two (the probe's and the run's, before they were one) and ran a tiny case took 0.5 s
// alone, and 6.4 s with 15 others starting at once, mostly system time (docs/BENCHMARKS.md).
// DropDeviceContext forgets it (after an error that may
// have left it unusable: TaskContext::Recreate), and the next DeviceContext makes a new one.
cl::Context DeviceContext(const cl::Device& device);
void DropDeviceContext(const cl::Device& device);

DeviceInfo DescribeDevice(const cl::Device& device, bool probeLocalMemory = true);

// The local memory a kernel whose __local arrays declare `declared` bytes needs on the device,
// as the driver counts it, and whether that fits CL_DEVICE_LOCAL_MEM_SIZE.
unsigned long long LocalMemNeeded(const DeviceInfo& device, unsigned long long declared);
bool FitsLocalMemory(const DeviceInfo& device, unsigned long long declared);

// Every platform and its devices, for --list-devices.
std::string ListDevices();

// Picks a device. platformSel / deviceSel: empty, an index, or a case-insensitive substring of
// the name. Default: the first GPU of any platform, else the first device. Throws UsageError if
// a selector matches nothing and DeviceError if there is no OpenCL device at all.
cl::Device SelectDevice(const std::string& platformSel, const std::string& deviceSel);
// Several devices (--device 0,1, --device all): each selector picks one device as SelectDevice
// does, "all" every device of the platforms platformSel matches (all platforms if empty); each
// device once, in the order named. No selector: SelectDevice's default, one device. A
// platformSel of "all" (any case): every platform, and without selectors every device of them.
std::vector<cl::Device> SelectDevices(const std::string& platformSel,
                                      const std::vector<std::string>& deviceSels);

// Where kernels/ is: an explicit folder, else next to the executable (build tree or install
// prefix/share), else the source tree this binary was built from.
std::string FindKernelDir(const std::string& explicitDir, const std::string& argv0);

// Builds programs from <kernelDir>/<file> and keeps them: a program is built once per
// (file, options) and reused by every run and every variant that needs it.
// The folder compilers are told to include from (-I): a copy of the kernel folder's headers
// (*.clh) in /tmp/rsb-includes-<uid>/<hash of their names and contents>, made once and kept.
// Drivers cache built programs by source and options (pocl's kernel cache, NVIDIA's): the same
// headers in another folder (a student's copy, a hand-in) then hit that cache as the suite's
// own do, and the path never needs quoting (OpenCL build options are one string that each
// driver splits itself; pocl splits a quoted path at its spaces). Where the copy cannot be made,
// the folder itself. Build logs name the real folder again.
class IncludeDir {
 public:
  explicit IncludeDir(std::string dir);
  const std::string& Real() const { return real_; }
  const std::string& ForOptions() const { return forOptions_; }

 private:
  std::string real_, forOptions_;
};

// A kernel file that does not build: its path, the options it was built with and the compiler's
// log, real file names in it and each error's or warning's source line with a caret under its
// column (WithSourceLines). what(): "kernel build failed: " and the log's first error as the
// compiler wrote it, on one line (the log's first line where it has no error line).
class KernelBuildError : public DeviceError {
 public:
  KernelBuildError(std::string path, std::string options, std::string log);
  const std::string& Path() const { return path_; }
  const std::string& Options() const { return options_; }
  const std::string& Log() const { return log_; }

 private:
  std::string path_, options_, log_;
};

// The log's first diagnostic line that is an error (the first line where none is), without a
// leading "error: " of the driver's own.
std::string FirstError(const std::string& log);

// The log with the source line and a caret under the column after each error or warning that
// names file:line:col of a readable file, where the compiler did not print them itself (pocl
// and NVIDIA do not; Mesa's clang does).
std::string WithSourceLines(const std::string& log);

// A build log with the compiler's name for the source it was given ("<kernel>" on NVIDIA, a
// temporary file on pocl, "input.cl" on Mesa's rusticl and clover) replaced by the real path,
// so that every error points at file:line.
std::string WithRealFileName(const std::string& log, const std::string& path);

// Where a plan's build options name the kernels it launches (LaunchPlan::BuildOptions): this,
// then -DRSB_KERNEL_<name>=1 each, at the end of the options.
inline constexpr const char* kKernelSelection = " -DRSB_KERNELS_SELECTED=1";

class ProgramCache {
 public:
  ProgramCache(cl::Context context, cl::Device device, std::string kernelDir);
  // Throws KernelBuildError with the compiler's log (file and line) when the build fails.
  // Options that name kernels (kKernelSelection onwards) build the whole file first, once for
  // every case that shares the other options (the fewest compiles); only where that build fails
  // (a kernel that does not compile or does not fit the device) are the named kernels built
  // alone, so that one kernel never breaks the cases of another. A file whose whole build failed
  // at a line of its source (a compiler error, not a limit of the device) is not built whole
  // again, with any options. A build that failed is not run again: its error is thrown again.
  cl::Program& Get(const std::string& file, const std::string& options);
  const cl::Context& Context() const { return context_; }
  const cl::Device& Device() const { return device_; }
  // How many builds this cache ran, failed ones too.
  size_t Builds() const { return builds_; }

 private:
  cl::Context context_;
  cl::Device device_;
  std::string kernelDir_;
  std::shared_ptr<IncludeDir> include_;
  cl::Program& Build(const std::string& file, const std::string& options);

  std::map<std::pair<std::string, std::string>, cl::Program> programs_;
  std::map<std::pair<std::string, std::string>, KernelBuildError> failed_;
  std::set<std::pair<std::string, std::string>> failedWhole_;  // whole files that did not build
  std::set<std::string> brokenWhole_;  // files whose whole build failed at a source line
  size_t builds_ = 0;
};

// "CL_OUT_OF_RESOURCES (-5)" for an OpenCL error code.
std::string ClErrorName(cl_int err);

}  // namespace rsb
