#include "run/Bench.h"

#include "cli/Cli.h"
#include "engine/Explain.h"
#include "engine/Oclgrind.h"
#include "engine/Runner.h"
#include "engine/Worker.h"
#include "platform/BuildInfo.h"
#include "platform/CLUtil.h"
#include "platform/DeviceLock.h"
#include "platform/Errors.h"
#include "platform/Files.h"
#include "platform/Subprocess.h"
#include "report/Report.h"
#include "run/CaseFile.h"
#include "run/Jobs.h"
#include "run/Output.h"
#include "run/Profile.h"
#include "tasks/Tasks.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <new>
#include <optional>

#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rsb {

namespace {

// --explain: every selected case on every device, from its launch plan; nothing is run.
int ExplainCases(const Options& o, const Tasks& tasks, const std::vector<Job>& problems,
                 const std::vector<cl::Device>& devices,
                 const std::vector<std::optional<Profile>>& profiles, RunInfo& info,
                 ReportOutput& output) {
  std::vector<Explanation> cases;
  for (size_t d = 0; d < devices.size(); ++d) {
    info.devices.push_back({DescribeDevice(devices[d]), Ceilings()});
    for (const Job& job : DeviceJobs(o, tasks, problems, info.devices.back().info, profiles[d]))
      for (const auto& variant : job.variants) {
        cases.push_back(
            Explain(*job.task, variant, job.SpecFor(variant), info.devices.back().info));
        cases.back().c.device = d;
      }
  }
  output.Write(info, cases);
  return kExitOk;
}

// Every task's variants in table order, for --list-variants.
std::vector<VariantListing> VariantListings(const Tasks& tasks) {
  std::vector<VariantListing> rows;
  for (const auto& t : tasks)
    for (const auto& v : t->Variants())
      rows.push_back({t->Name(), v, t->KernelFiles({v}).front(), t->Describe(v)});
  return rows;
}

// Lists and help: true when one was asked for (and printed).
bool PrintListings(const Options& o, const Tasks& tasks) {
  if (o.help)
    std::cout << o.helpText;
  else if (o.listDevices)
    std::cout << ListDevices();
  else if (o.listVariants)
    MakePrinter(o.format)->Variants(std::cout, VariantListings(tasks));
  return o.help || o.listDevices || o.listVariants;
}

// A worker of an isolated run (Worker.h): runs the cases from its job's skip-th variant on to
// the end of its scope, on the run's device number `device` (its request's fields, Serve.h), and
// reports each on its pipe.
// The run's devices: --platform and --device's; under --oclgrind Oclgrind's only device (the
// only platform a process started under oclgrind sees).
std::vector<cl::Device> RunDevices(const Options& o) {
  if (o.oclgrind)
    return SelectDevices("Oclgrind", {});
  return SelectDevices(o.platform, o.devices);
}

// A message on one protocol line: newlines (a build log's) as "; ", at most 2000 characters.
std::string OneLine(const std::string& text) {
  std::string line;
  for (char c : text.substr(0, 2000))
    line += c == '\n' ? std::string("; ") : std::string(1, c);
  return line;
}

// A worker's ceilings and timer verdict: measured (and sent) by the worker asked to; else the
// verdict an earlier worker found (its request's "timer"), or, in a timed run where none was told
// (the worker that measured died first, or its measurement failed), checked here and sent. nullopt:
// the ceilings could not be measured (sent as ceilings-failed; the run starts a fresh worker).
std::optional<Ceilings> WorkerCeilings(const Options& o, TaskContext& ctx) {
  Ceilings c;
  if (o.worker.bandwidth) {
    std::string why;
    c = TryMeasureCeilings(ctx, o.run, nullptr, why);
    if (!why.empty()) {
      WorkerSend(o.worker.fd, "ceilings-failed " + OneLine(why));
      return std::nullopt;
    }
    WorkerSend(o.worker.fd, "timer " + TimerText(c.timer));
    WorkerSend(o.worker.fd, fmt::format("ceilings {} {} {} {} {} {} {} {}", c.readGBs, c.writeGBs,
                                        c.copyGBs, c.bufferBytes, c.near.readGBs, c.near.writeGBs,
                                        c.near.copyGBs, c.nearBufferBytes));
  } else if (o.run.timed && !o.worker.timer.empty()) {
    c.timer = TimerFromText(o.worker.timer);
  } else if (o.run.timed) {
    c.timer = CheckTimer(ctx);
    WorkerSend(o.worker.fd, "timer " + TimerText(c.timer));
  }
  return c;
}

// A worker's progress, sent on its pipe: `begin` when a case starts, `result` when it ends (and
// under --oclgrind, first, where the case's part of its two files ends).
ProgressFn WorkerReport(const Options& o) {
  return [&o](const Progress& p) {
    if (p.result) {  // what the case printed (under --oclgrind its instruction counts)
      std::cout.flush();
      std::fflush(stdout);
    }
    if (p.result && o.oclgrind) {
      struct stat log {};
      const char* logPath = std::getenv("OCLGRIND_LOG");
      const off_t out = lseek(1, 0, SEEK_CUR);
      WorkerSend(o.worker.fd, fmt::format("oclgrind {} {}", out < 0 ? 0 : out,
                                          logPath && stat(logPath, &log) == 0 ? log.st_size : 0));
    }
    WorkerSend(o.worker.fd,
               p.result
                   ? "result " + ResultToJson(*p.result, /*withRuns=*/true)
                                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                   : std::string("begin"));
  };
}

int RunWorker(const Options& o, const Tasks& tasks, const TaskCatalog& catalog,
              const std::vector<Job>& problems, const std::string& kernelDir) {
  // A worker never outlives its run: killed with it, whatever ends the run (even SIGKILL).
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const std::vector<cl::Device> devices = RunDevices(o);
  if (o.worker.device >= devices.size())
    throw UsageError(
        fmt::format("worker device {}: there are {} devices", o.worker.device, devices.size()));
  TaskContext ctx(devices[o.worker.device], kernelDir);
  const std::vector<Job> jobs =
      DeviceJobs(o, tasks, problems, ctx.info, RunProfile(o, catalog, ctx.info));
  if (o.worker.job >= jobs.size())
    throw UsageError(fmt::format("worker job {}: there are {} jobs", o.worker.job, jobs.size()));
  Runner runner(ctx, o.run);
  runner.SetEndJobAfterError(true);  // after an OpenCL error a fresh worker takes the rest
  runner.SetKnownBuildFailures({o.worker.buildFailed.begin(), o.worker.buildFailed.end()});
  const std::optional<Ceilings> ceilings = WorkerCeilings(o, ctx);
  if (!ceilings)
    return kExitOk;
  runner.SetCeilings(*ceilings);
  const ProgressFn report = WorkerReport(o);
  size_t index = 0;
  for (size_t k = o.worker.job; k < jobs.size() && !runner.EndedEarly(); ++k) {
    Job job = jobs[k];
    size_t skip = k == o.worker.job ? o.worker.skip : 0;
    if (o.worker.scope == "case") {
      if (skip >= job.variants.size())
        throw UsageError(
            fmt::format("worker skip {}: job {} has {} variants", skip, k, job.variants.size()));
      job.variants = {job.variants[skip]};
      skip = 0;
    }
    runner.RunJob(job, skip, report, index, 0);
    if (o.worker.scope != "rest")
      break;
  }
  if (runner.EndedEarly())
    WorkerSend(o.worker.fd, "restart");
  return kExitOk;
}

// The one line that says a device's ceilings are unknown (its cases get no utilisation).
void SayNoCeilings(const std::string& why) {
  std::cerr << "ceilings: not measured: " << why << "; the cases run without utilisation\n";
}

// Exit status from all cases (docs/OUTPUT.md, "Exit status"): 3 if any errored or timed out, else 1
// if any failed. Each failure is listed on stderr, naming its device where the run has several,
// unless the table on stdout lists them under the progress that showed each; build logs that no
// progress showed follow, each once.
int ExitStatus(const Options& o, const std::vector<Result>& results, const RunInfo& info,
               const ReportOutput& output, BuildLogs& logs) {
  const bool listed = !o.quiet && output.ForTerminal();
  int status = kExitOk;
  std::vector<const Result*> bad;  // listed once per message but for its numbers (GroupAlike)
  for (const auto& r : results) {
    if (r.status == Status::Failed || r.status == Status::Error || r.status == Status::Timeout)
      bad.push_back(&r);
    if (r.status == Status::Error || r.status == Status::Timeout)
      status = kExitDevice;
    else if (r.status == Status::Failed && status == kExitOk)
      status = kExitValidationFailed;
  }
  for (const AlikeGroup& g : listed ? std::vector<AlikeGroup>() : GroupAlike(bad)) {
    const Result& r = *bad[g.first];
    std::string word = ToString(r.status);
    std::transform(word.begin(), word.end(), word.begin(), ::toupper);
    const std::string on =
        info.devices.size() > 1 && r.device < info.devices.size()
            ? fmt::format(" on device {} ({})", r.device, info.devices[r.device].info.name)
            : "";
    std::cerr << fmt::format("{} {}{}{}: {}\n", word, CaseLabel(r), on, AlikeText(g.count),
                             r.message);
  }
  for (const auto& r : results)
    std::cerr << logs.Once(r);
  return status;
}

// What every device's run shares: the options, the problems and the devices with their
// profiles, checked before anything runs.
struct Selection {
  std::string kernelDir;
  std::vector<Job> problems;
  std::vector<cl::Device> devices;
  std::vector<std::optional<Profile>> profiles;  // each device's (a bad one: exit 2 here)
};

Selection Select(const Options& o, const Tasks& tasks, const TaskCatalog& catalog,
                 const std::string& kernelDir) {
  Selection s;
  s.kernelDir = kernelDir;
  std::vector<std::string> notes;
  s.problems = o.casesFile.empty() ? MakeJobs(o, tasks, &notes)
                                   : CasesFromFile(o.casesFile, tasks, o.problem);
  for (const auto& job : s.problems)
    job.task->CheckProblem(job.spec, job.variants);
  if (!o.quiet)
    for (const auto& note : notes)
      std::cerr << "note: " << note << " (left out)\n";
  if (!o.explain)  // --explain loads no kernel
    CheckKernelFiles(kernelDir, s.problems, o.run.timed);
  s.devices = RunDevices(o);
  for (const auto& device : s.devices)
    s.profiles.push_back(RunProfile(o, catalog, DescribeDevice(device)));
  return s;
}

RunInfo NewRunInfo(const Options& o, const std::string& kernelDir, int argc, char** argv) {
  RunInfo info;
  info.date = UtcNow();
  info.kernelDir = kernelDir;
  info.host = HostName();
  info.kernelHashes = KernelFileHashes(kernelDir);
  info.cold = o.run.cold;
  info.ciTarget = o.run.ciTarget;
  info.repetitions = o.run.timed ? o.repetitions : 1;
  info.fields = TaskFields();
  for (int i = 0; i < argc; ++i)
    info.command += (i ? " " : "") + std::string(argv[i]);
  return info;
}

// An in-process run's ceilings, or at least its timer's verdict: the verdict reaches the runner
// with or without ceilings (an in-process run with --no-ceilings on a device whose timer is
// unusable reports `untimed`, not its numbers). Without ceilings, a verdict the caller already
// found is taken as told (a serve request's "timer": a parent's timed children, after its first
// timed run found the device's timer usable; the check's copies cost a CPU device 0.13 s a run).
void InProcessCeilings(const Options& o, TaskContext& ctx, const std::atomic<bool>& interrupted,
                       bool ceilings, Ceilings& c) {
  if (o.run.timed && !ceilings && !o.worker.timer.empty()) {
    c.timer = TimerFromText(o.worker.timer);
  } else if (o.run.timed && !ceilings) {
    const DeviceLock lock(o.run.deviceLock);  // the check's kernels: none while another times
    const auto shared = lock.Shared();
    c.timer = CheckTimer(ctx);
  } else if (ceilings) {
    std::string why;
    c = TryMeasureCeilings(ctx, o.run, &interrupted, why);
    if (!why.empty()) {
      SayNoCeilings(why);
      try {  // the measurement may have ended before its timer check
        c.timer = CheckTimer(ctx);
      } catch (const cl::Error& e) {
        c.timer = {true, false,
                   fmt::format("its check failed: {} in {}", ClErrorName(e.err()), e.what())};
      }
    }
  }
}

// The selection's jobs on device d (its ceilings measured on it), each result to `progress`,
// until stop() reads true.
void RunOnDevice(const Options& o, const std::vector<std::string>& command, const Selection& s,
                 size_t d, const std::vector<Job>& jobs, DeviceRun& device,
                 const ProgressFn& progress, const std::string& oclgrindDir,
                 const std::function<bool()>& stop, bool again) {
  const std::atomic<bool>& interrupted = InterruptFlag();
  // A later round (again) keeps the first round's ceilings and timer verdict.
  const bool ceilings = o.run.timed && !o.noCeilings && !again;
  if (!o.quiet && ceilings)
    std::cerr << fmt::format("ceilings: measuring the memory ceilings (12 streams of {} s)\n",
                             std::min(o.run.timeBudgetS, kCeilingStreamBudgetS));
  device.ceilings.timer.mode = o.run.timer;  // with the timer's verdict, the clock of the runs
  if (o.isolate) {
    IsolationSettings settings{command, o.timeoutS,  o.perProblem, ceilings,
                               "",      s.kernelDir, SayNoCeilings};
    settings.oclgrindDir = oclgrindDir;
    settings.device = d;
    RunIsolated(settings, jobs, device.info, progress, stop, device.ceilings);
    return;
  }
  TaskContext ctx(s.devices[d], s.kernelDir);
  Runner runner(ctx, o.run);
  runner.SetStop(stop);
  if (!again)
    InProcessCeilings(o, ctx, interrupted, ceilings, device.ceilings);
  device.ceilings.timer.mode = o.run.timer;
  runner.SetCeilings(device.ceilings);
  runner.Run(jobs, progress);
}

// The results of a run, the first round's in order; a later round's (--repetitions) join the
// first round's result of the same device and case (AddRound).
struct RunResults {
  std::vector<Result> done;
  std::map<std::string, size_t> where;  // device and case label: index in done
  bool failed = false;                  // --fail-fast: a case failed, errored or hung
  void Add(Result r, size_t round, const DeviceRun& device) {
    const std::string key = fmt::format("{}|{}", r.device, CaseLabel(r));
    const auto it = where.find(key);
    size_t at = done.size();
    if (round > 0 && it != where.end()) {
      at = it->second;
      AddRound(done[at], r, device.ceilings, device.info);
    } else {
      where.emplace(key, at);
      done.push_back(std::move(r));
    }
    const Status st = done[at].status;
    failed = failed || st == Status::Failed || st == Status::Error || st == Status::Timeout;
  }
};

// The banner of a device's cases on stderr (and of each round after the first).
void SayDevice(const Options& o, const Selection& s, size_t d, const DeviceRun& device,
               size_t round, size_t rounds) {
  if (o.quiet)
    return;
  if (round > 0) {
    std::cerr << fmt::format("round {} of {}, device {}\n", round + 1, rounds, d);
    return;
  }
  std::cerr << fmt::format("device{}: {} ({}), kernels from {}{}\n{}\n",
                           s.devices.size() > 1 ? fmt::format(" {}", d) : "", device.info.name,
                           device.info.platform, s.kernelDir,
                           o.perProblem ? ", a worker process per problem"
                           : o.isolate  ? ", cases in a worker process"
                                        : "",
                           ProfileLine(s.profiles[d], o));
}

// Every device in turn, in --repetitions rounds (each round every case once: a slow spell of the
// machine touches every case alike); the report rewritten after each case, and once more at the
// end.
int RunAll(const Options& o, const Tasks& tasks, const Selection& s, RunInfo& info,
           ReportOutput& output, const std::vector<std::string>& command) {
  // Ctrl-C or SIGTERM: the run stops after the case in progress (an isolated run, or the
  // ceilings' streams, at once), writes what is done and exits 130; a second one ends the
  // process at once (its workers die with it: PR_SET_PDEATHSIG).
  InstallInterruptThread(/*secondEnds=*/true);  // RunBenchmark's (once per process)
  const std::atomic<bool>& interrupted = InterruptFlag();
  std::optional<TempFolder> oclgrindFiles;  // the workers' Oclgrind logs and stdout
  if (o.oclgrind)
    oclgrindFiles.emplace("rsb-oclgrind");
  const std::string oclgrindDir = oclgrindFiles ? oclgrindFiles->Path() : "";
  RunResults results;
  const std::function<bool()> stop = [&] { return interrupted || (o.failFast && results.failed); };
  BuildLogs logs(o.verbose);
  const ProgressFn print = o.quiet ? ProgressFn() : StderrProgress(logs);
  for (size_t round = 0; round < info.repetitions && !stop(); ++round)
    for (size_t d = 0; d < s.devices.size() && !stop(); ++d) {
      if (round == 0)
        info.devices.push_back({DescribeDevice(s.devices[d]), Ceilings()});
      DeviceRun& device = info.devices[d];
      const std::vector<Job> jobs = DeviceJobs(o, tasks, s.problems, device.info, s.profiles[d]);
      SayDevice(o, s, d, device, round, info.repetitions);
      const ProgressFn progress = [&](const Progress& p) {
        if (print)
          print(p);
        if (p.result) {
          Result r = *p.result;
          r.device = d;
          results.Add(std::move(r), round, device);
          output.Write(info, results.done, /*final=*/false);
        }
      };
      RunOnDevice(o, command, s, d, jobs, device, progress, oclgrindDir, stop, round > 0);
    }
  std::vector<Result>& done = results.done;
  if (o.failFast && results.failed && !interrupted && !o.quiet)
    std::cerr << fmt::format(
        "stopped after the first case that did not pass (--fail-fast): {} "
        "case(s) run\n",
        done.size());
  // Interrupted before any case finished: nothing to write, and an existing --output is kept.
  if (!interrupted || !done.empty())
    output.Write(info, done, /*final=*/true);
  const int status = ExitStatus(o, done, info, output, logs);
  if (interrupted) {
    std::cerr << (done.empty()
                      ? std::string("interrupted before any case finished: nothing written\n")
                      : fmt::format("interrupted: {} finished cases written\n", done.size()));
    return kExitInterrupted;
  }
  return status;
}

}  // namespace

