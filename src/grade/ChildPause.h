// The grader's timed runs on a CPU device, where the device is the machine's cores: a timed child
// run must have them alone. Waiting until every other child had ended left a core idle for a
// whole case list (seconds) before each timed run of a fraction of a second; instead, for the
// timed run's life, every other child that RunProcess started is stopped (SIGSTOP to each process
// of its tree, sandboxed descendants in a session of their own included) and continued after it.
// This is RunProcess's ChildWatcher (platform/Subprocess.h), installed before main: while a
// thread is alone, a child of another thread waits to start, and a stopped child's deadline and
// `seconds` leave its stopped time out.
#pragma once

#include <sys/types.h>

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

// The process and every process below it (by parent, from /proc), the process first; [pid]
// alone where /proc cannot be read.
std::vector<pid_t> ProcessTree(pid_t pid);

}  // namespace rsb
