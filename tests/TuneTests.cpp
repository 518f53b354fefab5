// `reduce-scan-bench tune` and tuning profiles (src/tools/Tune.h, src/run/Profile.h): a tune with a
// tiny budget writes a profile that the next run loads and records; a bad profile is refused with
// its file and key; --tune, --local-size and --no-profile win as documented; the shipped profiles
// never change a result. Runs the real executable on the test device, with a cache folder of its
// own (XDG_CACHE_HOME) and RSB_NO_PROFILE cleared (TestSupport sets it for the other suites).
#include "TestSupport.h"
#include "run/Profile.h"
#include "tasks/CReductionTask.h"
#include "tasks/Tasks.h"
#include "tools/Tune.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

#ifndef RSB_SOURCE_DIR
#define RSB_SOURCE_DIR ""
#endif

namespace rsb::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A cache folder of the test's own, removed at the end.
class CacheHome {
 public:
  explicit CacheHome(const std::string& name)
      : dir_(fs::temp_directory_path() / fmt::format("rsb-tune-{}-{}", name, ::getpid())) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~CacheHome() { fs::remove_all(dir_); }
  std::string Path() const { return dir_.string(); }
  std::string Profiles() const { return (dir_ / "reduce-scan-bench" / "profiles").string(); }

 private:
  fs::path dir_;
};

std::string Selectors() {
  std::string s;
  if (const char* p = std::getenv("RSB_TEST_PLATFORM"); p && *p)
    s += fmt::format(" --platform '{}'", p);
  if (const char* d = std::getenv("RSB_TEST_DEVICE"); d && *d)
    s += fmt::format(" --device '{}'", d);
  return s;
}

// The binary with profiles on (RSB_NO_PROFILE cleared) and this cache folder; pocl keeps its
// kernel cache where it was (POCL_CACHE_DIR), so that nothing is compiled again.
CommandResult Bench(const CacheHome& home, const std::string& args) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* homeDir = std::getenv("HOME");
  const std::string pocl =
      std::getenv("POCL_CACHE_DIR")
          ? std::getenv("POCL_CACHE_DIR")
          : fmt::format("{}/pocl/kcache",
                        xdg && *xdg ? xdg : fmt::format("{}/.cache", homeDir ? homeDir : "/tmp"));
  return RunCommand(fmt::format("RSB_NO_PROFILE= XDG_CACHE_HOME='{}' POCL_CACHE_DIR='{}' '{}' {}{}",
                                home.Path(), pocl, RSB_BINARY, args, Selectors()));
}

TaskCatalog Catalog() {
  return CatalogOf(MakeTasks());
}

std::string CodePath() {
  ProblemSpec spec;
  return CReductionTask().CodePathOf(Device().info, spec);
}

// A profile for the test device by hand: reduction/single-pass, 4-byte, small, at local size 2,
// every knob at its default but the unroll at `unroll`.
json HandProfile(size_t unroll) {
  const DeviceInfo& d = Device().info;
  json tune = json::object();
  const auto knobs = CReductionTask().Tunables();
  for (const auto& name : TunedKnobs(CReductionTask().TunedSpaces(), "single-pass", CodePath(), 4))
    for (const auto& k : knobs)
      if (k.name == name)
        tune[name] = name.find("unroll") != std::string::npos ? unroll : k.value;
  return {{"schema", kProfileSchema},
          {"platform", d.platform},
          {"device", d.name},
          {"driver", d.driverVersion},
          {"created", "2026-11-24T00:00:00Z"},
          {"entries",
           {{{"task", "reduction"},
             {"variant", "single-pass"},
             {"code_path", CodePath()},
             {"type_bytes", 4},
             {"size_class", "small"},
             {"local_size", 2},
             {"tune", tune}}}}};
}

void Write(const std::string& path, const json& j) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << j.dump(2);
}

json OnlyResult(const CommandResult& r) {
  EXPECT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out, nullptr, false);
  EXPECT_TRUE(j.is_object() && j["results"].size() == 1) << r.out << r.err;
  return j.is_object() && j["results"].size() == 1 ? j["results"][0] : json::object();
}

