#include "platform/ProfilingTimer.h"

#include "platform/TaskContext.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>

namespace rsb {

namespace {

std::string CopyBytesText(uint64_t bytes) {
  return bytes >= (uint64_t(1) << 20) ? fmt::format("{} MiB", bytes >> 20)
                                      : fmt::format("{} KiB", bytes >> 10);
}

std::string NsText(double ns) {
  return ns >= 1e6 ? fmt::format("{:.3f} ms", ns * 1e-6) : fmt::format("{:.0f} ns", ns);
}

// The first span that cannot come from a working clock, as a reason ("" if none).
std::string BadSpan(const std::vector<TimerSample>& samples) {
  for (const auto& s : samples) {
    if (s.endNs < s.startNs)
      return fmt::format(
          "a {} copy's profiling span ends before it starts (start {} ns, end {} ns)",
          CopyBytesText(s.bytes), s.startNs, s.endNs);
    if (s.endNs == s.startNs)
      return fmt::format("a {} copy took 0 ns by its profiling events", CopyBytesText(s.bytes));
    // The host's clock runs from before the enqueue to after the wait: the command ran inside.
    const double spanNs = double(s.endNs - s.startNs);
    if (s.hostMs > 0 && spanNs > 2 * s.hostMs * 1e6 + 1e6)
      return fmt::format(
          "a {} copy took {} by its profiling events but {} by the host's clock around it",
          CopyBytesText(s.bytes), NsText(spanNs), NsText(s.hostMs * 1e6));
  }
  return "";
}

// The fastest of the samples' spans, in ns.
double FastestNs(const std::vector<TimerSample>& samples) {
  double fastest = 0;
  for (const auto& s : samples) {
    const double ns = double(s.endNs - s.startNs);
    fastest = fastest == 0 ? ns : std::min(fastest, ns);
  }
  return fastest;
}

}  // namespace

const char* ToString(TimerMode m) {
  return m == TimerMode::Events ? "events" : m == TimerMode::Host ? "host" : "auto";
}

std::optional<TimerMode> ParseTimerMode(const std::string& name) {
  for (const TimerMode m : {TimerMode::Auto, TimerMode::Events, TimerMode::Host})
    if (name == ToString(m))
      return m;
  return std::nullopt;
}

std::string TimerVerdict::Clock() const {
  if (mode == TimerMode::Host)
    return "host";
  if (!checked || usable)
    return "events";
  return mode == TimerMode::Auto ? "host" : "";
}

uint64_t HostClockResolutionNs() {
  timespec res{};
  if (clock_getres(CLOCK_MONOTONIC, &res) != 0)
    return 1;
  return std::max<uint64_t>(1, uint64_t(res.tv_sec) * 1000000000u + uint64_t(res.tv_nsec));
}

uint64_t ClockResolutionNs(const std::string& clock, uint64_t deviceResolutionNs) {
  return clock == "host" ? HostClockResolutionNs() : clock == "events" ? deviceResolutionNs : 0;
}

TimerVerdict JudgeTimer(const TimerSamples& t) {
  TimerVerdict v{true, false, ""};
  if (t.resolutionNs == 0)
    v.reason = "CL_DEVICE_PROFILING_TIMER_RESOLUTION is 0";
  else if (t.small.empty() || t.large.empty())
    v.usable = true;  // no room for a copy (a device of under 64 KiB): the resolution alone
  else if (const std::string bad = BadSpan(t.small); !bad.empty())
    v.reason = bad;
  else if (const std::string bad = BadSpan(t.large); !bad.empty())
    v.reason = bad;
  if (!v.reason.empty() || v.usable)
    return v;
  const double small = FastestNs(t.small), large = FastestNs(t.large);
  const uint64_t bytes = t.large.front().bytes;
  const double gbs = 2.0 * double(bytes) / large;  // read + written, bytes per ns = GB/s
  if (gbs > 1e5)
    v.reason = fmt::format(
        "a {} copy took {} by its profiling events: {:.0f} TB/s, beyond any "
        "memory",
        CopyBytesText(bytes), NsText(large), gbs * 1e-3);
  else if (gbs < 1e-3)
    v.reason = fmt::format("a {} copy took {} by its profiling events: below 1 MB/s",
                           CopyBytesText(bytes), NsText(large));
  else if (large < 1.5 * small)
    v.reason = fmt::format(
        "a copy of {} times the bytes took {:.2f} times as long ({}: {}, {}: {}): the spans do "
        "not grow with the work",
        t.small.front().bytes ? bytes / t.small.front().bytes : 0, large / small,
        CopyBytesText(t.small.front().bytes), NsText(small), CopyBytesText(bytes), NsText(large));
  v.usable = v.reason.empty();
  return v;
}

std::string TimerUnusable(const std::string& deviceName, const TimerVerdict& v) {
  return fmt::format("{}'s profiling timer is unusable ({})", deviceName, v.reason);
}

TimerVerdict CheckTimer(TaskContext& ctx) {
  if (const char* forced = std::getenv("RSB_FORCE_UNTIMED"); forced && *forced)
    return {true, false, "forced by RSB_FORCE_UNTIMED (a test setting)"};
  return JudgeTimer(MeasureTimer(ctx));
}

TimerSamples MeasureTimer(TaskContext& ctx) {
  TimerSamples t;
  t.resolutionNs = ctx.device.getInfo<CL_DEVICE_PROFILING_TIMER_RESOLUTION>();
  uint64_t large = uint64_t(64) << 20;
  large = std::min<uint64_t>(large, ctx.info.maxAllocBytes / 2);
  large = std::min<uint64_t>(large, ctx.info.globalMemBytes / 8);
  large -= large % (uint64_t(16) << 10);
  const uint64_t small = large / 16;
  if (small == 0)
    return t;  // no room for a copy: judged on the resolution alone
  cl::Buffer from(ctx.context, CL_MEM_READ_WRITE, large), to(ctx.context, CL_MEM_READ_WRITE, large);
  ctx.queue.enqueueFillBuffer(from, cl_uint(0x9E3779B9), 0, large);
  ctx.queue.enqueueCopyBuffer(from, to, 0, 0, large);  // both buffers touched before timing
  ctx.queue.finish();
  for (int round = 0; round < 3; ++round)
    for (const uint64_t bytes : {small, large}) {
      cl::Event e;
      const auto begin = std::chrono::steady_clock::now();
      ctx.queue.enqueueCopyBuffer(from, to, 0, 0, bytes, nullptr, &e);
      e.wait();
      const std::chrono::duration<double, std::milli> host =
          std::chrono::steady_clock::now() - begin;
      TimerSample s{e.getProfilingInfo<CL_PROFILING_COMMAND_START>(),
                    e.getProfilingInfo<CL_PROFILING_COMMAND_END>(), bytes, host.count()};
      (bytes == small ? t.small : t.large).push_back(s);
    }
  return t;
}

}  // namespace rsb
