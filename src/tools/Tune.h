// `reduce-scan-bench tune`: searches the local size and --tune knobs of every tunable variant
// (the single-pass reductions and scans, the tiled and cached convolutions; src/run/Profile.h's
// TunedKnobs) on one device, at the sizes of the default runs (size classes large and small) and
// both type widths, and writes the best of each to the device's tuning profile, which later runs
// load. Every candidate is run by the runner, so validated; one whose validation fails is
// discarded (and said so). The search is bounded by a time budget for everything (--budget,
// default 300 s), shared out over the groups; where a group's grid is small it is searched whole,
// else by coordinate descent from the defaults (deterministic: the same order every time; a
// candidate replaces the best only when faster by more than kStepMargin, so noise does not move
// it, and the search's best is kept only where, timed again, it beats the defaults by
// kTuneMargin). Progress on stderr, the table of what it found on stdout.
//   reduce-scan-bench tune [--budget S] [--task T] [--variant V] [--size-class large,small]
//                          [--type-bytes 4,8] [--output FILE] [--platform P] [--device D] ...
// Exit status: 0 done, 1 a variant's default settings failed validation, 2 usage, 3 device or
// system error, 130 interrupted (what was found so far is written).
#pragma once

#include "engine/IComputeTask.h"

#include <memory>
#include <vector>

namespace rsb {

constexpr double kTuneMargin = 0.03;
// 1%: the H200's tiled-2d went from 8 to 9 rows at +2% (16384x16384), a step a 3% margin stopped.
constexpr double kStepMargin = 0.01;

int Tune(int argc, char** argv, const std::vector<std::unique_ptr<IComputeTask>>& tasks);

}  // namespace rsb
