// kernel-info: what the device's compiler made of each variant's kernels, per local size: the
// largest work-group the driver allows for the kernel (CL_KERNEL_WORK_GROUP_SIZE), the size it
// declares (reqd_work_group_size; what the suite allows, common/TaskContext.h), its private and
// local memory, and on NVIDIA ptxas's register report (-cl-nv-verbose). The kernels are built
// with the suite's own options (the variant's launch plan), plus --options.
//
//   kernel-info [--kernels DIR] [--task reduction] [--variants a,b] [--type uint]
//               [--local-sizes 256,512,1024] [--platform NVIDIA] [--options "..."]
//               [--set NAME=V,...] [--binaries DIR]
//
// --binaries DIR writes each program as the driver returns it (CL_PROGRAM_BINARIES; NVIDIA: the
// PTX, to read what the compiler made of a loop) to DIR/<variant>-L<local>.bin.
//
// It is how docs/BENCHMARKS.md explains which work-group sizes a variant can run at.
#include "CLUtil.h"
#include "Errors.h"
#include "PlannedTask.h"
#include "Sizes.h"
#include "Tasks.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace rsb {
namespace {

// "ptxas info    : Used 40 registers, ..." for one entry function, from an NVIDIA build log.
std::string RegistersOf(const std::string& log, const std::string& kernel) {
  std::istringstream lines(log);
  bool in = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("Compiling entry function") != std::string::npos)
      in = line.find("'" + kernel + "'") != std::string::npos ||
           line.find(kernel + "'") != std::string::npos;
    const size_t used = line.find("Used ");
    if (in && used != std::string::npos)
      return line.substr(used);
  }
  return "-";
}

// The program's binary for its one device, as the driver returns it, to dir/name.bin. A driver
// that returns none is an error, not a missing file.
void WriteBinary(const cl::Program& program, const std::string& dir, const std::string& name) {
  const auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
  if (binaries.empty() || binaries.front().empty())
    throw std::runtime_error("--binaries: the driver returned no binary for " + name);
  std::filesystem::create_directories(dir);
  const std::string path = (std::filesystem::path(dir) / (name + ".bin")).string();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(binaries.front().data()),
            std::streamsize(binaries.front().size()));
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

