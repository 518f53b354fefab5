#include "tools/ResultFile.h"

#include "platform/Errors.h"
#include "tasks/Tasks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

using nlohmann::json;

namespace rsb {

namespace {

constexpr const char* kSchema = "reduce-scan-bench/1";

[[noreturn]] void Bad(const std::string& role, const std::string& path, const std::string& what) {
  throw UsageError(fmt::format("{} '{}': {}", role, path, what));
}

constexpr const char* kAllowedFile = "allowed: a result file of `reduce-scan-bench --format json`";

DeviceId ReadDevice(const json& d) {
  DeviceId id;
  auto str = [&](const char* key) {
    return d.contains(key) && d[key].is_string() ? d[key].get<std::string>() : std::string();
  };
  id.name = str("name");
  id.driverVersion = str("driver_version");
  id.platform = str("platform");
  return id;
}

// Where a parse stops: the path of the value being read ("results[3].time_ms.median"), kept
// by a SAX pass over a text that json::parse refused.
// A SAX handler by duck typing (json::sax_parse is a template), so that it builds against every
// nlohmann_json from 3.2, with or without the binary values of 3.8.
class PathTracker {
 public:
  bool null() { return Value(); }
  bool boolean(bool) { return Value(); }
  bool number_integer(json::number_integer_t) { return Value(); }
  bool number_unsigned(json::number_unsigned_t) { return Value(); }
  bool number_float(json::number_float_t, const json::string_t&) { return Value(); }
  bool string(json::string_t&) { return Value(); }
  template <class Binary>
  bool binary(Binary&) {
    return Value();
  }
  bool start_object(std::size_t) { return Push(false); }
  bool key(json::string_t& k) {
    frames_.back().key = k;
    return true;
  }
  bool end_object() { return Pop(); }
  bool start_array(std::size_t) { return Push(true); }
  bool end_array() { return Pop(); }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& e) {
    position_ = position;
    token_ = token;
    id_ = e.id;
    what_ = e.what();
    return false;
  }

  std::string Path() const {
    std::string s;
    for (const auto& f : frames_)
      s += f.array         ? fmt::format("[{}]", f.count)
           : f.key.empty() ? ""
                           : (s.empty() ? "" : ".") + f.key;
    return s;
  }
  size_t position_ = 0;
  std::string token_, what_;
  int id_ = 0;

 private:
  struct Frame {
    bool array;
    size_t count = 0;
    std::string key;
  };
  bool Value() {
    if (!frames_.empty() && frames_.back().array)
      ++frames_.back().count;
    return true;
  }
  bool Push(bool array) {
    frames_.push_back({array, 0, ""});
    return true;
  }
  bool Pop() {
    frames_.pop_back();
    return Value();
  }
  std::vector<Frame> frames_;
};

// Why `text` is no JSON, naming where it stops: "results[3].time_ms.median: 1e400 is not a
// finite number" (a number beyond the double range, NaN, Infinity), else the parser's words.
std::string ParseFailure(const std::string& text, const std::exception& e) {
  if (std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isspace(c); }))
    return fmt::format("empty file; {}", kAllowedFile);
  PathTracker t;
  json::sax_parse(text, &t);
  const std::string path = t.Path(), at = path.empty() ? "" : path + ": ";
  // The word the parser stopped in ("NaN", "-Infinity"): around the last character it read.
  auto inWord = [&](size_t i) {
    return std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '+' || text[i] == '-' ||
           text[i] == '.';
  };
  size_t from = std::min(text.size(), t.position_), to = from;
  while (from > 0 && inWord(from - 1))
    --from;
  while (to < text.size() && inWord(to))
    ++to;
  std::string word = text.substr(from, to - from), bare = word;
  bare.erase(0, bare.find_first_not_of("+-"));
  std::transform(bare.begin(), bare.end(), bare.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (t.id_ == 406 || bare == "nan" || bare == "inf" || bare == "infinity")
    return fmt::format(
        "{}{} is not a finite number; allowed: a JSON number within the double "
        "range (at most about 1.8e308 in magnitude)",
        at, word.empty() ? t.token_ : word);
  return fmt::format("{}not JSON ({}); {}", at, t.what_.empty() ? e.what() : t.what_, kAllowedFile);
}

json ParseJson(const std::string& text, const std::string& role, const std::string& path) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e400
    Bad(role, path, ParseFailure(text, e));
  }
}

// The fields of one result, read strictly: a field that is there has the right type.
class ResultReader {
 public:
  ResultReader(const json& o, std::string where, const ResultFile& f)
      : o_(o), where_(std::move(where)), f_(f) {}

  [[noreturn]] void Fail(const std::string& what) const { Bad(f_.role, f_.path, where_ + what); }

