#include "grade/Turns.h"

#include "platform/Subprocess.h"

#include <algorithm>

namespace rsb::grade {

namespace {

// A wait on the turns or the runs looks at the interrupt this often: an interrupted grader stops
// waiting for what it would then not run.
constexpr auto kLook = std::chrono::milliseconds(50);

template <class Ready>
void WaitFor(std::condition_variable& cv, std::unique_lock<std::mutex>& l, Ready ready) {
  while (!ready() && !Interrupted())
    cv.wait_for(l, kLook);
}

}  // namespace

void DeviceTurns::Share() {
  std::unique_lock l(mu_);
  free_.wait(l, [&] { return !alone_ && !exclusive_ && waiting_ == 0; });
  ++sharing_;
}

void DeviceTurns::EndShare() {
  std::lock_guard l(mu_);
  if (--sharing_ == 0)
    free_.notify_all();
}

void DeviceTurns::Alone() {
  std::unique_lock l(mu_);
  ++waiting_;
  free_.wait(l, [&] { return !alone_ && !exclusive_ && (pauseOthers_ || sharing_ == 0); });
  --waiting_;
  alone_ = true;
  l.unlock();
  if (pauseOthers_)  // only the thread with the alone turn touches paused_
    paused_.emplace();
}

void DeviceTurns::EndAlone() {
  paused_.reset();
  std::lock_guard l(mu_);
  alone_ = false;
  free_.notify_all();
}

// Never by pausing: a child stopped with SIGSTOP keeps its hold on a GPU (its kernel may be the
// one that never ends), so the turn waits for every run in flight to end.
void DeviceTurns::Exclusive() {
  std::unique_lock l(mu_);
  ++waiting_;
  free_.wait(l, [&] { return !alone_ && !exclusive_ && sharing_ == 0; });
  --waiting_;
  exclusive_ = true;
}

void DeviceTurns::EndExclusive() {
  std::lock_guard l(mu_);
  exclusive_ = false;
  free_.notify_all();
}

DeviceTurn::DeviceTurn(DeviceTurns& turns, Kind kind) : turns_(turns), kind_(kind) {
  if (kind_ == Shared)
    turns_.Share();
  else if (kind_ == Alone)
    turns_.Alone();
  else if (kind_ == Exclusive)
    turns_.Exclusive();
}

DeviceTurn::~DeviceTurn() {
  if (kind_ == Shared)
    turns_.EndShare();
  else if (kind_ == Alone)
    turns_.EndAlone();
  else if (kind_ == Exclusive)
    turns_.EndExclusive();
}

size_t DeviceRuns::Begin() {
  std::lock_guard l(mu_);
  runs_[next_].start = Clock::now();
  return next_++;
}

void DeviceRuns::End(size_t id, bool timedOut, bool suspect) {
  std::lock_guard l(mu_);
  Run& r = runs_.at(id);
  r.end = Clock::now();
  r.ended = true;
  r.timedOut = timedOut;
  r.pending = suspect;
  Forget();
  changed_.notify_all();
}

bool DeviceRuns::Overlap(const Run& a, const Run& b) const {
  return (!b.ended || a.start < b.end) && (!a.ended || b.start < a.end);
}

void DeviceRuns::AwaitNeighbours(size_t id) {
  std::unique_lock l(mu_);
  WaitFor(changed_, l, [&] {
    const Run& me = runs_.at(id);
    return std::none_of(runs_.begin(), runs_.end(), [&](const auto& r) {
      return r.first != id && !r.second.ended && Overlap(me, r.second);
    });
  });
}

bool DeviceRuns::NeighbourHung(size_t id) {
  std::lock_guard l(mu_);
  const Run& me = runs_.at(id);
  return std::any_of(runs_.begin(), runs_.end(), [&](const auto& r) {
    return r.first != id && r.second.ended && r.second.timedOut && Overlap(me, r.second);
  });
}

void DeviceRuns::AwaitEarlier(size_t id) {
  std::unique_lock l(mu_);
  WaitFor(changed_, l, [&] {
    const Run& me = runs_.at(id);
    return std::none_of(runs_.begin(), runs_.end(), [&](const auto& r) {
      return r.first != id && r.second.pending && r.second.end < me.end;
    });
  });
}

void DeviceRuns::Settle(size_t id, bool hung) {
  std::lock_guard l(mu_);
  Run& r = runs_.at(id);
  r.timedOut = hung;
  r.pending = false;
  Forget();
  changed_.notify_all();
}

void DeviceRuns::Forget() {
  std::optional<Clock::time_point> oldest;  // the earliest start of a run still in question
  for (const auto& [id, r] : runs_)
    if (!r.ended || r.pending)
      oldest = oldest ? std::min(*oldest, r.start) : r.start;
  for (auto it = runs_.begin(); it != runs_.end();)
    it = it->second.ended && !it->second.pending && (!oldest || it->second.end < *oldest)
             ? runs_.erase(it)
             : std::next(it);
}

}  // namespace rsb::grade
