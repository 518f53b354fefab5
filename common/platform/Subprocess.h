// Runs another program as a child process under a wall-clock deadline that this process
// enforces itself: the child gets a process group of its own, and at the deadline the whole group
// (the child and anything it started, e.g. a compiler) is killed with SIGKILL. Whatever the child
// does (crash, hang, fill stdout), the caller gets an answer: for code that must not run in this
// process, or a program whose failures must not end it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rsb {

struct ProcessResult {
  bool started = false;      // false: it could not be started (startError says why)
  bool timedOut = false;     // killed at the deadline
  bool interrupted = false;  // killed because this process got SIGINT/SIGTERM
  int exitCode = -1;         // when it exited on its own
  int signal = 0;            // when a signal ended it (SIGSEGV...)
  double seconds = 0;        // its wall time, the time it was stopped left out:
  double pausedSeconds = 0;  // while its ChildWatcher had it stopped
  std::string out, err;      // captured (the first kMaxCapture bytes of each)
  std::string startError;
};

constexpr size_t kMaxCapture = 256 * 1024;

// How SpawnChild starts a program.
struct ChildSetup {
  // The program's path (no PATH search unless it has no '/'); "": argv[0].
  std::string program;
  std::vector<std::string> argv;
  char* const* envp = nullptr;  // nullptr: StartupEnvironment()
  // {a file descriptor of this process, the child's number for it}: the child's copies, made
  // first (whatever FD_CLOEXEC the originals have).
  std::vector<std::pair<int, int>> fds;
  int closeFrom = -1;  // >= 0: then the child keeps none of this process's fds from here up
  // Then files opened in the child (mode 0600 where created).
  struct File {
    int fd;
    std::string path;
    int flags;
  };
  std::vector<File> files;
  std::string workDir;       // the child's working folder ("": this process's)
  bool noCoreDumps = false;  // the child's RLIMIT_CORE is 0
  // A session of its own (and so, with the kernel's autogroups, a share of the CPU of its own, as
  // a sandbox's child has), not only a process group.
  bool newSession = false;
};

// The program's one way to start another process (RunProcess below, the isolated runs' workers):
// posix_spawn, not fork, so that no pthread_atfork handler of an OpenCL driver runs and nothing
// of this process reaches the child but what the setup names and the fds it lets through. The
// child gets a process group of its own (its pid: KillChild ends it with all it started; a
// session too where newSession) and
// SIGINT and SIGTERM at their defaults. Returns the pid, or -1 with `error` the errno (also where
// the program could not be executed or workDir entered).
pid_t SpawnChild(const ChildSetup& setup, int& error);
// SIGKILL to the child's process group and to the child.
void KillChild(pid_t pid);
// Waits until the child has ended (EINTR retried); its wait status.
int ReapChild(pid_t pid);

// What may watch RunProcess's children: a program that stops its other children while one runs
// alone installs one (SetChildWatcher, before its first child; none: each starts at once and is
// never stopped). A stopped child's deadline and `seconds` leave its stopped time out.
class ChildWatcher {
 public:
  virtual ~ChildWatcher() = default;
  // Runs spawn (a pid, or -1: nothing to watch) once the child may start, and watches the child.
  virtual pid_t Start(const std::function<pid_t()>& spawn) = 0;
  // The seconds the child has been stopped so far, a stop in progress included.
  virtual double StoppedSeconds(pid_t pid) = 0;
  // Before the child is reaped (its pid could be reused after).
  virtual void Forget(pid_t pid) = 0;
};
void SetChildWatcher(ChildWatcher* watcher);

// argv[0] is the program's path (no PATH search unless it has no '/'). stdin is input (a file of
// no name; "": /dev/null); core dumps are off; workDir (if not empty) is the child's working
// folder. Started with SpawnChild; a program that cannot be executed (or a workDir that cannot be
// entered) exits with status 127, as from a shell ("cannot execute the program" on its stderr).
ProcessResult RunProcess(const std::vector<std::string>& argv, double timeoutS,
                         const std::string& workDir = "", const std::string& input = "");

