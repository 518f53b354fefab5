#include "run/CaseFile.h"

#include "engine/TaskUtil.h"
#include "platform/Errors.h"
#include "platform/Files.h"
#include "platform/Sizes.h"
#include "platform/Types.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

using nlohmann::json;

namespace rsb {

namespace {

template <class E>
std::vector<std::string> NamesOf(const std::vector<E>& v) {
  std::vector<std::string> out;
  for (const E& e : v)
    out.push_back(ToString(e));
  return out;
}

// One case's checks, each failure a UsageError naming the file, the case and the field.
class CaseReader {
 public:
  CaseReader(const std::string& path, size_t index, const json& c)
      : where_(fmt::format("--cases '{}': case {}", path, index + 1)), c_(c) {}

  [[noreturn]] void Fail(const std::string& field, const std::string& what,
                         const std::string& allowed) const {
    throw UsageError(fmt::format("{}: \"{}\": {}; allowed: {}", where_, field, what, allowed));
  }

  std::string Text(const std::string& field, const std::vector<std::string>& allowed) const {
    const std::string list = fmt::format("{}", fmt::join(allowed, ", "));
    if (!c_.contains(field) || !c_[field].is_string())
      Fail(field, "missing or not a string", list);
    const std::string v = c_[field].get<std::string>();
    if (std::find(allowed.begin(), allowed.end(), v) == allowed.end())
      Fail(field, "'" + v + "'", list);
    return v;
  }

  size_t Number(const std::string& field, size_t fallback, size_t max) const {
    if (!c_.contains(field))
      return fallback;
    if (!c_[field].is_number_unsigned() || c_[field].get<size_t>() > max)
      Fail(field, c_[field].dump(), fmt::format("a whole number from 0 to {}", max));
    return c_[field].get<size_t>();
  }

 private:
  std::string where_;
  const json& c_;
};

IComputeTask& TaskOf(const CaseReader& r, const std::vector<std::unique_ptr<IComputeTask>>& tasks,
                     const std::string& name) {
  for (const auto& t : tasks)
    if (t->Name() == name)
      return *t.get();
  r.Fail("task", "'" + name + "'", "a task of this program");
}

void ReadParams(const CaseReader& r, const IComputeTask& task, const json& c, ProblemSpec& spec) {
  if (!c.contains("params"))
    return;
  if (!c["params"].is_object())
    r.Fail("params", c["params"].dump(), "an object of the task's parameters");
  for (const auto& [name, value] : c["params"].items()) {
    const auto params = task.Parameters();
    const auto p = std::find_if(params.begin(), params.end(), [&](const TaskParameter& q) {
      return q.name == name && q.field.empty();
    });
    if (p == params.end())
      r.Fail("params", "'" + name + "' is not a parameter of " + task.Name(),
             "the task's parameters");
    if (!value.is_number_unsigned() || !p->Allows(value.get<size_t>()))
      r.Fail("params", name + "=" + value.dump(), p->AllowedText());
    spec.params[name] = value.get<size_t>();
  }
}

// The parameters that are keys of the case (TaskParameter::field, with named values): each a field
// of the case, required where the task has it, refused where it has not.
void ReadKeyParams(const CaseReader& r, const IComputeTask& task, const json& c,
                   const std::vector<std::string>& fields, ProblemSpec& spec) {
  const auto params = task.Parameters();
  for (const auto& field : fields) {
    const auto p = std::find_if(params.begin(), params.end(),
                                [&](const TaskParameter& q) { return q.field == field; });
    if (p != params.end())
      spec.params[p->name] = *p->Parse(r.Text(field, p->names));
    else if (c.contains(field))
      r.Fail(field, "the task " + task.Name() + " has none", "no " + field);
  }
}

Job ReadCase(const std::string& path, size_t index, const json& c,
             const std::vector<std::unique_ptr<IComputeTask>>& tasks, const ProblemSpec& base) {
  const CaseReader r(path, index, c);
  if (!c.is_object())
    r.Fail("", c.dump(), "an object per case");
  const std::vector<std::string> fields = FieldNames(FieldParams(tasks));
  std::vector<std::string> keys = {"task", "variant", "type", "op"};
  keys.insert(keys.end(), fields.begin(), fields.end());
  keys.insert(keys.end(), {"n", "height", "params", "local_size"});
  for (const auto& [key, value] : c.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      r.Fail(key, "an unknown field", fmt::format("{}", fmt::join(keys, ", ")));
  std::vector<std::string> taskNames;
  for (const auto& t : tasks)
    taskNames.push_back(t->Name());
  IComputeTask& task = TaskOf(r, tasks, r.Text("task", taskNames));
  Job job{&task, base, {r.Text("variant", task.Variants())}};
  job.spec.type = *ParseElementType(r.Text("type", NamesOf(task.Types())));
  job.spec.op = *ParseOp(r.Text("op", NamesOf(task.Ops())));
  ReadKeyParams(r, task, c, fields, job.spec);
  job.spec.n = r.Number("n", 0, kMaxElements);
  if (job.spec.n == 0)
    r.Fail("n", c.contains("n") ? "0" : "missing", "an element count from 1");
  job.spec.height = r.Number("height", 0, job.spec.n);
  const bool shape = task.TakesShape(job.variants.front());
  if (shape != (job.spec.height > 0) || (job.spec.height && job.spec.n % job.spec.height))
    r.Fail("height", std::to_string(job.spec.height),
           shape ? "the image's rows, dividing n (this variant takes images)"
                 : "0 or absent (this variant takes plain counts)");
  job.spec.localSize = r.Number("local_size", 0, size_t(1) << 20);
  if (job.spec.localSize && !IsPowerOfTwo(job.spec.localSize))
    r.Fail("local_size", std::to_string(job.spec.localSize), "0 (auto) or a power of two");
  ReadParams(r, task, c, job.spec);
  return job;
}

}  // namespace

std::vector<Job> CasesFromFile(const std::string& path,
                               const std::vector<std::unique_ptr<IComputeTask>>& tasks,
                               const ProblemSpec& base) {
  const std::string text = ReadInput("--cases", path, "a JSON file of cases (src/run/CaseFile.h)");
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("--cases '{}': not JSON: {}", path, e.what()));
  }
  if (!j.is_object() || !j.contains("cases") || !j["cases"].is_array() || j["cases"].empty())
    throw UsageError(fmt::format(
        "--cases '{}': no case list; allowed: {{\"cases\": [{{\"task\": ..., ...}}, ...]}}", path));
  std::vector<Job> jobs;
  for (size_t i = 0; i < j["cases"].size(); ++i)
    jobs.push_back(ReadCase(path, i, j["cases"][i], tasks, base));
  return jobs;
}

}  // namespace rsb
