#include "tools/Tune.h"

#include "cli/Cli.h"
#include "cli/CliChecks.h"
#include "engine/Runner.h"
#include "engine/TaskUtil.h"
#include "platform/BuildInfo.h"
#include "platform/CLUtil.h"
#include "platform/Errors.h"
#include "platform/Files.h"
#include "platform/Sizes.h"
#include "platform/Subprocess.h"
#include "run/Profile.h"
#include "tools/Compare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>

#include <cerrno>
#include <cstring>

#include <unistd.h>

namespace rsb {

Case TuneStart(const IComputeTask& task, const std::string& variant, const ProblemSpec& spec,
               const DeviceInfo& device) {
  return ResolveCase(task, variant, spec, device);
}

namespace {

using Clock = std::chrono::steady_clock;
using Tasks = std::vector<std::unique_ptr<IComputeTask>>;

struct TuneOptions {
  std::string platform, device, kernels, output, note;
  double budgetS = 300;
  double candidateS = 0.2;  // timed runs per candidate (the runner's --time-budget)
  std::vector<std::string> tasks, variants;
  // "huge" (2^28) only on a GPU unless asked for: on a CPU device its runs take the large
  // class's settings (Profile::Find), and one candidate there takes seconds.
  std::vector<std::string> classes = {"huge", "large", "small"};
  bool classesGiven = false;
  std::vector<size_t> typeBytes = {4, 8};
  uint64_t seed = 1;
  bool quiet = false;
  size_t rounds = kConfirmRounds;  // the confirmation's rounds a side
  // --try: no search; this point (local-size=N and knobs NAME=V, the rest the defaults) is
  // confirmed against the defaults in each group whose knobs it sets.
  std::vector<std::string> tryPoint;
};

// One search: a variant at a type width and size class, its problem and the knobs it searches.
struct Group {
  IComputeTask* task = nullptr;
  std::string variant, sizeClass, codePath;
  size_t typeBytes = 4;
  ProblemSpec spec;
  std::vector<std::string> knobs;
  std::string Label() const {
    return fmt::format("{}/{} {}-byte {}", task->Name(), variant, typeBytes, sizeClass);
  }
};

// A point of a group's space: the local size and each knob's value.
struct Point {
  size_t local = 0;
  std::map<std::string, size_t> knobs;
  bool operator<(const Point& o) const {
    return local != o.local ? local < o.local : knobs < o.knobs;
  }
  std::string Text() const {
    std::string s = fmt::format("L={}", local);
    for (const auto& [k, v] : knobs)
      s += fmt::format(" {}={}", k, v);
    return s;
  }
};

// What a candidate's case came to: its Gelem/s where it passed and was timed.
struct Outcome {
  bool ok = false;
  double gelemS = 0;
  std::string why;  // where not ok: its status and message
};

// A dimension of the space: the values it takes, in order ("local-size" or a knob).
struct Dimension {
  std::string name;
  std::vector<size_t> values;
};

// --try NAME=VALUE: local-size=N (a power of two up to 1024) or a knob --tune takes.
CLI::Validator TryCheck(const std::vector<TuningKnob>& knobs) {
  const CLI::Validator knob = TuneCheck(knobs);
  return CLI::Validator(
      [knob](std::string& v) {
        if (v.rfind("local-size=", 0) != 0)
          return knob(v);
        const auto l = ParseUnsigned(v.substr(std::string("local-size=").size()));
        return l && IsPowerOfTwo(size_t(*l)) && *l <= 1024
                   ? std::string()
                   : fmt::format(
                         "'{}': not allowed; allowed: local-size=N, N a power of two "
                         "from 1 to 1024",
                         v);
      },
      "");
}

void AddConfirmOptions(CLI::App& app, TuneOptions& o, const std::vector<TuningKnob>& knobs) {
  app.add_option("--rounds", o.rounds,
                 fmt::format("Rounds a side of the confirmation (default {}): the search's best "
                             "and the defaults timed in turn, the best kept only where a "
                             "Mann-Whitney U test gives p < {} and it is more than {:.0f}% "
                             "faster; more rounds find a smaller gain on a noisy machine",
                             kConfirmRounds, kConfirmAlpha, 100 * kTuneMargin))
      ->check(cli::WholeNumber(kConfirmRounds, 1000));
  app.add_option("--try", o.tryPoint,
                 "No search: confirm this point against the defaults, NAME=VALUE[,...] with "
                 "local-size=N or knobs as --tune's (the rest at the defaults), in each group "
                 "whose knobs it sets")
      ->delimiter(',')
      ->check(TryCheck(knobs));
}

void AddOptions(CLI::App& app, TuneOptions& o, std::vector<std::string>& classes) {
  app.add_option("--budget", o.budgetS,
                 "Seconds for the whole search, a plain decimal (default 300); a candidate "
                 "started in time finishes")
      ->check(cli::Allowed("seconds, more than 0 and at most 86400, e.g. 300",
                           [](const std::string& v) {
                             const auto s = cli::ParseDecimal(v);
                             return s && *s > 0 && *s <= 86400;
                           }));
  app.add_option("--candidate-time", o.candidateS,
                 "Seconds of timed runs per candidate, a plain decimal (default 0.2)")
      ->check(cli::Allowed("seconds from 0 to 60 as a plain decimal, e.g. 0.2",
                           [](const std::string& v) {
                             const auto s = cli::ParseDecimal(v);
                             return s && *s <= 60;
                           }));
  app.add_option("--task", o.tasks, "Task(s) to tune (default: every task with a tunable variant)")
      ->delimiter(',');
  app.add_option("--variant", o.variants,
                 "Variant(s) to tune: NAME or TASK/NAME (single-pass is both tasks'), default all "
                 "tunable ones")
      ->delimiter(',');
  app.add_option("--size-class", classes,
                 "Size class(es): huge (2^28; default on a GPU only), large (2^24), small (2^16)")
      ->delimiter(',')
      ->check(cli::OneOf({"huge", "large", "small"}, false));
  app.add_option("--type-bytes", o.typeBytes, "Type width(s): 4 (uint, float), 8 (ulong, double)")
      ->delimiter(',')
      ->check(cli::Allowed("4 or 8", [](const std::string& v) { return v == "4" || v == "8"; }));
  app.add_option("--output,-o", o.output,
                 "Profile file to write (default: the device's in "
                 "$XDG_CACHE_HOME/reduce-scan-bench/profiles); entries it has for other variants "
                 "are kept");
  app.add_option("--note", o.note, "Free text stored in the profile (how and why it was made)");
  app.add_option("--seed", o.seed, "Seed of the random input (default 1)");
  app.add_option("--platform", o.platform, "Platform: index or name substring");
  app.add_option("--device", o.device, "Device: index or name substring (default: first GPU)");
  app.add_option("--kernels", o.kernels, "Folder of the .cl files (default: the installed ones)");
  app.add_flag("--quiet,-q", o.quiet, "No progress on stderr");
}

// Throws UsageError; false: --help was printed.
bool ParseTuneOptions(int argc, char** argv, const std::vector<TuningKnob>& knobs, TuneOptions& o) {
  CLI::App app{
      "reduce-scan-bench tune: search the local size and --tune knobs of every tunable variant on "
      "one device and write its tuning profile, which later runs load",
      "reduce-scan-bench tune"};
  std::vector<std::string> classes;
  AddOptions(app, o, classes);
  AddConfirmOptions(app, o, knobs);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  if (!classes.empty()) {
    o.classes = classes;
    o.classesGiven = true;
  }
  return true;
}

// The type a group of this width runs: uint or ulong where the task computes it, else float or
// double; nullopt where it computes neither.
std::optional<ElementType> TypeOfWidth(const IComputeTask& task, size_t bytes) {
  const auto types = task.Types();
  for (ElementType t : bytes == 4
                           ? std::vector<ElementType>{ElementType::Uint, ElementType::Float}
                           : std::vector<ElementType>{ElementType::Ulong, ElementType::Double})
    if (std::find(types.begin(), types.end(), t) != types.end())
      return t;
  return std::nullopt;
}

ProblemSpec GroupSpec(const IComputeTask& task, const std::string& variant, ElementType type,
                      const std::string& sizeClass, uint64_t seed) {
  ProblemSpec spec;
  spec.type = type;
  const auto ops = task.Ops();
  spec.op = std::find(ops.begin(), ops.end(), Op::Sum) != ops.end() ? Op::Sum : ops.front();
  spec.n = sizeClass == "huge" ? kHugeClassN : sizeClass == "large" ? kLargeClassN : kSmallClassN;
  if (task.TakesShape(variant))  // a square image of as many elements
    spec.height = size_t(std::llround(std::sqrt(double(spec.n))));
  spec.seed = seed;
  return spec;
}

bool Wanted(const std::vector<std::string>& list, const std::string& task,
            const std::string& variant) {
  if (list.empty())
    return true;
  for (const auto& v : list)
    if (v == variant || v == task + "/" + variant || v == "all")
      return true;
  return false;
}

std::string TunableNames(const Tasks& tasks, const DeviceInfo& device) {
  std::vector<std::string> names;
  for (const auto& t : tasks)
    for (const auto& v : t->Variants()) {
      ProblemSpec spec;
      const std::string path = t->CodePathOf(device, spec);
      if (!TunedKnobs(t->TunedSpaces(), v, path, 4).empty() ||
          !TunedKnobs(t->TunedSpaces(), v, path, 8).empty())
        names.push_back(t->Name() + "/" + v);
    }
  return fmt::format("{}", fmt::join(names, ", "));
}

std::vector<Group> MakeGroups(const Tasks& tasks, const TuneOptions& o, const DeviceInfo& device) {
  std::vector<Group> groups;
  for (const auto& t : tasks) {
    if (!o.tasks.empty() && std::find(o.tasks.begin(), o.tasks.end(), t->Name()) == o.tasks.end())
      continue;
    for (const auto& v : t->Variants()) {
      if (!Wanted(o.variants, t->Name(), v))
        continue;
      for (size_t bytes : o.typeBytes) {
        const auto type = TypeOfWidth(*t, bytes);
        if (!type)
          continue;
        for (const auto& c : o.classes) {
          if (c == "huge" && !o.classesGiven && !device.isGpu)
            continue;
          Group g{t.get(), v, c, "", bytes, GroupSpec(*t, v, *type, c, o.seed), {}};
          g.codePath = t->CodePathOf(device, g.spec);
          g.knobs = TunedKnobs(t->TunedSpaces(), v, g.codePath, bytes);
          if (!g.knobs.empty())
            groups.push_back(g);
        }
      }
    }
  }
  return groups;
}

// The values a dimension takes: powers of two times the default within what is allowed (local
// sizes: 1 (CPU) or 32 (GPU) up to the device's limit, at most 1024), in increasing order.
Dimension LocalDimension(const Group& g, const DeviceInfo& device, size_t deflt) {
  Dimension d{"local-size", {}};
  const size_t hi = std::min<size_t>(device.maxWorkGroupSize, 1024);
  for (size_t l = g.codePath == "gpu" ? 32 : 1; l <= hi; l *= 2)
    d.values.push_back(l);
  if (std::find(d.values.begin(), d.values.end(), deflt) == d.values.end())
    d.values.push_back(deflt);
  std::sort(d.values.begin(), d.values.end());
  return d;
}

// A knob's values: every allowed one where there are at most 16 (the tiled-2d's rows: 10 was
// the H200's best, between the powers of two), else powers of two times the default.
Dimension KnobDimension(const TuningKnob& k, size_t deflt) {
  Dimension d{k.name, {}};
  if ((k.max - k.min) / k.multipleOf < 16) {
    for (size_t v = k.min; v <= k.max; v += k.multipleOf)
      if (k.Allows(v))
        d.values.push_back(v);
    return d;
  }
  d.values.push_back(deflt);
  for (size_t v = deflt / 2, i = 0; v >= 1 && i < 10; v /= 2, ++i)
    if (k.Allows(v))
      d.values.push_back(v);
  for (size_t v = deflt * 2, i = 0; v <= k.max && i < 10; v *= 2, ++i)
    if (k.Allows(v))
      d.values.push_back(v);
  std::sort(d.values.begin(), d.values.end());
  return d;
}

// What a group's tune came to: the entry written (the confirmed best, else the defaults), the
// search's best (the candidate) and its Gelem/s (the median of its rounds where confirmed).
struct Found {
  ProfileEntry entry;
  Point candidate;
  double candidateGelemS = 0;
  bool noisy = false;  // the defaults' rounds spread beyond kNoisyCv
};

// Searches one group after another, every candidate through the runner (validated, then timed).
class Tuner {
 public:
  Tuner(TaskContext& ctx, const TuneOptions& o, const std::atomic<bool>& stop)
      : ctx_(ctx), o_(o), stop_(stop), runner_(ctx, Settings(o)) {
    Ceilings c;
    c.timer = CheckTimer(ctx);
    if (c.timer.Unusable())
      throw DeviceError(fmt::format("cannot tune on {}: its profiling timer is unusable: {}",
                                    ctx.info.name, c.timer.reason));
    runner_.SetCeilings(c);
    runner_.SetStopFlag(&stop);
  }

