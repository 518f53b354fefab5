#include "ChildRun.h"

#include "Subprocess.h"
#include "Text.h"

#include <fmt/format.h>

#include <atomic>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace rsb::grade {

std::string CaseKey(const std::string& type, const std::string& op, const std::string& kind,
                    size_t n) {
  return fmt::format("{} {} {}n={}", type, op, kind.empty() ? "" : kind + " ", n);
}

namespace {

std::vector<std::string> ChildArgs(const ChildSettings& s, const Code& code, const Item& it,
                                   const CaseGroup& g, bool timed, const std::string& output) {
  const std::string& binary = code.binary;
  const std::string& kernels = code.kernels;
  std::vector<std::string> sizes;
  for (size_t n : g.sizes)
    sizes.push_back(std::to_string(n));
  std::vector<std::string> a = {
      binary,   "--kernels", kernels,  "--task",           it.task, "--variant",     it.variant,
      "--size", Join(sizes), "--type", JoinNames(g.types), "--op",  JoinNames(g.ops)};
  if (it.task == "scan")
    a.insert(a.end(), {"--scan-kind", JoinNames(g.kinds)});
  a.insert(a.end(), {"--local-size", g.localSize, "--seed", std::to_string(s.seed), "--format",
                     "json", "--output", output, "-q"});
  if (timed)
    a.insert(a.end(), {"--iterations", "30", "--time-budget", "0.3", "--warmup", "1"});
  else
    a.push_back("--check");
  if (!s.platform.empty())
    a.insert(a.end(), {"--platform", s.platform});
  if (!s.device.empty())
    a.insert(a.end(), {"--device", s.device});
  return a;
}

}  // namespace

GroupRun RunGroup(const ChildSettings& s, const Code& code, const Item& it, const CaseGroup& g,
                  bool timed, double timeoutS) {
  const std::string& kernels = code.kernels;
  static std::atomic<int> counter{0};
  const std::string output = (fs::path(s.workDir) / fmt::format("run-{}.json", counter++)).string();
  fs::remove(output);
  const ProcessResult p = RunProcess(ChildArgs(s, code, it, g, timed, output), timeoutS);
  GroupRun run;
  std::optional<json> j;
  {
    std::ifstream in(output);
    if (in) {
      try {
        j = json::parse(in);
        if (!j->is_object() || !(*j)["results"].is_array())
          j.reset();
      } catch (const std::exception&) {
        j.reset();
      }
    }
  }
  fs::remove(output);
  // What happened to the whole run, when it gave no usable JSON.
  std::string runStatus, runMessage;
  if (!p.started) {
    runStatus = "error";
    runMessage = "could not start the child run: " + p.startError;
  } else if (p.interrupted) {
    runStatus = "error";
    runMessage = "interrupted";
  } else if (p.timedOut) {
    runStatus = "timeout";
    runMessage = fmt::format("no answer within {:g} s (killed)", timeoutS);
  } else if (p.signal) {
    runStatus = "error";
    runMessage = "crashed: killed by " + SignalName(p.signal);
    const std::string err = Excerpt(p.err);
    if (!err.empty())
      runMessage += "\n" + err;
  } else if (!j || p.exitCode == 2) {
    runStatus = "error";
    const std::string err = Excerpt(p.err);
    runMessage =
        fmt::format("exit status {} without a result: {}\n{}", p.exitCode, Headline(err), err);
    j.reset();
  }
  runMessage = ShortenPaths(runMessage, fs::path(kernels).parent_path().string());
  if (j)
    run.results = j;
  for (ElementType type : g.types)
    for (Op op : g.ops)
      for (size_t k = 0; k < (it.task == "scan" ? g.kinds.size() : 1); ++k)
        for (size_t n : g.sizes) {
          const std::string kind = it.task == "scan" ? ToString(g.kinds[k]) : "";
          CaseOutcome c;
          c.label = CaseKey(ToString(type), ToString(op), kind, n);
          if (!j) {
            c.status = runStatus;
            c.message = runMessage;
            c.wholeRun = true;
          } else {
            c.status = "error";
            c.message = "no result for this case";
            for (const auto& res : (*j)["results"]) {
              if (res.value("variant", "") != it.variant ||
                  res.value("type", "") != ToString(type) || res.value("op", "") != ToString(op) ||
                  res.value("n", size_t(0)) != n || res.value("scan_kind", "") != kind)
                continue;
              c.status = res.value("status", "error");
              c.message =
                  ShortenPaths(res.value("message", ""), fs::path(kernels).parent_path().string());
              if (c.status == "skipped") {
                c.status = "error";  // the rubric asks for a case this device cannot run
                c.message = "skipped on this device: " + c.message;
              }
            }
          }
          run.cases.push_back(c);
        }
  return run;
}

}  // namespace rsb::grade
