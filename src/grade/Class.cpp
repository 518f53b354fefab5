#include "grade/Class.h"

#include "cli/CliChecks.h"
#include "grade/Report.h"
#include "grade/Text.h"
#include "platform/BuildInfo.h"
#include "platform/Errors.h"
#include "platform/Files.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace rsb::grade {

namespace {

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos)
    return s;
  std::string q;
  for (char c : s)
    q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return "\"" + q + "\"";
}

std::string ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw UsageError(
        fmt::format("{}: missing; allowed: the reports of the hand-ins the "
                    "folder's grading.json names",
                    path.string()));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace

size_t ShardOf(const std::string& name, size_t count) {
  return count == 0 ? 0 : static_cast<size_t>(Fnv1a64(name) % count);
}

std::string FileHash(const fs::path& path) {
  return fmt::format("fnv1a64:{:016x}", Fnv1a64(ReadBytes(path)));
}

std::string SummaryCsv(const std::vector<std::string>& itemIds,
                       const std::vector<SummaryRow>& rows) {
  std::string csv = "name,total,max";
  for (const auto& id : itemIds)
    csv += "," + id;
  csv += "\n";
  for (const auto& r : rows) {
    csv += fmt::format("{},{},{}", CsvField(r.name), Points(r.total), Points(r.max));
    for (double p : r.points)
      csv += "," + Points(p);
    csv += "\n";
  }
  return csv;
}

json ToJson(const ClassManifest& m) {
  return {{"schema", "reduce-scan-bench-grading/1"},
          {"suite", m.suite},
          {"rubric", {{"path", m.rubricPath}, {"name", m.rubricName}, {"hash", m.rubricHash}}},
          {"items", m.itemIds},
          {"seed", m.seed},
          {"device", m.device},
          {"check_device", m.checkDevice},
          {"shard", {{"index", m.shardIndex}, {"count", m.shardCount}}},
          {"class", m.classNames},
          {"graded", m.graded},
          {"complete", m.complete}};
}

void WriteClassFiles(const fs::path& dir, const ClassManifest& m,
                     const std::vector<SummaryRow>& rows) {
  WriteFile(dir / "summary.csv", SummaryCsv(m.itemIds, rows));
  WriteFile(dir / "index.md", IndexMarkdown(m, rows));
  WriteFile(dir / "index.html", IndexHtml(m, rows));
  WriteFile(dir / "grading.json", ToJson(m).dump(2) + "\n");
}

// ---------------------------------------------------------------------------------------------
// grade merge

namespace {

json ReadJson(const fs::path& path, const std::string& what) {
  std::ifstream in(path);
  if (!in)
    throw UsageError(fmt::format("{}: no {} ({}); allowed: the output folder of a `grade` run",
                                 path.parent_path().string(), path.filename().string(), what));
  try {
    return json::parse(in);
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("{}: not JSON ({}); allowed: the {} a `grade` run writes",
                                 path.string(), Headline(e.what()), what));
  }
}

// A field of a shard's manifest, of the type wanted, or a usage error naming file and field.
template <class T>
T Field(const json& j, const std::string& key, const fs::path& file) {
  try {
    return j.at(key).get<T>();
  } catch (const std::exception&) {
    throw UsageError(
        fmt::format("{}: field '{}' missing or of the wrong type; allowed: a "
                    "grading.json as `grade` writes it",
                    file.string(), key));
  }
}

struct Shard {
  fs::path dir;
  ClassManifest m;
};

