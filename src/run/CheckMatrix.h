// CheckMatrix: what a bare --check runs (--check without --size, --type, --op or --scan-kind):
// a correctness matrix over every size at which a variant's launch plan changes shape.
//
// For every selected task and variant: every element type, every operator and (scan) both scan
// kinds, at two local sizes (the variant's default for the device and a small one, 4, or 8
// where the default is 4; only --local-size's sizes where it is given, auto as the default),
// the sizes 1, 2, 3, each of the variant's boundary sizes (IComputeTask::BoundarySizes: a
// work-group, a tile, a level of block sums, the grid...) and its neighbours -1 and +1, and a
// large odd size. A variant that cannot run a (type, operator, local size) on the device, or
// double without fp64, gets one case at n = 1 that reports the skip instead of one per size.
#pragma once

#include "cli/Cli.h"
#include "engine/IComputeTask.h"
#include "engine/Runner.h"
#include "platform/CLUtil.h"

#include <memory>
#include <vector>

namespace rsb {

// The large odd size every variant runs (past every level edge kept on a CPU device).
constexpr size_t kCheckMatrixLargeSize = 1000003;

// The sizes the matrix runs for one variant on one problem (spec.localSize and spec.type set),
// ascending.
std::vector<size_t> CheckMatrixSizes(const IComputeTask& task, const std::string& variant,
                                     const ProblemSpec& spec, const DeviceInfo& device);

// The jobs of the matrix for the tasks and variants o selects; variants of a task that share a
// size at a local size share the job (one input, one CPU reference).
std::vector<Job> CheckMatrixJobs(const Options& o,
                                 const std::vector<std::unique_ptr<IComputeTask>>& tasks,
                                 const DeviceInfo& device);

// A bare --check --oclgrind: a matrix small enough for a simulator (docs/USAGE.md, "Oclgrind as a
// second judge"). Each selected variant at one type (uint; convolution: float), one operator
// (sum), every scan kind, the task parameters' check values (convolution: mask widths 1, 3, 5,
// 17, 31, 63, or --mask-width's), the local sizes 16 and 64 (or --local-size's), and the sizes
// kOclgrindSizes (1-D) or kOclgrindShapes (2-D), each where the problem allows it (a mask no
// wider than the input). A variant whose kernels differ on the other code path (the single-pass
// kernels) runs on both.
constexpr size_t kOclgrindLocalSizes[] = {16, 64};
constexpr size_t kOclgrindSizes[] = {1, 333, 3001};
constexpr Extent kOclgrindShapes[] = {{37 * 29, 29}};
std::vector<Job> OclgrindMatrixJobs(const Options& o,
                                    const std::vector<std::unique_ptr<IComputeTask>>& tasks,
                                    const DeviceInfo& device);

}  // namespace rsb
