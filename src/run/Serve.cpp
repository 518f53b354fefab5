#include "run/Serve.h"

#include "cli/Cli.h"
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
#include <optional>
#include <stdexcept>
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

// A request's "worker" (Worker.h): this process is a worker of an isolated run, reporting on fd 3.
Options::Worker WorkerFrom(const json& w) {
  Options::Worker worker;
  worker.fd = kAnswerFd;
  worker.job = w.at("job").get<size_t>();
  worker.skip = w.at("skip").get<size_t>();
  worker.scope = w.at("scope").get<std::string>();
  if (worker.scope != "job" && worker.scope != "rest" && worker.scope != "case")
    throw std::invalid_argument("worker scope '" + worker.scope + "': allowed: job, rest, case");
  worker.device = w.at("device").get<size_t>();
  worker.bandwidth = w.at("bandwidth").get<bool>();
  worker.timer = w.value("timer", std::string());
  worker.buildFailed = w.at("build_failed").get<std::vector<std::string>>();
  return worker;
}

// One request, read from its line.
struct Request {
  std::vector<std::string> args;
  std::string dir, out, err;
  std::optional<Options::Worker> worker;
  std::string timer;
  int turns = -1;
};

// An argument: a string, or the array of the bytes of one that is not UTF-8.
std::string Argument(const json& a) {
  if (!a.is_array())
    return a.get<std::string>();
  const auto bytes = a.get<std::vector<unsigned char>>();
  return std::string(bytes.begin(), bytes.end());
}

Request Parse(const std::string& line) {
  const json req = json::parse(line);
  Request r;
  for (const json& a : req.at("argv"))
    r.args.push_back(Argument(a));
  r.dir = req.value("dir", std::string());
  r.out = req.value("out", std::string());
  r.err = req.value("err", std::string());
  if (req.contains("worker"))
    r.worker = WorkerFrom(req.at("worker"));
  r.timer = req.value("timer", std::string());
  r.turns = req.value("turns", -1);
  if (req.contains("turns") && r.turns < 0)
    throw std::invalid_argument("turns " + req.at("turns").dump() + ": allowed: an fd, 0 or more");
  return r;
}

// One request: its run's exit status (2 for a request that is not one); worker: whether it was a
// worker's.
int RunRequest(const std::string& line, bool& worker) {
  Request r;
  try {
    r = Parse(line);
  } catch (const std::exception& e) {
    std::cerr << "serve: not a request (" << e.what() << ")\n";
    return kExitUsage;
  }
  worker = r.worker.has_value();
  if ((!r.out.empty() && !Redirect(1, r.out)) || (!r.err.empty() && !Redirect(2, r.err))) {
    std::cerr << "serve: cannot write '" << r.out << "' or '" << r.err
              << "': " << std::strerror(errno) << "\n";
    return kExitDevice;
  }
  if (r.args.empty() || (!r.dir.empty() && ::chdir(r.dir.c_str()) != 0)) {
    std::cerr << "serve: no command line, or cannot enter '" << r.dir << "'\n";
    return kExitUsage;
  }
  std::vector<char*> argv;
  for (std::string& a : r.args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  const int status = RunCommand(int(r.args.size()), argv.data(), "",
                                {r.worker ? &*r.worker : nullptr, r.timer, r.turns});
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
  if (::fcntl(kAnswerFd, F_GETFD) < 0) {  // no one reads the answers: they go nowhere
    const int none = ::open("/dev/null", O_WRONLY);
    if (none >= 0 && none != kAnswerFd) {
      ::dup2(none, kAnswerFd);
      ::close(none);
    }
  }
  const int quiet = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  std::string line;
  int status = kExitOk;
  while (std::getline(std::cin, line)) {
    bool worker = false;
    status = RunRequest(line, worker);
    Flush();
    if (worker) {  // a worker's request is its process's only one: its status is the process's
      Answer(status);
      return status;
    }
    if (quiet >= 0) {  // between runs nothing is written anywhere
      ::dup2(quiet, 1);
      ::dup2(quiet, 2);
    }
    if (!Answer(status) || (status != kExitOk && status != kExitValidationFailed))
      break;
  }
  return status;
}

}  // namespace rsb
