// Exceptions carrying what went wrong and what to do; main maps them to exit statuses.
#pragma once

#include <iostream>
#include <stdexcept>
#include <string>

namespace rsb {

// Bad command-line input: exit status 2. The message names the option, the value and what is
// allowed.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// OpenCL or system failure (no platform, kernel build failure, out of memory...): exit status 3.
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown by a task when a variant cannot run on this device for this problem (local size
// beyond the kernel's limit, fp64 or 64-bit atomics missing, buffer larger than the device
// allows). The runner reports it as "skipped" with the reason; it does not fail the run.
class VariantSkipped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The command was interrupted (SIGINT, SIGTERM) before it finished: nothing half-written is
// left; exit 130 with "interrupted: <what>" on stderr.
class InterruptedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum ExitStatus {
  kExitOk = 0,
  kExitValidationFailed = 1,
  kExitUsage = 2,
  kExitDevice = 3,
  kExitInterrupted = 130
};

// A subcommand's body run to an exit status: its return value, or "error: <what>" on stderr and
// kExitUsage for a UsageError, kExitDevice for any other exception ("interrupted: <what>" and
// kExitInterrupted for an InterruptedError).
template <class Body>
int ExitStatusOf(Body&& body) {
  try {
    return body();
  } catch (const InterruptedError& e) {
    std::cerr << "interrupted: " << e.what() << "\n";
    return kExitInterrupted;
  } catch (const UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitDevice;
  }
}

}  // namespace rsb
