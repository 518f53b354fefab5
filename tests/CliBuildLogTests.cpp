// A kernel that does not build or computes wrong: exit 3 with the build log (the real file and
// line, once, with a caret), --quiet, a broken kernel caught by validation. Runs the real
// executable on the test device.
#include "TestSupport.h"
#include "platform/DeviceLock.h"
#include "platform/Errors.h"
#include "platform/Sizes.h"
#include "platform/Subprocess.h"
#include "report/Report.h"
#include "tasks/CReductionTask.h"
#include "tasks/Tasks.h"
#include "tools/ResultFile.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include <chrono>
#include <csignal>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rsb::test {
namespace {

TEST(Cli, KernelThatDoesNotCompileExits3WithTheBuildLog) {
  const std::string dir = CopyKernels("nocompile");
  Patch(dir + "/Reduction.cl", "__kernel void ReduceSequential(",
        "this is not OpenCL C;\n__kernel void ReduceSequential(");
  const CommandResult r = RunBench("--check -q --variant sequential --size 100 --kernels " + dir);
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("kernel build failed"), std::string::npos) << r.err;
  // The error names the file and the line of the bad statement.
  std::ifstream in(dir + "/Reduction.cl");
  std::string line;
  int number = 0;
  while (std::getline(in, line) && line != "this is not OpenCL C;")
    ++number;
  const std::string where = "Reduction.cl:" + std::to_string(number + 1) + ":";
  EXPECT_NE(r.err.find(where), std::string::npos) << "no " << where << " in\n" << r.err;
  std::filesystem::remove_all(dir);
}

// Each driver's name for the source it was given becomes the real file: NVIDIA's "<kernel>",
// pocl's temporary file, Mesa's (rusticl, clover) "input.cl"; a name that merely ends so stays.
TEST(BuildLog, NamesTheRealFileOnEveryDriver) {
  const std::string path = "/k/Scan.cl";
  EXPECT_EQ(WithRealFileName("<kernel>:48:5: error: x", path), "/k/Scan.cl:48:5: error: x");
  EXPECT_EQ(WithRealFileName("/tmp/pocl/kcache/tempfile_Ab3.cl:48:5: error: x", path),
            "/k/Scan.cl:48:5: error: x");
  EXPECT_EQ(WithRealFileName("input.cl:48:5: error: use of undeclared identifier 'x'\n"
                             "In file included from input.cl:3:\n/k/Common.clh:7:1: note",
                             path),
            "/k/Scan.cl:48:5: error: use of undeclared identifier 'x'\n"
            "In file included from /k/Scan.cl:3:\n/k/Common.clh:7:1: note");
  EXPECT_EQ(WithRealFileName("myinput.cl:4: x; /k/input.cl: y", path),
            "myinput.cl:4: x; /k/input.cl: y");
  EXPECT_EQ(WithRealFileName("input.cl:1:2: e", "/a$1/Scan.cl"), "/a$1/Scan.cl:1:2: e");
}

