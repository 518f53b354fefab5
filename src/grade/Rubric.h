// The rubric a class is graded against: a list of items, each a task's variant, its points and
// the cases a hand-in's code must pass, with optional gates (a speed floor against the suite's
// own code, Oclgrind's race and out-of-bounds checks, a work ceiling). Checked whole before
// anything runs: a wrong key, a value of the wrong type, a case no variant can run (a type the
// task does not compute, a mask wider than the input, an image for a 1-D variant) is a
// UsageError naming the file, the item and the key (exit status 2).
#pragma once

#include "engine/IComputeTask.h"
#include "platform/Types.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rsb::grade {

constexpr uint64_t kDefaultSeed = 1;

// A case entry of an item: the product of its lists. One child run per local size.
struct CaseGroup {
  std::vector<Extent> sizes;       // counts, or images (height > 0) for the 2-D variants
  std::vector<ElementType> types;  // default: the task's first type (uint; float for convolution)
  std::vector<Op> ops = {Op::Sum};
  std::vector<std::string> localSizes = {"auto"};  // "auto" or a power of two
  // Task parameters ("mask-width"; named values by index). Those that are keys of a case
  // (TaskParameter::field: a scan's kind) always, their default where the rubric gives none.
  std::map<std::string, std::vector<size_t>> params;
  std::vector<TaskParameter> declared;  // the task's parameters
  // " inclusive,exclusive": the values of the parameters that are keys of a case ("" if none).
  std::string FieldsText() const;
  size_t validateRuns = 1;  // validated runs per case (a stale or racy result shows in later ones)
};

// One expected case of a group at one local size: how reports name it and how a child's
// result is matched to it.
struct CaseSpec {
  ElementType type;
  Op op;
  Extent size;
  std::map<std::string, size_t> params;
  std::vector<TaskParameter> declared;  // the task's parameters
  std::string Label() const;  // "uint sum inclusive n=257", "float sum n=64x64 mask-width=5"
};
std::vector<CaseSpec> Expand(const CaseGroup& g);
// The group of that one case of g (g's local sizes and validated runs kept).
CaseGroup GroupOf(const CaseGroup& g, const CaseSpec& spec);

enum class GateMode { Off, Report, Deduct };
std::string ToString(GateMode m);

struct Item {
  std::string id, title, task, variant;
  double points = 0;
  std::vector<CaseGroup> groups;
  std::optional<double> speedFloor;
  CaseGroup speedCase;  // one case
  // Oclgrind (data races, out-of-bounds accesses, barrier divergence) on oclgrindCase: Report
  // notes what it finds, Deduct also takes the item's points.
  GateMode oclgrind = GateMode::Off;
  CaseGroup oclgrindCase;  // one case, small
  // At most this many times the instructions the suite's own kernels execute on oclgrindCase
  // (Oclgrind's counts): a kernel that is not work-efficient loses the item's points.
  std::optional<double> workCeiling;
};

struct Rubric {
  std::string name, path;
  uint64_t seed = kDefaultSeed;
  // Files a hand-in must bring ("src/tasks/CScanTask.cpp", "kernels/Scan.cl"); a missing one costs
  // the items of its task (a file of no task, such as kernels/Common.clh, every item).
  std::vector<std::string> requiredFiles;
  std::vector<Item> items;
};

// Reads and checks the rubric against the tasks this program knows.
Rubric LoadRubric(const std::string& path);
// The shipped rubric: installed next to the kernels, else in the source tree of this binary.
std::string DefaultRubric();

// "64x64" or "257": a size as the command line spells it.
std::string SizeText(const Extent& e);

}  // namespace rsb::grade
