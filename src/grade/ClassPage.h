// The class at a glance: index.md and index.html beside summary.csv (Class.h writes them), from
// a row per hand-in: the score histogram, each item's pass rate, each item's most common failure
// messages with the hand-ins that show them, the mean and median, a link to every report.
// index.html is self-contained (its style inline, no script, nothing fetched).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rsb::grade {

// One hand-in's line in summary.csv and the class page.
struct SummaryRow {
  std::string name;
  double total = 0, max = 0;
  std::vector<double> points;  // per rubric item, in the rubric's order
  // Per item, as `points`: its most points, its status and the line of its detail that says most
  // (Text.h, Headline; "" where it has nothing to say).
  std::vector<double> maxPoints;
  std::vector<std::string> statuses, messages;
  // Per item: charged as a run of it ran again with the device to itself, a run beside its first
  // having hung (ItemGrade::ranAlone); the class page names them.
  std::vector<bool> ranAlone;
};

// What graded the class and which part of it this folder holds.
struct ClassManifest {
  std::string suite;  // the suite's version and git revision
  std::string rubricPath, rubricName, rubricHash;
  std::vector<std::string> itemIds;  // the items graded (--items)
  uint64_t seed = 0;
  std::string device;
  std::string checkDevice;  // the validating runs' device (--check-platform; "" in older files)
  size_t shardIndex = 1, shardCount = 1;  // 1-based
  std::vector<std::string> classNames;    // every hand-in of the class, in the order given
  std::vector<std::string> graded;        // the hand-ins whose reports this folder holds
  bool complete = false;                  // false: graded so far (a run still going, or stopped)
};

// The mean and the median of the rows' totals (0 where there are none).
double MeanTotal(const std::vector<SummaryRow>& rows);
double MedianTotal(const std::vector<SummaryRow>& rows);

// The histogram's bin of a hand-in: 0 for under 10% of its points, ..., 9 for 90% up to all but
// full, 10 for full points. kBins of them, labelled by BinLabel ("0-9%", ..., "100%").
constexpr size_t kBins = 11;
size_t BinOf(double total, double max);
std::string BinLabel(size_t bin);

// Nothing in them says how the class was split: a merged folder's page is a single run's.
std::string IndexMarkdown(const ClassManifest& m, const std::vector<SummaryRow>& rows);
std::string IndexHtml(const ClassManifest& m, const std::vector<SummaryRow>& rows);

}  // namespace rsb::grade
