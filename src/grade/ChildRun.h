// Child runs: every case group of a rubric item runs in a child process of the suite's binary
// (or of one built with a hand-in's task sources), `reduce-scan-bench serve` given the one request
// of a command line `reduce-scan-bench --check --kernels K ...` (src/run/Serve.h),
// under a deadline; whatever the child does (a wrong result, a crash, a hang, a kernel that does
// not compile), every case of the group gets an outcome.
#pragma once

#include "grade/Rubric.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rsb::grade {

class Residents;

// --trace FILE: a CSV line per child run, written as each ends: start (seconds since the trace
// began), seconds, code (the hand-in's work folder name, or "suite"), run (list, timed, check,
// isolated, oclgrind), where (resident or process), status (the exit status, or crashed,
// timeout, interrupted, not started).
class RunTrace {
 public:
  explicit RunTrace(const std::string& path);  // throws DeviceError if it cannot be written
  // Each line rewrites the file whole (Files.h); a failure is kept for Finish.
  void Add(double startS, double seconds, const std::string& code, const std::string& run,
           bool resident, const std::string& status);
  double Now() const;
  // The file written once more, from the grading thread: DeviceError naming it where it cannot.
  void Finish();

 private:
  std::mutex mu_;
  std::string path_, text_;
  std::chrono::steady_clock::time_point begin_;
};

// What every child run of a grading run shares.
struct ChildSettings {
  std::string platform, device;  // --platform, --device as given to grade ("" when not)
  uint64_t seed = kDefaultSeed;
  std::string workDir;  // where the children's result files go
  // --device-lock for every child that uses the device (a GPU's: only timed loops have it alone,
  // DeviceLock.h); empty: the grader's own turns decide (a CPU device, where builds compete).
  std::string deviceLock;
  // --resident-runs: where runs in one process of the suite's own binary go (Resident.h); null:
  // every run is a child process.
  Residents* residents = nullptr;
  std::string residentBinary;  // the binary the residents run (the suite's)
  RunTrace* trace = nullptr;   // --trace (null: none)
  // --check-platform, --check-device: where the runs that only validate go (lists, groups,
  // cases one by one); the timed runs go to platform and device.
  std::string checkPlatform, checkDevice;
  // The device's timer verdict once the grader's first timed run found it usable ("usable",
  // told to the timed runs in their requests' "timer", so that each need not check it again; "":
  // not known, each timed run checks it).
  std::string timerVerdict;
  double speedSeconds = 0;  // --speed-seconds (0: SpeedRoundSeconds's default)
};

// The code a child run runs: a binary and a kernels folder, started through `wrapper` (a
// sandbox's command line, Sandbox.h; empty: directly), writing its results into workDir (""
// the grading run's).
struct Code {
  std::string binary, kernels;
  std::vector<std::string> wrapper;
  std::string workDir;
};

// A child process of one run: the code's wrapper and binary as `reduce-scan-bench serve`, and its
// one request (src/run/Serve.h), on its stdin: the run's command line args (the code's wrapper
// first, then its binary) and the fields told beside it ("timer", "turns").
struct ServeChild {
  std::vector<std::string> command;
  std::string input;
};
ServeChild OneRequest(const Code& code, const std::vector<std::string>& args,
                      const nlohmann::json& fields);

// What a child run does with its cases: validate them, time them, or validate them under
// Oclgrind (races, out-of-bounds accesses, instruction counts). TimedDeviceCheck validates on the
// device that times (--platform) where validating runs go elsewhere (--check-platform): it builds
// a speed case's programs there before the timed runs, which have the device alone.
// TimedInTurns: a timed run that takes turns with another (RunTimedInTurns).
enum class RunKind { Check, Timed, Oclgrind, TimedDeviceCheck, TimedInTurns };
// How long a timed child run of `kind` times its case (--time-budget): --speed-seconds where
// given, else a second in turns (the two children's runs alternate within it), 0.3 s alone.
double SpeedRoundSeconds(const ChildSettings& s, RunKind kind);

struct CaseOutcome {
  std::string label, status, message;
  bool wholeRun = false;  // the child run ended before any result: the message is the run's
  std::optional<double> medianMs;          // a timed run's median
  std::vector<double> samplesMs;           // ... and its timed runs, in order
  std::string timer;                       // the clock that timed it ("events", "host")
  std::optional<nlohmann::json> oclgrind;  // an Oclgrind run's diagnostics and counts
};

struct GroupRun {
  std::vector<CaseOutcome> cases;
  std::optional<nlohmann::json> results;  // the child's JSON, when usable
  double seconds = 0;                     // the child's wall time
  bool timedOut = false;
  // Why this outcome is of a second run with the device to itself (its first timed out or failed
  // with a device error while another run beside it hung: Device, Context.h); "" where it is not.
  std::string ranAlone;
};

// How a child runs its cases: all in the child's own process (fast: one OpenCL start-up and
// one build of each program for the whole group), or each in a worker process of its own
// (`--isolate`, Worker.h: a crash, an OpenCL error or memory a kernel corrupted stays that case's).
// Oclgrind runs are always isolated.
enum class Isolation { Shared, PerCase };

// Runs one case group at one local size in a child killed after timeoutS seconds, and gives
// every case of it an outcome (a case the child did not reach in time: `timeout`).
GroupRun RunGroup(const ChildSettings& s, const Code& code, const Item& it, const CaseGroup& g,
                  const std::string& localSize, RunKind kind, double timeoutS,
                  Isolation isolation = Isolation::PerCase);

// The speed case `g` of two codes (the suite's and a hand-in's) in two child runs at once whose
// timed runs alternate, a's first (RunInTurns, Subprocess.h): each run's neighbour ran on the
// machine as it was just before. Each child under its own deadline; the outcomes as RunGroup's,
// a's first.
std::pair<GroupRun, GroupRun> RunTimedInTurns(const ChildSettings& s, const Code& a, const Code& b,
                                              const Item& it, const CaseGroup& g,
                                              const std::string& localSize, double timeoutA,
                                              double timeoutB);

// One case of a case list: an item's case at one local size ("auto" or a number).
struct ListedCase {
  const Item* item = nullptr;
  CaseSpec spec;
  std::string localSize;
};

// Runs a list of cases of one task (of several items, case groups and local sizes) in one
// child, all in its own process (`--cases FILE --no-isolate`): the fast path of a hand-in's
// correctness runs (Grade.cpp). Every case is validated validateRuns times; an outcome per case,
// in the list's order, as RunGroup gives them.
GroupRun RunCaseList(const ChildSettings& s, const Code& code, const std::vector<ListedCase>& cases,
                     size_t validateRuns, double timeoutS);

}  // namespace rsb::grade
