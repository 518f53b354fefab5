// A hand-in's host code: where a hand-in brings task sources (src/tasks/C*Task.{h,cpp}), one binary
// per task, with that task's files from the hand-in and everything else the suite's own, compiled
// and linked against the hand-in kit (cmake/HandinKit.cmake: the suite's prebuilt library and
// objects, its headers and how it compiles) with the compiler alone, in seconds. A hand-in never
// rebuilds the suite.
#pragma once

#include "grade/HandinFiles.h"

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace rsb::grade {

// The hand-in kit, read from its kit.txt: every path absolute.
struct Kit {
  std::string dir;
  std::string compiler;
  std::vector<std::string> flags;      // compile and link: "-O3", "-std=c++17"...
  std::vector<std::string> defines;    // "-DFMT_HEADER_ONLY=1"...
  std::vector<std::string> includes;   // "-I<kit>/common"...
  std::vector<std::string> linkFlags;  // before the objects
  std::vector<std::string> libraries;  // after the objects
  // "src/tasks/CScanTask.cpp" (TaskSources; and src/tasks/Tasks.cpp) -> the suite's own file
  std::map<std::string, std::string> suite;
  std::map<std::string, std::string> objects;  // "CScanTask", "Tasks", "main" -> its object
  std::string pch;  // a header whose precompiled form every compile includes ("": none)
};

// The kit of this binary: <binary's folder>/handin-kit in a build tree, else
// <prefix>/<libdir>/reduce-scan-bench/handin-kit of an installed tree.
std::string DefaultKitDir();

// Where the kit of a build tree is missing (DefaultKitDir, the binary's folder holds
// CMakeCache.txt): builds it (`cmake --build <that folder> --target handin-kit`, with the CMake
// that configured it), saying so on stderr, once for the build tree. Elsewhere nothing.
// Throws DeviceError when the build fails.
void BuildKitIfMissing(const std::string& dir, double timeoutS);

// Reads the kit and checks it once, before any hand-in is graded: every file of its MANIFEST
// is there, and the suite's own objects link into a binary that runs. Throws DeviceError naming
// what is missing or broken and how to fix it (the grader's problem, never a student's). Also
// precompiles the headers the task sources include, for every hand-in's compiles: once for the
// kit in <kit>/pch where the kit's folder can be written, else for this run in workDir.
Kit LoadKit(const std::string& dir, const std::string& workDir, double timeoutS);

// The objects of the compiles that succeeded in this grading run, by what each was compiled from
// (its command line, the source's text and every header staged beside it), with the compiler's
// warnings: task sources that hand-ins bring unchanged (the hand-out's stubs, a header left
// alone) are compiled once for the class. In the grader's folder, out of every hand-in's sight.
class ObjectCache {
 public:
  explicit ObjectCache(std::string dir) : dir_(std::move(dir)) {}
  // Copies the object kept under `key` to `object` and gives its warnings; false where none.
  bool Take(const std::string& key, const std::string& object, std::string& warnings);
  void Keep(const std::string& key, const std::string& object, const std::string& warnings);

 private:
  std::mutex mu_;
  std::string dir_;
  std::map<std::string, std::string> kept_;  // key -> the compiler's stderr
};

struct HostBuildSettings {
  const Kit* kit = nullptr;
  std::string workDir;               // the grader's temporary folder
  double timeoutS = 120;             // for the whole host build of one hand-in
  std::set<std::string> graded;      // the tasks the rubric grades (others are not built)
  std::vector<std::string> wrapper;  // how the compiles and links start (a sandbox; Sandbox.h)
  std::shared_ptr<ObjectCache> objects = nullptr;  // null: every compile runs
};

struct TaskBuild {
  bool ok = false;
  std::string binary;  // "" when ok and the hand-in's files are the suite's: its binary runs
  std::vector<std::string>
      compiled;        // what was compiled ("src/tasks/CScanTask.cpp", "src/tasks/Tasks.cpp")
  std::string log;     // the compiler's first errors (or warnings)
  double seconds = 0;  // its compiles and link, one after the other
  std::vector<std::string> reused{};  // of compiled: objects an identical compile made earlier
  // Where it does not build and the hand-in is not of this grader's task API (engine/TaskApi.h;
  // none named counts as another): the one line that names both and what to do. The log then
  // holds that line and the compiler's first message only.
  std::string apiNote{};
};

struct HostBuild {
  std::map<std::string, TaskBuild> tasks;  // per task whose sources the hand-in brings
  double seconds = 0;                      // wall time of the whole build (tasks in parallel)
  HandoutOf handout{};                     // what the hand-in says of its hand-out
};

// Builds the hand-in's host code (nothing when it brings no task sources).
HostBuild BuildHostCode(const HostBuildSettings& s, const HandinFiles& handin);

}  // namespace rsb::grade
