// A hand-in's correctness, faster: per task, every case of the items it grades in one child run
// (RunLists), whose verdicts decide the groups whose cases all passed; and the reference
// measurements made before the first hand-in (MeasureReferences).
#pragma once

#include "grade/Context.h"

#include <map>
#include <string>
#include <vector>

namespace rsb::grade {

// Per task: every case of its items (items: per task, the items the hand-in can be graded on) in
// one child run of the task's code (codes: per task). Its verdicts: FastVerdicts (Context.h).
FastVerdicts RunLists(Context& ctx, Device& device, const std::map<std::string, Code>& codes,
                      const std::map<std::string, std::vector<const Item*>>& items);

// Before the first hand-in, on --jobs threads (the limits are measured under the load the
// hand-ins will meet): each task's list run (ListLimit) and each item's Oclgrind case. The
// reference of a single case group is measured where a hand-in first needs it (TimeLimit).
void MeasureReferences(Context& ctx, Device& device);

}  // namespace rsb::grade
