#include "tools/grade/Junit.h"

#include "platform/Pattern.h"
#include "report/ReportUtil.h"
#include "tools/grade/Text.h"

#include <fmt/format.h>

namespace rsb::grade {

namespace {

std::string Testcase(const HandinGrade& h, const ItemGrade& g, size_t& failures, size_t& errors) {
  std::string x = fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n",
                              EscapeMarkup(h.name), EscapeMarkup(g.item->id));
  const std::string message =
      EscapeMarkup(g.status + (g.detail.empty() ? "" : ": " + Headline(g.detail)));
  const bool full = g.status == "passed" && g.points >= g.item->points;
  if (!full && (g.status == "passed" || g.status == "failed")) {
    ++failures;
    x += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", message, g.status,
                     EscapeMarkup(g.detail));
  } else if (!full) {
    ++errors;
    x += fmt::format("      <error message=\"{}\" type=\"{}\">{}</error>\n", message, g.status,
                     EscapeMarkup(g.detail));
  }
  return x + fmt::format("      <system-out>{}: {} / {} points</system-out>\n    </testcase>\n",
                         EscapeMarkup(g.status), Points(g.points), Points(g.item->points));
}

}  // namespace

std::string JunitTestsuite(const RunInfo& run, const HandinGrade& h) {
  size_t failures = 0, errors = 0;
  std::string cases;
  for (const auto& g : h.items)
    cases += Testcase(h, g, failures, errors);
  return fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\">\n"
      "    <properties>\n      <property name=\"points\" value=\"{}\"/>\n"
      "      <property name=\"max_points\" value=\"{}\"/>\n"
      "      <property name=\"rubric\" value=\"{}\"/>\n"
      "      <property name=\"device\" value=\"{}\"/>\n    </properties>\n{}  </testsuite>\n",
      EscapeMarkup(h.name), h.items.size(), failures, errors, Points(h.total), Points(h.max),
      EscapeMarkup(run.rubric->name), EscapeMarkup(DeviceText(run.device, run.checkDevice)), cases);
}

std::string JunitDocument(const std::string& rubricName, const std::vector<std::string>& suites) {
  size_t counts[3] = {0, 0, 0};
  static const Pattern head(
      R"re(<testsuite name="[^"]*" tests="(\d+)" failures="(\d+)" errors="(\d+)")re");
  std::string body;
  for (const auto& s : suites) {
    if (const auto m = head.Search(s))
      for (int i = 0; i < 3; ++i)
        counts[i] += std::stoul((*m)[i + 1]);
    body += s;
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\" tests=\"{}\" "
      "failures=\"{}\" errors=\"{}\">\n{}</testsuites>\n",
      EscapeMarkup(rubricName), counts[0], counts[1], counts[2], body);
}

}  // namespace rsb::grade
