#include "tools/Compare.h"

#include "cli/CliChecks.h"
#include "engine/Runner.h"
#include "platform/Errors.h"
#include "platform/Files.h"
#include "report/ReportUtil.h"
#include "tasks/Tasks.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>

namespace rsb {

namespace {

struct CompareOptions {
  std::string basePath, newPath;
  CompareSettings settings;
  OutputFormat format = DefaultFormat();
};

std::string CaseKey(const StoredResult& r, const CompareSettings& s) {
  const Result& c = r.result;
  std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}", c.task, c.variant, ToString(c.type),
                                ToString(c.op), FieldsText(c, "|"), c.n, r.Extra());
  if (!s.ignoreLocalSize)
    key += fmt::format("|{}", c.localSize);
  if (!s.acrossDevices)
    key += "|" + r.device.Key();
  return key;
}

// Where the interval of one side is missing, why.
std::string MissingCi(const StoredResult& r, const char* role) {
  return r.ciBad ? fmt::format("CI in {} does not hold its median", role)
                 : fmt::format("no CI in {}", role);
}

// How the machine's memory ceilings moved from BASE to NEW (NEW / BASE per stream), and
// whether beyond their noise (kMachineNoise): then the runs were not on the same machine, or not
// in the same state, and NEW's times are judged as if on BASE's (times x the ceiling's ratio).
struct MachineChange {
  double read = 1, write = 1, copy = 1;
  bool changed = false;
  // The ratio of the stream mix a case is held against (its `ceiling`), 1 where unchanged.
  double For(const std::string& ceiling) const {
    if (!changed)
      return 1;
    return ceiling == "read" ? read : ceiling == "write" ? write : copy;
  }
};

// The ceilings are each the fastest of many runs: from one run to the next on a shared 2-core
// CPU (pocl) they moved by up to a few percent; 10% apart is another machine, or a slow spell.
constexpr double kMachineNoise = 0.10;

// Rounds a case needs in each file for the U test: with 4 and 4 its smallest two-sided p-value
// (2/70 = 0.029) is below kAlpha; with 3 and 3 it is 0.1, and no change could ever be called.
constexpr size_t kMinRounds = 4;
constexpr double kAlpha = 0.05;

std::vector<double> RoundMedians(const Result& r) {
  std::vector<double> m;
  for (const auto& round : r.samplesMs)
    if (!round.empty())
      m.push_back(MedianOf(round));
  return m;
}

// The median of every run of a side, with the run's interval where it has one.
JudgedMedian OfRuns(const StoredResult& s) {
  const TimeStats& t = s.result.timeMs;
  return {t.median, s.HasCi() ? t.ciLow : 0, s.HasCi() ? t.ciHigh : 0,
          std::max<size_t>(1, s.result.samplesMs.size())};
}

// The median of a side's rounds' medians, with its interval across the rounds (from 6).
JudgedMedian OfRounds(const std::vector<double>& medians) {
  const TimeStats t = Summarise(medians);
  return {t.median, t.ciLow, t.ciHigh, medians.size()};
}

// A change only where the test's p < kAlpha and the throughput ratio is beyond the threshold.
Change ChangeOf(double p, double speedup, double threshold) {
  const bool significant = p < kAlpha;
  return significant && speedup * (1 + threshold) < 1 ? Change::Slower
         : significant && speedup > 1 + threshold     ? Change::Faster
                                                      : Change::Same;
}

// The change from the rounds' medians b to n by the U test, NEW's scaled by `scale`.
Change RoundsChange(const std::vector<double>& b, std::vector<double> n, double scale,
                    double threshold, double& p, double& speedup) {
  for (double& x : n)
    x *= scale;
  speedup = MedianOf(b) / MedianOf(n);
  p = MannWhitneyP(b, n);
  return ChangeOf(p, speedup, threshold);
}

