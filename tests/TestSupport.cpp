#include "TestSupport.h"

#include "engine/PlannedTask.h"
#include "engine/Worker.h"
#include "platform/BuildInfo.h"
#include "platform/Errors.h"
#include "platform/Subprocess.h"
#include "report/ReportUtil.h"
#include "run/Jobs.h"
#include "tasks/Tasks.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace fs = std::filesystem;

namespace rsb::test {

namespace {
std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}
}  // namespace

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string FixturePath(const std::string& name) {
  return std::string(RSB_SOURCE_DIR) + "/tests/fixtures/" + name;
}

size_t CountOf(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++count;
  return count;
}

size_t LinesWith(const std::string& text, const std::vector<std::string>& parts) {
  std::istringstream in(text);
  size_t count = 0;
  for (std::string line; std::getline(in, line);)
    count += std::all_of(parts.begin(), parts.end(),
                         [&](const std::string& p) { return line.find(p) != std::string::npos; });
  return count;
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name))
    old_ = old;
  ::setenv(name, value, 1);
}

ScopedEnv::~ScopedEnv() {
  if (old_)
    ::setenv(name_.c_str(), old_->c_str(), 1);
  else
    ::unsetenv(name_.c_str());
}

TestDevice& Device() {
  static TestDevice* d = [] {
    auto* t = new TestDevice;
    t->ctx = std::make_unique<TaskContext>(
        SelectDevice(Env("RSB_TEST_PLATFORM"), Env("RSB_TEST_DEVICE")), RSB_SOURCE_KERNEL_DIR);
    t->info = t->ctx->info;
    return t;
  }();
  return *d;
}

DeviceInfo FabricatedDevice(bool gpu, unsigned long long localMemBytes, size_t maxWorkGroupSize,
                            unsigned localMemScale, unsigned long long localMemOverhead) {
  DeviceInfo d;
  d.name = "fabricated";
  d.type = gpu ? "GPU" : "CPU";
  d.isGpu = gpu;
  d.computeUnits = 132;
  d.globalMemBytes = d.maxAllocBytes = 80ull << 30;
  d.localMemBytes = localMemBytes;
  d.localMemScale = localMemScale;
  d.localMemOverhead = localMemOverhead;
  d.maxWorkGroupSize = maxWorkGroupSize;
  d.fp64 = d.int64BaseAtomics = d.int64ExtendedAtomics = true;
  return d;
}

std::string AutoChoiceProblems(const IComputeTask& task, const ProblemSpec& spec,
                               const DeviceInfo& device) {
  const auto& planned = dynamic_cast<const PlannedTask&>(task);
  std::string problems;
  for (const auto& variant : task.Variants()) {
    ProblemSpec s = spec;
    s.localSize = task.LocalSize(variant, spec, device);
    const LocalTile tile = planned.Tile(device, variant, s);
    const std::string label = fmt::format("{}/{} {} L={} {}={}: ", task.Name(), variant,
                                          ToString(s.type), s.localSize, tile.knob, tile.value);
    if (!IsPowerOfTwo(s.localSize) || s.localSize > device.maxWorkGroupSize)
      problems += label + "not a power of two up to the device's maximum work-group size\n";
    if (LocalMemNeeded(device, tile.bytes) > device.localMemBytes)
      problems += label + fmt::format("{} bytes of local memory\n", tile.bytes);
    try {
      task.PlanFor(device, variant, s);
    } catch (const VariantSkipped& e) {
      problems += label + e.what() + "\n";
    }
  }
  return problems;
}

unsigned long long KernelLocalMemBytes(const IComputeTask& task, const std::string& variant,
                                       const ProblemSpec& spec) {
  const auto& planned = dynamic_cast<const PlannedTask&>(task);
  TaskContext& ctx = *Device().ctx;
  const LaunchPlan plan = planned.PlanFor(ctx.info, variant, spec);
  cl::Program& program = ctx.programs.Get(plan.file, plan.BuildOptions());
  unsigned long long most = 0;
  for (const LaunchStep& step : plan.steps)
    if (!step.kernel.empty())
      most = std::max<unsigned long long>(
          most, cl::Kernel(program, step.kernel.c_str())
                    .getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(ctx.device));
  return most;
}

