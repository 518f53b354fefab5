#include "grade/Resident.h"

#include "engine/Worker.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>
#include <utility>

namespace fs = std::filesystem;

namespace rsb::grade {

namespace {

// A resident serves this many runs, then a fresh one takes over (whatever a driver keeps from
// run to run stays bounded).
constexpr size_t kRunsPerResident = 64;

// The answer line, until the deadline or this process's interrupt: 1 a line, 0 the resident
// closed its end (it died), -1 late or interrupted.
int ReadAnswer(int fd, std::chrono::steady_clock::time_point deadline, std::string& line) {
  std::string buffer;
  for (;;) {
    if (Interrupted() || std::chrono::steady_clock::now() >= deadline)
      return -1;
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, 20);
    if (n < 0 && errno != EINTR)
      return 0;
    if (n <= 0)
      continue;
    char chunk[256];
    const ssize_t r = ::recv(fd, chunk, sizeof chunk, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return 0;
    buffer.append(chunk, size_t(r));
    if (const auto nl = buffer.find('\n'); nl != std::string::npos) {
      line = buffer.substr(0, nl);
      return 1;
    }
  }
}

}  // namespace

Residents::Residents(std::vector<std::string> command, std::string workDir)
    : command_(std::move(command)), workDir_(std::move(workDir)) {}

Residents::~Residents() {
  for (Server& s : idle_)
    Retire(s, nullptr);
}

size_t Residents::Started() const {
  std::lock_guard l(mu_);
  return started_;
}

bool Residents::Start(Server& s, std::string& error) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    error = std::string("socketpair: ") + std::strerror(errno);
    return false;
  }
  ChildSetup setup;
  setup.argv = command_;
  setup.fds = {{pair[1], 0}, {pair[1], 3}};
  setup.files = {{1, "/dev/null", O_WRONLY}, {2, "/dev/null", O_WRONLY}};
  setup.closeFrom = 4;
  setup.workDir = workDir_;
  setup.noCoreDumps = true;
  int err = 0;
  s.pid = SpawnChild(setup, err);
  ::close(pair[1]);
  if (s.pid < 0) {
    ::close(pair[0]);
    error = std::string("cannot start a resident child run: ") + std::strerror(err);
    return false;
  }
  s.fd = pair[0];
  std::lock_guard l(mu_);
  ++started_;
  return true;
}

// Ends the resident: killed, or (died: its end of the socket closed during a run) reaped as it
// ends on its own, what ended it into r, as for a child process that crashed.
void Residents::Retire(Server& s, ProcessResult* r) {
  if (s.fd >= 0)
    ::close(s.fd);
  if (s.pid > 0) {
    int status = 0;
    pid_t done = 0;
    for (int i = 0; r && i < 400 && (done = ::waitpid(s.pid, &status, WNOHANG)) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (done != s.pid) {
      KillChild(s.pid);
      status = ReapChild(s.pid);
    } else {
      ::killpg(s.pid, SIGKILL);  // anything it left behind in its group
    }
    if (r && WIFSIGNALED(status))
      r->signal = WTERMSIG(status);
    else if (r && WIFEXITED(status))
      r->exitCode = WEXITSTATUS(status);
  }
  s = Server();
}

ProcessResult Residents::Run(const std::vector<std::string>& argv, double timeoutS,
                             const std::string& dir, const nlohmann::json& fields) {
  static std::atomic<unsigned> counter{0};
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(timeoutS));
  ProcessResult r;
  Server s;
  {
    std::lock_guard l(mu_);
    if (!idle_.empty()) {
      s = idle_.back();
      idle_.pop_back();
    }
  }
  if (s.pid < 0 && !Start(s, r.startError))
    return r;
  r.started = true;
  const unsigned n = counter++;
  const std::string out = (fs::path(workDir_) / ("resident-out-" + std::to_string(n))).string();
  const std::string err = (fs::path(workDir_) / ("resident-err-" + std::to_string(n))).string();
  nlohmann::json req = fields;
  req.update({{"dir", dir}, {"out", out}, {"err", err}});
  std::string line;
  const int got =
      WriteAll(s.fd, ServeRequest(argv, std::move(req))) ? ReadAnswer(s.fd, deadline, line) : 0;
  int exitCode = -1;
  if (got == 1) {
    try {
      exitCode = nlohmann::json::parse(line).at("exit").get<int>();
    } catch (const std::exception&) {
      exitCode = -1;
    }
  }
  if (got == 1 && exitCode >= 0) {
    r.exitCode = exitCode;
    ++s.runs;
    if ((exitCode == 0 || exitCode == 1) && s.runs < kRunsPerResident) {
      std::lock_guard l(mu_);
      idle_.push_back(s);
    } else {
      Retire(s, nullptr);
    }
  } else if (got < 0) {  // late or interrupted: killed, as a child process would be
    r.timedOut = !Interrupted();
    r.interrupted = Interrupted();
    Retire(s, nullptr);
  } else {  // it died during the run (a crash): its end is the run's
    Retire(s, &r);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.out = ReadCapped(out);
  r.err = ReadCapped(err);
  std::error_code ec;
  fs::remove(out, ec);
  fs::remove(err, ec);
  return r;
}

}  // namespace rsb::grade
