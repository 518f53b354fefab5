// `reduce-scan-bench ab [--kernels-a DIR] [--kernels-b DIR] [--binary-a BIN] [--binary-b BIN]
// [--rounds N] [--threshold 5%] [--results DIR] [--format F] [RUN OPTIONS...]`: an A/B of two
// kernel folders or two builds in one run. Both run the same selection (RUN OPTIONS, the
// benchmark's own) at once, in --rounds rounds (--repetitions), their timed runs taking turns
// (RunInTurns, platform/Subprocess.h: A, B, A, B, ...), so that round k of A and round k of B saw
// the machine as it was then. Each case's rounds are paired and judged as `compare` judges
// (CompareSettings::paired: a sign test of the rounds' time ratios, p < 0.05,
// and the ratio of the rounds' medians beyond --threshold), printed by compare's printers with
// A as BASE and B as NEW. On a busy machine whose speed drifts from round to round by more than
// the change, two separate runs (and a test over their rounds) cannot see a 10% slowdown; the
// rounds' ratios can.
#pragma once

#include "engine/IComputeTask.h"

#include <memory>
#include <vector>

namespace rsb {

// argv[0] is "ab". Returns the exit status: 0 no significant regression of B against A, 1 one
// or more, or a case that failed its validation in either; 2 bad input (checked before anything
// runs, the run's options by the benchmark's own parser); 3 a program that could not run or
// ended with an error; 130 interrupted.
int AB(int argc, char** argv, const std::vector<std::unique_ptr<IComputeTask>>& tasks);

}  // namespace rsb
