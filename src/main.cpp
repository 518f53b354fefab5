// reduce-scan-bench: parses options, picks the device, hands tasks to the runner and writes the
// report. Exit statuses: 0 all passed, 1 a validation failed, 2 bad input, 3 an OpenCL/system
// error (in a case or outside), 130 interrupted.
#include "cli/Cli.h"
#include "engine/Explain.h"
#include "engine/Oclgrind.h"
#include "engine/Runner.h"
#include "engine/Worker.h"
#include "platform/BuildInfo.h"
#include "platform/CLUtil.h"
#include "platform/Errors.h"
#include "platform/Subprocess.h"
#include "report/Report.h"
#include "run/CaseFile.h"
#include "run/CheckMatrix.h"
#include "run/Profile.h"
#include "tasks/Tasks.h"
#include "tools/Compare.h"
#include "tools/Plot.h"
#include "tools/Tune.h"
#include "tools/grade/Grade.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

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

// The values of a task's parameters to sweep: each parameter's list from the command line, or
// its default; one map per combination.
std::vector<std::map<std::string, size_t>> ParamCombinations(const Options& o,
                                                             const IComputeTask& task) {
  std::vector<std::map<std::string, size_t>> combos = {{}};
  for (const auto& p : task.Parameters()) {
    const auto given = o.params.find(p.name);
    const std::vector<size_t> values =
        given != o.params.end() ? given->second : std::vector<size_t>{p.value};
    std::vector<std::map<std::string, size_t>> next;
    for (const auto& c : combos)
      for (size_t v : values) {
        next.push_back(c);
        next.back()[p.name] = v;
      }
    combos = next;
  }
  return combos;
}

// The values of `asked` the task computes; where none was asked for on the command line and the
// task computes none of the defaults, its first.
template <class E>
std::vector<E> Supported(const std::vector<E>& asked, const std::vector<E>& supported, bool given) {
  std::vector<E> out;
  for (E e : asked)
    if (Contains(supported, e))
      out.push_back(e);
  if (out.empty() && !given && !supported.empty())
    out.push_back(supported.front());
  return out;
}

template <class E>
std::string Names(const std::vector<E>& v) {
  std::string s;
  for (E e : v)
    s += (s.empty() ? "" : ", ") + ToString(e);
  return s;
}

