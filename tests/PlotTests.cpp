// `reduce-scan-bench plot`: figures from the fixtures in tests/fixtures, through the executable.
// Drawing needs Python 3 with matplotlib (Debian: python3-matplotlib, which
// scripts/install-deps.sh installs); where it is missing the drawing tests are skipped, saying so.
#include "TestSupport.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace rsb::test {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(RSB_SOURCE_DIR) + "/tests/fixtures/" + name;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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
  const std::string files = fmt::format("'{}' '{}' '{}'", Fixture("base.json"),
                                        Fixture("other-device.json"), Fixture("no-ci.json"));
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
      Run(fmt::format("'{}' -o '{}'", Fixture("missing.json"), (dir_ / "x.png").string()));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("missing.json': no such file"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.png"));
}

TEST_F(PlotCommand, BadInputExitsTwo) {
  const std::string base = Fixture("base.json");
  struct Bad {
    std::string args, expect;
  };
  const std::vector<Bad> cases = {
      {fmt::format("'{}' -o '{}'", base, (dir_ / "x.pdf").string()), "--output"},
      {fmt::format("'{}' -o '{}'", base, (dir_ / ".png").string()), "--output"},
      {fmt::format("'{}'", base), "--output"},
      {fmt::format("-o '{}'", (dir_ / "x.png").string()), "RESULTS"},
      {fmt::format("'{}' -o '{}'", Fixture("not-results.json"), (dir_ / "x.png").string()),
       "not a reduce-scan-bench result file"},
  };
  for (const auto& c : cases) {
    const CommandResult r = Run(c.args);
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST_F(PlotCommand, WithoutMatplotlibNamesThePackage) {
  // RSB_PYTHON names the only interpreter tried: one that is not there, and one without
  // matplotlib (a script that fails every import).
  const fs::path fake = dir_ / "python-without-matplotlib";
  std::ofstream(fake) << "#!/bin/sh\nexit 1\n";
  fs::permissions(fake, fs::perms::owner_all);
  for (const std::string& python : {(dir_ / "no-python").string(), fake.string()}) {
    const CommandResult r =
        Run(fmt::format("'{}' -o '{}'", Fixture("base.json"), (dir_ / "x.png").string()),
            "RSB_PYTHON='" + python + "'");
    EXPECT_EQ(r.status, 3) << python;
    EXPECT_NE(r.err.find("python3-matplotlib"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST_F(PlotCommand, HelpNeedsNoFiles) {
  const CommandResult r = Run("--help");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Usage: reduce-scan-bench plot"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace rsb::test
