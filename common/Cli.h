// The command line: parsed with CLI11, every value checked here so that bad input of any kind
// ends in a UsageError naming the option, the value and what is allowed (exit status 2).
#pragma once

#include "Runner.h"
#include "Sizes.h"
#include "Types.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rsb {

enum class OutputFormat { Table, Csv, Json };

struct Options {
  bool help = false;
  std::string helpText;
  bool listDevices = false;
  bool listVariants = false;
  bool quiet = false;
  std::string platform, device, kernels, output;
  std::vector<std::string> tasks;     // selected tasks, in the order known to the program
  std::vector<std::string> variants;  // empty: every variant of every selected task
  std::vector<ElementType> types = {ElementType::Uint};
  std::vector<Op> ops = {Op::Sum};
  std::vector<ScanKind> scanKinds = {ScanKind::Inclusive};
  std::vector<size_t> sizes = {size_t(1) << 24};
  size_t localSize = 0;  // 0: each variant's best for the device
  uint64_t seed = 1;
  OutputFormat format = OutputFormat::Table;
  RunSettings run;
};

// task name -> its variant names, in order.
using TaskCatalog = std::vector<std::pair<std::string, std::vector<std::string>>>;

// Throws UsageError on bad input.
Options ParseCommandLine(int argc, const char* const* argv, const TaskCatalog& catalog);

}  // namespace rsb
