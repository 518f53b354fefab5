#include "grade/HandinFiles.h"

#include "platform/Pattern.h"
#include "tasks/Tasks.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

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

HandoutOf ReadHandinManifest(const std::string& path) {
  HandoutOf h;
  std::ifstream in(path);
  h.manifest = fs::is_regular_file(path) && in;
  static const Pattern field(R"((task api|suite version|git revision): *(\S.*?)\s*)");
  static const Pattern number(R"([0-9]{1,6})");
  for (std::string line; h.manifest && std::getline(in, line);) {
    const auto m = field.Match(line);
    if (!m)
      continue;
    if ((*m)[1] == "task api" && number.Match((*m)[2]))
      h.taskApi = std::stoi((*m)[2]);
    else if ((*m)[1] == "suite version")
      h.suiteVersion = (*m)[2];
    else if ((*m)[1] == "git revision")
      h.gitRevision = (*m)[2];
  }
  return h;
}

HandinFiles FindHandinFiles(const std::string& root) {
  HandinFiles f;
  f.root = root;
  const fs::path dir(root);
  f.handout = ReadHandinManifest((dir / kHandinManifest).string());
  if (fs::is_directory(dir / "kernels"))
    f.kernels = (dir / "kernels").string();
  for (const auto& task : TaskNames())
    for (const auto& source : TaskSources(task))
      if (fs::is_regular_file(dir / source))
        f.taskSources[task].push_back(source);
  return f;
}

namespace {

// Where a file of this name goes in the suite's layout, or "".
std::string Destination(const std::string& name) {
  if (name == kHandinManifest)
    return name;
  const std::string ext = fs::path(name).extension().string();
  if (ext == ".cl" || ext == ".clh")
    return "kernels/" + name;
  static const Pattern source(R"(C\w+Task\.(h|cpp))");
  return source.Match(name) ? "src/tasks/" + name : "";
}

bool HoldsSolution(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str().find(
             "// SOLUTION"
             " BEGIN") != std::string::npos;  // (split: not a marker)
}

}  // namespace

std::map<std::string, std::string> LocateByName(const std::string& root) {
  std::map<std::string, std::string> at;  // destination -> path in the hand-in
  std::vector<std::tuple<int, std::string, std::string>> found;  // depth, path, destination
  std::error_code ec;
  size_t seen = 0;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator() && ++seen < 100000; it.increment(ec)) {
    if (it.depth() >= 8)  // no hand-in is that deep
      it.disable_recursion_pending();
    if (it->is_symlink() || !it->is_regular_file())
      continue;
    const std::string rel = fs::relative(it->path(), root).generic_string();
    const std::string top = rel.substr(0, rel.find('/'));
    const bool laidOut = std::count(HandinFolders().begin(), HandinFolders().end(), top) > 0;
    const std::string dest = laidOut ? rel : Destination(it->path().filename().string());
    if (!dest.empty())
      found.emplace_back(laidOut ? -1 : it.depth(), rel, dest);
  }
  std::sort(found.begin(), found.end());
  for (const auto& [depth, rel, dest] : found)
    at.emplace(dest, rel);
  return at;
}

HandinFiles CopyHandinFiles(const std::string& root, const std::string& to,
                            const std::string& suiteKernels) {
  std::map<std::string, std::string> from;
  bool kernels = false;
  for (const auto& [dest, rel] : LocateByName(root)) {
    fs::create_directories((fs::path(to) / dest).parent_path());
    fs::copy_file(fs::path(root) / rel, fs::path(to) / dest, fs::copy_options::overwrite_existing);
    if (dest != rel && dest != kHandinManifest)  // (the manifest is not graded)
      from[dest] = rel;
    kernels = kernels || dest.rfind("kernels/", 0) == 0;
  }
  std::error_code ec;
  if (kernels && !suiteKernels.empty())
    for (const auto& e : fs::directory_iterator(suiteKernels, ec)) {
      const std::string dest = "kernels/" + e.path().filename().string();
      if (e.is_regular_file() && !fs::exists(fs::path(to) / dest) && !HoldsSolution(e.path())) {
        fs::copy_file(e.path(), fs::path(to) / dest);
        from[dest] = kFromHandout;
      }
    }
  HandinFiles f = FindHandinFiles(to);
  f.from = std::move(from);
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
