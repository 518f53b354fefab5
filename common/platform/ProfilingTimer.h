// Whether a device's profiling timer can be trusted, checked once per device and run before
// anything is timed on it. A driver may answer every profiling query without measuring
// anything: Mesa rusticl 22.3 (llvmpipe) reports CL_DEVICE_PROFILING_TIMER_RESOLUTION 0 and the
// timestamps 0, 1, 2, 3 ns for every command, which made a reduction of 2^24 elements take
// "0.0000 ms" at 16777216 Gelem/s. On such a device every case is still validated, and reported
// `untimed` instead of with a throughput the device never measured.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rsb {

struct TaskContext;

// --timer: which clock times the runs. Events: the profiling events (a device whose timer fails
// the check is then untimed); Host: the host's monotonic clock around a finished queue
// (clFinish before and after each run); Auto: the events where the check trusts them, else the
// host's clock (clpeak times with the host's clock by default).
enum class TimerMode { Auto, Events, Host };
const char* ToString(TimerMode m);
std::optional<TimerMode> ParseTimerMode(const std::string& name);

struct TimerVerdict {
  bool checked = false;  // false: not checked (nothing is timed: --check)
  bool usable = true;
  std::string reason;                // why it is unusable ("" when usable)
  TimerMode mode = TimerMode::Auto;  // --timer (set by whoever times with the verdict)
  bool Unusable() const { return checked && !usable; }
  // The clock that times runs under this verdict and mode: "events", "host", or "" where none
  // may (--timer events on a timer that failed the check: the cases are `untimed`).
  std::string Clock() const;
};

// The resolution in ns of the host's monotonic clock (clock_getres; steady_clock's), and that
// of the clock named by Clock() ("events": the device's CL_DEVICE_PROFILING_TIMER_RESOLUTION).
uint64_t HostClockResolutionNs();
uint64_t ClockResolutionNs(const std::string& clock, uint64_t deviceResolutionNs);

// One command's profiling span and what the host's clock saw around it (enqueue to wait).
struct TimerSample {
  uint64_t startNs = 0, endNs = 0;  // CL_PROFILING_COMMAND_START, _END
  uint64_t bytes = 0;               // the bytes the command copied (read once, written once)
  double hostMs = 0;                // steady_clock from before the enqueue to after the wait
};

struct TimerSamples {
  uint64_t resolutionNs = 0;  // CL_DEVICE_PROFILING_TIMER_RESOLUTION
  // Copies of a small buffer and of one 16 times larger, a few of each, in turn.
  std::vector<TimerSample> small, large;
};

// The verdict on samples, a pure function (the tests feed it rusticl's pattern and real-looking
// spans). Unusable, with the first reason found, where: the resolution is 0; a span ends before
// it starts or takes no time; the fastest large copy implies more than 100 TB/s or less than
// 1 MB/s; a span is much longer than the host's clock around it (more than 2x + 1 ms); the
// fastest large copy takes less than 1.5 times the fastest small one (16 times the bytes: a
// real timer shows 5-16 times as long). Without copies (a device too small for one) the
// resolution alone decides. Lenient by design: it must never judge a real timer
// unusable, only one that measures nothing.
TimerVerdict JudgeTimer(const TimerSamples& samples);

// The samples on ctx's queue: a 64 MiB copy and a 4 MiB one, three of each, in turn (less where
// the device's allocations are smaller; well under a second even on a CPU).
TimerSamples MeasureTimer(TaskContext& ctx);
// MeasureTimer judged. The environment variable RSB_FORCE_UNTIMED (any non-empty value), for
// tests only, makes the verdict unusable without measuring, so that the `untimed` path runs on
// any device.
TimerVerdict CheckTimer(TaskContext& ctx);

// "llvmpipe (LLVM 15.0.6, 256 bits)'s profiling timer is unusable (REASON)": how the table and
// an untimed case's message say it.
std::string TimerUnusable(const std::string& deviceName, const TimerVerdict& v);

}  // namespace rsb
