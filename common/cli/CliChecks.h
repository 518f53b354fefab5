// CLI11 validators that give the suite's one-line usage errors: "--option: 'value': not allowed;
// allowed: ...". Free of OpenCL, so the bench references (CUDA, Boost.Compute) use them too.
#pragma once

#include "platform/Errors.h"
#include "platform/Pattern.h"
#include "platform/Sizes.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <optional>
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

// A plain decimal: digits with an optional fraction (30, 0.5, .5); no sign, exponent, hex form
// (0x1p-7), inf/nan or spaces, which strtod would take.
inline std::optional<double> ParseDecimal(const std::string& v) {
  static const Pattern form(R"(^(\d+\.?\d*|\.\d+)$)");
  if (v.size() > 64 || !form.Match(v))
    return std::nullopt;
  return std::strtod(v.c_str(), nullptr);
}

// A number with an optional % (1% is 0.01): the value as a fraction where percent, else as is.
inline std::optional<double> ParsePercentOrDecimal(const std::string& v, bool* percent = nullptr) {
  const bool p = !v.empty() && v.back() == '%';
  if (percent)
    *percent = p;
  const auto x = ParseDecimal(p ? v.substr(0, v.size() - 1) : v);
  return x && p ? std::optional<double>(*x / 100) : x;
}

// CLI11 drops the empty items of a comma list ("8,,9" reads as 8,9; "8," as 8): a mistyped list
// would run something else than asked. "" where argv has none, else the one-line error naming
// the option, its value and what is allowed (the option's own check, where it has one).
inline std::string EmptyListItem(CLI::App& app, int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--")
      break;
    std::string name = a, value;
    bool attached = false;  // --size=8,,9 or -n8,,9
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      name = a.substr(0, a.find('='));
      value = a.substr(a.find('=') + 1);
      attached = true;
    } else if (a.size() > 2 && a[0] == '-' && a[1] != '-') {
      name = a.substr(0, 2);
      value = a.substr(2);
      attached = true;
    }
    CLI::Option* opt = nullptr;
    for (CLI::Option* o : app.get_options())
      if (o->get_delimiter() == ',' && o->check_name(name))
        opt = o;
    if (!opt || (!attached && i + 1 >= argc))
      continue;
    if (!attached)
      value = argv[++i];
    if (!value.empty() && value.front() != ',' && value.back() != ',' &&
        value.find(",,") == std::string::npos)
      continue;
    std::string allowed = "a comma list without empty items";
    try {
      std::string empty;
      const std::string why = (*opt->get_validator())(empty);
      if (why.find("allowed: ") != std::string::npos)
        allowed += " of: " + why.substr(why.find("allowed: ") + 9);
    } catch (const CLI::OptionNotFound&) {  // no check of its own (--device, --variant)
    }
    return name + " '" + value + "': an empty item in the list; allowed: " + allowed;
  }
  return "";
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

// Parses the command line into `app`: a CLI11 parse error is a UsageError (exit 2) with its
// message, except where `help` reads true by then (--help with the required arguments missing
// still helps).
template <class Argv>
void Parse(CLI::App& app, int argc, Argv argv, const bool* help = nullptr) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (!help || !*help)
      throw UsageError(e.what());
  }
}

}  // namespace rsb::cli
