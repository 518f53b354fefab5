#include "run/Profile.h"

#include "engine/TaskUtil.h"
#include "platform/Errors.h"
#include "platform/Files.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#ifndef RSB_SOURCE_DIR
#define RSB_SOURCE_DIR ""
#endif

namespace rsb {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Whether --tune's knob sets something of this variant's case: one of its searched knobs, or a
// knob no variant of the task searches (index-bits).
bool Touches(const std::vector<TunedSpace>& spaces, const std::string& variant,
             const std::string& codePath, size_t typeBytes, const std::string& knob) {
  const auto mine = TunedKnobs(spaces, variant, codePath, typeBytes);
  if (std::find(mine.begin(), mine.end(), knob) != mine.end())
    return true;
  for (const auto& s : spaces)
    if (std::find(s.knobs.begin(), s.knobs.end(), knob) != s.knobs.end())
      return false;
  return true;
}

std::string Slug(const std::string& text) {
  std::string slug;
  for (char c : text) {
    const bool alnum = std::isalnum(static_cast<unsigned char>(c));
    if (alnum)
      slug += char(std::tolower(static_cast<unsigned char>(c)));
    else if (!slug.empty() && slug.back() != '-')
      slug += '-';
  }
  while (!slug.empty() && slug.back() == '-')
    slug.pop_back();
  return slug;
}

}  // namespace

std::string SizeClassOf(size_t n) {
  return n < (size_t(1) << 20) ? "small" : n < (size_t(1) << 26) ? "large" : "huge";
}

std::vector<std::string> TunedKnobs(const std::vector<TunedSpace>& spaces,
                                    const std::string& variant, const std::string& codePath,
                                    size_t typeBytes) {
  for (const auto& s : spaces)
    if (s.variant == variant && (s.codePath.empty() || s.codePath == codePath) &&
        (s.typeBytes == 0 || s.typeBytes == typeBytes))
      return s.knobs;
  return {};
}

const ProfileEntry* Profile::Find(const std::string& task, const std::string& variant,
                                  const std::string& codePath, size_t typeBytes,
                                  const std::string& sizeClass) const {
  for (const auto& e : entries)
    if (e.task == task && e.variant == variant && e.codePath == codePath &&
        e.typeBytes == typeBytes && e.sizeClass == sizeClass)
      return &e;
  return sizeClass == "huge" ? Find(task, variant, codePath, typeBytes, "large") : nullptr;
}

std::string ProfileSlug(const DeviceInfo& device) {
  return Slug(device.platform + " " + device.name + " " + device.driverVersion);
}

std::string UserProfileDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  fs::path base;
  if (xdg && *xdg == '/')  // the XDG spec: a relative path is to be ignored
    base = xdg;
  else if (home && *home)
    base = fs::path(home) / ".cache";
  else
    return {};
  return (base / "reduce-scan-bench" / "profiles").string();
}

std::string ShippedProfileDir() {
  std::error_code ec;
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed =
        exe.parent_path().parent_path() / "share" / "reduce-scan-bench" / "profiles";
    // Run from its build tree (CMakeCache.txt beside it), the binary reads the source tree's.
    if (!fs::is_regular_file(exe.parent_path() / "CMakeCache.txt", ec) &&
        fs::is_directory(installed, ec))
      return installed.string();
  }
  return std::string(RSB_SOURCE_DIR).empty() ? std::string()
                                             : (fs::path(RSB_SOURCE_DIR) / "profiles").string();
}

