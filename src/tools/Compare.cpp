#include "tools/Compare.h"

#include "cli/CliChecks.h"
#include "platform/Errors.h"
#include "platform/Files.h"
#include "report/ReportUtil.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>

namespace rsb {

namespace {

struct CompareOptions {
  std::string basePath, newPath;
  CompareSettings settings;
  OutputFormat format = DefaultFormat();
};

// "5%" or "0.05" (plain decimals): a fraction from 0 to 10 (1000%); nullopt where it is neither.
std::optional<double> ParseThreshold(const std::string& v) {
  bool percent = false;
  const auto x = cli::ParsePercentOrDecimal(v, &percent);
  if (!x || (!percent && *x >= 1) || *x > 10)  // "5" is 5% or 500%: say which
    return std::nullopt;
  return x;
}

std::string CaseKey(const StoredResult& r, const CompareSettings& s) {
  const Result& c = r.result;
  std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}", c.task, c.variant, ToString(c.type),
                                ToString(c.op), KindText(c), c.n, r.Extra());
  if (!s.ignoreLocalSize)
    key += fmt::format("|{}", c.localSize);
  if (!s.acrossDevices)
    key += "|" + r.device.Key();
  return key;
}

// Where the interval of one side is missing, why.
std::string MissingCi(const StoredResult& r, const char* role) {
  return r.ciBad ? fmt::format("CI in {} does not hold its median", role)
                 : fmt::format("no CI in {}", role);
}

void Judge(CaseComparison& c, double threshold) {
  std::vector<std::string> notes;
  const StoredResult &b = c.base, &n = c.fresh;
  const TimeStats &bt = b.result.timeMs, &nt = n.result.timeMs;
  if (!b.Timed() || !n.Timed()) {
    if (!b.Timed())
      notes.push_back(fmt::format("not timed in BASE ({})", ToString(b.result.status)));
    if (!n.Timed())
      notes.push_back(fmt::format("not timed in NEW ({})", ToString(n.result.status)));
  } else {
    c.speedup = bt.median / nt.median;
    if (!b.HasCi() && !n.HasCi() && !b.ciBad && !n.ciBad) {
      notes.push_back("no CI in BASE or NEW");
    } else if (!b.HasCi() || !n.HasCi()) {
      if (!b.HasCi())
        notes.push_back(MissingCi(b, "BASE"));
      if (!n.HasCi())
        notes.push_back(MissingCi(n, "NEW"));
    } else if (nt.ciHigh < bt.ciLow) {
      c.change = Change::Faster;
    } else if (nt.ciLow > bt.ciHigh) {
      c.change = Change::Slower;
      c.regression = nt.median / bt.median > 1 + threshold;
      if (c.regression)
        notes.push_back(fmt::format("REGRESSION beyond {}", PercentText(threshold)));
    } else {
      c.change = Change::Same;
    }
    if (b.HasCi() && b.CiMet() == false)
      notes.push_back("CI target not met in BASE");
    if (n.HasCi() && n.CiMet() == false)
      notes.push_back("CI target not met in NEW");
  }
  // Warm against cold measures the cache as much as the change.
  if (b.result.cold != n.result.cold)
    notes.push_back(fmt::format("BASE {}, NEW {}", b.result.cold ? "cold" : "warm",
                                n.result.cold ? "cold" : "warm"));
  for (const auto& s : notes)
    c.note += (c.note.empty() ? "" : "; ") + s;
}

CompareOptions ParseCompareOptions(int argc, char** argv, bool& help) {
  CompareOptions o;
  CLI::App app{
      "reduce-scan-bench compare: per case of two result files (`--format json`), the\n"
      "throughput ratio NEW/BASE of the medians, marked faster or slower only where the 95%\n"
      "confidence intervals of the medians do not overlap. Exit status 1 on a significant\n"
      "regression beyond --threshold, 2 on bad input.",
      "reduce-scan-bench compare"};
  app.set_help_flag();
  app.add_flag("-h,--help", help, "Print this help and exit");
  app.add_option("BASE", o.basePath, "The result file to compare against")->required();
  app.add_option("NEW", o.newPath, "The result file to judge")->required();
  std::string threshold = "5%";
  app.add_option("--threshold", threshold,
                 "A significant slowdown beyond this is a regression (exit 1): 5% or 0.05, "
                 "plain decimals (default 5%)")
      ->check(cli::Allowed("a percentage from 0% to 1000% (5%) or a fraction below 1 (0.05)",
                           [](const std::string& v) { return ParseThreshold(v).has_value(); }));
  app.add_flag("--across-devices", o.settings.acrossDevices,
               "Match cases ignoring the device (my GPU against yours); each file must hold one "
               "device");
  app.add_flag("--ignore-local-size", o.settings.ignoreLocalSize,
               "Match cases ignoring the local size (each device's auto choice)");
  std::string format = FormatNames().front();
  app.add_option("--format", format, FormatList() + " (default " + FormatNames().front() + ")")
      ->check(cli::OneOf(FormatNames(), false));
  cli::Parse(app, argc, argv, &help);
  if (help) {
    std::cout << app.help();
    return o;
  }
  o.settings.threshold = *ParseThreshold(threshold);
  o.format = ParseFormat(format);
  return o;
}