  // The group's best point (nullopt where its default settings did not pass), searched until
  // `end` (a candidate started before it finishes), then confirmed against the defaults.
  std::optional<Found> TuneGroup(const Group& g, Clock::time_point end, const std::string& label);
  bool DefaultFailed() const { return defaultFailed_; }
  size_t Tried() const { return tried_; }

 private:
  static RunSettings Settings(const TuneOptions& o) {
    RunSettings s;
    s.warmup = 1;
    s.timeBudgetS = o.candidateS;
    s.ciTarget = 0.02;
    s.maxIterations = 200;
    s.breakdown = false;
    return s;
  }
  void Say(const std::string& line) const {
    if (!o_.quiet)
      std::cerr << line << "\n";
  }
  bool Better(const Outcome& out) const {
    return out.ok && out.gelemS > bestGelemS_ * (1 + kStepMargin);
  }
  Outcome Measure(const Group& g, const Point& p);
  // The point timed again (not from the cache): its Gelem/s, 0 where it did not pass.
  double Retime(const Group& g, const Point& p);
  // The best against the defaults in o.rounds rounds a side, in turn (Judge, Tune.h); nullopt
  // where the best is the defaults (nothing to confirm) or when stopped.
  std::optional<Confirmation> Confirm(const Group& g, const Point& start);
  // The entry of the group's outcome: the best where confirmed, else the defaults.
  Found Finish(const Group& g, const Point& start, const std::optional<Confirmation>& c,
               double defaultGelemS, size_t candidates);
  Point Start(const Group& g, std::vector<Dimension>& dims) const;
  // --try: its point, the rest the defaults; the search's best where it passes.
  void Try(const Group& g, const Point& start);
  void Grid(const Group& g, const std::vector<Dimension>& dims, Clock::time_point end);
  void Descent(const Group& g, const std::vector<Dimension>& dims, Clock::time_point end);
  bool Over(Clock::time_point end) const { return stop_ || Clock::now() >= end; }

