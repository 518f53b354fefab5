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

// What a case's ratio and change were decided from: the median of every timed run and the
// run's 95% intervals (files of one round, or of rounds on one side only), the medians of the
// rounds and a U test (--repetitions in both), or rounds paired by their index and a sign
// test of their ratios (`ab`: two programs timed in turns).
enum class Basis { Runs, Rounds, PairedRounds };
std::string ToString(Basis b);  // "runs", "rounds", "paired rounds"

// A side's median that the ratio and the test use: of its runs, or of its rounds' medians; its
// 95% interval (0, 0: none: under 6 runs or rounds, or not recorded) and its rounds.
struct JudgedMedian {
  double ms = 0, ciLow = 0, ciHigh = 0;
  size_t rounds = 1;
};

// One case in both files.
struct CaseComparison {
  StoredResult base, fresh;       // fresh: the NEW file's result
  std::optional<double> speedup;  // BASE median / NEW median: throughput NEW/BASE; both timed
  Change change = Change::Unknown;
  bool regression = false;  // significantly slower, time ratio beyond 1 + threshold
  std::string note;         // why unknown ("no CI in BASE"), status changes
  // Set with speedup: the medians it is the ratio of, speedup = baseMs / (newMs * newScale);
  // newScale is the machine's change NEW's times were judged with (1: none). Paired rounds:
  // speedup is instead the median of roundRatios, each round's throughput ratio NEW/BASE (the
  // median over its pairs of runs), and the medians are each side's.
  Basis basis = Basis::Runs;
  std::optional<JudgedMedian> baseMedian, newMedian;
  double newScale = 1;
  std::vector<double> roundRatios;
  std::optional<double> p;  // the test's two-sided p-value (rounds)
};

struct Comparison {
  std::vector<CaseComparison> matched;
  std::vector<StoredResult> onlyBase, onlyNew;
  std::vector<std::string> notes;  // duplicates, device hints
  // Two devices compared (their names or platforms differ): their ratios are the devices', and
  // no case is a regression.
  bool devices = false;
  size_t Regressions() const;
};

struct CompareSettings {
  double threshold = 0.05;  // a fraction: 0.05 = 5%
  bool acrossDevices = false;
  bool ignoreLocalSize = false;
  // `ab`: the files' rounds ran in turns, round k of one beside round k of the other: each
  // case's rounds are paired (Basis::PairedRounds).
  bool paired = false;
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
