// The grader's sandbox (src/grade/Sandbox.h): small shell commands run through SandboxCommand
// and RunProcess as a hand-in's code would, and what they could reach on the host checked from
// outside. Each test would fail if the command ran without the sandbox. Skipped where bwrap
// cannot create its namespaces (SandboxStatus says why).
#include "TestSupport.h"
#include "grade/ChildPause.h"
#include "grade/Sandbox.h"
#include "platform/Subprocess.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace fs = std::filesystem;

namespace rsb::grade {
namespace {

void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// A class as the grader sees it, outside /tmp (which the sandbox replaces anyway): the class
// folder with two hand-ins, the reports folder, the rubric, and a suite folder of which only
// kit/ is shown again.
class Sandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    const SandboxAvailability status = SandboxStatus();
    if (!status.ok)
      GTEST_SKIP() << status.reason;
    static int counter = 0;
    root_ = fs::current_path() /
            fmt::format("rsb-sandbox-test-{}-{}", static_cast<long>(::getpid()), counter++);
    fs::remove_all(root_);
    alice_ = root_ / "class" / "alice";
    fs::create_directories(alice_);
    Write(root_ / "class" / "bob" / "kernels" / "Scan.cl", "bob's secret kernel");
    Write(root_ / "reports" / "bob.md", "bob: 20 / 20 points");
    Write(root_ / "rubric.json", "the secret rubric");
    Write(root_ / "suite" / "kit" / "readme.txt", "the kit");
    Write(root_ / "suite" / "answers.txt", "the instructor's answers");
    policy_.writableDir = alice_.string();
    policy_.hidden = {(root_ / "class").string(), (root_ / "reports").string(),
                      (root_ / "rubric.json").string(), (root_ / "suite").string()};
    policy_.readOnly = {(root_ / "suite" / "kit").string()};
  }
  void TearDown() override {
    std::error_code ec;
    if (!root_.empty())
      fs::remove_all(root_, ec);
  }

  ProcessResult Run(const std::string& script, double timeoutS = 120) {
    return RunProcess(SandboxCommand({"/bin/sh", "-c", script}, policy_), timeoutS,
                      policy_.writableDir);
  }

  fs::path root_, alice_;
  SandboxPolicy policy_;
};

std::string Describe(const ProcessResult& p) {
  return fmt::format("started {} exit {} signal {} timed out {}\nstdout:\n{}\nstderr:\n{}",
                     p.started, p.exitCode, p.signal, p.timedOut, p.out, p.err);
}

TEST_F(Sandbox, WritesInsideTheWritableFolderSucceed) {
  const ProcessResult p = Run(
      "echo cwd > out.txt && echo home > \"$HOME/home.txt\" && echo tmp > \"$TMPDIR/tmp.txt\" && "
      "mkdir -p sub && echo deep > sub/deep.txt");
  ASSERT_EQ(p.exitCode, 0) << Describe(p);
  EXPECT_EQ(test::ReadFile(alice_ / "out.txt"), "cwd\n");
  EXPECT_EQ(test::ReadFile(alice_ / "home.txt"), "home\n");
  EXPECT_EQ(test::ReadFile(alice_ / "tmp.txt"), "tmp\n");
  EXPECT_EQ(test::ReadFile(alice_ / "sub" / "deep.txt"), "deep\n");
}