  TaskContext& ctx_;
  const TuneOptions& o_;
  const std::atomic<bool>& stop_;
  Runner runner_;
  std::map<Point, Outcome> seen_;  // this group's candidates
  Point best_;
  double bestGelemS_ = 0;
  size_t tried_ = 0;
  bool defaultFailed_ = false;
};

Outcome Tuner::Measure(const Group& g, const Point& p) {
  if (const auto it = seen_.find(p); it != seen_.end())
    return it->second;
  Job job{g.task, g.spec, {g.variant}};
  job.spec.localSize = p.local;
  job.spec.tuning = p.knobs;
  const std::vector<Result> results = runner_.Run({job});
  Outcome out;
  if (results.empty())
    return {false, 0, "interrupted"};
  const Result& r = results.front();
  if (r.status == Status::Passed && r.gelemS > 0)
    out = {true, r.gelemS, ""};
  else if (r.status == Status::Failed)
    out.why = "discarded: validation failed: " + r.message;
  else
    out.why = fmt::format("discarded: {}: {}", ToString(r.status), r.message);
  ++tried_;
  seen_[p] = out;
  Say(fmt::format("      {}: {}", p.Text(),
                  out.ok ? fmt::format("{:.3f} Gelem/s", out.gelemS) : out.why));
  return out;
}

double Tuner::Retime(const Group& g, const Point& p) {
  Job job{g.task, g.spec, {g.variant}};
  job.spec.localSize = p.local;
  job.spec.tuning = p.knobs;
  const std::vector<Result> results = runner_.Run({job});
  const bool ok = !results.empty() && results.front().status == Status::Passed;
  const double gelemS = ok ? results.front().gelemS : 0;
  Say(fmt::format("      again {}: {}", p.Text(),
                  ok ? fmt::format("{:.3f} Gelem/s", gelemS) : std::string("did not pass")));
  return gelemS;
}

std::optional<Confirmation> Tuner::Confirm(const Group& g, const Point& start) {
  if (!(best_ < start) && !(start < best_))
    return std::nullopt;
  Say(fmt::format("      confirming {} against the defaults: {} rounds each, in turn", best_.Text(),
                  o_.rounds));
  std::vector<double> best, deflt;
  for (size_t i = 0; i < o_.rounds && !stop_; ++i) {
    best.push_back(Retime(g, best_));
    deflt.push_back(Retime(g, start));
  }
  if (stop_)
    return std::nullopt;
  const Confirmation c = rsb::Judge(best, deflt);  // Tune.h's: a unity build joins compare's
  Say(fmt::format("      {}: {:+.1f}% (medians of {}+{} rounds), p={:.3f}: {}", best_.Text(),
                  100 * c.gain, best.size(), deflt.size(), c.p, c.Verdict()));
  if (c.Noisy())  // a warning, not progress: said with --quiet too
    std::cerr << fmt::format(
        "warning: {}: too noisy to tune: the defaults' own {} rounds spread {:.1f}% "
        "(coefficient of variation), beyond {:.0f}%, the margin a winner must beat; what is kept "
        "says more of the machine than of the settings (a quieter machine, or more --rounds)\n",
        g.Label(), deflt.size(), 100 * c.defaultCv, 100 * kNoisyCv);
  return c;
}

Found Tuner::Finish(const Group& g, const Point& start, const std::optional<Confirmation>& c,
                    double defaultGelemS, size_t candidates) {
  Found f;
  f.candidate = best_;
  f.candidateGelemS = bestGelemS_;
  ProfileEntry::Confirmed confirmed;
  if (c) {
    defaultGelemS = MedianOf(c->deflt);  // both from the rounds, taken alike
    f.candidateGelemS = MedianOf(c->best);
    confirmed = {c->best.size(), c->p, c->gain, c->defaultCv, c->Verdict()};
    f.noisy = c->Noisy();
    bestGelemS_ = c->kept ? f.candidateGelemS : defaultGelemS;
    if (!c->kept)
      best_ = start;
  }
  f.entry =
      ProfileEntry{g.task->Name(), g.variant, g.codePath,  g.typeBytes,   g.sizeClass, best_.local,
                   best_.knobs,    g.spec.n,  bestGelemS_, defaultGelemS, candidates,  confirmed};
  return f;
}

void Tuner::Try(const Group& g, const Point& start) {
  Point p = start;
  for (const auto& [name, value] : TuningOf(o_.tryPoint)) {
    if (name == "local-size")
      p.local = value;
    else if (p.knobs.count(name))
      p.knobs[name] = value;
  }
  const Outcome out = Measure(g, p);
  if (out.ok) {
    best_ = p;
    bestGelemS_ = out.gelemS;
  }
}

// The variant's own settings on this device, and the space around them.
Point Tuner::Start(const Group& g, std::vector<Dimension>& dims) const {
  const Case c = TuneStart(*g.task, g.variant, g.spec, ctx_.info);
  Point start;
  start.local = c.spec.localSize;
  const auto& tuning = c.tuning;
  dims = {LocalDimension(g, ctx_.info, start.local)};
  const auto knobs = g.task->Tunables();
  for (const auto& name : g.knobs) {
    const auto k = std::find_if(knobs.begin(), knobs.end(),
                                [&](const TuningKnob& x) { return x.name == name; });
    if (k == knobs.end())  // TunedKnobs names a knob the task lacks: a bug of this file
      throw std::logic_error("tune: " + g.task->Name() + " has no knob " + name);
    const auto t = tuning.find(name);
    start.knobs[name] = t != tuning.end() ? t->second : k->value;
    dims.push_back(KnobDimension(*k, start.knobs[name]));
  }
  return start;
}

// Every point, in order (the grid is small).
void Tuner::Grid(const Group& g, const std::vector<Dimension>& dims, Clock::time_point end) {
  std::vector<size_t> at(dims.size(), 0);
  while (!Over(end)) {
    Point p{dims[0].values[at[0]], {}};
    for (size_t d = 1; d < dims.size(); ++d)
      p.knobs[dims[d].name] = dims[d].values[at[d]];
    const Outcome out = Measure(g, p);
    if (Better(out)) {
      best_ = p;
      bestGelemS_ = out.gelemS;
    }
    size_t d = 0;
    while (d < dims.size() && ++at[d] == dims[d].values.size())
      at[d++] = 0;
    if (d == dims.size())
      return;
  }
}

// Coordinate descent: along each dimension in turn, one step up (else down) from the best, going
// on while each step beats it; rounds until one changes nothing (at most 3).
void Tuner::Descent(const Group& g, const std::vector<Dimension>& dims, Clock::time_point end) {
  for (int round = 0; round < 3; ++round) {
    bool changed = false;
    for (const auto& d : dims)
      for (int dir : {+1, -1}) {
        bool moved = false;
        while (!Over(end)) {
          const size_t now = d.name == "local-size" ? best_.local : best_.knobs.at(d.name);
          const size_t at =
              size_t(std::find(d.values.begin(), d.values.end(), now) - d.values.begin());
          if ((dir < 0 && at == 0) || (dir > 0 && at + 1 >= d.values.size()))
            break;
          Point p = best_;
          (d.name == "local-size" ? p.local : p.knobs[d.name]) = d.values[at + dir];
          const Outcome out = Measure(g, p);
          if (!Better(out))
            break;
          best_ = p;
          bestGelemS_ = out.gelemS;
          moved = changed = true;
        }
        if (moved)
          break;
      }
    if (!changed || Over(end))
      return;
  }
}

constexpr size_t kFullGridMax = 16;  // a grid up to this many points is searched whole

std::optional<Found> Tuner::TuneGroup(const Group& g, Clock::time_point end,
                                      const std::string& label) {
  seen_.clear();
  const size_t triedBefore = tried_;
  std::vector<Dimension> dims;
  const Point start = Start(g, dims);
  size_t grid = 1;
  std::vector<std::string> axes;
  for (const auto& d : dims) {
    grid *= d.values.size();
    axes.push_back(fmt::format("{} ({} values)", d.name, d.values.size()));
  }
  const bool whole = grid <= kFullGridMax;
  Say(fmt::format("{} ({}, n={}, {} path): {} over {}", label, ToString(g.spec.type),
                  SizeText(g.spec.n, g.spec.height), g.codePath,
                  !o_.tryPoint.empty() ? "--try"
                  : whole              ? "every point"
                                       : "coordinate descent",
                  fmt::join(axes, ", ")));
  const Outcome deflt = Measure(g, start);
  if (!deflt.ok) {
    defaultFailed_ = defaultFailed_ || deflt.why.find("validation failed") != std::string::npos;
    Say("      not tuned: the default settings " + deflt.why.substr(deflt.why.find(':') + 2));
    return std::nullopt;
  }
  best_ = start;
  bestGelemS_ = deflt.gelemS;
  if (!o_.tryPoint.empty())
    Try(g, start);
  else if (whole)
    Grid(g, dims, end);
  else
    Descent(g, dims, end);
  const size_t candidates = tried_ - triedBefore;
  if (candidates < 2) {  // the default alone says nothing of the space around it
    Say(!o_.tryPoint.empty() ? "      not tuned: --try gives its default settings"
                             : "      not tuned: its share of the budget ended with the default "
                               "settings");
    return std::nullopt;
  }
  const std::optional<Confirmation> c = Confirm(g, start);
  if (stop_) {  // a winner not timed again beside the default is no winner: nothing written
    Say("      not tuned: interrupted before its best was confirmed");
    return std::nullopt;
  }
  return Finish(g, start, c, deflt.gelemS, candidates);
}

// Every --task and --variant named must have something to tune.
void CheckSelection(const TuneOptions& o, const std::vector<Group>& groups, const Tasks& tasks,
                    const DeviceInfo& device) {
  for (const auto& v : o.variants)
    if (v != "all" && std::none_of(groups.begin(), groups.end(), [&](const Group& g) {
          return v == g.variant || v == g.task->Name() + "/" + g.variant;
        }))
      throw UsageError(fmt::format("--variant '{}': not a tunable variant; allowed: {} or all", v,
                                   TunableNames(tasks, device)));
  for (const auto& t : o.tasks)
    if (std::none_of(groups.begin(), groups.end(),
                     [&](const Group& g) { return g.task->Name() == t; }))
      throw UsageError(fmt::format("--task '{}': nothing to tune; allowed: tasks of {}", t,
                                   TunableNames(tasks, device)));
  for (const auto& t : o.tryPoint) {
    const std::string knob = t.substr(0, t.find('='));
    if (knob != "local-size" && std::none_of(groups.begin(), groups.end(), [&](const Group& g) {
          return std::find(g.knobs.begin(), g.knobs.end(), knob) != g.knobs.end();
        }))
      throw UsageError(fmt::format(
          "--try '{}': no variant selected searches {} on this device; allowed: local-size or "
          "the knobs the selected variants search",
          t, knob));
  }
}

// The profile written: the entries found now, and those of the file there before (for this
// device) that were not searched again.
Profile Merged(const std::string& path, const TaskCatalog& catalog, const DeviceInfo& device,
               const std::vector<ProfileEntry>& found) {
  Profile p;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    const Profile old = ReadProfile(path, catalog);
    if (old.platform == device.platform && old.device == device.name &&
        old.driver == device.driverVersion)
      for (const auto& e : old.entries)
        if (std::none_of(found.begin(), found.end(), [&](const ProfileEntry& f) {
              return f.task == e.task && f.variant == e.variant && f.codePath == e.codePath &&
                     f.typeBytes == e.typeBytes && f.sizeClass == e.sizeClass;
            }))
          p.entries.push_back(e);
  }
  p.entries.insert(p.entries.end(), found.begin(), found.end());
  p.platform = device.platform;
  p.device = device.name;
  p.driver = device.driverVersion;
  return p;
}

// A row per group tuned: the search's best (the candidate) with its Gelem/s, the defaults',
// the gain, the points tried, and its confirmation: rounds a side, p and what was kept.
void WriteTuneTable(std::ostream& out, const std::vector<Found>& found) {
  out << fmt::format(
      "{:<27} {:>5} {:<5} {:>8} {:<4} {:>5} {:<40} {:>9} {:>9} {:>7} {:>5} {:>6} {:>5}  {}\n",
      "variant", "bytes", "class", "n", "path", "local", "knobs", "Gelem/s", "default", "gain",
      "tried", "rounds", "p", "verdict");
  size_t noisy = 0;
  for (const auto& f : found) {
    const ProfileEntry& e = f.entry;
    std::string knobs;
    for (const auto& [k, v] : f.candidate.knobs)
      knobs += fmt::format("{}{}={}", knobs.empty() ? "" : " ", k, v);
    const bool confirmed = e.confirm.rounds > 0;
    noisy += f.noisy;
    out << fmt::format(
        "{:<27} {:>5} {:<5} {:>8} {:<4} {:>5} {:<40} {:>9.3f} {:>9.3f} {:>+6.1f}% {:>5} {:>6} "
        "{:>5}  {}{}\n",
        e.task + "/" + e.variant, e.typeBytes, e.sizeClass, e.n, e.codePath, f.candidate.local,
        knobs, f.candidateGelemS, e.defaultGelemS,
        e.defaultGelemS > 0 ? 100 * (f.candidateGelemS / e.defaultGelemS - 1) : 0.0, e.candidates,
        confirmed ? fmt::format("{}+{}", e.confirm.rounds, e.confirm.rounds) : "-",
        confirmed ? fmt::format("{:.3f}", e.confirm.pValue) : "-",
        confirmed ? e.confirm.verdict : "the defaults are the search's best",
        f.noisy ? fmt::format("; too noisy (CV {:.1f}%)", 100 * e.confirm.defaultCv) : "");
  }
  if (noisy)
    out << fmt::format(
        "warning: {} of {} too noisy to tune: the defaults' own rounds spread beyond a "
        "coefficient of variation of {:.0f}%, the margin a winner must beat\n",
        noisy, found.size(), 100 * kNoisyCv);
}

// Where the profile goes, checked before the search by the rule of every output (Files.h):
// --output's folder must exist; the cache folder is made only when the profile is written.
void CheckWritable(const std::string& path, bool given) {
  if (given)
    CheckOutputFile("--output", path);
  else
    CheckOutputFolder("profile folder", std::filesystem::path(path).parent_path().string());
}

// The line that says a group's entry is in the profile.
std::string WrittenLine(const Found& f) {
  const ProfileEntry& e = f.entry;
  return fmt::format("      written: {}: {:.3f} Gelem/s, {:+.1f}% over the default ({} candidates)",
                     Point{e.localSize, e.tune}.Text(), e.gelemS,
                     100 * (e.gelemS / e.defaultGelemS - 1), e.candidates);
}

// The groups in turn, each given an equal share of what is left of the budget; each group's entry
// written (write: the profile with every entry found so far) as soon as it is found.
std::vector<Found> Search(Tuner& tuner, const std::vector<Group>& groups, const TuneOptions& o,
                          const std::atomic<bool>& stop,
                          const std::function<void(const std::vector<Found>&)>& write) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(o.budgetS));
  std::vector<Found> found;
  for (size_t i = 0; i < groups.size() && !stop; ++i) {
    const std::string label = fmt::format("[{:>2}/{}] {}", i + 1, groups.size(), groups[i].Label());
    const auto now = Clock::now();
    if (now >= deadline) {
      if (!o.quiet)
        std::cerr << label << ": not tuned: the budget is spent\n";
      continue;
    }
    const auto end = now + (deadline - now) / std::ptrdiff_t(groups.size() - i);
    if (auto e = tuner.TuneGroup(groups[i], end, label)) {
      found.push_back(*e);
      write(found);
      if (!o.quiet)
        std::cerr << WrittenLine(found.back()) << "\n";
    }
  }
  return found;
}