// Every knob `tune` searches is a knob of its task (a renamed knob would be searched as nothing).
TEST(Tune, EveryTunedKnobIsAKnobOfItsTask) {
  size_t tuned = 0;
  for (const auto& t : MakeTasks())
    for (const auto& v : t->Variants())
      for (const char* path : {"gpu", "cpu"})
        for (size_t bytes : {4, 8})
          for (const auto& name : TunedKnobs(t->TunedSpaces(), v, path, bytes)) {
            ++tuned;
            const auto knobs = t->Tunables();
            EXPECT_TRUE(std::any_of(knobs.begin(), knobs.end(),
                                    [&](const TuningKnob& k) { return k.name == name; }))
                << t->Name() << "/" << v << " " << path << " " << bytes << ": " << name;
          }
  EXPECT_GT(tuned, 0u);
}

// tune with a tiny budget writes the device's profile in the cache folder; the next run (in
// process and in worker processes) loads it, runs its entry's settings and records the profile.
// Sizes map to the classes `tune` times (2^16, 2^24, 2^28); a size of the huge class takes the
// variant's large entry where the profile has no huge one (a CPU device's profile has none).
TEST(Tune, SizeClassesAndTheHugeClassFallsBackToLarge) {
  EXPECT_EQ(SizeClassOf(1), "small");
  EXPECT_EQ(SizeClassOf((size_t(1) << 20) - 1), "small");
  EXPECT_EQ(SizeClassOf(size_t(1) << 20), "large");
  EXPECT_EQ(SizeClassOf((size_t(1) << 26) - 1), "large");
  EXPECT_EQ(SizeClassOf(size_t(1) << 26), "huge");
  EXPECT_EQ(SizeClassOf(size_t(8192) * 8192), "huge");
  Profile p;
  ProfileEntry large{"scan", "single-pass", "gpu", 4, "large", 256, {}, kLargeClassN};
  p.entries.push_back(large);
  const ProfileEntry* e = p.Find("scan", "single-pass", "gpu", 4, "huge");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->sizeClass, "large");
  ProfileEntry huge = large;
  huge.sizeClass = "huge";
  huge.localSize = 128;
  p.entries.push_back(huge);
  e = p.Find("scan", "single-pass", "gpu", 4, "huge");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->localSize, 128u);
  EXPECT_EQ(p.Find("scan", "single-pass", "gpu", 4, "small"), nullptr);
}

TEST(Tune, TinyBudgetWritesAProfileTheNextRunLoadsAndRecords) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  const CacheHome home("write");
  const CommandResult t = Bench(home,
                                "tune --budget 1 --candidate-time 0.05 --variant "
                                "reduction/single-pass --size-class small --type-bytes 4");
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("reduction/single-pass"), std::string::npos) << t.out;
  EXPECT_NE(t.err.find("budget 1 s"), std::string::npos) << t.err;
  const std::string path = home.Profiles() + "/" + ProfileSlug(Device().info) + ".json";
  ASSERT_TRUE(fs::exists(path)) << t.err;
  EXPECT_NE(t.err.find(fmt::format("written to {}; the next run on this device loads it", path)),
            std::string::npos)
      << t.err;
  const Profile p = ReadProfile(path, Catalog());
  ASSERT_EQ(p.entries.size(), 1u);
  const ProfileEntry& e = p.entries[0];
  EXPECT_EQ(e.sizeClass, "small");
  EXPECT_EQ(e.typeBytes, 4u);
  EXPECT_EQ(p.device, Device().info.name);
  for (const char* isolate : {"--no-isolate", "--isolate"}) {
    const json r = OnlyResult(
        Bench(home, std::string("--check -q --task reduction --variant single-pass --size 1000 "
                                "--format json ") +
                        isolate));
    EXPECT_EQ(r["status"], "passed") << r["message"];
    EXPECT_EQ(r["settings"]["source"], "profile") << isolate;
    EXPECT_EQ(r["settings"]["profile"], path);
    EXPECT_EQ(r["settings"]["profile_date"], p.created);
    EXPECT_EQ(r["local_size"], e.localSize);
    for (const auto& [knob, value] : e.tune)
      EXPECT_EQ(r["tuning"][knob], value) << knob;
  }
  // A large case has no entry: the variant's defaults.
  const json large = OnlyResult(
      Bench(home, "--check -q --task reduction --variant single-pass --size 2^20 --format json"));
  EXPECT_EQ(large["settings"]["source"], "default");
  const CommandResult csv =
      Bench(home, "--check -q --task reduction --variant single-pass --size 1000 --format csv");
  EXPECT_NE(csv.out.find("settings_source,settings_profile,settings_profile_date,kernel_options"),
            std::string::npos)
      << csv.out;
  EXPECT_NE(csv.out.find(fmt::format(",\"profile\",\"{}\",\"{}\",", path, p.created)),
            std::string::npos)
      << csv.out;
}

