#include "grade/Rubric.h"

#include "cli/Cli.h"
#include "cli/CliChecks.h"
#include "engine/Result.h"
#include "platform/Errors.h"
#include "platform/Sizes.h"
#include "tasks/Tasks.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>

namespace fs = std::filesystem;
using nlohmann::json;

namespace rsb::grade {

std::string SizeText(const Extent& e) {
  return rsb::SizeText(e.n, e.height);
}

// The runner's label (CaseLabel) of the case, without its "task/variant " (the item says those).
std::string CaseSpec::Label() const {
  Result r;
  r.type = type;
  r.op = op;
  r.n = size.n;
  r.height = size.height;
  for (const auto& p : declared)
    if (const auto it = params.find(p.name); it != params.end()) {
      if (p.field.empty())
        r.params[p.name] = it->second;
      else
        r.fields[p.field] = p.Text(it->second);
    }
  const std::string full = CaseLabel(r);  // "/ uint sum n=..." for an empty task and variant
  return full.substr(full.find(' ') + 1);
}

CaseGroup GroupOf(const CaseGroup& g, const CaseSpec& spec) {
  CaseGroup one = g;
  one.sizes = {spec.size};
  one.types = {spec.type};
  one.ops = {spec.op};
  one.params.clear();
  for (const auto& [name, value] : spec.params)
    one.params[name] = {value};
  return one;
}

std::vector<CaseSpec> Expand(const CaseGroup& g) {
  // Every combination of the parameters' values, in the order of their lists.
  std::vector<std::map<std::string, size_t>> params = {{}};
  for (const auto& [name, values] : g.params) {
    std::vector<std::map<std::string, size_t>> next;
    for (const auto& p : params)
      for (size_t v : values) {
        auto q = p;
        q[name] = v;
        next.push_back(q);
      }
    params = next;
  }
  std::vector<CaseSpec> out;
  for (ElementType type : g.types)
    for (Op op : g.ops)
      for (const auto& p : params)
        for (const Extent& size : g.sizes)
          out.push_back({type, op, size, p, g.declared});
  return out;
}

std::string CaseGroup::FieldsText() const {
  std::string s;
  for (const auto& p : declared) {
    const auto it = params.find(p.name);
    if (p.field.empty() || it == params.end())
      continue;
    std::vector<std::string> names;
    for (size_t v : it->second)
      names.push_back(p.Text(v));
    s += " " + cli::Join(names, ",");
  }
  return s;
}

std::string ToString(GateMode m) {
  return m == GateMode::Off ? "off" : m == GateMode::Report ? "report" : "deduct";
}

namespace {

// Where in the rubric a value sits, for its error message.
struct Where {
  const std::string& path;
  std::string at;  // "item 'scan-naive'", "item 'scan-naive' case 2"
  [[noreturn]] void Fail(const std::string& what) const {
    throw UsageError(fmt::format("--rubric '{}': {}{}", path, at.empty() ? "" : at + ": ", what));
  }
};

// A value or a list of values, each converted by parse (nullopt: not allowed).
template <class T, class F>
std::vector<T> List(const Where& w, const json& v, const std::string& key,
                    const std::string& allowed, F parse) {
  std::vector<T> out;
  const json list = v.is_array() ? v : json::array({v});
  for (const auto& e : list) {
    const std::optional<T> x = parse(e);
    if (!x)
      w.Fail(fmt::format("{} {}: not allowed; allowed: {}", key, e.dump(), allowed));
    out.push_back(*x);
  }
  if (out.empty())
    w.Fail(fmt::format("{}: empty list; allowed: {}", key, allowed));
  return out;
}

// "size"/"sizes" and the like: the key without a plural s.
std::string Singular(const std::string& key) {
  return key.size() > 1 && key.back() == 's' ? key.substr(0, key.size() - 1) : key;
}

struct TaskView {
  const IComputeTask* task;
  std::string variant;
};

std::vector<size_t> ParamValuesOf(const Where& w, const json& v, const std::string& key,
                                  const TaskParameter& p) {
  return List<size_t>(w, v, key, p.AllowedText(), [&](const json& e) -> std::optional<size_t> {
    if (!p.names.empty())
      return e.is_string() ? p.Parse(e.get<std::string>()) : std::nullopt;
    if (!e.is_number_unsigned() || !p.Allows(e.get<size_t>()))
      return std::nullopt;
    return e.get<size_t>();
  });
}

// A case entry's sizes: element counts, or images for a variant that takes a shape.
std::vector<Extent> ParseSizes(const Where& w, const TaskView& t, const std::string& key,
                               const json& v) {
  const bool shapes = t.task->TakesShape(t.variant);
  const std::string allowed =
      shapes ? "images \"WIDTHxHEIGHT\" (e.g. \"64x64\"), at most 2^40 elements"
             : "element counts from 1 to 2^40 (numbers or \"2^20+3\", \"16M\")";
  return List<Extent>(w, v, key, allowed, [&](const json& e) -> std::optional<Extent> {
    std::optional<Extent> x;
    if (e.is_number_unsigned() && e.get<size_t>() >= 1 && e.get<size_t>() <= kMaxElements)
      x = Extent{e.get<size_t>(), 0};
    else if (e.is_string())
      x = ParseExtent(e.get<std::string>());
    if (x && (x->height > 0) != shapes)
      x.reset();  // an image for a 1-D variant, or a count for a 2-D one
    return x;
  });
}

std::vector<std::string> ParseLocalSizes(const Where& w, const std::string& key, const json& v) {
  return List<std::string>(w, v, key, "auto or a power of two from 1 to 1024",
                           [](const json& e) -> std::optional<std::string> {
                             if (e.is_string() && e.get<std::string>() == "auto")
                               return "auto";
                             if (!e.is_number_unsigned())
                               return std::nullopt;
                             const size_t n = e.get<size_t>();
                             if (n < 1 || n > 1024 || (n & (n - 1)) != 0)
                               return std::nullopt;
                             return std::to_string(n);
                           });
}

// The keys a case of the task may have.
std::string CaseKeys(const TaskView& t) {
  std::string allowed = "size(s), type(s), op(s), local_size(s), validate_runs";
  for (const auto& p : t.task->Parameters())
    allowed += ", " + p.Key() + "(s)";
  return allowed;
}

// A key that names one of the task's parameters (TaskParameter::Key), else the error naming
// every key allowed.
void ParseParamKey(const Where& w, const TaskView& t, CaseGroup& g, const std::string& one,
                   const std::string& key, const json& v) {
  for (const auto& p : t.task->Parameters())
    if (one == p.Key()) {
      g.params[p.name] = ParamValuesOf(w, v, key, p);
      return;
    }
  w.Fail(fmt::format("unknown key '{}'; allowed: {}", key, CaseKeys(t)));
}

void ParseCaseKey(const Where& w, const TaskView& t, CaseGroup& g, const std::string& key,
                  const json& v) {
  const std::string one = Singular(key);
  if (one == "size") {
    g.sizes = ParseSizes(w, t, key, v);
  } else if (one == "type") {
    g.types = List<ElementType>(w, v, key, JoinNames(t.task->Types(), " "), [&](const json& e) {
      std::optional<ElementType> x;
      if (e.is_string())
        x = ParseElementType(e.get<std::string>());
      const auto ok = t.task->Types();
      if (x && std::find(ok.begin(), ok.end(), *x) == ok.end())
        x.reset();
      return x;
    });
  } else if (one == "op") {
    g.ops = List<Op>(w, v, key, JoinNames(t.task->Ops(), " "), [&](const json& e) {
      std::optional<Op> x;
      if (e.is_string())
        x = ParseOp(e.get<std::string>());
      const auto ok = t.task->Ops();
      if (x && std::find(ok.begin(), ok.end(), *x) == ok.end())
        x.reset();
      return x;
    });
  } else if (one == "local_size") {
    g.localSizes = ParseLocalSizes(w, key, v);
  } else if (one == "validate_run") {
    if (!v.is_number_unsigned() || v.get<size_t>() < 1 || v.get<size_t>() > 100)
      w.Fail(
          fmt::format("{} {}: not allowed; allowed: a whole number from 1 to 100", key, v.dump()));
    g.validateRuns = v.get<size_t>();
  } else {
    ParseParamKey(w, t, g, one, key, v);
  }
}

// Every case of the group must be one the variant can compute: CheckProblem's verdict (a mask
// wider than the input, ...) is the rubric's error, before anything runs.
void CheckRunnable(const Where& w, const TaskView& t, const CaseGroup& g) {
  for (const CaseSpec& c : Expand(g)) {
    ProblemSpec spec;
    spec.type = c.type;
    spec.op = c.op;
    spec.n = c.size.n;
    spec.height = c.size.height;
    spec.params = c.params;
    try {
      t.task->CheckProblem(spec, {t.variant});
    } catch (const UsageError& e) {
      w.Fail(fmt::format("the case {} can never run: {}", c.Label(), e.what()));
    }
  }
}

CaseGroup ParseCases(const Where& w, const TaskView& t, const json& c) {
  if (!c.is_object())
    w.Fail("a case must be an object with " + CaseKeys(t));
  CaseGroup g;
  // uint where the task computes it (as on the command line), else its first type.
  const auto types = t.task->Types();
  g.types = {std::find(types.begin(), types.end(), ElementType::Uint) != types.end()
                 ? ElementType::Uint
                 : types.front()};
  g.declared = t.task->Parameters();
  for (const auto& p : g.declared)
    if (!p.field.empty())
      g.params[p.name] = {p.value};
  bool haveSize = false;
  for (const auto& [key, v] : c.items()) {
    haveSize = haveSize || Singular(key) == "size";
    ParseCaseKey(w, t, g, key, v);
  }
  if (!haveSize)
    w.Fail("a case needs size or sizes");
  CheckRunnable(w, t, g);
  return g;
}

// The first value of every list: one case (speed and Oclgrind gates run one).
CaseGroup OneCase(CaseGroup g, const Extent& size) {
  g.sizes = {size};
  g.types.resize(1);
  g.ops.resize(1);
  g.localSizes.resize(1);
  for (auto& [name, values] : g.params)
    values.resize(1);
  g.validateRuns = 1;
  return g;
}

const json* Field(const json& e, const char* key) {
  return e.contains(key) ? &e.at(key) : nullptr;
}

std::string StringField(const Where& w, const json& e, const char* key, bool required) {
  const json* v = Field(e, key);
  if (!v) {
    if (required)
      w.Fail(fmt::format("needs \"{}\" (a string)", key));
    return "";
  }
  if (!v->is_string())
    w.Fail(fmt::format("{} {}: not a string; allowed: a string", key, v->dump()));
  return v->get<std::string>();
}

std::optional<double> NumberField(const Where& w, const json& e, const char* key,
                                  const char* allowed, bool positive) {
  const json* v = Field(e, key);
  if (!v)
    return std::nullopt;
  if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < 0 ||
      v->get<double>() > 1e9 || (positive && v->get<double>() == 0))
    w.Fail(fmt::format("{} {}: not allowed; allowed: {}", key, v->dump(), allowed));
  return v->get<double>();
}

void ParseGates(const Where& w, const TaskView& t, const json& e, Item& it) {
  it.speedFloor = NumberField(w, e, "speed_floor", "a number > 0 (e.g. 0.5)", true);
  const CaseGroup& first = it.groups.front();
  auto largest = [](const CaseGroup& g) {
    return *std::max_element(g.sizes.begin(), g.sizes.end(),
                             [](const Extent& a, const Extent& b) { return a.n < b.n; });
  };
  if (const json* sc = Field(e, "speed_case")) {
    Where ws{w.path, w.at + " speed_case"};
    it.speedCase = ParseCases(ws, t, *sc);
    it.speedCase = OneCase(it.speedCase, largest(it.speedCase));
  } else {
    it.speedCase = OneCase(first, largest(first));
  }
  const std::string mode = StringField(w, e, "oclgrind", false);
  if (mode == "report")
    it.oclgrind = GateMode::Report;
  else if (mode == "deduct")
    it.oclgrind = GateMode::Deduct;
  else if (!mode.empty() && mode != "off")
    w.Fail(fmt::format("oclgrind '{}': not allowed; allowed: off, report, deduct", mode));
  it.workCeiling = NumberField(w, e, "work_ceiling", "a number > 0 (e.g. 2)", true);
  if (it.workCeiling && it.oclgrind == GateMode::Off)
    w.Fail("work_ceiling: needs \"oclgrind\": \"report\" or \"deduct\" (Oclgrind counts the work)");
  if (const json* oc = Field(e, "oclgrind_case")) {
    Where wo{w.path, w.at + " oclgrind_case"};
    it.oclgrindCase = ParseCases(wo, t, *oc);
    it.oclgrindCase = OneCase(it.oclgrindCase, it.oclgrindCase.sizes.front());
  } else {
    // The first group's largest size that Oclgrind simulates in seconds (at most 4096
    // elements), else its smallest.
    Extent pick = first.sizes.front();
    for (const Extent& s : first.sizes)
      if ((s.n <= 4096 && (pick.n > 4096 || s.n > pick.n)) || (pick.n > 4096 && s.n < pick.n))
        pick = s;
    it.oclgrindCase = OneCase(first, pick);
  }
}

Item ParseItem(const std::string& path, size_t index, const json& e,
               const std::vector<std::unique_ptr<IComputeTask>>& tasks) {
  Where w{path, fmt::format("item {}", index + 1)};
  if (!e.is_object())
    w.Fail("not an object");
  Item it;
  it.id = StringField(w, e, "id", true);
  if (it.id.empty() || it.id.find_first_of(",\"\n/") != std::string::npos)
    w.Fail("needs an \"id\" (a name without commas, quotes or slashes)");
  w.at = fmt::format("item '{}'", it.id);
  static const std::vector<std::string> keys = {
      "id",          "title",      "task",     "variant",       "points",      "cases",
      "speed_floor", "speed_case", "oclgrind", "oclgrind_case", "work_ceiling"};
  for (const auto& [key, v] : e.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      w.Fail(fmt::format("unknown key '{}'; allowed: {}", key, cli::Join(keys)));
  it.title = StringField(w, e, "title", false);
  it.task = StringField(w, e, "task", true);
  const IComputeTask* task = nullptr;
  std::vector<std::string> taskNames;
  for (const auto& t : tasks) {
    taskNames.push_back(t->Name());
    if (t->Name() == it.task)
      task = t.get();
  }
  if (!task)
    w.Fail(fmt::format("task '{}': unknown; allowed: {}", it.task, cli::Join(taskNames)));
  it.variant = StringField(w, e, "variant", true);
  const auto vs = task->Variants();
  if (std::find(vs.begin(), vs.end(), it.variant) == vs.end())
    w.Fail(fmt::format("variant '{}': unknown for task {}; allowed: {}", it.variant, it.task,
                       cli::Join(vs)));
  const auto points = NumberField(w, e, "points", "a number >= 0", false);
  if (!points)
    w.Fail("points: missing; allowed: a number >= 0");
  it.points = *points;
  const TaskView t{task, it.variant};
  const json* cases = Field(e, "cases");
  if (!cases)
    w.Fail("needs \"cases\"");
  const json list = cases->is_array() ? *cases : json::array({*cases});
  if (list.empty())
    w.Fail("cases: empty list");
  for (size_t i = 0; i < list.size(); ++i)
    it.groups.push_back(ParseCases({path, fmt::format("{} case {}", w.at, i + 1)}, t, list[i]));
  ParseGates(w, t, e, it);
  return it;
}

}  // namespace

Rubric LoadRubric(const std::string& path) {
  Rubric r;
  r.path = path;
  const Where w{r.path, ""};
  json j;
  try {
    std::ifstream in(path);
    j = json::parse(in);
  } catch (const std::exception& e) {
    w.Fail(fmt::format("not valid JSON ({})", e.what()));
  }
  if (!j.is_object() || !j.contains("items") || !j["items"].is_array() || j["items"].empty())
    w.Fail("needs an object with a non-empty \"items\" array");
  for (const auto& [key, v] : j.items())
    if (key != "name" && key != "seed" && key != "items" && key != "required_files")
      w.Fail(fmt::format("unknown key '{}'; allowed: name, seed, required_files, items", key));
  r.name = j.contains("name") ? StringField(w, j, "name", true) : fs::path(path).stem().string();
  if (j.contains("seed")) {
    if (!j["seed"].is_number_unsigned())
      w.Fail(fmt::format("seed {}: not allowed; allowed: a whole number", j["seed"].dump()));
    r.seed = j["seed"].get<uint64_t>();
  }
  if (const json* req = Field(j, "required_files"))
    r.requiredFiles = List<std::string>(
        w, *req, "required_files", "paths inside a hand-in (\"src/tasks/C<Name>Task.cpp\")",
        [](const json& e) -> std::optional<std::string> {
          if (!e.is_string() || e.get<std::string>().empty() || e.get<std::string>()[0] == '/' ||
              e.get<std::string>().find("..") != std::string::npos)
            return std::nullopt;
          return e.get<std::string>();
        });
  const auto tasks = MakeTasks();
  for (size_t i = 0; i < j["items"].size(); ++i) {
    Item it = ParseItem(path, i, j["items"][i], tasks);
    for (const auto& other : r.items)
      if (other.id == it.id)
        Where{r.path, fmt::format("item '{}'", it.id)}.Fail("id given twice");
    r.items.push_back(std::move(it));
  }
  return r;
}

std::string DefaultRubric() {
  std::error_code ec;
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  const fs::path installed =
      exe.parent_path().parent_path() / "share" / "reduce-scan-bench" / "grading" / "rubric.json";
  if (!ec && fs::is_regular_file(installed, ec))
    return installed.string();
  return (fs::path(RSB_SOURCE_DIR) / "grading" / "rubric.json").string();
}

}  // namespace rsb::grade
