// Reading result files (the suite's `--format json` output) back, for `compare` and `plot`:
// checks that a file is one, and gives each result (engine/Result.h) with the device it ran on.
// Tolerant of the fields later versions add (a result's `time_ms.ci_low`/`ci_high`, `ci_met`,
// `utilisation`), strict about the ones every version has.
#pragma once

#include "engine/Result.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

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

struct ResultFile {
  std::string path;
  std::string role;  // "BASE", "NEW", "RESULTS": how errors name the file
  DeviceId device;   // the file's device
  std::vector<StoredResult> results;
  // The devices its results ran on, each once, in order of appearance.
  std::vector<DeviceId> Devices() const;
};

// Reads a result file. Throws UsageError (exit 2), one line naming the file and what is wrong:
// missing, empty or unreadable, not JSON (naming where it stops: "results[3].time_ms.median:
// 1e400 is not a finite number"), not a reduce-scan-bench result file, another schema version,
// a result without a field every version writes, a field of the wrong type or a negative time.
// A result without a time (not passed) or without `gelem_s` is read, not timed.
ResultFile LoadResultFile(const std::string& path, const std::string& role);

}  // namespace rsb
