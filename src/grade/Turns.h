// The device's turns (DeviceTurns): the grader's child runs share the device, a speed measurement
// has it alone, and a run charged only after it ran with the device to itself has it exclusively.
// And the record of the runs that used it (DeviceRuns): when each ran, and whether it hung. Apart
// from what grading knows of a class (Context.h): the turns only order the children.
#pragma once

#include "grade/ChildPause.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>

namespace rsb::grade {

// Turns on the device: every child run that uses it shares it; a speed measurement has it
// alone (no other child run of the grader on the device while it times); an exclusive turn has
// it to itself, whatever the device: it waits until every run on it has ended (a child stopped
// with SIGSTOP still holds a GPU) and lets no other start meanwhile. Writers first: a turn alone
// or exclusive that waits stops new shared turns, so that it is never starved by a busy class.
// On a CPU device (PauseOthers) an alone turn does not wait for the shared ones to end: the
// grader's other children are stopped for its length (grade/ChildPause.h), so that a core
// is not left idle while a case list ends.
class DeviceTurns {
 public:
  void PauseOthers(bool on) { pauseOthers_ = on; }
  void Share();
  void EndShare();
  void Alone();
  void EndAlone();
  void Exclusive();
  void EndExclusive();

 private:
  std::mutex mu_;
  std::condition_variable free_;
  int sharing_ = 0, waiting_ = 0;
  bool alone_ = false, exclusive_ = false;
  bool pauseOthers_ = false;  // set before the first turn
  std::optional<OthersPaused> paused_;
};

// A turn on the device for one scope (None: a run that does not use it).
class DeviceTurn {
 public:
  enum Kind { None, Shared, Alone, Exclusive };
  DeviceTurn(DeviceTurns& turns, Kind kind);
  ~DeviceTurn();
  DeviceTurn(const DeviceTurn&) = delete;
  DeviceTurn& operator=(const DeviceTurn&) = delete;

 private:
  DeviceTurns& turns_;
  Kind kind_;
};

// The child runs that used the device, each from the start of its turn to its end: whether a
// run's neighbours (the runs whose time overlapped its own) hung. A run that timed out or failed
// with a device error is a suspect: it stays pending until its owner settles what is charged for
// it (Device::Watched, Context.cpp), so that a run that hung only because a neighbour held the
// device, run again alone and passing, no longer counts as hung for the others.
class DeviceRuns {
 public:
  size_t Begin();
  void End(size_t id, bool timedOut, bool suspect);
  // Waits until every run that overlapped run id has ended (or the grader is interrupted).
  void AwaitNeighbours(size_t id);
  // A run that overlapped run id timed out, and has not passed since when run again alone.
  bool NeighbourHung(size_t id);
  // Waits until no suspect that ended before run id is pending: the first to end is run again
  // first. A run that timed out only because a neighbour hung ends while that neighbour still
  // runs, so it is run again, and cleared, before the neighbour's own verdict is looked at.
  void AwaitEarlier(size_t id);
  // What is charged for the suspect: it hung (timed out, alone too), or not.
  void Settle(size_t id, bool hung);

 private:
  using Clock = std::chrono::steady_clock;
  struct Run {
    Clock::time_point start, end;
    bool ended = false, timedOut = false, pending = false;
  };
  bool Overlap(const Run& a, const Run& b) const;
  void Forget();  // the runs no later question can be about
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<size_t, Run> runs_;
  size_t next_ = 0;
};

}  // namespace rsb::grade