  std::string Str(const char* key, bool required) const {
    if (!o_.contains(key) || (!required && o_[key].is_null())) {
      if (required)
        Fail(fmt::format(": no \"{}\"", key));
      return std::string();
    }
    if (!o_[key].is_string())
      Fail(fmt::format(".{}: {} is not a string", key, Shown(o_[key])));
    return o_[key].get<std::string>();
  }

  // A named value of the parameter p in its field (TaskParameter::field); "" where absent.
  std::string FieldValue(const TaskParameter& p) const {
    const std::string s = Str(p.field.c_str(), false);
    if (s.empty() || std::find(p.names.begin(), p.names.end(), s) != p.names.end())
      return s;
    Fail(fmt::format(".{}: {} is not allowed; allowed: {}", p.field, Shown(o_[p.field]),
                     fmt::join(p.names, ", ")));
  }

  // A name that parse knows (a type, an operator, a status); nullopt where absent and not
  // required.
  template <class T>
  std::optional<T> Name(const char* key, bool required,
                        std::optional<T> (*parse)(const std::string&),
                        const std::vector<T>& all) const {
    const std::string s = Str(key, required);
    if (s.empty() && !required)
      return std::nullopt;
    if (const auto v = parse(s))
      return v;
    std::string allowed;
    for (const T& v : all)
      allowed += (allowed.empty() ? "" : ", ") + ToString(v);
    Fail(fmt::format(".{}: {} is not allowed; allowed: {}", key, Shown(o_[key]), allowed));
  }

  size_t Count(const char* key) const { return Count(o_, key, key); }

  // A whole number `key` of `in`, named `field` in messages.
  size_t Count(const json& in, const std::string& key, const std::string& field) const {
    if (!in.contains(key))
      Fail(fmt::format(": no \"{}\" (a whole number)", field));
    if (!in[key].is_number_unsigned())
      Fail(fmt::format(".{}: {} is not a whole number", field, Shown(in[key])));
    return in[key].get<size_t>();
  }

  // A number where recorded (absent or null: not recorded), 0 or more.
  std::optional<double> Number(const json& in, const std::string& field) const {
    const size_t dot = field.rfind('.');
    const std::string key = dot == std::string::npos ? field : field.substr(dot + 1);
    if (!in.contains(key) || in[key].is_null())
      return std::nullopt;
    const json& v = in[key];
    if (!v.is_number())
      Fail(fmt::format(".{}: {} is not a number", field, Shown(v)));
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < 0)
      Fail(fmt::format(".{}: {} is not allowed; allowed: a finite number, 0 or more", field,
                       v.dump()));
    return x;
  }

  const json& o_;

 private:
  static std::string Shown(const json& v) {
    const std::string s = v.dump();
    return s.size() > 40 ? s.substr(0, 37) + "..." : s;
  }
  std::string where_;
  const ResultFile& f_;
};

void ReadTime(const ResultReader& in, StoredResult& s) {
  const json& o = in.o_;
  Result& r = s.result;
  if (!o.contains("time_ms") || o["time_ms"].is_null()) {
    if (r.status == Status::Passed)
      in.Fail(": passed but no \"time_ms\"");
    return;
  }
  const json& t = o["time_ms"];
  if (!t.is_object())
    in.Fail(".time_ms: not an object");
  const auto median = in.Number(t, "time_ms.median");
  if (!median && r.status == Status::Passed)
    in.Fail(": \"time_ms\" has no \"median\"");
  r.timeMs.median = median.value_or(0);
  r.timeMs.min = in.Number(t, "time_ms.min").value_or(0);
  r.timeMs.max = in.Number(t, "time_ms.max").value_or(0);
  r.timeMs.mean = in.Number(t, "time_ms.mean").value_or(0);
  r.timeMs.stddev = in.Number(t, "time_ms.stddev").value_or(0);
  const auto low = in.Number(t, "time_ms.ci_low"), high = in.Number(t, "time_ms.ci_high");
  // An empty interval (0 to 0: none computed) is not recorded; one that does not hold its
  // median is no interval either, and said so.
  if (!low || !high || *high <= 0)
    return;
  if (!(*low <= r.timeMs.median && r.timeMs.median <= *high)) {
    s.ciBad = true;
    return;
  }
  r.timeMs.ciLow = *low;
  r.timeMs.ciHigh = *high;
  s.hasCi = true;
}

// samples_ms: an array per round of times in ms (absent in files of one round before it).
void ReadSamples(const ResultReader& in, Result& r) {
  const json& o = in.o_;
  if (!o.contains("samples_ms") || o["samples_ms"].is_null())
    return;
  if (!o["samples_ms"].is_array())
    in.Fail(".samples_ms: not an array");
  for (size_t i = 0; i < o["samples_ms"].size(); ++i) {
    const json& round = o["samples_ms"][i];
    if (!round.is_array())
      in.Fail(fmt::format(".samples_ms[{}]: not an array", i));
    std::vector<double> times;
    for (size_t k = 0; k < round.size(); ++k) {
      const json& v = round[k];
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
        in.Fail(
            fmt::format(".samples_ms[{}][{}]: {} is not allowed; allowed: a finite number, 0 "
                        "or more",
                        i, k, v.dump()));
      times.push_back(v.get<double>());
    }
    r.samplesMs.push_back(std::move(times));
  }
}