// One job per (task, size, type, op, scan kind, task parameters); every case starts from
// o.problem. A task runs the types and operators it computes (Types(), Ops()), each variant the
// sizes of its kind (plain counts, or images for TakesShape); what the command line asked for
// and a task leaves out is said in `notes`. A task or variant named on the command line that is
// left with no case at all is a UsageError.
std::vector<Job> MakeJobs(const Options& o, const Tasks& tasks,
                          std::vector<std::string>* notes = nullptr) {
  std::vector<Job> jobs;
  std::vector<std::string> ran;  // variants (task/variant) with a job
  for (const auto& task : tasks) {
    if (!Contains(o.tasks, task->Name()))
      continue;
    std::vector<std::string> variants;
    for (const auto& v : task->Variants())
      if (o.variants.empty() || Contains(o.variants, v))
        variants.push_back(v);
    if (variants.empty())
      continue;
    const auto types = Supported(o.types, task->Types(), o.typesGiven);
    const auto ops = Supported(o.ops, task->Ops(), o.opsGiven);
    std::vector<std::string> why;
    if (types.size() < o.types.size() && o.typesGiven)
      why.push_back(fmt::format("{} computes {} only", task->Name(), Names(task->Types())));
    if (ops.size() < o.ops.size() && o.opsGiven)
      why.push_back(fmt::format("{} has the operator {} only", task->Name(), Names(task->Ops())));
    std::vector<std::optional<ScanKind>> kinds = {std::nullopt};
    if (!task->ScanKinds().empty())
      kinds.assign(o.scanKinds.begin(), o.scanKinds.end());
    const std::vector<Extent> sizes =
        o.sizesGiven || task->DefaultSizes().empty() ? o.sizes : task->DefaultSizes();
    for (const Extent& size : sizes) {
      std::vector<std::string> takers;
      for (const auto& v : variants)
        if (task->TakesShape(v) == (size.height > 0))
          takers.push_back(v);
      if (takers.empty() || types.empty() || ops.empty())
        continue;
      for (const auto& v : takers)
        ran.push_back(task->Name() + "/" + v);
      for (ElementType type : types)
        for (Op op : ops)
          for (const auto& kind : kinds)
            for (const auto& params : ParamCombinations(o, *task)) {
              Job job{task.get(), o.problem, takers};
              job.spec.type = type;
              job.spec.op = op;
              job.spec.scanKind = kind;
              job.spec.n = size.n;
              job.spec.height = size.height;
              job.spec.params = params;
              jobs.push_back(job);
            }
    }
    std::vector<std::string> left;
    for (const auto& v : variants)
      if (!Contains(ran, task->Name() + "/" + v))
        left.push_back(v);
    if (!left.empty()) {
      const bool shapes = task->TakesShape(left.front());
      if (!types.empty() && !ops.empty())
        why.push_back(fmt::format(
            "{} {} {}", fmt::join(left, ", "), left.size() > 1 ? "take" : "takes",
            shapes ? "images only (--size WIDTHxHEIGHT)" : "plain element counts only (--size N)"));
    }
    if (!why.empty() && notes)
      notes->push_back(fmt::format("{}: {}", task->Name(), fmt::join(why, "; ")));
    const bool none = left.size() == variants.size();
    if (none && o.tasksGiven)
      throw UsageError(fmt::format("--task {}: no case to run: {}; allowed: {}", task->Name(),
                                   fmt::join(why, "; "),
                                   "types, operators and sizes the task computes"));
    if (!left.empty() && !o.variants.empty())
      throw UsageError(fmt::format("--variant {}: no case to run: {}", fmt::join(left, ","),
                                   fmt::join(why, "; ")));
  }
  return jobs;
}

// The jobs of one device: each of MakeJobs' problems at every --local-size, in the order given
// (auto resolved per variant on this device, from its tuning profile's entry where it has one; a
// variant whose sizes resolve to one it already runs at, auto = 256 beside 256, runs at it once),
// or a bare --check's matrix. Each variant's settings come from the profile where --tune and
// --local-size leave them (ApplyProfile). A worker makes the same list from the same command
// line and device.
std::vector<Job> DeviceJobs(const Options& o, const Tasks& tasks, const std::vector<Job>& problems,
                            const DeviceInfo& device, const std::optional<Profile>& profile) {
  const Profile* p = profile ? &*profile : nullptr;
  if (!o.casesFile.empty() || o.BareCheck()) {
    // --cases: each case as the file gives it, its local size with it; a bare --check: the same
    // tasks and variants over the correctness matrix (for a simulator under --oclgrind).
    std::vector<Job> jobs = !o.casesFile.empty() ? problems
                            : o.oclgrind         ? OclgrindMatrixJobs(o, tasks, device)
                                                 : CheckMatrixJobs(o, tasks, device);
    for (Job& job : jobs)
      ApplyProfile(job, p, device, o.localSizeGiven);
    return jobs;
  }
  std::vector<Job> jobs;
  for (const Job& problem : problems) {
    std::map<std::string, std::vector<size_t>> ran;  // variant -> the local sizes it runs at
    for (size_t local : o.localSizes) {
      Job job = problem;
      job.spec.localSize = local;
      ApplyProfile(job, p, device, o.localSizeGiven);
      job.variants.clear();
      for (const auto& v : problem.variants) {
        const size_t resolved = problem.task->LocalSize(v, job.SpecFor(v), device);
        if (!Contains(ran[v], resolved)) {
          ran[v].push_back(resolved);
          job.variants.push_back(v);
        }
      }
      if (!job.variants.empty())
        jobs.push_back(job);
    }
  }
  return jobs;
}

