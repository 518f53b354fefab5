// Isolated runs: the cases run in a worker process (this same program's `serve`, given one
// request with a "worker" field: src/run/Serve.h) that the run can kill. OpenCL cannot cancel a
// kernel, and a kernel that writes out of bounds may kill its process or break its context: in a
// worker, either is that case's `timeout` or `error`, and a new worker goes on with the cases after
// it. Shared (the default): one worker runs every case; where it ends in the middle of a case, that
// case runs again alone in a worker of its own, whose outcome is the case's (a crash that an
// earlier case's damage caused then reads as such), and a fresh worker goes on from the next
// case; a case that times out is charged at once (a second try would cost another timeout).
// Per problem (--isolate): a worker per job, a fresh one after a case that ended it.
//
// Protocol, one line per message on a pipe (not stdout: a kernel's printf goes there):
//   timer <verdict>      the device's profiling timer (TimerText), before `ceilings`, when the
//                        worker was asked to measure them or checked the timer itself (no
//                        timer given); later workers get it as their request's timer
//   ceilings <read> <write> <copy> <bytes> <near read> <near write> <near copy> <near bytes>
//                        the memory ceilings (GB/s) and their buffer sizes, when the worker
//                        was asked to measure them (before its first case)
//   ceilings-failed <why>
//                        instead, where measuring them failed; the cases go on without them
//   begin                a case starts (its clock starts here); the cases come in order, from
//                        the request's job/skip to the end of its scope: job (that job's
//                        variants), rest (every job after it too) or case (that one)
//   result <json>        a case ended: ResultToJson of its result
//   restart              the worker ends after a case's OpenCL error (its context may be
//                        broken): a new worker goes on with the job's next variant
//   oclgrind <out> <log> under --oclgrind, just before `result`: the sizes of its stdout file
//                        (the instruction counts) and its Oclgrind log when the case ended;
//                        what lies before them and after the last case's is this case's
// A worker flushes its stdout before each `result`; its last line is serve's answer, {"exit": N}.
#pragma once

#include "engine/Runner.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace rsb {

struct IsolationSettings {
  std::vector<std::string> command;  // this program and the run's own arguments
  double timeoutS = 0;               // per case (0: none)
  bool perProblem = false;           // --isolate: a worker per job (else one for all)
  // The first worker measures the memory ceilings before its first case, under a limit of its
  // own (kCeilingsLimitS, or timeoutS where longer), not any case's: a worker that exceeds it or
  // ends first is stopped, ceilingsNotMeasured (below) gets why, once, and a fresh worker runs
  // the cases without them.
  bool measureBandwidth = false;
  // --oclgrind (Oclgrind.h): a folder for each worker's Oclgrind log and stdout (the
  // instruction counts); what a worker adds to them during a case is that case's, recorded in
  // its result (ApplyOclgrind). After a case with a diagnostic a fresh worker takes the job's
  // next variant (Oclgrind stops reporting after 1000 messages a process). Empty: not under
  // Oclgrind.
  std::string oclgrindDir;
  std::string kernelDir;  // where the kernels' files are (a diagnostic's file name)
  std::function<void(const std::string&)> ceilingsNotMeasured;
  size_t device = 0;  // which of the run's devices (--device all: their order)
};

// Seconds the ceilings' measurement may take in a worker (12 streams of kCeilingStreamBudgetS
// each, their warm-up, the buffers' set-up and Bandwidth.cl's build take a few seconds).
constexpr double kCeilingsLimitS = 120;

// Runs every job's variants in workers; progress as Runner::Run. `ceilings` gets the memory
// ceilings when asked for (unknown, zero, where not measured). Once stop() reads true (asked at
// least every 0.2 s) it kills the worker in progress (its process group) and returns.
std::vector<Result> RunIsolated(const IsolationSettings& settings, const std::vector<Job>& jobs,
                                const DeviceInfo& device, const ProgressFn& progress,
                                const std::function<bool()>& stop, Ceilings& ceilings);

// A timer verdict on one line and back (the protocol's `timer` line, a `serve` request's "timer"):
// "usable", or the reason it is unusable.
std::string TimerText(const TimerVerdict& v);
TimerVerdict TimerFromText(const std::string& text);

// A `serve` request (src/run/Serve.h), one line: the command line argv (each argument a string,
// or the array of its bytes where it is not UTF-8) and `fields` beside it (e.g. "timer", "turns",
// "worker"; an object).
std::string ServeRequest(const std::vector<std::string>& argv, nlohmann::json fields);

// Worker side: writes one protocol line (with its newline) to fd; throws DeviceError if the
// pipe is gone.
void WorkerSend(int fd, const std::string& line);

}  // namespace rsb
