// `reduce-scan-bench compare BASE.json NEW.json [--threshold 5%] [--across-devices]
// [--ignore-local-size] [--format table|csv|json|markdown]`: matches the cases of two result
// files (task, variant, type, op, scan kind, n, local size and device) and gives per case the
// throughput ratio NEW/BASE of the medians (> 1: NEW faster), marked faster or slower only
// where a U test of the rounds' medians finds it (--repetitions), or, in files of one round,
// where the two 95% confidence intervals of the median do not overlap; cases in one file only
// are listed. Its record (Comparison) is the report layer's (report/Comparison.h), printed by
// the printer of --format (report/Report.h).
#pragma once

#include "report/Comparison.h"
#include "tools/ResultFile.h"

#include <vector>

namespace rsb {

// Throws UsageError where acrossDevices is set and a file holds several devices.
Comparison CompareFiles(const ResultFile& base, const ResultFile& fresh, const CompareSettings& s);

// The median of v (0 where empty).
double MedianOf(std::vector<double> v);

// compare's report of two files: where each holds one device, not the same one, their cases are
// paired across the devices (my GPU against yours), said in the first note.
CompareReport CompareTwoFiles(const ResultFile& base, const ResultFile& fresh, CompareSettings s);

// The two-sided p-value of the Mann-Whitney U test that a and b come from one distribution:
// exact (the U distribution counted) without ties and up to 50 values a side, else the normal
// approximation with the tie correction and a continuity correction. 1 where either is empty.
double MannWhitneyP(const std::vector<double>& a, const std::vector<double>& b);

// argv[0] is "compare". Returns the exit status: 0 no significant regression beyond the
// threshold, 1 one or more, 2 bad input (options, a file that is missing or not a result file).
int Compare(int argc, char** argv);

}  // namespace rsb