ProblemSpec Problem(ElementType type, Op op, std::optional<ScanKind> kind, size_t n,
                    size_t localSize, uint64_t seed) {
  ProblemSpec spec;
  spec.type = type;
  spec.op = op;
  if (kind)
    CScanTask::SetKind(spec, *kind);
  spec.n = n;
  spec.localSize = localSize;
  spec.seed = seed;
  return spec;
}

std::string Lacks(Need need) {
  const DeviceInfo& d = Device().info;
  switch (need) {
    case Need::Fp64:
      return d.fp64 ? "" : d.name + " has no double precision (cl_khr_fp64)";
    case Need::Int64Atomics:
      return d.int64BaseAtomics ? ""
                                : d.name + " has no 64-bit atomics (cl_khr_int64_base_atomics)";
    case Need::EndlessLoops:
      // Measured (rusticl 22.3): an endless loop of volatile increments returned after exactly
      // 65535 of them, nested loops too (Mesa's LP_MAX_TGSI_LOOP_ITERATIONS).
      return d.name.rfind("llvmpipe", 0) != 0
                 ? ""
                 : d.name + " ends a kernel's loops after 65535 iterations: no kernel hangs there";
    case Need::UsableTimer: {
      // Mirrors the runner's check: a resolution of 0 is what rusticl 22.3 reports for its
      // timer, whose timestamps count 0, 1, 2, 3 ns whatever the kernel takes.
      const auto resolution = Device().ctx->device.getInfo<CL_DEVICE_PROFILING_TIMER_RESOLUTION>();
      return resolution ? ""
                        : d.name +
                              " has no usable profiling timer "
                              "(CL_DEVICE_PROFILING_TIMER_RESOLUTION is 0): cases are untimed";
    }
  }
  return "";
}

std::string LacksLocalMemory(size_t bytes) {
  const DeviceInfo& d = Device().info;
  if (bytes <= d.localMemBytes)
    return "";
  return fmt::format("{} has {} KiB of local memory; this test needs {} KiB", d.name,
                     d.localMemBytes >> 10, (bytes + 1023) >> 10);
}

std::string CannotRun(const IComputeTask& task, const std::string& variant,
                      const ProblemSpec& spec) {
  const DeviceInfo& d = Device().info;
  if (spec.type == ElementType::Double && !d.fp64)
    return Lacks(Need::Fp64);
  ProblemSpec s = spec;
  if (!s.localSize)
    s.localSize = task.LocalSize(variant, s, d);
  try {
    task.PlanFor(d, variant, s);
    // The compiled kernels' limits: work-group size and local memory (built once, as a run
    // would build them).
    if (const auto* planned = dynamic_cast<const PlannedTask*>(&task)) {
      const LaunchPlan plan = planned->PlanFor(d, variant, s);
      TaskContext& ctx = *Device().ctx;
      for (const LaunchStep& step : plan.steps)
        if (!step.kernel.empty())
          ctx.kernels.Get(ctx.programs, plan.file, plan.BuildOptions(), step.kernel,
                          step.localSize);
    }
  } catch (const VariantSkipped& e) {
    return fmt::format("{} on {}: {}", variant, d.name, e.what());
  }
  return "";
}

std::string CannotRun(const std::string& task, const std::string& variant, ElementType type,
                      size_t n) {
  for (const auto& t : MakeTasks())
    if (t->Name() == task) {
      return CannotRun(*t, variant, Problem(type, t->Ops().front(), std::nullopt, n, 0, 1));
    }
  ADD_FAILURE() << "no task " << task;
  return "";
}

std::vector<std::string> Runnable(const IComputeTask& task,
                                  const std::vector<std::string>& variants,
                                  const ProblemSpec& spec) {
  std::vector<std::string> runnable;
  for (const auto& v : variants)
    if (CannotRun(task, v, spec).empty())
      runnable.push_back(v);
  return runnable;
}

