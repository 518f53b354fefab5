#include "platform/Subprocess.h"

#include "platform/ChildPause.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

namespace rsb {

namespace {
std::vector<std::string>& SavedEnvironment() {
  static std::vector<std::string> saved;
  return saved;
}
}  // namespace

void SaveEnvironment() {
  for (char** e = environ; e && *e; ++e)
    SavedEnvironment().push_back(*e);
}

char* const* StartupEnvironment() {
  static std::vector<char*> envp;
  if (SavedEnvironment().empty())
    return environ;
  envp.clear();
  for (auto& e : SavedEnvironment())
    envp.push_back(e.data());
  envp.push_back(nullptr);
  return envp.data();
}

void RestoreStartupEnvironment() {
  for (const std::string& e : SavedEnvironment()) {
    const size_t eq = e.find('=');
    if (eq != std::string::npos)
      setenv(e.substr(0, eq).c_str(), e.c_str() + eq + 1, 1);
  }
}

namespace {

// Set by SIGINT or SIGTERM (lock-free, so that the handler may store it).
std::atomic<bool> gInterrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void OnInterrupt(int) {
  gInterrupted = true;
}

// A new temporary file (close-on-exec: no other child inherits it); "" where none was made.
int TempFile(std::string& path) {
  std::string templ = (std::filesystem::temp_directory_path() / "rsb-child-XXXXXX").string();
  const int fd = ::mkostemp(templ.data(), O_CLOEXEC);
  path = fd >= 0 ? templ : "";
  return fd;
}

}  // namespace

// (The child may have written gigabytes.)
std::string ReadCapped(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string s(kMaxCapture, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<size_t>(in.gcount()));
  return s;
}

bool WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  bool socket = true;
  while (done < text.size()) {
    ssize_t w = socket ? ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL) : 0;
    if (socket && w < 0 && errno == ENOTSOCK) {
      socket = false;
      continue;
    }
    if (!socket)
      w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    done += size_t(w);
  }
  return true;
}