// One file in rounds, the other in one: the median of every run each, no change called.
void OneSideInRounds(CaseComparison& c, size_t b, size_t n, std::vector<std::string>& notes) {
  c.baseMedian = OfRuns(c.base);
  c.newMedian = OfRuns(c.fresh);
  c.speedup = c.baseMedian->ms / c.newMedian->ms;
  notes.push_back(fmt::format(
      "BASE in {} round{}, NEW in {}: not compared (the medians of every run; time both with "
      "--repetitions {} or more to decide across runs)",
      b, b == 1 ? "" : "s", n, kMinRounds));
}

// Rounds a side needs for its test: said where either has fewer; false then.
bool EnoughRounds(size_t b, size_t n, bool paired, std::vector<std::string>& notes) {
  const size_t least = paired ? kMinPairedRounds : kMinRounds;
  if (b >= least && n >= least)
    return true;
  notes.push_back(
      fmt::format("too few rounds to decide ({} in BASE, {} in NEW; {} {} or more in both)", b, n,
                  paired ? "--rounds" : "--repetitions", least));
  return false;
}

// Both files hold rounds (--repetitions): the change is decided across runs, by the Mann-Whitney
// U test of the rounds' medians (Google Benchmark's tools/compare.py tests its repetitions the
// same way): distribution-free, so a slow spell's outlier round moves it by one rank, not by its
// size as it would a t-test or a bootstrap of the mean; and a round's median, not every run, is
// the unit, since the runs of one process share its state (its placement, the machine's spell),
// which is what differs from run to run. A change is called only where p < kAlpha and the ratio
// of the rounds' medians is beyond the threshold. A machine that changed (its ceilings' ratio
// `machine`) only excuses: a slowdown on a slower machine, or a gain on a faster one, is judged
// again with NEW's times scaled by that ratio; it never makes a change of a case that showed
// none (on the loaded 2-core machine the ceilings of two runs a minute apart differed 2x while
// the cases did not follow).
void JudgeUnpaired(CaseComparison& c, const std::vector<double>& b, const std::vector<double>& n,
                   double threshold, double machine, std::vector<std::string>& notes) {
  double p = 1, speedup = 1;
  Change change = RoundsChange(b, n, 1, threshold, p, speedup);
  if ((change == Change::Slower && machine < 1) || (change == Change::Faster && machine > 1)) {
    change = RoundsChange(b, n, machine, threshold, p, speedup);
    c.newScale = machine;
    notes.push_back(fmt::format("judged with NEW's times x{:.3f}, the machine's change", machine));
  }
  c.basis = Basis::Rounds;
  c.speedup = speedup;
  if (EnoughRounds(b.size(), n.size(), false, notes)) {
    c.change = change;
    c.p = p;
    notes.push_back(fmt::format("p={:.3f} over {}+{} rounds", p, b.size(), n.size()));
  }
}

// Each paired round's throughput ratio NEW/BASE: the median over its pairs of runs (BASE's i-th
// timed run and NEW's i-th, one just after the other in turns) of BASE's time / NEW's.
std::vector<double> PairedRatios(const Result& b, const Result& n) {
  std::vector<double> ratios;
  for (size_t k = 0; k < b.samplesMs.size() && k < n.samplesMs.size(); ++k) {
    std::vector<double> pairs;
    for (size_t i = 0; i < b.samplesMs[k].size() && i < n.samplesMs[k].size(); ++i)
      if (b.samplesMs[k][i] > 0 && n.samplesMs[k][i] > 0)
        pairs.push_back(b.samplesMs[k][i] / n.samplesMs[k][i]);
    if (!pairs.empty())
      ratios.push_back(MedianOf(pairs));
  }
  return ratios;
}

