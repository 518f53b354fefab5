#include "engine/Worker.h"

#include "engine/Result.h"
#include "platform/Errors.h"
#include "platform/Subprocess.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rsb {

void WorkerSend(int fd, const std::string& line) {
  const std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      throw DeviceError(fmt::format("worker: cannot report to the run: {}", std::strerror(errno)));
    done += size_t(w);
  }
}

std::string TimerText(const TimerVerdict& v) {
  return v.usable ? "usable" : v.reason;
}

TimerVerdict TimerFromText(const std::string& text) {
  return text == "usable" ? TimerVerdict{true, true, ""} : TimerVerdict{true, false, text};
}

namespace {

using Clock = std::chrono::steady_clock;

// One worker process: its pid, the pipe it reports on and its stderr (forwarded, tail kept).
class WorkerProcess {
 public:
  // timer: the device's timer verdict, once known (TimerText; "": not known yet).
  WorkerProcess(const IsolationSettings& settings, size_t job, size_t skip, bool bandwidth,
                const std::string& timer) {
    static size_t started = 0;  // names each worker's Oclgrind files
    if (!settings.oclgrindDir.empty()) {
      logPath_ = fmt::format("{}/worker-{}.log", settings.oclgrindDir, started);
      outPath_ = fmt::format("{}/worker-{}.out", settings.oclgrindDir, started);
      ++started;
    }
    int report[2], err[2];
    if (pipe2(report, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
      throw DeviceError(fmt::format("cannot make a pipe for a worker: {}", std::strerror(errno)));
    std::vector<std::string> args = settings.command;
    for (const std::string& a :
         {std::string("--worker-fd"), std::string("3"), std::string("--worker-job"),
          std::to_string(job), std::string("--worker-skip"), std::to_string(skip)})
      args.push_back(a);
    if (bandwidth)
      args.push_back("--worker-bandwidth");
    if (!timer.empty())
      args.insert(args.end(), {"--worker-timer", timer});
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    // posix_spawn, not fork: no pthread_atfork handlers of the OpenCL drivers run, and nothing
    // of this process but the two pipes and the environment reaches the worker.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    // The pipe's ends moved to 10 and up first, so that dup2 onto 3 and 2 always copies (which
    // clears FD_CLOEXEC on the copy).
    for (int* end : {&report[1], &err[1]}) {
      const int moved = fcntl(*end, F_DUPFD_CLOEXEC, 10);
      close(*end);
      *end = moved;
    }
    posix_spawn_file_actions_adddup2(&actions, report[1], 3);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    // Nothing else of this process, and the environment as it was at start: the OpenCL ICD
    // loader cuts OCL_ICD_FILENAMES in place (strtok), and a worker given the cut variable found
    // no NVIDIA platform on the H100 machine, whose environment lists the NVIDIA ICD there.
    posix_spawn_file_actions_addclosefrom_np(&actions, 4);
    // Under --oclgrind: Oclgrind's log to a file of this worker's, stdout (the instruction
    // counts) to another.
    std::vector<std::string> env;
    std::vector<char*> envp;
    char* const* environment = StartupEnvironment();
    if (!logPath_.empty()) {
      // LC_ALL=C: Oclgrind prints the counts in the environment's locale (10,216 in en_US).
      for (char* const* e = environment; *e; ++e)
        if (std::string(*e).rfind("OCLGRIND_LOG=", 0) != 0 &&
            std::string(*e).rfind("LC_ALL=", 0) != 0)
          env.push_back(*e);
      env.push_back("OCLGRIND_LOG=" + logPath_);
      env.push_back("LC_ALL=C");
      for (auto& e : env)
        envp.push_back(e.data());
      envp.push_back(nullptr);
      environment = envp.data();
      posix_spawn_file_actions_addopen(&actions, 1, outPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                       0600);
    }
    // A process group of its own, so that the worker and anything it starts (a compiler) go
    // together when it is stopped (Kill).
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    const int failed =
        posix_spawn(&pid_, "/proc/self/exe", &actions, &attr, argv.data(), environment);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    if (failed)
      throw DeviceError(fmt::format("cannot start a worker: {}", std::strerror(failed)));
    close(report[1]);
    close(err[1]);
    report_ = report[0];
    err_ = err[0];
  }
  ~WorkerProcess() {
    if (pid_ > 0 && !reaped_) {
      Kill();
      Reap();
    }
    close(report_);
    close(err_);
  }

  // The next protocol line, or nullopt at the end of the pipe (the worker is gone) or once
  // the deadline has passed (timedOut) or stop is set.
  std::optional<std::string> NextLine(std::optional<Clock::time_point> deadline,
                                      const std::atomic<bool>& stop, bool& timedOut) {
    timedOut = false;
    for (;;) {
      const size_t nl = lines_.find('\n');
      if (nl != std::string::npos) {
        std::string line = lines_.substr(0, nl);
        lines_.erase(0, nl + 1);
        return line;
      }
      if (reportClosed_ || stop)
        return std::nullopt;
      int waitMs = 200;  // stop is checked at least this often
      if (deadline) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
        if (left.count() <= 0) {
          timedOut = true;
          return std::nullopt;
        }
        waitMs = int(std::min<long long>(waitMs, left.count() + 1));
      }
      pollfd fds[2] = {{report_, POLLIN, 0}, {err_, POLLIN, 0}};
      const int ready = poll(fds, errClosed_ ? 1 : 2, waitMs);
      if (ready < 0 && errno != EINTR)
        throw DeviceError(fmt::format("waiting for a worker: {}", std::strerror(errno)));
      if (ready > 0 && !errClosed_ && (fds[1].revents & (POLLIN | POLLHUP)))
        errClosed_ = !Drain(err_, /*isReport=*/false);
      if (ready > 0 && (fds[0].revents & (POLLIN | POLLHUP)))
        reportClosed_ = !Drain(report_, /*isReport=*/true);
    }
  }

  // Under --oclgrind: what the worker added to its Oclgrind log and stdout since the last call,
  // as a report (Oclgrind.h).
  // outEnd, logEnd: where the case's part ends (the worker's `oclgrind` line; it goes on with
  // the next case meanwhile); 0: up to what is there.
  OclgrindReport OclgrindSince(const std::string& kernelDir, size_t outEnd = 0, size_t logEnd = 0) {
    OclgrindReport report;
    ParseOclgrindLog(NewText(logPath_, logRead_, logEnd), kernelDir, report);
    ParseInstructionCounts(NewText(outPath_, outRead_, outEnd), report);
    return report;
  }

  // Kills the worker (if it still runs) and says how it ended.
  std::string Finish(bool kill) {
    if (kill && !reaped_)
      Kill();
    while (!errClosed_ && !kill)
      errClosed_ = !Drain(err_, false);
    const int status = Reap();
    ::killpg(pid_, SIGKILL);  // anything the worker left behind in its group
    std::string how;
    if (WIFSIGNALED(status))
      how = fmt::format("the worker process was killed by signal {} (SIG{}, {})", WTERMSIG(status),
                        sigabbrev_np(WTERMSIG(status)), strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status))
      how = fmt::format("the worker process exited with status {}", WEXITSTATUS(status));
    const std::string tail = Tail();
    return tail.empty() ? how : how + "; it said: " + tail;
  }

