// CLI11 validators that give the suite's one-line usage errors: "--option: 'value': not allowed;
// allowed: ...". Free of OpenCL, so the bench references (CUDA, Boost.Compute) use them too.
#pragma once

#include "Sizes.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <functional>
#include <string>
#include <vector>

namespace rsb::cli {

inline std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? sep : "") + v[i];
  return s;
}

// A value `ok` rejects gives "'value': not allowed; allowed: <allowed>".
inline CLI::Validator Allowed(const std::string& allowed,
                              std::function<bool(const std::string&)> ok) {
  return CLI::Validator(
      [allowed, ok](std::string& v) {
        return ok(v) ? std::string() : "'" + v + "': not allowed; allowed: " + allowed;
      },
      "");
}

// One of `names` (case-insensitive), or "all" where orAll.
inline CLI::Validator OneOf(std::vector<std::string> names, bool orAll) {
  if (orAll)
    names.push_back("all");
  return Allowed(Join(names), [names](std::string v) {
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
    return std::find(names.begin(), names.end(), v) != names.end();
  });
}

inline CLI::Validator WholeNumber(unsigned long long min, unsigned long long max) {
  return Allowed("a whole number from " + std::to_string(min) + " to " + std::to_string(max),
                 [=](const std::string& v) {
                   const auto n = ParseUnsigned(v);
                   return n && *n >= min && *n <= max;
                 });
}

// Element counts as the suite spells them (16777216, 16M, 2^24, 2^24+3), rewritten to plain
// numbers for CLI11's conversion.
inline CLI::Validator SizeTransform() {
  return CLI::Validator(
      [](std::string& v) {
        const auto n = ParseSize(v);
        if (!n || *n > kMaxElements)
          return "'" + v + "': " + (n ? "too large" : "not a valid size") +
                 "; allowed: an element count from 1 to " + std::to_string(kMaxElements) +
                 " (2^40), written as 16777216, 16M, 2^24 or 2^24+3";
        v = std::to_string(*n);
        return std::string();
      },
      "");
}

}  // namespace rsb::cli