namespace {

// The one-line refusal of a profile: its file, the key, what is wrong and what is allowed.
[[noreturn]] void Refuse(const std::string& path, const std::string& key, const std::string& what,
                         const std::string& allowed) {
  throw UsageError(fmt::format("profile '{}': {}: {}; allowed: {}", path, key, what, allowed));
}

struct Reader {
  std::string path;
  const json& At(const json& o, const std::string& key, const std::string& where) const {
    if (!o.contains(key))
      Refuse(path, where + key, "missing", "a profile as `reduce-scan-bench tune` writes it");
    return o.at(key);
  }
  std::string Str(const json& o, const std::string& key, const std::string& where = "") const {
    const json& v = At(o, key, where);
    if (!v.is_string())
      Refuse(path, where + key, v.dump() + " is not a string", "a string");
    return v.get<std::string>();
  }
  size_t Count(const json& o, const std::string& key, const std::string& where,
               const std::string& allowed) const {
    const json& v = At(o, key, where);
    if (!v.is_number_integer() || v.get<long long>() < 0)
      Refuse(path, where + key, v.dump() + " is not allowed", allowed);
    return v.get<size_t>();
  }
  double Number(const json& o, const std::string& key, const std::string& where) const {
    if (!o.contains(key))
      return 0;
    const json& v = o.at(key);
    if (!v.is_number() || v.get<double>() < 0)
      Refuse(path, where + key, v.dump() + " is not allowed", "a number >= 0");
    return v.get<double>();
  }
};

// A key the profile format lacks (a typo, a knob at the wrong level) is refused, not ignored.
void CheckKeys(const std::string& path, const json& o, const std::string& where,
               const std::vector<std::string>& known) {
  for (const auto& item : o.items())
    if (std::find(known.begin(), known.end(), item.key()) == known.end())
      Refuse(path, where + item.key(), "is not a key of a profile",
             fmt::format("{}", fmt::join(known, ", ")));
}

const TaskEntry& TaskOf(const Reader& in, const TaskCatalog& catalog, const std::string& name,
                        const std::string& where) {
  std::vector<std::string> names;
  for (const auto& t : catalog) {
    if (t.name == name)
      return t;
    names.push_back(t.name);
  }
  Refuse(in.path, where + "task", "'" + name + "' is unknown",
         fmt::format("{}", fmt::join(names, ", ")));
}

void ReadTune(const Reader& in, const json& tune, const TaskEntry& task, ProfileEntry& e,
              const std::string& where) {
  if (!tune.is_object())
    Refuse(in.path, where + "tune", "not an object", "{\"KNOB\": VALUE, ...}");
  const auto knobs = TunedKnobs(task.spaces, e.variant, e.codePath, e.typeBytes);
  for (const auto& [name, value] : tune.items()) {
    const auto knob = std::find_if(task.knobs.begin(), task.knobs.end(),
                                   [&](const TuningKnob& k) { return k.name == name; });
    if (knob == task.knobs.end() || std::find(knobs.begin(), knobs.end(), name) == knobs.end())
      Refuse(in.path, where + "tune." + name,
             "not a knob of " + e.task + "/" + e.variant + " on the " + e.codePath + " path",
             knobs.empty() ? std::string("none") : fmt::format("{}", fmt::join(knobs, ", ")));
    if (!value.is_number_integer() || value.get<long long>() < 0 ||
        !knob->Allows(value.get<size_t>()))
      Refuse(in.path, where + "tune." + name, value.dump() + " is not allowed",
             knob->AllowedText());
    e.tune[name] = value.get<size_t>();
  }
}

void ReadConfirm(const Reader& in, const json& c, ProfileEntry& e, const std::string& where) {
  if (!c.is_object())
    Refuse(in.path, where.substr(0, where.size() - 1), "not an object",
           "{\"rounds\": N, \"p_value\": P, ...}");
  CheckKeys(in.path, c, where, {"rounds", "p_value", "gain", "default_cv", "verdict"});
  e.confirm.rounds = in.Count(c, "rounds", where, "a whole number");
  e.confirm.pValue = in.Number(c, "p_value", where);
  e.confirm.defaultCv = in.Number(c, "default_cv", where);
  if (c.contains("gain") && !c.at("gain").is_number())
    Refuse(in.path, where + "gain", c.at("gain").dump() + " is not a number", "a number");
  e.confirm.gain = c.value("gain", 0.0);
  e.confirm.verdict = in.Str(c, "verdict", where);
}

ProfileEntry ReadEntry(const Reader& in, const json& o, const TaskCatalog& catalog,
                       const std::string& where) {
  CheckKeys(in.path, o, where,
            {"task", "variant", "code_path", "type_bytes", "size_class", "n", "local_size", "tune",
             "gelem_s", "default_gelem_s", "candidates", "confirm"});
  ProfileEntry e;
  e.task = in.Str(o, "task", where);
  const TaskEntry& task = TaskOf(in, catalog, e.task, where);
  e.variant = in.Str(o, "variant", where);
  if (std::find(task.variants.begin(), task.variants.end(), e.variant) == task.variants.end())
    Refuse(in.path, where + "variant", "'" + e.variant + "' is unknown",
           fmt::format("a variant of {}: {}", e.task, fmt::join(task.variants, ", ")));
  e.codePath = in.Str(o, "code_path", where);
  if (e.codePath != "gpu" && e.codePath != "cpu")
    Refuse(in.path, where + "code_path", "'" + e.codePath + "' is not allowed", "gpu, cpu");
  e.typeBytes = in.Count(o, "type_bytes", where, "4 or 8");
  if (e.typeBytes != 4 && e.typeBytes != 8)
    Refuse(in.path, where + "type_bytes", std::to_string(e.typeBytes) + " is not allowed",
           "4 or 8");
  e.sizeClass = in.Str(o, "size_class", where);
  if (e.sizeClass != "small" && e.sizeClass != "large" && e.sizeClass != "huge")
    Refuse(in.path, where + "size_class", "'" + e.sizeClass + "' is not allowed",
           "small, large, huge");
  const char* powers = "a power of two from 1 to 1048576";
  e.localSize = in.Count(o, "local_size", where, powers);
  if (!IsPowerOfTwo(e.localSize) || e.localSize > (size_t(1) << 20))
    Refuse(in.path, where + "local_size", std::to_string(e.localSize) + " is not allowed", powers);
  ReadTune(in, in.At(o, "tune", where), task, e, where);
  if (o.contains("n"))
    e.n = in.Count(o, "n", where, "an element count");
  e.gelemS = in.Number(o, "gelem_s", where);
  e.defaultGelemS = in.Number(o, "default_gelem_s", where);
  if (o.contains("candidates"))
    e.candidates = in.Count(o, "candidates", where, "a whole number");
  if (o.contains("confirm"))
    ReadConfirm(in, o.at("confirm"), e, where + "confirm.");
  return e;
}

}  // namespace

