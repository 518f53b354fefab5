#include "engine/Worker.h"

#include "engine/Case.h"
#include "engine/Result.h"
#include "platform/Errors.h"
#include "platform/Subprocess.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
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

// How a worker starts: where (job, skip: its first case), how far (scope), what it measures first
// (bandwidth: the ceilings), the device's timer verdict once known (TimerText; "": not known
// yet), the programs the run knows not to build (BuildKey), and locate: a worker that runs a case
// again under Oclgrind, unoptimised, for its diagnostics' lines (OclgrindEnvironment); what it
// writes to stderr is kept, not forwarded.
struct WorkerStart {
  size_t job = 0, skip = 0;
  const char* scope = "job";
  bool bandwidth = false;
  std::string timer;
  std::vector<std::string> knownBuildFailures;
  bool locate = false;
};

// An argument as a request carries it: a string, or where it is not UTF-8 (a path's bytes), the
// array of its bytes.
nlohmann::json RequestArgument(const std::string& a) {
  try {
    nlohmann::json(a).dump();  // throws where a is not UTF-8
    return a;
  } catch (const nlohmann::json::type_error&) {
    return std::vector<unsigned char>(a.begin(), a.end());
  }
}

// The worker's request to `serve` (src/run/Serve.h), one line: the run's own arguments, and
// which job and variants it runs, on which of the run's devices.
std::string WorkerRequest(const IsolationSettings& settings, const WorkerStart& w) {
  nlohmann::json worker = {{"job", w.job},
                           {"skip", w.skip},
                           {"scope", w.scope},
                           {"device", settings.device},
                           {"bandwidth", w.bandwidth},
                           {"build_failed", w.knownBuildFailures}};
  if (!w.timer.empty())
    worker["timer"] = w.timer;
  return ServeRequest(settings.command, {{"worker", worker}});
}

// Under --oclgrind: the startup environment with Oclgrind's log in logPath and LC_ALL=C
// (Oclgrind prints the counts in the environment's locale: 10,216 in en_US); a worker that
// locates diagnostics (locate) has its programs built unoptimised (kOclgrindLocateOptions added
// to OCLGRIND_BUILD_OPTIONS).
std::vector<std::string> OclgrindEnvironment(const std::string& logPath, bool locate) {
  const std::string optionsVar = "OCLGRIND_BUILD_OPTIONS=";
  std::vector<std::string> env;
  std::string options = kOclgrindLocateOptions;
  for (char* const* e = StartupEnvironment(); *e; ++e) {
    const std::string v = *e;
    if (locate && v.rfind(optionsVar, 0) == 0)
      options = v.substr(optionsVar.size()) + " " + options;
    else if (v.rfind("OCLGRIND_LOG=", 0) != 0 && v.rfind("LC_ALL=", 0) != 0)
      env.push_back(v);
  }
  env.push_back("OCLGRIND_LOG=" + logPath);
  env.push_back("LC_ALL=C");
  if (locate)
    env.push_back(optionsVar + options);
  return env;
}

