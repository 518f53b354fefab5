// The class's outputs beside each hand-in's reports: summary.csv (a row per hand-in), index.md
// (the class at a glance) and grading.json (the manifest: what graded it and which part of
// which class), the shards a class is split into (`grade --shard K/N`), and `grade merge`, which
// joins the output folders of shards into the output of one run.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace rsb::grade {

// One hand-in's line in summary.csv and index.md.
struct SummaryRow {
  std::string name;
  double total = 0, max = 0;
  std::vector<double> points;  // per rubric item, in the rubric's order
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

// The shard (0-based, of count) a hand-in belongs to: a hash of its name, so that a hand-in is
// in the same shard whatever else the class holds, and a re-run of a shard grades the same ones.
size_t ShardOf(const std::string& name, size_t count);

// "fnv1a64:<16 hex digits>" of a file's bytes (tells rubrics apart; not cryptographic).
std::string FileHash(const std::filesystem::path& path);

std::string SummaryCsv(const std::vector<std::string>& itemIds,
                       const std::vector<SummaryRow>& rows);
std::string IndexMarkdown(const ClassManifest& m, const std::vector<SummaryRow>& rows);
nlohmann::json ToJson(const ClassManifest& m);

// Writes summary.csv, index.md and grading.json of the rows (in the class's order) to dir.
void WriteClassFiles(const std::filesystem::path& dir, const ClassManifest& m,
                     const std::vector<SummaryRow>& rows);

// `grade merge [--output-dir OUT] DIR...` (argv[0] is "merge"): exit 0, 2 (bad input: shards of
// different rubrics, seeds, suites or classes, hand-ins missing or graded twice), 3.
int GradeMerge(int argc, char** argv);

}  // namespace rsb::grade
