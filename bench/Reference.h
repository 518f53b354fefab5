// Shared by the bench references (cub-reference, boost-reference): their options, checked the
// way the suite checks its own (sizes spelt as in the suite, one line naming option, value and
// what is allowed, exit status 2), and the JSON line each measurement prints.
#pragma once

#include "Sizes.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace rsb::bench {

struct ReferenceOptions {
  std::string platform;  // only where the reference takes --platform
  std::vector<size_t> sizes;
  std::vector<std::string> types;
  int reps = 30;
};

inline std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos)
      end = s.size();
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

[[noreturn]] inline void UsageError(const char* program, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", program, message.c_str());
  std::exit(2);
}

// Parses --sizes, --types, --reps (and --platform where withPlatform). `options` holds the
// defaults and receives the values; `allowedTypes` are the types the reference implements.
inline void ParseReferenceOptions(int argc, char** argv, const char* program,
                                  const std::vector<std::string>& allowedTypes, bool withPlatform,
                                  ReferenceOptions& options) {
  std::string allowed;
  for (const auto& t : allowedTypes)
    allowed += (allowed.empty() ? "" : ", ") + t;
  for (int i = 1; i < argc; i += 2) {
    const std::string option = argv[i];
    const bool known = option == "--sizes" || option == "--types" || option == "--reps" ||
                       (withPlatform && option == "--platform");
    if (!known)
      UsageError(program, "unknown option '" + option + "'; allowed: --sizes, --types, --reps" +
                              (withPlatform ? ", --platform" : ""));
    if (i + 1 >= argc)
      UsageError(program, option + " needs a value");
    const std::string value = argv[i + 1];
    if (option == "--platform") {
      options.platform = value;
    } else if (option == "--sizes") {
      options.sizes.clear();
      for (const auto& s : SplitList(value)) {
        const auto n = ParseSize(s);
        if (!n || *n > kMaxElements)
          UsageError(program, "--sizes '" + s + "': not a size; allowed: 1 to 2^31, written " +
                                  "16777216, 16M, 2^24 or 2^24+3, comma-separated");
        options.sizes.push_back(*n);
      }
    } else if (option == "--types") {
      options.types = SplitList(value);
      for (const auto& t : options.types)
        if (std::find(allowedTypes.begin(), allowedTypes.end(), t) == allowedTypes.end())
          UsageError(program, "--types '" + t + "': unknown; allowed: " + allowed);
    } else {
      const auto r = ParseUnsigned(value);
      if (!r || *r < 1 || *r > 100000)
        UsageError(program, "--reps '" + value + "': allowed: 1 to 100000");
      options.reps = static_cast<int>(*r);
    }
  }
}

// One measurement as a JSON line (bench/compare.py reads these).
inline void PrintResult(const char* task, const char* algorithm, const std::string& type, size_t n,
                        double ms, size_t bytes) {
  std::printf(
      "{\"task\":\"%s\",\"algorithm\":\"%s\",\"type\":\"%s\",\"op\":\"sum\",\"n\":%zu,"
      "\"time_ms\":%.6f,\"gelem_s\":%.3f,\"gbytes_s\":%.3f}\n",
      task, algorithm, type.c_str(), n, ms, n / (ms * 1e6), bytes / (ms * 1e6));
  std::fflush(stdout);
}

}  // namespace rsb::bench