int RunBenchmark(int argc, char** argv, const std::string& subcommandsHelp, const Told& told) {
  const Tasks tasks = MakeTasks();
  const TaskCatalog catalog = CatalogOf(tasks);
  Options o = ParseCommandLine(argc, argv, catalog, subcommandsHelp);
  if (told.worker)
    o.worker = *told.worker;
  if (!told.timer.empty())
    o.worker.timer = told.timer;
  o.run.turnsFd = told.turnsFd;
  if (PrintListings(o, tasks))
    return kExitOk;
  // --oclgrind: this run starts again under oclgrind (only its platform is visible there).
  if (o.oclgrind && o.worker.fd < 0 && !UnderOclgrind())
    ExecUnderOclgrind(FindOclgrind(), argc, argv);
  if (o.worker.fd < 0 && !o.explain)  // before any OpenCL call: the driver's linker keeps on
    InstallInterruptThread(/*secondEnds=*/true);
  const std::string kernelDir = FindKernelDir(o.kernels, argv[0]);
  if (o.worker.fd >= 0) {
    const std::vector<Job> problems =
        o.casesFile.empty() ? MakeJobs(o, tasks) : CasesFromFile(o.casesFile, tasks, o.problem);
    return RunWorker(o, tasks, catalog, problems, kernelDir);
  }
  const Selection s = Select(o, tasks, catalog, kernelDir);
  // The outputs are checked only once everything on the command line has been, and first
  // written when a case ends.
  ReportOutput output(o.output, MakePrinter(o.format, {o.breakdown}));
  for (const auto& f : o.files)
    output.Add(f.option, f.path, MakePrinter(f.format, {o.breakdown}));
  RunInfo info = NewRunInfo(o, kernelDir, argc, argv);
  if (o.explain)
    return ExplainCases(o, tasks, s.problems, s.devices, s.profiles, info, output);
  return RunAll(o, tasks, s, info, output, std::vector<std::string>(argv, argv + argc));
}

int RunCommand(int argc, char** argv, const std::string& subcommandsHelp, const Told& told) {
  try {
    return RunBenchmark(argc, argv, subcommandsHelp, told);
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

}  // namespace rsb