// Hints where a looser match would pair what is listed as one-file-only.
void LooseMatchNotes(Comparison& c, const CompareSettings& s) {
  if (c.onlyBase.empty() || c.onlyNew.empty())
    return;
  CompareSettings loose = s;
  loose.acrossDevices = loose.ignoreLocalSize = true;
  size_t byDevice = 0, byLocal = 0;
  for (const auto& b : c.onlyBase)
    for (const auto& n : c.onlyNew)
      if (CaseKey(b, loose) == CaseKey(n, loose)) {
        byDevice += !s.acrossDevices && !(b.device == n.device);
        byLocal += !s.ignoreLocalSize && b.result.localSize != n.result.localSize;
        break;
      }
  if (byDevice)
    c.notes.push_back(fmt::format(
        "{} cases of BASE differ from one in NEW in the device: --across-devices matches "
        "them",
        byDevice));
  if (byLocal)
    c.notes.push_back(fmt::format(
        "{} cases of BASE differ from one in NEW in the local size: --ignore-local-size "
        "matches them",
        byLocal));
}

}  // namespace

Comparison CompareFiles(const ResultFile& base, const ResultFile& fresh, const CompareSettings& s) {
  if (s.acrossDevices)
    for (const ResultFile* f : {&base, &fresh}) {
      const auto devices = f->Devices();
      if (devices.size() != 1)
        throw UsageError(fmt::format(
            "--across-devices: {} '{}' holds {} devices ({}); allowed: files of one device each",
            f->role, f->path, devices.size(), DeviceList(devices)));
    }
  Comparison c;
  // Each file's cases by key; a case recorded twice in one file: the first is compared.
  auto index = [&](const ResultFile& f) {
    std::map<std::string, size_t> byKey;
    for (size_t i = 0; i < f.results.size(); ++i) {
      const auto [it, fresh] = byKey.emplace(CaseKey(f.results[i], s), i);
      if (!fresh)
        c.notes.push_back(fmt::format("{} holds {} more than once; the first is compared", f.role,
                                      f.results[i].Label()));
    }
    return byKey;
  };
  const auto baseIndex = index(base), newIndex = index(fresh);
  for (size_t i = 0; i < base.results.size(); ++i) {
    const std::string key = CaseKey(base.results[i], s);
    if (baseIndex.at(key) != i)
      continue;
    const auto it = newIndex.find(key);
    if (it == newIndex.end()) {
      c.onlyBase.push_back(base.results[i]);
      continue;
    }
    CaseComparison m;
    m.base = base.results[i];
    m.fresh = fresh.results[it->second];
    Judge(m, s.threshold);
    c.matched.push_back(m);
  }
  for (size_t i = 0; i < fresh.results.size(); ++i) {
    const std::string key = CaseKey(fresh.results[i], s);
    if (newIndex.at(key) == i && !baseIndex.count(key))
      c.onlyNew.push_back(fresh.results[i]);
  }
  LooseMatchNotes(c, s);
  return c;
}

int Compare(int argc, char** argv) {
  try {
    bool help = false;
    const CompareOptions o = ParseCompareOptions(argc, argv, help);
    if (help) {
      CheckStdout();
      return kExitOk;
    }
    const ResultFile base = LoadResultFile(o.basePath, "BASE");
    const ResultFile fresh = LoadResultFile(o.newPath, "NEW");
    const Comparison c = CompareFiles(base, fresh, o.settings);
    MakePrinter(o.format)->Compare(
        std::cout, {{base.path, base.Devices()}, {fresh.path, fresh.Devices()}, c, o.settings});
    CheckStdout();
    return c.Regressions() ? kExitValidationFailed : kExitOk;
  } catch (const UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {  // DeviceError (stdout), and never an abort
    std::cerr << "error: " << e.what() << "\n";
    return kExitDevice;
  }
}

}  // namespace rsb
