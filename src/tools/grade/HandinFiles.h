// A hand-in's files, found one way (FindHandinFiles) for every part of the grader that reads
// them: its kernels/ folder (the child runs' --kernels) and the task sources it brings
// (src/tasks/C<Task>Task.{h,cpp}: what its host build compiles). A hand-in's files are named as
// in the suite's own tree, whose copies the hand-in kit holds under the same names.
#pragma once

#include <map>
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

struct HandinFiles {
  std::string root;     // the hand-in's folder, as given
  std::string kernels;  // root/kernels; "" where the hand-in has no such folder
  // Per task whose sources the hand-in brings: those it brings, as TaskSources names them.
  std::map<std::string, std::vector<std::string>> taskSources;

  // The tasks of `graded` whose sources it brings, in name order.
  std::vector<std::string> TasksOf(const std::set<std::string>& graded) const;
  bool Brings(const std::string& task, const std::string& source) const;
};

HandinFiles FindHandinFiles(const std::string& root);

// The task a hand-in file belongs to ("reduction" for kernels/Reduction.cl and
// src/tasks/CReductionTask.cpp), or "" when it belongs to every task (kernels/Common.clh).
std::string TaskOfFile(const std::string& relPath);

}  // namespace rsb::grade
