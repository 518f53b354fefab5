// A result as read back from a result file (the suite's `--format json` output), with the
// device it ran on: what `compare` and `plot` read (tools/ResultFile.h reads the file) and what
// compare's report prints (report/Comparison.h), so below both.
#pragma once

#include "engine/Result.h"

#include <optional>
#include <string>

namespace rsb {

// Which device a result ran on: name, driver version and platform (any may be empty).
struct DeviceId {
  std::string name, driverVersion, platform;
  std::string Key() const;    // for matching
  std::string Label() const;  // "NVIDIA H100 80GB HBM3, driver 580.159.04 (NVIDIA CUDA)"
  bool operator==(const DeviceId& o) const { return Key() == o.Key(); }
};

// One result of a file: the suite's own record (engine/Result.h), with the device it ran on and
// what the record cannot say of a file (which of its fields were recorded).
struct StoredResult {
  // What compare and plot read: the case (task to local size, an image's height, the task's
  // parameters), status, time_ms, gelem_s, ci_met, cold and kernel_options (-DRSB_INDEX64=1: the
  // case indexed with 64-bit integers; "" in older files); every other field stays at its default.
  Result result;
  DeviceId device;
  // result.timeMs.ciLow and ciHigh are the 95% interval of the median: recorded, not empty (0 to
  // 0: none computed) and holding the median.
  bool hasCi = false;
  bool ciBad = false;          // an interval was recorded but does not hold the median: not used
  bool ciMetRecorded = false;  // result.ciMet was in the file (older files lack it)
  // Timed: passed, with a median above zero.
  bool Timed() const { return result.status == Status::Passed && result.timeMs.median > 0; }
  // Plotted: timed, with a throughput above zero (a hand-edited file may lack one).
  bool HasThroughput() const { return Timed() && result.gelemS > 0; }
  bool HasCi() const { return hasCi; }
  std::optional<bool> CiMet() const {
    return ciMetRecorded ? std::optional<bool>(result.ciMet) : std::nullopt;
  }
  // What else defines the case: an image's shape and the task's parameters, " 4096x4096
  // mask-width=5" (empty for a plain count without parameters).
  std::string Extra() const;
  // "reduction/sequential uint sum n=4096 L=64": CaseLabel, as the runner labels cases.
  std::string Label() const { return CaseLabel(result); }
};

}  // namespace rsb
