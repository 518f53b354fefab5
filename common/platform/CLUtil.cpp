#include "platform/CLUtil.h"

#include "platform/BuildInfo.h"
#include "platform/Errors.h"
#include "platform/Pattern.h"
#include "platform/Sizes.h"
#include "platform/Types.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <tuple>

#ifndef RSB_SOURCE_KERNEL_DIR
#define RSB_SOURCE_KERNEL_DIR ""
#endif

namespace fs = std::filesystem;

namespace rsb {

namespace {

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\0' || std::isspace(static_cast<unsigned char>(s.back()))))
    s.pop_back();
  return s;
}

// While alive, file descriptor 2 goes to /dev/null: the compiler's own lines (clang in pocl
// writes "1 error generated." there, not to the build log, which holds the error itself) stay
// off the progress line. Restored when it ends, a failed build included.
class SilencedStderr {
 public:
  SilencedStderr() {
    std::cerr.flush();
    std::fflush(stderr);
    const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0)
      return;
    saved_ = fcntl(2, F_DUPFD_CLOEXEC, 3);
    if (saved_ >= 0 && dup2(null, 2) < 0) {
      close(saved_);
      saved_ = -1;
    }
    close(null);
  }
  ~SilencedStderr() {
    if (saved_ < 0)
      return;
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
  }
  SilencedStderr(const SilencedStderr&) = delete;
  SilencedStderr& operator=(const SilencedStderr&) = delete;

 private:
  int saved_ = -1;
};

std::vector<cl::Platform> Platforms() {
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error& e) {
    // The ICD loader reports "no platform" as CL_PLATFORM_NOT_FOUND_KHR (-1001).
    platforms.clear();
  }
  return platforms;
}

std::vector<cl::Device> Devices(const cl::Platform& p) {
  std::vector<cl::Device> devices;
  try {
    p.getDevices(CL_DEVICE_TYPE_ALL, &devices);
  } catch (const cl::Error&) {
    devices.clear();
  }
  return devices;
}

// An index ("0") or a case-insensitive substring of name.
bool Matches(const std::string& sel, size_t index, const std::string& name) {
  if (sel.empty())
    return true;
  if (std::all_of(sel.begin(), sel.end(), [](unsigned char c) { return std::isdigit(c); })) {
    const auto i = ParseUnsigned(sel);  // nullopt for an index too large to be one: no match
    return i && *i == index;
  }
  return Lower(name).find(Lower(sel)) != std::string::npos;
}

std::string DeviceTypeName(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU)
    return "GPU";
  if (t & CL_DEVICE_TYPE_CPU)
    return "CPU";
  if (t & CL_DEVICE_TYPE_ACCELERATOR)
    return "accelerator";
  return "other";
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw DeviceError(fmt::format("cannot read kernel file {}", path.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Two kernels whose __local arrays declare 1 and 2 KiB: the driver's CL_KERNEL_LOCAL_MEM_SIZE
// of each gives its scale (per KiB declared) and its own overhead. Every element is written and
// read across a barrier, so that no compiler drops the array.
const char* kLocalMemProbe = R"CL(
#define PROBE(NAME, COUNT)                                   \
  __kernel void NAME(__global int* out) {                    \
    __local int a[COUNT];                                    \
    for (uint i = get_local_id(0); i < COUNT; i += get_local_size(0)) \
      a[i] = (int)i;                                         \
    barrier(CLK_LOCAL_MEM_FENCE);                            \
    out[get_global_id(0)] = a[(COUNT - 1) - get_local_id(0) % COUNT]; \
  }
PROBE(RsbLocalProbe1K, 256)
PROBE(RsbLocalProbe2K, 512)
)CL";

// A context on the device. Right after a kernel of another context faulted (an out-of-bounds
// write), NVIDIA's driver refuses new contexts for a while (clCreateContext: -9999, seen on the
// H100): tried again for up to 10 s before the error is given up.
cl::Context NewContext(const cl::Device& device) {
  const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    try {
      return cl::Context(device);
    } catch (const cl::Error&) {
      if (std::chrono::steady_clock::now() > giveUp)
        throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }
}

struct DeviceContexts {
  std::mutex mu;
  std::map<cl_device_id, cl::Context> byDevice;
};

// Never destroyed: a context released by a static destructor at exit may reach a platform that
// is already gone (under Oclgrind: "corrupted double-linked list", exit status 134). The process's
// end frees it.
DeviceContexts& Contexts() {
  static DeviceContexts* c = new DeviceContexts;
  return *c;
}

// Measured once per device and process (a build each, in the device's context).
std::pair<unsigned, unsigned long long> ProbeLocalMemory(const cl::Device& d) {
  static std::mutex mutex;
  static std::map<cl_device_id, std::pair<unsigned, unsigned long long>> known;
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(d());
  if (it != known.end())
    return it->second;
  std::pair<unsigned, unsigned long long> accounting = {1, 0};
  try {
    cl::Program program(DeviceContext(d), kLocalMemProbe);
    program.build({d});
    const auto bytes = [&](const char* name) {
      return cl::Kernel(program, name).getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(d);
    };
    const unsigned long long one = bytes("RsbLocalProbe1K"), two = bytes("RsbLocalProbe2K");
    if (two > one && (two - one) % 1024 == 0 && one >= (two - one)) {
      accounting.first = unsigned((two - one) / 1024);
      accounting.second = one - (two - one);
    }
  } catch (const cl::Error&) {
    // As declared: the kernel cache still checks each kernel's real count.
  }
  return known.emplace(d(), accounting).first->second;
}

}  // namespace

