#include "grade/Grade.h"

#include "engine/Oclgrind.h"
#include "grade/ChildRun.h"
#include "grade/Class.h"
#include "grade/Context.h"
#include "grade/Engines.h"
#include "grade/HandinFiles.h"
#include "grade/HostBuild.h"
#include "grade/Lists.h"
#include "grade/Options.h"
#include "grade/Report.h"
#include "grade/Resident.h"
#include "grade/Rubric.h"
#include "grade/Sandbox.h"
#include "grade/Scoring.h"
#include "grade/Text.h"
#include "platform/BuildInfo.h"
#include "platform/CLUtil.h"
#include "platform/DeviceLock.h"
#include "platform/Errors.h"
#include "platform/Files.h"
#include "platform/Subprocess.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

namespace fs = std::filesystem;
using nlohmann::json;

namespace rsb {

namespace grade {
namespace {

// ---------------------------------------------------------------------------------------------
// Grading

// Hand-ins graded at once on a GPU by default. Where each child run is a process with an OpenCL
// context of its own, 4: NVIDIA's driver starts processes' contexts one at a time (about 0.4 s a
// process, machine-wide), and on the H100 4 at a time graded 13 correct hand-ins a minute, 16 at a
// time 8. Where residents run the hand-ins' code (--resident-runs, --sandbox none), up to 16: 96
// kernel-only hand-ins of the shipped rubric in 85 s on the H100's 16 cores (docs/BENCHMARKS.md,
// "Grading a class").
constexpr size_t kGpuJobs = 4, kGpuResidentJobs = 16;

// The children's TMPDIR for the scope: a folder in the grading's own (TempFolder), so that what a
// child run killed at its deadline or by an interrupt leaves there (an Oclgrind run's folder,
// src/run/Bench.cpp) goes with it; the caller's TMPDIR back on the way out. (A sandboxed child
// gets its own: Sandbox.cpp.) Set before the grading's threads start, given back after they end.
class ChildrenTmpdir {
 public:
  explicit ChildrenTmpdir(const std::string& work) {
    const std::string dir = work + "/tmp";
    fs::create_directories(dir);
    was_ = SetChildrenEnvironment("TMPDIR", dir);
  }
  ~ChildrenTmpdir() { SetChildrenEnvironment("TMPDIR", was_); }
  ChildrenTmpdir(const ChildrenTmpdir&) = delete;
  ChildrenTmpdir& operator=(const ChildrenTmpdir&) = delete;