// Which profile a run on this device loads now, found by the run's own lookup (RunProfile) with
// the options of a command line that names none, said against the file tune wrote (path).
std::string NextRun(const std::string& path, const TaskCatalog& catalog, const DeviceInfo& device) {
  const char* const plainArgs[] = {"reduce-scan-bench"};
  const Options plain = ParseCommandLine(1, plainArgs, catalog);
  const std::string use = fmt::format("; --profile '{}' makes a run load it", path);
  std::optional<Profile> next;
  try {
    next = RunProfile(plain, catalog, device);
  } catch (const UsageError& e) {
    return fmt::format("the next run on this device stops at another profile: {}{}", e.what(), use);
  }
  if (plain.noProfile)
    return "the next run on this device loads no profile (RSB_NO_PROFILE is set)" + use;
  if (!next)
    return "the next run on this device loads no profile" + use;
  std::error_code ec;
  if (std::filesystem::equivalent(next->path, path, ec))
    return "the next run on this device loads it (--no-profile: not)";
  const auto in = [&](const std::string& dir) {
    std::error_code e;
    return !dir.empty() &&
           std::filesystem::equivalent(std::filesystem::path(next->path).parent_path(), dir, e);
  };
  return fmt::format("the next run on this device loads {}{}, not this file{}", next->path,
                     in(UserProfileDir())      ? " (the newest for this device in the cache folder)"
                     : in(ShippedProfileDir()) ? " (the one shipped for this device)"
                                               : "",
                     use);
}

