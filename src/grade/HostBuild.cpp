#include "HostBuild.h"

#include "Subprocess.h"
#include "Text.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

namespace rsb::grade {

const std::map<std::string, std::vector<std::string>> kTaskSources = {
    {"reduction", {"CReductionTask.h", "CReductionTask.cpp"}},
    {"scan", {"CScanTask.h", "CScanTask.cpp"}},
    {"convolution", {"CConvolutionTask.h", "CConvolutionTask.cpp"}},
};

namespace {

// Compiler output worth reading: the lines around the first errors, temp paths shortened.
std::string BuildErrors(const std::string& output, const std::string& tree) {
  const std::string text = ShortenPaths(output, tree);
  std::istringstream in(text);
  std::string line, out;
  size_t lines = 0;
  bool seen = false;
  while (std::getline(in, line) && lines < 25) {
    if (!seen && line.find("error") == std::string::npos)
      continue;
    seen = true;
    if (line.rfind("make", 0) == 0 || line.rfind("gmake", 0) == 0 || line.rfind("[", 0) == 0)
      continue;
    out += line + "\n";
    ++lines;
  }
  return out.empty() ? Excerpt(text) : out;
}

}  // namespace

HostBuild BuildHostCode(const HostBuildSettings& s, const std::string& handin) {
  HostBuild b;
  const fs::path src = fs::path(handin) / "src";
  std::vector<std::string> files;
  for (const auto& [task, names] : kTaskSources)
    for (const auto& f : names)
      if (fs::is_regular_file(src / f)) {
        if (std::find(b.tasks.begin(), b.tasks.end(), task) == b.tasks.end())
          b.tasks.push_back(task);
        files.push_back(f);
      }
  if (files.empty())
    return b;
  if (!fs::is_regular_file(fs::path(s.suiteSource) / "CMakeLists.txt")) {
    b.log = fmt::format(
        "the suite's source tree '{}' is not there to build against; pass --suite-source DIR",
        s.suiteSource);
    return b;
  }
  const fs::path tree = fs::path(s.workDir) / "suite";
  const fs::path build = fs::path(s.workDir) / "build";
  std::error_code ec;
  fs::remove_all(tree, ec);
  fs::remove_all(build, ec);
  try {
    fs::create_directories(tree);
    for (const char* part : {"CMakeLists.txt", "common", "src", "kernels"})
      fs::copy(fs::path(s.suiteSource) / part, tree / part,
               fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    // Only the task sources come from the hand-in: runner, validation and reference stay the
    // suite's.
    for (const auto& f : files)
      fs::copy_file(src / f, tree / "src" / f, fs::copy_options::overwrite_existing);
  } catch (const fs::filesystem_error& e) {
    b.log = std::string("cannot copy the sources to build: ") + e.what();
    return b;
  }

  const auto start = std::chrono::steady_clock::now();
  auto left = [&] {
    return s.timeoutS -
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  auto step = [&](const std::vector<std::string>& argv, const char* what) {
    const ProcessResult p = RunProcess(argv, std::max(1.0, left()));
    if (p.exitCode == 0)
      return true;
    if (p.timedOut)
      b.log = fmt::format("{} did not finish within --build-timeout {:g} s", what, s.timeoutS);
    else
      b.log = fmt::format("{} failed:\n{}", what, BuildErrors(p.out + "\n" + p.err, tree.string()));
    return false;
  };
  const std::string jobs = std::to_string(std::max(1u, std::thread::hardware_concurrency()));
  bool ok =
      step({RSB_CMAKE_COMMAND, "-S", tree.string(), "-B", build.string(),
            "-DCMAKE_BUILD_TYPE=Release", "-DRSB_BUILD_REFERENCES=OFF", "-DRSB_BUILD_TESTS=OFF"},
           "configuring the host code");
  // The hand-in's own files first: their errors come in seconds, not after the whole suite.
  for (size_t i = 0; ok && i < files.size(); ++i)
    if (files[i].size() > 4 && files[i].substr(files[i].size() - 4) == ".cpp")
      ok =
          step({RSB_CMAKE_COMMAND, "--build", build.string(), "--target", "src/" + files[i] + ".o"},
               ("compiling src/" + files[i]).c_str());
  ok = ok && step({RSB_CMAKE_COMMAND, "--build", build.string(), "--target", "reduce-scan-bench",
                   "-j", jobs},
                  "building the host code");
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  b.ok = ok;
  if (ok)
    b.binary = (build / "reduce-scan-bench").string();
  return b;
}

}  // namespace rsb::grade