cl::Context DeviceContext(const cl::Device& device) {
  DeviceContexts& c = Contexts();
  std::lock_guard l(c.mu);
  const auto at = c.byDevice.find(device());
  if (at != c.byDevice.end())
    return at->second;
  return c.byDevice.insert({device(), NewContext(device)}).first->second;
}

void DropDeviceContext(const cl::Device& device) {
  DeviceContexts& c = Contexts();
  std::lock_guard l(c.mu);
  c.byDevice.erase(device());
}

unsigned long long LocalMemNeeded(const DeviceInfo& device, unsigned long long declared) {
  // A kernel that declares none needs none: the driver's own overhead comes with an array
  // (NVIDIA's H100 reports 1 byte for the naive scan, while the probe's overhead is 4).
  return declared == 0 ? 0 : declared * device.localMemScale + device.localMemOverhead;
}

bool FitsLocalMemory(const DeviceInfo& device, unsigned long long declared) {
  return LocalMemNeeded(device, declared) <= device.localMemBytes;
}

DeviceInfo DescribeDevice(const cl::Device& d, bool probeLocalMemory) {
  DeviceInfo info;
  cl::Platform p(d.getInfo<CL_DEVICE_PLATFORM>());
  info.platform = Trim(p.getInfo<CL_PLATFORM_NAME>());
  info.name = Trim(d.getInfo<CL_DEVICE_NAME>());
  info.vendor = Trim(d.getInfo<CL_DEVICE_VENDOR>());
  info.driverVersion = Trim(d.getInfo<CL_DRIVER_VERSION>());
  info.deviceVersion = Trim(d.getInfo<CL_DEVICE_VERSION>());
  info.openclCVersion = Trim(d.getInfo<CL_DEVICE_OPENCL_C_VERSION>());
  const cl_device_type type = d.getInfo<CL_DEVICE_TYPE>();
  info.type = DeviceTypeName(type);
  info.isGpu = (type & CL_DEVICE_TYPE_GPU) != 0;
  info.isSimulator = info.platform == "Oclgrind";
  info.computeUnits = d.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
  info.globalMemBytes = d.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
  info.maxAllocBytes = d.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
  info.localMemBytes = d.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
  info.globalMemCacheBytes = d.getInfo<CL_DEVICE_GLOBAL_MEM_CACHE_SIZE>();
  info.maxWorkGroupSize = d.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
  info.profilingResolutionNs = d.getInfo<CL_DEVICE_PROFILING_TIMER_RESOLUTION>();
  info.extensions = d.getInfo<CL_DEVICE_EXTENSIONS>();
  auto has = [&](const char* ext) { return info.extensions.find(ext) != std::string::npos; };
  info.fp64 = has("cl_khr_fp64");
  info.int64BaseAtomics = has("cl_khr_int64_base_atomics");
  if (has("cl_nv_device_attribute_query")) {
    constexpr cl_device_info kWarpSizeNv = 0x4003;  // CL_DEVICE_WARP_SIZE_NV (cl_ext.h)
    cl_uint warp = 0;
    if (clGetDeviceInfo(d(), kWarpSizeNv, sizeof warp, &warp, nullptr) == CL_SUCCESS)
      info.nvWarpSize = warp;
  }
  info.int64ExtendedAtomics = has("cl_khr_int64_extended_atomics");
  if (probeLocalMemory)
    std::tie(info.localMemScale, info.localMemOverhead) = ProbeLocalMemory(d);
  return info;
}

