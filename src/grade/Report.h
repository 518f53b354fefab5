// The grader's reports: per hand-in a Markdown page and a JSON file (the same, per item and per
// case); the class's files are Class.h's; with --format gradescope also Gradescope's
// results.json.
#pragma once

#include "grade/ChildRun.h"
#include "grade/HostBuild.h"
#include "grade/Rubric.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rsb::grade {

struct ItemGrade {
  const Item* item = nullptr;
  std::string status, detail;
  std::optional<nlohmann::json> firstWrong;
  std::vector<CaseOutcome> cases;
  std::optional<nlohmann::json> speed;
  std::optional<nlohmann::json> oclgrind;  // the Oclgrind gate's verdict, where the item has one
  // Oclgrind's diagnosis of the case that failed or crashed the item (Scoring.h), or why not.
  std::optional<nlohmann::json> diagnosis;
  double timeLimitS = 0;  // the longest limit a child run of the item had
  double points = 0;
  // Its runs charged as they ran again with the device to itself, a neighbour having hung beside
  // the first (GroupRun::ranAlone): "which run: why", each also a line of the detail.
  std::vector<std::string> ranAlone;
};

struct HandinGrade {
  std::string name, path;
  HostBuild host;
  // Files graded that are not where the hand-in has them: path in the grader's copy -> where it
  // was found in the hand-in, or "the hand-out" (HandinFiles::from).
  std::map<std::string, std::string> from;
  std::vector<ItemGrade> items;
  double total = 0, max = 0;
};

// What every report of a grading run says about the run.
struct RunInfo {
  const Rubric* rubric = nullptr;
  std::string device;       // "" until a child run named it (the timed runs')
  std::string checkDevice;  // the validating runs' (--check-platform; the same unless given)
  double timeoutS = 0;
};

nlohmann::json ToJson(const RunInfo& run, const HandinGrade& h);
std::string ToMarkdown(const RunInfo& run, const HandinGrade& h);

// Gradescope's results.json (https://gradescope-autograders.readthedocs.io/en/latest/specs/) of
// the one hand-in: the total `score`, one test per item (its `output` the item's section of the
// .md report's details, Markdown) and a summary `output`; all `visible`.
nlohmann::json ToGradescope(const RunInfo& run, const HandinGrade& h);

// An item's message in the class's files: its detail's headline (Text.h), or where Oclgrind
// named the line of its failing case (diagnosis), the detail's first line, which says so.
std::string ItemMessage(const std::string& detail, const nlohmann::json& diagnosis);

// "2", "0.5": points as the reports print them.
std::string Points(double p);

// Writes through a temporary file and a rename, so that a reader never sees half a report;
// throws DeviceError when it cannot.
void WriteFile(const std::filesystem::path& path, const std::string& text);

}  // namespace rsb::grade