// Rounds timed in turns (`ab`, settings.paired): round k of BASE ran at once with round k of NEW,
// run for run, so each round's ratio (PairedRatios) saw the machine as it was then, and a drift
// of the machine from round to round cancels in it. The ratio is the median of the rounds'
// ratios, judged by the sign test of them (in how many rounds NEW was the slower): a round that a
// burst of other work hit counts as one round whatever its size, where the signed-rank test
// ranks it first and two or three such rounds of 16 hid a 10% slowdown from it.
void JudgePaired(CaseComparison& c, double threshold, std::vector<std::string>& notes) {
  c.basis = Basis::PairedRounds;
  c.roundRatios = PairedRatios(c.base.result, c.fresh.result);
  c.speedup = MedianOf(c.roundRatios);
  const size_t b = c.base.result.samplesMs.size(), n = c.fresh.result.samplesMs.size();
  if (b != n || c.roundRatios.size() != b) {
    notes.push_back(fmt::format("rounds not paired ({} in BASE, {} in NEW)", b, n));
    return;
  }
  if (!EnoughRounds(b, n, true, notes))
    return;
  std::vector<double> logs;
  for (const double r : c.roundRatios)
    logs.push_back(std::log(r));
  c.p = SignTestP(logs);
  c.change = ChangeOf(*c.p, *c.speedup, threshold);
  notes.push_back(fmt::format("p={:.3f} over {} paired rounds, their ratios {:.3f}-{:.3f}", *c.p, b,
                              *std::min_element(c.roundRatios.begin(), c.roundRatios.end()),
                              *std::max_element(c.roundRatios.begin(), c.roundRatios.end())));
}

// Both files in rounds (--repetitions, or `ab`'s): judged over the rounds; one in rounds: said,
// not judged. False where both files hold one round.
bool JudgeRounds(CaseComparison& c, const CompareSettings& s, double machine,
                 std::vector<std::string>& notes) {
  const std::vector<double> b = RoundMedians(c.base.result), n = RoundMedians(c.fresh.result);
  if (b.size() < 2 && n.size() < 2)
    return false;
  if (b.size() < 2 || n.size() < 2) {
    // A file without samples_ms (written before them) holds one round.
    OneSideInRounds(c, std::max<size_t>(1, b.size()), std::max<size_t>(1, n.size()), notes);
    return true;
  }
  c.baseMedian = OfRounds(b);
  c.newMedian = OfRounds(n);
  if (s.paired)
    JudgePaired(c, s.threshold, notes);
  else
    JudgeUnpaired(c, b, n, s.threshold, machine, notes);
  return true;
}

// Files of one round: the change from the two runs' 95% intervals of the median.
void JudgeRuns(CaseComparison& c, std::vector<std::string>& notes) {
  const StoredResult &b = c.base, &n = c.fresh;
  const TimeStats &bt = b.result.timeMs, &nt = n.result.timeMs;
  c.baseMedian = OfRuns(b);
  c.newMedian = OfRuns(n);
  c.speedup = bt.median / nt.median;
  if (!b.HasCi() && !n.HasCi() && !b.ciBad && !n.ciBad) {
    notes.push_back("no CI in BASE or NEW");
  } else if (!b.HasCi() || !n.HasCi()) {
    if (!b.HasCi())
      notes.push_back(MissingCi(b, "BASE"));
    if (!n.HasCi())
      notes.push_back(MissingCi(n, "NEW"));
  } else {
    c.change = nt.ciHigh < bt.ciLow   ? Change::Faster
               : nt.ciLow > bt.ciHigh ? Change::Slower
                                      : Change::Same;
  }
  if (b.HasCi() && b.CiMet() == false)
    notes.push_back("CI target not met in BASE");
  if (n.HasCi() && n.CiMet() == false)
    notes.push_back("CI target not met in NEW");
}

// A regression is significantly slower beyond the threshold, never between two devices.
void Judge(CaseComparison& c, const CompareSettings& s, const MachineChange& machine,
           bool devices) {
  std::vector<std::string> notes;
  const StoredResult &b = c.base, &n = c.fresh;
  if (!b.Timed() || !n.Timed()) {
    if (!b.Timed())
      notes.push_back(fmt::format("not timed in BASE ({})", ToString(b.result.status)));
    if (!n.Timed())
      notes.push_back(fmt::format("not timed in NEW ({})", ToString(n.result.status)));
  } else if (!JudgeRounds(c, s, machine.For(b.result.ceiling), notes)) {
    JudgeRuns(c, notes);
  }
  c.regression =
      !devices && c.change == Change::Slower && c.speedup && *c.speedup * (1 + s.threshold) < 1;
  if (c.regression)
    notes.insert(notes.begin(), fmt::format("REGRESSION beyond {}", PercentText(s.threshold)));
  // Warm against cold measures the cache as much as the change.
  if (b.result.cold != n.result.cold)
    notes.push_back(fmt::format("BASE {}, NEW {}", b.result.cold ? "cold" : "warm",
                                n.result.cold ? "cold" : "warm"));
  // Two clocks (--timer): the host's includes a launch's and a finish's overhead.
  if (!b.result.timer.empty() && !n.result.timer.empty() && b.result.timer != n.result.timer)
    notes.push_back(fmt::format("BASE timed by {}, NEW by {}", b.result.timer, n.result.timer));
  for (const auto& note : notes)
    c.note += (c.note.empty() ? "" : "; ") + note;
}

