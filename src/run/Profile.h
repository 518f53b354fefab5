// Tuning profiles: the best local size and --tune values of each tunable variant on one device,
// as `reduce-scan-bench tune` (src/tools/Tune.h) found them, per (task, variant, code path, type
// width, size class). A profile is keyed by platform, device name and driver version and lives in
// the user's cache folder ($XDG_CACHE_HOME/reduce-scan-bench/profiles/<slug>.json, else
// ~/.cache/...); the profiles shipped in the tree (profiles/, installed beside the kernels) are
// used where the user has none. Every run loads its device's profile (unless --no-profile; or
// the one --profile names), and each case records where its settings came from
// (SettingsSource). A profile only ever changes how fast a case runs, never its result.
#pragma once

#include "cli/Cli.h"
#include "engine/Runner.h"
#include "platform/CLUtil.h"

#include <optional>
#include <string>
#include <vector>

namespace rsb {

constexpr const char* kProfileSchema = "reduce-scan-bench-profile/1";

struct ProfileEntry {
  std::string task, variant;
  std::string codePath;   // "gpu" or "cpu": the kernel shape it was tuned for
  size_t typeBytes = 4;   // 4 or 8
  std::string sizeClass;  // "small", "large" or "huge" (SizeClassOf)
  size_t localSize = 0;
  std::map<std::string, size_t> tune;  // the variant's knobs (TunedKnobs), every one
  size_t n = 0;                        // the size it was timed at
  double gelemS = 0, defaultGelemS = 0;
  size_t candidates = 0;  // points timed (the default among them)
  // `tune`'s confirmation of the search's best against the defaults (tools/Tune.h): rounds a
  // side (0: none, the defaults were the search's best), the U test's p, the gain of the medians,
  // the defaults' coefficient of variation, and what it decided.
  struct Confirmed {
    size_t rounds = 0;
    double pValue = 1, gain = 0, defaultCv = 0;
    std::string verdict;
  } confirm{};
};

struct Profile {
  std::string path;  // the file it was read from (empty: not read)
  std::string platform, device, driver;
  std::string created;  // ISO 8601, UTC
  std::string suite;    // the suite's version that made it
  double budgetS = 0;
  uint64_t seed = 1;
  std::string note;  // what its maker says of it (free text)
  // Why a run takes it with a caveat (made with another driver version, or for another device);
  // empty: made for this device and driver. Not stored.
  std::string caveat;
  std::vector<ProfileEntry> entries;
  const ProfileEntry* Find(const std::string& task, const std::string& variant,
                           const std::string& codePath, size_t typeBytes,
                           const std::string& sizeClass) const;
};

// Below 2^20 elements "small", below 2^26 "large", else "huge"; the sizes `tune` times each class
// at (2^16, 2^24, 2^28: a knob that wins at 2^24 can lose at 2^28, where a GPU's memory limits).
// A profile without a "huge" entry for a variant gives its "large" one there (Profile::Find).
std::string SizeClassOf(size_t n);
constexpr size_t kSmallClassN = size_t(1) << 16, kLargeClassN = size_t(1) << 24,
                 kHugeClassN = size_t(1) << 28;

// The knobs `tune` searches for a variant on a code path at a type width (besides the local
// size), from its task's TunedSpaces(); empty: the variant has none (it is not tuned).
std::vector<std::string> TunedKnobs(const std::vector<TunedSpace>& spaces,
                                    const std::string& variant, const std::string& codePath,
                                    size_t typeBytes);

// "portable-computing-language-cpu-haswell-...-6-0": platform, device and driver, lower case,
// every run of other characters one '-'.
std::string ProfileSlug(const DeviceInfo& device);
// $XDG_CACHE_HOME/reduce-scan-bench/profiles (an absolute XDG_CACHE_HOME), else
// $HOME/.cache/reduce-scan-bench/profiles; empty when neither is set.
std::string UserProfileDir();
// The profiles shipped with the suite: <prefix>/share/reduce-scan-bench/profiles where installed,
// else the source tree's profiles/.
std::string ShippedProfileDir();

// Reads and checks a profile against the tasks' variants and knobs: UsageError (exit status 2)
// naming the file, the key and what is allowed where anything is wrong.
Profile ReadProfile(const std::string& path, const TaskCatalog& catalog);
// Writes it (a temporary file renamed over it; the folder made); DeviceError where it cannot.
void WriteProfile(const std::string& path, const Profile& profile);

// The profile a run on this device uses: --profile FILE's (with a note where it was made for
// another device or driver); none with --no-profile; else the user's for this device (this
// driver's, else the newest of another driver's, with a note), else the shipped one (likewise).
// nullopt: none.
std::optional<Profile> RunProfile(const Options& o, const TaskCatalog& catalog,
                                  const DeviceInfo& device);
// One line for stderr: which profile a run on the device uses, and why (with its note).
std::string ProfileLine(const std::optional<Profile>& profile, const Options& o);

// Gives each of the job's variants its settings: a profile entry's local size and knobs where
// one matches its case (task, variant, code path, type width, size class) and its local size is
// automatic or the entry's; --tune's values win over the entry's. Every variant's spec records
// the source (SettingsSource); localSizeGiven: the job's local size is --local-size's.
void ApplyProfile(Job& job, const Profile* profile, const DeviceInfo& device, bool localSizeGiven);

}  // namespace rsb