Profile ReadProfile(const std::string& path, const TaskCatalog& catalog) {
  const std::string text = ReadInput("profile", path, "a readable profile file");
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw UsageError(
        fmt::format("profile '{}': not JSON ({}); allowed: a profile as "
                    "`reduce-scan-bench tune` writes it",
                    path, e.what()));
  }
  const Reader in{path};
  if (!j.is_object())
    Refuse(path, "(document)", "not an object", "a profile as `reduce-scan-bench tune` writes it");
  if (in.Str(j, "schema") != kProfileSchema)
    Refuse(path, "schema", "'" + in.Str(j, "schema") + "' is not allowed", kProfileSchema);
  CheckKeys(path, j, "",
            {"schema", "platform", "device", "driver", "created", "suite", "budget_s", "seed",
             "note", "entries"});
  Profile p;
  p.path = path;
  p.platform = in.Str(j, "platform");
  p.device = in.Str(j, "device");
  p.driver = in.Str(j, "driver");
  p.created = in.Str(j, "created");
  p.suite = j.value("suite", std::string());
  p.budgetS = in.Number(j, "budget_s", "");
  if (j.contains("seed"))
    p.seed = in.Count(j, "seed", "", "a whole number");
  p.note = j.value("note", std::string());
  const json& entries = in.At(j, "entries", "");
  if (!entries.is_array())
    Refuse(path, "entries", "not an array", "[{\"task\": ..., ...}, ...]");
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string where = fmt::format("entries[{}].", i);
    if (!entries[i].is_object())
      Refuse(path, where.substr(0, where.size() - 1), "not an object", "{\"task\": ..., ...}");
    p.entries.push_back(ReadEntry(in, entries[i], catalog, where));
  }
  return p;
}

void WriteProfile(const std::string& path, const Profile& p) {
  json entries = json::array();
  for (const auto& e : p.entries) {
    entries.push_back({{"task", e.task},
                       {"variant", e.variant},
                       {"code_path", e.codePath},
                       {"type_bytes", e.typeBytes},
                       {"size_class", e.sizeClass},
                       {"n", e.n},
                       {"local_size", e.localSize},
                       {"tune", e.tune},
                       {"gelem_s", e.gelemS},
                       {"default_gelem_s", e.defaultGelemS},
                       {"candidates", e.candidates}});
    if (e.confirm.rounds > 0)
      entries.back()["confirm"] = {{"rounds", e.confirm.rounds},
                                   {"p_value", e.confirm.pValue},
                                   {"gain", e.confirm.gain},
                                   {"default_cv", e.confirm.defaultCv},
                                   {"verdict", e.confirm.verdict}};
  }
  const json j = {{"schema", kProfileSchema}, {"platform", p.platform}, {"device", p.device},
                  {"driver", p.driver},       {"created", p.created},   {"suite", p.suite},
                  {"budget_s", p.budgetS},    {"seed", p.seed},         {"note", p.note},
                  {"entries", entries}};
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path())  // the cache folder, made now (an --output's was checked)
    fs::create_directories(target.parent_path(), ec);
  WriteWhole("profile", path, j.dump(2) + "\n");
}

