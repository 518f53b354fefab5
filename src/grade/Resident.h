// Resident child runs (`--resident-runs`): where the grader would start a child process of the
// suite's own binary for a run in one process (a hand-in's list of cases, a timed run, the
// suite's own reference runs), the run goes to a long-lived `reduce-scan-bench serve` process
// instead (src/run/Serve.h), which keeps its OpenCL context from run to run. A process per run
// costs its contexts, and NVIDIA's driver (580, H100) starts them one at a time, about 0.4 s a
// process, machine-wide: 16 child runs starting at once wait 6 s (docs/BENCHMARKS.md, "Grading
// throughput").
//
// What a run in a resident sees is what a child process would: the same command line, its
// working folder, its stdout and stderr (captured), its exit status, the same deadline. A
// resident that crashes, hangs past the deadline or ends a run with an OpenCL error (exit status
// other than 0 or 1) is killed, and that run gets the verdict a child process would have
// (crashed, timeout, its exit status); the next run starts a fresh resident. A group run again
// case by case (isolated) becomes a run per case (ChildRun.cpp, RunCasesInResidents), a crash
// worded as an isolated run's worker says it. Oclgrind runs, host code a hand-in built, any
// run of a sandboxed hand-in (--sandbox bwrap) and the timed runs in turns (a CPU device's speed
// rounds, TimedTurns.h) stay child processes.
//
// Trust: residents serve the whole class from one process each, outside any sandbox, so only the
// suite's own binary runs there; a hand-in brings OpenCL C only. On a GPU that code runs on the
// device, not in the resident's memory; on a CPU device (pocl) it runs inside the resident, which
// is why `auto` keeps them to a GPU.
#pragma once

#include "platform/Subprocess.h"

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace rsb::grade {

class Residents {
 public:
  // command: how a resident starts (a wrapper, the suite's binary, "serve"); workDir: its
  // working folder and where the runs' stdout and stderr are captured.
  Residents(std::vector<std::string> command, std::string workDir);
  ~Residents();  // every resident killed
  Residents(const Residents&) = delete;
  Residents& operator=(const Residents&) = delete;

  // Runs argv (argv[0] the suite's binary) in an idle resident, or a new one, its request with
  // `fields` too ("timer", Serve.h): RunProcess's answer for the same command line (Subprocess.h),
  // out and err captured.
  ProcessResult Run(const std::vector<std::string>& argv, double timeoutS, const std::string& dir,
                    const nlohmann::json& fields = nlohmann::json::object());

  size_t Started() const;  // residents started so far (for the class's summary line)

 private:
  struct Server {
    pid_t pid = -1;
    int fd = -1;  // requests out, answers in (a socket pair)
    size_t runs = 0;
  };
  bool Start(Server& s, std::string& error);
  static void Retire(Server& s, ProcessResult* r);

  std::vector<std::string> command_;
  std::string workDir_;
  mutable std::mutex mu_;
  std::vector<Server> idle_;
  size_t started_ = 0;
};

}  // namespace rsb::grade
