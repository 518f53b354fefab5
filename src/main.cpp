// reduce-scan-bench: parses options, picks the device, hands tasks to the runner and writes the
// report. Exit statuses: 0 all passed, 1 a validation failed, 2 bad input, 3 OpenCL/system error.
#include "CLUtil.h"
#include "Cli.h"
#include "Errors.h"
#include "Report.h"
#include "Runner.h"
#include "Tasks.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>

using namespace rsb;

namespace {

std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::vector<Job> MakeJobs(const Options& o,
                          const std::vector<std::unique_ptr<IComputeTask>>& tasks) {
  std::vector<Job> jobs;
  for (const auto& task : tasks) {
    if (std::find(o.tasks.begin(), o.tasks.end(), task->Name()) == o.tasks.end())
      continue;
    std::vector<std::string> variants;
    for (const auto& v : task->Variants())
      if (o.variants.empty() ||
          std::find(o.variants.begin(), o.variants.end(), v) != o.variants.end())
        variants.push_back(v);
    if (variants.empty())
      continue;
    std::vector<std::optional<ScanKind>> kinds = {std::nullopt};
    if (!task->ScanKinds().empty())
      kinds.assign(o.scanKinds.begin(), o.scanKinds.end());
    for (size_t n : o.sizes)
      for (ElementType type : o.types)
        for (Op op : o.ops)
          for (const auto& kind : kinds) {
            Job job;
            job.task = task.get();
            job.spec = {type, op, kind, n, o.localSize, o.seed};
            job.variants = variants;
            jobs.push_back(job);
          }
  }
  return jobs;
}

int Run(int argc, char** argv) {
  auto tasks = MakeTasks();
  TaskCatalog catalog;
  for (const auto& t : tasks)
    catalog.emplace_back(t->Name(), t->Variants());
  const Options o = ParseCommandLine(argc, argv, catalog);
  if (o.help) {
    std::cout << o.helpText;
    return kExitOk;
  }
  if (o.listDevices) {
    std::cout << ListDevices();
    return kExitOk;
  }
  if (o.listVariants) {
    for (const auto& t : tasks)
      for (const auto& v : t->Variants())
        std::cout << fmt::format("{:<10} {:<14} {}\n", t->Name(), v, t->Describe(v));
    return kExitOk;
  }

  std::ofstream file;
  if (!o.output.empty()) {
    file.open(o.output);
    if (!file)
      throw UsageError(fmt::format("--output '{}': cannot open for writing", o.output));
  }
  std::ostream& out = o.output.empty() ? std::cout : file;

  const std::string kernelDir = FindKernelDir(o.kernels, argv[0]);
  cl::Device device = SelectDevice(o.platform, o.device);
  cl::Context context(device);
  ProgramCache programs(context, device, kernelDir);
  Runner runner(context, device, programs, o.run);

  RunInfo info;
  info.device = runner.Device();
  info.date = UtcNow();
  info.kernelDir = kernelDir;
  for (int i = 0; i < argc; ++i)
    info.command += (i ? " " : "") + std::string(argv[i]);

  if (!o.quiet)
    std::cerr << fmt::format("device: {} ({}), kernels from {}\n", info.device.name,
                             info.device.platform, kernelDir);
  if (o.run.timed)
    runner.MeasureCopyBandwidth();
  info.copyGBs = runner.CopyBandwidthGBs();

  const auto jobs = MakeJobs(o, tasks);
  ProgressFn progress;
  if (!o.quiet) {
    progress = [](const Progress& p) {
      const ProblemSpec& s = p.job->spec;
      if (!p.result) {
        std::cerr << fmt::format("[{:>3}/{}] {}/{} {} {}{} n={} ... ", p.index, p.total,
                                 p.job->task->Name(), p.variant, ToString(s.type), ToString(s.op),
                                 s.scanKind ? " " + ToString(*s.scanKind) : "", s.n)
                  << std::flush;
      } else if (p.result->status == Status::Passed && p.result->iterations) {
        std::cerr << fmt::format("passed, {:.4f} ms, {:.2f} Gelem/s\n", p.result->timeMs.median,
                                 p.result->gelemS);
      } else {
        std::cerr << ToString(p.result->status) << "\n";
      }
    };
  }
  const auto results = runner.Run(jobs, progress);

  switch (o.format) {
    case OutputFormat::Table:
      WriteTable(out, info, results);
      break;
    case OutputFormat::Csv:
      WriteCsv(out, info, results);
      break;
    case OutputFormat::Json:
      WriteJson(out, info, results);
      break;
  }
  out.flush();

  bool failed = false;
  for (const auto& r : results) {
    if (r.status != Status::Failed)
      continue;
    failed = true;
    std::cerr << fmt::format("FAILED {}/{} ({} {}{} n={}): {}\n", r.task, r.variant,
                             ToString(r.type), ToString(r.op),
                             r.scanKind ? " " + ToString(*r.scanKind) : "", r.n, r.message);
  }
  return failed ? kExitValidationFailed : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const DeviceError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitDevice;
  } catch (const cl::Error& e) {
    std::cerr << "error: OpenCL call " << e.what() << " failed: " << ClErrorName(e.err()) << "\n";
    return kExitDevice;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of host memory\n";
    return kExitDevice;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitDevice;
  }
}