namespace {

// A profile file's platform, device and driver, read loosely (nullopt: not a profile); only the
// profile a run takes is checked in full (ReadProfile).
struct ProfileKey {
  std::string path, platform, device, driver, created;
};
// A file there that is not JSON is refused naming it, not passed over: the run would otherwise
// use another profile than the one the user made, without a word.
std::optional<ProfileKey> PeekProfile(const fs::path& path) {
  const json j = json::parse(ReadInput("profile", path.string(), "a readable profile file"),
                             nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    throw UsageError(fmt::format(
        "profile '{}': not JSON; allowed: a profile as `reduce-scan-bench tune` writes it "
        "(remove the file, or run tune again)",
        path.string()));
  if (!j.is_object() || j.value("schema", "") != kProfileSchema)
    return std::nullopt;
  return ProfileKey{path.string(), j.value("platform", ""), j.value("device", ""),
                    j.value("driver", ""), j.value("created", "")};
}

// The profiles in a folder made for this device (any driver), the newest first.
std::vector<ProfileKey> ProfilesFor(const std::string& dir, const DeviceInfo& device) {
  std::vector<ProfileKey> found;
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec))
    return found;
  for (const auto& f : fs::directory_iterator(dir, ec))
    // A dot-file is another run's temporary file (Files.h), not a profile.
    if (f.path().extension() == ".json" && f.path().filename().string().front() != '.')
      if (const auto key = PeekProfile(f.path()))
        if (key->platform == device.platform && key->device == device.name)
          found.push_back(*key);
  std::sort(found.begin(), found.end(), [](const ProfileKey& a, const ProfileKey& b) {
    return a.created != b.created ? a.created > b.created : a.path < b.path;
  });
  return found;
}

std::string Caveat(const Profile& p, const DeviceInfo& device) {
  if (p.platform != device.platform || p.device != device.name)
    return fmt::format("made for {} ({}), not this device", p.device, p.platform);
  if (p.driver != device.driverVersion)
    return fmt::format("made with driver {}, this device's is {}", p.driver, device.driverVersion);
  return {};
}

}  // namespace

std::optional<Profile> RunProfile(const Options& o, const TaskCatalog& catalog,
                                  const DeviceInfo& device) {
  if (o.noProfile)
    return std::nullopt;
  std::optional<Profile> p;
  if (!o.profile.empty()) {
    ReadInput("--profile", o.profile, "a profile as `reduce-scan-bench tune` writes it");
    p = ReadProfile(o.profile, catalog);
  } else {
    // The user's own first (this driver's, else another's), then the shipped ones.
    for (const auto& dir : {UserProfileDir(), ShippedProfileDir()}) {
      std::vector<ProfileKey> keys = ProfilesFor(dir, device);
      std::stable_partition(keys.begin(), keys.end(),
                            [&](const ProfileKey& k) { return k.driver == device.driverVersion; });
      if (!keys.empty()) {
        p = ReadProfile(keys.front().path, catalog);
        break;
      }
    }
  }
  if (p)
    p->caveat = Caveat(*p, device);
  return p;
}

std::string ProfileLine(const std::optional<Profile>& profile, const Options& o) {
  if (o.noProfile)
    return "settings: --no-profile: each variant's defaults (and --tune, --local-size)";
  if (!profile)
    return "settings: no tuning profile for this device, each variant's defaults "
           "(`reduce-scan-bench "
           "tune` makes one)";
  return fmt::format("settings: tuning profile {} (created {}, {} entries){}", profile->path,
                     profile->created, profile->entries.size(),
                     profile->caveat.empty() ? "" : "; note: " + profile->caveat);
}

void ApplyProfile(Job& job, const Profile* profile, const DeviceInfo& device, bool localSizeGiven) {
  const std::string task = job.task->Name();
  const std::vector<TunedSpace> spaces = job.task->TunedSpaces();
  for (const auto& v : job.variants) {
    ProblemSpec spec = job.SpecFor(v);
    const std::string path = job.task->CodePathOf(device, spec);
    const size_t bytes = SizeOf(spec.type);
    bool command = localSizeGiven && spec.localSize != 0;
    for (const auto& knob : spec.tuning)
      command = command || Touches(spaces, v, path, bytes, knob.first);
    const ProfileEntry* e =
        profile ? profile->Find(task, v, path, bytes, SizeClassOf(spec.n)) : nullptr;
    // An entry is one point of the search: taken whole, at its own local size.
    if (e && (spec.localSize == 0 || spec.localSize == e->localSize) &&
        e->localSize <= device.maxWorkGroupSize) {
      bool used = spec.localSize == 0;
      spec.localSize = e->localSize;
      for (const auto& [knob, value] : e->tune)
        used = spec.tuning.emplace(knob, value).second || used;
      if (used)
        spec.settings = {"profile", profile->path, profile->created, profile->caveat};
    }
    if (command)
      spec.settings.source = "command line";
    job.variantSpecs[v] = spec;
  }
}

}  // namespace rsb
