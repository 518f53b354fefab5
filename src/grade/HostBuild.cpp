#include "grade/HostBuild.h"

#include "engine/TaskApi.h"
#include "grade/Text.h"
#include "platform/BuildInfo.h"
#include "platform/Errors.h"
#include "platform/Subprocess.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

namespace rsb::grade {

namespace {

using Clock = std::chrono::steady_clock;

// The suite's one source beside the task sources that includes their headers.
const std::string kTasksCpp = "src/tasks/Tasks.cpp";

// The object a source compiles to: "CScanTask" for src/tasks/CScanTask.cpp.
std::string ObjectOf(const std::string& source) {
  return fs::path(source).stem().string();
}

// The objects of the task sources, in the registry's order ("CReductionTask", "CScanTask", ...).
std::vector<std::string> TaskObjectNames() {
  std::vector<std::string> names;
  for (const auto& task : TaskNames())
    names.push_back(ObjectOf(TaskSources(task).back()));
  return names;
}

const char* const kFixKit =
    "the kit is built next to the binary (`cmake --build build --target handin-kit`; an "
    "installed tree: `cmake --install build`), or pass --handin-kit DIR";

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Compiler output worth reading: the lines from the first error on, temp paths shortened.
std::string BuildErrors(const std::string& output, const std::string& tree) {
  const std::string text = ShortenPaths(output, tree);
  std::istringstream in(text);
  std::string line, out;
  size_t lines = 0;
  bool seen = false;
  while (std::getline(in, line) && lines < 25) {
    if (!seen && line.find("error") == std::string::npos)
      continue;
    seen = true;
    out += line + "\n";
    ++lines;
  }
  return out.empty() ? Excerpt(text) : out;
}

// One compiler run.
struct Job {
  std::string task, what;  // what: "compiling src/tasks/CScanTask.cpp", "linking"
  std::vector<std::string> argv;
  std::string cwd;
  ProcessResult result;
  std::string key{}, object{};  // a compile's: what it is made of (CompileKey), its object
  bool reused = false;          // the object of an identical compile (ObjectCache), not run
};

// Runs the jobs on up to as many threads as there are cores, each under what is left of the
// deadline.
void RunJobs(std::vector<Job*>& jobs, Clock::time_point deadline) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
      jobs[i]->result = RunProcess(jobs[i]->argv, std::max(1.0, left), jobs[i]->cwd);
    }
  };
  const size_t n = std::min<size_t>(jobs.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t)
    threads.emplace_back(worker);
  worker();
  for (auto& t : threads)
    t.join();
}

// "" when the job succeeded, else what went wrong (the compiler's first errors).
std::string JobError(const Job& j, double timeoutS) {
  const ProcessResult& p = j.result;
  if (p.exitCode == 0)
    return "";
  if (p.timedOut)
    return fmt::format("{} did not finish within --build-timeout {:g} s", j.what, timeoutS);
  if (p.interrupted)
    return j.what + " was interrupted";
  if (!p.started)
    return fmt::format("{}: cannot run {}: {}", j.what, j.argv[0], p.startError);
  // A compiler's errors from the first on; a linker's (short, its first line says most) whole.
  const std::string output = p.out + "\n" + p.err;
  return fmt::format("{} failed:\n{}", j.what,
                     j.what.rfind("compiling", 0) == 0 ? BuildErrors(output, j.cwd)
                                                       : Excerpt(ShortenPaths(output, j.cwd)));
}

// A compiler's or linker's first message: its first line that says an error (or an undefined
// reference), with the source line and caret the compiler shows under it; else the first lines.
std::string FirstMessage(const std::string& output, const std::string& tree) {
  const std::string text = ShortenPaths(output, tree);
  std::istringstream in(text);
  std::string line, out;
  size_t lines = 0;
  while (std::getline(in, line) && lines < 6) {
    const bool message = line.find("error:") != std::string::npos ||
                         line.find("undefined reference") != std::string::npos;
    if (lines == 0 && !message)
      continue;
    if (lines > 0 && line.find_first_not_of(" \t") == 0)  // the next message
      break;
    out += line + "\n";
    ++lines;
  }
  return out.empty() ? Excerpt(text, 3) : out;
}