// The device tune runs on: one, by --platform and --device.
cl::Device TuneDevice(const TuneOptions& o) {
  const auto devices =
      SelectDevices(o.platform, o.device.empty() ? std::vector<std::string>{}
                                                 : std::vector<std::string>{o.device});
  if (devices.size() != 1)
    throw UsageError(fmt::format("--device '{}': selects {} devices; allowed: one device", o.device,
                                 devices.size()));
  return devices[0];
}

// The profile tune writes: --output, else the device's in the cache folder.
std::string ProfilePath(const TuneOptions& o, const DeviceInfo& device) {
  if (o.output.empty() && UserProfileDir().empty())
    throw UsageError("--output: neither XDG_CACHE_HOME nor HOME is set; allowed: --output FILE");
  return o.output.empty() ? UserProfileDir() + "/" + ProfileSlug(device) + ".json" : o.output;
}

// The profile at path: what was there for this device, with the entries found (Merged).
Profile WriteEntries(const TuneOptions& o, const std::string& path, const TaskCatalog& catalog,
                     const DeviceInfo& device, const std::vector<Found>& found) {
  std::vector<ProfileEntry> entries;
  for (const auto& f : found)
    entries.push_back(f.entry);
  Profile p = Merged(path, catalog, device, entries);
  p.created = UtcNow();
  p.suite = ThisBuild().version;
  p.budgetS = o.budgetS;
  p.seed = o.seed;
  p.note = o.note;
  WriteProfile(path, p);
  return p;
}

