// The device's turns (DeviceTurns): the grader's child runs share the device, and a speed
// measurement has it alone. Apart from what grading knows of a class (Context.h): the turns
// only order the children.
#pragma once

#include "platform/ChildPause.h"

#include <condition_variable>
#include <mutex>
#include <optional>

namespace rsb::grade {

// Turns on the device: every child run that validates shares it; a speed measurement has it
// alone (no other child run of the grader on the device while it times). Writers first: a speed
// measurement waiting stops new shared turns, so that it is never starved by a busy class.
// On a CPU device (PauseOthers) an alone turn does not wait for the shared ones to end: the
// grader's other children are stopped for its length (platform/ChildPause.h), so that a core
// is not left idle while a case list ends.
class DeviceTurns {
 public:
  void PauseOthers(bool on) { pauseOthers_ = on; }
  void Share() {
    std::unique_lock l(mu_);
    free_.wait(l, [&] { return !alone_ && waiting_ == 0; });
    ++sharing_;
  }
  void EndShare() {
    std::lock_guard l(mu_);
    if (--sharing_ == 0)
      free_.notify_all();
  }
  void Alone() {
    std::unique_lock l(mu_);
    ++waiting_;
    free_.wait(l, [&] { return !alone_ && (pauseOthers_ || sharing_ == 0); });
    --waiting_;
    alone_ = true;
    l.unlock();
    if (pauseOthers_)  // only the thread with the alone turn touches paused_
      paused_.emplace();
  }
  void EndAlone() {
    paused_.reset();
    std::lock_guard l(mu_);
    alone_ = false;
    free_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable free_;
  int sharing_ = 0, waiting_ = 0;
  bool alone_ = false;
  bool pauseOthers_ = false;  // set before the first turn
  std::optional<OthersPaused> paused_;
};

// A turn on the device for one scope (None: a run that does not use it).
class DeviceTurn {
 public:
  enum Kind { None, Shared, Alone };
  DeviceTurn(DeviceTurns& turns, Kind kind) : turns_(turns), kind_(kind) {
    if (kind_ == Shared)
      turns_.Share();
    else if (kind_ == Alone)
      turns_.Alone();
  }
  ~DeviceTurn() {
    if (kind_ == Shared)
      turns_.EndShare();
    else if (kind_ == Alone)
      turns_.EndAlone();
  }
  DeviceTurn(const DeviceTurn&) = delete;
  DeviceTurn& operator=(const DeviceTurn&) = delete;

 private:
  DeviceTurns& turns_;
  Kind kind_;
};

}  // namespace rsb::grade
