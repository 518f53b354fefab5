// Job expansion: what the command line selects, as jobs the runner takes. MakeJobs gives one
// problem per (task, size, type, operator, scan kind, task parameters); DeviceJobs puts each at
// every --local-size on one device with its tuning profile's settings (or gives a bare --check's
// matrix, or a --cases file's cases). The benchmark run and each of its workers make the same
// list from the same command line and device. Unit-tested in tests/JobsTests.cpp.
#pragma once

#include "cli/Cli.h"
#include "engine/Runner.h"
#include "run/Profile.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rsb {

using Tasks = std::vector<std::unique_ptr<IComputeTask>>;

// Where a parameter that the command line leaves out takes its values from: its default, or its
// check values (the correctness matrix's; the default where it has none).
enum class ParamValues { Default, Check };

// The values of a task's parameters to sweep: each parameter's list from the command line
// (--NAME), else as `which` says; one map per combination, the first parameter varying slowest.
std::vector<std::map<std::string, size_t>> ParamCombinations(const Options& o,
                                                             const IComputeTask& task,
                                                             ParamValues which);

// One job per (task, size, type, op, scan kind, task parameters); every case starts from
// o.problem. A task runs the types and operators it computes (Types(), Ops()), each variant the
// sizes of its kind (plain counts, or images for TakesShape); what the command line asked for
// and a task leaves out is said in `notes`. A task or variant named on the command line that is
// left with no case at all is a UsageError.
std::vector<Job> MakeJobs(const Options& o, const Tasks& tasks,
                          std::vector<std::string>* notes = nullptr);

// The jobs of one device: each of MakeJobs' problems at every --local-size, in the order given
// (auto resolved per variant on this device, from its tuning profile's entry where it has one; a
// variant whose sizes resolve to one it already runs at, auto = 256 beside 256, runs at it once),
// or a bare --check's matrix, or --cases' problems as given. Each variant's settings come from
// the profile where --tune and --local-size leave them (ApplyProfile).
std::vector<Job> DeviceJobs(const Options& o, const Tasks& tasks, const std::vector<Job>& problems,
                            const DeviceInfo& device, const std::optional<Profile>& profile);

// Every .cl file the jobs load (and Bandwidth.cl for timed runs) must be in `dir`: a missing one
// is a UsageError naming it, before anything runs.
void CheckKernelFiles(const std::string& dir, const std::vector<Job>& jobs, bool timed);

}  // namespace rsb