 private:
  std::optional<std::string> was_;
};

std::string HandinName(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (p.filename().empty())
    p = p.parent_path();
  std::string name = p.filename().string();
  // "." (as GitHub Classroom grades the repository): the folder's own name.
  if (name.empty() || name == "." || name == "..") {
    const fs::path abs = fs::absolute(p).lexically_normal();
    name = (abs.filename().empty() ? abs.parent_path() : abs).filename().string();
  }
  return name;
}

// How hand-ins' host code is built: against the hand-in kit, read and checked once before any
// hand-in is graded where one brings host code (a missing or broken kit: DeviceError, exit 3).
HostBuildSettings HostBuildFor(const Context& ctx, const std::string& work, Kit& kit) {
  HostBuildSettings host{nullptr, work, ctx.opt.buildTimeoutS, {}, {}};
  for (const auto& it : ctx.rubric.items)
    host.graded.insert(it.task);
  // (Task sources found by name anywhere in a hand-in, as CopyHandinFiles lays them out.)
  if (std::none_of(ctx.opt.handins.begin(), ctx.opt.handins.end(), [&](const std::string& h) {
        for (const auto& [dest, rel] : LocateByName(h))
          if (dest.rfind("src/tasks/", 0) == 0 && host.graded.count(TaskOfFile(dest)))
            return true;
        return false;
      }))
    return host;
  if (ctx.opt.handinKit.empty())
    BuildKitIfMissing(DefaultKitDir(), ctx.opt.buildTimeoutS);
  kit = LoadKit(ctx.opt.handinKit.empty() ? DefaultKitDir() : ctx.opt.handinKit, work,
                ctx.opt.buildTimeoutS);
  host.kit = &kit;
  host.objects = std::make_shared<ObjectCache>(work + "/host-objects");
  return host;
}

// The hand-ins' report names, each once.
std::vector<std::string> HandinNames(const std::vector<std::string>& handins) {
  std::vector<std::string> names;
  for (const auto& h : handins) {
    const std::string name = HandinName(h);
    if (std::find(names.begin(), names.end(), name) != names.end())
      throw UsageError(
          fmt::format("HANDIN '{}': a second hand-in named '{}'; allowed: hand-in "
                      "folders with different names (reports are DIR/<name>.md)",
                      h, name));
    names.push_back(name);
  }
  return names;
}

// --items: the rubric keeps only the items named, in its own order.
void SelectItems(Rubric& rubric, const std::vector<std::string>& ids) {
  if (ids.empty())
    return;
  std::vector<std::string> known;
  for (const auto& it : rubric.items)
    known.push_back(it.id);
  for (const auto& id : ids)
    if (std::find(known.begin(), known.end(), id) == known.end())
      throw UsageError(fmt::format("--items '{}': no such item in '{}'; allowed: {}", id,
                                   rubric.path, Join(known, ", ")));
  std::vector<Item> kept;
  for (auto& it : rubric.items)
    if (std::find(ids.begin(), ids.end(), it.id) != ids.end())
      kept.push_back(std::move(it));
  rubric.items = std::move(kept);
}

// The output folder (probed with the options), made when grading starts.
void MakeOutputDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw DeviceError(
        fmt::format("--output-dir '{}': cannot make the folder: {}", dir, ec.message()));
}

// The files the rubric requires that the hand-in lacks, per item: "" when it has them all (found
// by name where the student put them; one taken from the hand-out is not the hand-in's).
std::string MissingFiles(const Rubric& r, const Item& it, const HandinFiles& handin) {
  std::vector<std::string> missing;
  for (const auto& f : r.requiredFiles) {
    const std::string task = TaskOfFile(f);
    const auto from = handin.from.find(f);
    if ((task.empty() || task == it.task) &&
        (!fs::is_regular_file(fs::path(handin.root) / f) ||
         (from != handin.from.end() && from->second == kFromHandout)))
      missing.push_back(f);
  }
  if (missing.empty())
    return "";
  return fmt::format("the hand-in lacks {}, which the rubric requires", Join(missing, ", "));
}

// The hand-in's own copy in its work folder (regular files only: a link could point at what the
// hand-in must not read), which its sandbox sees; the original's folder stays hidden. Its files
// found by name where the student put them, the unchanged kernel headers it lacks taken from the
// suite's kernels (CopyHandinFiles).
HandinFiles CopyHandin(const std::string& from, const std::string& workDir,
                       const std::string& suiteKernels) {
  const fs::path to = fs::path(workDir) / "handin";
  fs::create_directories(to);
  return CopyHandinFiles(from, to.string(), suiteKernels);
}

// `env` setting every compiled-kernel cache (pocl's, NVIDIA's, Mesa's) to the folder.
std::vector<std::string> KernelCacheEnvironment(const std::string& dir) {
  return {"/usr/bin/env", "POCL_CACHE_DIR=" + dir, "CUDA_CACHE_PATH=" + dir + "/nv",
          "MESA_SHADER_CACHE_DIR=" + dir + "/mesa"};
}

// How the hand-in's children start: in its sandbox (or, with --sandbox none, only with a
// kernel cache of their own), writing nothing outside workDir.
std::vector<std::string> HandinWrapper(const Context& ctx, const std::string& workDir) {
  if (ctx.opt.sandbox == "none") {
    const std::string cache = ctx.opt.kernelCache.empty()
                                  ? (fs::path(workDir) / "kernel-cache").string()
                                  : ctx.opt.kernelCache;
    fs::create_directories(cache);
    return KernelCacheEnvironment(cache);
  }
  SandboxPolicy policy;
  policy.writableDir = workDir;
  policy.kernelCache = ctx.opt.kernelCache;
  // Other hand-ins (and the folders holding them), the rubric, the reports and the grader's
  // own temporary folder are out of sight; the suite's binary and kernels stay readable.
  for (const auto& h : ctx.opt.handins) {
    const fs::path abs = fs::absolute(h).lexically_normal();
    policy.hidden.push_back(abs.string());
    if (abs.parent_path() != abs.root_path())  // a class folder, never the whole file system
      policy.hidden.push_back(abs.parent_path().string());
  }
  policy.hidden.push_back(fs::absolute(ctx.opt.rubric).lexically_normal().string());
  policy.hidden.push_back(fs::absolute(ctx.opt.outputDir).lexically_normal().string());
  policy.hidden.push_back(ctx.child.workDir);
  // The suite's binary, its kernels and the kit's precompiled headers (LoadKit) stay readable.
  policy.readOnly = {fs::path(ctx.suite.binary).parent_path().string(), ctx.suite.kernels,
                     ctx.child.workDir + "/pch"};
  if (!ctx.child.deviceLock.empty())  // flock(2) needs no write access
    policy.readOnly.push_back(fs::path(ctx.child.deviceLock).parent_path().string());
  if (!ctx.kitDir.empty())
    policy.readOnly.push_back(ctx.kitDir);
  std::vector<std::string> argv = SandboxCommand({"/rsb-command"}, policy);
  argv.pop_back();  // the placeholder: Code::wrapper is the part before the command
  return argv;
}

// Progress of one hand-in item by item: only where hand-ins are graded one at a time (at any
// --jobs a line per hand-in says how it ended: its total).
bool ItemLines(const GradeOptions& opt) {
  return !opt.quiet && opt.jobs == 1;
}

// The hand-in's host code, built in its sandbox against the kit: one binary per task.
HostBuild BuildHandinHostCode(const GradeOptions& opt, HostBuildSettings host,
                              const HandinFiles& copy, const std::string& workDir,
                              const std::vector<std::string>& wrapper) {
  host.workDir = workDir;
  host.wrapper = wrapper;
  HostBuild b = BuildHostCode(host, copy);
  if (ItemLines(opt))
    for (const auto& [task, t] : b.tasks)
      std::cerr << fmt::format("  host code ({}): {}\n", task,
                               !t.ok                ? "does not build"
                               : t.compiled.empty() ? "the suite's sources"
                                                    : fmt::format("built in {:.1f} s", t.seconds));
  return b;
}

// An item's detail where its task's host code does not build: the compiler's first error, or,
// where the hand-in is not of this grader's task API, first the line that says so.
std::string HostBuildProblem(const TaskBuild& t) {
  return kHostCodeFails + (t.apiNote.empty() ? "" : t.apiNote + "\n") + Headline(t.log) +
         "\n(the compiler's log: the report's host code section, once for the task)";
}

HandinGrade GradeHandin(Context& ctx, Device& device, const HostBuildSettings& host,
                        const std::string& name, const std::string& path,
                        const std::string& workDir) {
  HandinGrade h;
  h.name = name;
  h.path = fs::absolute(path).lexically_normal().string();
  const HandinFiles copy = CopyHandin(h.path, workDir, ctx.suite.kernels);
  h.from = copy.from;
  const std::vector<std::string> wrapper = HandinWrapper(ctx, workDir);
  h.host = BuildHandinHostCode(ctx.opt, host, copy, workDir, wrapper);
  // Per item: the code that runs it (the hand-in's binary for its task where it brings host code
  // that builds) or why it cannot be graded.
  std::vector<std::pair<Code, std::string>> runs;
  std::map<std::string, Code> codes;
  std::map<std::string, std::vector<const Item*>> listed;  // per task: the items it can grade
  for (const auto& it : ctx.rubric.items) {
    const auto own = h.host.tasks.find(it.task);
    const bool built = own != h.host.tasks.end() && own->second.ok;
    const Code code{built && !own->second.binary.empty() ? own->second.binary : ctx.suite.binary,
                    copy.kernels, wrapper, workDir};
    std::string problem = MissingFiles(ctx.rubric, it, copy);
    if (problem.empty() && own != h.host.tasks.end() && !built)
      problem = HostBuildProblem(own->second);
    if (problem.empty() && !code.kernels.empty()) {
      codes.insert({it.task, code});
      listed[it.task].push_back(&it);
    }
    runs.push_back({code, problem});
  }
  const FastVerdicts fast = RunLists(ctx, device, codes, listed);
  for (size_t i = 0; i < ctx.rubric.items.size() && !Interrupted(); ++i) {
    const Item& it = ctx.rubric.items[i];
    ItemGrade g = GradeItem(ctx, device, it, runs[i].first, fast, runs[i].second);
    if (ItemLines(ctx.opt))
      std::cerr << fmt::format("  {:<28} {:<8} {}/{}\n", it.id, g.status, Points(g.points),
                               Points(it.points));
    h.total += g.points;
    h.max += it.points;
    h.items.push_back(std::move(g));
  }
  return h;
}

SummaryRow RowOf(const HandinGrade& h) {
  SummaryRow r;
  r.name = h.name;
  r.total = h.total;
  r.max = h.max;
  for (const auto& g : h.items) {
    r.points.push_back(g.points);
    r.maxPoints.push_back(g.item->points);
    r.statuses.push_back(g.status);
    r.messages.push_back(ItemMessage(g.detail, g.diagnosis ? *g.diagnosis : json()));
    r.ranAlone.push_back(!g.ranAlone.empty());
  }
  return r;
}

// The class as graded so far: where the hand-ins are, which of them this run grades, and the
// reports of those done (in the class's order, whatever order the --jobs threads end in).
struct ClassProgress {
  std::vector<std::string> names;  // every hand-in given, in the order given
  std::vector<size_t> mine;        // the indices this run grades (its shard)
  std::vector<std::optional<SummaryRow>> rows;
  std::vector<std::string> parts;  // --format: each hand-in's part of its file ("" not yet)
  size_t done = 0;
  std::mutex mu;
};

ClassManifest Manifest(const Context& ctx, const Device& device, const ClassProgress& cls,
                       bool complete) {
  ClassManifest m;
  m.suite = ThisBuild().version + " (git " + ThisBuild().gitRevision + ")";
  m.rubricPath = ctx.rubric.path;
  m.rubricName = ctx.rubric.name;
  m.rubricHash = FileHash(ctx.rubric.path);
  for (const auto& it : ctx.rubric.items)
    m.itemIds.push_back(it.id);
  m.seed = ctx.rubric.seed;
  m.device = device.Name();
  m.checkDevice = device.CheckName();
  m.shardIndex = ctx.opt.shardIndex;
  m.shardCount = ctx.opt.shardCount;
  m.classNames = cls.names;
  m.complete = complete;
  for (size_t i = 0; i < cls.rows.size(); ++i)
    if (cls.rows[i])
      m.graded.push_back(cls.names[i]);
  return m;
}

// What --format writes of a hand-in for the engine that runs the grader (GradeFormats).
void WriteEngineFiles(const Context& ctx, ClassProgress& cls, size_t index, const RunInfo& info,
                      const HandinGrade& h) {
  const GradeFormat* format = FindGradeFormat(ctx.opt.format);
  if (!format)
    return;
  const EngineWriters* writers = WritersOf(*format);
  if (!writers)
    throw std::logic_error(fmt::format("--format {}: no writers (Engines.cpp)", format->name));
  cls.parts[index] = writers->part(info, h);
  if (!format->file) {
    std::cout << cls.parts[index] << std::flush;
    return;
  }
  std::vector<std::string> parts;
  for (const auto& s : cls.parts)
    if (!s.empty())
      parts.push_back(s);
  WriteFile(fs::path(ctx.opt.outputDir) / format->file,
            writers->document ? writers->document(ctx.rubric.name, parts) : cls.parts[index]);
}

// A hand-in's reports, then the class's files as they stand (summary.csv and index.md of the
// hand-ins done, grading.json naming them): a run stopped at any point leaves a folder that
// says what it holds.
void WriteReports(const Context& ctx, const Device& device, ClassProgress& cls, size_t index,
                  const HandinGrade& h, double seconds) {
  const fs::path dir(ctx.opt.outputDir);
  std::lock_guard l(cls.mu);
  const RunInfo info{&ctx.rubric, device.Name(), device.CheckName(), ctx.opt.timeoutS};
  WriteFile(dir / (h.name + ".md"), ToMarkdown(info, h));
  WriteFile(dir / (h.name + ".json"),
            ToJson(info, h).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  WriteEngineFiles(ctx, cls, index, info, h);
  cls.rows[index] = RowOf(h);
  ++cls.done;
  std::vector<SummaryRow> rows;
  for (const auto& r : cls.rows)
    if (r)
      rows.push_back(*r);
  WriteClassFiles(dir, Manifest(ctx, device, cls, false), rows);
  if (ctx.opt.quiet)
    return;
  std::vector<std::string> lost;
  for (const auto& g : h.items)
    if (g.points < g.item->points)
      lost.push_back(g.item->id);
  std::cerr << fmt::format("[{}/{}] {}: {} / {} ({:.0f} s){}\n", cls.done, cls.mine.size(), h.name,
                           Points(h.total), Points(h.max), seconds,
                           lost.empty() ? "" : ", lost: " + Join(lost, ", "));
}

void GradeClass(Context& ctx, Device& device, ClassProgress& cls, const HostBuildSettings& host,
                const std::string& workDir) {
  ForEachOnJobs(cls.mine.size(), ctx.opt.jobs, [&](size_t k) {
    const size_t i = cls.mine[k];
    if (ItemLines(ctx.opt))
      std::cerr << fmt::format("[{}/{}] {}\n", k + 1, cls.mine.size(), cls.names[i]);
    const auto start = std::chrono::steady_clock::now();
    const std::string dir = fmt::format("{}/handin-{}", workDir, i);
    fs::create_directories(dir);
    HandinGrade h = GradeHandin(ctx, device, host, cls.names[i], ctx.opt.handins[i], dir);
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (Interrupted())
      return;
    WriteReports(ctx, device, cls, i, h,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  });
}

// Every hand-in given by its report name, and those of this run's shard.
void ListClass(const GradeOptions& opt, ClassProgress& cls) {
  cls.names = HandinNames(opt.handins);
  cls.rows.resize(cls.names.size());
  cls.parts.resize(cls.names.size());
  for (size_t i = 0; i < cls.names.size(); ++i)
    if (ShardOf(cls.names[i], opt.shardCount) + 1 == opt.shardIndex)
      cls.mine.push_back(i);
}

// --check-platform and --check-device name a device, or a usage error in their words. Where
// either is given, the other defaults to "" (the platform's first device) and --platform.
void CheckCheckDevice(GradeOptions& o) {
  if (!o.checkPlatform && !o.checkDevice) {
    o.checkPlatform = o.platform;
    o.checkDevice = o.device;
    return;
  }
  if (!o.checkPlatform)
    o.checkPlatform = o.platform;
  if (!o.checkDevice)
    o.checkDevice = "";
  try {
    SelectDevice(*o.checkPlatform, *o.checkDevice);
  } catch (const UsageError& e) {
    std::string m = e.what();
    for (const auto& [from, to] :
         {std::pair<std::string, std::string>{"--platform '", "--check-platform '"},
          {"--device '", "--check-device '"}})
      if (const size_t at = m.find(from); at != std::string::npos)
        m.replace(at, from.size(), to);
    const bool rusticl = Lower(*o.checkPlatform).find("rusticl") != std::string::npos;
    if (rusticl && m.find("lists no device") != std::string::npos && !std::getenv("RUSTICL_ENABLE"))
      m += " (rusticl lists a CPU device only with RUSTICL_ENABLE=llvmpipe in the environment)";
    throw UsageError(m);
  }
}

// The device (checked once here, so that a wrong --platform is one usage error instead of an
// error in every item), --jobs' default and the suite's own code. True on a CPU device.
bool SetUpDevice(Context& ctx, const char* argv0) {
  const bool cpuDevice =
      SelectDevice(ctx.opt.platform, ctx.opt.device).getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_CPU;
  CheckCheckDevice(ctx.opt);
  // --jobs' default: the cores on a CPU device (on a GPU: SetUpChildren, which knows how child
  // runs start).
  if (ctx.opt.jobs == 0 && cpuDevice)
    ctx.opt.jobs = DefaultJobs(true, false, false, std::thread::hardware_concurrency());
  std::error_code ec;
  ctx.suite.binary = fs::canonical("/proc/self/exe", ec).string();
  if (ec)
    throw DeviceError("cannot find the running executable (/proc/self/exe)");
  ctx.suite.kernels = FindKernelDir("", argv0);
  return cpuDevice;
}

// How child runs start: the reference's own kernel cache, under --speed-alone loop the device
// lock that the children share, under --resident-runs the residents, and --trace's file.
// What the children use that lives as long as the grading run: the residents, the trace.
struct ChildServices {
  std::unique_ptr<Residents> residents;
  std::unique_ptr<RunTrace> trace;
};

ChildServices SetUpChildren(Context& ctx, DeviceTurns& turns, const std::string& work,
                            bool cpuDevice) {
  const bool loop = ctx.opt.speedAlone == "loop" || (ctx.opt.speedAlone == "auto" && !cpuDevice);
  const std::string refCache =
      ctx.opt.kernelCache.empty() ? work + "/reference-kernel-cache" : ctx.opt.kernelCache;
  fs::create_directories(refCache);
  ctx.suite.wrapper = KernelCacheEnvironment(refCache);
  ctx.child = {ctx.opt.platform,
               ctx.opt.device,
               ctx.rubric.seed,
               work,
               "",
               nullptr,
               "",
               nullptr,
               ctx.opt.checkPlatform.value_or(ctx.opt.platform),
               ctx.opt.checkDevice.value_or(ctx.opt.device),
               "",  // the timer's verdict: CheckSpeedTimer's
               ctx.opt.speedSeconds};
  if (loop && cpuDevice && !ctx.opt.quiet)
    std::cerr << "note: --speed-alone loop on a CPU device: the other children's builds and runs "
                 "load the CPU that is timed, and the suite's own rounds are timed once; speed "
                 "floors may be missed by load alone\n";
  if (loop) {  // children share the device; a timed loop has it alone (DeviceLock.h)
    fs::create_directories(work + "/device-lock");
    ctx.child.deviceLock = work + "/device-lock/lock";
    const DeviceLock create(ctx.child.deviceLock);  // both files, before any sandboxed child
  }
  ChildServices services;
  if (!ctx.opt.trace.empty()) {
    services.trace = std::make_unique<RunTrace>(ctx.opt.trace);
    ctx.child.trace = services.trace.get();
  }
  const std::string& r = ctx.opt.residentRuns;
  const bool resident = r == "on" || (r == "auto" && loop);
  if (ctx.opt.jobs == 0)  // a GPU's default
    ctx.opt.jobs = DefaultJobs(false, resident, ctx.opt.sandbox == "none",
                               std::thread::hardware_concurrency());
  // A timed run on a CPU device stops the other children instead of waiting for them to end;
  // residents (long-lived, serving any hand-in) are not stopped, so with them it waits.
  turns.PauseOthers(cpuDevice && !loop && !resident);
  if (!resident)
    return services;
  fs::create_directories(work + "/residents");
  std::vector<std::string> command = ctx.suite.wrapper;
  command.insert(command.end(), {ctx.suite.binary, "serve"});
  services.residents = std::make_unique<Residents>(command, work + "/residents");
  ctx.child.residents = services.residents.get();
  ctx.child.residentBinary = ctx.suite.binary;
  return services;
}

// The suite's own code on every item, before the first hand-in of this shard.
void MeasureClassReferences(Context& ctx, Device& device, const ClassProgress& cls) {
  if (!ctx.opt.quiet) {
    if (ctx.opt.shardCount > 1)
      std::cerr << fmt::format("shard {}/{}: {} of the class's {} hand-ins\n", ctx.opt.shardIndex,
                               ctx.opt.shardCount, cls.mine.size(), cls.names.size());
    std::cerr << "the suite's own code on every item (the time limits' reference)\n";
  }
  if (!cls.mine.empty()) {
    CheckSpeedTimer(ctx, device);
    MeasureReferences(ctx, device);
  }
  if (!Interrupted() && !ctx.opt.quiet && ctx.opt.jobs > 1)
    std::cerr << fmt::format("grading {} hand-in(s), {} at a time\n", cls.mine.size(),
                             std::min(ctx.opt.jobs, cls.mine.size()));
}

// The class's files once every hand-in of the shard is graded; the exit status.
int FinishClass(const Context& ctx, const Device& device, const ClassProgress& cls) {
  if (Interrupted()) {
    std::cerr << "interrupted: the reports of the hand-ins graded so far are written\n";
    return kExitInterrupted;
  }
  std::vector<SummaryRow> rows;
  for (const size_t i : cls.mine)
    rows.push_back(*cls.rows[i]);
  WriteClassFiles(ctx.opt.outputDir, Manifest(ctx, device, cls, true), rows);
  if (!ctx.opt.quiet && !rows.empty()) {
    double max = 0;
    for (const auto& r : rows)
      max = std::max(max, r.max);
    std::cerr << fmt::format("class: {} hand-in(s), mean {:.1f} / {}, median {:g} / {}\n",
                             rows.size(), MeanTotal(rows), Points(max), MedianTotal(rows),
                             Points(max));
  }
  if (!ctx.opt.quiet)
    std::cerr << fmt::format("reports in {} (the class at a glance: index.html)\n",
                             ctx.opt.outputDir);
  // An engine that passes a test whose command exits 0 (GitHub Classroom): every point, or 1.
  const GradeFormat* format = FindGradeFormat(ctx.opt.format);
  if (format && format->exitsOneUnlessFull &&
      std::any_of(rows.begin(), rows.end(), [](const SummaryRow& r) { return r.total < r.max; }))
    return kExitValidationFailed;
  return kExitOk;
}

int GradeAll(int argc, char** argv) {
  bool help = false;
  Context ctx;
  Device device(ctx.child);  // its turns and names, apart from the run's state
  ctx.opt = ParseGradeOptions(argc, argv, help);
  if (help)
    return kExitOk;
  ctx.rubric = LoadRubric(ctx.opt.rubric);
  SelectItems(ctx.rubric, ctx.opt.items);
  ClassProgress cls;
  ListClass(ctx.opt, cls);
  const bool cpuDevice = SetUpDevice(ctx, argv[0]);
  MakeOutputDir(ctx.opt.outputDir);
  // Before the temporary folder exists: an interrupt from here on ends the run through its
  // destructor, not with the folder left behind (the kit's link and headers take seconds).
  InstallInterruptHandler();
  const TempFolder work("rsb-grade");
  const ChildrenTmpdir childrenTmpdir(work.Path());
  const ChildServices children = SetUpChildren(ctx, device.Turns(), work.Path(), cpuDevice);
  Kit kit;
  const HostBuildSettings host = HostBuildFor(ctx, work.Path(), kit);
  ctx.kitDir = kit.dir;
  CheckOclgrindGates(ctx.rubric);
  ctx.diagnosisOff = DiagnosisOff();
  MeasureClassReferences(ctx, device, cls);
  GradeClass(ctx, device, cls, host, work.Path());
  if (children.trace)
    children.trace->Finish();
  return FinishClass(ctx, device, cls);
}

}  // namespace
}  // namespace grade

size_t DefaultJobs(bool cpuDevice, bool residents, bool sandboxNone, size_t cores) {
  const size_t cap = cpuDevice                  ? cores
                     : residents && sandboxNone ? grade::kGpuResidentJobs
                                                : grade::kGpuJobs;
  return std::max<size_t>(1, std::min(cores, cap));
}

std::vector<std::pair<const char*, const char*>> GradeHelp() {
  return {{"grade HANDIN...", "score course hand-ins against a rubric (grading/rubric.json)"},
          {"grade merge DIR...", "join the outputs of `grade --shard K/N` into one"},
          {"grade autograding", "GitHub Classroom's autograding.json of a rubric, on stdout"}};
}

int Grade(int argc, char** argv) {
  // grade's own subcommands (Class.h, Engines.h), each with its own --help.
  static const std::pair<const char*, int (*)(int, char**)> subcommands[] = {
      {"merge", grade::GradeMerge}, {"autograding", grade::GradeAutograding}};
  for (const auto& [name, run] : subcommands)
    if (argc > 1 && std::string(argv[1]) == name)
      return run(argc - 1, argv + 1);
  return ExitStatusOf([&]() -> int {
    try {
      return grade::GradeAll(argc, argv);
    } catch (const DeviceError&) {  // a child killed by the interrupt (the kit's link): no fault
      if (!Interrupted())
        throw;
      std::cerr << "interrupted: the reports of the hand-ins graded so far are written\n";
      return kExitInterrupted;
    }
  });
}

}  // namespace rsb