// The confirmation's verdict from its rounds: the best is kept only where the U test finds it
// (p < 0.05) and its median beats the defaults' by more than the margin; a lead of the medians
// alone, a significant gain below the margin, a slower best or a round that failed keep the
// defaults; the defaults' own spread beyond the margin is too noisy to tune.
TEST(Tune, ConfirmationKeepsOnlyASignificantGainBeyondTheMargin) {
  const std::vector<double> deflt = {1.00, 1.01, 1.02, 1.03, 1.04};
  const Confirmation same = Judge(deflt, deflt);
  EXPECT_FALSE(same.kept);
  EXPECT_GE(same.p, kConfirmAlpha);
  EXPECT_EQ(same.Verdict(), "not significant, kept default");
  const Confirmation faster = Judge({1.10, 1.11, 1.12, 1.13, 1.14}, deflt);
  EXPECT_TRUE(faster.kept);
  EXPECT_NEAR(faster.p, 2.0 / 252, 1e-9);  // every round apart: the exact test's smallest
  EXPECT_NEAR(faster.gain, 1.12 / 1.02 - 1, 1e-9);
  EXPECT_EQ(faster.Verdict(), "kept");
  // Its median 5% ahead, its rounds mixed with the defaults': not significant.
  const Confirmation mixed =
      Judge({1.071, 0.991, 1.072, 1.003, 1.074}, {1.02, 1.011, 0.981, 1.021, 0.995});
  EXPECT_GT(mixed.gain, kTuneMargin);
  EXPECT_GE(mixed.p, kConfirmAlpha);
  EXPECT_FALSE(mixed.kept);
  EXPECT_EQ(mixed.Verdict(), "not significant, kept default");
  const Confirmation small = Judge({1.041, 1.042, 1.043, 1.044, 1.045}, deflt);
  EXPECT_LT(small.p, kConfirmAlpha);
  EXPECT_FALSE(small.kept);
  EXPECT_EQ(small.Verdict(), "below the 3% margin, kept default");
  EXPECT_EQ(Judge({0.90, 0.91, 0.92, 0.93, 0.94}, deflt).Verdict(), "slower, kept default");
  EXPECT_EQ(Judge({1.10, 1.11, 0, 1.13, 1.14}, deflt).Verdict(),
            "failed on a second look, kept default");
  EXPECT_FALSE(faster.Noisy());  // the defaults' CV: 1.6%
  const Confirmation noisy = Judge({1.10, 1.11, 1.12, 1.13, 1.14}, {1.0, 1.2, 0.8, 1.1, 0.9});
  EXPECT_NEAR(noisy.defaultCv, std::sqrt(0.1 / 4), 1e-9);
  EXPECT_TRUE(noisy.Noisy());
}