DeviceInfo PlanningDevice() {
  DeviceInfo d = Device().info;
  d.int64BaseAtomics = true;
  return d;
}

bool Ok(const std::string& status) {
  return status == "passed" || status == "untimed";
}

bool Ok(Status status) {
  return Ok(ToString(status));
}

std::vector<Result> Validate(IComputeTask& task, const ProblemSpec& spec,
                             const std::vector<std::string>& variants, size_t validateRuns) {
  RunSettings s;
  s.timed = false;
  s.validateRuns = validateRuns;
  Runner runner(*Device().ctx, s);
  return runner.Run({Job{&task, spec, variants}});
}

std::vector<Result> ValidateWithKernels(IComputeTask& task, const ProblemSpec& spec,
                                        const std::vector<std::string>& variants,
                                        const std::string& kernelDir) {
  TaskContext ctx(Device().ctx->device, kernelDir);
  RunSettings s;
  s.timed = false;
  Runner runner(ctx, s);
  return runner.Run({Job{&task, spec, variants}});
}

std::string Failures(const std::vector<Result>& results, bool allowSkip) {
  std::string out;
  for (const auto& r : results) {
    if (r.status == Status::Passed || (allowSkip && r.status == Status::Skipped))
      continue;
    out += fmt::format("{} {} local={} path={}: {}\n", ToString(r.status), CaseLabel(r),
                       r.localSize, r.codePath, r.message);
  }
  return out;
}

// The environment before any OpenCL call of this test process (Worker.h says why).
// The suite's runs take each variant's defaults, whatever tuning profiles this machine has (the
// profile tests clear RSB_NO_PROFILE for their own runs).
const bool kEnvironmentSaved = (setenv("RSB_NO_PROFILE", "1", 0), SaveEnvironment(), true);

std::vector<std::string> DeviceSelectorArgs() {
  std::vector<std::string> args;
  for (const auto& [option, variable] :
       {std::pair{"--platform", "RSB_TEST_PLATFORM"}, std::pair{"--device", "RSB_TEST_DEVICE"}})
    if (!Env(variable).empty())
      args.insert(args.end(), {option, Env(variable)});
  return args;
}

std::string DeviceSelectors() {
  std::string selectors;
  const std::vector<std::string> args = DeviceSelectorArgs();
  for (size_t i = 0; i + 1 < args.size(); i += 2)
    selectors += " " + args[i] + " '" + args[i + 1] + "'";
  return selectors;
}

CommandResult RunBench(const std::string& args) {
  RestoreStartupEnvironment();
  return RunCommand(fmt::format("'{}' {}{}", RSB_BINARY, args, DeviceSelectors()));
}

CommandResult RunBenchWithFullCeilings(const std::string& args) {
  return RunCommand(fmt::format("{}'{}' {}{}", kFullCeilings, RSB_BINARY, args, DeviceSelectors()));
}

CommandResult RunCommand(const std::string& command) {
  RestoreStartupEnvironment();
  static int counter = 0;
  const fs::path dir = fs::temp_directory_path() /
                       fmt::format("rsb-cmd-{}-{}", static_cast<long>(::getpid()), counter++);
  fs::create_directories(dir);
  const std::string cmd = fmt::format("{} >'{}' 2>'{}' </dev/null", command, (dir / "out").string(),
                                      (dir / "err").string());
  const int raw = std::system(cmd.c_str());
  CommandResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = ReadFile((dir / "out").string());
  r.err = ReadFile((dir / "err").string());
  fs::remove_all(dir);
  return r;
}

