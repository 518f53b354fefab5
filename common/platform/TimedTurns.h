// Two processes that time in turns (`ab`'s rounds, a parent's speed runs on a CPU device), their
// parent between them (RunInTurns, Subprocess.h) on a socket whose end in this process is an fd
// the parent names (a `serve` request's "turns"). Before each timed run, a warm-up included, this
// process says that it waits (one byte) and waits for its turn (one byte back); the turn is its
// until it says that it waits again or ends. So the two processes' runs alternate and never
// overlap, and each run's neighbour ran just before it on the machine as it was then: on a shared
// VM whose speed drifts by 10-20% within seconds, the ratio of neighbours holds where that of two
// separate runs does not (docs/COURSE.md, "Fair under load").
#pragma once

namespace rsb {

class TimedTurns {
 public:
  explicit TimedTurns(int fd) : fd_(fd) {}  // -1: no turns (Take returns at once)
  // Waits for this process's next turn; DeviceError where the parent's end is gone.
  void Take() const;

 private:
  int fd_;
};

}  // namespace rsb
