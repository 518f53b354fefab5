// Boost.Compute reference for reduce-scan-bench: boost::compute::reduce and inclusive_scan on
// one OpenCL device, uint and float, timed on the host (Boost.Compute's reduce returns its
// result to the host, so its time includes that read-back), median of repeated runs after a
// warm-up. Prints one JSON object per line.
//
// usage: boost-reference [--platform SUBSTRING] [--sizes 2^24] [--types uint,float] [--reps 30]
#define CL_TARGET_OPENCL_VERSION 120
#include <boost/compute/algorithm/inclusive_scan.hpp>
#include <boost/compute/algorithm/reduce.hpp>
#include <boost/compute/container/vector.hpp>
#include <boost/compute/core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace bc = boost::compute;

namespace {

int reps = 30;

template <class F>
double MedianMs(bc::command_queue& q, F f) {
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
void Run(bc::command_queue& q, const char* type, size_t n) {
  std::vector<T> h(n);
  std::mt19937_64 g(1);
  for (auto& x : h)
    x = static_cast<T>(g() % 2001);
  bc::vector<T> in(h.begin(), h.end(), q), out(n, q.get_context());
  T result{};
  const double r = MedianMs(q, [&] { bc::reduce(in.begin(), in.end(), &result, q); });
  const double s = MedianMs(q, [&] { bc::inclusive_scan(in.begin(), in.end(), out.begin(), q); });
  for (auto [task, algo, ms] : {std::tuple{"reduction", "boost::compute::reduce", r},
                                std::tuple{"scan", "boost::compute::inclusive_scan", s}})
    std::printf(
        "{\"task\":\"%s\",\"algorithm\":\"%s\",\"type\":\"%s\",\"op\":\"sum\",\"n\":%zu,"
        "\"time_ms\":%.6f,\"gelem_s\":%.3f}\n",
        task, algo, type, n, ms, n / (ms * 1e6));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string platform, sizes = "2^24", types = "uint,float";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--platform"))
      platform = argv[i + 1];
    else if (!std::strcmp(argv[i], "--sizes"))
      sizes = argv[i + 1];
    else if (!std::strcmp(argv[i], "--types"))
      types = argv[i + 1];
    else if (!std::strcmp(argv[i], "--reps"))
      reps = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: boost-reference [--platform S] [--sizes L] [--types L]\n");
      return 2;
    }
  }
  bc::device dev = bc::system::default_device();
  for (auto& p : bc::system::platforms())
    if (!platform.empty() && p.name().find(platform) != std::string::npos) {
      dev = p.devices()[0];
      break;
    }
  std::fprintf(stderr, "boost-reference on %s (%s)\n", dev.name().c_str(),
               dev.platform().name().c_str());
  bc::context ctx(dev);
  bc::command_queue q(ctx, dev);
  size_t start = 0;
  while (start < sizes.size()) {
    size_t end = sizes.find(',', start);
    if (end == std::string::npos)
      end = sizes.size();
    const std::string s = sizes.substr(start, end - start);
    const size_t n = s.rfind("2^", 0) == 0 ? size_t(1) << std::stoul(s.substr(2)) : std::stoull(s);
    if (types.find("uint") != std::string::npos)
      Run<cl_uint>(q, "uint", n);
    if (types.find("float") != std::string::npos)
      Run<cl_float>(q, "float", n);
    start = end + 1;
  }
  return 0;
}