std::string InterruptDuringLink(const std::string& dir, const std::string& command) {
  std::string ld = RunCommand("command -v ld").out;
  ld = ld.substr(0, ld.find('\n'));
  if (ld.empty() || RunCommand("command -v python3").status != 0)
    return "no-ld";
  const fs::path bin = fs::path(dir) / "slow-ld", marker = bin / "linking";
  fs::create_directories(bin);
  std::ofstream(bin / "ld") << fmt::format(
      "#!/usr/bin/env python3\nimport os, sys, time\nopen('{}', 'w').close()\ntime.sleep(1)\n"
      "os.execv('{}', ['{}'] + sys.argv[1:])\n",
      marker.string(), ld, ld);
  fs::permissions(bin / "ld", fs::perms::owner_all);
  std::ofstream(bin / "job.sh") << fmt::format(
      "set -m\nPATH='{0}':$PATH {1} >/dev/null & pid=$!\n"
      "i=0; while [ ! -e '{2}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n"
      "[ -e '{2}' ] || echo no-link\nkill -INT -$pid; wait $pid; echo $?\n",
      bin.string(), command, marker.string());
  const std::string out = RunCommand("bash '" + (bin / "job.sh").string() + "'").out;
  return out.find("no-link") != std::string::npos ? "no-link" : out.substr(0, out.find('\n'));
}

namespace {
// The copies CopyKernels made, removed when the test process ends (a test that skips or fails an
// ASSERT before its own clean-up leaves none in /tmp); only by the process that made them.
struct KernelCopies {
  pid_t owner = ::getpid();
  std::vector<fs::path> dirs;
  ~KernelCopies() {
    if (::getpid() != owner)
      return;
    std::error_code ec;
    for (const auto& d : dirs)
      fs::remove_all(d, ec);
  }
};
KernelCopies& Copies() {
  static KernelCopies copies;
  return copies;
}
}  // namespace