// One program of RunInTurns.
struct TurnRun {
  std::vector<std::string> argv;
  double timeoutS = 0;
  std::string workDir;
  // A session of its own (see RunInTurns); false: this process's, shared with the other programs
  // that are not in one of their own. Two programs of one kind (`ab`'s) share one: with the
  // kernel's autogroups, two sessions on a loaded machine were each placed for a while ahead of
  // the other, and alternate runs of one program differed by up to 2x round by round.
  bool newSession = true;
  std::string input{};  // its stdin, as RunProcess's
};

// Runs the programs at once, each as RunProcess runs one (this thread starts them all), with its
// end of a socket pair as its fd `childFd` (a `serve` request's "turns", TimedTurns.h) and,
// unless its TurnRun says not, in a session of its own (where the kernel shares the CPU out by
// sessions, autogroup, no program's turns compete with this process's other work more than
// another's: a sandboxed one is in a session of its own anyway), and deals out the turns: once
// every program waits for its first turn (or has ended), to each in turn (round-robin from the
// first) that waits, and to the next only once the holder waits again or has ended. So no two
// programs' timed runs overlap, and each follows the other's last. A program that ends (a crash,
// its deadline) leaves the turns to the others. `turns`, where given, gets each turn's program (its
// index), in order.
std::vector<ProcessResult> RunInTurns(const std::vector<TurnRun>& runs, int childFd,
                                      std::vector<size_t>* turns = nullptr);

// The first kMaxCapture bytes of a file ("" where it cannot be read).
std::string ReadCapped(const std::string& path);
// All of text to fd (EINTR retried); false where it cannot be written. On a socket without
// SIGPIPE (MSG_NOSIGNAL): a peer that died is a false, not the end of this process.
bool WriteAll(int fd, const std::string& text);

// Call first thing in main, before any OpenCL call: the environment as the program started.
// The OpenCL ICD loader (ocl-icd) cuts OCL_ICD_FILENAMES in place when it reads it, so a child
// started with the process's current environment may miss a platform (seen on the H100 machine:
// a worker found no NVIDIA platform). Children get StartupEnvironment() instead.
void SaveEnvironment();
// The saved environment as an envp array (the current one if nothing was saved).
char* const* StartupEnvironment();
// Sets every saved variable again in this process (for children started with std::system).
void RestoreStartupEnvironment();
// One variable of the environment children get, set to value or removed (nullopt), here and in
// the saved one; returns its value before, to give back later. Only while no other thread starts
// children.
std::optional<std::string> SetChildrenEnvironment(const std::string& name,
                                                  const std::optional<std::string>& value);

// "SIGSEGV (segmentation fault)", for reports.
std::string SignalName(int sig);

// The program's one handler of SIGINT and SIGTERM (every subcommand's and the benchmark run's): it
// sets a flag that RunProcess (which then ends the current child's group and reports
// `interrupted`), the runner and the isolated runs check; the caller decides how to stop.
// secondEnds: a second signal of the same kind ends the process at once (SA_RESETHAND).
void InstallInterruptHandler(bool secondEnds = false);
// The same for a process whose OpenCL driver starts children of its own (pocl links each kernel
// with a linker it starts): a terminal's Ctrl-C signals the whole foreground process group, that
// linker too, which then dies mid-link and pocl aborts the process (exit 134). Here SIGINT and
// SIGTERM are blocked in the calling thread, and so in every thread and child started after it (a
// blocked signal stays blocked across exec: the linker finishes), and one thread of its own takes
// them (sigwait) and sets the flag; with secondEnds a second one ends the process. Call it first,
// before any OpenCL call (pocl starts its threads then). SpawnChild gives its children an empty
// signal mask.
void InstallInterruptThread(bool secondEnds = false);
// True once such a signal has arrived; InterruptFlag() is the flag itself (Runner::SetStopFlag).
bool Interrupted();
const std::atomic<bool>& InterruptFlag();

}  // namespace rsb