// The search's best confirmed on the device (here --try's point, a local size the default is
// not, with no search): both timed in turn, 5 rounds each, recorded in the profile with the p
// of their rounds and its verdict, which keeps the point only where the rounds found it faster.
// tune -o FILE says which profile the next run loads (here the one in the cache folder, not
// FILE) and how to load FILE.
TEST(Tune, TheBestIsConfirmedInRoundsAndTheNextRunsProfileIsNamed) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  const CacheHome home("confirm");
  const std::string mine = home.Profiles() + "/mine.json", file = home.Path() + "/p.json";
  Write(mine, HandProfile(2));
  ProblemSpec spec;
  spec.n = kSmallClassN;
  const size_t local = CReductionTask().LocalSize("single-pass", spec, Device().info);
  const size_t other = local > 1 ? local / 2 : 2;
  const CommandResult t = Bench(
      home, fmt::format("tune --budget 1 --candidate-time 0.02 --variant reduction/single-pass "
                        "--size-class small --type-bytes 4 --try local-size={} -o '{}'",
                        other, file));
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.err.find("confirming L=" + std::to_string(other)), std::string::npos) << t.err;
  EXPECT_EQ(CountOf(t.err, "      again "), 10u) << t.err;
  EXPECT_NE(t.out.find(" 5+5 "), std::string::npos) << t.out;
  const Profile p = ReadProfile(file, Catalog());
  ASSERT_EQ(p.entries.size(), 1u);
  const ProfileEntry& e = p.entries[0];
  EXPECT_EQ(e.confirm.rounds, 5u);
  EXPECT_GE(e.confirm.pValue, 0.0);
  EXPECT_LE(e.confirm.pValue, 1.0);
  EXPECT_NE(t.out.find(fmt::format(" {:.3f}  {}", e.confirm.pValue, e.confirm.verdict)),
            std::string::npos)
      << t.out;
  if (e.confirm.verdict == "kept") {
    EXPECT_LT(e.confirm.pValue, kConfirmAlpha);
    EXPECT_GT(e.confirm.gain, kTuneMargin);
    EXPECT_EQ(e.localSize, other);
  } else {
    EXPECT_EQ(e.localSize, local) << e.confirm.verdict;
    EXPECT_NE(e.confirm.verdict.find("kept default"), std::string::npos) << e.confirm.verdict;
  }
  EXPECT_NE(t.err.find(fmt::format("the next run on this device loads {} (the newest for this "
                                   "device in the cache folder), not this file; --profile '{}' "
                                   "makes a run load it",
                                   mine, file)),
            std::string::npos)
      << t.err;
}

// What tiled-2d's search walks, in order: the local size, then the tile's width (powers of two
// times its default of 16 up to 64), then its rows (every value from 1 to 16: a knob of at most
// 16 values takes each, the H200's best being 10).
TEST(Tune, Tiled2DSearchesItsWidthThenEveryRowCount) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  const CacheHome home("tiled-2d");
  fs::create_directories(home.Profiles());  // tune -o makes no folder (a run's -o neither)
  const CommandResult t = Bench(home,
                                "tune --budget 1 --candidate-time 0.02 --variant tiled-2d "
                                "--size-class small --type-bytes 4 -o " +
                                    home.Profiles() + "/t.json");
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.err.find("convolution-across (7 values), convolution-rows (16 values)"),
            std::string::npos)
      << t.err;
}

// --tune and --local-size win over the profile (their source: command line), --no-profile
// ignores it, --profile names one.
TEST(Tune, CommandLineAndNoProfileWinOverTheProfile) {
  const CacheHome home("wins");
  Write(home.Profiles() + "/mine.json", HandProfile(2));
  const std::string run =
      "--check -q --task reduction --variant single-pass --size 1000 --format json ";
  const json own = OnlyResult(Bench(home, run));
  EXPECT_EQ(own["settings"]["source"], "profile");
  EXPECT_EQ(own["local_size"], 2);
  const std::string unroll = CodePath() == "gpu" ? "reduction-gpu-unroll" : "reduction-cpu-unroll";
  EXPECT_EQ(own["tuning"][unroll], 2);
  const json tuned = OnlyResult(Bench(home, run + "--tune " + unroll + "=8"));
  EXPECT_EQ(tuned["settings"]["source"], "command line");
  EXPECT_EQ(tuned["settings"]["profile"], home.Profiles() + "/mine.json");
  EXPECT_EQ(tuned["tuning"][unroll], 8);
  EXPECT_EQ(tuned["local_size"], 2);  // the rest from the profile
  const json local = OnlyResult(Bench(home, run + "--local-size 8"));
  EXPECT_EQ(local["settings"]["source"], "command line");
  EXPECT_FALSE(local["settings"].contains("profile"));  // the entry is for local size 2
  EXPECT_EQ(local["local_size"], 8);
  const json none = OnlyResult(Bench(home, run + "--no-profile"));
  EXPECT_EQ(none["settings"]["source"], "default");
  EXPECT_EQ(none["local_size"],
            CReductionTask().LocalSize("single-pass", ProblemSpec(), Device().info));
  // --profile: that file, whatever the cache folder holds.
  CacheHome empty("wins-empty");
  const json named = OnlyResult(Bench(empty, run + "--profile " + home.Profiles() + "/mine.json"));
  EXPECT_EQ(named["settings"]["source"], "profile");
  const CommandResult both = Bench(empty, run + "--profile x.json --no-profile");
  EXPECT_EQ(both.status, 2) << both.err;
}

