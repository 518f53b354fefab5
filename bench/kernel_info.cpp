// kernel-info: what the device's compiler made of each variant's kernels, per local size: the
// largest work-group the driver allows for the kernel (CL_KERNEL_WORK_GROUP_SIZE), the size it
// declares (reqd_work_group_size; what the suite allows, common/platform/TaskContext.h), its
// private and local memory, and on NVIDIA ptxas's register report (-cl-nv-verbose). The kernels are
// built with the suite's own options (the variant's launch plan), plus --options.
//
//   kernel-info [--kernels DIR] [--task reduction] [--variants a,b] [--type uint]
//               [--local-sizes 256,512,1024] [--platform NVIDIA] [--options "..."]
//               [--set NAME=V,...] [--binaries DIR]
//
// --binaries DIR writes each program as the driver returns it (CL_PROGRAM_BINARIES; NVIDIA: the
// PTX, to read what the compiler made of a loop) to DIR/<variant>-L<local>.bin.
//
// It is how docs/BENCHMARKS.md explains which work-group sizes a variant can run at.
#include "cli/CliChecks.h"
#include "engine/PlannedTask.h"
#include "platform/CLUtil.h"
#include "platform/Errors.h"
#include "platform/Files.h"
#include "platform/Sizes.h"
#include "tasks/Tasks.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
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
  WriteWhole(
      "--binaries", path,
      std::string(reinterpret_cast<const char*>(binaries.front().data()), binaries.front().size()));
}

struct Args {
  std::string dir, task = "reduction", type = "uint", platform, options, binaries;
  std::vector<std::string> variants, settings, locals = {"256", "512", "1024"};
};

// What Run needs, every value checked before a device is touched (UsageError: exit 2).
struct Checked {
  std::vector<std::unique_ptr<IComputeTask>> tasks;
  PlannedTask* task = nullptr;
  std::vector<std::string> variants;
  ElementType type{};
  std::vector<size_t> locals;
  std::map<std::string, size_t> params, tuning;
};

// --set NAME=V: a task parameter or a tuning knob, parsed and checked as --tune's values are.
void CheckSettings(const Args& a, Checked& c) {
  const auto params = c.task->Parameters();
  const auto knobs = c.task->Tunables();
  for (const std::string& s : a.settings) {
    const size_t eq = s.find('=');
    const std::string name = s.substr(0, eq);
    const auto value = eq == std::string::npos ? std::nullopt : ParseUnsigned(s.substr(eq + 1));
    std::vector<std::string> names;
    const TaskParameter* p = nullptr;
    const TuningKnob* k = nullptr;
    for (const auto& x : params) {
      names.push_back(x.name);
      p = x.name == name ? &x : p;
    }
    for (const auto& x : knobs) {
      names.push_back(x.name);
      k = x.name == name ? &x : k;
    }
    if (!p && !k)
      throw UsageError(
          fmt::format("--set '{}': unknown; allowed: NAME=VALUE, NAME a parameter "
                      "or tuning knob of {}: {}",
                      s, a.task, cli::Join(names)));
    const auto v = value.value_or(0);  // (GCC 12 sees *value as maybe uninitialised)
    if (!value || !(p ? p->Allows(v) : k->Allows(v)))
      throw UsageError(fmt::format("--set '{}': not allowed; allowed: {}={}", s, name,
                                   p ? p->AllowedText() : k->AllowedText()));
    (p ? c.params : c.tuning)[name] = size_t(v);
  }
}

Checked Check(const Args& a) {
  Checked c;
  c.tasks = MakeTasks();
  std::vector<std::string> names;
  for (auto& t : c.tasks) {
    names.push_back(t->Name());
    if (t->Name() == a.task)
      c.task = dynamic_cast<PlannedTask*>(t.get());
  }
  if (!c.task)
    throw UsageError("--task '" + a.task + "': allowed: " + cli::Join(names));
  const std::vector<std::string> all = c.task->Variants();
  for (const auto& v : a.variants)
    if (std::find(all.begin(), all.end(), v) == all.end())
      throw UsageError(fmt::format("--variants '{}': not a variant of {}; allowed: {}", v, a.task,
                                   cli::Join(all)));
  c.variants = a.variants.empty() ? all : a.variants;
  const auto type = ParseElementType(a.type);
  if (!type)
    throw UsageError("--type '" + a.type + "': allowed: int, uint, long, ulong, float, double");
  c.type = *type;
  for (const auto& l : a.locals)  // checked by LocalSizeCheck
    c.locals.push_back(size_t(*ParseUnsigned(l)));
  CheckSettings(a, c);
  return c;
}

int Run(const std::string& dir, const Args& a, const Checked& c) {
  const cl::Device device = SelectDevice(a.platform, "");
  const DeviceInfo info = DescribeDevice(device);
  const bool nv = info.extensions.find("cl_nv_compiler_options") != std::string::npos;
  std::printf("device: %s (%s), CL_DEVICE_MAX_WORK_GROUP_SIZE %zu\n", info.name.c_str(),
              info.driverVersion.c_str(), info.maxWorkGroupSize);
  PlannedTask* task = c.task;
  const std::string& extra = a.options;
  const std::string& binaries = a.binaries;
  ProgramCache programs(cl::Context(device), device, dir);
  std::printf("%-22s %-28s %6s %9s %6s %8s %8s  %s\n", "variant", "kernel", "local", "wg-max",
              "reqd", "private", "local-B", nv ? "ptxas" : "");
  for (const std::string& variant : c.variants) {
    for (size_t L : c.locals) {
      ProblemSpec spec;
      spec.type = c.type;
      spec.n = size_t(1) << 24;
      spec.localSize = L;
      spec.params = c.params;
      spec.tuning = c.tuning;
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
  rsb::Args a;
  app.add_option("--kernels", a.dir,
                 "kernels folder (default: the suite's, found as reduce-scan-bench finds them)");
  app.add_option("--task", a.task, "reduction, scan or convolution");
  app.add_option("--variants", a.variants, "variants (default: all of the task)")->delimiter(',');
  app.add_option("--type", a.type, "element type: int, uint, long, ulong, float or double");
  app.add_option("--local-sizes", a.locals,
                 "local sizes to build for: powers of two from 1 to 1048576 (default 256,512,1024)")
      ->delimiter(',')
      ->check(rsb::cli::Allowed("a power of two from 1 to 1048576, or a comma list of them",
                                [](const std::string& v) {
                                  const auto l = rsb::ParseUnsigned(v);
                                  return l && *l && !(*l & (*l - 1)) && *l <= (1u << 20);
                                }));
  app.add_option("--platform", a.platform, "platform name (substring), as the suite's --platform");
  app.add_option("--options", a.options, "extra build options");
  app.add_option("--set", a.settings, "NAME=VALUE: a task parameter (mask-width) or tuning knob")
      ->delimiter(',');
  app.add_option("--binaries", a.binaries,
                 "folder: write each program's binary there (NVIDIA: its PTX), "
                 "<variant>-L<local>.bin");
  try {
    if (const std::string empty = rsb::cli::EmptyListItem(app, argc, argv); !empty.empty()) {
      std::fprintf(stderr, "kernel-info: %s\n", empty.c_str());
      return 2;
    }
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    const rsb::Checked c = rsb::Check(a);
    return rsb::Run(rsb::FindKernelDir(a.dir, argv[0]), a, c);
  } catch (const rsb::UsageError& e) {
    std::fprintf(stderr, "kernel-info: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernel-info: %s\n", e.what());
    return 3;
  }
}
