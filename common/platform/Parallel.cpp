#include "platform/Parallel.h"

#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace rsb {

size_t HostThreads() {
  if (const char* env = std::getenv("RSB_HOST_THREADS")) {
    const std::string s(env);
    if (!s.empty() && s.size() <= 4 && s.find_first_not_of("0123456789") == std::string::npos) {
      const size_t n = std::stoul(s);
      if (n >= 1)
        return n;
    }
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

void ParallelFor(size_t count, const std::function<void(size_t)>& fn) {
  const size_t threads = std::min(HostThreads(), count);
  if (threads <= 1) {
    for (size_t i = 0; i < count; ++i)
      fn(i);
    return;
  }
  // Indices are handed out one at a time: chunks cost about the same, and a thread the system
  // slows down takes fewer of them.
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex errorMutex;
  auto work = [&] {
    while (!failed.load(std::memory_order_relaxed)) {
      const size_t i = next++;
      if (i >= count)
        return;
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (!error)
          error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: those started (and this one) do the rest
    }
  }
  work();
  for (std::thread& t : pool)
    t.join();
  if (error)
    std::rethrow_exception(error);
}

}  // namespace rsb