std::string ListDevices() {
  std::string out;
  const auto platforms = Platforms();
  if (platforms.empty())
    return "no OpenCL platform found (is an ICD registered in /etc/OpenCL/vendors?)\n";
  for (size_t pi = 0; pi < platforms.size(); ++pi) {
    out +=
        fmt::format("platform {}: {} ({})\n", pi, Trim(platforms[pi].getInfo<CL_PLATFORM_NAME>()),
                    Trim(platforms[pi].getInfo<CL_PLATFORM_VERSION>()));
    const auto devices = Devices(platforms[pi]);
    for (size_t di = 0; di < devices.size(); ++di) {
      const DeviceInfo info = DescribeDevice(devices[di], /*probeLocalMemory=*/false);
      out += fmt::format(
          "  device {}: {} [{}] {} CUs, {} MiB global, {} KiB local, work-group <= {}, driver {}, "
          "{}\n",
          di, info.name, info.type, info.computeUnits, info.globalMemBytes >> 20,
          info.localMemBytes >> 10, info.maxWorkGroupSize, info.driverVersion, info.openclCVersion);
    }
  }
  return out;
}

namespace {

// The devices a --device value may name, for its usage error: "0 'pthread-...' (Portable
// Computing Language)", with the platform's index where there are several platforms.
std::string DeviceChoices(const std::vector<cl::Platform>& platforms,
                          const std::string& platformSel) {
  std::vector<std::string> names;
  for (size_t pi = 0; pi < platforms.size(); ++pi) {
    const std::string platform = Trim(platforms[pi].getInfo<CL_PLATFORM_NAME>());
    if (!Matches(platformSel, pi, platform))
      continue;
    const auto devices = Devices(platforms[pi]);
    for (size_t di = 0; di < devices.size(); ++di)
      names.push_back(fmt::format(
          "{}{} '{}' ({})", platforms.size() > 1 ? fmt::format("platform {} device ", pi) : "", di,
          Trim(devices[di].getInfo<CL_DEVICE_NAME>()), platform));
  }
  std::string s;
  for (const auto& n : names)
    s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none (the platform lists no device)" : s;
}

}  // namespace

cl::Device SelectDevice(const std::string& platformSel, const std::string& deviceSel) {
  const auto platforms = Platforms();
  if (platforms.empty())
    throw DeviceError(
        "no OpenCL platform found: install an OpenCL driver (e.g. pocl-opencl-icd) or register "
        "one in /etc/OpenCL/vendors (see docs/USAGE.md, 'Making an NVIDIA GPU visible')");
  std::vector<cl::Device> candidates;
  bool platformMatched = false;
  for (size_t pi = 0; pi < platforms.size(); ++pi) {
    if (!Matches(platformSel, pi, Trim(platforms[pi].getInfo<CL_PLATFORM_NAME>())))
      continue;
    platformMatched = true;
    const auto devices = Devices(platforms[pi]);
    for (size_t di = 0; di < devices.size(); ++di)
      if (Matches(deviceSel, di, Trim(devices[di].getInfo<CL_DEVICE_NAME>())))
        candidates.push_back(devices[di]);
  }
  if (!platformMatched)
    throw UsageError(fmt::format(
        "--platform '{}' matches no platform; allowed: an index or a name substring from "
        "--list-devices",
        platformSel));
  if (candidates.empty())
    throw UsageError(fmt::format(
        "--device '{}' matches no device{}; allowed: all, or an index or a name substring of {}",
        deviceSel.empty() ? std::string("(any)") : deviceSel,
        platformSel.empty() ? "" : " on platform '" + platformSel + "'",
        DeviceChoices(platforms, platformSel)));
  if (deviceSel.empty()) {
    for (const auto& d : candidates)
      if (d.getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_GPU)
        return d;
  }
  return candidates.front();
}

