// `reduce-scan-bench plot`: figures from the fixtures in tests/fixtures, through the executable.
// Drawing needs Python 3 with matplotlib (Debian: python3-matplotlib, which
// scripts/install-deps.sh installs); where it is missing the drawing tests are skipped, saying so.
#include "TestSupport.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

namespace fs = std::filesystem;

namespace rsb::test {
namespace {

class PlotCommand : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("rsb-plot-test-{}-{}",
                       testing::UnitTest::GetInstance()->current_test_info()->name(),
                       static_cast<long>(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  CommandResult Run(const std::string& args, const std::string& env = "") {
    return RunCommand(fmt::format("{} '{}' plot {}", env, RSB_BINARY, args));
  }
  // Skips the test where this machine has no matplotlib (the run says which package).
  bool NoMatplotlib(const CommandResult& r) {
    return r.status == 3 && r.err.find("python3-matplotlib") != std::string::npos;
  }

  fs::path dir_;
};

TEST_F(PlotCommand, WritesPngAndSvgOverlayingDevices) {
  const fs::path png = dir_ / "devices.png", svg = dir_ / "devices.svg";
  const std::string files =
      fmt::format("'{}' '{}' '{}'", FixturePath("base.json"), FixturePath("other-device.json"),
                  FixturePath("no-ci.json"));
  const CommandResult r = Run(fmt::format("{} -o '{}'", files, png.string()));
  if (NoMatplotlib(r))
    GTEST_SKIP() << "matplotlib missing (" << r.err
                 << "); install python3-matplotlib to run this test";
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string pngBytes = ReadFile(png);
  ASSERT_GT(pngBytes.size(), 1000u);
  EXPECT_EQ(pngBytes.substr(0, 8), "\x89PNG\r\n\x1a\n");
  const CommandResult s = Run(fmt::format("{} --output '{}'", files, svg.string()));
  ASSERT_EQ(s.status, 0) << s.err;
  const std::string svgText = ReadFile(svg);
  EXPECT_NE(svgText.find("<svg"), std::string::npos);
  // Both tasks, both panels, and the devices named in the legend.
  EXPECT_NE(svgText.find("NVIDIA H100 80GB HBM3"), std::string::npos);
}

TEST_F(PlotCommand, MissingFileExitsTwo) {
  const CommandResult r =
      Run(fmt::format("'{}' -o '{}'", FixturePath("missing.json"), (dir_ / "x.png").string()));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("missing.json': no such file"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.png"));
}

TEST_F(PlotCommand, BadInputExitsTwo) {
  const std::string base = FixturePath("base.json");
  struct Bad {
    std::string args, expect;
  };
  const std::vector<Bad> cases = {
      {fmt::format("'{}' -o '{}'", base, (dir_ / "x.pdf").string()), "--output"},
      {fmt::format("'{}' -o '{}'", base, (dir_ / ".png").string()), "--output"},
      {fmt::format("'{}'", base), "--output"},
      {fmt::format("-o '{}'", (dir_ / "x.png").string()), "RESULTS"},
      {fmt::format("'{}' -o '{}'", FixturePath("not-results.json"), (dir_ / "x.png").string()),
       "not a reduce-scan-bench result file"},
  };
  for (const auto& c : cases) {
    const CommandResult r = Run(c.args);
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// base.json with `edit` applied to its results, in the test's folder; "987654.321" in the text
// is then replaced by `raw` (JSON the library would never write: 1e400).
std::string Edited(const fs::path& dir, const std::function<void(nlohmann::json&)>& edit,
                   const std::string& raw = "") {
  return WriteEditedResultFile((dir / "edited.json").string(), edit, raw);
}

// A number beyond the double range was exit 3 with the JSON library's words: exit 2 naming the
// file and the field, as compare says it.
TEST_F(PlotCommand, MalformedResultFileNamesTheFileAndTheField) {
  const std::string file = Edited(
      dir_, [](nlohmann::json& r) { r[3]["time_ms"]["median"] = 987654.321; }, "1e400");
  const CommandResult r = Run(fmt::format("'{}' -o '{}'", file, (dir_ / "x.png").string()));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("RESULTS '" + file +
                       "': results[3].time_ms.median: 1e400 is not a finite "
                       "number"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.png"));
}

// An output that is a folder was a Python traceback: exit 2, one line, before Python starts.
TEST_F(PlotCommand, OutputFolderIsAUsageError) {
  fs::create_directories(dir_ / "figure.png");
  const CommandResult r =
      Run(fmt::format("'{}' -o '{}'", FixturePath("base.json"), (dir_ / "figure.png").string()));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--output '" + (dir_ / "figure.png").string() +
                       "': is a folder; allowed: a file path"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("Traceback"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// A result without a throughput (untimed, skipped, a hand-edited file without gelem_s) was a
// Python KeyError: it is left out of the figure, with a note naming the file and why.
TEST_F(PlotCommand, ResultsWithoutThroughputAreLeftOutWithANote) {
  const std::string file = Edited(dir_, [](nlohmann::json& r) {
    r[1].erase("gelem_s");
    r[2]["status"] = "untimed";
    r[2].erase("time_ms");
    r[2].erase("gelem_s");
    r[4]["status"] = "skipped";
  });
  const CommandResult r = Run(fmt::format("'{}' -o '{}'", file, (dir_ / "x.svg").string()));
  if (NoMatplotlib(r))
    GTEST_SKIP() << "matplotlib missing (" << r.err
                 << "); install python3-matplotlib to run this test";
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(fmt::format("note: {}: 3 of 6 results not plotted (no throughput): 1 "
                                   "passed without gelem_s, 1 skipped, 1 untimed",
                                   file)),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("Traceback"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "x.svg"));
  // Without any throughput at all: nothing to draw, exit 2 before Python.
  const std::string none = Edited(dir_, [](nlohmann::json& r) {
    for (auto& x : r)
      x.erase("gelem_s");
  });
  const CommandResult n = Run(fmt::format("'{}' -o '{}'", none, (dir_ / "y.svg").string()));
  EXPECT_EQ(n.status, 2) << n.err;
  EXPECT_NE(n.err.find("no timed result"), std::string::npos) << n.err;
}

// Help that cannot be written to stdout is exit 3 naming stdout, not exit 0.
TEST_F(PlotCommand, FailedWriteOfStdoutExitsThree) {
  if (!fs::exists("/dev/full"))
    GTEST_SKIP() << "no /dev/full on this system";
  const CommandResult r = RunCommand(fmt::format("{{ '{}' plot --help >/dev/full; }}", RSB_BINARY));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("writing to stdout failed"), std::string::npos) << r.err;
}

TEST_F(PlotCommand, WithoutMatplotlibNamesThePackage) {
  // RSB_PYTHON names the only interpreter tried: one that is not there, and one without
  // matplotlib (a script that fails every import).
  const fs::path fake = dir_ / "python-without-matplotlib";
  std::ofstream(fake) << "#!/bin/sh\nexit 1\n";
  fs::permissions(fake, fs::perms::owner_all);
  for (const std::string& python : {(dir_ / "no-python").string(), fake.string()}) {
    const CommandResult r =
        Run(fmt::format("'{}' -o '{}'", FixturePath("base.json"), (dir_ / "x.png").string()),
            "RSB_PYTHON='" + python + "'");
    EXPECT_EQ(r.status, 3) << python;
    EXPECT_NE(r.err.find("python3-matplotlib"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// Ctrl-C while plot.py draws (its interpreter a wrapper that says so, then waits a second): plot
// and report end with 130 and leave nothing behind, in TMPDIR (the child's captured output) or
// beside the output (plot.py's file); plot.py's process group is killed with them.
TEST_F(PlotCommand, InterruptedPlotAndReportLeaveNoFile) {
  const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  if (RunCommand(python + " -c 'import matplotlib'").status != 0)
    GTEST_SKIP() << "matplotlib missing; install python3-matplotlib to run this test";
  const fs::path wrapper = dir_ / "python", drawing = dir_ / "drawing";
  std::ofstream(wrapper) << fmt::format(
      "#!/bin/sh\ncase \"$*\" in *--variant-order*) : > '{}'; sleep 1;; esac\nexec {} \"$@\"\n",
      drawing.string(), python);
  fs::permissions(wrapper, fs::perms::owner_all);
  for (const std::string command : {"plot", "report"}) {
    SCOPED_TRACE(command);
    const fs::path tmp = dir_ / (command + "-tmp"), out = dir_ / (command + "-out");
    fs::create_directories(tmp);
    fs::create_directories(out);
    fs::remove(drawing);
    std::ofstream(dir_ / "script.sh") << fmt::format(
        "set -m\nTMPDIR='{0}' RSB_PYTHON='{1}' '{2}' {3} '{4}' -o '{5}/figure.{6}' 2>/dev/null & "
        "pid=$!\ni=0; while [ ! -e '{7}' ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
        "kill -INT -$pid; wait $pid; echo $?\n",
        tmp.string(), wrapper.string(), RSB_BINARY, command, FixturePath("base.json"), out.string(),
        command == "plot" ? "png" : "html", drawing.string());
    const CommandResult r = RunCommand("bash '" + (dir_ / "script.sh").string() + "'");
    EXPECT_EQ(r.out, "130\n") << r.err;
    EXPECT_TRUE(fs::exists(drawing));
    EXPECT_TRUE(fs::is_empty(tmp)) << fs::directory_iterator(tmp)->path();
    EXPECT_TRUE(fs::is_empty(out)) << fs::directory_iterator(out)->path();
  }
}

TEST_F(PlotCommand, HelpNeedsNoFiles) {
  const CommandResult r = Run("--help");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Usage: reduce-scan-bench plot"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace rsb::test
