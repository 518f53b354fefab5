#include "platform/Subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
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

// The first kMaxCapture bytes of a file (the child may have written gigabytes).
std::string ReadCapped(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string s(kMaxCapture, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<size_t>(in.gcount()));
  return s;
}

int TempFile(std::string& path) {
  std::string templ = (std::filesystem::temp_directory_path() / "rsb-child-XXXXXX").string();
  const int fd = ::mkstemp(templ.data());
  path = templ;
  return fd;
}

}  // namespace

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

ProcessResult RunProcess(const std::vector<std::string>& argv, double timeoutS,
                         const std::string& workDir) {
  ProcessResult r;
  std::string outPath, errPath;
  const int outFd = TempFile(outPath);
  const int errFd = TempFile(errPath);
  if (outFd < 0 || errFd < 0) {
    r.startError = std::string("cannot create a temporary file: ") + std::strerror(errno);
    if (outFd >= 0)
      ::close(outFd), std::remove(outPath.c_str());
    if (errFd >= 0)
      ::close(errFd), std::remove(errPath.c_str());
    return r;
  }
  // Everything the child needs is prepared before fork: between fork and exec only
  // async-signal-safe calls (this process may have OpenCL threads).
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const bool search = argv[0].find('/') == std::string::npos;
  const char* dir = workDir.empty() ? nullptr : workDir.c_str();
  // The environment as the program started: the OpenCL ICD loader cuts OCL_ICD_FILENAMES in
  // place, and a child given the cut one may miss a platform (StartupEnvironment, Subprocess.h).
  char* const* envp = StartupEnvironment();

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    const int in = ::open("/dev/null", O_RDONLY);
    if (in >= 0)
      ::dup2(in, 0);
    ::dup2(outFd, 1);
    ::dup2(errFd, 2);
    struct rlimit noCore {};
    ::setrlimit(RLIMIT_CORE, &noCore);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (dir && ::chdir(dir) != 0)
      ::_exit(127);
    if (search)
      ::execvpe(args[0], args.data(), envp);
    else
      ::execve(args[0], args.data(), envp);
    const char msg[] = "cannot execute the program\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(outFd);
  ::close(errFd);
  if (pid < 0) {
    r.startError = std::string("fork failed: ") + std::strerror(errno);
    std::remove(outPath.c_str());
    std::remove(errPath.c_str());
    return r;
  }
  ::setpgid(pid, pid);  // also here: no race with a kill before the child ran setpgid
  r.started = true;

  const auto deadline = start + std::chrono::duration<double>(timeoutS);
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid)
      break;
    if (done < 0 && errno != EINTR)
      break;
    const bool late = std::chrono::steady_clock::now() >= deadline;
    if (late || gInterrupted) {
      ::killpg(pid, SIGKILL);
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      r.timedOut = late && !gInterrupted;
      r.interrupted = gInterrupted;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::killpg(pid, SIGKILL);  // anything the child left behind in its group
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!r.timedOut && !r.interrupted) {
    if (WIFEXITED(status))
      r.exitCode = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
      r.signal = WTERMSIG(status);
  }
  r.out = ReadCapped(outPath);
  r.err = ReadCapped(errPath);
  std::remove(outPath.c_str());
  std::remove(errPath.c_str());
  return r;
}

}  // namespace rsb