std::vector<cl::Device> SelectDevices(const std::string& platformSel,
                                      const std::vector<std::string>& deviceSels) {
  if (Lower(platformSel) == "all")  // every platform: its devices (--device picks among them)
    return SelectDevices("", deviceSels.empty() ? std::vector<std::string>{"all"} : deviceSels);
  std::vector<cl::Device> selected;
  auto add = [&](const cl::Device& d) {
    if (std::none_of(selected.begin(), selected.end(),
                     [&](const cl::Device& s) { return s() == d(); }))
      selected.push_back(d);
  };
  if (deviceSels.empty())
    add(SelectDevice(platformSel, ""));
  for (const std::string& sel : deviceSels) {
    if (Lower(sel) != "all") {
      add(SelectDevice(platformSel, sel));
      continue;
    }
    SelectDevice(platformSel, "");  // no platform, or none that matches: its error
    const auto platforms = Platforms();
    for (size_t pi = 0; pi < platforms.size(); ++pi)
      if (Matches(platformSel, pi, Trim(platforms[pi].getInfo<CL_PLATFORM_NAME>())))
        for (const auto& d : Devices(platforms[pi]))
          add(d);
  }
  return selected;
}

std::string FindKernelDir(const std::string& explicitDir, const std::string& argv0) {
  auto looksRight = [](const fs::path& dir) {
    std::error_code ec;
    return fs::is_regular_file(dir / "Common.clh", ec);
  };
  if (!explicitDir.empty()) {
    std::error_code ec;
    if (!fs::is_directory(explicitDir, ec))
      throw UsageError(
          fmt::format("--kernels '{}': no such folder; allowed: a folder holding "
                      "the kernel files (*.cl) and their headers (*.clh)",
                      explicitDir));
    if (!looksRight(explicitDir))
      throw UsageError(
          fmt::format("--kernels '{}': folder has no Common.clh; allowed: a folder "
                      "holding the kernel files (*.cl) and their headers (*.clh)",
                      explicitDir));
    return fs::absolute(explicitDir).string();
  }
  std::vector<fs::path> candidates;
  std::error_code ec;
  fs::path exe = fs::canonical("/proc/self/exe", ec);
  if (ec)
    exe = fs::absolute(argv0);
  const fs::path exeDir = exe.parent_path();
  // Run from its build tree (CMakeCache.txt beside it), the binary reads the source tree's
  // kernels, so that a student's edit is what runs without a rebuild; the build tree's copy
  // is the fallback once the source tree is gone.
  if (fs::is_regular_file(exeDir / "CMakeCache.txt", ec) &&
      std::string(RSB_SOURCE_KERNEL_DIR).size())
    candidates.emplace_back(RSB_SOURCE_KERNEL_DIR);
  candidates.push_back(exeDir / "kernels");  // build tree
  candidates.push_back(exeDir.parent_path() / "share" / "reduce-scan-bench" /
                       "kernels");  // install
  if (std::string(RSB_SOURCE_KERNEL_DIR).size())
    candidates.emplace_back(RSB_SOURCE_KERNEL_DIR);
  for (const auto& c : candidates)
    if (looksRight(c))
      return c.string();
  throw DeviceError(
      "cannot find the kernels folder (looked next to the executable and in the "
      "install prefix); pass --kernels DIR");
}

namespace {

// The folder's headers, by name: what a kernel may include.
std::map<std::string, std::string> Headers(const std::string& dir) {
  std::map<std::string, std::string> headers;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".clh" && e.is_regular_file(ec))
      headers[e.path().filename().string()] = ReadFile(e.path());
  return headers;
}

// /tmp/rsb-includes-<uid>/<hash>: the headers, written into a fresh folder renamed into place
// (a folder of that name already there holds the same); "" where that fails.
std::string ContentAddressedCopy(const std::map<std::string, std::string>& headers) {
  std::string all;  // names and contents, each ended by a NUL
  for (const auto& [name, text] : headers)
    all += name + '\0' + text + '\0';
  const fs::path root = fmt::format("/tmp/rsb-includes-{}", ::getuid());
  const fs::path dir = root / fmt::format("{:016x}", Fnv1a64(all));
  std::error_code ec;
  if (fs::is_directory(dir, ec))
    return dir.string();
  fs::create_directories(root, ec);
  fs::permissions(root, fs::perms::owner_all, ec);
  std::string tmpl = (root / ".new-XXXXXX").string();
  if (!mkdtemp(tmpl.data()))
    return "";
  for (const auto& [name, text] : headers) {
    std::ofstream out(fs::path(tmpl) / name, std::ios::binary);
    out << text;
    out.close();
    if (!out) {  // a copy that is not whole is never renamed into place
      fs::remove_all(tmpl, ec);
      return "";
    }
  }
  fs::rename(tmpl, dir, ec);
  if (ec)  // another process made it meanwhile
    fs::remove_all(tmpl, ec);
  return fs::is_directory(dir, ec) ? dir.string() : "";
}

}  // namespace

