// The rubric a class is graded against: a list of items, each a task's variant, its points and
// the cases a hand-in's code must pass (each case entry one child run), checked whole before
// anything runs (a UsageError naming the file and the item).
#pragma once

#include "Types.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rsb::grade {

constexpr uint64_t kDefaultSeed = 1;

// One child run: the product of its lists, at one local size.
struct CaseGroup {
  std::vector<size_t> sizes;
  std::vector<ElementType> types = {ElementType::Uint};
  std::vector<Op> ops = {Op::Sum};
  std::vector<ScanKind> kinds = {ScanKind::Inclusive};
  std::string localSize = "auto";
};

struct Item {
  std::string id, title, task, variant;
  double points = 0;
  std::vector<CaseGroup> groups;
  std::optional<double> speedFloor;
  CaseGroup speedCase;  // one case
};

struct Rubric {
  std::string name, path;
  uint64_t seed = kDefaultSeed;
  std::vector<Item> items;
};

// Reads and checks the rubric; throws UsageError naming the file, the item and the key.
Rubric LoadRubric(const std::string& path);

}  // namespace rsb::grade