// A profile for another driver version is used, with a note on stderr and in each result.
TEST(Tune, ProfileOfAnotherDriverIsUsedWithANote) {
  const CacheHome home("driver");
  json p = HandProfile(2);
  p["driver"] = "0.0-older";
  Write(home.Profiles() + "/old.json", p);
  const CommandResult r =
      Bench(home, "--check --task reduction --variant single-pass --size 1000 --format json");
  const json res = OnlyResult(r);
  EXPECT_EQ(res["settings"]["source"], "profile");
  EXPECT_NE(res["settings"]["note"].get<std::string>().find("made with driver 0.0-older"),
            std::string::npos)
      << res["settings"];
  EXPECT_NE(r.err.find("note: made with driver 0.0-older"), std::string::npos) << r.err;
}

// A profile with an out-of-range value, an unknown knob or a bad local size is refused before
// anything runs: exit 2, one line naming the file, the key and what is allowed.
TEST(Tune, BadProfileIsRefusedWithItsFileAndKey) {
  const CacheHome home("bad");
  struct Case {
    std::string key;
    json value;
    std::string said;
    bool found = true;  // found in the cache folder too (a file of another schema is not)
  };
  const std::string knob =
      TunedKnobs(CReductionTask().TunedSpaces(), "single-pass", CodePath(), 4).front();
  const std::vector<Case> cases = {
      {"/entries/0/tune/" + knob, 0, "entries[0].tune." + knob + ": 0 is not allowed; allowed: "},
      {"/entries/0/tune/no-such-knob", 4,
       "entries[0].tune.no-such-knob: not a knob of reduction/single-pass"},
      {"/entries/0/local_size", 3,
       "entries[0].local_size: 3 is not allowed; allowed: a power of two"},
      {"/entries/0/size_class", "medium", "entries[0].size_class: 'medium' is not allowed"},
      {"/bogus", 1, "bogus: is not a key of a profile; allowed: schema, "},
      {"/entries/0/locl_size", 2, "entries[0].locl_size: is not a key of a profile"},
      {"/schema", "other/1",
       "schema: 'other/1' is not allowed; allowed: " + std::string(kProfileSchema), false},
  };
  for (const auto& c : cases) {
    json p = HandProfile(2);
    p[json::json_pointer(c.key)] = c.value;
    const std::string file = home.Profiles() + "/bad.json";
    Write(file, p);
    // Found in the cache folder (it is this device's) and named with --profile.
    for (const std::string& how : {std::string(), "--profile " + file}) {
      if (how.empty() && !c.found)
        continue;
      const CommandResult r =
          Bench(home, "--check -q --task reduction --variant single-pass --size 100 " + how);
      EXPECT_EQ(r.status, 2) << c.key << " " << how << "\n" << r.err;
      EXPECT_NE(r.err.find(fmt::format("error: profile '{}': {}", file, c.said)), std::string::npos)
          << r.err;
      EXPECT_EQ(r.out, "");
    }
  }
}

// A file in the cache folder that is not JSON is refused naming it (exit 2): it was passed over
// without a word and the shipped profile used instead.
TEST(Tune, ProfileInTheCacheThatIsNotJsonIsRefusedNamingIt) {
  const CacheHome home("broken");
  const std::string file = home.Profiles() + "/broken.json";
  fs::create_directories(home.Profiles());
  std::ofstream(file) << "{\"schema\": \"reduce-scan-bench-profile/1\", \"entries\": [";
  const CommandResult r =
      Bench(home, "--check -q --task reduction --variant single-pass --size 100");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(fmt::format("error: profile '{}': not JSON", file)), std::string::npos)
      << r.err;
}

