#include "tools/Compare.h"

#include "cli/CliChecks.h"
#include "platform/Errors.h"
#include "platform/Files.h"
#include "report/ReportUtil.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>

using nlohmann::json;

namespace rsb {

namespace {

enum class CompareFormat { Table, Csv, Json, Markdown };

struct CompareOptions {
  std::string basePath, newPath;
  CompareSettings settings;
  CompareFormat format = CompareFormat::Table;
};

// "5%" or "0.05" (plain decimals): a fraction from 0 to 10 (1000%); nullopt where it is neither.
std::optional<double> ParseThreshold(const std::string& v) {
  bool percent = false;
  const auto x = cli::ParsePercentOrDecimal(v, &percent);
  if (!x || (!percent && *x >= 1) || *x > 10)  // "5" is 5% or 500%: say which
    return std::nullopt;
  return x;
}

// "scan", "exclusive": a result's scan kind ("" for a reduction).
std::string KindText(const Result& r) {
  return r.scanKind ? ToString(*r.scanKind) : "";
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

std::string Percent(double fraction) {
  return fmt::format("{:g}%", 100 * fraction);
}

// Four significant digits, never in exponent form (an H100 case takes 0.00004683 ms).
std::string Ms(double v) {
  if (!(v > 0) || !std::isfinite(v))
    return fmt::format("{:g}", v);
  const int digits = std::max(0, 3 - static_cast<int>(std::floor(std::log10(v))));
  return fmt::format("{:.{}f}", v, digits);
}

std::string Ci(const StoredResult& r) {
  return r.HasCi() ? fmt::format("[{}, {}]", Ms(r.result.timeMs.ciLow), Ms(r.result.timeMs.ciHigh))
                   : "-";
}

std::string Median(const StoredResult& r) {
  return r.Timed() ? Ms(r.result.timeMs.median) : ToString(r.result.status);
}

// The note, after what else defines the case where it has more than n (an image's shape, a
// task's parameters: "4096x4096 mask-width=5").
std::string NoteWithExtra(const CaseComparison& c) {
  const std::string extra = c.base.Extra();
  if (extra.empty())
    return c.note;
  return extra.substr(1) + (c.note.empty() ? "" : "; " + c.note);
}

std::string Local(const CaseComparison& c) {
  const size_t base = c.base.result.localSize, fresh = c.fresh.result.localSize;
  return base == fresh ? std::to_string(base) : fmt::format("{}/{}", base, fresh);
}

std::string Ratio(const CaseComparison& c) {
  return c.speedup ? fmt::format("{:.3f}x", *c.speedup) : "-";
}

std::string DeviceList(const std::vector<DeviceId>& devices) {
  std::string s;
  for (const auto& d : devices)
    s += (s.empty() ? "" : "; ") + d.Label();
  return s;
}

// Where the interval of one side is missing, why.
std::string MissingCi(const StoredResult& r, const char* role) {
  return r.ciBad ? fmt::format("CI in {} does not hold its median", role)
                 : fmt::format("no CI in {}", role);
}

// " on <device>" for a case in one file only, where the device is part of the match and the
// files do not hold the same one device.
std::string OnDevice(const StoredResult& r, const ResultFile& base, const ResultFile& fresh,
                     const CompareSettings& s) {
  const auto b = base.Devices(), n = fresh.Devices();
  const bool oneDevice = b.size() == 1 && n.size() == 1 && b[0] == n[0];
  return s.acrossDevices || oneDevice ? "" : " on " + r.device.Label();
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
        notes.push_back(fmt::format("REGRESSION beyond {}", Percent(threshold)));
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

// ---------------------------------------------------------------------------------------------
// Output

struct Summary {
  size_t faster = 0, slower = 0, same = 0, unknown = 0, untimed = 0, regressions = 0, timed = 0;
  double geomean = 0;  // of the throughput ratios of the cases timed in both
};

Summary Summarise(const Comparison& c) {
  Summary s;
  double logSum = 0;
  for (const auto& m : c.matched) {
    if (!m.speedup) {
      ++s.untimed;
      continue;
    }
    ++s.timed;
    logSum += std::log(*m.speedup);
    s.regressions += m.regression;
    switch (m.change) {
      case Change::Faster:
        ++s.faster;
        break;
      case Change::Slower:
        ++s.slower;
        break;
      case Change::Same:
        ++s.same;
        break;
      case Change::Unknown:
        ++s.unknown;
        break;
    }
  }
  s.geomean = s.timed ? std::exp(logSum / double(s.timed)) : 0;
  return s;
}

std::string SummaryLine(const Comparison& c, const CompareSettings& settings) {
  const Summary s = Summarise(c);
  std::string line = fmt::format(
      "{} matched cases: {} faster, {} slower ({} beyond the {} threshold), {} same, {} unknown "
      "(no CI)",
      c.matched.size(), s.faster, s.slower, s.regressions, Percent(settings.threshold), s.same,
      s.unknown);
  if (s.untimed)
    line += fmt::format(", {} not timed in both", s.untimed);
  line += fmt::format("; {} only in BASE, {} only in NEW", c.onlyBase.size(), c.onlyNew.size());
  if (s.timed)
    line += fmt::format("; geometric mean of the throughput ratios {:.3f}x", s.geomean);
  return line;
}

const char* kRatioMeaning =
    "ratio = throughput NEW/BASE = BASE median time / NEW median time (> 1: NEW faster)";

std::string Rule(const CompareSettings& s) {
  return fmt::format(
      "faster/slower only where the 95% confidence intervals of the medians do not overlap; a "
      "regression is significantly slower with NEW time / BASE time > {:g} ({} threshold)",
      1 + s.threshold, Percent(s.threshold));
}

void WriteTable(std::ostream& out, const ResultFile& base, const ResultFile& fresh,
                const Comparison& c, const CompareSettings& s) {
  out << fmt::format("BASE: {}: {}\n", base.path, DeviceList(base.Devices()));
  out << fmt::format("NEW:  {}: {}\n", fresh.path, DeviceList(fresh.Devices()));
  out << kRatioMeaning << ";\n" << Rule(s) << "\n\n";
  const char* row =
      "{:<10} {:<14} {:<6} {:<4} {:<9} {:>10} {:>7} {:>10} {:<24} {:>10} {:<24} {:>8} {:<7} {}";
  auto line = [&](std::string text) {
    text.erase(text.find_last_not_of(' ') + 1);
    out << text << "\n";
  };
  line(fmt::format(row, "task", "variant", "type", "op", "kind", "n", "local", "BASE ms",
                   "BASE 95% CI", "NEW ms", "NEW 95% CI", "ratio", "change", "note"));
  for (const auto& m : c.matched)
    line(fmt::format(row, m.base.result.task, m.base.result.variant, ToString(m.base.result.type),
                     ToString(m.base.result.op), KindOrDash(m.base.result), m.base.result.n,
                     Local(m), Median(m.base), Ci(m.base), Median(m.fresh), Ci(m.fresh), Ratio(m),
                     ToString(m.change), NoteWithExtra(m)));
  if (c.matched.empty())
    out << "(no case in both files)\n";
  auto list = [&](const char* title, const std::vector<StoredResult>& v) {
    if (v.empty())
      return;
    out << fmt::format("\nonly in {} ({}):\n", title, v.size());
    for (const auto& r : v)
      out << fmt::format("  {}{}\n", r.Label(), OnDevice(r, base, fresh, s));
  };
  list("BASE", c.onlyBase);
  list("NEW", c.onlyNew);
  if (!c.notes.empty())
    out << "\n";
  for (const auto& n : c.notes)
    out << "note: " << n << "\n";
  out << "\n" << SummaryLine(c, s) << "\n";
}

void WriteMarkdown(std::ostream& out, const ResultFile& base, const ResultFile& fresh,
                   const Comparison& c, const CompareSettings& s) {
  out << fmt::format("BASE: `{}`: {}  \nNEW: `{}`: {}\n\n", base.path, DeviceList(base.Devices()),
                     fresh.path, DeviceList(fresh.Devices()));
  out << kRatioMeaning << "; " << Rule(s) << ".\n\n";
  out << "| task | variant | type | op | kind | n | local | BASE ms | BASE 95% CI | NEW ms | "
         "NEW 95% CI | ratio | change | note |\n";
  out << "|---|---|---|---|---|--:|--:|--:|---|--:|---|--:|---|---|\n";
  for (const auto& m : c.matched)
    out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                       m.base.result.task, m.base.result.variant, ToString(m.base.result.type),
                       ToString(m.base.result.op), KindOrDash(m.base.result), m.base.result.n,
                       Local(m), Median(m.base), Ci(m.base), Median(m.fresh), Ci(m.fresh), Ratio(m),
                       m.regression ? "**slower**" : ToString(m.change), NoteWithExtra(m));
  auto list = [&](const char* title, const std::vector<StoredResult>& v) {
    if (v.empty())
      return;
    out << fmt::format("\nOnly in {} ({}):\n\n", title, v.size());
    for (const auto& r : v)
      out << fmt::format("- {}{}\n", r.Label(), OnDevice(r, base, fresh, s));
  };
  list("BASE", c.onlyBase);
  list("NEW", c.onlyNew);
  for (const auto& n : c.notes)
    out << "\nNote: " << n << "\n";
  out << "\n" << SummaryLine(c, s) << "\n";
}

void WriteCsv(std::ostream& out, const Comparison& c) {
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char ch : s)
      q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  auto num = [](std::optional<double> v) { return v ? fmt::format("{:.6g}", *v) : std::string(); };
  out << "in,task,variant,type,op,scan_kind,n,base_local_size,new_local_size,base_device,"
         "new_device,base_status,base_median_ms,base_ci_low_ms,base_ci_high_ms,new_status,"
         "new_median_ms,new_ci_low_ms,new_ci_high_ms,throughput_ratio,change,regression,note\n";
  auto device = [&](const StoredResult* r) { return r ? quote(r->device.Label()) : ""; };
  auto times = [&](const StoredResult* r) {
    if (!r)
      return std::string(",,,");
    const TimeStats& t = r->result.timeMs;
    return fmt::format("{},{},{},{}", ToString(r->result.status), r->Timed() ? num(t.median) : "",
                       r->HasCi() ? num(t.ciLow) : "", r->HasCi() ? num(t.ciHigh) : "");
  };
  auto local = [](const StoredResult* r) { return r ? std::to_string(r->result.localSize) : ""; };
  auto row = [&](const char* in, const StoredResult& s, const StoredResult* b,
                 const StoredResult* n, const CaseComparison* m) {
    const Result& key = s.result;
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", in, key.task,
                       key.variant, ToString(key.type), ToString(key.op), KindText(key), key.n,
                       local(b), local(n), device(b), device(n), times(b), times(n),
                       m ? num(m->speedup) : "", m ? ToString(m->change) : "",
                       m ? (m->regression ? "1" : "0") : "", quote(m ? m->note : ""));
  };
  for (const auto& m : c.matched)
    row("both", m.base, &m.base, &m.fresh, &m);
  for (const auto& r : c.onlyBase)
    row("base", r, &r, nullptr, nullptr);
  for (const auto& r : c.onlyNew)
    row("new", r, nullptr, &r, nullptr);
}

json SideJson(const StoredResult& r) {
  const TimeStats& t = r.result.timeMs;
  json o = {{"status", ToString(r.result.status)},
            {"device", r.device.Label()},
            {"local_size", r.result.localSize}};
  if (r.Timed())
    o["median_ms"] = t.median;
  if (r.HasCi()) {
    o["ci_low_ms"] = t.ciLow;
    o["ci_high_ms"] = t.ciHigh;
  }
  if (r.CiMet())
    o["ci_met"] = *r.CiMet();
  return o;
}

json CaseJson(const StoredResult& s) {
  const Result& r = s.result;
  json o = {{"task", r.task},
            {"variant", r.variant},
            {"type", ToString(r.type)},
            {"op", ToString(r.op)},
            {"n", r.n},
            {"local_size", r.localSize},
            {"device", s.device.Label()}};
  if (r.scanKind)
    o["scan_kind"] = ToString(*r.scanKind);
  if (!s.Extra().empty())
    o["case"] = s.Extra().substr(1);  // "4096x4096 mask-width=5"
  return o;
}

void WriteJson(std::ostream& out, const ResultFile& base, const ResultFile& fresh,
               const Comparison& c, const CompareSettings& s) {
  const Summary sum = Summarise(c);
  auto devices = [](const ResultFile& f) {
    json a = json::array();
    for (const auto& d : f.Devices())
      a.push_back(d.Label());
    return a;
  };
  json j = {{"schema", "reduce-scan-bench-compare/1"},
            {"ratio", kRatioMeaning},
            {"threshold", s.threshold},
            {"across_devices", s.acrossDevices},
            {"ignore_local_size", s.ignoreLocalSize},
            {"base", {{"path", base.path}, {"devices", devices(base)}}},
            {"new", {{"path", fresh.path}, {"devices", devices(fresh)}}},
            {"cases", json::array()},
            {"only_in_base", json::array()},
            {"only_in_new", json::array()},
            {"notes", c.notes}};
  for (const auto& m : c.matched) {
    json o = CaseJson(m.base);
    o.erase("local_size");
    o.erase("device");
    o["base"] = SideJson(m.base);
    o["new"] = SideJson(m.fresh);
    o["throughput_ratio"] = m.speedup ? json(*m.speedup) : json(nullptr);
    o["change"] = ToString(m.change);
    o["regression"] = m.regression;
    o["note"] = m.note;
    j["cases"].push_back(o);
  }
  for (const auto& r : c.onlyBase)
    j["only_in_base"].push_back(CaseJson(r));
  for (const auto& r : c.onlyNew)
    j["only_in_new"].push_back(CaseJson(r));
  j["summary"] = {{"matched", c.matched.size()},
                  {"faster", sum.faster},
                  {"slower", sum.slower},
                  {"regressions", sum.regressions},
                  {"same", sum.same},
                  {"unknown", sum.unknown},
                  {"not_timed", sum.untimed},
                  {"only_in_base", c.onlyBase.size()},
                  {"only_in_new", c.onlyNew.size()},
                  {"geomean_throughput_ratio", sum.timed ? json(sum.geomean) : json(nullptr)},
                  {"text", SummaryLine(c, s)}};
  out << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
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
  std::string format = "table";
  app.add_option("--format", format, "table, csv, json or markdown (default table)")
      ->check(cli::OneOf({"table", "csv", "json", "markdown"}, false));
  cli::Parse(app, argc, argv, &help);
  if (help) {
    std::cout << app.help();
    return o;
  }
  o.settings.threshold = *ParseThreshold(threshold);
  for (char& ch : format)
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  o.format = format == "csv"        ? CompareFormat::Csv
             : format == "json"     ? CompareFormat::Json
             : format == "markdown" ? CompareFormat::Markdown
                                    : CompareFormat::Table;
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
    switch (o.format) {
      case CompareFormat::Table:
        WriteTable(std::cout, base, fresh, c, o.settings);
        break;
      case CompareFormat::Markdown:
        WriteMarkdown(std::cout, base, fresh, c, o.settings);
        break;
      case CompareFormat::Csv:
        WriteCsv(std::cout, c);
        break;
      case CompareFormat::Json:
        WriteJson(std::cout, base, fresh, c, o.settings);
        break;
    }
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