// The tasks' parameters that results record in fields of their own (TaskParameter::field).
const std::vector<TaskParameter>& KeyParams() {
  static const std::vector<TaskParameter> params = FieldParams(MakeTasks());
  return params;
}

// The case: task to local size, an image's height (where it has a shape) and the task's
// parameters.
void ReadCase(const ResultReader& in, Result& r) {
  const json& o = in.o_;
  r.task = in.Str("task", true);
  r.variant = in.Str("variant", true);
  r.type = *in.Name("type", true, ParseElementType, AllElementTypes());
  r.op = *in.Name("op", true, ParseOp, AllOps());
  for (const auto& p : KeyParams())
    if (const std::string v = in.FieldValue(p); !v.empty())
      r.fields[p.field] = v;
  r.n = in.Count("n");
  r.localSize = in.Count("local_size");
  if (o.contains("shape") && o["shape"].is_string())
    r.height = in.Count("height");
  if (o.contains("params") && o["params"].is_object())
    for (const auto& [name, value] : o["params"].items())
      r.params[name] = in.Count(o["params"], name, "params." + name);
}

StoredResult ReadResult(const ResultReader& in, const ResultFile& f) {
  const json& o = in.o_;
  StoredResult s;
  Result& r = s.result;
  ReadCase(in, r);
  r.status = *in.Name("status", true, ParseStatus, AllStatuses());
  s.device = o.contains("device") && o["device"].is_object() ? ReadDevice(o["device"]) : f.device;
  ReadTime(in, s);
  r.gelemS = in.Number(o, "gelem_s").value_or(0);
  r.gbytesS = in.Number(o, "gbytes_s").value_or(0);
  s.ciMetRecorded = o.contains("ci_met") && o["ci_met"].is_boolean();
  if (s.ciMetRecorded)
    r.ciMet = o["ci_met"].get<bool>();
  if (o.contains("cold") && o["cold"].is_boolean())
    r.cold = o["cold"].get<bool>();
  r.kernelOptions = in.Str("kernel_options", false);
  r.ceiling = in.Str("ceiling", false);
  r.timer = in.Str("timer", false);
  ReadSamples(in, r);
  return s;
}

}  // namespace

std::vector<DeviceId> ResultFile::Devices() const {
  std::vector<DeviceId> out;
  for (const auto& r : results)
    if (std::find(out.begin(), out.end(), r.device) == out.end())
      out.push_back(r.device);
  if (out.empty())
    out.push_back(device);
  return out;
}

ResultFile LoadResultFile(const std::string& path, const std::string& role) {
  ResultFile f;
  f.path = path;
  f.role = role;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    Bad(role, path, "no such file");
  if (std::filesystem::is_directory(path, ec))
    Bad(role, path, "a folder, not a result file");
  std::ifstream in(path);
  if (!in)
    Bad(role, path, fmt::format("cannot read: {}", std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  json j = ParseJson(ss.str(), role, path);
  if (!j.is_object() || !j.contains("schema") || !j["schema"].is_string())
    Bad(role, path,
        fmt::format("not a reduce-scan-bench result file (no \"schema\": \"{}\"); {}", kSchema,
                    kAllowedFile));
  const std::string schema = j["schema"].get<std::string>();
  if (schema != kSchema)
    Bad(role, path, fmt::format("schema '{}' not supported; allowed: {}", schema, kSchema));
  if (!j.contains("device") || !j["device"].is_object())
    Bad(role, path, "no \"device\" object");
  f.device = ReadDevice(j["device"]);
  if (const json& d = j["device"]; d.contains("ceilings") && d["ceilings"].is_object()) {
    const auto gbs = [&](const char* key) {
      const json& c = d["ceilings"];
      return c.contains(key) && c[key].is_number() ? c[key].get<double>() : 0.0;
    };
    f.readGBs = gbs("read_gbytes_s"), f.writeGBs = gbs("write_gbytes_s");
    f.copyGBs = gbs("copy_gbytes_s");
  }
  if (!j.contains("results") || !j["results"].is_array())
    Bad(role, path, "no \"results\" array");
  size_t index = 0;
  for (const auto& o : j["results"]) {
    const std::string where = fmt::format("results[{}]", index++);
    if (!o.is_object())
      Bad(role, path, where + ": not an object");
    f.results.push_back(ReadResult(ResultReader(o, where, f), f));
  }
  f.document = std::move(j);
  return f;
}

}  // namespace rsb
