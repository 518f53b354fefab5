// --device-lock: one device shared by several processes (runs started at once on a GPU): a run
// that validates holds the lock shared around its device work; a timed loop holds it alone, so
// that no other process's kernels or transfers run while it times. Writers first: a process
// waiting to time takes a turnstile (PATH.turn) that new shared holders must pass, so a busy
// class cannot starve a speed measurement. flock(2) locks: released when the process ends,
// whatever ends it.
#pragma once

#include <string>

namespace rsb {

class DeviceLock {
 public:
  explicit DeviceLock(const std::string& path);  // "": no lock (every hold is a no-op)
  ~DeviceLock();
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;

  // Held for its scope.
  class Hold {
   public:
    Hold(const DeviceLock& lock, bool alone);
    ~Hold();
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    const DeviceLock& lock_;
    bool alone_;
  };
  Hold Shared() const { return Hold(*this, false); }
  Hold Alone() const { return Hold(*this, true); }

 private:
  int lock_ = -1, turn_ = -1;
};

}  // namespace rsb