ProgressFn StderrProgress() {
  return [](const Progress& p) {
    const ProblemSpec& s = p.job->spec;
    if (!p.result) {
      std::cerr << fmt::format("[{:>3}/{}] {} ... ", p.index, p.total,
                               CaseLabel(NewResult(*p.job->task, p.variant, s, DeviceInfo())))
                << std::flush;
    } else if (p.result->status == Status::Passed && p.result->iterations) {
      std::cerr << fmt::format("passed, {:.4f} ms, {:.2f} Gelem/s\n", p.result->timeMs.median,
                               p.result->gelemS);
    } else if (p.result->status == Status::Error || p.result->status == Status::Timeout) {
      std::cerr << ToString(p.result->status) << ": " << p.result->message << "\n";
    } else {
      std::cerr << ToString(p.result->status) << "\n";
    }
  };
}

void WriteReport(std::ostream& out, OutputFormat format, bool breakdown, const RunInfo& info,
                 const std::vector<Result>& results) {
  switch (format) {
    case OutputFormat::Table:
      WriteTable(out, info, results, breakdown);
      break;
    case OutputFormat::Csv:
      WriteCsv(out, info, results);
      break;
    case OutputFormat::Json:
      WriteJson(out, info, results);
      break;
    case OutputFormat::Markdown:
      WriteMarkdown(out, info, results);
      break;
  }
  out.flush();
}

// Where the report goes. A regular file (or a new one) is rewritten after every case through a
// temporary file and a rename, so that it is a complete document whatever happens next; stdout
// and special files (/dev/null, a pipe) get the report once, at the end. Whether the place can
// be written is checked when this is made, before any case runs; a write that fails is a
// DeviceError (exit 3) naming the reason.
class ReportOutput {
 public:
  ReportOutput(std::string path, OutputFormat format, bool breakdown)
      : path_(std::move(path)), format_(format), breakdown_(breakdown) {
    if (path_.empty())
      return;
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path p(path_);
    // A folder passes the access check below, and the run would end in a failed rename with
    // every result lost: refused before any case runs.
    if (fs::is_directory(p, ec))
      throw UsageError(fmt::format("--output '{}': is a folder; allowed: a file path", path_));
    special_ = fs::exists(p, ec) && !fs::is_regular_file(p, ec);
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    const bool ok = special_ || fs::exists(p, ec) ? access(path_.c_str(), W_OK) == 0
                                                  : access(dir.c_str(), W_OK | X_OK) == 0;
    if (!ok)
      throw DeviceError(
          fmt::format("--output '{}': cannot write there: {}", path_, std::strerror(errno)));
  }

  void Write(const RunInfo& info, const std::vector<Result>& results, bool final) {
    Write([&](std::ostream& out) { WriteReport(out, format_, breakdown_, info, results); }, final);
  }

  // Any document, written by `write`.
  void Write(const std::function<void(std::ostream&)>& write, bool final) {
    if (path_.empty() || special_) {
      if (!final)
        return;
      std::ofstream file;
      if (special_)
        file.open(path_);
      std::ostream& out = special_ ? file : std::cout;
      write(out);
      out.flush();
      if (!out)
        throw DeviceError(fmt::format("writing the report to {} failed: {}",
                                      special_ ? "'" + path_ + "'" : "stdout",
                                      std::strerror(errno)));
      return;
    }
    const std::string tmp = fmt::format("{}.{}.tmp", path_, getpid());
    std::ofstream file(tmp, std::ios::trunc);
    write(file);
    file.flush();
    file.close();
    std::error_code ec;
    if (!file || (std::filesystem::rename(tmp, path_, ec), ec)) {
      const std::string why = ec ? ec.message() : std::strerror(errno);
      std::filesystem::remove(tmp, ec);
      throw DeviceError(fmt::format("--output '{}': writing failed: {}", path_, why));
    }
  }