CompareOptions ParseCompareOptions(int argc, char** argv, bool& help) {
  CompareOptions o;
  CLI::App app{
      "reduce-scan-bench compare: per case of two result files (`--format json`), the\n"
      "throughput ratio NEW/BASE of the medians printed beside it. Files timed in rounds\n"
      "(--repetitions 5; 4 or more): the medians of the rounds' medians, faster or slower only\n"
      "where a Mann-Whitney U test of them gives p < 0.05 and the ratio is beyond --threshold;\n"
      "files of one round: where the 95% confidence intervals of the medians do not overlap,\n"
      "blind to the spread between runs (said). Exit status 1 on a significant regression\n"
      "beyond --threshold (never between two devices), 2 on bad input or nothing compared.",
      "reduce-scan-bench compare"};
  app.set_help_flag();
  app.add_flag("-h,--help", help, "Print this help and exit");
  app.add_option("BASE", o.basePath, "The result file to compare against")->required();
  app.add_option("NEW", o.newPath, "The result file to judge")->required();
  std::string threshold = "5%", format = FormatNames().front();
  AddJudgeOptions(app, threshold, format, "A significant slowdown");
  app.add_flag("--across-devices", o.settings.acrossDevices,
               "Match cases ignoring the device (my GPU against yours); each file must hold one "
               "device (two such files of different devices are paired so without it)");
  app.add_flag("--ignore-local-size", o.settings.ignoreLocalSize,
               "Match cases ignoring the local size (each device's auto choice)");
  cli::Parse(app, argc, argv, &help);
  if (help) {
    std::cout << app.help();
    return o;
  }
  o.settings.threshold = *ParseThreshold(threshold);
  o.format = ParseFormat(format);
  return o;
}

// Hints where a looser match would pair what is listed as one-file-only.
void LooseMatchNotes(Comparison& c, const CompareSettings& s) {
  if (c.onlyBase.empty() || c.onlyNew.empty())
    return;
  CompareSettings loose = s;
  loose.acrossDevices = loose.ignoreLocalSize = true;
  size_t byDevice = 0, byLocal = 0;
  for (const auto& b : c.onlyBase)
    for (const auto& n : c.onlyNew)
      if (CaseKey(b, loose) == CaseKey(n, loose)) {
        byDevice += !s.acrossDevices && !(b.device == n.device);
        byLocal += !s.ignoreLocalSize && b.result.localSize != n.result.localSize;
        break;
      }
  if (byDevice)
    c.notes.push_back(fmt::format(
        "{} cases of BASE differ from one in NEW in the device: --across-devices matches "
        "them",
        byDevice));
  if (byLocal)
    c.notes.push_back(fmt::format(
        "{} cases of BASE differ from one in NEW in the local size: --ignore-local-size "
        "matches them",
        byLocal));
}

