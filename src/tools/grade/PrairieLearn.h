// PrairieLearn's external grader results (https://prairielearn.readthedocs.io, "Externally graded
// questions"): the results.json that `grade --format prairielearn` writes of its one hand-in and
// grading/prairielearn/run copies to /grade/results/results.json.
#pragma once

#include "tools/grade/Report.h"

#include <nlohmann/json.hpp>

namespace rsb::grade {

// {gradable: true, score: total / max (0-1), message (the total and the run's settings), output
// (the .md report), tests: one per item {name, description (its title), points, max_points,
// message (status and the line that says most), output (the item's details)}}.
nlohmann::json ToPrairieLearn(const RunInfo& run, const HandinGrade& h);

}  // namespace rsb::grade
