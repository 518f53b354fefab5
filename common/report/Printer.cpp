// The one place a format is named and chosen: the table of formats below gives --format its
// names, their parse and each one's printer.
#include "report/ReportUtil.h"

#include "platform/Errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace rsb {

namespace {

struct FormatEntry {
  const char* name;
  OutputFormat format;
  std::unique_ptr<Printer> (*make)(const PrinterOptions&);
};

// The default first.
const std::vector<FormatEntry>& Formats() {
  static const std::vector<FormatEntry> formats = {
      {"table", OutputFormat::Table, MakeTablePrinter},
      {"csv", OutputFormat::Csv, MakeCsvPrinter},
      {"json", OutputFormat::Json, MakeJsonPrinter},
      {"markdown", OutputFormat::Markdown, MakeMarkdownPrinter},
  };
  return formats;
}

}  // namespace

const std::vector<std::string>& FormatNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& f : Formats())
      v.push_back(f.name);
    return v;
  }();
  return names;
}

OutputFormat DefaultFormat() {
  return Formats().front().format;
}

std::string FormatList() {
  const std::vector<std::string>& names = FormatNames();
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return list;
}

OutputFormat ParseFormat(const std::string& name, const std::string& option) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& f : Formats())
    if (lower == f.name)
      return f.format;
  std::string allowed;
  for (const auto& n : FormatNames())
    allowed += (allowed.empty() ? "" : ", ") + n;
  throw UsageError(fmt::format("{}: '{}': not allowed; allowed: {}", option, name, allowed));
}

std::unique_ptr<Printer> MakePrinter(OutputFormat format, const PrinterOptions& options) {
  for (const auto& f : Formats())
    if (f.format == format)
      return f.make(options);
  // Only a value cast from outside the enum gets here: a bug, not input.
  throw std::logic_error(fmt::format("output format {} has no printer", int(format)));
}

}  // namespace rsb
