// A hand-in's score on a rubric item: its cases (the worst decides), then the item's Oclgrind
// gate and speed floor, or where a case failed or crashed, Oclgrind's diagnosis of it; and the
// checks, before any hand-in, that this machine can score those.
#pragma once

#include "grade/Context.h"
#include "grade/Report.h"

#include <string>
#include <vector>

namespace rsb::grade {

// The item's grade for the code (hostError: why the hand-in cannot be graded on it, or ""); fast:
// what the hand-in's list runs decided (Lists.h).
ItemGrade GradeItem(Context& ctx, Device& device, const Item& it, const Code& code,
                    const FastVerdicts& fast, const std::string& hostError);

// A speed floor needs a device that can time: the suite's own timed run of the first speed case
// is `untimed` where the device's profiling timer is unusable (ProfilingTimer.h), and then no
// speed item can be scored here. A usage error before any hand-in, as for a case the device
// can never run, naming the items that have speed floors; --items without them still grades.
void CheckSpeedTimer(Context& ctx, Device& device);
// An Oclgrind gate needs oclgrind on PATH (the GPU machines often have none): a usage error
// before any hand-in, naming the items that have one, as for speed floors on an untimed device.
void CheckOclgrindGates(const Rubric& rubric);
// Why a case that fails or crashes cannot be run again under Oclgrind here, to name its line
// (GradeItem): no oclgrind on PATH; "" where it can.
std::string DiagnosisOff();

// A speed item's ratio, the suite's time over the hand-in's (ms): where the suite's rounds were
// timed once for the class (`medians`: each list a round's median), the ratio of the medians;
// else (the timed runs of runs in turns, the i-th of each one after the other) the median of the
// pairs' ratios.
double SpeedRatio(const std::vector<double>& ref, const std::vector<double>& mine, bool medians);

}  // namespace rsb::grade