// Ctrl-C during a group's search (here once the default and a candidate are timed) writes no
// winner that was not timed again beside the default: the earlier profile is left byte for byte.
TEST(Tune, InterruptWritesNoUnconfirmedWinner) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  const CacheHome home("interrupt");
  const std::string file = home.Path() + "/p.json", err = home.Path() + "/err";
  Write(file, HandProfile(2));
  const std::string before = ReadFile(file);
  const CommandResult r = RunCommand(fmt::format(
      "RSB_NO_PROFILE= XDG_CACHE_HOME='{}' '{}' tune --budget 120 --variant "
      "reduction/single-pass --size-class small --type-bytes 4 -o '{}'{} 2>'{}' & pid=$!; i=0; "
      "n=0; while [ \"$n\" -lt 2 ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); "
      "n=$(grep -c Gelem/s '{}' 2>/dev/null || true); n=${{n:-0}}; done; kill -INT $pid; "
      "wait $pid; echo $?",
      home.Path(), RSB_BINARY, file, Selectors(), err, err));
  EXPECT_EQ(r.out, "130\n") << ReadFile(err);
  EXPECT_NE(ReadFile(err).find("not tuned: interrupted before its best was confirmed"),
            std::string::npos)
      << ReadFile(err);
  EXPECT_EQ(ReadFile(file), before) << ReadFile(err);
}

// Runs `script` (bash, job control on: a background job has a process group of its own, as a
// terminal's job, with SIGINT at its default) and returns what it prints.
std::string RunScript(const CacheHome& home, const std::string& script) {
  const std::string file = home.Path() + "/script.sh";
  std::ofstream(file) << "set -m\n" << script;
  return RunCommand("bash '" + file + "'").out;
}

// Ctrl-C reaches a terminal's whole foreground process group: also the linker pocl starts for each
// kernel. SIGINT to tune's group while it links: the linker must finish (pocl aborted the
// process when it died: exit 134), and tune ends with 130.
TEST(Tune, CtrlCDuringTheDriversLinkExits130) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  if (Device().info.platform.find("Portable Computing Language") == std::string::npos)
    GTEST_SKIP() << "pocl's linker (ld on PATH) only";
  const CacheHome home("ctrl-c-link");
  const std::string err = home.Path() + "/err";
  const std::string status = InterruptDuringLink(
      home.Path(),
      fmt::format("POCL_CACHE_DIR='{0}/pocl' RSB_NO_PROFILE= XDG_CACHE_HOME='{0}' '{1}' tune "
                  "--budget 60 --variant reduction/single-pass --size-class small --type-bytes 4 "
                  "-o '{0}/p.json'{2} 2>'{3}'",
                  home.Path(), RSB_BINARY, Selectors(), err));
  if (status == "no-link" || status == "no-ld")
    GTEST_SKIP() << status << ": this pocl starts no ld, or there is none";
  EXPECT_EQ(status, "130") << ReadFile(err);
  EXPECT_FALSE(fs::exists(home.Path() + "/p.json")) << ReadFile(err);
}

// Each group's entry is in the profile once its "written:" line is said: a tune ended then by
// anything (SIGKILL here, while it searches the next groups) leaves the groups it reported.
TEST(Tune, EachGroupIsInTheProfileWhenItIsSaidWritten) {
  RSB_SKIP_IF(Lacks(Need::UsableTimer));
  const CacheHome home("written");
  const std::string err = home.Path() + "/err", file = home.Path() + "/p.json";
  const std::string out = RunScript(
      home, fmt::format("RSB_NO_PROFILE= XDG_CACHE_HOME='{0}' '{1}' tune --budget 120 --variant "
                        "reduction/single-pass --size-class small,large --type-bytes 4,8 -o "
                        "'{2}'{3} 2>'{4}' & pid=$!\n"
                        "i=0; while ! grep -q 'written:' '{4}' && [ $i -lt 2400 ]; do sleep 0.05; "
                        "i=$((i+1)); done\n"
                        "kill -0 $pid 2>/dev/null && kill -KILL -$pid && echo killed; wait $pid\n",
                        home.Path(), RSB_BINARY, file, Selectors(), err));
  const std::string said = ReadFile(err);
  ASSERT_NE(said.find("written:"), std::string::npos) << said;
  ASSERT_EQ(out, "killed\n") << "tune ended before its other groups were searched\n" << said;
  size_t written = 0;
  for (size_t at = said.find("written:"); at != std::string::npos;
       at = said.find("written:", at + 1))
    ++written;
  ASSERT_TRUE(fs::exists(file)) << said;
  const json p = json::parse(ReadFile(file));
  EXPECT_EQ(p["entries"].size(), written) << p.dump() << "\n" << said;
}

