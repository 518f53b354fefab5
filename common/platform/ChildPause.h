// The grader's timed runs on a CPU device, where the device is the machine's cores: a timed child
// run must have them alone. Waiting until every other child had ended left a core idle for a
// whole case list (seconds) before each timed run of a fraction of a second; instead, for the
// timed run's life, every other child that RunProcess started is stopped (SIGSTOP to each process
// of its tree, sandboxed descendants in a session of their own included) and continued after it.
// RunProcess registers its children here: while a thread is alone, a child of another thread
// waits to start, and a stopped child's deadline and `seconds` leave its stopped time out.
#pragma once

#include <sys/types.h>

#include <functional>
#include <vector>

namespace rsb {

// Held by the thread that times, for its scope: RunProcess's children of other threads are
// stopped, and new ones wait to start. One holder at a time (a second waits for the first).
class OthersPaused {
 public:
  OthersPaused();
  ~OthersPaused();
  OthersPaused(const OthersPaused&) = delete;
  OthersPaused& operator=(const OthersPaused&) = delete;
};

// RunProcess's side.
namespace child_pause {
// Waits while another thread holds OthersPaused; then runs spawn (a pid, or -1: nothing to
// register) and registers the child as the calling thread's.
pid_t StartRegistered(const std::function<pid_t()>& spawn);
// The seconds the child has been stopped so far, a stop in progress included.
double PausedSeconds(pid_t pid);
// Before the child is reaped (its pid could be reused after).
void Unregister(pid_t pid);
}  // namespace child_pause

// The process and every process below it (by parent, from /proc), the process first; [pid]
// alone where /proc cannot be read.
std::vector<pid_t> ProcessTree(pid_t pid);

}  // namespace rsb
