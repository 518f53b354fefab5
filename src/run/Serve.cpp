#include "run/Serve.h"

#include "platform/Errors.h"
#include "platform/Subprocess.h"
#include "run/Bench.h"

#include <fcntl.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

using nlohmann::json;

namespace rsb {

namespace {

constexpr int kAnswerFd = 3;

void Flush() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  std::fflush(stderr);
}

// fd (1 or 2) writes to path from now on; false if it cannot be opened.
bool Redirect(int fd, const std::string& path) {
  const int f = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (f < 0)
    return false;
  ::dup2(f, fd);
  ::close(f);
  return true;
}

bool Answer(int status) {
  return WriteAll(kAnswerFd, json{{"exit", status}}.dump() + "\n");
}

// One request: its run's exit status (2 for a request that is not one).
int RunRequest(const std::string& line) {
  json req;
  std::vector<std::string> args;
  std::string dir, out, err;
  try {
    req = json::parse(line);
    args = req.at("argv").get<std::vector<std::string>>();
    dir = req.at("dir").get<std::string>();
    out = req.at("out").get<std::string>();
    err = req.at("err").get<std::string>();
  } catch (const std::exception& e) {
    std::cerr << "serve: not a request (" << e.what() << ")\n";
    return kExitUsage;
  }
  if (!Redirect(1, out) || !Redirect(2, err)) {
    std::cerr << "serve: cannot write '" << out << "' or '" << err << "': " << std::strerror(errno)
              << "\n";
    return kExitDevice;
  }
  if (args.empty() || (!dir.empty() && ::chdir(dir.c_str()) != 0)) {
    std::cerr << "serve: no command line, or cannot enter '" << dir << "'\n";
    return kExitUsage;
  }
  std::vector<char*> argv;
  for (std::string& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  const int status = RunCommand(int(args.size()), argv.data());
  Flush();
  return status;
}

}  // namespace

int Serve(int argc, char** /*argv*/) {
  // Never outlives its parent, whatever ends it, even in the middle of a run (a kernel that does
  // not end). Not PR_SET_PDEATHSIG: that fires when the parent's thread that started this
  // process ends, and a parent's threads come and go.
  const pid_t parent = ::getppid();
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (::getppid() != parent)
        ::_exit(kExitDevice);
    }
  }).detach();
  if (argc != 1) {
    std::cerr << "error: serve takes no options: it is a resident child run, started by a "
                 "parent that writes its requests (src/run/Serve.h)\n";
    return kExitUsage;
  }
  const int quiet = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  std::string line;
  while (std::getline(std::cin, line)) {
    const int status = RunRequest(line);
    Flush();
    if (quiet >= 0) {  // between runs nothing is written anywhere
      ::dup2(quiet, 1);
      ::dup2(quiet, 2);
    }
    if (!Answer(status) || (status != kExitOk && status != kExitValidationFailed))
      break;
  }
  return kExitOk;
}

}  // namespace rsb