int Run(const std::string& dir, const std::string& taskName, std::vector<std::string> variants,
        const std::string& typeName, const std::vector<size_t>& locals, const std::string& platform,
        const std::string& extra, const std::vector<std::string>& settings,
        const std::string& binaries) {
  const cl::Device device = SelectDevice(platform, "");
  const DeviceInfo info = DescribeDevice(device);
  const bool nv = info.extensions.find("cl_nv_compiler_options") != std::string::npos;
  std::printf("device: %s (%s), CL_DEVICE_MAX_WORK_GROUP_SIZE %zu\n", info.name.c_str(),
              info.driverVersion.c_str(), info.maxWorkGroupSize);
  auto tasks = MakeTasks();
  PlannedTask* task = nullptr;
  for (auto& t : tasks)
    if (t->Name() == taskName)
      task = dynamic_cast<PlannedTask*>(t.get());
  if (!task)
    throw UsageError("--task '" + taskName + "': allowed: reduction, scan, convolution");
  if (variants.empty())
    variants = task->Variants();
  const auto type = ParseElementType(typeName);
  if (!type)
    throw UsageError("--type '" + typeName + "': allowed: int, uint, long, ulong, float, double");
  // --set NAME=V: a task parameter or a tuning knob, parsed as --tune's values are.
  std::map<std::string, size_t> params, tuning;
  for (const std::string& s : settings) {
    const size_t eq = s.find('=');
    const std::string name = s.substr(0, eq);
    const auto value = eq == std::string::npos ? std::nullopt : ParseUnsigned(s.substr(eq + 1));
    bool param = false, knob = false;
    for (const TaskParameter& p : task->Parameters())
      param = param || p.name == name;
    for (const TuningKnob& k : task->Tunables())
      knob = knob || k.name == name;
    if (!value || !(param || knob))
      throw UsageError("--set '" + s +
                       "': allowed: NAME=VALUE, NAME a parameter or tuning knob of " + taskName +
                       ", VALUE a whole number");
    (param ? params : tuning)[name] = size_t(*value);
  }
  ProgramCache programs(cl::Context(device), device, dir);
  std::printf("%-22s %-28s %6s %9s %6s %8s %8s  %s\n", "variant", "kernel", "local", "wg-max",
              "reqd", "private", "local-B", nv ? "ptxas" : "");
  for (const std::string& variant : variants) {
    for (size_t L : locals) {
      ProblemSpec spec;
      spec.type = *type;
      spec.n = size_t(1) << 24;
      spec.localSize = L;
      spec.params = params;
      spec.tuning = tuning;
      if (!task->ScanKinds().empty())
        spec.scanKind = task->ScanKinds().front();
      LaunchPlan plan;
      try {
        plan = task->PlanFor(info, variant, spec);  // as it runs: index width included
      } catch (const VariantSkipped& e) {
        std::printf("%-22s %-28s %6zu  skipped: %s\n", variant.c_str(), "-", L, e.what());
        continue;
      }
      if (!std::filesystem::is_regular_file(std::filesystem::path(dir) / plan.file))
        throw UsageError("--kernels '" + dir + "': cannot read " + plan.file);
      // As the suite builds it (ProgramCache: -cl-std, the include folder, the log's file
      // names), with --options and, on NVIDIA, ptxas's report.
      cl::Program& program = programs.Get(
          plan.file, plan.BuildOptions() + " " + extra + (nv ? " -cl-nv-verbose" : ""));
      const std::string log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device);
      if (!binaries.empty())
        WriteBinary(program, binaries, fmt::format("{}-L{}", variant, L));
      std::set<std::string> seen;
      for (const LaunchStep& step : plan.steps) {
        if (step.kernel.empty() || !seen.insert(step.kernel).second)
          continue;
        cl::Kernel k(program, step.kernel.c_str());
        const auto reqd = k.getWorkGroupInfo<CL_KERNEL_COMPILE_WORK_GROUP_SIZE>(device);
        std::printf("%-22s %-28s %6zu %9zu %6zu %8llu %8llu  %s\n", variant.c_str(),
                    step.kernel.c_str(), L, k.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device),
                    reqd[0] * reqd[1] * reqd[2],
                    (unsigned long long)k.getWorkGroupInfo<CL_KERNEL_PRIVATE_MEM_SIZE>(device),
                    (unsigned long long)k.getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(device),
                    nv ? RegistersOf(log, step.kernel).c_str() : "");
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace rsb

int main(int argc, char** argv) {
  CLI::App app{"kernel-info: each variant's kernels as the device's compiler built them"};
  std::string dir = "kernels", task = "reduction", type = "uint", platform, options, binaries;
  std::vector<std::string> variants, settings;
  std::vector<size_t> locals = {256, 512, 1024};
  app.add_option("--kernels", dir, "kernels folder");
  app.add_option("--task", task, "reduction, scan or convolution");
  app.add_option("--variants", variants, "variants (default: all of the task)")->delimiter(',');
  app.add_option("--type", type, "element type");
  app.add_option("--local-sizes", locals, "local sizes to build for")->delimiter(',');
  app.add_option("--platform", platform, "platform name (substring), as the suite's --platform");
  app.add_option("--options", options, "extra build options");
  app.add_option("--set", settings, "NAME=VALUE: a task parameter (mask-width) or tuning knob")
      ->delimiter(',');
  app.add_option("--binaries", binaries,
                 "folder: write each program's binary there (NVIDIA: its PTX), "
                 "<variant>-L<local>.bin");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    return rsb::Run(dir, task, variants, type, locals, platform, options, settings, binaries);
  } catch (const rsb::UsageError& e) {
    std::fprintf(stderr, "kernel-info: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernel-info: %s\n", e.what());
    return 3;
  }
}
