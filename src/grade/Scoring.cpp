#include "grade/Scoring.h"

#include "engine/Oclgrind.h"
#include "grade/Text.h"
#include "platform/Errors.h"
#include "platform/Pattern.h"
#include "platform/Subprocess.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <utility>

namespace fs = std::filesystem;

namespace rsb::grade {

namespace {

int Rank(const std::string& status) {
  if (status == "passed")
    return 0;
  if (status == "failed")
    return 1;
  if (status == "error")
    return 2;
  return 3;  // timeout
}

std::optional<json> FirstWrong(const std::string& message) {
  static const Pattern re(
      R"(wrong result at index (\d+): expected (.*), got (.*?)( \(never written: still holds the poison\))? \((\d+) of (\d+) elements wrong\))");
  const auto m = re.Search(message);
  if (!m)
    return std::nullopt;
  return json{{"index", std::stoull((*m)[1])},
              {"expected", (*m)[2]},
              {"actual", (*m)[3]},
              {"never_written", bool(m->matched[4])},
              {"wrong_elements", std::stoull((*m)[5])}};
}

// The cases of a group not run because the item's code already hung in another group: its
// timeout decides the item (0 points) whatever they would do, and each further run would wait
// out its limit again (a hanging kernel costs the list run's limit and one more).
GroupRun NotRun(const CaseGroup& group, const std::string& ls, const std::string& hungIn) {
  GroupRun run;
  for (const CaseSpec& spec : Expand(group)) {
    CaseOutcome c;
    c.label = spec.Label() + (ls == "auto" ? "" : " L=" + ls);
    c.status = "timeout";
    c.message = "not run: the item's code already hung in " + hungIn;
    run.cases.push_back(std::move(c));
  }
  return run;
}

// A run of the item charged as it ran again with the device to itself (GroupRun::ranAlone), said
// once per run (a list run decides several groups).
void NoteAlone(ItemGrade& g, const std::string& what, const std::string& ranAlone) {
  const std::string note = what + ": " + ranAlone;
  if (!ranAlone.empty() &&
      std::find(g.ranAlone.begin(), g.ranAlone.end(), note) == g.ranAlone.end())
    g.ranAlone.push_back(note);
}

// The item's correctness: every case entry at every local size; the worst case decides. Once a
// run of the item's code timed out, its other groups are not run (NotRun).
void GradeCases(Context& ctx, Device& device, const Item& it, const Code& code,
                const FastVerdicts& fast, ItemGrade& g) {
  std::vector<std::string> runOf;  // per case: the run it was part of
  std::string hungIn;              // the run of the item's code that timed out, if one did
  if (const auto l = fast.limits.find(it.task); l != fast.limits.end())
    g.timeLimitS = l->second;  // its cases ran in the task's list run first
  for (size_t gi = 0; gi < it.groups.size() && !Interrupted(); ++gi) {
    const CaseGroup& group = it.groups[gi];
    for (const auto& ls : group.localSizes) {
      const std::string key = RunKey(it, gi, ls, RunKind::Check, Isolation::Shared);
      const auto decided = fast.decided.find(key);
      // In: the item's limit so far (its runs never get less); a decided group's is its list
      // run's, in g.timeLimitS already.
      double limit = g.timeLimitS;
      GroupRun run = !hungIn.empty() ? NotRun(group, ls, hungIn)
                     : decided != fast.decided.end()
                         ? decided->second
                         : RunHandin(ctx, device, code, it, gi, ls, RunKind::Check, limit,
                                     fast.hung.count(key)     ? Start::IsolatedAfterTimeout
                                     : fast.failed.count(key) ? Start::Isolated
                                                              : Start::Fast);
      g.timeLimitS = std::max(g.timeLimitS, limit);
      std::vector<std::string> sizes;
      for (const Extent& e : group.sizes)
        sizes.push_back(SizeText(e));
      const std::string what =
          fmt::format("the run of {} case(s) n={} {} {}{}{}", run.cases.size(), Join(sizes),
                      JoinNames(group.types, ","), JoinNames(group.ops, ","), group.FieldsText(),
                      ls == "auto" ? "" : " L=" + ls);
      if (run.timedOut && hungIn.empty())
        hungIn = what;
      NoteAlone(g, decided != fast.decided.end() ? "the case list of the task " + it.task : what,
                run.ranAlone);
      for (auto& c : run.cases) {
        g.cases.push_back(std::move(c));
        runOf.push_back(what);
      }
    }
  }
  g.status = "passed";
  for (size_t i = 0; i < g.cases.size(); ++i)
    if (const auto& c = g.cases[i]; Rank(c.status) > Rank(g.status)) {
      g.status = c.status;
      g.detail = (c.wholeRun ? runOf[i] : c.label) + ": " + c.message;
      if (c.status == "failed")
        g.firstWrong = FirstWrong(c.message);
    }
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// A speed case's timed child run, its one outcome where that passed with a time (and every
// timed run's time); else null.
const CaseOutcome* Timed(const GroupRun& run) {
  const CaseOutcome* o = run.cases.size() == 1 ? &run.cases[0] : nullptr;
  return o && o->status == "passed" && o->medianMs && *o->medianMs > 0 && !o->samplesMs.empty()
             ? o
             : nullptr;
}

// Why a timed child run gave no time.
std::string NotTimed(const GroupRun& run, bool handin) {
  const CaseOutcome* o = run.cases.size() == 1 ? &run.cases[0] : nullptr;
  return (handin ? "the hand-in's" : "the reference's") + std::string(" timed run: ") +
         (o ? o->status + ": " + o->message : "no result");
}

// One timed run of c on the item's speed case: its median into `into`, or why not into `why`;
// where it ran again with the device to itself, why (GroupRun::ranAlone).
std::string TimeOnce(const Context& ctx, Device& device, const Item& it, const Code& c, bool handin,
                     std::vector<double>& into, std::string& why) {
  const CaseGroup& sc = it.speedCase;
  const GroupRun run = device.Run(c, it, sc, sc.localSizes.front(), RunKind::Timed,
                                  std::max(60.0, ctx.opt.timeoutS), Isolation::Shared);
  if (const CaseOutcome* o = Timed(run))
    into.push_back(*o->medianMs);
  else if (why.empty())
    why = NotTimed(run, handin);
  return run.ranAlone;
}

// The suite's own rounds, timed once for the class (the first hand-in to need them times them).
std::vector<double> ReferenceRounds(Context& ctx, Device& device, const Item& it,
                                    std::string& why) {
  // One thread times them; a hand-in graded beside it waits and uses the same rounds.
  const std::lock_guard once(ctx.referenceSpeedMu);
  {
    std::lock_guard l(ctx.mu);
    if (const auto at = ctx.referenceSpeed.find(it.id); at != ctx.referenceSpeed.end()) {
      why = at->second.second;
      return at->second.first;
    }
  }
  std::vector<double> ref;
  for (int round = 0; round < kSpeedRounds && !Interrupted(); ++round)
    TimeOnce(ctx, device, it, ctx.suite, false, ref, why);
  std::lock_guard l(ctx.mu);
  if (!Interrupted())
    ctx.referenceSpeed.insert({it.id, {ref, why}});
  return ref;
}

// What a speed item's rounds measured: each round's medians (the suite's, the hand-in's); on a
// CPU device also every pair of timed runs (the suite's i-th and the hand-in's i-th ran one
// just after the other); why a round gave no time.
struct SpeedRounds {
  std::vector<double> ref, mine, refRuns, mineRuns;
  std::string why;
  std::string ranAlone;        // why a round of the hand-in's ran again with the device to itself
  bool handinUntimed = false;  // a round's timed run of the hand-in gave no time
};

// One round of the suite's and the hand-in's timed runs in turns (Device::RunInTurns), the
// hand-in's first where handinFirst.
void TimeInTurns(const Context& ctx, Device& device, const Item& it, const Code& code,
                 bool handinFirst, SpeedRounds& t) {
  const CaseGroup& sc = it.speedCase;
  // The suite's child may wait out a hand-in's whole deadline between its turns.
  const double limit = std::max(60.0, ctx.opt.timeoutS);
  const Code& first = handinFirst ? code : ctx.suite;
  const Code& second = handinFirst ? ctx.suite : code;
  auto [a, b] = device.RunInTurns(first, second, it, sc, sc.localSizes.front(),
                                  handinFirst ? limit : 2 * limit, handinFirst ? 2 * limit : limit);
  const GroupRun& suiteRun = handinFirst ? b : a;
  const GroupRun& handinRun = handinFirst ? a : b;
  if (!handinRun.ranAlone.empty())
    t.ranAlone = handinRun.ranAlone;
  const CaseOutcome *r = Timed(suiteRun), *m = Timed(handinRun);
  t.handinUntimed = !m;
  if (r && m) {
    t.ref.push_back(*r->medianMs);
    t.mine.push_back(*m->medianMs);
    const auto pairs = std::ptrdiff_t(std::min(r->samplesMs.size(), m->samplesMs.size()));
    t.refRuns.insert(t.refRuns.end(), r->samplesMs.begin(), r->samplesMs.begin() + pairs);
    t.mineRuns.insert(t.mineRuns.end(), m->samplesMs.begin(), m->samplesMs.begin() + pairs);
  } else if (t.why.empty()) {
    t.why = m ? NotTimed(suiteRun, false) : NotTimed(handinRun, true);
  }
}

// Speed against the suite's own kernels and host code, in kSpeedRounds rounds. Where a timed
// loop has the device alone whatever the machine does (a GPU's children share a device lock: the
// event timer counts device time, which the host's load does not reach), the suite's rounds are
// timed once for the class and the medians of their medians are compared. Elsewhere (a CPU
// device, whose speed is the host's and drifts: on 2 shared cores one command's medians differed
// by up to 40% from run to run) each round runs the suite's code and the hand-in's at once, their
// timed runs in turns (TimeInTurns), first one then the other, and the ratio is the median of the
// pairs' ratios, each pair one after the other on the machine as it was (docs/COURSE.md, "Fair
// under load", has the ratios this gives).
void GradeSpeed(Context& ctx, Device& device, const Item& it, const Code& code, ItemGrade& g) {
  const CaseGroup& sc = it.speedCase;
  const bool once = !ctx.child.deviceLock.empty();
  SpeedRounds t;
  if (once)
    t.ref = ReferenceRounds(ctx, device, it, t.why);
  // Validated elsewhere (--check-platform): the hand-in's programs of the speed case are built
  // on the timed device by a run that shares it, not inside the timed runs that have it alone.
  // Its outcome is the timed runs' to say: they validate too.
  if (device.CheckElsewhere() && !Interrupted())
    device.Run(code, it, sc, sc.localSizes.front(), RunKind::TimedDeviceCheck,
               std::max(60.0, ctx.opt.timeoutS), Isolation::Shared);
  // A round whose hand-in's run gave no time leaves the item untimed: no further round runs (a
  // speed case that never ends costs one run to its limit, not one a round).
  for (int round = 0; round < kSpeedRounds && !t.handinUntimed && !Interrupted(); ++round)
    if (once) {
      const size_t had = t.mine.size();
      const std::string alone = TimeOnce(ctx, device, it, code, true, t.mine, t.why);
      t.ranAlone = alone.empty() ? t.ranAlone : alone;
      t.handinUntimed = t.mine.size() == had;
    } else {
      TimeInTurns(ctx, device, it, code, round % 2 == 1, t);
    }
  NoteAlone(g, "a timed run of " + Expand(sc).front().Label(), t.ranAlone);
  json s = {{"floor", *it.speedFloor},
            {"case", Expand(sc).front().Label()},
            {"rounds", kSpeedRounds},
            {"round_seconds",
             SpeedRoundSeconds(ctx.child, once ? RunKind::Timed : RunKind::TimedInTurns)}};
  if (!t.ref.empty())
    s["reference_ms"] = Median(t.ref);
  if (!t.mine.empty())
    s["handin_ms"] = Median(t.mine);
  s["met"] = false;
  if (!once)
    s["pairs"] = t.refRuns.size();
  if (t.ref.size() == size_t(kSpeedRounds) && t.mine.size() == size_t(kSpeedRounds)) {
    const double ratio =
        once ? SpeedRatio(t.ref, t.mine, true) : SpeedRatio(t.refRuns, t.mineRuns, false);
    s["ratio"] = ratio;
    s["met"] = ratio >= *it.speedFloor;
    if (ratio < *it.speedFloor)
      g.detail = fmt::format("correct, but {:.2f}x the reference's speed, below the floor {:g}x",
                             ratio, *it.speedFloor);
  } else {
    g.detail = "correct, but not timed: " + t.why;
  }
  if (!s["met"].get<bool>())
    g.points = 0;
  g.speed = s;
}

// Where a diagnostic's line is in a helper function: its name and the calls that lead to it, as
// the run's own summary says them (" (LoadShifted, called at Scan.cl:166, 168)"); "" elsewhere or
// where the child's JSON does not say.
std::string CallersOf(const json& d) {
  OclgrindDiagnostic diagnostic;
  diagnostic.function = d.value("function", "");
  const json calls = d.value("called_from", json::array());
  for (const auto& c : calls.is_array() ? calls : json::array())
    if (c.is_object())
      diagnostic.calledFrom.push_back(
          {c.value("function", ""), c.value("file", "?"), c.value("lines", std::vector<size_t>{})});
  return OclgrindHelperText(diagnostic);
}

// The diagnostics of an Oclgrind run, one line each.
std::string Diagnostics(const json& oclgrind) {
  std::string out;
  if (oclgrind.contains("diagnostics") && oclgrind["diagnostics"].is_array())
    for (const auto& d : oclgrind["diagnostics"])
      out += (out.empty() ? "" : "\n") +
             (!d.is_object() ? d.dump()
              : d.value("file", "").empty()  // Oclgrind's own notes, of no place
                  ? fmt::format("{}: {}", d.value("kind", "?"), d.value("text", ""))
                  : fmt::format("{} at {}:{} in {}{}, work-item {} ({})", d.value("kind", "?"),
                                d.value("file", "?"), d.value("line", 0), d.value("kernel", "?"),
                                CallersOf(d), d.value("work_item", "?"), d.value("text", "")));
  return out;
}

// Oclgrind's verdict on the item's Oclgrind case: diagnostics (a note, or the points with
// Deduct) and the instructions executed against the suite's own kernels (the work ceiling).
void GradeOclgrind(Context& ctx, Device& device, const Item& it, const Code& code, ItemGrade& g) {
  double limit = 0;
  const GroupRun run = RunHandin(ctx, device, code, it, 0, it.oclgrindCase.localSizes.front(),
                                 RunKind::Oclgrind, limit);
  const CaseOutcome& c = run.cases.front();
  json o = {{"mode", ToString(it.oclgrind)}, {"case", c.label}};
  std::string problem;
  if (!c.oclgrind) {
    problem = "oclgrind: the run under Oclgrind gave no verdict: " + c.status + ": " + c.message;
  } else {
    o["diagnostics"] = (*c.oclgrind).value("diagnostics", json::array());
    problem = Diagnostics(*c.oclgrind);
    if (!problem.empty())
      problem = "oclgrind: " + problem;
    std::optional<json> ref;
    {
      std::lock_guard l(ctx.mu);
      ref = ctx.referenceOclgrind[it.id];
    }
    const double mineN = (*c.oclgrind).value("instructions", 0.0);
    const double refN = ref ? ref->value("instructions", 0.0) : 0.0;
    o["instructions"] = mineN;
    o["reference_instructions"] = refN;
    if (it.workCeiling && refN <= 0 && problem.empty())
      problem = "oclgrind: the work is not compared: the suite's own kernels gave no count";
    if (refN > 0) {
      o["work_ratio"] = mineN / refN;
      if (it.workCeiling && mineN / refN > *it.workCeiling && problem.empty())
        problem = fmt::format(
            "correct, but it executes {:.2f}x the instructions of the suite's kernel on {} "
            "(Oclgrind's counts; ceiling {:g}x): not work-efficient",
            mineN / refN, c.label, *it.workCeiling);
    }
  }
  o["problem"] = problem;
  g.oclgrind = o;
  if (problem.empty())
    return;
  if (it.oclgrind == GateMode::Deduct) {
    g.status = "failed";  // a race, an access out of bounds, or correct but too much work
    g.points = 0;
    g.detail = problem;
  } else {
    g.detail = "note (no points deducted): " + problem;
  }
}

// A failing case is run again under Oclgrind at its own size where it has at most this many
// elements (the naive scan under Oclgrind on 2 busy cores: n=4097 1.3 s, 16385 2-3.5 s, 65537
// 9 s); a larger one at its item's Oclgrind case's size, which the rubric chose for Oclgrind.
constexpr size_t kDiagnosisElements = 16385;

// A case Oclgrind may explain: a wrong result, or a crash or an OpenCL error of its run (a
// fault); not a timeout (a hanging kernel's cost stays its runs' limits), a kernel that does
// not build (its compiler names the line) or a case the device skips.
bool Diagnosable(const CaseOutcome& c) {
  const auto has = [&](const char* s) { return c.message.find(s) != std::string::npos; };
  return c.status == "failed" ||
         (c.status == "error" && !has("kernel build failed") && !has("skipped on this device") &&
          (has("killed by") || has("OpenCL error") || has("the worker process exited")));
}

// The rubric case of the label, as a group of that one case at its local size.
std::optional<CaseGroup> CaseOf(const Item& it, const std::string& label) {
  for (const CaseGroup& group : it.groups)
    for (const auto& ls : group.localSizes)
      for (const CaseSpec& spec : Expand(group)) {
        if (spec.Label() + (ls == "auto" ? "" : " L=" + ls) != label)
          continue;
        CaseGroup one = GroupOf(group, spec);
        one.localSizes = {ls};
        one.validateRuns = 1;
        return one;
      }
  return std::nullopt;
}

// What the Oclgrind run of the failing case says, put before the device's message (a
// diagnostic) or after it (none, or no verdict).
std::string DiagnosedDetail(const CaseOutcome& c, const std::string& deviceDetail,
                            const std::string& resized) {
  const std::string found = c.oclgrind ? Diagnostics(*c.oclgrind) : "";
  if (!found.empty())
    return fmt::format("{}: oclgrind: {}\n{}on the device: {}", c.label, found,
                       resized.empty() ? "" : resized + "\n", deviceDetail);
  if (c.oclgrind)
    return fmt::format(
        "{}\noclgrind: no diagnostic on {} (out-of-bounds accesses, data races, "
        "barrier divergence){}",
        deviceDetail, c.label, resized.empty() ? "" : "; " + resized);
  return fmt::format("{}\noclgrind: no verdict on {}: {}: {}", deviceDetail, c.label, c.status,
                     Headline(c.message));
}

// Oclgrind's diagnosis of the case that decided a failing item (Diagnosable), so that the report
// names the line where the device only crashed or gave a wrong result: one run under Oclgrind of
// that case (CaseOf; larger than kDiagnosisElements: at the item's Oclgrind case's size) within
// the item's time limit. Only the detail changes: the item had already lost its points.
void Diagnose(Context& ctx, Device& device, const Item& it, const Code& code, ItemGrade& g) {
  const auto decided = std::find_if(g.cases.begin(), g.cases.end(),
                                    [&](const CaseOutcome& c) { return c.status == g.status; });
  if (decided == g.cases.end() || !Diagnosable(*decided) || Interrupted())
    return;
  std::optional<CaseGroup> one = CaseOf(it, decided->label);
  if (!one)
    return;
  if (!ctx.diagnosisOff.empty()) {
    g.diagnosis = json{{"ran", false}, {"why", ctx.diagnosisOff}};
    std::lock_guard l(ctx.mu);
    if (!std::exchange(ctx.diagnosisNoted, true) && !ctx.opt.quiet)
      std::cerr << "note: failing cases are not run again under Oclgrind: " << ctx.diagnosisOff
                << "\n";
    return;
  }
  const Extent own = one->sizes.front();
  std::string resized;
  if (own.n * std::max<size_t>(1, own.height) > kDiagnosisElements) {
    one->sizes = it.oclgrindCase.sizes;
    for (const auto& p : one->declared)  // the failing case's keys (a scan's kind) kept
      if (p.field.empty()) {
        const auto given = it.oclgrindCase.params.find(p.name);
        if (given != it.oclgrindCase.params.end())
          one->params[p.name] = given->second;
        else
          one->params.erase(p.name);
      }
    resized = fmt::format(
        "(Oclgrind ran the item's Oclgrind case's size: the failing case, {}, "
        "has more than {} elements)",
        decided->label, kDiagnosisElements);
  }
  const double limit = std::max(ctx.opt.timeoutS, g.timeLimitS);
  const GroupRun run = device.Run(code, it, *one, one->localSizes.front(), RunKind::Oclgrind, limit,
                                  Isolation::PerCase);
  if (run.cases.empty() || Interrupted())
    return;
  const CaseOutcome& c = run.cases.front();
  g.diagnosis = json{
      {"ran", true},
      {"case", c.label},
      {"failing_case", decided->label},
      {"status", c.status},
      {"diagnostics", c.oclgrind ? c.oclgrind->value("diagnostics", json::array()) : json::array()},
      {"limit_s", limit}};
  g.detail = DiagnosedDetail(c, g.detail, resized);
}

}  // namespace

double SpeedRatio(const std::vector<double>& ref, const std::vector<double>& mine, bool medians) {
  if (medians)
    return Median(ref) / Median(mine);
  std::vector<double> pairs;
  for (size_t i = 0; i < mine.size(); ++i)
    pairs.push_back(ref[i] / mine[i]);
  return Median(pairs);
}

namespace {

// The item's cases, then its gates (or the diagnosis of the case that decided it).
void GradeRuns(Context& ctx, Device& device, const Item& it, const Code& code,
               const FastVerdicts& fast, ItemGrade& g) {
  GradeCases(ctx, device, it, code, fast, g);
  if (g.status != "passed") {
    Diagnose(ctx, device, it, code, g);
    return;
  }
  g.points = it.points;
  if (it.oclgrind != GateMode::Off && !Interrupted())
    GradeOclgrind(ctx, device, it, code, g);
  if (g.points > 0 && it.speedFloor && !Interrupted())
    GradeSpeed(ctx, device, it, code, g);
  if (g.points < it.points)  // correct, but a gate took its points: not `passed` with 0 points
    g.status = "failed";
}

}  // namespace

ItemGrade GradeItem(Context& ctx, Device& device, const Item& it, const Code& code,
                    const FastVerdicts& fast, const std::string& hostError) {
  ItemGrade g;
  g.item = &it;
  if (!hostError.empty()) {
    g.status = "error";
    g.detail = hostError;
    return g;
  }
  if (code.kernels.empty()) {  // FindHandinFiles: no kernels/ folder
    g.status = "error";
    g.detail = "the hand-in has no kernels/ folder";
    return g;
  }
  GradeRuns(ctx, device, it, code, fast, g);
  for (const std::string& note : g.ranAlone)  // the detail says which runs and why
    g.detail += (g.detail.empty() || g.detail.back() == '\n' ? "" : "\n") + note;
  return g;
}

// A speed floor needs a device that can time. The timed runs take the run's rule (--timer auto):
// the profiling events where the device's timer passes its check, else the host's clock, so a
// device such as rusticl is host-timed, not refused; the suite's own timed run of the first speed
// case is `untimed` only where neither may time (ProfilingTimer.h), and then no speed item can
// be scored here. A usage error before any hand-in, as for a case the device
// can never run, naming the items that have speed floors; --items without them still grades.
void CheckSpeedTimer(Context& ctx, Device& device) {
  std::vector<std::string> speed, others;
  const Item* first = nullptr;
  for (const auto& it : ctx.rubric.items) {
    (it.speedFloor ? speed : others).push_back(it.id);
    if (it.speedFloor && !first)
      first = &it;
  }
  if (!first || Interrupted())
    return;
  const CaseGroup& sc = first->speedCase;
  const GroupRun run = device.Run(ctx.suite, *first, sc, sc.localSizes.front(), RunKind::Timed,
                                  std::max(600.0, 10 * ctx.opt.timeoutS), Isolation::Shared);
  const std::string prefix = "validated; not timed: ";
  for (const auto& c : run.cases)
    if (c.status == "untimed")
      throw UsageError(fmt::format(
          "--rubric '{}': {} {} {} a speed floor, but this device cannot time {}: {}; allowed: "
          "a device whose profiling timer works, or --items {}",
          ctx.rubric.path, speed.size() > 1 ? "items" : "item", Join(speed, ", "),
          speed.size() > 1 ? "have" : "has", speed.size() > 1 ? "them" : "it",
          c.message.rfind(prefix, 0) == 0 ? c.message.substr(prefix.size()) : c.message,
          others.empty() ? "naming items without a speed floor (this rubric has none)"
                         : Join(others, ",") + " (the items without a speed floor)"));
  // Timed by the events and passed: the timer is usable, and the class's timed runs need not
  // check it again (a host-timed run's verdict is not "usable": its children check again).
  if (!run.cases.empty() && std::all_of(run.cases.begin(), run.cases.end(), [](const auto& c) {
        return c.status == "passed" && c.medianMs && c.timer == "events";
      }))
    ctx.child.timerVerdict = "usable";
}

// An Oclgrind gate needs oclgrind on PATH (the GPU machines often have none): a usage error
// before any hand-in, naming the items that have one, as for speed floors on an untimed device.
void CheckOclgrindGates(const Rubric& rubric) {
  std::vector<std::string> gated, others;
  for (const auto& it : rubric.items)
    (it.oclgrind != GateMode::Off ? gated : others).push_back(it.id);
  if (gated.empty())
    return;
  try {
    FindOclgrind();
  } catch (const UsageError&) {
    throw UsageError(fmt::format(
        "--rubric '{}': {} {} an Oclgrind gate, but there is no oclgrind on PATH; allowed: "
        "Oclgrind installed (the Debian package oclgrind, scripts/install-deps.sh), a rubric "
        "with \"oclgrind\": \"off\", or --items {}",
        rubric.path, gated.size() > 1 ? "items " + Join(gated, ", ") : "item " + gated[0],
        gated.size() > 1 ? "have" : "has",
        others.empty() ? "naming items without one (this rubric has none)"
                       : Join(others, ",") + " (the items without one)"));
  }
}

std::string DiagnosisOff() {
  try {
    FindOclgrind();
    return "";
  } catch (const UsageError&) {
    return "no oclgrind on PATH (the Debian package oclgrind, scripts/install-deps.sh)";
  }
}

}  // namespace rsb::grade
