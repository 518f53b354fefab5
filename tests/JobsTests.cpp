// Job expansion (src/run/Jobs.h), in this process: what a command line's selection becomes
// before any device is touched (MakeJobs), per device at each local size (DeviceJobs), the task
// parameters' combinations (ParamCombinations: command line, default or check values) and the
// kernel-file check.
#include "TestSupport.h"
#include "platform/Errors.h"
#include "run/Jobs.h"
#include "tasks/Tasks.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace rsb;

namespace {

class Jobs : public ::testing::Test {
 protected:
  Jobs() : tasks_(MakeTasks()), catalog_(CatalogOf(tasks_)) {}
  Options Parse(std::vector<const char*> args) {
    args.insert(args.begin(), "reduce-scan-bench");
    return ParseCommandLine(int(args.size()), args.data(), catalog_);
  }
  const IComputeTask& Task(const std::string& name) const {
    for (const auto& t : tasks_)
      if (t->Name() == name)
        return *t;
    throw std::runtime_error("no task " + name);
  }
  Tasks tasks_;
  TaskCatalog catalog_;
};

// The cross product, sizes outermost, then types, operators and scan kinds, each job holding the
// selected variants in table order.
TEST_F(Jobs, OneJobPerSizeTypeOpAndKindInThatOrder) {
  const Options o =
      Parse({"--task", "scan", "--variant", "work-efficient,naive", "--size", "100,200", "--type",
             "uint,float", "--scan-kind", "inclusive,exclusive"});
  const std::vector<Job> jobs = MakeJobs(o, tasks_);
  ASSERT_EQ(jobs.size(), 8u);
  EXPECT_EQ(jobs[0].spec.n, 100u);
  EXPECT_EQ(jobs[0].spec.type, ElementType::Uint);
  EXPECT_EQ(CScanTask::KindOf(jobs[0].spec), ScanKind::Inclusive);
  EXPECT_EQ(CScanTask::KindOf(jobs[1].spec), ScanKind::Exclusive);
  EXPECT_EQ(jobs[2].spec.type, ElementType::Float);
  EXPECT_EQ(jobs[4].spec.n, 200u);
  EXPECT_EQ(jobs[0].variants, (std::vector<std::string>{"naive", "work-efficient"}));
  for (const Job& j : jobs)
    EXPECT_EQ(j.task->Name(), "scan");
}

// A type a task does not compute is left out with a note; a variant left with no case at all is
// a usage error naming it and why.
TEST_F(Jobs, WhatATaskLeavesOutIsANoteAndAVariantWithNoCaseIsAUsageError) {
  std::vector<std::string> notes;
  const Options both = Parse({"--size", "1000", "--type", "uint,double"});
  const std::vector<Job> jobs = MakeJobs(both, tasks_, &notes);
  EXPECT_FALSE(jobs.empty());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "convolution: convolution computes float, double only; basic-2d, tiled-2d take images "
            "only (--size WIDTHxHEIGHT)");
  const Options image = Parse({"--task", "convolution", "--variant", "tiled-2d", "--size", "4096"});
  try {
    MakeJobs(image, tasks_);
    ADD_FAILURE() << "a 2-D variant with a plain count ran";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--task convolution: no case to run: tiled-2d takes images only"),
              std::string::npos)
        << what;
  }
}

// The command line's values win; else the default (a run) or the check values (the matrix).
TEST_F(Jobs, ParamCombinationsTakeTheCommandLineElseTheDefaultOrTheCheckValues) {
  const IComputeTask& conv = Task("convolution");
  ASSERT_FALSE(conv.Parameters().empty());
  const TaskParameter p = conv.Parameters().front();
  ASSERT_FALSE(p.checkValues.empty());
  const Options plain = Parse({"--task", "convolution"});
  const auto run = ParamCombinations(plain, conv, ParamValues::Default);
  ASSERT_EQ(run.size(), 1u);
  EXPECT_EQ(run[0].at(p.name), p.value);
  const auto check = ParamCombinations(plain, conv, ParamValues::Check);
  ASSERT_EQ(check.size(), p.checkValues.size());
  for (size_t i = 0; i < check.size(); ++i)
    EXPECT_EQ(check[i].at(p.name), p.checkValues[i]);
  const Options given = Parse({"--task", "convolution", "--mask-width", "3,9"});
  for (ParamValues which : {ParamValues::Default, ParamValues::Check}) {
    const auto combos = ParamCombinations(given, conv, which);
    ASSERT_EQ(combos.size(), 2u);
    EXPECT_EQ(combos[0].at(p.name), 3u);
    EXPECT_EQ(combos[1].at(p.name), 9u);
  }
  EXPECT_EQ(ParamCombinations(plain, Task("reduction"), ParamValues::Check),
            (std::vector<std::map<std::string, size_t>>{{}}));
}

// Each problem at every --local-size in the order given; a variant whose sizes resolve to the
// same local size (auto beside the size auto resolves to) runs at it once.
TEST_F(Jobs, DeviceJobsRunEachLocalSizeOnceInTheOrderGiven) {
  const DeviceInfo device = test::PlanningDevice();
  const std::vector<const char*> base = {"--task", "reduction", "--variant", "sequential",
                                         "--size", "4096",      "--type",    "uint"};
  const std::vector<Job> plain = MakeJobs(Parse(base), tasks_);
  ASSERT_EQ(plain.size(), 1u);
  const size_t autoSize = plain[0].task->LocalSize("sequential", plain[0].spec, device);
  const size_t other = autoSize == 16 ? 32 : 16;
  const std::string sizes = fmt::format("{},auto,{}", autoSize, other);
  std::vector<const char*> args = base;
  args.insert(args.end(), {"--local-size", sizes.c_str()});
  const Options o = Parse(args);
  const std::vector<Job> jobs = DeviceJobs(o, tasks_, MakeJobs(o, tasks_), device, std::nullopt);
  std::vector<size_t> ran;
  for (const Job& j : jobs)
    ran.push_back(j.task->LocalSize("sequential", j.SpecFor("sequential"), device));
  EXPECT_EQ(ran, (std::vector<size_t>{autoSize, other})) << "auto is " << autoSize;
}

// A kernel file the cases load that the folder lacks is a usage error naming it.
TEST_F(Jobs, MissingKernelFileIsAUsageErrorNamingIt) {
  const Options o = Parse({"--task", "scan", "--variant", "naive", "--size", "100"});
  const std::vector<Job> jobs = MakeJobs(o, tasks_);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "rsb-jobs-kernels";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  try {
    CheckKernelFiles(dir.string(), jobs, /*timed=*/false);
    ADD_FAILURE() << "an empty kernel folder passed";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no Scan.cl there"), std::string::npos) << what;
  }
  std::ofstream(dir / "Scan.cl") << "\n";
  EXPECT_NO_THROW(CheckKernelFiles(dir.string(), jobs, /*timed=*/false));
  EXPECT_THROW(CheckKernelFiles(dir.string(), jobs, /*timed=*/true), UsageError)
      << "a timed run needs Bandwidth.cl";
  std::filesystem::remove_all(dir);
}

}  // namespace