TEST(Cli, BrokenReductionKernelFailsValidationNamingTheVariant) {
  const std::string dir = CopyKernels("broken");
  // Decomposition drops the second element of every pair: a wrong sum, a correct-looking run.
  Patch(dir + "/Reduction.cl",
        "const T v = OP(LoadOrIdentity(src, base, n), LoadOrIdentity(src, base + LOCAL_SIZE, n));\n"
        "  const T r = WorkGroupReduceSequential(scratch, v);",
        "const T v = LoadOrIdentity(src, base, n);\n"
        "  const T r = WorkGroupReduceSequential(scratch, v);");
  const CommandResult r = RunBench("--check -q --task reduction --size 100000 --kernels " + dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("FAILED reduction/decomposition"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected"), std::string::npos) << r.err;
  // The other variants are untouched and still pass.
  EXPECT_EQ(r.err.find("FAILED reduction/sequential"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

// pocl's clang writes "1 warning generated." to stderr itself (the warning is in the build log)
// when it cannot unroll tiled-2d's loops at mask width 31: --quiet keeps it off stderr too. Each
// run gets an empty pocl kernel cache, so that pocl compiles (a cached binary warns no more).
TEST(Cli, QuietKeepsTheCompilersOwnLinesOffStderr) {
  const std::string args =
      "--check --task convolution --variant tiled-2d --mask-width 31 --size 256x256 ";
  auto fresh = [&](const std::string& flags) {
    const std::filesystem::path cache =
        std::filesystem::temp_directory_path() /
        fmt::format("rsb-cli-pocl-cache-{}-{}", (long)::getpid(), flags.size());
    std::filesystem::remove_all(cache);
    const std::string selectors = DeviceSelectors();
    const CommandResult r = RunCommand(fmt::format(
        "POCL_CACHE_DIR='{}' '{}' {}{}{}", cache.string(), RSB_BINARY, args, flags, selectors));
    std::filesystem::remove_all(cache);
    return r;
  };
  const CommandResult loud = fresh("");
  ASSERT_EQ(loud.status, 0) << loud.err;
  if (loud.err.find("warning generated") == std::string::npos)
    std::cerr << "note: this device's compiler wrote no warning; the quiet run is checked anyway\n";
  const CommandResult quiet = fresh("-q");
  EXPECT_EQ(quiet.status, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
}

// One missing ';' at the top of Reduction.cl, which every build of its five variants compiles,
// over several cases: each case's line says the compiler's first error (file:line:col as the
// compiler wrote it), the log itself is shown once per run with the offending source line and a
// caret under its column, nothing of the compiler is glued to a progress line, and the build
// options only with --verbose.
TEST(Cli, KernelBuildLogIsShownOnceWithTheSourceLineAndACaret) {
  const std::string dir = CopyKernels("build-log-once");
  Patch(dir + "/Reduction.cl", "#include \"WorkGroup.clh\"\n",
        "#include \"WorkGroup.clh\"\nconstant int kBroken = 1\n");
  std::ifstream in(dir + "/Reduction.cl");
  std::string line;
  size_t number = 1;
  while (std::getline(in, line) && line != "constant int kBroken = 1")
    ++number;
  const std::string args =
      "--check --task reduction --variant interleaved,sequential,decomposition "
      "--size 100,1000 --kernels " +
      dir;
  const CommandResult r = RunBench(args);
  EXPECT_EQ(r.status, 3) << r.err;
  const std::string where = fmt::format("Reduction.cl:{}:", number);
  // Six cases, each with its one line in the progress; the table's notes list them once, the
  // first case with the count of the others (they fail alike).
  EXPECT_EQ(LinesWith(r.err, {"... error: kernel build failed: ", where}), 6u) << r.err;
  EXPECT_EQ(LinesWith(r.out, {"error reduction/", "kernel build failed: ", where}), 1u) << r.out;
  EXPECT_EQ(LinesWith(r.out, {"error reduction/interleaved uint sum n=100 ",
                              "(and 5 more cases with this message", where}),
            1u)
      << r.out;
  // The log once: its source line (under a gutter with the line number, or as the compiler
  // printed it itself: NVIDIA's and Mesa's clang do) and a caret line.
  const auto sourceLines = [&](const std::string& text) {
    return CountOf(text, fmt::format("{:>5} | {}\n", number, line)) +
           CountOf(text, "\n" + line + "\n");
  };
  const auto caretLines = [](const std::string& text) {
    size_t n = 0;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
      n += l.find_first_not_of(" |") != std::string::npos &&
           l.substr(l.find_first_not_of(" |")) == "^";
    return n;
  };
  EXPECT_EQ(sourceLines(r.err), 1u) << r.err;
  EXPECT_EQ(caretLines(r.err), 1u) << r.err;
  EXPECT_EQ(sourceLines(r.out), 0u) << r.out;
  // No -D options without --verbose; no compiler line glued to a progress line.
  EXPECT_EQ(CountOf(r.err + r.out, "-DT="), 0u) << r.err;
  EXPECT_EQ(LinesWith(r.err, {"... ", "generated"}), 0u) << r.err;
  const CommandResult verbose = RunBench(args + " --verbose -q");
  EXPECT_EQ(LinesWith(verbose.err, {"kernel build options: ", "-DT=uint"}), 1u) << verbose.err;
  EXPECT_EQ(sourceLines(verbose.err), 1u) << verbose.err;
  std::filesystem::remove_all(dir);
}

// A location that clang writes as two (a macro argument's expansion and spelling) reads as the
// compiler wrote it, with the real file name in both places.
TEST(BuildLog, TwoLocationsOfAMacroArgumentStayAsWritten) {
  EXPECT_EQ(WithRealFileName("error: /tmp/pocl/tempfile_Ab3.cl:54:24 <Spelling=/tmp/pocl/"
                             "tempfile_Ab3.cl:54:30>: use of undeclared identifier 'srcx'",
                             "/k/Reduction.cl"),
            "error: /k/Reduction.cl:54:24 <Spelling=/k/Reduction.cl:54:30>: use of undeclared "
            "identifier 'srcx'");
  EXPECT_EQ(FirstError("Device failed\nerror: /k/R.cl:5:3: expected ';'\nmore"),
            "/k/R.cl:5:3: expected ';'");
  EXPECT_EQ(FirstError("CL_INVALID_BUILD_OPTIONS (-43)\n"), "CL_INVALID_BUILD_OPTIONS (-43)");
}

}  // namespace
}  // namespace rsb::test