void WriteFound(const TuneOptions& o, const std::string& path, const TaskCatalog& catalog,
                const DeviceInfo& device, const std::vector<Found>& found, size_t tried) {
  const Profile p = WriteEntries(o, path, catalog, device, found);
  WriteTuneTable(std::cout, found);
  std::cout.flush();
  if (!o.quiet)
    std::cerr << fmt::format("tune: {} candidates; {} entries written to {}; {}\n", tried,
                             p.entries.size(), path, NextRun(path, catalog, device));
}

int RunTune(int argc, char** argv, const Tasks& tasks) {
  const TaskCatalog catalog = CatalogOf(tasks);
  std::vector<TuningKnob> knobs;
  for (const auto& t : catalog)
    knobs.insert(knobs.end(), t.knobs.begin(), t.knobs.end());
  TuneOptions o;
  if (!ParseTuneOptions(argc, argv, knobs, o))
    return kExitOk;
  // Ctrl-C or SIGTERM: the search stops where it is, what was found is in the profile, exit
  // 130; a second one ends the process. Before the device is touched: its linker children too
  // must not see the signal (InstallInterruptThread).
  InstallInterruptThread(/*secondEnds=*/true);
  const std::string kernelDir = FindKernelDir(o.kernels, argv[0]);
  TaskContext ctx(TuneDevice(o), kernelDir);
  const std::vector<Group> groups = MakeGroups(tasks, o, ctx.info);
  CheckSelection(o, groups, tasks, ctx.info);
  if (groups.empty())
    throw UsageError(fmt::format(
        "--task/--variant/--type-bytes: nothing to tune; allowed: variants with knobs on this "
        "device: {}",
        TunableNames(tasks, ctx.info)));
  const std::string path = ProfilePath(o, ctx.info);
  CheckWritable(path, !o.output.empty());
  Merged(path, catalog, ctx.info, {});  // a bad file there: refused before the search
  if (!o.quiet)
    std::cerr << fmt::format(
        "tune: {} ({}, driver {}): {} groups, budget {} s for all (about {:.1f} s each), "
        "candidates validated, then timed for {} s; the best confirmed in {} rounds; profile: "
        "{}\n",
        ctx.info.name, ctx.info.platform, ctx.info.driverVersion, groups.size(), o.budgetS,
        o.budgetS / double(groups.size()), o.candidateS, o.rounds, path);
  Tuner tuner(ctx, o, InterruptFlag());
  const std::vector<Found> found = Search(
      tuner, groups, o, InterruptFlag(),
      [&](const std::vector<Found>& so_far) { WriteEntries(o, path, catalog, ctx.info, so_far); });
  if (InterruptFlag() && found.empty()) {
    std::cerr << fmt::format(
        "tune: interrupted before any winner was confirmed: {} left as it was\n", path);
    return kExitInterrupted;
  }
  WriteFound(o, path, catalog, ctx.info, found, tuner.Tried());
  if (InterruptFlag())
    return kExitInterrupted;
  return tuner.DefaultFailed() ? kExitValidationFailed : kExitOk;
}

}  // namespace