 private:
  // Reads what is there; false at the end of the pipe. Stderr is forwarded as it comes.
  bool Drain(int fd, bool isReport) {
    char buf[4096];
    const ssize_t got = read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR)
      return true;
    if (got <= 0)
      return false;
    if (isReport) {
      lines_.append(buf, size_t(got));
    } else {
      (void)!write(2, buf, size_t(got));
      stderrTail_.append(buf, size_t(got));
      if (stderrTail_.size() > 4096)
        stderrTail_.erase(0, stderrTail_.size() - 4096);
    }
    return true;
  }
  // The last lines the worker wrote to stderr, on one line.
  std::string Tail() const {
    std::string t = stderrTail_;
    while (!t.empty() && (t.back() == '\n' || t.back() == ' '))
      t.pop_back();
    if (t.size() > 1500)
      t = "..." + t.substr(t.size() - 1500);
    for (char& c : t)
      if (c == '\n')
        c = ' ';
    return t;
  }
  // The file's text from offset `read` on (only whole lines); read moves past it.
  static std::string NewText(const std::string& path, size_t& read, size_t end) {
    std::ifstream in(path, std::ios::binary);
    if (!in || (end && end <= read))
      return "";
    in.seekg(std::streamoff(read));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (end && text.size() > end - read)
      text.resize(end - read);
    const size_t last = text.rfind('\n');
    text.resize(last == std::string::npos ? 0 : last + 1);
    read += text.size();
    return text;
  }
  // The worker and its process group.
  void Kill() {
    ::killpg(pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
  }
  int Reap() {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    return status;
  }

  pid_t pid_ = -1;
  int report_ = -1, err_ = -1;
  bool reaped_ = false, reportClosed_ = false, errClosed_ = false;
  std::string lines_, stderrTail_;
  std::string logPath_, outPath_;  // under --oclgrind
  size_t logRead_ = 0, outRead_ = 0;
};

Result Unfinished(const Job& job, const std::string& variant, const DeviceInfo& device,
                  Status status, const std::string& message) {
  ProblemSpec spec = job.SpecFor(variant);
  spec.localSize = job.task->LocalSize(variant, spec, device);
  Result r = NewResult(*job.task, variant, spec, device);
  r.status = status;
  r.message = message;
  return r;
}

}  // namespace

