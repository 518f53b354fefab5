#include "grade/ChildPause.h"

#include "platform/Subprocess.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

namespace fs = std::filesystem;

namespace rsb {

namespace {

using Clock = std::chrono::steady_clock;

struct Child {
  std::thread::id owner;
  double pausedS = 0;                      // stops that have ended
  std::optional<Clock::time_point> since;  // the stop in progress
  std::vector<pid_t> stopped;              // what that stop sent SIGSTOP to
};

struct Registry {
  std::mutex mu;
  std::condition_variable free;
  std::map<pid_t, Child> children;
  bool alone = false;
  std::thread::id aloneThread;
};

// Never destroyed: a child may still be unregistered from a thread ending after main.
Registry& Reg() {
  static Registry* r = new Registry;
  return *r;
}

// The parent of a process, from /proc/PID/stat ("pid (comm) state ppid ..."; comm may hold
// spaces and parentheses, so the fields are read after the last ')'); -1 where it cannot be read.
pid_t ParentOf(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string stat;
  std::getline(in, stat);
  const size_t close = stat.rfind(')');
  if (close == std::string::npos)
    return -1;
  std::istringstream rest(stat.substr(close + 1));
  char state = 0;
  pid_t ppid = -1;
  rest >> state >> ppid;
  return rest ? ppid : -1;
}

// Stops the child's tree. Twice: a process that forked before it was stopped has a new child to
// stop. Each process is stopped before its tree is read again.
void Stop(pid_t pid, Child& c) {
  for (int pass = 0; pass < 2; ++pass)
    for (const pid_t p : ProcessTree(pid))
      if (std::find(c.stopped.begin(), c.stopped.end(), p) == c.stopped.end() &&
          ::kill(p, SIGSTOP) == 0)
        c.stopped.push_back(p);
  c.since = Clock::now();
}

void Continue(Child& c) {
  for (const pid_t p : c.stopped)
    ::kill(p, SIGCONT);
  c.stopped.clear();
  if (c.since)
    c.pausedS += std::chrono::duration<double>(Clock::now() - *c.since).count();
  c.since.reset();
}

}  // namespace

std::vector<pid_t> ProcessTree(pid_t pid) {
  std::multimap<pid_t, pid_t> below;  // parent -> child
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const pid_t parent = ParentOf(name);
    if (parent > 0)
      below.emplace(parent, pid_t(std::strtol(name.c_str(), nullptr, 10)));
  }
  std::vector<pid_t> tree{pid};
  for (size_t i = 0; i < tree.size(); ++i) {
    const auto [from, to] = below.equal_range(tree[i]);
    for (auto it = from; it != to; ++it)
      tree.push_back(it->second);
  }
  return tree;
}

OthersPaused::OthersPaused() {
  Registry& r = Reg();
  std::unique_lock l(r.mu);
  r.free.wait(l, [&] { return !r.alone; });
  r.alone = true;
  r.aloneThread = std::this_thread::get_id();
  for (auto& [pid, child] : r.children)
    if (child.owner != r.aloneThread)
      Stop(pid, child);
}

OthersPaused::~OthersPaused() {
  Registry& r = Reg();
  std::lock_guard l(r.mu);
  for (auto& [pid, child] : r.children)
    Continue(child);
  r.alone = false;
  r.free.notify_all();
}

namespace {

// RunProcess's watcher: a child waits while another thread holds OthersPaused, then is
// registered as the calling thread's.
class PauseWatcher final : public ChildWatcher {
 public:
  pid_t Start(const std::function<pid_t()>& spawn) override;
  double StoppedSeconds(pid_t pid) override;
  void Forget(pid_t pid) override;
};

pid_t PauseWatcher::Start(const std::function<pid_t()>& spawn) {
  Registry& r = Reg();
  std::unique_lock l(r.mu);
  const auto self = std::this_thread::get_id();
  r.free.wait(l, [&] { return !r.alone || r.aloneThread == self; });
  const pid_t pid = spawn();
  if (pid > 0)
    r.children[pid] = Child{self, 0, std::nullopt, {}};
  return pid;
}

double PauseWatcher::StoppedSeconds(pid_t pid) {
  Registry& r = Reg();
  std::lock_guard l(r.mu);
  const auto it = r.children.find(pid);
  if (it == r.children.end())
    return 0;
  const Child& c = it->second;
  return c.pausedS +
         (c.since ? std::chrono::duration<double>(Clock::now() - *c.since).count() : 0.0);
}

void PauseWatcher::Forget(pid_t pid) {
  Registry& r = Reg();
  std::lock_guard l(r.mu);
  const auto it = r.children.find(pid);
  if (it == r.children.end() || it->second.owner != std::this_thread::get_id())
    return;
  Continue(it->second);  // a child killed while stopped leaves no stopped process behind
  r.children.erase(it);
}

// Installed before main, so that every child RunProcess starts is watched.
[[maybe_unused]] const bool kInstalled = [] {
  static PauseWatcher watcher;
  SetChildWatcher(&watcher);
  return true;
}();

}  // namespace

}  // namespace rsb
