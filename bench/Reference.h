// Shared by the bench references (cub-reference, boost-reference, cpu-reference): their options,
// parsed with CLI11 and checked by the suite's own validators (sizes spelt as in the suite, one
// line naming option, value and what is allowed, exit status 2), and the JSON line each measurement
// prints.
#pragma once

#include "cli/CliChecks.h"

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

// Parses --sizes, --types, --reps (and --platform where withPlatform). `options` holds the
// defaults and receives the values; `allowedTypes` are the types the reference implements. Bad
// input: one line on stderr and exit status 2 (called first thing in the references' main).
inline void ParseReferenceOptions(int argc, char** argv, const char* program,
                                  const std::vector<std::string>& allowedTypes, bool withPlatform,
                                  ReferenceOptions& options) {
  CLI::App app{std::string(program) + ": reference measurements for bench/compare.py", program};
  app.add_option("--sizes", options.sizes, "Element counts, comma-separated (e.g. 2^24,2^26)")
      ->delimiter(',')
      ->transform(cli::SizeTransform());
  app.add_option("--types", options.types, "Element types: " + cli::Join(allowedTypes))
      ->delimiter(',')
      ->check(cli::OneOf(allowedTypes, false));
  app.add_option("--reps", options.reps, "Timed runs per measurement")
      ->check(cli::WholeNumber(1, 100000));
  if (withPlatform)
    app.add_option("--platform", options.platform, "OpenCL platform: name substring");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::exit(app.exit(e));
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    std::exit(2);
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

// One stream compaction ("keep x < kept" on x uniform in [0, 100), so that kept% of the input
// is kept) as a JSON line: PrintResult's fields with the kept percentage and the predicate, as
// the suite's compaction task records them (its `predicate` field and params.kept), so that
// bench/compare.py pairs the cases by kept fraction too. Gelem/s counts input elements; bytes
// are n read plus the kept elements written.
inline void PrintSelect(const char* algorithm, const std::string& type, size_t n, int keptPercent,
                        double ms, size_t bytes) {
  std::printf(
      "{\"task\":\"compaction\",\"algorithm\":\"%s\",\"type\":\"%s\",\"op\":\"sum\","
      "\"predicate\":\"less-than\",\"kept_percent\":%d,\"n\":%zu,\"time_ms\":%.6f,"
      "\"gelem_s\":%.3f,\"gbytes_s\":%.3f}\n",
      algorithm, type.c_str(), keptPercent, n, ms, n / (ms * 1e6), bytes / (ms * 1e6));
  std::fflush(stdout);
}

// The kept fractions every reference measures, in percent.
inline const std::vector<int>& SelectKeptPercents() {
  static const std::vector<int> kept{1, 50, 99};
  return kept;
}

}  // namespace rsb::bench