TEST_F(Sandbox, WritesOutsideTheWritableFolderAreRefusedAndTheRunGoesOn) {
  const std::string tag = fmt::format("rsb-sandbox-escape-{}", static_cast<long>(::getpid()));
  const char* home = std::getenv("HOME");
  // Refused: everything of the host but the writable folder is read-only or hidden.
  const std::vector<fs::path> refused = {
      root_ / "reports" / "alice.md",                    // the reports folder (hidden)
      root_ / "reports" / "bob.md",                      // a report that exists
      root_ / "class" / "bob" / "kernels" / "Scan.cl",   // another hand-in
      root_ / "rubric.json",                             // the rubric (hidden file)
      root_ / "suite" / "kit" / "readme.txt",            // the read-only kit
      root_ / (tag + ".txt"),                            // next to the class, not hidden
      fs::path(home ? home : "/root") / (tag + ".txt"),  // the grader's home
  };
  // Written, but to the sandbox's private tmpfs: nothing reaches the host's.
  const std::vector<fs::path> privateTmp = {fs::path("/tmp") / (tag + ".txt"),
                                            fs::path("/dev/shm") / (tag + ".txt")};
  std::string script;
  for (const auto& t : refused)
    script +=
        fmt::format("echo pwned > '{}' 2>/dev/null && echo 'wrote {}'; ", t.string(), t.string());
  for (const auto& t : privateTmp)
    script += fmt::format("echo pwned > '{}'; ", t.string());
  script += "echo still-running > graded.txt";
  const ProcessResult p = Run(script);
  EXPECT_EQ(p.exitCode, 0) << Describe(p);
  // Where the test folder lies under /tmp, a write "next to the class" lands in the sandbox's
  // private /tmp and succeeds there: what counts is that no file on the host changed (below).
  EXPECT_EQ(test::ReadFile(alice_ / "graded.txt"), "still-running\n");
  for (const auto& t : refused) {
    if (fs::exists(t)) {
      EXPECT_EQ(test::ReadFile(t).find("pwned"), std::string::npos) << t;
    }
  }
  for (const auto& t : privateTmp)
    EXPECT_FALSE(fs::exists(t)) << t;
  EXPECT_FALSE(fs::exists(root_ / "reports" / "alice.md"));
  EXPECT_FALSE(fs::exists(root_ / (tag + ".txt")));
  EXPECT_FALSE(fs::exists(fs::path(home ? home : "/root") / (tag + ".txt")));
  EXPECT_EQ(test::ReadFile(root_ / "rubric.json"), "the secret rubric");
  EXPECT_EQ(test::ReadFile(root_ / "reports" / "bob.md"), "bob: 20 / 20 points");
}

TEST_F(Sandbox, HiddenFilesAndFoldersCannotBeRead) {
  const std::string script = fmt::format(
      "cat '{0}/rubric.json'; cat '{0}/class/bob/kernels/Scan.cl'; cat '{0}/reports/bob.md'; "
      "cat '{0}/suite/answers.txt'; ls -R '{0}/class' '{0}/reports'; cat "
      "'{0}/suite/kit/readme.txt'",
      root_.string());
  const ProcessResult p = Run(script);
  ASSERT_TRUE(p.started) << p.startError;
  for (const char* secret : {"secret", "20 / 20", "answers", "bob", "Scan.cl"})
    EXPECT_EQ(p.out.find(secret), std::string::npos) << secret << " seen:\n" << p.out;
  EXPECT_NE(p.out.find("the kit"), std::string::npos) << Describe(p);  // re-exposed read-only
  EXPECT_NE(p.out.find("alice"), std::string::npos) << Describe(p);    // its own folder is there
}

TEST_F(Sandbox, ConnectionToAListenerOnTheHostsLoopbackIsRefused) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);
  const std::string connect = fmt::format(
      "exec 3<>/dev/tcp/127.0.0.1/{} && echo connected && echo hello >&3 || echo refused", port);
  auto pending = [&] {
    pollfd pfd{listener, POLLIN, 0};
    return ::poll(&pfd, 1, 200) > 0;
  };
  // Outside the sandbox the same command reaches the listener (the test can tell).
  const ProcessResult outside = RunProcess({"/bin/bash", "-c", connect}, 30);
  ASSERT_NE(outside.out.find("connected"), std::string::npos) << Describe(outside);
  ASSERT_TRUE(pending());
  ::close(::accept(listener, nullptr, nullptr));

  const ProcessResult p = RunProcess(SandboxCommand({"/bin/bash", "-c", connect}, policy_), 60);
  EXPECT_EQ(p.exitCode, 0) << Describe(p);
  EXPECT_NE(p.out.find("refused"), std::string::npos) << Describe(p);
  EXPECT_EQ(p.out.find("connected"), std::string::npos) << Describe(p);
  EXPECT_FALSE(pending()) << "the listener got a connection from the sandbox";
  ::close(listener);
}

TEST_F(Sandbox, FileSizeLimitStopsABigWrite) {
  policy_.limits.fileBytes = 1 << 20;
  const ProcessResult p = Run("dd if=/dev/zero of=big bs=1M count=8 2>/dev/null; echo done");
  EXPECT_NE(p.out.find("done"), std::string::npos) << Describe(p);
  EXPECT_LE(fs::file_size(alice_ / "big"), uintmax_t(1) << 20);
}