// One worker process: its pid, the pipe it reports on and its stderr (forwarded, tail kept).
class WorkerProcess {
 public:
  WorkerProcess(const IsolationSettings& settings, const WorkerStart& start)
      : forward_(!start.locate) {
    static size_t started = 0;  // names each worker's Oclgrind files
    if (!settings.oclgrindDir.empty()) {
      logPath_ = fmt::format("{}/worker-{}.log", settings.oclgrindDir, started);
      outPath_ = fmt::format("{}/worker-{}.out", settings.oclgrindDir, started);
      ++started;
    }
    int report[2], err[2], request[2];
    if (pipe2(report, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, request) != 0)  // no SIGPIPE
      throw DeviceError(fmt::format("cannot make a pipe for a worker: {}", std::strerror(errno)));
    // Nothing of this process but the pipes (the request on 0, the report on 3, stderr on 2) and
    // the environment
    // as it was at start (SpawnChild): the OpenCL ICD loader cuts OCL_ICD_FILENAMES in place
    // (strtok), and a worker given the cut variable found no NVIDIA platform on the H100 machine,
    // whose environment lists the NVIDIA ICD there.
    ChildSetup setup;
    setup.program = "/proc/self/exe";
    setup.argv = {settings.command.at(0), "serve"};
    setup.fds = {{request[0], 0}, {report[1], 3}, {err[1], 2}};
    setup.closeFrom = 4;
    // Under --oclgrind: Oclgrind's log to a file of this worker's, stdout (the instruction
    // counts) to another.
    std::vector<std::string> env;
    std::vector<char*> envp;
    if (!logPath_.empty()) {
      env = OclgrindEnvironment(logPath_, start.locate);
      for (auto& e : env)
        envp.push_back(e.data());
      envp.push_back(nullptr);
      setup.envp = envp.data();
      setup.files = {{1, outPath_, O_WRONLY | O_CREAT | O_TRUNC}};
    }
    int failed = 0;
    pid_ = SpawnChild(setup, failed);
    close(request[0]);
    close(report[1]);
    close(err[1]);
    if (pid_ > 0)  // a worker that ends before reading it is reported as it ends
      WriteAll(request[1], WorkerRequest(settings, start));
    close(request[1]);
    report_ = report[0];
    err_ = err[0];
    if (pid_ < 0) {
      close(report_);
      close(err_);
      throw DeviceError(fmt::format("cannot start a worker: {}", std::strerror(failed)));
    }
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
                                      const std::function<bool()>& stop, bool& timedOut) {
    timedOut = false;
    for (;;) {
      const size_t nl = lines_.find('\n');
      if (nl != std::string::npos) {
        std::string line = lines_.substr(0, nl);
        lines_.erase(0, nl + 1);
        return line;
      }
      if (reportClosed_ || stop())
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

  // Under --oclgrind: each message the worker added to its Oclgrind log since the last call.
  std::vector<OclgrindDiagnostic> OclgrindMessagesSince(const std::string& kernelDir) {
    return OclgrindMessages(NewText(logPath_, logRead_, 0), kernelDir);
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
      if (forward_)
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
  void Kill() { KillChild(pid_); }
  int Reap() {
    const int status = ReapChild(pid_);
    reaped_ = true;
    return status;
  }

  bool forward_ = true;  // stderr forwarded to this process's
  pid_t pid_ = -1;
  int report_ = -1, err_ = -1;
  bool reaped_ = false, reportClosed_ = false, errClosed_ = false;
  std::string lines_, stderrTail_;
  std::string logPath_, outPath_;  // under --oclgrind
  size_t logRead_ = 0, outRead_ = 0;
};

Result Unfinished(const Job& job, const std::string& variant, const DeviceInfo& device,
                  Status status, const std::string& message) {
  const Case c = ResolveCase(*job.task, variant, job.SpecFor(variant), device);
  Result r = NewResult(c, device);
  r.status = status;
  r.message = message;
  return r;
}

// Where a worker starts, and how far it goes (its request's scope).
enum class Scope { Job, Rest, Case };

const char* ScopeName(Scope s) {
  return s == Scope::Rest ? "rest" : s == Scope::Case ? "case" : "job";
}

// One isolated run: its workers, and the results so far. A worker starts at a case (job,
// variant) and runs to the end of its scope; the run follows it case by case.
class IsolatedRun {
 public:
  IsolatedRun(const IsolationSettings& settings, const std::vector<Job>& jobs,
              const DeviceInfo& device, const ProgressFn& progress,
              const std::function<bool()>& stop, Ceilings& ceilings)
      : settings_(settings),
        jobs_(jobs),
        device_(device),
        progress_(progress),
        stop_(stop),
        ceilings_(ceilings),
        wantBandwidth_(settings.measureBandwidth),
        ceilingsLimitS_(std::max(kCeilingsLimitS, settings.timeoutS)) {
    for (const auto& j : jobs)
      total_ += j.variants.size();
  }

  // Every case: a worker after another until each has a result (or stop is set). Per problem:
  // a worker per job. Shared: one worker for all; after a crash the case runs again alone, in a
  // worker of its own, which decides it; then a fresh worker goes on from the next case.
  void RunAll() {
    Position at = Skip({0, 0});
    Scope scope = settings_.perProblem ? Scope::Job : Scope::Rest;
    while (at.job < jobs_.size() && !stop_()) {
      at = PastKnownFailures(at, scope);
      if (at.job >= jobs_.size())
        break;
      WorkerProcess worker(settings_, Start(at, scope, wantBandwidth_));
      Round r(at, scope);
      r.measuring = wantBandwidth_;  // the ceilings first: no case's clock runs
      r.deadline = r.measuring ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                    std::chrono::duration<double>(ceilingsLimitS_))
                               : DeadlineFrom(Clock::now());
      while (auto line = worker.NextLine(r.deadline, stop_, r.timedOut))
        if (!OnLine(worker, r, *line))
          break;
      wantBandwidth_ = false;  // a worker that failed measuring them is not asked again
      scope = EndWorker(worker, r);
      at = r.at;
    }
  }

  std::vector<Result> results;

 private:
  struct Position {
    size_t job = 0, variant = 0;
  };
  // What one worker did so far.
  struct Round {
    Round(Position start, Scope s) : at(start), first(start), scope(s) {}
    Position at;     // the case in progress, or the next one
    Position first;  // where the worker started
    Scope scope;
    bool begun = false, timedOut = false, restart = false, fresh = false, measuring = false;
    std::string ceilingsFailed;     // the worker's `ceilings-failed` reason
    size_t outEnd = 0, logEnd = 0;  // --oclgrind: where the case's output ends
    std::optional<Clock::time_point> deadline;
  };

  // The first case at or after p (jobs without variants have none).
  Position Skip(Position p) const {
    while (p.job < jobs_.size() && p.variant >= jobs_[p.job].variants.size())
      p = {p.job + 1, 0};
    return p;
  }
  WorkerStart Start(Position at, Scope scope, bool bandwidth) const {
    WorkerStart w{at.job,
                  at.variant,
                  ScopeName(scope),
                  bandwidth,
                  ceilings_.timer.checked ? TimerText(ceilings_.timer) : "",
                  {}};
    for (const auto& failure : buildFailures_)
      w.knownBuildFailures.push_back(failure.first);
    return w;
  }

  // The case at p as the run's known build failure (buildFailures_) reports it, without a
  // worker; nullopt where its program is not known to fail.
  std::optional<Result> KnownFailure(Position p) const {
    const Job& job = jobs_[p.job];
    const std::string& variant = job.variants[p.variant];
    Result r;
    try {
      const Case c = ResolveCase(*job.task, variant, job.SpecFor(variant), device_);
      if (!c.Runs())  // a case the worker decides (a skip)
        return std::nullopt;
      r = NewResult(c, device_);
      r.status = Status::Error;
      r.kernelOptions = c.kernelOptions;
      r.cost = c.cost;
    } catch (const std::exception&) {
      return std::nullopt;
    }
    const auto it = buildFailures_.find(BuildKey(r));
    if (it == buildFailures_.end())
      return std::nullopt;
    r.message = it->second.first;
    r.buildLog = it->second.second;
    if (!settings_.oclgrindDir.empty())  // as a worker's case: nothing ran under Oclgrind
      ApplyOclgrind(r, OclgrindReport());
    return r;
  }

  // From p on, the cases whose program the run knows not to build, each reported from the first
  // failure without starting a worker; where the next case to run is.
  Position PastKnownFailures(Position p, Scope scope) {
    if (scope == Scope::Case || buildFailures_.empty())
      return p;
    while (p.job < jobs_.size()) {
      const std::optional<Result> known = KnownFailure(p);
      if (!known)
        break;
      Report(Progress{++index_, total_, &jobs_[p.job], jobs_[p.job].variants[p.variant], nullptr});
      results.push_back(*known);
      Report(Progress{index_, total_, &jobs_[p.job], jobs_[p.job].variants[p.variant],
                      &results.back()});
      p = Skip({p.job, p.variant + 1});
    }
    return p;
  }

  // A build failure joins the run's known ones; a case a worker reported as a known one takes
  // the first failure's message and log.
  void NoteBuildFailure(Result& r) {
    if (r.status != Status::Error)
      return;
    const std::string key = BuildKey(r);
    if (!r.buildLog.empty()) {
      buildFailures_.emplace(key, std::make_pair(r.message, r.buildLog));
    } else if (const auto it = buildFailures_.find(key);
               it != buildFailures_.end() && r.message == kKnownBuildFailure) {
      r.message = it->second.first;
      r.buildLog = it->second.second;
    }
  }

  // Whether a worker of this round has run every case of its scope.
  bool ScopeDone(const Round& r) const {
    if (r.at.job >= jobs_.size())
      return true;
    if (r.scope == Scope::Case)
      return r.at.job != r.first.job || r.at.variant != r.first.variant;
    if (r.scope == Scope::Job)
      return r.at.job != r.first.job;
    return false;
  }
  const Job& JobAt(const Round& r) const { return jobs_[r.at.job]; }
  const std::string& VariantAt(const Round& r) const {
    return jobs_[r.at.job].variants[r.at.variant];
  }

  std::optional<Clock::time_point> DeadlineFrom(Clock::time_point t) const {
    if (settings_.timeoutS <= 0)
      return std::nullopt;
    return t + std::chrono::duration_cast<Clock::duration>(
                   std::chrono::duration<double>(settings_.timeoutS));
  }

  void Report(const Progress& p) const {
    if (progress_)
      progress_(p);
  }

  // One protocol line; false: this worker is done with (ceilings-failed, or a fresh one after
  // Oclgrind's diagnostics).
  bool OnLine(WorkerProcess& worker, Round& r, const std::string& line) {
    if (line.rfind("timer ", 0) == 0) {             // checked once: later workers are told
      const TimerMode mode = ceilings_.timer.mode;  // the run's --timer, not the worker's to say
      ceilings_.timer = TimerFromText(line.substr(6));
      ceilings_.timer.mode = mode;
    } else if (line.rfind("ceilings ", 0) == 0) {
      std::istringstream in(line.substr(9));
      in >> ceilings_.readGBs >> ceilings_.writeGBs >> ceilings_.copyGBs >> ceilings_.bufferBytes >>
          ceilings_.near.readGBs >> ceilings_.near.writeGBs >> ceilings_.near.copyGBs >>
          ceilings_.nearBufferBytes;
      r.measuring = false;
      r.deadline = DeadlineFrom(Clock::now());
    } else if (line.rfind("ceilings-failed ", 0) == 0) {
      r.ceilingsFailed = line.substr(16);
      return false;
    } else if (line == "begin") {
      r.begun = true;
      if (!confirming_)  // a case run again alone was reported when it began the first time
        Report(Progress{++index_, total_, &JobAt(r), VariantAt(r), nullptr});
      r.deadline = DeadlineFrom(Clock::now());
    } else if (line.rfind("oclgrind ", 0) == 0) {
      std::istringstream in(line.substr(9));
      in >> r.outEnd >> r.logEnd;
    } else if (line.rfind("result ", 0) == 0) {
      return OnResult(worker, r, line.substr(7));
    } else if (line == "restart") {  // it ended after an OpenCL error: a fresh one goes on
      r.restart = true;
    }
    return true;
  }

  bool OnResult(WorkerProcess& worker, Round& r, const std::string& json) {
    results.push_back(
        ResultFromJson(nlohmann::json::parse(json), FieldNames(JobAt(r).task->Parameters())));
    NoteBuildFailure(results.back());
    SetUtilisation(results.back(), ceilings_, device_);
    if (!settings_.oclgrindDir.empty()) {
      ApplyOclgrind(results.back(),
                    Located(r.at, worker.OclgrindSince(settings_.kernelDir, r.outEnd, r.logEnd)));
      r.fresh = !results.back().oclgrind->diagnostics.empty();
      r.outEnd = r.logEnd = 0;
    }
    if (confirming_) {  // the case that crashed a shared worker, run again alone
      results.back().message = AloneNote(results.back());
      confirming_.reset();
    }
    Report(Progress{index_, total_, &JobAt(r), VariantAt(r), &results.back()});
    r.begun = false;
    r.at = Skip({r.at.job, r.at.variant + 1});
    r.deadline = DeadlineFrom(Clock::now());
    return !r.fresh && !ScopeDone(r);
  }

  // The case's Oclgrind report, where a diagnostic has no line (the optimiser merged two
  // accesses) with the lines of the same case run again unoptimised, in a worker of its own
  // (kOclgrindLocateOptions; its counts are not taken).
  OclgrindReport Located(const Position& at, OclgrindReport report) {
    if (!NeedsLocating(report) || stop_())
      return report;
    WorkerStart start = Start(at, Scope::Case, false);
    start.locate = true;
    WorkerProcess locator(settings_, start);
    bool timedOut = false;
    const auto deadline = DeadlineFrom(Clock::now());
    while (const auto line = locator.NextLine(deadline, stop_, timedOut))
      if (line->rfind("result ", 0) == 0)
        break;
    locator.Finish(/*kill=*/true);
    LocateFrom(report, locator.OclgrindMessagesSince(settings_.kernelDir), settings_.kernelDir);
    return report;
  }

  // A case that crashed a shared worker and then ran alone: its own result, and what happened.
  std::string AloneNote(const Result& alone) const {
    const std::string note =
        fmt::format("run alone after the process that ran it with the cases before it ended ({})",
                    *confirming_);
    if (alone.status == Status::Passed || alone.status == Status::Untimed)
      return (alone.message.empty() ? "" : alone.message + "; ") + "passed when " + note +
             ": an earlier case may have damaged that process's memory (--isolate runs each "
             "problem in a process of its own)";
    return alone.message + " (" + note + ")";
  }

  // The worker's end: why it ended decides where the next one starts, and its scope.
  Scope EndWorker(WorkerProcess& worker, Round& r) {
    const Scope shared = settings_.perProblem ? Scope::Job : Scope::Rest;
    if (r.measuring && !stop_()) {  // no case began: none is charged, a fresh worker runs them
      const std::string how = worker.Finish(/*kill=*/r.timedOut);
      if (settings_.ceilingsNotMeasured)
        settings_.ceilingsNotMeasured(
            !r.ceilingsFailed.empty() ? r.ceilingsFailed
            : r.timedOut
                ? fmt::format("still running after {} s; the worker was stopped", ceilingsLimitS_)
                : how);
    } else if (stop_() || ScopeDone(r)) {
      worker.Finish(/*kill=*/stop_());
    } else if (r.restart && !r.begun) {
      worker.Finish(/*kill=*/false);
    } else if (r.fresh) {  // after Oclgrind's diagnostics: a fresh worker (and message count)
      worker.Finish(/*kill=*/true);
    } else if (r.scope == Scope::Rest && !r.timedOut) {
      // A shared worker ended in the middle of a case: that case alone decides.
      confirming_ = worker.Finish(/*kill=*/false);
      return Scope::Case;
    } else {
      Charge(worker, r);
    }
    return shared;
  }

  // The worker ended, or ran out of time, in the middle of the case at r.at.
  void Charge(WorkerProcess& worker, Round& r) {
    const std::string how = worker.Finish(/*kill=*/r.timedOut);
    const Job& job = JobAt(r);
    const std::string& variant = VariantAt(r);
    if (!r.begun && !confirming_)
      Report(Progress{++index_, total_, &job, variant, nullptr});
    results.push_back(
        r.timedOut ? Unfinished(job, variant, device_, Status::Timeout,
                                fmt::format("still running after {} s; the worker was stopped",
                                            settings_.timeoutS))
                   : Unfinished(job, variant, device_, Status::Error, how));
    if (!settings_.oclgrindDir.empty())  // what Oclgrind said before the worker ended
      ApplyOclgrind(results.back(), Located(r.at, worker.OclgrindSince(settings_.kernelDir)));
    if (confirming_) {
      results.back().message +=
          *confirming_ == how
              ? std::string(" (alone in a process of its own, as with the cases before it)")
              : fmt::format(" (alone in a process of its own; with the cases before it: {})",
                            *confirming_);
      confirming_.reset();
    }
    Report(Progress{index_, total_, &job, variant, &results.back()});
    r.at = Skip({r.at.job, r.at.variant + 1});
  }

  const IsolationSettings& settings_;
  const std::vector<Job>& jobs_;
  size_t total_ = 0;
  const DeviceInfo& device_;
  const ProgressFn& progress_;
  const std::function<bool()>& stop_;
  Ceilings& ceilings_;
  size_t index_ = 0;
  bool wantBandwidth_;
  const double ceilingsLimitS_;
  // Set while the case that ended a shared worker runs again alone: how that worker ended.
  std::optional<std::string> confirming_;
  // The programs that did not build (BuildKey): the first failure's message and build log.
  std::map<std::string, std::pair<std::string, std::string>> buildFailures_;
};

}  // namespace

std::string ServeRequest(const std::vector<std::string>& argv, nlohmann::json fields) {
  nlohmann::json args = nlohmann::json::array();
  for (const std::string& a : argv)
    args.push_back(RequestArgument(a));
  fields["argv"] = args;
  return fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::vector<Result> RunIsolated(const IsolationSettings& settings, const std::vector<Job>& jobs,
                                const DeviceInfo& device, const ProgressFn& progress,
                                const std::function<bool()>& stop, Ceilings& ceilings) {
  IsolatedRun run(settings, jobs, device, progress, stop, ceilings);
  run.RunAll();
  return std::move(run.results);
}

}  // namespace rsb
