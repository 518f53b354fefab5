#include "report/ReportUtil.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace rsb {

std::string ToString(Change c) {
  switch (c) {
    case Change::Faster:
      return "faster";
    case Change::Slower:
      return "slower";
    case Change::Same:
      return "same";
    case Change::Unknown:
      return "unknown";
  }
  return "?";
}

std::string ToString(Basis b) {
  switch (b) {
    case Basis::Runs:
      return "runs";
    case Basis::Rounds:
      return "rounds";
    case Basis::PairedRounds:
      return "paired rounds";
  }
  return "?";
}

size_t Comparison::Regressions() const {
  size_t k = 0;
  for (const auto& m : matched)
    k += m.regression;
  return k;
}

std::string PercentText(double fraction) {
  return fmt::format("{:g}%", 100 * fraction);
}

// Four significant digits, never in exponent form (an H100 case takes 0.00004683 ms).
std::string MsText(double v) {
  if (!(v > 0) || !std::isfinite(v))
    return fmt::format("{:g}", v);
  const int digits = std::max(0, 3 - static_cast<int>(std::floor(std::log10(v))));
  return fmt::format("{:.{}f}", v, digits);
}

std::string CiText(const StoredResult& r) {
  return r.HasCi() ? fmt::format("[{}, {}]", MsText(r.result.timeMs.ciLow),
                                 MsText(r.result.timeMs.ciHigh))
                   : "-";
}

std::string MedianText(const StoredResult& r) {
  return r.Timed() ? MsText(r.result.timeMs.median) : ToString(r.result.status);
}

std::string JudgedMsText(const CaseComparison& c, bool fresh) {
  const std::optional<JudgedMedian>& m = fresh ? c.newMedian : c.baseMedian;
  return m ? MsText(m->ms) : MedianText(fresh ? c.fresh : c.base);
}

std::string JudgedCiText(const CaseComparison& c, bool fresh) {
  const std::optional<JudgedMedian>& m = fresh ? c.newMedian : c.baseMedian;
  if (!m)
    return CiText(fresh ? c.fresh : c.base);
  return m->ciHigh > 0 ? fmt::format("[{}, {}]", MsText(m->ciLow), MsText(m->ciHigh)) : "-";
}

// The note, after what else defines the case where it has more than n (an image's shape, a
// task's parameters: "4096x4096 mask-width=5").
std::string NoteWithExtra(const CaseComparison& c) {
  const std::string extra = c.base.Extra();
  if (extra.empty())
    return c.note;
  return extra.substr(1) + (c.note.empty() ? "" : "; " + c.note);
}

std::string LocalText(const CaseComparison& c) {
  const size_t base = c.base.result.localSize, fresh = c.fresh.result.localSize;
  return base == fresh ? std::to_string(base) : fmt::format("{}/{}", base, fresh);
}

std::string RatioText(const CaseComparison& c) {
  return c.speedup ? fmt::format("{:.3f}x", *c.speedup) : "-";
}

std::string DeviceList(const std::vector<DeviceId>& devices) {
  std::string s;
  for (const auto& d : devices)
    s += (s.empty() ? "" : "; ") + d.Label();
  return s;
}

// " on <device>" for a case in one file only, where the device is part of the match and the
// files do not hold the same one device.
std::string OnDevice(const StoredResult& r, const CompareReport& report) {
  const std::vector<DeviceId>&b = report.base.devices, &n = report.fresh.devices;
  const bool oneDevice = b.size() == 1 && n.size() == 1 && b[0] == n[0];
  return report.settings.acrossDevices || oneDevice ? "" : " on " + r.device.Label();
}

CompareSummary SummariseComparison(const Comparison& c) {
  CompareSummary s;
  double logSum = 0;
  for (const auto& m : c.matched) {
    if (!m.speedup) {
      ++s.untimed;
      continue;
    }
    ++s.timed;
    logSum += std::log(*m.speedup);
    s.regressions += m.regression;
    switch (m.change) {
      case Change::Faster:
        ++s.faster;
        break;
      case Change::Slower:
        ++s.slower;
        break;
      case Change::Same:
        ++s.same;
        break;
      case Change::Unknown:
        ++s.unknown;
        break;
    }
  }
  s.geomean = s.timed ? std::exp(logSum / double(s.timed)) : 0;
  return s;
}

std::string CompareSummaryLine(const Comparison& c, const CompareSettings& settings) {
  const CompareSummary s = SummariseComparison(c);
  std::string line = fmt::format(
      "{} matched cases: {} faster, {} slower ({} beyond the {} threshold), {} same, {} unknown "
      "(no CI)",
      c.matched.size(), s.faster, s.slower, s.regressions, PercentText(settings.threshold), s.same,
      s.unknown);
  if (s.untimed)
    line += fmt::format(", {} not timed in both", s.untimed);
  line += fmt::format("; {} only in BASE, {} only in NEW", c.onlyBase.size(), c.onlyNew.size());
  if (s.timed)
    line += fmt::format("; geometric mean of the throughput ratios {:.3f}x", s.geomean);
  return line;
}

const char* const kRatioMeaning =
    "ratio = throughput NEW/BASE = BASE median time / NEW median time (> 1: NEW faster)";

std::string CompareRule(const Comparison& c, const CompareSettings& s) {
  bool runs = false, rounds = false, paired = false, scaled = false;
  for (const auto& m : c.matched) {
    runs = runs || (m.speedup && m.basis == Basis::Runs);
    rounds = rounds || (m.speedup && m.basis == Basis::Rounds);
    paired = paired || (m.speedup && m.basis == Basis::PairedRounds);
    scaled = scaled || m.newScale != 1;
  }
  std::vector<std::string> rules;
  if (rounds)
    rules.push_back(
        "in rows over rounds (note \"p=... over N+M rounds\"; --repetitions), BASE ms and NEW ms "
        "are the medians of the rounds' medians with their 95% CI across the rounds (from 6), and "
        "faster/slower only where a Mann-Whitney U test of the rounds' medians gives p < 0.05 and "
        "the ratio is beyond the threshold");
  if (paired)
    rules.push_back(
        "in rows over paired rounds (note \"p=... over N paired rounds\"; `ab`), each round of "
        "BASE timed in turns with the same round of NEW, BASE ms and NEW ms are the medians of "
        "the rounds' medians, the ratio is the median of the rounds' ratios (each the median over "
        "the round's pairs of runs, BASE's i-th and NEW's i-th, of BASE time / NEW time), and "
        "faster/slower only where a sign test of the rounds' ratios gives p < "
        "0.05 and the ratio is beyond the threshold");
  if (runs || rules.empty())
    rules.push_back(std::string(rules.empty() ? "" : "in other rows, ") +
                    "BASE ms and NEW ms are the medians of every timed run with their 95% CI, and "
                    "faster/slower only where the 95% confidence intervals of the medians do not "
                    "overlap");
  if (scaled)
    rules.push_back(
        "where a note says \"judged with NEW's times xS\", ratio = BASE ms / (NEW ms x S)");
  std::string text;
  for (const auto& r : rules)
    text += r + "; ";
  return text + fmt::format(
                    "a regression is significantly slower with NEW time / BASE time > {:g} ({} "
                    "threshold){}",
                    1 + s.threshold, PercentText(s.threshold),
                    c.devices ? ", never between two devices" : "");
}

}  // namespace rsb