// tune's own usage errors: exit 2, one line, before anything runs.
TEST(Tune, UsageErrors) {
  const CacheHome home("usage");
  for (const auto& [args, said] : std::vector<std::pair<std::string, std::string>>{
           {"tune --variant interleaved", "--variant 'interleaved': not a tunable variant"},
           {"tune --budget 0", "--budget"},
           {"tune --type-bytes 2", "--type-bytes"},
           {"tune --size-class medium", "--size-class"},
           {"tune --rounds 4", "--rounds"},
           {"tune --try local-size=3", "'local-size=3': not allowed"},
           {"tune --try no-such-knob=1", "'no-such-knob=1': unknown knob"},
           {"tune --variant reduction/single-pass --try convolution-rows=2",
            "--try 'convolution-rows=2': no variant selected searches convolution-rows"},
           {"tune --output " + home.Path(), "--output '" + home.Path() + "': is a folder"}}) {
    const CommandResult r = Bench(home, args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(said), std::string::npos) << args << "\n" << r.err;
  }
  EXPECT_FALSE(fs::exists(home.Profiles()));
  // A folder that cannot be written: said before the search (exit 3), nothing written.
  const CommandResult r = Bench(home, "tune --budget 1 --output /proc/no-such/profile.json");
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("--output '/proc/no-such/profile.json': cannot write there"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("Gelem/s"), std::string::npos) << r.err;
  // A missing folder is refused as a run's -o is, and not made (tune made it, then refused it).
  for (const std::string& out : {home.Path() + "/missing/", home.Path() + "/newdir/x.json"}) {
    const CommandResult m = Bench(home, "tune --budget 1 --output " + out);
    EXPECT_EQ(m.status, 3) << out << "\n" << m.err;
    EXPECT_NE(m.err.find("--output '" + out + "': cannot write there"), std::string::npos) << m.err;
  }
  EXPECT_FALSE(fs::exists(home.Path() + "/missing"));
  EXPECT_FALSE(fs::exists(home.Path() + "/newdir"));
}

// A profile changes only the time: the shipped profiles (for every device we measured: forced
// onto this one with --profile and, for the GPU ones, the GPU code path) pass validation on every
// case their entries apply to, of both size classes and type widths.
TEST(Tune, ShippedProfilesNeverChangeAResult) {
  const fs::path dir = fs::path(RSB_SOURCE_DIR) / "profiles";
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  const CacheHome home("shipped");
  size_t profiles = 0;
  for (const auto& f : fs::directory_iterator(dir)) {
    if (f.path().extension() != ".json")
      continue;
    ++profiles;
    const Profile p = ReadProfile(f.path().string(), Catalog());  // throws where refused
    std::set<std::string> paths;
    for (const auto& e : p.entries)
      paths.insert(e.codePath);
    for (const auto& path : paths) {
      const std::string types = Device().info.fp64 ? "uint,ulong,float,double" : "uint,ulong,float";
      const CommandResult r = Bench(
          home, fmt::format("--check -q --profile '{}' --code-path {} --format json --variant "
                            "single-pass,tiled-1d,cached-1d,tiled-2d --type {} --size "
                            "5,1000,4097,65537,2^20+1,33x31,1024x1025",
                            f.path().string(), path, types));
      ASSERT_EQ(r.status, 0) << f.path() << "\n" << r.err;
      size_t fromProfile = 0;
      const json doc = json::parse(r.out);
      for (const auto& res : doc["results"]) {
        EXPECT_TRUE(res["status"] == "passed" || res["status"] == "skipped")
            << res["task"] << "/" << res["variant"] << " " << res["n"] << ": " << res["message"];
        fromProfile += res["settings"]["source"] == "profile";
      }
      EXPECT_GT(fromProfile, 0u) << f.path() << " " << path;
    }
  }
  EXPECT_GT(profiles, 0u);
}

}  // namespace
}  // namespace rsb::test