std::vector<Result> RunIsolated(const IsolationSettings& settings, const std::vector<Job>& jobs,
                                const DeviceInfo& device, const ProgressFn& progress,
                                const std::atomic<bool>& stop, Ceilings& ceilings) {
  size_t total = 0, index = 0;
  for (const auto& j : jobs)
    total += j.variants.size();
  bool wantBandwidth = settings.measureBandwidth;
  const double ceilingsLimitS = std::max(kCeilingsLimitS, settings.timeoutS);
  const bool oclgrind = !settings.oclgrindDir.empty();
  std::vector<Result> results;
  const auto deadlineFrom = [&](Clock::time_point t) -> std::optional<Clock::time_point> {
    if (settings.timeoutS <= 0)
      return std::nullopt;
    return t + std::chrono::duration_cast<Clock::duration>(
                   std::chrono::duration<double>(settings.timeoutS));
  };
  for (size_t k = 0; k < jobs.size() && !stop; ++k) {
    const Job& job = jobs[k];
    size_t next = 0;  // the job's next variant without a result
    while (next < job.variants.size() && !stop) {
      WorkerProcess worker(settings, k, next, wantBandwidth,
                           ceilings.timer.checked ? TimerText(ceilings.timer) : "");
      Progress p{0, total, &job, "", nullptr};
      bool begun = false, timedOut = false, restart = false, fresh = false;
      bool measuring = wantBandwidth;  // the ceilings first: no case's clock runs
      std::string ceilingsFailed;      // the worker's `ceilings-failed` reason
      size_t outEnd = 0, logEnd = 0;   // --oclgrind: where the case's output ends
      auto deadline = measuring ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                     std::chrono::duration<double>(ceilingsLimitS))
                                : deadlineFrom(Clock::now());
      while (auto line = worker.NextLine(deadline, stop, timedOut)) {
        if (line->rfind("timer ", 0) == 0) {  // checked once: later workers are told
          ceilings.timer = TimerFromText(line->substr(6));
        } else if (line->rfind("ceilings ", 0) == 0) {
          std::istringstream in(line->substr(9));
          in >> ceilings.readGBs >> ceilings.writeGBs >> ceilings.copyGBs >> ceilings.bufferBytes >>
              ceilings.near.readGBs >> ceilings.near.writeGBs >> ceilings.near.copyGBs >>
              ceilings.nearBufferBytes;
          measuring = false;
          deadline = deadlineFrom(Clock::now());
        } else if (line->rfind("ceilings-failed ", 0) == 0) {
          ceilingsFailed = line->substr(16);
          break;
        } else if (*line == "begin") {
          begun = true;
          p = Progress{++index, total, &job, job.variants[next], nullptr};
          if (progress)
            progress(p);
          deadline = deadlineFrom(Clock::now());
        } else if (line->rfind("oclgrind ", 0) == 0) {
          std::istringstream in(line->substr(9));
          in >> outEnd >> logEnd;
        } else if (line->rfind("result ", 0) == 0) {
          results.push_back(ResultFromJson(nlohmann::json::parse(line->substr(7))));
          SetUtilisation(results.back(), ceilings, device);
          if (oclgrind) {
            ApplyOclgrind(results.back(), worker.OclgrindSince(settings.kernelDir, outEnd, logEnd));
            fresh = !results.back().oclgrind->diagnostics.empty();
            outEnd = logEnd = 0;
          }
          p.result = &results.back();
          if (progress)
            progress(p);
          begun = false;
          ++next;
          deadline = deadlineFrom(Clock::now());
          if (fresh)
            break;
        } else if (*line == "restart") {  // it ended after an OpenCL error: a fresh one goes on
          restart = true;
        }
      }
      wantBandwidth = false;     // a worker that failed measuring them is not asked again
      if (measuring && !stop) {  // no case began: none is charged, a fresh worker runs them
        const std::string how = worker.Finish(/*kill=*/timedOut);
        if (settings.ceilingsNotMeasured)
          settings.ceilingsNotMeasured(
              !ceilingsFailed.empty() ? ceilingsFailed
              : timedOut
                  ? fmt::format("still running after {} s; the worker was stopped", ceilingsLimitS)
                  : how);
        continue;
      }
      if (stop || next == job.variants.size()) {
        worker.Finish(/*kill=*/stop.load());
        break;
      }
      if (restart && !begun) {
        worker.Finish(/*kill=*/false);
        continue;
      }
      if (fresh) {  // after Oclgrind's diagnostics: a fresh worker (and message count) goes on
        worker.Finish(/*kill=*/true);
        continue;
      }
      // The worker ended, or ran out of time, in the middle of variant `next`.
      const std::string how = worker.Finish(/*kill=*/timedOut);
      if (!begun) {
        p = Progress{++index, total, &job, job.variants[next], nullptr};
        if (progress)
          progress(p);
      }
      results.push_back(
          timedOut ? Unfinished(job, job.variants[next], device, Status::Timeout,
                                fmt::format("still running after {} s; the worker was stopped",
                                            settings.timeoutS))
                   : Unfinished(job, job.variants[next], device, Status::Error, how));
      if (oclgrind)  // what Oclgrind said before the worker ended
        ApplyOclgrind(results.back(), worker.OclgrindSince(settings.kernelDir));
      p.result = &results.back();
      if (progress)
        progress(p);
      ++next;
    }
  }
  return results;
}

}  // namespace rsb
