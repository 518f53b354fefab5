#include "Rubric.h"

#include "CliChecks.h"
#include "Errors.h"
#include "Sizes.h"
#include "Tasks.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

namespace fs = std::filesystem;
using nlohmann::json;

namespace rsb::grade {

namespace {

[[noreturn]] void RubricError(const Rubric& r, const std::string& where, const std::string& what) {
  throw UsageError(
      fmt::format("--rubric '{}': {}{}", r.path, where.empty() ? "" : where + ": ", what));
}

std::string Str(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// A value or a list of values, each converted by parse (nullopt: not allowed).
template <class T, class F>
std::vector<T> List(const Rubric& r, const std::string& where, const json& v, const char* key,
                    const std::string& allowed, F parse) {
  std::vector<T> out;
  const json list = v.is_array() ? v : json::array({v});
  for (const auto& e : list) {
    const std::optional<T> x = parse(e);
    if (!x)
      RubricError(r, where, fmt::format("{} '{}': not allowed; allowed: {}", key, Str(e), allowed));
    out.push_back(*x);
  }
  if (out.empty())
    RubricError(r, where, fmt::format("{}: empty list; allowed: {}", key, allowed));
  return out;
}

CaseGroup ParseCases(const Rubric& r, const std::string& where, const json& c, bool scan) {
  if (!c.is_object())
    RubricError(r, where,
                "a case must be an object with size(s), type(s), op(s), scan_kind(s), "
                "local_size");
  CaseGroup g;
  bool haveSize = false;
  for (const auto& [key, v] : c.items()) {
    if (key == "size" || key == "sizes") {
      haveSize = true;
      g.sizes = List<size_t>(r, where, v, key.c_str(),
                             "element counts from 1 to 2^40 (numbers or \"2^20+3\", \"16M\")",
                             [](const json& e) -> std::optional<size_t> {
                               std::optional<size_t> n;
                               if (e.is_number_unsigned())
                                 n = e.get<size_t>();
                               else if (e.is_string())
                                 n = ParseSize(e.get<std::string>());
                               if (n && (*n < 1 || *n > kMaxElements))
                                 n.reset();
                               return n;
                             });
    } else if (key == "type" || key == "types") {
      g.types = List<ElementType>(
          r, where, v, key.c_str(), "int uint long ulong float double", [](const json& e) {
            return e.is_string() ? ParseElementType(e.get<std::string>()) : std::nullopt;
          });
    } else if (key == "op" || key == "ops") {
      g.ops = List<Op>(r, where, v, key.c_str(), "sum min max", [](const json& e) {
        return e.is_string() ? ParseOp(e.get<std::string>()) : std::nullopt;
      });
    } else if (key == "scan_kind" || key == "scan_kinds") {
      if (!scan)
        RubricError(r, where, fmt::format("{}: only scan items have a scan kind", key));
      g.kinds = List<ScanKind>(r, where, v, key.c_str(), "inclusive exclusive", [](const json& e) {
        return e.is_string() ? ParseScanKind(e.get<std::string>()) : std::nullopt;
      });
    } else if (key == "local_size") {
      const std::string s = Str(v);
      const auto n = ParseUnsigned(s);
      if (s != "auto" && !(n && *n >= 1 && *n <= 1024 && (*n & (*n - 1)) == 0))
        RubricError(r, where,
                    fmt::format("local_size '{}': not allowed; allowed: auto or a power of two "
                                "from 1 to 1024",
                                s));
      g.localSize = s;
    } else {
      RubricError(r, where,
                  fmt::format("unknown key '{}'; allowed: size(s), type(s), op(s), scan_kind(s), "
                              "local_size",
                              key));
    }
  }
  if (!haveSize)
    RubricError(r, where, "a case needs size or sizes");
  return g;
}

}  // namespace

Rubric LoadRubric(const std::string& path) {
  Rubric r;
  r.path = path;
  json j;
  try {
    std::ifstream in(path);
    j = json::parse(in);
  } catch (const std::exception& e) {
    RubricError(r, "", fmt::format("not valid JSON ({})", e.what()));
  }
  if (!j.is_object() || !j.contains("items") || !j["items"].is_array() || j["items"].empty())
    RubricError(r, "", "needs an object with a non-empty \"items\" array");
  r.name = j.value("name", fs::path(path).stem().string());
  if (j.contains("seed")) {
    if (!j["seed"].is_number_unsigned())
      RubricError(r, "seed", "not allowed; allowed: a whole number");
    r.seed = j["seed"].get<uint64_t>();
  }
  std::map<std::string, std::vector<std::string>> variants;
  for (const auto& t : MakeTasks())
    variants[t->Name()] = t->Variants();
  std::vector<std::string> ids;
  for (size_t i = 0; i < j["items"].size(); ++i) {
    const json& e = j["items"][i];
    std::string where = fmt::format("item {}", i + 1);
    if (!e.is_object())
      RubricError(r, where, "not an object");
    Item it;
    it.id = e.value("id", "");
    if (it.id.empty() || it.id.find_first_of(",\"\n") != std::string::npos)
      RubricError(r, where, "needs an \"id\" (a name without commas or quotes)");
    where = fmt::format("item '{}'", it.id);
    if (std::find(ids.begin(), ids.end(), it.id) != ids.end())
      RubricError(r, where, "id given twice");
    ids.push_back(it.id);
    for (const auto& [key, v] : e.items())
      if (key != "id" && key != "title" && key != "task" && key != "variant" && key != "points" &&
          key != "cases" && key != "speed_floor" && key != "speed_case")
        RubricError(r, where,
                    fmt::format("unknown key '{}'; allowed: id, title, task, variant, points, "
                                "cases, speed_floor, speed_case",
                                key));
    it.title = e.value("title", "");
    it.task = e.value("task", "");
    if (!variants.count(it.task)) {
      std::vector<std::string> names;
      for (const auto& [t, _] : variants)
        names.push_back(t);
      RubricError(r, where,
                  fmt::format("task '{}': unknown; allowed: {}", it.task, cli::Join(names)));
    }
    it.variant = e.value("variant", "");
    const auto& vs = variants[it.task];
    if (std::find(vs.begin(), vs.end(), it.variant) == vs.end())
      RubricError(r, where,
                  fmt::format("variant '{}': unknown for task {}; allowed: {}", it.variant, it.task,
                              cli::Join(vs)));
    if (!e.contains("points") || !e["points"].is_number() || e["points"].get<double>() < 0)
      RubricError(r, where, "points: missing or negative; allowed: a number >= 0");
    it.points = e["points"].get<double>();
    const bool scan = it.task == "scan";
    if (!e.contains("cases"))
      RubricError(r, where, "needs \"cases\"");
    const json cases = e["cases"].is_array() ? e["cases"] : json::array({e["cases"]});
    if (cases.empty())
      RubricError(r, where, "cases: empty list");
    for (const auto& c : cases)
      it.groups.push_back(ParseCases(r, where, c, scan));
    if (e.contains("speed_floor")) {
      if (!e["speed_floor"].is_number() || e["speed_floor"].get<double>() <= 0)
        RubricError(r, where, "speed_floor: not allowed; allowed: a number > 0 (e.g. 0.5)");
      it.speedFloor = e["speed_floor"].get<double>();
    }
    // The speed case: given, or the largest size of the first case group at its first values.
    const CaseGroup& first = it.groups.front();
    it.speedCase = e.contains("speed_case")
                       ? ParseCases(r, where + " speed_case", e["speed_case"], scan)
                       : first;
    CaseGroup& sc = it.speedCase;
    sc.sizes = {*std::max_element(sc.sizes.begin(), sc.sizes.end())};
    sc.types.resize(1);
    sc.ops.resize(1);
    sc.kinds.resize(1);
    r.items.push_back(std::move(it));
  }
  return r;
}

}  // namespace rsb::grade
