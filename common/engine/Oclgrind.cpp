#include "engine/Oclgrind.h"

#include "engine/Runner.h"
#include "platform/Errors.h"
#include "platform/Pattern.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include <unistd.h>

namespace rsb {

namespace fs = std::filesystem;

std::string FindOclgrind() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path p = fs::path(dir.empty() ? "." : dir) / "oclgrind";
    std::error_code ec;
    if (fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0)
      return p.string();
  }
  throw UsageError(
      "--oclgrind: no oclgrind on PATH; allowed: --oclgrind where Oclgrind is installed (the "
      "Debian package oclgrind: sudo apt-get install oclgrind, or scripts/install-deps.sh)");
}

bool UnderOclgrind() {
  const char* v = std::getenv(kOclgrindMarker);
  return v && std::string(v) == "1";
}

void ExecUnderOclgrind(const std::string& oclgrind, int argc, char** argv) {
  std::error_code ec;
  const fs::path self = fs::canonical("/proc/self/exe", ec);
  std::vector<std::string> args = {oclgrind,
                                   "--data-races",
                                   "--inst-counts",
                                   "--num-threads",
                                   "1",
                                   ec ? argv[0] : self.string()};
  for (int i = 1; i < argc; ++i)
    args.push_back(argv[i]);
  std::vector<char*> cargs;
  for (auto& a : args)
    cargs.push_back(a.data());
  cargs.push_back(nullptr);
  setenv(kOclgrindMarker, "1", 1);
  execv(oclgrind.c_str(), cargs.data());
  throw DeviceError(fmt::format("--oclgrind: cannot start {}: {}", oclgrind, std::strerror(errno)));
}

namespace {

std::string KindOf(const std::string& headline) {
  auto has = [&](const char* s) { return headline.find(s) != std::string::npos; };
  if (has("Invalid write"))
    return "invalid-write";
  if (has("Invalid read"))
    return "invalid-read";
  if (has("data race"))
    return "data-race";
  if (has("divergence"))
    return "divergence";
  if (has("ninitiali"))
    return "uninitialized";
  return "other";
}

// The .cl file of kernelDir that defines the kernel ("" if none does).
std::string KernelFile(const std::string& kernelDir, const std::string& kernel,
                       std::map<std::string, std::string>& cache) {
  const auto it = cache.find(kernel);
  if (it != cache.end())
    return it->second;
  std::string found;
  const Pattern defines("__kernel\\s+void\\s+" + kernel + "\\s*\\(");
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kernelDir, ec)) {
    if (entry.path().extension() != ".cl")
      continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    if (defines.Search(text.str())) {
      found = entry.path().filename().string();
      break;
    }
  }
  return cache[kernel] = found;
}

std::string Trimmed(std::string s) {
  const size_t b = s.find_first_not_of(" \t");
  const size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

void ParseOclgrindLog(const std::string& log, const std::string& kernelDir, OclgrindReport& out) {
  // Each message: a first line, then lines that start with a tab; messages are separated by
  // empty lines.
  std::vector<std::vector<std::string>> messages;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    if (line[0] != '\t' || messages.empty())
      messages.push_back({line});
    else
      messages.back().push_back(line);
  }
  static const Pattern at(R"(At line (\d+) \(column \d+\) of (.+):$)");
  std::map<std::string, std::string> files;
  for (const auto& m : messages) {
    OclgrindDiagnostic d;
    d.text = Trimmed(m[0]);
    d.kind = KindOf(d.text);
    for (size_t i = 1; i < m.size(); ++i) {
      const std::string l = Trimmed(m[i]);
      std::optional<PatternMatch> match;
      if (d.kernel.empty() && l.rfind("Kernel:", 0) == 0) {
        d.kernel = Trimmed(l.substr(7));
      } else if (d.workItem.empty() && l.find("Global(") != std::string::npos) {
        d.workItem = Trimmed(l.substr(l.find("Global(")));
      } else if (d.workItem.empty() && l.rfind("Work-group:", 0) == 0) {
        d.workItem = Trimmed(l.substr(11));
      } else if (!d.line && (match = at.Search(l))) {
        d.line = std::stoul((*match)[1]);
        d.file = (*match)[2];
      }
    }
    if (d.file == "input.cl" || (d.file.empty() && !d.kernel.empty())) {
      const std::string file = d.kernel.empty() ? "" : KernelFile(kernelDir, d.kernel, files);
      if (!file.empty() || d.file.empty())
        d.file = file;
    } else if (!d.file.empty()) {
      d.file = fs::path(d.file).filename().string();
    }
    ++out.diagnosticCount;
    const auto same = [&](const OclgrindDiagnostic& e) {
      return std::tie(e.kind, e.kernel, e.file, e.line) ==
             std::tie(d.kind, d.kernel, d.file, d.line);
    };
    if (out.diagnostics.size() < kMaxOclgrindDiagnostics &&
        std::none_of(out.diagnostics.begin(), out.diagnostics.end(), same))
      out.diagnostics.push_back(d);
  }
}