std::string Confirmation::Verdict() const {
  if (kept)
    return "kept";
  if (best.empty() || std::find(best.begin(), best.end(), 0.0) != best.end())
    return "failed on a second look, kept default";
  if (!(p < kConfirmAlpha))
    return "not significant, kept default";
  if (gain < 0)
    return "slower, kept default";
  return fmt::format("below the {:.0f}% margin, kept default", 100 * kTuneMargin);
}

Confirmation Judge(std::vector<double> best, std::vector<double> deflt) {
  Confirmation c;
  c.best = std::move(best);
  c.deflt = std::move(deflt);
  c.p = MannWhitneyP(c.best, c.deflt);
  const double median = MedianOf(c.deflt);
  c.gain = median > 0 ? MedianOf(c.best) / median - 1 : 0;
  double sum = 0, squares = 0;
  for (const double x : c.deflt)
    sum += x;
  const double n = double(c.deflt.size()), mean = n > 0 ? sum / n : 0;
  for (const double x : c.deflt)
    squares += (x - mean) * (x - mean);
  c.defaultCv = n > 1 && mean > 0 ? std::sqrt(squares / (n - 1)) / mean : 0;
  const bool passed =
      !c.best.empty() && std::find(c.best.begin(), c.best.end(), 0.0) == c.best.end();
  c.kept = passed && c.p < kConfirmAlpha && c.gain > kTuneMargin;
  return c;
}

int Tune(int argc, char** argv, const Tasks& tasks) {
  return ExitStatusOf([&] { return RunTune(argc, argv, tasks); });
}

}  // namespace rsb
