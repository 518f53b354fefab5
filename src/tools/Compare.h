// `reduce-scan-bench compare BASE.json NEW.json [--threshold 5%] [--across-devices]
// [--ignore-local-size] [--format table|csv|json|markdown]`: matches the cases of two result
// files (task, variant, type, op, scan kind, n, local size and device) and gives per case the
// throughput ratio NEW/BASE of the medians (> 1: NEW faster), marked faster or slower only
// where the two 95% confidence intervals of the median do not overlap; cases in one file only
// are listed.
#pragma once

#include "tools/ResultFile.h"

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

// Throws UsageError where acrossDevices is set and a file holds several devices.
Comparison CompareFiles(const ResultFile& base, const ResultFile& fresh, const CompareSettings& s);

// argv[0] is "compare". Returns the exit status: 0 no significant regression beyond the
// threshold, 1 one or more, 2 bad input (options, a file that is missing or not a result file).
int Compare(int argc, char** argv);

}  // namespace rsb
