// The grader's options as parsed (Options.h): what every part of grading reads, apart from how
// the command line is parsed and checked.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace rsb::grade {

struct GradeOptions {
  std::vector<std::string> handins;
  std::string rubric, outputDir = "grades", platform, device, handinKit, suiteSource;
  // --check-platform, --check-device: where the runs that only validate go (every child run but
  // the timed ones); unset: --platform and --device's. Either given: the other defaults to "" (the
  // platform's first device) and --platform respectively.
  std::optional<std::string> checkPlatform, checkDevice;
  std::vector<std::string> items;  // --items: grade only these rubric items
  std::string sandbox = "bwrap";   // --sandbox: bwrap (Sandbox.h) or none
  std::string format;              // --format: one of GradeFormats() (Engines.h), or "" (none)
  double timeoutS = 60, buildTimeoutS = 120;
  size_t jobs = 0;  // --jobs: hand-ins graded at once (0: the cores)
  // --speed-alone: what of a timed child run has the device alone: "run" (the whole child run),
  // "loop" (its timed loops, through a device lock), "auto" (run on a CPU device, else loop).
  std::string speedAlone = "auto";
  // --speed-seconds: how long each speed round times (0: the default, SpeedRoundSeconds).
  double speedSeconds = 0;
  // --resident-runs: runs in one process of the suite's binary go to long-lived processes that
  // keep their OpenCL context (Resident.h): "on", "off", "auto" (on where the children share a
  // device lock: a GPU's; a CPU device's contexts cost little).
  std::string residentRuns = "auto";
  std::string trace;  // --trace FILE: a line per child run (ChildRun.h, RunTrace)
  // --kernel-cache DIR: one compiled-kernel cache for every child run (trusted hand-ins only);
  // empty: the suite's runs and each hand-in get a cache of their own, removed with them.
  std::string kernelCache;
  size_t shardIndex = 1, shardCount = 1;  // --shard K/N (1-based)
  bool quiet = false;
};

}  // namespace rsb::grade
