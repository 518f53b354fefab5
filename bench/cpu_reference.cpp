// CPU reference for reduce-scan-bench: what a CPU programmer would use instead of a GPU,
// std::reduce, std::inclusive_scan and std::copy_if (stream compaction, "keep x < t" on x uniform
// in [0, 100) with 1%, 50% and 99% kept) under std::execution::par (GCC's parallel algorithms on
// oneTBB, every core of the host), uint and float, timed on the host, median of repeated runs
// after a warm-up. Prints one JSON object per line, like cub-reference and boost-reference, for
// bench/compare.py (--reference build/cpu-reference).
//
// usage: cpu-reference [--sizes 2^24] [--types uint,float] [--reps 30]
#include "Reference.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <execution>
#include <iterator>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

template <class F>
double MedianMs(int reps, F f) {
  for (int i = 0; i < 3; ++i)
    f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    const auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::milli>(b - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Keeps the compiler from dropping a result nobody reads.
template <class T>
void Keep(const T& v) {
  asm volatile("" : : "g"(&v) : "memory");
}

template <class T>
void Run(int reps, const std::string& type, size_t n) {
  // The suite's ranges: unsigned in [0, 2000], floating point in [-1, 1).
  std::vector<T> in(n), out(n);
  std::mt19937_64 g(1);
  for (auto& x : in) {
    if constexpr (std::is_floating_point_v<T>)
      x = static_cast<T>(int64_t(g() >> 40) - (int64_t(1) << 23)) * T(0x1p-23);
    else
      x = static_cast<T>(g() % 2001);
  }
  T sum{};
  const double r = MedianMs(reps, [&] {
    sum = std::reduce(std::execution::par, in.begin(), in.end(), T(0));
    Keep(sum);
  });
  rsb::bench::PrintResult("reduction", "std::reduce(par)", type, n, r, n * sizeof(T));
  const double s = MedianMs(reps, [&] {
    std::inclusive_scan(std::execution::par, in.begin(), in.end(), out.begin());
    Keep(out[n - 1]);
  });
  rsb::bench::PrintResult("scan", "std::inclusive_scan(par)", type, n, s, 2 * n * sizeof(T));
  // Integers sum exactly (wrapping): both against one sequential loop, so that a broken build
  // cannot report a speed.
  if constexpr (!std::is_floating_point_v<T>) {
    const T want = std::accumulate(in.begin(), in.end(), T(0));
    if (sum != want || out[n - 1] != want) {
      std::fprintf(stderr,
                   "cpu-reference: %s n=%zu: reduce %llu, scan's last %llu, expected %llu\n",
                   type.c_str(), n, (unsigned long long)sum, (unsigned long long)out[n - 1],
                   (unsigned long long)want);
      std::exit(1);
    }
  }
}

// std::copy_if(par) keeping x < kept on x uniform in [0, 100): kept% of the input, in order,
// checked against a sequential std::copy_if (exit 1 where it differs).
template <class T>
void RunSelect(int reps, const std::string& type, size_t n) {
  std::vector<T> in(n), out(n);
  std::mt19937_64 g(7);
  for (auto& x : in)
    x = static_cast<T>(g() % 100);
  for (int kept : rsb::bench::SelectKeptPercents()) {
    const T t = static_cast<T>(kept);
    const auto below = [t](T x) { return x < t; };
    size_t k = 0;
    const double ms = MedianMs(reps, [&] {
      k = std::copy_if(std::execution::par, in.begin(), in.end(), out.begin(), below) - out.begin();
      Keep(out[0]);
    });
    std::vector<T> want;
    std::copy_if(in.begin(), in.end(), std::back_inserter(want), below);
    if (k != want.size() || !std::equal(want.begin(), want.end(), out.begin())) {
      std::fprintf(stderr, "cpu-reference: select %s n=%zu kept %d%%: %zu kept, expected %zu\n",
                   type.c_str(), n, kept, k, want.size());
      std::exit(1);
    }
    rsb::bench::PrintSelect("std::copy_if(par)", type, n, kept, ms, (n + k) * sizeof(T));
  }
}

}  // namespace

int main(int argc, char** argv) {
  rsb::bench::ReferenceOptions o;
  o.sizes = {size_t(1) << 24};
  o.types = {"uint", "float"};
  rsb::bench::ParseReferenceOptions(argc, argv, "cpu-reference", {"uint", "float"}, false, o);
  std::fprintf(stderr, "cpu-reference: std::execution::par on %u hardware threads\n",
               std::thread::hardware_concurrency());
  for (size_t n : o.sizes)
    for (const auto& t : o.types) {
      if (t == "uint") {
        Run<uint32_t>(o.reps, t, n);
        RunSelect<uint32_t>(o.reps, t, n);
      } else {
        Run<float>(o.reps, t, n);
        RunSelect<float>(o.reps, t, n);
      }
    }
  return 0;
}