void ParseInstructionCounts(const std::string& text, OclgrindReport& out) {
  static const Pattern header(R"(^Instructions executed for kernel '([^']+)':)");
  static const Pattern count(R"(^\s+([\d,.']+) - )");  // 10216, or 10,216 in a locale
  std::istringstream in(text);
  std::string line, kernel;
  while (std::getline(in, line)) {
    std::optional<PatternMatch> m;
    if ((m = header.Search(line))) {
      kernel = (*m)[1];
      out.kernels[kernel];  // a kernel that executed nothing is still listed
    } else if (!kernel.empty() && (m = count.Search(line))) {
      std::string digits = (*m)[1];
      digits.erase(
          std::remove_if(digits.begin(), digits.end(), [](char c) { return c < '0' || c > '9'; }),
          digits.end());
      const uint64_t n = std::stoull(digits);
      out.kernels[kernel] += n;
      out.instructions += n;
    } else if (Trimmed(line).empty()) {
      kernel.clear();
    }
  }
}

namespace {

std::string Where(const OclgrindDiagnostic& d) {
  std::string where = d.file.empty() ? "an unknown place" : d.file;
  if (d.line)
    where += fmt::format(":{}", d.line);
  return where;
}

}  // namespace

std::string OclgrindSummary(const OclgrindReport& report) {
  if (report.diagnostics.empty())
    return fmt::format("oclgrind: no diagnostic, {} instructions", report.instructions);
  const OclgrindDiagnostic& d = report.diagnostics.front();
  std::string s = fmt::format("oclgrind: {} at {}", d.kind, Where(d));
  if (!d.kernel.empty())
    s += " in " + d.kernel;
  if (!d.workItem.empty())
    s += ", work-item " + d.workItem;
  s += " (" + d.text + ")";
  if (report.diagnosticCount > 1) {
    std::vector<std::string> others;
    for (size_t i = 1; i < report.diagnostics.size(); ++i)
      others.push_back(
          fmt::format("{} at {}", report.diagnostics[i].kind, Where(report.diagnostics[i])));
    s += fmt::format("; {} more message{}", report.diagnosticCount - 1,
                     report.diagnosticCount > 2 ? "s" : "");
    if (!others.empty()) {
      s += ": ";
      for (size_t i = 0; i < others.size(); ++i)
        s += (i ? ", " : "") + others[i];
    }
  }
  return s;
}

void ApplyOclgrind(Result& r, OclgrindReport report) {
  const std::string summary = OclgrindSummary(report);
  if (!report.diagnostics.empty()) {
    if (r.status == Status::Passed) {
      r.status = Status::Failed;
      r.message = summary;
    } else {
      r.message = r.message.empty() ? summary : r.message + "; " + summary;
    }
  } else if (r.status == Status::Passed && r.message.empty()) {
    r.message = summary;
  }
  r.oclgrind = std::move(report);
}

}  // namespace rsb
