// Child runs: every case group of a rubric item runs in a child process of the suite's binary
// (or of one built with a hand-in's task sources), `reduce-scan-bench --check --kernels K ...`,
// under a deadline; whatever the child does (a wrong result, a crash, a hang, a kernel that does
// not compile), every case of the group gets an outcome.
#pragma once

#include "Rubric.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace rsb::grade {

// What every child run of a grading run shares.
struct ChildSettings {
  std::string platform, device;  // --platform, --device as given to grade ("" when not)
  uint64_t seed = kDefaultSeed;
  std::string workDir;  // where the children's result files go
};

// The code a child run runs: a binary and a kernels folder.
struct Code {
  std::string binary, kernels;
};

struct CaseOutcome {
  std::string label, status, message;
  bool wholeRun = false;  // the child run ended before any result: the message is the run's
};

struct GroupRun {
  std::vector<CaseOutcome> cases;
  std::optional<nlohmann::json> results;  // the child's JSON, when usable
};

// "uint sum inclusive n=257": a case as the reports name it.
std::string CaseKey(const std::string& type, const std::string& op, const std::string& kind,
                    size_t n);

// Runs one case group in a child (validation only, or `timed`) killed after timeoutS seconds,
// and gives every case of it an outcome.
GroupRun RunGroup(const ChildSettings& s, const Code& code, const Item& it, const CaseGroup& g,
                  bool timed, double timeoutS);

}  // namespace rsb::grade
