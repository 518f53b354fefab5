// The class's outputs beside each hand-in's reports: summary.csv (a row per hand-in), index.md
// and index.html (the class at a glance: ClassPage.h) and grading.json (the manifest: what graded
// it and which part of which class), the shards a class is split into (`grade --shard K/N`), and
// `grade merge`, which joins the output folders of shards into the output of one run.
#pragma once

#include "grade/ClassPage.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace rsb::grade {

// The shard (0-based, of count) a hand-in belongs to: a hash of its name, so that a hand-in is
// in the same shard whatever else the class holds, and a re-run of a shard grades the same ones.
size_t ShardOf(const std::string& name, size_t count);

// "fnv1a64:<16 hex digits>" of a file's bytes (tells rubrics apart; not cryptographic).
std::string FileHash(const std::filesystem::path& path);

std::string SummaryCsv(const std::vector<std::string>& itemIds,
                       const std::vector<SummaryRow>& rows);
nlohmann::json ToJson(const ClassManifest& m);

// Writes summary.csv, index.md, index.html and grading.json of the rows (in the class's order) to
// dir.
void WriteClassFiles(const std::filesystem::path& dir, const ClassManifest& m,
                     const std::vector<SummaryRow>& rows);

// `grade merge [--output-dir OUT] DIR...` (argv[0] is "merge"): exit 0, 2 (bad input: shards of
// different rubrics, seeds, suites or classes, hand-ins missing or graded twice), 3.
int GradeMerge(int argc, char** argv);

}  // namespace rsb::grade