// Where the hand-in is not of this grader's task API, the line that names both and what to do
// (its task sources may use names this kit's headers no longer have); "" where it is.
std::string ApiNote(const HandoutOf& h) {
  if (h.taskApi == kTaskApiVersion)
    return "";
  const std::string grader = fmt::format("this grader (reduce-scan-bench {}) builds task API {}",
                                         ThisBuild().version, kTaskApiVersion);
  const char* const alone = "or its kernels alone (without src/tasks/) where the rubric allows";
  if (h.taskApi) {
    const std::string suite =
        h.suiteVersion.empty() ? "" : "reduce-scan-bench " + h.suiteVersion + ", ";
    return fmt::format(
        "the hand-in's hand-out is {}task API {} (its HANDIN.txt); {}: grade it with {}, {}", suite,
        *h.taskApi, grader,
        suite.empty() ? fmt::format("a release of task API {}", *h.taskApi)
                      : suite.substr(0, suite.size() - 2),
        alone);
  }
  const bool revision = !h.gitRevision.empty() && h.gitRevision.rfind("unknown", 0) != 0;
  return fmt::format(
      "the hand-in names no task API ({}: a hand-out older than task API 1?); {}: grade it with "
      "the release of its hand-out, {}",
      !h.manifest ? "it has no HANDIN.txt"
      : revision  ? "its HANDIN.txt, of git revision " + h.gitRevision + ", has none"
                  : "its HANDIN.txt has none",
      grader, alone);
}

// What a job that failed leaves in its task's log: JobError's text, or, where the hand-in is not
// of this grader's task API (note) and the compiler or linker refused its code, the note and the
// first message only (the rest follows from the mismatch: not a wall of errors).
void FailureLog(const Job& j, double timeoutS, const std::string& note, TaskBuild& t) {
  t.log = JobError(j, timeoutS);
  const ProcessResult& p = j.result;
  if (note.empty() || !p.started || p.timedOut || p.interrupted)
    return;
  t.apiNote = note;
  t.log = note + "\n" + FirstMessage(p.out + "\n" + p.err, j.cwd);
}

std::string KitPath(const fs::path& kit, const std::string& p) {
  return p.empty() || p[0] == '/' || p[0] == '-' ? p : (kit / p).string();
}

// kit.txt: "key value" lines; paths relative to the kit made absolute.
Kit ParseKitFile(const fs::path& dir) {
  Kit kit;
  kit.dir = dir.string();
  std::ifstream in(dir / "kit.txt");
  if (!in)
    throw DeviceError(
        fmt::format("the hand-in kit '{}' has no kit.txt; {}", dir.string(), kFixKit));
  for (std::string line; std::getline(in, line);) {
    const size_t sp = line.find(' ');
    if (line.empty() || line[0] == '#' || sp == std::string::npos || sp + 1 == line.size())
      continue;
    const std::string key = line.substr(0, sp), value = line.substr(sp + 1);
    if (key == "compiler")
      kit.compiler = value;
    else if (key == "compile-flag")
      kit.flags.push_back(value);
    else if (key == "define")
      kit.defines.push_back("-D" + value);
    else if (key == "include")
      kit.includes.push_back("-I" + KitPath(dir, value));
    else if (key == "link-flag")
      kit.linkFlags.push_back(value);
    else if (key == "library")
      kit.libraries.push_back(KitPath(dir, value));
  }
  if (kit.compiler.empty())
    throw DeviceError(fmt::format("the hand-in kit's {} names no compiler; {}",
                                  (dir / "kit.txt").string(), kFixKit));
  return kit;
}

