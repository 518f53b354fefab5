// `reduce-scan-bench compare BASE.json NEW.json [--threshold 5%] [--across-devices]
// [--ignore-local-size] [--format table|csv|json|markdown]`: matches the cases of two result
// files (task, variant, type, op, scan kind, n, local size and device) and gives per case the
// throughput ratio NEW/BASE of the medians (> 1: NEW faster), marked faster or slower only
// where a U test of the rounds' medians finds it (--repetitions), or, in files of one round,
// where the two 95% confidence intervals of the median do not overlap (said to be blind to the
// spread between runs); cases in one file only are listed. Two devices are compared as devices:
// no regression. Its record (Comparison) is the report layer's (report/Comparison.h), printed by
// the printer of --format (report/Report.h).
#pragma once

#include "report/Comparison.h"
#include "tools/ResultFile.h"

#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace rsb {

// Throws UsageError where acrossDevices is set and a file holds several devices.
Comparison CompareFiles(const ResultFile& base, const ResultFile& fresh, const CompareSettings& s);

// Paired rounds (`ab`) the sign test needs to call a change at p < 0.05: its smallest two-sided p
// over k pairs is 2/2^k, 0.031 with 6 and 0.0625 with 5.
constexpr size_t kMinPairedRounds = 6;

// --threshold: "5%" or "0.05" (plain decimals), a fraction from 0 to 10 (1000%); nullopt where
// it is neither ("5": 5% or 500%?).
std::optional<double> ParseThreshold(const std::string& v);

// compare's --threshold and --format, for the commands that judge and print as it does (ab):
// their text in `threshold` and `format` (ParseThreshold, ParseFormat); `slowdown` names what
// the threshold applies to ("A significant slowdown").
void AddJudgeOptions(CLI::App& app, std::string& threshold, std::string& format,
                     const std::string& slowdown);

// The median of v (0 where empty).
double MedianOf(std::vector<double> v);

// compare's report of two files: where each holds one device, not the same one, their cases are
// paired across the devices (my GPU against yours), said in the first note.
CompareReport CompareTwoFiles(const ResultFile& base, const ResultFile& fresh, CompareSettings s);

// The two-sided p-value of the Mann-Whitney U test that a and b come from one distribution:
// exact (the U distribution counted) without ties and up to 50 values a side, else the normal
// approximation with the tie correction and a continuity correction. 1 where either is empty.
double MannWhitneyP(const std::vector<double>& a, const std::vector<double>& b);

// What `compare` refuses (UsageError, exit 2): a file with no results, or files that share no
// case (the comparison's notes say where a looser match would pair them): a pass that compared
// nothing is not a pass.
void RequireSomethingCompared(const ResultFile& base, const ResultFile& fresh, const Comparison& c);

// The two-sided p-value of the sign test that d (paired differences) is as often above 0 as
// below, zeros left out: exact (binomial, p = 1/2). 1 where no value is left.
double SignTestP(const std::vector<double>& d);

// argv[0] is "compare". Returns the exit status: 0 no significant regression beyond the
// threshold, 1 one or more, 2 bad input (options, a file that is missing or not a result file).
int Compare(int argc, char** argv);

}  // namespace rsb