IncludeDir::IncludeDir(std::string dir) : real_(std::move(dir)), forOptions_(real_) {
  const std::string copy = ContentAddressedCopy(Headers(real_));
  if (!copy.empty())
    forOptions_ = copy;
}

KernelBuildError::KernelBuildError(std::string path, std::string options, std::string log)
    : DeviceError("kernel build failed: " + FirstError(log)),
      path_(std::move(path)),
      options_(std::move(options)),
      log_(std::move(log)) {}

std::string FirstError(const std::string& log) {
  std::istringstream in(log);
  std::string line, first;
  while (std::getline(in, line)) {
    if (first.empty() && !Trim(line).empty())
      first = Trim(line);
    if (line.find("error") != std::string::npos) {
      line = Trim(line);
      return line.rfind("error: ", 0) == 0 ? line.substr(7) : line;
    }
  }
  return first.empty() ? "(no build log)" : first;
}

namespace {

// file:line:col in a diagnostic line: the first location of a .cl or .clh file.
std::optional<std::tuple<std::string, size_t, size_t>> Location(const std::string& line) {
  static const Pattern where(R"(([^\s:<>=']+\.clh?):(\d+):(\d+))");
  const auto m = where.Search(line);
  if (!m)
    return std::nullopt;
  return std::make_tuple((*m)[1], size_t(std::stoul((*m)[2])), size_t(std::stoul((*m)[3])));
}

// Line `number` (1-based) of a file, through a cache of the files read.
std::optional<std::string> SourceLine(std::map<std::string, std::vector<std::string>>& files,
                                      const std::string& path, size_t number) {
  auto it = files.find(path);
  if (it == files.end()) {
    std::vector<std::string> lines;
    std::ifstream in(path);
    for (std::string l; std::getline(in, l);)
      lines.push_back(l);
    it = files.emplace(path, std::move(lines)).first;
  }
  if (number == 0 || number > it->second.size())
    return std::nullopt;
  return it->second[number - 1];
}

}  // namespace

std::string WithSourceLines(const std::string& log) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  std::map<std::string, std::vector<std::string>> files;
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    out += lines[i] + "\n";
    const bool diagnostic = lines[i].find("error") != std::string::npos ||
                            lines[i].find("warning") != std::string::npos;
    const auto at = diagnostic ? Location(lines[i]) : std::nullopt;
    if (!at)
      continue;
    const auto& [path, number, column] = *at;
    const auto source = SourceLine(files, path, number);
    // Where the compiler printed the line itself (Mesa's clang), it comes next.
    if (!source || (i + 1 < lines.size() && !Trim(*source).empty() &&
                    lines[i + 1].find(Trim(*source)) != std::string::npos))
      continue;
    std::string caret;
    for (size_t k = 0; k + 1 < column && k < source->size(); ++k)
      caret += (*source)[k] == '\t' ? '\t' : ' ';
    const std::string gutter = fmt::format("{:>5} | ", number);
    out += gutter + *source + "\n" + std::string(gutter.size() - 2, ' ') + "| " + caret + "^\n";
  }
  return out;
}

ProgramCache::ProgramCache(cl::Context context, cl::Device device, std::string kernelDir)
    : context_(std::move(context)),
      device_(std::move(device)),
      kernelDir_(std::move(kernelDir)),
      include_(std::make_shared<IncludeDir>(kernelDir_)) {}

// "$" is special in a replacement: a path's own is doubled. Mesa's name only where a name
// starts (not in "myinput.cl").
std::string WithRealFileName(const std::string& log, const std::string& path) {
  // pocl's temporary file, a path of no spaces or colons; not "<Spelling=" before it (clang's
  // second location of a macro argument: "f.cl:54:24 <Spelling=f.cl:54:30>").
  static const Pattern anonymous(R"((<[a-z-]+>|[^\s:<>=]*tempfile_\w+\.cl)(?=:\d+))");
  static const Pattern mesa(R"((^|[\s'"(])input\.cl(?=:\d+))");
  const std::string real = ReplaceAll(path, "$", "$$");
  return mesa.Replace(anonymous.Replace(log, real), "$1" + real);
}

