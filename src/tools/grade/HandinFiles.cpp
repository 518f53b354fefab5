#include "tools/grade/HandinFiles.h"

#include "tasks/Tasks.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace fs = std::filesystem;

namespace rsb::grade {

const std::vector<std::string>& HandinFolders() {
  static const std::vector<std::string> folders = {"kernels", "src"};
  return folders;
}

const std::vector<std::string>& TaskNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& t : MakeTasks())
      v.push_back(t->Name());
    return v;
  }();
  return names;
}

std::vector<std::string> TaskSources(const std::string& task) {
  std::string name = task;
  if (!name.empty())
    name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
  const std::string stem = "src/tasks/C" + name + "Task";
  return {stem + ".h", stem + ".cpp"};
}

std::vector<std::string> HandinFiles::TasksOf(const std::set<std::string>& graded) const {
  std::vector<std::string> tasks;
  for (const auto& [task, sources] : taskSources)
    if (graded.count(task))
      tasks.push_back(task);
  return tasks;
}

bool HandinFiles::Brings(const std::string& task, const std::string& source) const {
  const auto at = taskSources.find(task);
  return at != taskSources.end() &&
         std::find(at->second.begin(), at->second.end(), source) != at->second.end();
}

HandinFiles FindHandinFiles(const std::string& root) {
  HandinFiles f;
  f.root = root;
  const fs::path dir(root);
  if (fs::is_directory(dir / "kernels"))
    f.kernels = (dir / "kernels").string();
  for (const auto& task : TaskNames())
    for (const auto& source : TaskSources(task))
      if (fs::is_regular_file(dir / source))
        f.taskSources[task].push_back(source);
  return f;
}

std::string TaskOfFile(const std::string& relPath) {
  for (const auto& t : MakeTasks()) {
    const std::vector<std::string> sources = TaskSources(t->Name());
    if (std::find(sources.begin(), sources.end(), relPath) != sources.end())
      return t->Name();
    for (const auto& f : t->KernelFiles(t->Variants()))
      if (relPath == "kernels/" + f)
        return t->Name();
  }
  return "";
}

}  // namespace rsb::grade
