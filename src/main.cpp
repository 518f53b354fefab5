// reduce-scan-bench: parses options, picks the device, hands tasks to the runner and writes the
// report. Exit statuses: 0 all passed, 1 a validation failed, 2 bad input, 3 OpenCL/system error.
#include "CLUtil.h"
#include "CheckMatrix.h"
#include "Cli.h"
#include "Errors.h"
#include "Report.h"
#include "Runner.h"
#include "Tasks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>

using namespace rsb;

namespace {

using Tasks = std::vector<std::unique_ptr<IComputeTask>>;

std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

template <class C, class V>
bool Contains(const C& c, const V& v) {
  return std::find(c.begin(), c.end(), v) != c.end();
}

// One job per (task, n, type, op, scan kind); every case starts from o.problem.
std::vector<Job> MakeJobs(const Options& o, const Tasks& tasks) {
  std::vector<Job> jobs;
  for (const auto& task : tasks) {
    if (!Contains(o.tasks, task->Name()))
      continue;
    std::vector<std::string> variants;
    for (const auto& v : task->Variants())
      if (o.variants.empty() || Contains(o.variants, v))
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
            Job job{task.get(), o.problem, variants};
            job.spec.type = type;
            job.spec.op = op;
            job.spec.scanKind = kind;
            job.spec.n = n;
            jobs.push_back(job);
          }
  }
  return jobs;
}

ProgressFn StderrProgress() {
  return [](const Progress& p) {
    const ProblemSpec& s = p.job->spec;
    if (!p.result) {
      std::cerr << fmt::format(
                       "[{:>3}/{}] {} ... ", p.index, p.total,
                       CaseLabel(p.job->task->Name(), p.variant, s.type, s.op, s.scanKind, s.n))
                << std::flush;
    } else if (p.result->status == Status::Passed && p.result->iterations) {
      std::cerr << fmt::format("passed, {:.4f} ms, {:.2f} Gelem/s\n", p.result->timeMs.median,
                               p.result->gelemS);
    } else {
      std::cerr << ToString(p.result->status) << "\n";
    }
  };
}

void WriteReport(std::ostream& out, OutputFormat format, const RunInfo& info,
                 const std::vector<Result>& results) {
  switch (format) {
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
}

// Every .cl file the selected cases load (and Bandwidth.cl for timed runs) must be in the kernels
// folder: a missing one is a usage error before anything runs, not an error after the other
// tasks' cases.
void CheckKernelFiles(const std::string& dir, const std::vector<Job>& jobs, bool timed) {
  std::vector<std::string> needed, missing;
  if (timed)
    needed.push_back("Bandwidth.cl");
  for (const auto& job : jobs)
    for (const auto& file : job.task->KernelFiles(job.variants))
      if (!Contains(needed, file))
        needed.push_back(file);
  for (const auto& file : needed)
    if (!std::filesystem::is_regular_file(std::filesystem::path(dir) / file))
      missing.push_back(file);
  if (!missing.empty())
    throw UsageError(fmt::format(
        "--kernels '{}': no {} there; allowed: a folder holding every file the selected cases "
        "load ({})",
        dir, fmt::join(missing, ", "), fmt::join(needed, ", ")));
}

// Lists and help: true when one was asked for (and printed).
bool PrintListings(const Options& o, const Tasks& tasks) {
  if (o.help)
    std::cout << o.helpText;
  else if (o.listDevices)
    std::cout << ListDevices();
  else if (o.listVariants)
    for (const auto& t : tasks)
      for (const auto& v : t->Variants())
        std::cout << fmt::format("{:<10} {:<14} {}\n", t->Name(), v, t->Describe(v));
  return o.help || o.listDevices || o.listVariants;
}

int Run(int argc, char** argv) {
  const Tasks tasks = MakeTasks();
  TaskCatalog catalog;
  for (const auto& t : tasks)
    catalog.push_back({t->Name(), t->Variants(), t->Tunables()});
  const Options o = ParseCommandLine(argc, argv, catalog);
  if (PrintListings(o, tasks))
    return kExitOk;

  const std::string kernelDir = FindKernelDir(o.kernels, argv[0]);
  std::vector<Job> jobs = MakeJobs(o, tasks);
  CheckKernelFiles(kernelDir, jobs, o.run.timed);
  TaskContext ctx(SelectDevice(o.platform, o.device), kernelDir);
  if (o.BareCheck())  // the same tasks and variants, over the correctness matrix
    jobs = CheckMatrixJobs(o, tasks, ctx.info);
  // The output file is opened only once everything on the command line has been checked.
  std::ofstream file;
  if (!o.output.empty()) {
    file.open(o.output);
    if (!file)
      throw UsageError(fmt::format("--output '{}': cannot open for writing", o.output));
  }
  std::ostream& out = o.output.empty() ? std::cout : file;

  RunInfo info;
  info.device = ctx.info;
  info.date = UtcNow();
  info.kernelDir = kernelDir;
  for (int i = 0; i < argc; ++i)
    info.command += (i ? " " : "") + std::string(argv[i]);
  if (!o.quiet)
    std::cerr << fmt::format("device: {} ({}), kernels from {}\n", info.device.name,
                             info.device.platform, kernelDir);
  Runner runner(ctx, o.run);
  if (o.run.timed)
    runner.SetCopyBandwidth(info.copyGBs = MeasureCopyBandwidth(ctx, o.run));
  const auto results = runner.Run(jobs, o.quiet ? ProgressFn() : StderrProgress());
  WriteReport(out, o.format, info, results);

  bool failed = false;
  for (const auto& r : results)
    if (r.status == Status::Failed) {
      failed = true;
      std::cerr << fmt::format("FAILED {}: {}\n", CaseLabel(r), r.message);
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