cl::Program& ProgramCache::Get(const std::string& file, const std::string& options) {
  const size_t selected = options.find(kKernelSelection);
  if (selected != std::string::npos && !brokenWhole_.count(file)) {
    auto whole = std::make_pair(file, options.substr(0, selected));
    if (!failedWhole_.count(whole)) {
      try {
        return Build(whole.first, whole.second);
      } catch (const KernelBuildError& e) {
        failedWhole_.insert(std::move(whole));
        if (Location(FirstError(e.Log())))
          brokenWhole_.insert(file);
      }
    }
  }
  return Build(file, options);
}

cl::Program& ProgramCache::Build(const std::string& file, const std::string& options) {
  auto key = std::make_pair(file, options);
  auto it = programs_.find(key);
  if (it != programs_.end())
    return it->second;
  if (const auto failed = failed_.find(key); failed != failed_.end())
    throw failed->second;
  ++builds_;

  const fs::path path = fs::path(kernelDir_) / file;
  // The source as it is: compilers then count lines as the file does (a #line directive is not
  // honoured by every driver); the build log's anonymous file names are replaced below.
  const std::string source = ReadFile(path);
  cl::Program program(context_, source);
  const std::string fullOptions =
      fmt::format("-cl-std=CL1.2 -I {} {}", include_->ForOptions(), options);
  try {
    SilencedStderr silenced;
    program.build({device_}, fullOptions.c_str());
  } catch (const cl::Error& e) {
    std::string log;
    try {
      log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_);
    } catch (const cl::Error&) {
      log = "(no build log)";
    }
    log = WithRealFileName(log, path.string());
    if (include_->ForOptions() != include_->Real())  // included files: the folder's real name
      log = ReplaceAll(log, include_->ForOptions(), include_->Real());
    if (e.err() != CL_BUILD_PROGRAM_FAILURE)  // the driver's own error, not the compiler's
      log = ClErrorName(e.err()) + "\n" + log;
    throw failed_
        .emplace(key, KernelBuildError(path.string(), fullOptions, WithSourceLines(Trim(log))))
        .first->second;
  }
  return programs_.emplace(key, std::move(program)).first->second;
}

std::string ClErrorName(cl_int err) {
  switch (err) {
#define RSB_CASE(x) \
  case x:           \
    return fmt::format("{} ({})", #x, err);
    RSB_CASE(CL_DEVICE_NOT_FOUND)
    RSB_CASE(CL_DEVICE_NOT_AVAILABLE)
    RSB_CASE(CL_COMPILER_NOT_AVAILABLE)
    RSB_CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    RSB_CASE(CL_OUT_OF_RESOURCES)
    RSB_CASE(CL_OUT_OF_HOST_MEMORY)
    RSB_CASE(CL_PROFILING_INFO_NOT_AVAILABLE)
    RSB_CASE(CL_BUILD_PROGRAM_FAILURE)
    RSB_CASE(CL_INVALID_VALUE)
    RSB_CASE(CL_INVALID_DEVICE)
    RSB_CASE(CL_INVALID_CONTEXT)
    RSB_CASE(CL_INVALID_COMMAND_QUEUE)
    RSB_CASE(CL_INVALID_MEM_OBJECT)
    RSB_CASE(CL_INVALID_BUILD_OPTIONS)
    RSB_CASE(CL_INVALID_PROGRAM_EXECUTABLE)
    RSB_CASE(CL_INVALID_KERNEL_NAME)
    RSB_CASE(CL_INVALID_KERNEL)
    RSB_CASE(CL_INVALID_ARG_INDEX)
    RSB_CASE(CL_INVALID_ARG_VALUE)
    RSB_CASE(CL_INVALID_ARG_SIZE)
    RSB_CASE(CL_INVALID_KERNEL_ARGS)
    RSB_CASE(CL_INVALID_WORK_DIMENSION)
    RSB_CASE(CL_INVALID_WORK_GROUP_SIZE)
    RSB_CASE(CL_INVALID_WORK_ITEM_SIZE)
    RSB_CASE(CL_INVALID_GLOBAL_OFFSET)
    RSB_CASE(CL_INVALID_EVENT)
    RSB_CASE(CL_INVALID_BUFFER_SIZE)
    RSB_CASE(CL_INVALID_GLOBAL_WORK_SIZE)
#undef RSB_CASE
    default:
      return fmt::format("OpenCL error {}", err);
  }
}

}  // namespace rsb