std::string CopyKernels(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() /
                       fmt::format("rsb-kernels-{}-{}", name, static_cast<long>(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  Copies().dirs.push_back(dir);
  for (const auto& e : fs::directory_iterator(RSB_SOURCE_KERNEL_DIR))
    fs::copy_file(e.path(), dir / e.path().filename());
  return dir.string();
}

void Patch(const std::string& path, const std::string& from, const std::string& to) {
  std::string text = ReadFile(path);
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << "'" << from << "' not found in " << path;
  text.replace(at, from.size(), to);
  std::ofstream(path) << text;
}

std::string KernelCopy(const std::string& path, const std::string& name,
                       const std::string& newName) {
  const std::string text = ReadFile(path);
  const size_t start = text.find("__kernel void " + name + "(");
  size_t at = start == std::string::npos ? start : text.find('{', start);
  if (at == std::string::npos) {
    ADD_FAILURE() << "no kernel " << name << " in " << path;
    return "";
  }
  for (int depth = 0; at < text.size(); ++at) {
    depth += text[at] == '{' ? 1 : text[at] == '}' ? -1 : 0;
    if (depth == 0)
      break;
  }
  std::string copy = text.substr(start, at + 1 - start);
  copy.replace(copy.find(name), name.size(), newName);
  return copy + "\n";
}

void PrintTo(const VariantTypeParam& p, std::ostream* os) {
  *os << p.variant << "/" << ToString(p.type);
}

std::vector<VariantTypeParam> VariantTypeParams(const std::vector<std::string>& variants) {
  std::vector<VariantTypeParam> params;
  for (const auto& v : variants)
    for (ElementType t : AllElementTypes())
      params.push_back({v, t});
  return params;
}

std::string VariantTypeName(const testing::TestParamInfo<VariantTypeParam>& info) {
  std::string s = info.param.variant + "_" + ToString(info.param.type);
  for (char& c : s)
    if (!isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return s;
}

MatrixOutcome RunCheckMatrix(const std::string& task, const std::string& variant, ElementType type,
                             const std::string& localSizes) {
  const Tasks tasks = MakeTasks();
  std::vector<const char*> args = {"reduce-scan-bench", "--check",   "--task",
                                   task.c_str(),        "--variant", variant.c_str()};
  if (!localSizes.empty())
    args.insert(args.end(), {"--local-size", localSizes.c_str()});
  const Options o = ParseCommandLine(int(args.size()), args.data(), CatalogOf(tasks));
  std::vector<Job> jobs;
  for (const Job& job : DeviceJobs(o, tasks, MakeJobs(o, tasks), Device().info, std::nullopt))
    if (job.spec.type == type)
      jobs.push_back(job);
  RunSettings s;
  s.timed = false;
  Runner runner(*Device().ctx, s);
  const std::vector<Result> results = runner.Run(jobs);
  MatrixOutcome out;
  for (const Result& r : results) {
    if (r.status == Status::Skipped)
      out.skips.insert(r.message);
    out.passed += r.status == Status::Passed;
  }
  out.failures = Failures(results, /*allowSkip=*/true);
  return out;
}

void ExpectCheckMatrixPasses(const std::string& task, const std::string& variant,
                             ElementType type) {
  std::vector<std::string> localSizes = {""};
  if (type == ElementType::Uint)
    localSizes.push_back("256");
  std::set<std::string> skips;
  for (const std::string& local : localSizes) {
    const MatrixOutcome m = RunCheckMatrix(task, variant, type, local);
    EXPECT_EQ(m.failures, "") << "local sizes: " << (local.empty() ? "the matrix's" : local);
    EXPECT_GT(m.passed + m.skips.size(), 0u) << "the matrix ran no case";
    skips.insert(m.skips.begin(), m.skips.end());
  }
  std::string why;
  for (const auto& w : skips)
    why += (why.empty() ? "" : "; ") + w;
  if (!why.empty())
    GTEST_SKIP() << why;
}

std::string WriteEditedResultFile(const std::string& path,
                                  const std::function<void(nlohmann::json&)>& edit,
                                  const std::string& raw) {
  nlohmann::json j;
  std::ifstream(std::string(RSB_SOURCE_DIR) + "/tests/fixtures/base.json") >> j;
  edit(j["results"]);
  std::string text = j.dump(2);
  const std::string sentinel = "987654.321";
  if (!raw.empty() && text.find(sentinel) != std::string::npos)
    text.replace(text.find(sentinel), sentinel.size(), raw);
  std::ofstream(path) << text;
  return path;
}

namespace {

// text with this build's suite fields as placeholders (ExpectGolden).
std::string WithoutBuild(const std::string& name, std::string text) {
  const BuildInfo& b = ThisBuild();
  if (name.size() > 5 && name.substr(name.size() - 5) == ".json") {
    nlohmann::json j = nlohmann::json::parse(text);
    if (j.contains("suite"))
      j["suite"] = "SUITE";
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  const std::string fields = CsvQuote(b.version) + "," + CsvQuote(b.gitRevision) + "," +
                             CsvQuote(b.buildType + "; " + b.compiler + "; " + b.cxxFlags);
  for (size_t at = text.find(fields); at != std::string::npos; at = text.find(fields, at))
    text.replace(at, fields.size(), "VERSION,REVISION,BUILD");
  return text;
}

}  // namespace

std::string GoldenExtension(const std::string& format) {
  return format == "table" ? "txt" : format == "markdown" ? "md" : format;
}

void ExpectGolden(const std::string& name, std::string text) {
  text = WithoutBuild(name, text);
  const std::string path = std::string(RSB_SOURCE_DIR) + "/tests/fixtures/printer/" + name;
  if (!Env("RSB_WRITE_GOLDEN").empty()) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << ": missing (RSB_WRITE_GOLDEN=1 writes it)";
  std::ostringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(text, golden.str()) << name << " differs from " << path;
}

// RFC 4180 rows: fields split at commas outside quotes, "" a quote.
std::vector<std::vector<std::string>> CsvRows(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted && c == '"' && i + 1 < text.size() && text[i + 1] == '"')
      rows.back().back() += text[++i];
    else if (c == '"')
      quoted = !quoted;
    else if (!quoted && c == ',')
      rows.back().emplace_back();
    else if (!quoted && c == '\n')
      rows.emplace_back(1);
    else
      rows.back().back() += c;
  }
  if (rows.back().size() == 1 && rows.back()[0].empty())
    rows.pop_back();
  return rows;
}

}  // namespace rsb::test