TEST_F(Sandbox, CpuLimitKillsABusyLoop) {
  policy_.limits.cpuSeconds = 1;
  const ProcessResult p = Run("while :; do :; done", 60);
  ASSERT_FALSE(p.timedOut) << "the busy loop ran until the wall-clock deadline";
  // bwrap reports a signal that ended the program as exit status 128 + signal.
  const int sig = p.signal ? p.signal : p.exitCode - 128;
  EXPECT_TRUE(sig == SIGXCPU || sig == SIGKILL) << Describe(p);
}

TEST_F(Sandbox, MemoryLimitStopsALargeAllocation) {
  if (!fs::exists("/usr/bin/python3"))
    GTEST_SKIP() << "no /usr/bin/python3";
  const std::string script =
      "/usr/bin/python3 -c 'b = bytearray(1 << 30); b[-1] = 1; print(\"allocated\")'";
  const ProcessResult defaults = Run(script);  // 1 GiB is fine under the default limits
  ASSERT_NE(defaults.out.find("allocated"), std::string::npos) << Describe(defaults);
  policy_.limits.dataBytes = uint64_t(256) << 20;
  const ProcessResult p = Run(script);
  EXPECT_EQ(p.out.find("allocated"), std::string::npos) << Describe(p);
  EXPECT_NE(p.err.find("MemoryError"), std::string::npos) << Describe(p);
}

TEST_F(Sandbox, DeadlineKillsTheProgramAndWhatItStarted) {
  const ProcessResult p = Run("sleep 987.25 & sleep 987.25", 1);
  EXPECT_TRUE(p.timedOut) << Describe(p);
  EXPECT_LT(p.seconds, 60) << "the program outlived its deadline (1 s) by far";
  ::usleep(200 * 1000);
  EXPECT_NE(test::RunCommand("pgrep -f 'sleep 987[.]25'").status, 0) << "a sleep survived";
}

TEST_F(Sandbox, ChildRunOfTheSuitePassesUnderTheDefaultLimits) {
  fs::copy(test::CopyKernels("sandbox"), alice_ / "kernels", fs::copy_options::recursive);
  std::vector<std::string> argv = {RSB_BINARY,  "--kernels", "kernels", "--check", "--task", "scan",
                                   "--variant", "naive",     "--size",  "1000",    "-q"};
  for (const auto& [env, flag] :
       {std::pair{"RSB_TEST_PLATFORM", "--platform"}, std::pair{"RSB_TEST_DEVICE", "--device"}})
    if (const char* v = std::getenv(env))
      argv.insert(argv.end(), {flag, v});
  // The suite's binary stays visible wherever it lies (a build under /tmp included).
  policy_.readOnly.push_back(fs::path(RSB_BINARY).parent_path().string());
  const ProcessResult p = RunProcess(SandboxCommand(argv, policy_), 300, policy_.writableDir);
  EXPECT_EQ(p.exitCode, 0) << Describe(p);
  EXPECT_NE(p.out.find(" passed "), std::string::npos) << Describe(p);
  EXPECT_NE(p.out.find("\n1 passed, 0 failed\n"), std::string::npos) << Describe(p);
}

TEST_F(Sandbox, ProcessLimitHoldsUnderAnotherUid) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "running as another uid needs root";
  policy_.uid = 65534;  // nobody
  policy_.limits.processes = 16;
  std::string error;
  ASSERT_TRUE(GiveWritableDir(policy_, error)) << error;
  const ProcessResult p =
      Run("id -u > uid.txt; i=0; while [ $i -lt 64 ]; do sleep 5 & i=$((i+1)); done; echo forked");
  EXPECT_EQ(test::ReadFile(alice_ / "uid.txt"), "65534\n");
  EXPECT_EQ(p.out.find("forked"), std::string::npos) << Describe(p);
  EXPECT_NE(p.err.find("fork"), std::string::npos) << Describe(p);
}

TEST(SandboxCommandLine, InnermostRuleWinsWhateverTheOrderGiven) {
  const fs::path root = fs::current_path() / fmt::format("rsb-sandbox-order-{}", ::getpid());
  fs::create_directories(root / "class" / "alice");
  SandboxPolicy policy;
  policy.writableDir = (root / "class" / "alice").string();
  policy.hidden = {(root / "class").string()};
  const std::vector<std::string> a = SandboxCommand({"true"}, policy);
  auto at = [&](const std::string& opt, const fs::path& p) {
    for (size_t i = 0; i + 1 < a.size(); ++i)
      if (a[i] == opt && a[i + 1] == p.string())
        return i;
    return a.size();
  };
  EXPECT_LT(at("--tmpfs", root / "class"), at("--bind", root / "class" / "alice"));
  EXPECT_LT(at("--bind", root / "class" / "alice"), a.size());
  fs::remove_all(root);
}