// The ceilings' change from BASE to NEW, said once where beyond their noise.
MachineChange MachineChangeOf(const ResultFile& base, const ResultFile& fresh, Comparison& c) {
  MachineChange m;
  if (base.copyGBs <= 0 || fresh.copyGBs <= 0)
    return m;  // not measured in one of them (--no-ceilings, an older file)
  m.copy = fresh.copyGBs / base.copyGBs;
  m.read = base.readGBs > 0 && fresh.readGBs > 0 ? fresh.readGBs / base.readGBs : m.copy;
  m.write = base.writeGBs > 0 && fresh.writeGBs > 0 ? fresh.writeGBs / base.writeGBs : m.copy;
  for (const double r : {m.read, m.write, m.copy})
    m.changed = m.changed || std::abs(r - 1) > kMachineNoise;
  if (m.changed)
    c.notes.push_back(fmt::format(
        "the machine changed between the runs: its memory ceilings NEW/BASE read x{:.2f}, write "
        "x{:.2f}, copy x{:.2f} (beyond their {:.0f}% noise); a case in rounds that changed as the "
        "machine did is judged again with NEW's times scaled by its ceiling's ratio: a slowdown "
        "that matches the machine's is not the code's",
        m.read, m.write, m.copy, 100 * kMachineNoise));
  return m;
}

// The exact two-sided p-value of U = u for n and m values without ties. The count of orderings
// of i values of one side and j of the other with U = k: the largest of them is the first side's
// (it beats all j others, adding j) or the other's; rolled over i, one row at a time.
double ExactP(size_t n, size_t m, double u) {
  std::vector<std::vector<double>> prev(m + 1, std::vector<double>{1}), cur(m + 1);
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = {1};
    for (size_t j = 1; j <= m; ++j) {
      cur[j].assign(i * j + 1, 0);
      for (size_t k = 0; k <= i * j; ++k)
        cur[j][k] = (k >= j && k - j < prev[j].size() ? prev[j][k - j] : 0) +
                    (k < cur[j - 1].size() ? cur[j - 1][k] : 0);
    }
    std::swap(prev, cur);
  }
  double total = 0, below = 0, above = 0;
  for (size_t k = 0; k < prev[m].size(); ++k) {
    total += prev[m][k];
    below += double(k) <= u ? prev[m][k] : 0;
    above += double(k) >= u ? prev[m][k] : 0;
  }
  return std::min(1.0, 2 * std::min(below, above) / total);
}

// The normal approximation: the variance corrected for ties, a continuity correction.
double NormalP(const std::vector<double>& a, const std::vector<double>& b, double u) {
  std::vector<double> all(a);
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  double tieTerm = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j] == all[i])
      ++j;
    const double t = double(j - i);
    tieTerm += t * t * t - t;
    i = j;
  }
  const double nm = double(a.size()) * double(b.size()), N = double(all.size());
  const double sigma = std::sqrt(nm / 12 * ((N + 1) - tieTerm / (N * (N - 1))));
  if (sigma <= 0)
    return 1;
  const double z = std::max(0.0, std::abs(u - nm / 2) - 0.5) / sigma;
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

}  // namespace

std::optional<double> ParseThreshold(const std::string& v) {
  bool percent = false;
  const auto x = cli::ParsePercentOrDecimal(v, &percent);
  if (!x || (!percent && *x >= 1) || *x > 10)  // "5" is 5% or 500%: say which
    return std::nullopt;
  return x;
}

void AddJudgeOptions(CLI::App& app, std::string& threshold, std::string& format,
                     const std::string& slowdown) {
  app.add_option("--threshold", threshold,
                 slowdown +
                     " beyond this is a regression (exit 1): 5% or 0.05, plain decimals "
                     "(default 5%)")
      ->check(cli::Allowed("a percentage from 0% to 1000% (5%) or a fraction below 1 (0.05)",
                           [](const std::string& v) { return ParseThreshold(v).has_value(); }));
  app.add_option("--format", format, FormatList() + " (default " + FormatNames().front() + ")")
      ->check(cli::OneOf(FormatNames(), false));
}

double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t k = v.size();
  return k == 0 ? 0 : k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

double MannWhitneyP(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty())
    return 1;
  double u = 0;  // pairs where a's value is the larger, ties a half
  bool ties = false;
  for (const double x : a)
    for (const double y : b) {
      u += x > y ? 1 : x == y ? 0.5 : 0;
      ties = ties || x == y;
    }
  return !ties && a.size() <= 50 && b.size() <= 50 ? ExactP(a.size(), b.size(), u)
                                                   : NormalP(a, b, u);
}

