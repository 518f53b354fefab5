// The benchmark command (reduce-scan-bench without a subcommand): options, devices, jobs, the
// runner (in this process or in isolated workers), the report and the exit status; also the
// worker side of an isolated run (Worker.h): a `serve` request with a "worker" field (Serve.h).
#pragma once

#include "cli/Cli.h"

#include <string>

namespace rsb {

// The whole run; exit status 0 all passed, 1 a validation failed, 2 bad input, 3 an OpenCL or
// system error (in a case or outside), 130 interrupted. Throws UsageError, DeviceError and
// cl::Error for main to report.
// subcommandsHelp: what --help lists after the options (main's table of subcommands). worker:
// where given, this process is a worker of an isolated run, which runs what it says.
int RunBenchmark(int argc, char** argv, const std::string& subcommandsHelp = "",
                 const Options::Worker* worker = nullptr);

// RunBenchmark with what escapes it reported on stderr ("error: ...") as its exit status: 2 for a
// UsageError, 3 for any other (main's, and each run of a resident child run, Serve.h).
int RunCommand(int argc, char** argv, const std::string& subcommandsHelp = "",
               const Options::Worker* worker = nullptr);

}  // namespace rsb