// Every file of the MANIFEST there, and the files the grader uses among them.
void CheckKitFiles(Kit& kit) {
  const fs::path dir(kit.dir);
  std::ifstream in(dir / "MANIFEST");
  if (!in)
    throw DeviceError(fmt::format("the hand-in kit '{}' has no MANIFEST; {}", kit.dir, kFixKit));
  std::vector<std::string> listed, missing;
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      listed.push_back(line);
  std::vector<std::string> needed = {"lib/librsb-kit.a", kTasksCpp};
  std::vector<std::string> objects = TaskObjectNames(), tasks = TaskNames();
  objects.insert(objects.end(), {"Tasks", "main"});
  for (const auto& o : objects) {
    needed.push_back(fmt::format("obj/{}.o", o));
    kit.objects[o] = (dir / "obj" / (o + ".o")).string();
  }
  std::sort(tasks.begin(), tasks.end());
  for (const auto& task : tasks)
    for (const auto& f : TaskSources(task)) {
      needed.push_back(f);
      kit.suite[f] = (dir / f).string();
    }
  kit.suite[kTasksCpp] = (dir / kTasksCpp).string();
  for (const auto& f : needed)
    if (std::find(listed.begin(), listed.end(), f) == listed.end())
      listed.push_back(f);
  for (const auto& f : listed)
    if (!fs::is_regular_file(dir / f))
      missing.push_back(f);
  if (!missing.empty())
    throw DeviceError(fmt::format("the hand-in kit '{}' lacks {} of its files ({}); {}", kit.dir,
                                  missing.size(), Join(missing, ", "), kFixKit));
}

std::vector<std::string> LinkArgs(const Kit& kit, const std::vector<std::string>& objects,
                                  const std::string& out) {
  std::vector<std::string> argv = {kit.compiler};
  argv.insert(argv.end(), kit.flags.begin(), kit.flags.end());
  argv.insert(argv.end(), kit.linkFlags.begin(), kit.linkFlags.end());
  argv.insert(argv.end(), objects.begin(), objects.end());
  argv.insert(argv.end(), {"-o", out});
  argv.insert(argv.end(), kit.libraries.begin(), kit.libraries.end());
  return argv;
}

// Compiles `source` (relative to the stage, e.g. src/tasks/CScanTask.cpp, so that the compiler's
// messages name it as the student does) with the stage's src/ first on the include path: the
// hand-in's headers win over the suite's.
std::vector<std::string> CompileArgs(const Kit& kit, const std::string& source,
                                     const std::string& object) {
  std::vector<std::string> argv = {kit.compiler};
  argv.insert(argv.end(), kit.flags.begin(), kit.flags.end());
  argv.insert(argv.end(), kit.defines.begin(), kit.defines.end());
  argv.push_back("-Isrc");
  argv.insert(argv.end(), kit.includes.begin(), kit.includes.end());
  if (!kit.pch.empty())
    argv.insert(argv.end(), {"-include", kit.pch});
  argv.insert(argv.end(), {"-c", source, "-o", object});
  return argv;
}

