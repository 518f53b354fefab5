// Boost.Compute reference for reduce-scan-bench: boost::compute::reduce, inclusive_scan and
// copy_if (stream compaction, "keep x < t" on x uniform in [0, 100) with 1%, 50% and 99% kept,
// checked against std::copy_if) on one OpenCL device, uint and float, timed on the host
// (Boost.Compute's reduce returns its result to the host, so its time includes that read-back),
// median of repeated runs after a warm-up. Prints one JSON object per line.
//
// usage: boost-reference [--platform SUBSTRING] [--sizes 2^24] [--types uint,float] [--reps 30]
#define CL_TARGET_OPENCL_VERSION 120
#include <boost/compute/algorithm/copy_if.hpp>
#include <boost/compute/algorithm/inclusive_scan.hpp>
#include <boost/compute/algorithm/reduce.hpp>
#include <boost/compute/container/vector.hpp>
#include <boost/compute/core.hpp>
#include <boost/compute/lambda.hpp>

#include "Reference.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace bc = boost::compute;

namespace {

template <class F>
double MedianMs(bc::command_queue& q, int reps, F f) {
  for (int i = 0; i < 3; ++i)
    f();
  q.finish();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    q.finish();
    const auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::milli>(b - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <class T>
void Run(bc::command_queue& q, int reps, const std::string& type, size_t n) {
  std::vector<T> h(n);
  std::mt19937_64 g(1);
  for (auto& x : h)
    x = static_cast<T>(g() % 2001);
  bc::vector<T> in(h.begin(), h.end(), q), out(n, q.get_context());
  T result{};
  const double r = MedianMs(q, reps, [&] { bc::reduce(in.begin(), in.end(), &result, q); });
  rsb::bench::PrintResult("reduction", "boost::compute::reduce", type, n, r, n * sizeof(T));
  const double s =
      MedianMs(q, reps, [&] { bc::inclusive_scan(in.begin(), in.end(), out.begin(), q); });
  rsb::bench::PrintResult("scan", "boost::compute::inclusive_scan", type, n, s, 2 * n * sizeof(T));
}

// boost::compute::copy_if keeping x < kept on x uniform in [0, 100): kept% of the input, in
// order, checked against std::copy_if (exit 1 where it differs).
template <class T>
void RunSelect(bc::command_queue& q, int reps, const std::string& type, size_t n) {
  std::vector<T> h(n);
  std::mt19937_64 g(7);
  for (auto& x : h)
    x = static_cast<T>(g() % 100);
  bc::vector<T> in(h.begin(), h.end(), q), out(n, q.get_context());
  for (int kept : rsb::bench::SelectKeptPercents()) {
    using bc::lambda::_1;
    const T t = static_cast<T>(kept);
    size_t k = 0;
    const double ms = MedianMs(q, reps, [&] {
      k = bc::copy_if(in.begin(), in.end(), out.begin(), _1 < t, q) - out.begin();
    });
    std::vector<T> want, got(k);
    std::copy_if(h.begin(), h.end(), std::back_inserter(want), [t](T x) { return x < t; });
    bc::copy(out.begin(), out.begin() + k, got.begin(), q);
    if (got != want) {
      std::fprintf(stderr, "boost-reference: select %s n=%zu kept %d%%: %zu kept, expected %zu\n",
                   type.c_str(), n, kept, k, want.size());
      std::exit(1);
    }
    rsb::bench::PrintSelect("boost::compute::copy_if", type, n, kept, ms, (n + k) * sizeof(T));
  }
}

}  // namespace

int main(int argc, char** argv) {
  rsb::bench::ReferenceOptions o;
  o.sizes = {size_t(1) << 24};
  o.types = {"uint", "float"};
  rsb::bench::ParseReferenceOptions(argc, argv, "boost-reference", {"uint", "float"}, true, o);
  bc::device dev = bc::system::default_device();
  if (!o.platform.empty()) {
    bool found = false;
    for (auto& p : bc::system::platforms())
      if (p.name().find(o.platform) != std::string::npos && p.device_count() > 0) {
        dev = p.devices()[0];
        found = true;
        break;
      }
    if (!found) {
      std::fprintf(stderr, "boost-reference: no OpenCL platform matches '%s'\n",
                   o.platform.c_str());
      return 3;
    }
  }
  std::fprintf(stderr, "boost-reference on %s (%s)\n", dev.name().c_str(),
               dev.platform().name().c_str());
  bc::context ctx(dev);
  bc::command_queue q(ctx, dev);
  for (size_t n : o.sizes)
    for (const auto& t : o.types) {
      if (t == "uint") {
        Run<cl_uint>(q, o.reps, t, n);
        RunSelect<cl_uint>(q, o.reps, t, n);
      } else {
        Run<cl_float>(q, o.reps, t, n);
        RunSelect<cl_float>(q, o.reps, t, n);
      }
    }
  return 0;
}
