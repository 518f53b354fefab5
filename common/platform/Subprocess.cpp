#include "platform/Subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
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

std::optional<std::string> SetChildrenEnvironment(const std::string& name,
                                                  const std::optional<std::string>& value) {
  std::optional<std::string> was;
  if (const char* v = std::getenv(name.c_str()))
    was = v;
  // (Nothing saved: children get environ, which setenv below changes.)
  std::vector<std::string>& saved = SavedEnvironment();
  if (!saved.empty()) {
    const std::string prefix = name + "=";
    const auto it = std::find_if(saved.begin(), saved.end(),
                                 [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
    was = it == saved.end() ? std::nullopt : std::optional(it->substr(prefix.size()));
    if (it != saved.end())
      saved.erase(it);
    if (value)
      saved.push_back(prefix + *value);
  }
  value ? ::setenv(name.c_str(), value->c_str(), 1) : ::unsetenv(name.c_str());
  return was;
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

// A new temporary file, removed from its folder at once (close-on-exec: no other child inherits
// it): only its descriptor names it, so it outlives no process, however that ends; -1 where none
// was made.
int TempFile() {
  std::error_code ec;
  const auto dir = std::filesystem::temp_directory_path(ec);
  std::string templ = ((ec ? std::filesystem::path("/tmp") : dir) / "rsb-child-XXXXXX").string();
  const int fd = ::mkostemp(templ.data(), O_CLOEXEC);
  if (fd >= 0)
    ::unlink(templ.c_str());
  return fd;
}

// The first kMaxCapture bytes of the file open as fd, from its start.
std::string ReadCappedFd(int fd) {
  std::string s(kMaxCapture, '\0');
  size_t got = 0;
  while (fd >= 0 && got < s.size()) {
    const ssize_t n = ::pread(fd, s.data() + got, s.size() - got, off_t(got));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    got += size_t(n);
  }
  s.resize(got);
  return s;
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

void InstallInterruptThread(bool secondEnds) {
  static std::once_flag once;
  std::call_once(once, [secondEnds] {
    InstallInterruptHandler(false);  // for a thread that unblocks them (none of this program's)
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread([set, secondEnds] {
      for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) != 0)
          continue;
        if (gInterrupted && secondEnds) {  // the second: the end, as from the default action
          sigset_t one;
          sigemptyset(&one);
          sigaddset(&one, sig);
          ::signal(sig, SIG_DFL);
          pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
          ::raise(sig);
        }
        gInterrupted = true;
      }
    }).detach();
  });
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
  sigset_t defaults, none;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);  // none blocked (InstallInterruptThread blocks two)
  posix_spawnattr_setflags(&attr, (setup.newSession ? POSIX_SPAWN_SETSID : POSIX_SPAWN_SETPGROUP) |
                                      POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
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

// The child's stdout and stderr: temporary files of no name (TempFile), read (capped) at the end.
class Capture {
 public:
  Capture() : outFd_(TempFile()), errFd_(TempFile()) {}
  ~Capture() {
    for (int fd : {outFd_, errFd_})
      if (fd >= 0)
        ::close(fd);
  }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  bool Ok() const { return outFd_ >= 0 && errFd_ >= 0; }
  int Out() const { return outFd_; }
  int Err() const { return errFd_; }
  void Read(ProcessResult& r) const {
    r.out = ReadCappedFd(outFd_);
    r.err = ReadCappedFd(errFd_);
  }

 private:
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

// Constant-initialised: a watcher may be installed before main.
std::atomic<ChildWatcher*> gWatcher{nullptr};

double StoppedSeconds(pid_t pid) {
  ChildWatcher* w = gWatcher.load();
  return w ? w->StoppedSeconds(pid) : 0.0;
}

// One look at the child: true once it has ended, or has been killed because its deadline (later
// by the time it was stopped, ChildWatcher) passed or this process was interrupted. The child is
// seen to end before it is reaped (WNOWAIT), so that its pid is not reused while it is still
// registered.
bool Ended(pid_t pid, std::chrono::steady_clock::time_point deadline, ProcessResult& r) {
  siginfo_t info{};
  const int got = ::waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  if ((got == 0 && info.si_pid == pid) || (got < 0 && errno != EINTR))
    return true;
  const auto pausedFor = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(StoppedSeconds(pid)));
  const bool late = std::chrono::steady_clock::now() >= deadline + pausedFor;
  if (!late && !gInterrupted)
    return false;
  KillChild(pid);
  r.timedOut = late && !gInterrupted;
  r.interrupted = gInterrupted;
  return true;
}

// The ended child reaped: its wait status (anything it left behind in its group killed).
int Reap(pid_t pid, ProcessResult& r) {
  r.pausedSeconds = StoppedSeconds(pid);
  if (ChildWatcher* w = gWatcher.load())
    w->Forget(pid);
  const int status = ReapChild(pid);
  ::killpg(pid, SIGKILL);
  return status;
}

// The reaped child's answer: its time (the time it was stopped left out), how it ended, what it
// wrote.
void Finish(int status, std::chrono::steady_clock::time_point start, const Capture& capture,
            ProcessResult& r) {
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() -
              r.pausedSeconds;
  if (!r.timedOut && !r.interrupted) {
    if (WIFEXITED(status))
      r.exitCode = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
      r.signal = WTERMSIG(status);
  }
  capture.Read(r);
}

std::chrono::steady_clock::time_point After(std::chrono::steady_clock::time_point t, double s) {
  return t + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                 std::chrono::duration<double>(s));
}

// Starts a child as RunProcess does (stdin /dev/null, stdout and stderr captured, no core
// dumps), with `extra` fds ({this process's, the child's}); -1 with r said where it did not start.
// A file of no name holding input, read from its start (-1 where it cannot be made).
int InputFile(const std::string& input) {
  const int fd = ::memfd_create("rsb-input", MFD_CLOEXEC);
  if (fd >= 0 && (!WriteAll(fd, input) || ::lseek(fd, 0, SEEK_SET) != 0)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

pid_t Start(const std::vector<std::string>& argv, const std::string& workDir,
            const std::string& input, const Capture& capture,
            const std::vector<std::pair<int, int>>& extra, bool newSession, ProcessResult& r) {
  ChildSetup setup;
  setup.argv = argv;
  setup.fds = {{capture.Out(), 1}, {capture.Err(), 2}};
  setup.fds.insert(setup.fds.end(), extra.begin(), extra.end());
  const int in = input.empty() ? -1 : InputFile(input);
  if (in >= 0)
    setup.fds.push_back({in, 0});
  else
    setup.files = {{0, "/dev/null", O_RDONLY}};
  setup.workDir = workDir;
  setup.noCoreDumps = true;
  setup.newSession = newSession;
  int error = 0;
  // A watcher (SetChildWatcher) may hold the start back.
  const auto spawn = [&] { return SpawnChild(setup, error); };
  ChildWatcher* w = gWatcher.load();
  const pid_t pid = !input.empty() && in < 0 ? (error = errno, -1) : w ? w->Start(spawn) : spawn();
  if (in >= 0)
    ::close(in);
  if (pid < 0)
    StartFailed(error, workDir, r);
  else
    r.started = true;
  return pid;
}

}  // namespace

void SetChildWatcher(ChildWatcher* watcher) {
  gWatcher.store(watcher);
}

ProcessResult RunProcess(const std::vector<std::string>& argv, double timeoutS,
                         const std::string& workDir, const std::string& input) {
  ProcessResult r;
  Capture capture;
  if (!capture.Ok()) {
    r.startError = std::string("cannot create a temporary file: ") + std::strerror(errno);
    return r;
  }
  const pid_t pid = Start(argv, workDir, input, capture, {}, false, r);
  const auto start = std::chrono::steady_clock::now();
  if (pid < 0)
    return r;
  const auto deadline = After(start, timeoutS);
  while (!Ended(pid, deadline, r))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  Finish(Reap(pid, r), start, capture, r);
  return r;
}

namespace {

// RunInTurns' state of one program.
struct InTurns {
  Capture capture;
  ProcessResult r;
  pid_t pid = -1;
  int socket = -1;  // this process's end of the turns' socket pair (-1: closed)
  bool waits = false;
  std::chrono::steady_clock::time_point start, deadline;
};

// Reads what the program said on its socket: true where it waits for a turn; its socket closed
// where it ended (or shut its end).
bool Heard(InTurns& p) {
  char c = 0;
  const ssize_t got = ::recv(p.socket, &c, 1, MSG_DONTWAIT);
  if (got == 1)
    return p.waits = true;
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return false;
  ::close(p.socket);
  p.socket = -1;
  p.waits = false;
  return false;
}

// Starts the program with its end of a new socket pair as its fd childFd.
void StartInTurns(const TurnRun& run, int childFd, InTurns& p) {
  int sv[2];
  if (!p.capture.Ok() || ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    p.r.startError =
        std::string("cannot create a temporary file or socket pair: ") + std::strerror(errno);
    return;
  }
  p.pid =
      Start(run.argv, run.workDir, run.input, p.capture, {{sv[1], childFd}}, run.newSession, p.r);
  p.start = std::chrono::steady_clock::now();
  p.deadline = After(p.start, run.timeoutS);
  ::close(sv[1]);
  p.socket = p.pid < 0 ? (::close(sv[0]), -1) : sv[0];
}

}  // namespace

std::vector<ProcessResult> RunInTurns(const std::vector<TurnRun>& runs, int childFd,
                                      std::vector<size_t>* turns) {
  std::vector<InTurns> ps(runs.size());
  for (size_t k = 0; k < runs.size(); ++k)
    StartInTurns(runs[k], childFd, ps[k]);
  int holder = -1;
  size_t next = 0;
  bool begun = false;  // every program waited for its first turn, or ended
  for (;;) {
    std::vector<pollfd> fds;
    for (const InTurns& p : ps)
      if (p.socket >= 0)
        fds.push_back({p.socket, POLLIN, 0});
    ::poll(fds.data(), fds.size(), 5);
    bool running = false;
    for (size_t k = 0; k < ps.size(); ++k) {
      InTurns& p = ps[k];
      if (p.socket >= 0 && Heard(p) && holder == int(k))
        holder = -1;  // it waits again: its timed run is over
      if (p.pid > 0 && Ended(p.pid, p.deadline, p.r)) {
        Finish(Reap(p.pid, p.r), p.start, p.capture, p.r);
        p.pid = -1;
        if (p.socket >= 0)
          ::close(p.socket), p.socket = -1;
        p.waits = false;
      }
      if (p.socket < 0 && holder == int(k))
        holder = -1;
      running = running || p.pid > 0;
    }
    if (!running)
      break;
    begun = begun || std::all_of(ps.begin(), ps.end(),
                                 [](const InTurns& p) { return p.waits || p.socket < 0; });
    for (size_t i = 0; begun && holder < 0 && i < ps.size(); ++i) {
      const size_t k = (next + i) % ps.size();
      if (!ps[k].waits)
        continue;
      ps[k].waits = false;
      if (!WriteAll(ps[k].socket, "g"))
        continue;  // it is ending: its socket closes next
      holder = int(k);
      next = k + 1;
      if (turns)
        turns->push_back(k);
    }
  }
  std::vector<ProcessResult> out;
  for (InTurns& p : ps)
    out.push_back(std::move(p.r));
  return out;
}

}  // namespace rsb