// RunProcess (platform/Subprocess.h) as the grader relies on it, outside any sandbox: stdin is
// /dev/null, core dumps are off, the working folder is workDir, SIGINT is at its default, PATH is
// searched for a bare name, and a program that cannot be started (or a working folder that cannot
// be entered) is a child that exited with status 127, as from a shell (Plot looks for Python so).
TEST(RunProcess, StartsTheChildAsTheGraderNeeds) {
  const fs::path dir = fs::current_path() / fmt::format("rsb-runprocess-{}", ::getpid());
  fs::create_directories(dir);
  struct rlimit core {};  // core dumps allowed here where they can be, so that "0" says something
  ::getrlimit(RLIMIT_CORE, &core);
  if (core.rlim_max != 0 && core.rlim_cur == 0) {
    core.rlim_cur = core.rlim_max == RLIM_INFINITY ? 1 << 20 : core.rlim_max;
    ::setrlimit(RLIMIT_CORE, &core);
  }
  const ProcessResult p =
      RunProcess({"sh", "-c", "ulimit -c; cat; pwd; echo said >&2; exit 3"}, 30, dir.string());
  EXPECT_TRUE(p.started) << p.startError;
  EXPECT_EQ(p.exitCode, 3);
  EXPECT_EQ(p.out, "0\n" + dir.string() + "\n");
  EXPECT_EQ(p.err, "said\n");
  const ProcessResult interrupted = RunProcess({"/bin/sh", "-c", "kill -INT $$; echo on"}, 30);
  EXPECT_EQ(interrupted.signal, SIGINT) << interrupted.out;
  for (const std::string program : {"/no/such/program", "rsb-no-such-program"}) {
    const ProcessResult missing = RunProcess({program}, 30);
    EXPECT_TRUE(missing.started) << program;
    EXPECT_EQ(missing.exitCode, 127) << program;
    EXPECT_EQ(missing.err, "cannot execute the program\n") << program;
  }
  const ProcessResult noDir = RunProcess({"/bin/true"}, 30, (dir / "absent").string());
  EXPECT_TRUE(noDir.started);
  EXPECT_EQ(noDir.exitCode, 127);
  EXPECT_EQ(noDir.err, "");
  fs::remove_all(dir);
}

// While a thread holds OthersPaused (grade/ChildPause.h), RunProcess's children of other
// threads are stopped, a descendant in a session of its own too (as a sandboxed one is), a new
// child of another thread waits to start, the holder's own children run, and a stopped child's
// deadline and `seconds` leave the stopped time out.
TEST(RunProcess, ATimedRunStopsTheOtherChildrenAndHoldsTheirStarts) {
  using Clock = std::chrono::steady_clock;
  const fs::path dir = fs::current_path() / fmt::format("rsb-pause-{}", ::getpid());
  fs::create_directories(dir);
  const std::string count = (dir / "count").string();
  // A counter that a descendant in a new session writes every 100 ms for about 1.5 s: 15 steps,
  // so that a loaded machine's slower process starts add little to the 1.5 s.
  const std::string writer = "setsid sh -c 'i=0; while [ $i -lt 15 ]; do i=$((i+1)); echo $i > " +
                             count + "; sleep 0.1; done' & wait";
  auto read = [&] {
    std::ifstream in(count);
    long v = -1;
    in >> v;
    return v;
  };
  ProcessResult slow;
  const auto begin = Clock::now();
  std::thread a([&] { slow = RunProcess({"/bin/sh", "-c", writer}, 4.0); });
  const auto until = Clock::now() + std::chrono::seconds(10);
  while (read() < 2 && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_GE(read(), 2) << "the writer did not start";
  const double pauseS = 3.0;
  Clock::time_point pauseEnd, otherStart;
  ProcessResult other;
  std::thread b;
  {
    const OthersPaused paused;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a write in flight lands
    const long before = read();
    b = std::thread([&] {
      other = RunProcess({"/bin/sh", "-c", "echo started"}, 30);
      otherStart = Clock::now() - std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(other.seconds));
    });
    const ProcessResult own = RunProcess({"/bin/sh", "-c", "echo own"}, 30);
    EXPECT_EQ(own.out, "own\n");
    EXPECT_EQ(own.pausedSeconds, 0);
    std::this_thread::sleep_for(std::chrono::duration<double>(pauseS - 0.1));
    EXPECT_EQ(read(), before) << "the other thread's child went on while stopped";
    pauseEnd = Clock::now();
  }
  a.join();
  b.join();
  EXPECT_EQ(other.out, "started\n");
  EXPECT_GE(otherStart, pauseEnd - std::chrono::milliseconds(50)) << "started while stopped";
  // 1.5 s of writing and a 3 s stop: past the 4 s deadline unless the stop is left out.
  EXPECT_FALSE(slow.timedOut);
  EXPECT_EQ(slow.exitCode, 0) << slow.err;
  EXPECT_EQ(read(), 15);
  EXPECT_NEAR(slow.pausedSeconds, pauseS, 0.5);
  // Its time leaves the stop out: the whole wait, less about the stop. (No bound on the time
  // itself: the test must pass on a busy machine.)
  EXPECT_LT(slow.seconds, std::chrono::duration<double>(Clock::now() - begin).count() - 2.0);
  fs::remove_all(dir);
}

