// The host side of a validated run, timed: RandomInput, ReferenceScan (sum) and the comparison
// with a correct output read back piece by piece (as ReadBackAndCompare does; a memcpy stands for
// the read), at given sizes, types, scan kinds and thread counts (RSB_HOST_THREADS for each).
// What `--check` spends on the host besides the device's work and the transfers. Prints one JSON
// object per line, with the peak resident memory of the process so far (the correct output's
// array, which stands for the device's, counts in it).
//
// usage: host-data-bench [--sizes 2^28] [--types uint,float] [--threads 1,2] [--scan-kind
// inclusive]
#include "cli/CliChecks.h"
#include "engine/HostData.h"
#include "engine/TaskUtil.h"
#include "platform/Parallel.h"
#include "tasks/CScanTask.h"

#include <sys/resource.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

template <class E>
std::vector<std::string> Names(const std::vector<E>& all) {
  std::vector<std::string> names;
  for (E e : all)
    names.push_back(rsb::ToString(e));
  return names;
}

double PeakGiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / double(1 << 20);  // KiB on Linux
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rsb;
  std::vector<size_t> sizes = {size_t(1) << 28};
  std::vector<std::string> types = {"uint", "float"}, kinds = {"inclusive"};
  std::vector<size_t> threads = {HostThreads()};
  CLI::App app{"host-data-bench: the host side of a validated run, timed", "host-data-bench"};
  app.add_option("--sizes", sizes, "Element counts, comma-separated (e.g. 2^24,2^28)")
      ->delimiter(',')
      ->transform(cli::SizeTransform());
  app.add_option("--types", types, "Element types: " + cli::Join(Names(AllElementTypes())))
      ->delimiter(',')
      ->check(cli::OneOf(Names(AllElementTypes()), false));
  app.add_option("--scan-kind", kinds, "Scan kinds: inclusive, exclusive")
      ->delimiter(',')
      ->check(cli::OneOf(Names(AllScanKinds()), false));
  app.add_option("--threads", threads, "Host threads, comma-separated (default: every core)")
      ->delimiter(',')
      ->check(cli::WholeNumber(1, 1024));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "host-data-bench: %s\n", e.what());
    return 2;
  }
  for (size_t n : sizes)
    for (const std::string& typeName : types)
      for (const std::string& kindName : kinds)
        for (size_t t : threads) {
          setenv("RSB_HOST_THREADS", std::to_string(t).c_str(), 1);
          const ElementType type = *ParseElementType(typeName);
          const ScanKind kind =
              kindName == ToString(ScanKind::Inclusive) ? ScanKind::Inclusive : ScanKind::Exclusive;
          const auto t0 = std::chrono::steady_clock::now();
          const HostArray input = RandomInput(type, n, 1);
          const auto t1 = std::chrono::steady_clock::now();
          const Expected expected = CScanTask::ReferenceScan(input, Op::Sum, kind);
          const auto t2 = std::chrono::steady_clock::now();
          // What a correct device holds; read back as the runner does (ReadBackAndCompare): a
          // piece at a time into two host arrays in turn, each compared as it arrives.
          const HostArray device = ExpectedValues(expected, input);
          const auto t3 = std::chrono::steady_clock::now();
          const size_t piece = std::min(n, kReadBackPiece);
          HostArray host[2] = {HostArray::Uninitialized(type, piece),
                               HostArray::Uninitialized(type, piece)};
          OutputComparison comparison("host-data-bench", expected, input);
          for (size_t first = 0, k = 0; first < n; first += piece, ++k) {
            const size_t count = std::min(piece, n - first);
            std::memcpy(host[k % 2].Data(), device.As<unsigned char>() + first * SizeOf(type),
                        count * SizeOf(type));
            comparison.Add(first, host[k % 2], count);
          }
          const Validation v = comparison.Result();
          const auto t4 = std::chrono::steady_clock::now();
          std::printf(
              "{\"n\":%zu,\"type\":\"%s\",\"scan_kind\":\"%s\",\"threads\":%zu,"
              "\"input_s\":%.3f,\"reference_s\":%.3f,\"compare_s\":%.3f,\"total_s\":%.3f,"
              "\"passed\":%s,\"peak_rss_gib\":%.2f}\n",
              n, typeName.c_str(), kindName.c_str(), t, Seconds(t0, t1), Seconds(t1, t2),
              Seconds(t3, t4), Seconds(t0, t2) + Seconds(t3, t4), v.passed ? "true" : "false",
              PeakGiB());
          std::fflush(stdout);
          if (!v.passed) {
            std::fprintf(stderr, "%s\n", v.message.c_str());
            return 1;
          }
        }
  return 0;
}
