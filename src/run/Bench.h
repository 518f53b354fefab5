// The benchmark command (reduce-scan-bench without a subcommand): options, devices, jobs, the
// runner (in this process or in isolated workers), the report and the exit status; also the
// worker side of an isolated run (Worker.h): a `serve` request with a "worker" field (Serve.h).
#pragma once

#include "cli/Cli.h"

#include <string>

namespace rsb {

// What a `serve` request gives its run beside the command line (Serve.h): a worker's settings
// (null: none, the run is no worker), the device's timer verdict a parent already found ("": not
// told) and the fd of its end of a turns socket (-1: none; TimedTurns.h).
struct Told {
  const Options::Worker* worker = nullptr;
  std::string timer;
  int turnsFd = -1;
};

// The whole run; exit status 0 all passed, 1 a validation failed, 2 bad input, 3 an OpenCL or
// system error (in a case or outside), 130 interrupted. Throws UsageError, DeviceError and
// cl::Error for main to report.
// subcommandsHelp: what --help lists after the options (main's table of subcommands). told: what
// a serve request gives the run (a worker: this process is a worker of an isolated run, which
// runs what it says).
int RunBenchmark(int argc, char** argv, const std::string& subcommandsHelp = "",
                 const Told& told = {});

// RunBenchmark with what escapes it reported on stderr ("error: ...") as its exit status: 2 for a
// UsageError, 3 for any other (main's, and each run of a resident child run, Serve.h).
int RunCommand(int argc, char** argv, const std::string& subcommandsHelp = "",
               const Told& told = {});

}  // namespace rsb