// An exclusive flock(2) on a file of the kit's folder for its scope, so that graders started
// together (a Slurm job array's shards) make a kit's part once while the others wait; not held
// (held() false) where the file cannot be made.
class FolderLock {
 public:
  explicit FolderLock(const fs::path& file)
      : fd_(open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    while (fd_ >= 0 && flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~FolderLock() {
    if (fd_ >= 0)
      close(fd_);
  }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_;
};

// What the task sources include, precompiled: it saves each compile its parse of fmt, OpenCL
// and the suite's headers (about 5 s of 15 s on 2 cores). Made with the very arguments of the
// compiles that use it; kept only where a compile of the suite's Tasks.cpp with it succeeds, so
// that a compiler that rejects it costs time, never a student's points.
std::string PrecompiledHeader(Kit& kit, const fs::path& dir, Clock::time_point deadline) {
  fs::create_directories(dir);
  const fs::path header = dir / "HandinKit.h";
  std::ofstream(header) << "// The hand-in kit's precompiled header: what the task sources "
                           "include, but the task headers.\n"
                           "#include \"platform/Errors.h\"\n#include \"engine/IComputeTask.h\"\n"
                           "#include \"engine/PlannedTask.h\"\n#include \"engine/HostSums.h\"\n"
                           "#include <fmt/format.h>\n"
                           "#include <algorithm>\n#include <cmath>\n#include <limits>\n"
                           "#include <memory>\n#include <string>\n#include <vector>\n";
  std::vector<std::string> argv = CompileArgs(kit, header.string(), header.string() + ".gch");
  // (-MD: the files it was made from, which KitPrecompiledHeader checks before reusing it.)
  argv.insert(argv.end() - 4, {"-x", "c++-header", "-MD", "-MF", (dir / "HandinKit.d").string()});
  Job pch{"", "precompiling the kit's headers", argv, dir.string(), {}};
  kit.pch = header.string();
  Job check{"",
            "compiling the suite's Tasks.cpp",
            CompileArgs(kit, kit.suite.at(kTasksCpp), "Tasks.o"),
            dir.string(),
            {}};
  std::vector<Job*> first = {&pch}, then = {&check};
  RunJobs(first, deadline);
  if (pch.result.exitCode == 0)
    RunJobs(then, deadline);
  kit.pch.clear();
  return pch.result.exitCode == 0 && check.result.exitCode == 0 ? header.string() : "";
}

// What a precompiled header in `dir` was made from, as it is now: the kit's folder and its
// kit.txt (compiler, flags), then the size and modification time of the compiler and of every file
// the header included (HandinKit.d, the compiler's own list: the kit's headers and the system's,
// fmt and OpenCL). "" where the list is missing or names a file that is gone.
std::string PchStamp(const Kit& kit, const fs::path& dir) {
  std::ifstream deps(dir / "HandinKit.d");
  if (!deps)
    return "";
  std::string text((std::istreambuf_iterator<char>(deps)), std::istreambuf_iterator<char>());
  std::vector<std::string> files = {kit.compiler};
  std::string word;
  const size_t colon = text.find(": ");
  for (size_t i = colon == std::string::npos ? text.size() : colon + 2; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ' ';
    if (c == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {  // "\ ": a space in a path
      word += text[++i];
    } else if (c == ' ' || c == '\n' || c == '\\') {
      if (!word.empty())
        files.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  std::string stamp = kit.dir + "\n" + ReadText(fs::path(kit.dir) / "kit.txt");  // (a copy: anew)
  for (const auto& f : files) {
    std::error_code ec;
    const auto size = fs::file_size(f, ec);
    const auto time = fs::last_write_time(f, ec);
    if (ec)
      return "";
    stamp += fmt::format("{} {} {}\n", f, size, time.time_since_epoch().count());
  }
  return stamp;
}

// The kit's precompiled header, made once for the kit where its folder can be written (a build
// tree's kit: <kit>/pch, under a lock, so that graders started together make it once), else for
// this run in workDir/pch (an installed kit). Reused while nothing it was made from changed
// (PchStamp: a kit rebuilt, the compiler or a system header updated make it again). Making it
// costs about 5 CPU-s (compiling and checking it, 2 cores); each compile with it saves about 1.
std::string KitPrecompiledHeader(Kit& kit, const fs::path& workDir, Clock::time_point deadline) {
  const fs::path shared = fs::path(kit.dir) / "pch", header = shared / "HandinKit.h";
  const auto reusable = [&] {
    const std::string stamp = PchStamp(kit, shared);
    return !stamp.empty() && ReadText(shared / "STAMP") == stamp;
  };
  if (reusable())
    return header.string();
  if (access(kit.dir.c_str(), W_OK) != 0)
    return PrecompiledHeader(kit, workDir / "pch", deadline);
  const FolderLock lock(fs::path(kit.dir) / "pch.lock");
  if (!lock.held())
    return PrecompiledHeader(kit, workDir / "pch", deadline);
  if (reusable())  // made by the grader we waited for
    return header.string();
  std::error_code ec;
  fs::remove_all(shared, ec);
  const std::string made = PrecompiledHeader(kit, shared, deadline);
  if (!made.empty())
    std::ofstream(shared / "STAMP") << PchStamp(kit, shared);
  return made;
}

// The objects of the binary of `task`: the suite's, except those compiled for it.
std::vector<std::string> TaskObjects(const Kit& kit,
                                     const std::map<std::string, std::string>& own) {
  std::vector<std::string> names = {"main", "Tasks"}, objects;
  for (const auto& o : TaskObjectNames())
    names.push_back(o);
  for (const auto& o : names)
    objects.push_back(own.count(o) ? own.at(o) : kit.objects.at(o));
  return objects;
}

// One task's build: its files staged, its compiles, its link.
struct TaskPlan {
  std::string task;
  fs::path stage;
  std::vector<Job> compiles;
  std::map<std::string, std::string> own;  // "CScanTask" -> the object compiled for it
  std::string binary;
  Job link;
};

// What the compile of `source` in `stage` is made of: its command line (the stage's paths in it are
// relative), the source's text and every header staged (the hand-in's), each by name; the kit's
// files and the system's are the same for every hand-in of the run.
std::string CompileKey(const std::vector<std::string>& argv, const fs::path& stage,
                       const std::string& source) {
  std::map<std::string, std::string> headers;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(stage / "src" / "tasks", ec))
    if (e.path().extension() == ".h")
      headers[e.path().filename().string()] = ReadText(e.path());
  std::string all;  // each part ended by a NUL
  for (const auto& a : argv)
    all += a + '\0';
  all += ReadText(stage / source) + '\0';
  for (const auto& [name, text] : headers)
    all += name + '\0' + text + '\0';
  return fmt::format("{:016x}{:016x}", Fnv1a64(all), std::hash<std::string>{}(all));
}

// Stages the hand-in's files of the task into stage/src and plans their compiles: its .cpp
// where its .cpp or .h differs from the suite's, Tasks.cpp too where its .h differs; nothing
// where both are the suite's.
void PlanTask(const Kit& kit, const HandinFiles& handin, TaskPlan& p) {
  const std::vector<std::string> files = TaskSources(p.task);
  const std::string &header = files.front(), &source = files.back();
  const fs::path root(handin.root);
  const auto mine = [&](const std::string& f) { return handin.Brings(p.task, f); };
  const auto differs = [&](const std::string& f) {
    return mine(f) && ReadText(root / f) != ReadText(kit.suite.at(f));
  };
  const bool headerDiffers = differs(header);
  if (!headerDiffers && !differs(source))
    return;
  fs::create_directories(p.stage / "src" / "tasks");
  const auto stage = [&](const fs::path& from, const std::string& f) {
    fs::copy_file(from, p.stage / f, fs::copy_options::overwrite_existing);
  };
  if (mine(header))
    stage(root / header, header);
  stage(mine(source) ? root / source : fs::path(kit.suite.at(source)), source);
  std::vector<std::string> sources = {source};
  if (headerDiffers) {
    stage(kit.suite.at(kTasksCpp), kTasksCpp);
    sources.push_back(kTasksCpp);
  }
  for (const auto& f : sources) {
    const std::string object = ObjectOf(f) + ".o";
    Job j{p.task, "compiling " + f, CompileArgs(kit, f, object), p.stage.string(), {}};
    j.key = CompileKey(j.argv, p.stage, f);
    j.object = (p.stage / object).string();
    p.own[ObjectOf(f)] = j.object;
    p.compiles.push_back(std::move(j));
  }
}

// The task's compiles, as its build's record; true where all succeeded. note: ApiNote's.
bool CollectCompiles(const TaskPlan& p, double timeoutS, const std::string& note, TaskBuild& t) {
  for (const auto& j : p.compiles) {
    t.compiled.push_back(j.what.substr(j.what.find(' ') + 1));  // "compiling <file>"
    if (j.reused)
      t.reused.push_back(t.compiled.back());
    t.seconds += j.result.seconds;
    const std::string e = JobError(j, timeoutS);
    if (!e.empty() && t.ok) {
      t.ok = false;
      FailureLog(j, timeoutS, note, t);
    } else if (e.empty() && t.ok && !j.result.err.empty()) {
      t.log += fmt::format("{}: warnings:\n{}", j.what, Excerpt(ShortenPaths(j.result.err, j.cwd)));
    }
  }
  return t.ok;
}

}  // namespace

std::string DefaultKitDir() {
  std::error_code ec;
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  const fs::path built = exe.parent_path() / "handin-kit";
  const fs::path installed = exe.parent_path().parent_path() / RSB_KIT_INSTALL_DIR;
  if (!ec && !fs::is_directory(built, ec) && fs::is_directory(installed, ec))
    return installed.string();
  return built.string();
}

void BuildKitIfMissing(const std::string& dir, double timeoutS) {
  std::error_code ec;
  const fs::path kit(dir);
  const fs::path tree = kit.parent_path();
  if (fs::exists(kit / "MANIFEST", ec) || kit.filename() != "handin-kit" ||
      !fs::is_regular_file(tree / "CMakeCache.txt", ec))
    return;
  std::optional<FolderLock> lock(std::in_place, tree / "handin-kit.lock");
  if (fs::exists(kit / "MANIFEST", ec))
    return;
  std::cerr << fmt::format(
                   "grade: no hand-in kit in this build tree yet: building it once (cmake --build "
                   "{} --target handin-kit) ...\n",
                   tree.string())
            << std::flush;
  const ProcessResult p =
      RunProcess({RSB_CMAKE_COMMAND, "--build", tree.string(), "--target", "handin-kit"},
                 std::max(timeoutS, 600.0));
  lock.reset();
  if (p.exitCode != 0)
    throw DeviceError(fmt::format("building the hand-in kit in '{}' failed (exit {}{}): {}",
                                  tree.string(), p.exitCode, p.timedOut ? ", timed out" : "",
                                  Excerpt(p.out + p.err)));
  std::cerr << fmt::format("grade: hand-in kit built in {:.1f} s: {}\n", p.seconds, dir);
}

Kit LoadKit(const std::string& dir, const std::string& workDir, double timeoutS) {
  if (!fs::is_directory(dir))
    throw DeviceError(fmt::format("the hand-in kit '{}' is not there; {}", dir, kFixKit));
  Kit kit = ParseKitFile(fs::absolute(dir).lexically_normal());
  CheckKitFiles(kit);
  // The suite's own objects, linked and run: a kit that does not link is the grader's problem.
  const fs::path check = fs::path(workDir) / "kit-check";
  fs::create_directories(check);
  const std::string binary = (check / "reduce-scan-bench").string();
  Job link{"",
           "linking the suite's own objects",
           LinkArgs(kit, TaskObjects(kit, {}), binary),
           check.string(),
           {}};
  std::vector<Job*> jobs = {&link};
  RunJobs(jobs, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(timeoutS)));
  if (const std::string e = JobError(link, timeoutS); !e.empty())
    throw DeviceError(fmt::format("the hand-in kit '{}' is broken: {}\n{}", kit.dir, e, kFixKit));
  const ProcessResult run = RunProcess({binary, "--version"}, timeoutS);
  if (run.exitCode != 0)
    throw DeviceError(
        fmt::format("the hand-in kit '{}' is broken: the suite's own objects, "
                    "linked, do not run (exit {}, signal {}): {}\n{}",
                    kit.dir, run.exitCode, run.signal, Excerpt(run.err), kFixKit));
  kit.pch = KitPrecompiledHeader(kit, workDir,
                                 Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                    std::chrono::duration<double>(timeoutS)));
  return kit;
}

namespace {

// The compiles, each in the wrapper (a sandbox) unless the run's object cache has its object;
// the objects of those that succeed are kept there.
void RunCompiles(const HostBuildSettings& s, const std::vector<Job*>& all,
                 Clock::time_point deadline) {
  std::vector<Job*> run;
  for (Job* j : all) {
    if (s.objects && s.objects->Take(j->key, j->object, j->result.err)) {
      j->reused = true;
      j->result.started = true;
      j->result.exitCode = 0;
      continue;
    }
    j->argv.insert(j->argv.begin(), s.wrapper.begin(), s.wrapper.end());
    run.push_back(j);
  }
  RunJobs(run, deadline);
  for (const Job* j : run)
    if (s.objects && j->result.exitCode == 0 && !j->result.timedOut)
      s.objects->Keep(j->key, j->object, j->result.err);
}

}  // namespace

HostBuild BuildHostCode(const HostBuildSettings& s, const HandinFiles& handin) {
  HostBuild b;
  b.handout = handin.handout;
  const std::string note = ApiNote(handin.handout);
  const std::vector<std::string> tasks = handin.TasksOf(s.graded);
  if (tasks.empty())
    return b;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(s.timeoutS));
  const fs::path root = fs::path(s.workDir) / "host";
  std::error_code ec;
  fs::remove_all(root, ec);
  std::vector<TaskPlan> plans(tasks.size());
  std::vector<Job*> compiles, links;
  for (size_t i = 0; i < tasks.size(); ++i) {
    TaskPlan& p = plans[i];
    p.task = tasks[i];
    p.stage = root / p.task;
    b.tasks[p.task].ok = true;
    try {
      PlanTask(*s.kit, handin, p);
    } catch (const fs::filesystem_error& e) {
      b.tasks[p.task] = {false, "", {}, std::string("cannot read the task sources: ") + e.what()};
      p.compiles.clear();
    }
    for (auto& j : p.compiles)
      compiles.push_back(&j);
  }
  RunCompiles(s, compiles, deadline);
  for (auto& p : plans) {
    TaskBuild& t = b.tasks[p.task];
    if (p.compiles.empty() || !CollectCompiles(p, s.timeoutS, note, t))
      continue;  // the suite's own sources (its binary runs), or a compile error
    p.binary = (p.stage / "reduce-scan-bench").string();
    p.link = Job{p.task,
                 "linking",
                 LinkArgs(*s.kit, TaskObjects(*s.kit, p.own), p.binary),
                 p.stage.string(),
                 {}};
    p.link.argv.insert(p.link.argv.begin(), s.wrapper.begin(), s.wrapper.end());
    links.push_back(&p.link);
  }
  RunJobs(links, deadline);
  for (const auto& p : plans) {
    TaskBuild& t = b.tasks[p.task];
    if (p.binary.empty())
      continue;
    t.seconds += p.link.result.seconds;
    t.ok = JobError(p.link, s.timeoutS).empty();
    if (t.ok)
      t.binary = p.binary;
    else
      FailureLog(p.link, s.timeoutS, note, t);
  }
  b.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return b;
}

bool ObjectCache::Take(const std::string& key, const std::string& object, std::string& warnings) {
  const std::lock_guard<std::mutex> lock(mu_);
  const auto it = kept_.find(key);
  std::error_code ec;
  if (it == kept_.end() || !fs::copy_file(fs::path(dir_) / (key + ".o"), object,
                                          fs::copy_options::overwrite_existing, ec))
    return false;
  warnings = it->second;
  return true;
}

void ObjectCache::Keep(const std::string& key, const std::string& object,
                       const std::string& warnings) {
  const std::lock_guard<std::mutex> lock(mu_);
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (kept_.count(key) || !fs::copy_file(object, fs::path(dir_) / (key + ".o"),
                                         fs::copy_options::overwrite_existing, ec))
    return;
  kept_[key] = warnings;
}

}  // namespace rsb::grade