 private:
  std::string path_;
  OutputFormat format_;
  bool breakdown_;
  bool special_ = false;
};

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
  output.Write(
      [&](std::ostream& out) {
        switch (o.format) {
          case OutputFormat::Table:
            WriteExplainTable(out, info, cases);
            break;
          case OutputFormat::Csv:
            WriteExplainCsv(out, info, cases);
            break;
          case OutputFormat::Json:
            WriteExplainJson(out, info, cases);
            break;
          case OutputFormat::Markdown:
            WriteExplainMarkdown(out, info, cases);
            break;
        }
      },
      /*final=*/true);
  return kExitOk;
}

// A temporary folder, removed with what is in it when this goes (when asked for).
class TempFolder {
 public:
  explicit TempFolder(bool make) {
    if (!make)
      return;
    char tmpl[] = "/tmp/rsb-oclgrind-XXXXXX";
    if (!mkdtemp(tmpl))
      throw DeviceError(
          fmt::format("cannot make a temporary folder in /tmp: {}", std::strerror(errno)));
    path_ = tmpl;
  }
  ~TempFolder() {
    std::error_code ec;
    if (!path_.empty())
      std::filesystem::remove_all(path_, ec);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::string& Path() const { return path_; }

 private:
  std::string path_;
};

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
        std::cout << fmt::format("{:<11} {:<14} {}\n", t->Name(), v, t->Describe(v));
  return o.help || o.listDevices || o.listVariants;
}

// A worker of an isolated run (Worker.h): runs one job's variants from the skip-th on, on the
// run's device number --worker-device, and reports each case on its pipe.
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
// verdict an earlier worker found (--worker-timer), or, in a timed run where none was told (the
// worker that measured died first, or its measurement failed), checked here and sent. nullopt:
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

int RunWorker(const Options& o, const Tasks& tasks, const TaskCatalog& catalog,
              const std::vector<Job>& problems, const std::string& kernelDir) {
  // A worker never outlives its run: killed with it, whatever ends the run (even SIGKILL).
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const std::vector<cl::Device> devices = RunDevices(o);
  if (o.worker.device >= devices.size())
    throw UsageError(
        fmt::format("--worker-device {}: there are {} devices", o.worker.device, devices.size()));
  TaskContext ctx(devices[o.worker.device], kernelDir);
  const std::vector<Job> jobs =
      DeviceJobs(o, tasks, problems, ctx.info, RunProfile(o, catalog, ctx.info));
  if (o.worker.job >= jobs.size())
    throw UsageError(fmt::format("--worker-job {}: there are {} jobs", o.worker.job, jobs.size()));
  Runner runner(ctx, o.run);
  runner.SetEndJobAfterError(true);  // after an OpenCL error a fresh worker takes the rest
  const std::optional<Ceilings> ceilings = WorkerCeilings(o, ctx);
  if (!ceilings)
    return kExitOk;
  runner.SetCeilings(*ceilings);
  size_t index = 0;
  runner.RunJob(
      jobs[o.worker.job], o.worker.skip,
      [&](const Progress& p) {
        if (p.result) {  // what the case printed (under --oclgrind its instruction counts)
          std::cout.flush();
          std::fflush(stdout);
        }
        if (p.result && o.oclgrind) {  // where the case's part of the two files ends
          struct stat log {};
          const char* logPath = std::getenv("OCLGRIND_LOG");
          const off_t out = lseek(1, 0, SEEK_CUR);
          WorkerSend(o.worker.fd,
                     fmt::format("oclgrind {} {}", out < 0 ? 0 : out,
                                 logPath && stat(logPath, &log) == 0 ? log.st_size : 0));
        }
        WorkerSend(o.worker.fd, p.result ? "result " + ResultToJson(*p.result).dump(
                                                           -1, ' ', false,
                                                           nlohmann::json::error_handler_t::replace)
                                         : std::string("begin"));
      },
      index, 0);
  if (runner.EndedEarly())
    WorkerSend(o.worker.fd, "restart");
  return kExitOk;
}

