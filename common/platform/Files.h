// Output the suite writes: stdout checked after a command's output, so that a failed write (a
// full disk, a closed pipe) is exit 3, not 0.
#pragma once

namespace rsb {

// Flushes stdout; throws DeviceError naming the reason when a write to it failed.
void CheckStdout();

}  // namespace rsb
