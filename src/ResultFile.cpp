#include "ResultFile.h"

#include "Errors.h"

#include <fmt/format.h>

#include <cerrno>
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

std::optional<double> Number(const json& o, const char* key) {
  if (o.contains(key) && o[key].is_number())
    return o[key].get<double>();
  return std::nullopt;
}

}  // namespace

std::string DeviceId::Key() const {
  return name + '\n' + driverVersion + '\n' + platform;
}

std::string DeviceId::Label() const {
  std::string s = name.empty() ? "unknown device" : name;
  if (!driverVersion.empty())
    s += ", driver " + driverVersion;
  if (!platform.empty())
    s += " (" + platform + ")";
  return s;
}

std::string StoredResult::Label() const {
  return fmt::format("{}/{} {} {}{} n={}{}", task, variant, type, op,
                     scanKind.empty() ? "" : " " + scanKind, n,
                     localSize ? fmt::format(" L={}", localSize) : "") +
         extra;
}

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
  json j;
  try {
    j = json::parse(ss.str());
  } catch (const json::parse_error& e) {
    Bad(role, path,
        fmt::format("not JSON ({}); allowed: a result file of `reduce-scan-bench --format json`",
                    e.what()));
  }
  if (!j.is_object() || !j.contains("schema") || !j["schema"].is_string())
    Bad(role, path,
        fmt::format("not a reduce-scan-bench result file (no \"schema\": \"{}\"); allowed: a "
                    "result file of `reduce-scan-bench --format json`",
                    kSchema));
  const std::string schema = j["schema"].get<std::string>();
  if (schema != kSchema)
    Bad(role, path, fmt::format("schema '{}' not supported; allowed: {}", schema, kSchema));
  if (!j.contains("device") || !j["device"].is_object())
    Bad(role, path, "no \"device\" object");
  f.device = ReadDevice(j["device"]);
  if (!j.contains("results") || !j["results"].is_array())
    Bad(role, path, "no \"results\" array");
  size_t index = 0;
  for (const auto& o : j["results"]) {
    const std::string where = fmt::format("results[{}]", index++);
    if (!o.is_object())
      Bad(role, path, where + ": not an object");
    StoredResult r;
    auto str = [&](const char* key, bool required) {
      if (!o.contains(key)) {
        if (required)
          Bad(role, path, fmt::format("{}: no \"{}\"", where, key));
        return std::string();
      }
      if (!o[key].is_string())
        Bad(role, path, fmt::format("{}: \"{}\" is not a string", where, key));
      return o[key].get<std::string>();
    };
    auto count = [&](const char* key) {
      if (!o.contains(key) || !o[key].is_number_unsigned())
        Bad(role, path, fmt::format("{}: no \"{}\" (a whole number)", where, key));
      return o[key].get<size_t>();
    };
    r.task = str("task", true);
    r.variant = str("variant", true);
    r.type = str("type", true);
    r.op = str("op", true);
    r.scanKind = str("scan_kind", false);
    r.n = count("n");
    r.localSize = count("local_size");
    if (o.contains("shape") && o["shape"].is_string())
      r.extra += " " + o["shape"].get<std::string>();
    if (o.contains("params") && o["params"].is_object())
      for (const auto& [name, value] : o["params"].items())
        r.extra += fmt::format(" {}={}", name, value.dump());
    r.status = str("status", true);
    r.device = o.contains("device") && o["device"].is_object() ? ReadDevice(o["device"]) : f.device;
    if (o.contains("time_ms")) {
      const json& t = o["time_ms"];
      if (!t.is_object() || !Number(t, "median"))
        Bad(role, path, where + ": \"time_ms\" has no \"median\"");
      r.medianMs = *Number(t, "median");
      r.ciLowMs = Number(t, "ci_low");
      r.ciHighMs = Number(t, "ci_high");
      // An empty interval (0 to 0: none computed) is not recorded; one that does not hold its
      // median is no interval either, and said so.
      if (r.HasCi() && *r.ciHighMs <= 0) {
        r.ciLowMs.reset();
        r.ciHighMs.reset();
      } else if (r.HasCi() && !(*r.ciLowMs <= r.medianMs && r.medianMs <= *r.ciHighMs)) {
        r.ciLowMs.reset();
        r.ciHighMs.reset();
        r.ciBad = true;
      }
    } else if (r.status == "passed") {
      Bad(role, path, where + ": passed but no \"time_ms\"");
    }
    if (o.contains("ci_met") && o["ci_met"].is_boolean())
      r.ciMet = o["ci_met"].get<bool>();
    if (o.contains("cold") && o["cold"].is_boolean())
      r.cold = o["cold"].get<bool>();
    r.kernelOptions = str("kernel_options", false);
    f.results.push_back(r);
  }
  return f;
}

}  // namespace rsb
