// `reduce-scan-bench tune`: searches the local size and --tune knobs of every tunable variant
// (the single-pass reductions and scans, the tiled and cached convolutions; src/run/Profile.h's
// TunedKnobs) on one device, at the sizes of the default runs (size classes large and small) and
// both type widths, and writes the best of each to the device's tuning profile, which later runs
// load. Every candidate is run by the runner, so validated; one whose validation fails is
// discarded (and said so). The search is bounded by a time budget for everything (--budget,
// default 300 s), shared out over the groups; where a group's grid is small it is searched whole,
// else by coordinate descent from the defaults (deterministic: the same order every time; a
// candidate replaces the best only when faster by more than kStepMargin, so noise does not move
// it). The search's best is then confirmed against the defaults (Judge, below) and kept only
// where that finds it faster. Progress on stderr, the table of what it found on stdout.
//   reduce-scan-bench tune [--budget S] [--task T] [--variant V] [--size-class large,small]
//                          [--type-bytes 4,8] [--rounds N] [--try NAME=V,...] [--output FILE]
//                          [--platform P] [--device D] ...
// Exit status: 0 done, 1 a variant's default settings failed validation, 2 usage, 3 device or
// system error, 130 interrupted (what was found so far is written).
#pragma once

#include "engine/Case.h"
#include "engine/IComputeTask.h"

#include <memory>
#include <string>
#include <vector>

namespace rsb {

constexpr double kTuneMargin = 0.03;
// 1%: the H200's tiled-2d went from 8 to 9 rows at +2% (16384x16384), a step a 3% margin stopped.
constexpr double kStepMargin = 0.01;

// Confirmation, each group's last step: the search's best and the defaults timed in turn (best,
// defaults, best, ...: a slow spell of the machine touches both alike), kConfirmRounds rounds a
// side or --rounds, each round one timed case of --candidate-time. 5 a side: the U test's
// smallest two-sided p is 0.008 there, 0.029 with 4 (a clean sweep only) and 0.1 with 3 (never).
constexpr size_t kConfirmRounds = 5;
constexpr double kConfirmAlpha = 0.05;
// Too noisy to tune: the defaults' own rounds spread beyond this coefficient of variation (their
// standard deviation over their mean), the margin a winner must beat. There a true gain of twice
// the margin (6%) is kept in 2 tunes of 3 with 5 rounds a side, at a CV of 5% in fewer than 1 of 3
// (simulated, normal noise): a winner kept or lost says more of the machine than of the setting.
constexpr double kNoisyCv = kTuneMargin;

// The rounds of a confirmation and what they decided.
struct Confirmation {
  std::vector<double> best, deflt;  // Gelem/s of each round (0: it did not pass)
  double p = 1;                     // two-sided, Mann-Whitney U (compare's: tools/Compare.h)
  double gain = 0;                  // the medians of the rounds: best / defaults - 1
  double defaultCv = 0;             // the defaults' rounds: standard deviation / mean
  bool kept = false;
  bool Noisy() const { return defaultCv > kNoisyCv; }
  // "kept", or why the defaults stay: "not significant, kept default", "below the 3% margin, kept
  // default", "slower, kept default", "failed on a second look, kept default".
  std::string Verdict() const;
};

// The best is kept only where every one of its rounds passed, p < kConfirmAlpha and gain >
// kTuneMargin.
Confirmation Judge(std::vector<double> best, std::vector<double> deflt);

// Where tune's search of a variant starts on the device: the case the runner runs with the
// variant's own settings, whose local size and knobs (Case::tuning) the search steps from.
Case TuneStart(const IComputeTask& task, const std::string& variant, const ProblemSpec& spec,
               const DeviceInfo& device);

int Tune(int argc, char** argv, const std::vector<std::unique_ptr<IComputeTask>>& tasks);

}  // namespace rsb