Shard ReadShard(const fs::path& dir) {
  const fs::path file = dir / "grading.json";
  const json j = ReadJson(file, "the run's manifest");
  if (!j.is_object() || j.value("schema", "") != "reduce-scan-bench-grading/1")
    throw UsageError(
        fmt::format("{}: not a grading manifest (schema reduce-scan-bench-grading/1); allowed: the "
                    "grading.json a `grade` run writes",
                    file.string()));
  Shard s{dir, {}};
  ClassManifest& m = s.m;
  m.suite = Field<std::string>(j, "suite", file);
  const json rubric = Field<json>(j, "rubric", file);
  m.rubricPath = Field<std::string>(rubric, "path", file);
  m.rubricName = Field<std::string>(rubric, "name", file);
  m.rubricHash = Field<std::string>(rubric, "hash", file);
  m.itemIds = Field<std::vector<std::string>>(j, "items", file);
  m.seed = Field<uint64_t>(j, "seed", file);
  m.device = Field<std::string>(j, "device", file);
  m.checkDevice = j.value("check_device", m.device);  // absent before --check-platform
  const json shard = Field<json>(j, "shard", file);
  m.shardIndex = Field<size_t>(shard, "index", file);
  m.shardCount = Field<size_t>(shard, "count", file);
  m.classNames = Field<std::vector<std::string>>(j, "class", file);
  m.graded = Field<std::vector<std::string>>(j, "graded", file);
  m.complete = Field<bool>(j, "complete", file);
  return s;
}

// Shards of one class graded alike, or a usage error naming what differs and where.
void CheckAlike(const std::vector<Shard>& shards) {
  const Shard& a = shards.front();
  auto differ = [&](const Shard& b, const std::string& what, const std::string& x,
                    const std::string& y) {
    throw UsageError(fmt::format(
        "{} and {}: graded with different {} ('{}' and '{}'); allowed: shards of one class "
        "graded with one rubric, seed and suite",
        a.dir.string(), b.dir.string(), what, x, y));
  };
  for (const Shard& b : shards) {
    if (b.m.suite != a.m.suite)
      differ(b, "suites", a.m.suite, b.m.suite);
    if (b.m.rubricHash != a.m.rubricHash)
      differ(b, "rubrics", a.m.rubricHash, b.m.rubricHash);
    if (b.m.itemIds != a.m.itemIds)
      differ(b, "items (--items)", Join(a.m.itemIds, ","), Join(b.m.itemIds, ","));
    if (b.m.seed != a.m.seed)
      differ(b, "seeds", std::to_string(a.m.seed), std::to_string(b.m.seed));
    if (b.m.classNames != a.m.classNames)
      differ(b, "classes (the HANDIN lists)", fmt::format("{} hand-ins", a.m.classNames.size()),
             fmt::format("{} hand-ins", b.m.classNames.size()));
    if (b.m.shardCount != a.m.shardCount)
      differ(b, "shard counts", std::to_string(a.m.shardCount), std::to_string(b.m.shardCount));
    if (b.m.device != a.m.device && !a.m.device.empty() && !b.m.device.empty())
      std::cerr << fmt::format("warning: {} graded on '{}', {} on '{}'\n", a.dir.string(),
                               a.m.device, b.dir.string(), b.m.device);
    if (b.m.checkDevice != a.m.checkDevice && !a.m.checkDevice.empty() && !b.m.checkDevice.empty())
      std::cerr << fmt::format("warning: {} validated on '{}', {} on '{}'\n", a.dir.string(),
                               a.m.checkDevice, b.dir.string(), b.m.checkDevice);
  }
}

// Where each hand-in of the class was graded: every one exactly once, or a usage error naming
// the hand-ins graded twice (and where) or not at all (and the shard that should hold them).
std::map<std::string, const Shard*> Owners(const std::vector<Shard>& shards) {
  std::map<std::string, const Shard*> owner;
  for (const Shard& s : shards)
    for (const auto& name : s.m.graded) {
      const auto [at, added] = owner.emplace(name, &s);
      if (!added)
        throw UsageError(fmt::format(
            "hand-in '{}': graded in {} and in {}; allowed: each hand-in in one shard (a shard "
            "folder given twice?)",
            name, at->second->dir.string(), s.dir.string()));
    }
  std::vector<std::string> missing;
  for (const auto& name : shards.front().m.classNames)
    if (!owner.count(name))
      missing.push_back(fmt::format("{} (shard {}/{})", name,
                                    ShardOf(name, shards.front().m.shardCount) + 1,
                                    shards.front().m.shardCount));
  if (!missing.empty())
    throw UsageError(fmt::format(
        "{} hand-in(s) of the class not graded in the folders given: {}; allowed: every "
        "shard's folder, each shard run to its end",
        missing.size(), Join(missing, ", ")));
  return owner;
}

