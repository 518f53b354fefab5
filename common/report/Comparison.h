// `compare`'s record (its model, made by tools/Compare.cpp's CompareFiles): the cases of two
// result files matched, each judged faster, slower or the same. Here, below the tools, so that
// the printers (report/Report.h) print a comparison as they print a run's results.
#pragma once

#include "engine/StoredResult.h"

#include <optional>
#include <string>
#include <vector>

namespace rsb {

enum class Change { Faster, Slower, Same, Unknown };
std::string ToString(Change c);

// One case in both files.
struct CaseComparison {
  StoredResult base, fresh;       // fresh: the NEW file's result
  std::optional<double> speedup;  // BASE median / NEW median: throughput NEW/BASE; both timed
  Change change = Change::Unknown;
  bool regression = false;  // significantly slower, time ratio beyond 1 + threshold
  std::string note;         // why unknown ("no CI in BASE"), status changes
};

struct Comparison {
  std::vector<CaseComparison> matched;
  std::vector<StoredResult> onlyBase, onlyNew;
  std::vector<std::string> notes;  // duplicates, device hints
  size_t Regressions() const;
};

struct CompareSettings {
  double threshold = 0.05;  // a fraction: 0.05 = 5%
  bool acrossDevices = false;
  bool ignoreLocalSize = false;
};

// One of the two files, as the report names it: its path and the devices its results ran on.
struct ComparedFile {
  std::string path;
  std::vector<DeviceId> devices;
};

// What a printer prints of a comparison (Printer::Compare).
struct CompareReport {
  ComparedFile base, fresh;
  Comparison comparison;
  CompareSettings settings;
  std::vector<std::string> fields;  // the CSV's field columns after `op` (RunInfo::fields)
};

}  // namespace rsb
