// A hand-in's files, found one way (FindHandinFiles) for every part of the grader that reads
// them: its kernels/ folder (the child runs' --kernels) and the task sources it brings
// (src/tasks/C<Task>Task.{h,cpp}: what its host build compiles). A hand-in's files are named as
// in the suite's own tree, whose copies the hand-in kit holds under the same names.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rsb::grade {

// The folders of a hand-in the grader reads, and copies where the hand-in's sandbox sees them:
// kernels/ and src/ (the task sources, and any file the rubric requires there).
const std::vector<std::string>& HandinFolders();

// The suite's tasks, in its own order (reduction, scan, convolution).
const std::vector<std::string>& TaskNames();

// The sources of a task, relative to a hand-in (and to the kit): its header, then its .cpp
// ("src/tasks/CScanTask.h", "src/tasks/CScanTask.cpp").
std::vector<std::string> TaskSources(const std::string& task);

// What a hand-in's HANDIN.txt (scripts/make-handin writes it; the grader finds it by name, as the
// other files) says of the hand-out it was made from.
struct HandoutOf {
  bool manifest = false;       // the hand-in holds a HANDIN.txt
  std::optional<int> taskApi;  // its `task api: N` (engine/TaskApi.h); none: an older hand-out
  std::string suiteVersion;    // its `suite version: 0.2`, or ""
  std::string gitRevision;     // its `git revision: ...`, or ""
};

// The manifest's name, in a hand-in and in the grader's copy of it.
inline constexpr const char* kHandinManifest = "HANDIN.txt";

// The manifest at `path` (manifest false where there is none).
HandoutOf ReadHandinManifest(const std::string& path);

struct HandinFiles {
  std::string root;     // the hand-in's folder, as given
  std::string kernels;  // root/kernels; "" where the hand-in has no such folder
  // Per task whose sources the hand-in brings: those it brings, as TaskSources names them.
  std::map<std::string, std::vector<std::string>> taskSources;

  // Where each file of the grader's copy that is not where the hand-in has it came from, by its
  // path in the copy: the path inside the hand-in where it was found by name ("Scan.cl",
  // "alice/kernels/Scan.cl"), or kFromHandout (an unchanged kernels file the hand-in lacks).
  std::map<std::string, std::string> from;

  HandoutOf handout;  // what its HANDIN.txt says

  // The tasks of `graded` whose sources it brings, in name order.
  std::vector<std::string> TasksOf(const std::set<std::string>& graded) const;
  bool Brings(const std::string& task, const std::string& source) const;
};

HandinFiles FindHandinFiles(const std::string& root);

// HandinFiles::from of a file taken from the suite's kernels folder (the hand-out's copy).
inline constexpr const char* kFromHandout = "the hand-out";

// The hand-in's files laid out as the suite's tree lays them out (kernels/, src/tasks/), from
// where the student put them: its kernels/ and src/ as they are; any other kernels file (*.cl,
// *.clh), task source (C<Task>Task.h/.cpp) or HANDIN.txt found by name deeper in the hand-in (a
// flat upload, an extra top folder; the shallowest first), where the layout lacks it. Paths
// relative to the hand-in. Symbolic links are never followed.
std::map<std::string, std::string> LocateByName(const std::string& root);

// Copies the hand-in (root) to `to` as LocateByName lays it out, and, where it brings a kernel,
// every kernels file of the suite's folder (suiteKernels) that it lacks and that holds no
// solution region (no begin marker): the headers handed out unchanged. Its files
// as FindHandinFiles finds them in `to`, with `from` said.
HandinFiles CopyHandinFiles(const std::string& root, const std::string& to,
                            const std::string& suiteKernels);

// The task a hand-in file belongs to ("reduction" for kernels/Reduction.cl and
// src/tasks/CReductionTask.cpp), or "" when it belongs to every task (kernels/Common.clh).
std::string TaskOfFile(const std::string& relPath);

}  // namespace rsb::grade