// The one line that says a device's ceilings are unknown (its cases get no utilisation).
void SayNoCeilings(const std::string& why) {
  std::cerr << "ceilings: not measured: " << why << "; the cases run without utilisation\n";
}

// Exit status from all cases (docs/OUTPUT.md, "Exit status"): 3 if any errored or timed out, else 1 if any failed.
// Where the run has several devices, each failure names its device.
int ExitStatus(const std::vector<Result>& results, const RunInfo& info) {
  int status = kExitOk;
  for (const auto& r : results) {
    if (r.status == Status::Failed || r.status == Status::Error || r.status == Status::Timeout) {
      std::string word = ToString(r.status);
      std::transform(word.begin(), word.end(), word.begin(), ::toupper);
      const std::string on =
          info.devices.size() > 1 && r.device < info.devices.size()
              ? fmt::format(" on device {} ({})", r.device, info.devices[r.device].info.name)
              : "";
      std::cerr << fmt::format("{} {}{}: {}\n", word, CaseLabel(r), on, r.message);
    }
    if (r.status == Status::Error || r.status == Status::Timeout)
      status = kExitDevice;
    else if (r.status == Status::Failed && status == kExitOk)
      status = kExitValidationFailed;
  }
  return status;
}

int Run(int argc, char** argv) {
  const Tasks tasks = MakeTasks();
  TaskCatalog catalog;
  for (const auto& t : tasks)
    catalog.push_back({t->Name(), t->Variants(), t->Tunables(), t->Parameters()});
  const Options o = ParseCommandLine(argc, argv, catalog);
  if (PrintListings(o, tasks))
    return kExitOk;

  // --oclgrind: this run starts again under oclgrind (only its platform is visible there).
  if (o.oclgrind && o.worker.fd < 0 && !UnderOclgrind())
    ExecUnderOclgrind(FindOclgrind(), argc, argv);
  const std::string kernelDir = FindKernelDir(o.kernels, argv[0]);
  std::vector<std::string> notes;
  const std::vector<Job> problems = o.casesFile.empty()
                                        ? MakeJobs(o, tasks, &notes)
                                        : CasesFromFile(o.casesFile, tasks, o.problem);
  if (o.worker.fd >= 0)
    return RunWorker(o, tasks, catalog, problems, kernelDir);
  for (const auto& job : problems)
    job.task->CheckProblem(job.spec, job.variants);
  if (!o.quiet)
    for (const auto& note : notes)
      std::cerr << "note: " << note << " (left out)\n";
  if (!o.explain)  // --explain loads no kernel
    CheckKernelFiles(kernelDir, problems, o.run.timed);
  const std::vector<cl::Device> devices = RunDevices(o);
  std::vector<std::optional<Profile>> profiles;  // each device's (a bad one: exit 2 here)
  for (const auto& device : devices)
    profiles.push_back(RunProfile(o, catalog, DescribeDevice(device)));
  // The output is checked only once everything on the command line has been, and first
  // written when a case ends.
  ReportOutput output(o.output, o.format, o.breakdown);

  RunInfo info;
  info.date = UtcNow();
  info.kernelDir = kernelDir;
  info.host = HostName();
  info.kernelHashes = KernelFileHashes(kernelDir);
  info.cold = o.run.cold;
  info.ciTarget = o.run.ciTarget;
  for (int i = 0; i < argc; ++i)
    info.command += (i ? " " : "") + std::string(argv[i]);
  if (o.explain)
    return ExplainCases(o, tasks, problems, devices, profiles, info, output);
  // Ctrl-C or SIGTERM: the run stops after the case in progress (an isolated run, or the
  // ceilings' streams, at once), writes what is done and exits 130; a second one ends the
  // process at once (its workers die with it: PR_SET_PDEATHSIG).
  InstallInterruptHandler(/*secondEnds=*/true);
  const std::atomic<bool>& interrupted = InterruptFlag();
  TempFolder oclgrindFiles(o.oclgrind);  // the workers' Oclgrind logs and stdout
  std::vector<Result> done;
  const ProgressFn print = o.quiet ? ProgressFn() : StderrProgress();
  // The selection runs on each device in turn, its ceilings measured on it.
  for (size_t d = 0; d < devices.size() && !interrupted; ++d) {
    info.devices.push_back({DescribeDevice(devices[d]), Ceilings()});
    DeviceRun& device = info.devices.back();
    const std::vector<Job> jobs = DeviceJobs(o, tasks, problems, device.info, profiles[d]);
    if (!o.quiet)
      std::cerr << fmt::format(
          "device{}: {} ({}), kernels from {}{}\n{}\n",
          devices.size() > 1 ? fmt::format(" {}", d) : "", device.info.name, device.info.platform,
          kernelDir, o.isolate ? ", cases in worker processes" : "", ProfileLine(profiles[d], o));
    const bool ceilings = o.run.timed && !o.noCeilings;
    if (!o.quiet && ceilings)
      std::cerr << fmt::format("ceilings: measuring the memory ceilings (12 streams of {} s)\n",
                               std::min(o.run.timeBudgetS, kCeilingStreamBudgetS));
    const ProgressFn progress = [&](const Progress& p) {
      if (print)
        print(p);
      if (p.result) {
        done.push_back(*p.result);
        done.back().device = d;
        output.Write(info, done, /*final=*/false);
      }
    };
    if (o.isolate) {
      std::vector<std::string> command(argv, argv + argc);
      command.insert(command.end(), {"--worker-device", std::to_string(d)});
      IsolationSettings settings{command, o.timeoutS, ceilings, "", kernelDir, SayNoCeilings};
      if (o.oclgrind)
        settings.oclgrindDir = oclgrindFiles.Path();
      RunIsolated(settings, jobs, device.info, progress, interrupted, device.ceilings);
    } else {
      TaskContext ctx(devices[d], kernelDir);
      Runner runner(ctx, o.run);
      runner.SetStopFlag(&interrupted);
      if (o.run.timed && !ceilings) {
        const DeviceLock lock(o.run.deviceLock);  // the check's kernels: none while another times
        const auto shared = lock.Shared();
        device.ceilings.timer = CheckTimer(ctx);
      } else if (ceilings) {
        std::string why;
        device.ceilings = TryMeasureCeilings(ctx, o.run, &interrupted, why);
        if (!why.empty()) {
          SayNoCeilings(why);
          try {  // the measurement may have ended before its timer check
            device.ceilings.timer = CheckTimer(ctx);
          } catch (const cl::Error& e) {
            device.ceilings.timer = {
                true, false,
                fmt::format("its check failed: {} in {}", ClErrorName(e.err()), e.what())};
          }
        }
      }
      // The timer's verdict reaches the runner with or without ceilings: an in-process run with
      // --no-ceilings on a device whose timer is unusable reports `untimed`, not its numbers.
      runner.SetCeilings(device.ceilings);
      runner.Run(jobs, progress);
    }
  }
  output.Write(info, done, /*final=*/true);
  const int status = ExitStatus(done, info);
  if (interrupted) {
    std::cerr << fmt::format("interrupted: {} finished cases written\n", done.size());
    return kExitInterrupted;
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  SaveEnvironment();
  if (argc > 1 && std::string(argv[1]) == "grade")
    return Grade(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "compare")
    return Compare(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "plot")
    return Plot(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "tune")
    return Tune(argc - 1, argv + 1, MakeTasks());
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
