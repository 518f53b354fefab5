// Reading result files (the suite's `--format json` output) back, for `compare` and `plot`:
// checks that a file is one, and gives each result (engine/Result.h) with the device it ran on
// (engine/StoredResult.h).
// Tolerant of the fields later versions add (a result's `time_ms.ci_low`/`ci_high`, `ci_met`,
// `utilisation`), strict about the ones every version has.
#pragma once

#include "engine/StoredResult.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace rsb {

struct ResultFile {
  std::string path;
  std::string role;  // "BASE", "NEW", "RESULTS": how errors name the file
  DeviceId device;   // the file's device
  // Its device's memory ceilings in GB/s (device.ceilings; 0: not recorded).
  double readGBs = 0, writeGBs = 0, copyGBs = 0;
  std::vector<StoredResult> results;
  // The file as read: what the reader above does not keep (provenance, each result's every
  // field) for the report (tools/Report.h).
  nlohmann::json document;
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