void InstallInterruptHandler(bool secondEnds) {
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sa.sa_flags = secondEnds ? SA_RESETHAND : 0;  // no SA_RESTART: a waiting poll returns at once
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool Interrupted() {
  return gInterrupted;
}

const std::atomic<bool>& InterruptFlag() {
  return gInterrupted;
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* desc = sigdescr_np(sig);
  return std::string("SIG") + (abbrev ? abbrev : std::to_string(sig).c_str()) +
         (desc ? std::string(" (") + desc + ")" : std::string());
}

namespace {

// Every start goes through here one at a time: noCoreDumps lowers this process's own limit for
// the moment of the spawn (posix_spawn has no step for it), which no other child may inherit.
std::mutex gSpawnMutex;

// The child's file actions: its copies of fds, the fds it does not keep, the files it opens,
// its working folder. `moved` gets the copies made here (closed by the caller after the spawn).
void AddFileActions(const ChildSetup& setup, posix_spawn_file_actions_t& actions,
                    std::vector<int>& moved) {
  // Each source first copied above every target (close-on-exec), so that dup2 always copies,
  // which clears FD_CLOEXEC on the child's fd, and no target overwrites a later source.
  int above = 10;
  for (const auto& [from, to] : setup.fds)
    above = std::max(above, to + 1);
  for (const auto& f : setup.files)
    above = std::max(above, f.fd + 1);
  for (const auto& [from, to] : setup.fds) {
    moved.push_back(::fcntl(from, F_DUPFD_CLOEXEC, above));
    posix_spawn_file_actions_adddup2(&actions, moved.back(), to);
  }
  if (setup.closeFrom >= 0)
    posix_spawn_file_actions_addclosefrom_np(&actions, setup.closeFrom);
  for (const auto& f : setup.files)
    posix_spawn_file_actions_addopen(&actions, f.fd, f.path.c_str(), f.flags, 0600);
  if (!setup.workDir.empty())
    posix_spawn_file_actions_addchdir_np(&actions, setup.workDir.c_str());
}

pid_t SpawnLocked(const ChildSetup& setup, posix_spawn_file_actions_t& actions,
                  posix_spawnattr_t& attr, int& error) {
  std::vector<char*> args;
  for (const auto& a : setup.argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The environment as the program started: the OpenCL ICD loader cuts OCL_ICD_FILENAMES in
  // place, and a child given the cut one may miss a platform (StartupEnvironment).
  char* const* envp = setup.envp ? setup.envp : StartupEnvironment();
  struct rlimit core {};
  const bool lower = setup.noCoreDumps && ::getrlimit(RLIMIT_CORE, &core) == 0;
  if (lower) {
    struct rlimit none = core;
    none.rlim_cur = 0;
    ::setrlimit(RLIMIT_CORE, &none);
  }
  const std::string& program = setup.program.empty() ? setup.argv[0] : setup.program;
  pid_t pid = -1;
  error = program.find('/') == std::string::npos
              ? posix_spawnp(&pid, program.c_str(), &actions, &attr, args.data(), envp)
              : posix_spawn(&pid, program.c_str(), &actions, &attr, args.data(), envp);
  if (lower)
    ::setrlimit(RLIMIT_CORE, &core);
  return error ? -1 : pid;
}

}  // namespace

pid_t SpawnChild(const ChildSetup& setup, int& error) {
  if (setup.argv.empty()) {
    error = EINVAL;
    return -1;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  std::vector<int> moved;
  AddFileActions(setup, actions, moved);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  if (std::find(moved.begin(), moved.end(), -1) != moved.end()) {
    error = errno;
  } else {
    std::lock_guard l(gSpawnMutex);
    pid = SpawnLocked(setup, actions, attr, error);
  }
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  for (const int fd : moved)
    if (fd >= 0)
      ::close(fd);
  return pid;
}

void KillChild(pid_t pid) {
  ::killpg(pid, SIGKILL);
  ::kill(pid, SIGKILL);
}

int ReapChild(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

namespace {

// The child's stdout and stderr: temporary files, read (capped) and removed at the end.
class Capture {
 public:
  Capture() : outFd_(TempFile(outPath_)), errFd_(TempFile(errPath_)) {}
  ~Capture() {
    Close();
    for (const std::string* path : {&outPath_, &errPath_})
      if (!path->empty())
        std::remove(path->c_str());
  }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  bool Ok() const { return outFd_ >= 0 && errFd_ >= 0; }
  int Out() const { return outFd_; }
  int Err() const { return errFd_; }
  void Close() {
    for (int* fd : {&outFd_, &errFd_})
      if (*fd >= 0)
        ::close(*fd), *fd = -1;
  }
  void Read(ProcessResult& r) const {
    r.out = ReadCapped(outPath_);
    r.err = ReadCapped(errPath_);
  }

 private:
  std::string outPath_, errPath_;
  int outFd_, errFd_;
};

// A start that failed as the fork+exec this replaced failed: a failed fork (no process) is
// `started` false; a program that could not be executed, or a working folder that could not be
// entered, a child that exited with status 127.
void StartFailed(int error, const std::string& workDir, ProcessResult& r) {
  if (error == EAGAIN || error == ENOMEM) {
    r.startError = std::string("fork failed: ") + std::strerror(error);
    return;
  }
  r.started = true;
  r.exitCode = 127;
  struct stat st {};
  const bool noDir = !workDir.empty() && (::stat(workDir.c_str(), &st) != 0 ||
                                          !S_ISDIR(st.st_mode) || ::access(workDir.c_str(), X_OK));
  if (!noDir)
    r.err = "cannot execute the program\n";
}

// Waits for the child until the deadline (later by the time it was stopped, ChildPause.h) or
// this process's interrupt (then its group is killed); its wait status. The child is seen to end
// before it is reaped (WNOWAIT), so that its pid is not reused while it is still registered.
int WaitUntil(pid_t pid, std::chrono::steady_clock::time_point deadline, ProcessResult& r) {
  for (;;) {
    siginfo_t info{};
    const int got = ::waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (got == 0 && info.si_pid == pid)
      break;
    if (got < 0 && errno != EINTR)
      break;
    const auto pausedFor = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(child_pause::PausedSeconds(pid)));
    const bool late = std::chrono::steady_clock::now() >= deadline + pausedFor;
    if (late || gInterrupted) {
      KillChild(pid);
      r.timedOut = late && !gInterrupted;
      r.interrupted = gInterrupted;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.pausedSeconds = child_pause::PausedSeconds(pid);
  child_pause::Unregister(pid);
  const int status = ReapChild(pid);
  ::killpg(pid, SIGKILL);  // anything the child left behind in its group
  return status;
}

}  // namespace

ProcessResult RunProcess(const std::vector<std::string>& argv, double timeoutS,
                         const std::string& workDir) {
  ProcessResult r;
  Capture capture;
  if (!capture.Ok()) {
    r.startError = std::string("cannot create a temporary file: ") + std::strerror(errno);
    return r;
  }
  ChildSetup setup;
  setup.argv = argv;
  setup.fds = {{capture.Out(), 1}, {capture.Err(), 2}};
  setup.files = {{0, "/dev/null", O_RDONLY}};
  setup.workDir = workDir;
  setup.noCoreDumps = true;
  int error = 0;
  // Where another thread times alone on a CPU device (ChildPause.h), the start waits for it.
  const pid_t pid = child_pause::StartRegistered([&] { return SpawnChild(setup, error); });
  const auto start = std::chrono::steady_clock::now();
  capture.Close();
  if (pid < 0) {
    StartFailed(error, workDir, r);
    return r;
  }
  r.started = true;
  const int status =
      WaitUntil(pid,
                start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeoutS)),
                r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() -
              r.pausedSeconds;
  if (!r.timedOut && !r.interrupted) {
    if (WIFEXITED(status))
      r.exitCode = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
      r.signal = WTERMSIG(status);
  }
  capture.Read(r);
  return r;
}

}  // namespace rsb
