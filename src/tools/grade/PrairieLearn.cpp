#include "tools/grade/PrairieLearn.h"

#include "tools/grade/Text.h"

#include <fmt/format.h>

using nlohmann::json;

namespace rsb::grade {

json ToPrairieLearn(const RunInfo& run, const HandinGrade& h) {
  json tests = json::array();
  for (const auto& g : h.items) {
    const std::string headline = Headline(g.detail);
    std::string output =
        fmt::format("{}: {} / {} points\n", g.status, Points(g.points), Points(g.item->points));
    if (!g.detail.empty())
      output += "\n" + g.detail + (g.detail.back() == '\n' ? "" : "\n");
    tests.push_back({{"name", g.item->id},
                     {"description", g.item->title},
                     {"points", g.points},
                     {"max_points", g.item->points},
                     {"message", headline.empty() ? g.status : g.status + ": " + headline},
                     {"output", output}});
  }
  return {{"gradable", true},
          {"score", h.max > 0 ? h.total / h.max : 0.0},
          {"message", fmt::format("{} / {} points. Rubric {}, device {}, seed {}.", Points(h.total),
                                  Points(h.max), run.rubric->name,
                                  DeviceText(run.device, run.checkDevice), run.rubric->seed)},
          {"output", ToMarkdown(run, h)},
          {"tests", tests}};
}

}  // namespace rsb::grade