double SignTestP(const std::vector<double>& d) {
  size_t above = 0, n = 0;
  for (const double x : d) {
    above += x > 0;
    n += x != 0;
  }
  if (n == 0)
    return 1;
  // P(at most k of n fair coins land one way), summed with each term from the one before.
  const size_t k = std::min(above, n - above);
  double term = std::ldexp(1.0, -int(n)), tail = 0;
  for (size_t i = 0; i <= k; ++i) {
    tail += term;
    term = term * double(n - i) / double(i + 1);
  }
  return std::min(1.0, 2 * tail);
}

namespace {

// Throws UsageError where acrossDevices is set and a file holds several devices.
void CheckAcrossDevices(const ResultFile& base, const ResultFile& fresh, const CompareSettings& s) {
  if (s.acrossDevices)
    for (const ResultFile* f : {&base, &fresh}) {
      const auto devices = f->Devices();
      if (devices.size() != 1)
        throw UsageError(fmt::format(
            "--across-devices: {} '{}' holds {} devices ({}); allowed: files of one device each",
            f->role, f->path, devices.size(), DeviceList(devices)));
    }
}

// Matched across devices that differ in name or platform (not only in the driver's version).
bool TwoDevices(const ResultFile& base, const ResultFile& fresh, const CompareSettings& s) {
  const auto b = base.Devices(), n = fresh.Devices();
  return s.acrossDevices && b.size() == 1 && n.size() == 1 &&
         (b[0].name != n[0].name || b[0].platform != n[0].platform);
}

// The regressions judged from files of one round each.
size_t OneRoundRegressions(const Comparison& c) {
  return size_t(std::count_if(c.matched.begin(), c.matched.end(), [](const auto& m) {
    return m.regression && m.basis == Basis::Runs && m.baseMedian->rounds == 1 &&
           m.newMedian->rounds == 1;
  }));
}

// Said once: a change called from files of one round, and two devices compared.
void JudgementNotes(Comparison& c, double threshold) {
  const bool oneRound = std::any_of(c.matched.begin(), c.matched.end(), [](const auto& m) {
    return m.basis == Basis::Runs && m.baseMedian && m.baseMedian->rounds == 1 &&
           m.newMedian->rounds == 1 && (m.change == Change::Faster || m.change == Change::Slower);
  });
  if (oneRound)
    c.notes.push_back(fmt::format(
        "a change called in files of one round is judged from each run's 95% interval, which does "
        "not hold the spread from one run to the next (two runs of one build differ by more): it "
        "may be the machine's; time both with --repetitions 5 to decide across runs ({} or more "
        "rounds)",
        kMinRounds));
  if (c.devices)
    c.notes.push_back(
        "two devices: the ratios compare the devices, not a change of code, so no case is a "
        "regression");
  // Beyond the threshold, yet the rounds of two separate runs cannot tell it from their drift.
  const auto unseen = std::count_if(c.matched.begin(), c.matched.end(), [&](const auto& m) {
    return m.basis == Basis::Rounds && m.change == Change::Same && m.p && *m.p >= kAlpha &&
           std::abs(std::log(*m.speedup)) > std::log(1 + threshold);
  });
  if (unseen && !c.devices)
    c.notes.push_back(fmt::format(
        "{} case(s) moved beyond the threshold but not beyond the spread between the runs' rounds: "
        "`reduce-scan-bench ab` times two kernel folders or builds in turns, in one run, where a "
        "machine's drift cancels",
        unseen));
}

}  // namespace