SummaryRow RowOf(const fs::path& report, size_t items) {
  const json j = ReadJson(report, "hand-in report");
  SummaryRow r;
  r.name = Field<std::string>(j, "handin", report);
  r.total = Field<double>(j, "total", report);
  r.max = Field<double>(j, "max", report);
  for (const auto& it : Field<json>(j, "items", report)) {
    r.points.push_back(Field<double>(it, "points", report));
    r.maxPoints.push_back(Field<double>(it, "max_points", report));
    r.statuses.push_back(Field<std::string>(it, "status", report));
    r.messages.push_back(
        ItemMessage(Field<std::string>(it, "detail", report), it.value("diagnosis", json())));
    const json alone = it.value("ran_alone", json::array());  // (none in older reports)
    r.ranAlone.push_back(alone.is_array() && !alone.empty());
  }
  if (r.points.size() != items)
    throw UsageError(
        fmt::format("{}: {} items, the manifest names {}; allowed: the reports of "
                    "the run that wrote grading.json",
                    report.string(), r.points.size(), items));
  return r;
}

int MergeAll(int argc, char** argv) {
  std::vector<std::string> dirs;
  std::string out = "grades";
  bool help = false;
  CLI::App app{
      "reduce-scan-bench grade merge: joins the output folders of `grade --shard K/N` runs into "
      "one (summary.csv, index.md, index.html, grading.json and every hand-in's reports), as one "
      "run would "
      "have written it",
      "reduce-scan-bench grade merge"};
  app.set_help_flag();
  app.add_flag("-h,--help", help, "Print this help and exit");
  app.add_option("DIR", dirs, "The shards' output folders")
      ->check(cli::Allowed("an existing folder (a `grade --shard` run's --output-dir)",
                           [](const std::string& v) {
                             std::error_code ec;
                             return fs::is_directory(v, ec);
                           }));
  app.add_option("--output-dir", out, "Folder of the merged output (default grades)");
  cli::Parse(app, argc, argv);
  if (help) {
    std::cout << app.help();
    return kExitOk;
  }
  if (dirs.empty())
    throw UsageError("DIR: none given; allowed: one or more shard output folders");
  CheckOutputFolder("--output-dir", out);
  std::vector<Shard> shards;
  for (const auto& d : dirs)
    shards.push_back(ReadShard(d));
  CheckAlike(shards);
  const auto owner = Owners(shards);
  ClassManifest m = shards.front().m;
  m.shardIndex = m.shardCount = 1;
  m.complete = true;
  m.graded = m.classNames;
  std::vector<SummaryRow> rows;
  std::error_code ec;
  if (fs::create_directories(out, ec); ec)
    throw DeviceError(
        fmt::format("--output-dir '{}': cannot make the folder: {}", out, ec.message()));
  for (const auto& name : m.classNames) {
    const fs::path from = owner.at(name)->dir;
    rows.push_back(RowOf(from / (name + ".json"), m.itemIds.size()));
    for (const char* ext : {".md", ".json"})
      if (fs::absolute(from).lexically_normal() != fs::absolute(out).lexically_normal())
        WriteFile(fs::path(out) / (name + ext), ReadBytes(from / (name + ext)));
  }
  WriteClassFiles(out, m, rows);
  std::cerr << fmt::format("merged {} shard folder(s), {} hand-in(s): {}\n", shards.size(),
                           rows.size(), (fs::path(out) / "summary.csv").string());
  return kExitOk;
}

}  // namespace

int GradeMerge(int argc, char** argv) {
  return ExitStatusOf([&] { return MergeAll(argc, argv); });
}

}  // namespace rsb::grade
