// A hand-in's host code: where a hand-in brings task sources (src/C*Task.{h,cpp}), a binary of
// the suite with those files in place of the suite's own, built in the grader's work folder.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace rsb::grade {

// The task sources a hand-in may bring, per task.
extern const std::map<std::string, std::vector<std::string>> kTaskSources;

struct HostBuildSettings {
  std::string suiteSource;  // the suite's source tree
  std::string workDir;      // the grader's temporary folder
  double timeoutS = 900;    // for the whole build
};

struct HostBuild {
  std::vector<std::string> tasks;  // tasks whose sources the hand-in brings
  bool ok = false;
  std::string binary, log;
  double seconds = 0;
};

// Builds the hand-in's host code (nothing when it brings no task sources).
HostBuild BuildHostCode(const HostBuildSettings& s, const std::string& handin);

}  // namespace rsb::grade