Comparison CompareFiles(const ResultFile& base, const ResultFile& fresh, const CompareSettings& s) {
  CheckAcrossDevices(base, fresh, s);
  Comparison c;
  c.devices = TwoDevices(base, fresh, s);
  // Two devices' ceilings differ as the devices do: not a machine that changed.
  const MachineChange machine = c.devices ? MachineChange() : MachineChangeOf(base, fresh, c);
  // Each file's cases by key; a case recorded twice in one file: the first is compared.
  auto index = [&](const ResultFile& f) {
    std::map<std::string, size_t> byKey;
    for (size_t i = 0; i < f.results.size(); ++i) {
      const auto [it, fresh] = byKey.emplace(CaseKey(f.results[i], s), i);
      if (!fresh)
        c.notes.push_back(fmt::format("{} holds {} more than once; the first is compared", f.role,
                                      f.results[i].Label()));
    }
    return byKey;
  };
  const auto baseIndex = index(base), newIndex = index(fresh);
  for (size_t i = 0; i < base.results.size(); ++i) {
    const std::string key = CaseKey(base.results[i], s);
    if (baseIndex.at(key) != i)
      continue;
    const auto it = newIndex.find(key);
    if (it == newIndex.end()) {
      c.onlyBase.push_back(base.results[i]);
      continue;
    }
    CaseComparison m;
    m.base = base.results[i];
    m.fresh = fresh.results[it->second];
    Judge(m, s, machine, c.devices);
    c.matched.push_back(m);
  }
  for (size_t i = 0; i < fresh.results.size(); ++i) {
    const std::string key = CaseKey(fresh.results[i], s);
    if (newIndex.at(key) == i && !baseIndex.count(key))
      c.onlyNew.push_back(fresh.results[i]);
  }
  LooseMatchNotes(c, s);
  JudgementNotes(c, s.threshold);
  return c;
}

CompareReport CompareTwoFiles(const ResultFile& base, const ResultFile& fresh, CompareSettings s) {
  // Two files of one device each, not the same one: my GPU against yours, without a flag.
  const auto baseDevices = base.Devices(), newDevices = fresh.Devices();
  const bool paired = !s.acrossDevices && baseDevices.size() == 1 && newDevices.size() == 1 &&
                      !(baseDevices[0] == newDevices[0]);
  s.acrossDevices = s.acrossDevices || paired;
  Comparison c = CompareFiles(base, fresh, s);
  if (paired)
    c.notes.insert(c.notes.begin(),
                   fmt::format("BASE and NEW each hold one device, not the same: their cases are "
                               "paired across the devices ({} against {})",
                               newDevices[0].Label(), baseDevices[0].Label()));
  return {{base.path, baseDevices}, {fresh.path, newDevices}, c, s, TaskFields()};
}

void RequireSomethingCompared(const ResultFile& base, const ResultFile& fresh,
                              const Comparison& c) {
  for (const ResultFile* f : {&base, &fresh})
    if (f->results.empty())
      throw UsageError(
          fmt::format("{} '{}': no results: nothing to compare (a run that was stopped before its "
                      "first case, or a selection of no case?)",
                      f->role, f->path));
  if (c.matched.empty()) {
    std::string hints;
    for (const auto& n : c.notes)
      hints += "; " + n;
    throw UsageError(fmt::format(
        "no case of NEW '{}' matches one of BASE '{}' (task, variant, type, op, n, local size, "
        "device){}",
        fresh.path, base.path, hints));
  }
}

int Compare(int argc, char** argv) {
  try {
    bool help = false;
    const CompareOptions o = ParseCompareOptions(argc, argv, help);
    if (help) {
      CheckStdout();
      return kExitOk;
    }
    const ResultFile base = LoadResultFile(o.basePath, "BASE");
    const ResultFile fresh = LoadResultFile(o.newPath, "NEW");
    const CompareReport report = CompareTwoFiles(base, fresh, o.settings);
    RequireSomethingCompared(base, fresh, report.comparison);
    MakePrinter(o.format)->Compare(std::cout, report);
    CheckStdout();
    if (!report.comparison.Regressions())
      return kExitOk;
    if (OneRoundRegressions(report.comparison))  // beside the exit status a script sees
      std::cerr << fmt::format(
          "note: {} regression(s) judged from files of one round, blind to the spread between "
          "runs: time both with --repetitions 5 and compare again\n",
          OneRoundRegressions(report.comparison));
    return kExitValidationFailed;
  } catch (const UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {  // DeviceError (stdout), and never an abort
    std::cerr << "error: " << e.what() << "\n";
    return kExitDevice;
  }
}

}  // namespace rsb