// RunInTurns (platform/Subprocess.h), the grader's speed runs on a CPU device: programs that
// speak the turns' protocol on fd 3 (a byte to wait, a byte back to go) get their turns
// round-robin once all of them wait (or have ended), one at a time: no two steps overlap. A
// program that never waits, crashes in its turn or hangs past its deadline leaves the turns to
// the others, which finish.
TEST(RunInTurns, StepsAlternateAndNeverOverlapWhateverOneProgramDoes) {
  const fs::path dir = fs::current_path() / fmt::format("rsb-turns-{}", ::getpid());
  fs::create_directories(dir);
  const std::string log = (dir / "log").string();
  // NAME waits, then takes STEPS turns, each a start and an end line 50 ms apart; LAST: what it
  // does in its last turn instead of ending it.
  const auto stepper = [&](const std::string& name, int steps, const std::string& before,
                           const std::string& last) {
    return std::vector<std::string>{
        "/bin/sh", "-c",
        fmt::format("{0}; echo '{1} waits' >> {2}; i=0; while [ $i -lt {3} ]; do i=$((i+1)); "
                    "printf w >&3; t=$(dd bs=1 count=1 <&3 2>/dev/null); [ \"$t\" = g ] || "
                    "exit 9; echo '{1} start' >> {2}; [ $i -eq {3} ] && {4}; sleep 0.05; "
                    "echo '{1} end' >> {2}; done",
                    before, name, log, steps, last)};
  };
  std::vector<TurnRun> runs = {
      {stepper("A", 3, "true", "true"), 30, ""},
      {stepper("B", 3, "sleep 0.3", "true"), 30, ""},   // waits last: A's first turn waits for it
      {stepper("C", 2, "true", "kill -9 $$"), 30, ""},  // crashes in its second turn
      {{"/bin/sh", "-c", "exit 1"}, 30, ""},            // never waits
      {stepper("E", 1, "true", "sleep 60"), 2, ""},     // hangs in its turn past its deadline
  };
  std::vector<size_t> turns;
  const std::vector<ProcessResult> p = RunInTurns(runs, 3, &turns);
  ASSERT_EQ(p.size(), runs.size());
  EXPECT_EQ(p[0].exitCode, 0) << p[0].err;
  EXPECT_EQ(p[1].exitCode, 0) << p[1].err;
  EXPECT_EQ(p[2].signal, SIGKILL);
  EXPECT_EQ(p[3].exitCode, 1);
  EXPECT_TRUE(p[4].timedOut);
  EXPECT_EQ(turns, (std::vector<size_t>{0, 1, 2, 4, 0, 1, 2, 0, 1}));
  std::ifstream in(log);
  std::string line, steps;
  int waits = 0;
  while (std::getline(in, line))
    if (line.find("waits") != std::string::npos) {
      EXPECT_EQ(steps, "") << "a turn began before " << line << " (every program waits first)";
      ++waits;
    } else {
      steps += line + "; ";
    }
  EXPECT_EQ(waits, 4);
  EXPECT_EQ(steps,
            "A start; A end; B start; B end; C start; C end; E start; A start; A end; B start; "
            "B end; C start; A start; A end; B start; B end; ");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rsb::grade
