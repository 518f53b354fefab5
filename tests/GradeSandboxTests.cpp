// `reduce-scan-bench grade`, the sandbox around a hand-in's runs (Sandbox): host code that writes
// outside its folder and opens a socket is refused and graded all the same. (The sandbox's own
// limits: tests/SandboxTests.cpp.)
#include "GradeFixture.h"
#include "TestSupport.h"
#include "grade/ChildRun.h"
#include "grade/Grade.h"
#include "grade/HandinFiles.h"
#include "grade/Resident.h"
#include "grade/Rubric.h"
#include "grade/Scoring.h"
#include "grade/Turns.h"
#include "platform/Subprocess.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

namespace fs = std::filesystem;
using nlohmann::json;

namespace rsb::test {
namespace {

// A listener on the host's loopback that records whether anyone connected and what they sent.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 ||
        ::listen(fd_, 8) != 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0)
          return;
        char buf[64];
        const ssize_t n = ::read(c, buf, sizeof buf);
        received_ += n > 0 ? std::string(buf, static_cast<size_t>(n)) : "(connected)";
        ::close(c);
      }
    });
  }
  ~Listener() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  int Port() const { return port_; }
  std::string Received() const { return received_; }

 private:
  int fd_ = -1, port_ = 0;
  std::thread thread_;
  std::string received_;
};

// Host code that tries, every time its binary starts, to write outside its folder (the reports,
// the class folder, /tmp) and to send to a listener on the host's loopback: each refused by the
// sandbox, and the hand-in is graded all the same.
TEST_F(Grade, HandInThatWritesOutsideItsFolderAndOpensASocketIsRefusedAndStillGraded) {
  if (!HaveSandbox())
    GTEST_SKIP() << "bubblewrap cannot run here (scripts/install-deps.sh installs it)";
  const std::string h = HandIn("mallory");
  CopySuiteSources(h, {"Scan"});
  Listener listener;
  const fs::path outside = fs::temp_directory_path() / fmt::format("rsb-escaped-{}", ::getpid());
  fs::remove(outside);
  std::ofstream(h + "/src/tasks/CScanTask.cpp", std::ios::app) << fmt::format(
      R"(
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fstream>
namespace {{
struct Escape {{
  Escape() {{
    std::ofstream("{}") << "escaped";
    std::ofstream("{}/mallory-was-here") << "escaped";
    std::ofstream("{}/mallory-was-here") << "escaped";
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{{}};
    a.sin_family = AF_INET;
    a.sin_port = htons({});
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && write(fd, "pwned", 5)) {{
    }}
    close(fd);
  }}
}} escape;
}}  // namespace
)",
      outside.string(), (root_ / "out").string(), root_.string(), listener.Port());
  const CommandResult r = RunGrade(h);
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = Report("mallory");
  EXPECT_TRUE(report["host_code"].is_object()) << report.dump(2);
  EXPECT_EQ(Item(report, "scan-naive")["points"], 2) << report.dump(2);
  EXPECT_EQ(report["total"], 5) << report.dump(2);
  EXPECT_FALSE(fs::exists(outside)) << "wrote " << outside;
  EXPECT_FALSE(fs::exists(root_ / "out" / "mallory-was-here")) << "wrote into the reports";
  EXPECT_FALSE(fs::exists(root_ / "mallory-was-here")) << "wrote into the class folder";
  EXPECT_EQ(listener.Received(), "") << "reached the host's loopback";
  fs::remove(outside);
}

}  // namespace
}  // namespace rsb::test
