// LaunchPlan: what one run of a variant enqueues, written once per shape by the task and used
// three ways: to enqueue (PlanExecutor), to model cost (CostOf) and to size scratch buffers.
//
// A plan is the ordered list of device commands of one run (kernels and fills), each with its
// arguments, its global and local size, and its own share of the course's cost model: bytes
// read and written in global memory, operator applications and barrier-separated steps.
#pragma once

#include "platform/OpenCL.h"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace rsb {

// Buffers a plan refers to: the task's input and output, then the plan's scratch buffers, and
// the read-only inputs a task uploads besides its input (PlannedTask::ConstInputs: a
// convolution's mask), kFirstConstInput + i.
enum BufferId : size_t {
  kInputBuffer = 0,
  kOutputBuffer = 1,
  kFirstScratch = 2,
  kFirstConstInput = 1000
};
struct BufferArg {
  size_t id;
};
// An element count, offset or stride: a kernel argument of type IDX (kernels/Common.clh), passed
// as cl_uint or, in a plan with 64-bit indices (LaunchPlan::index64), as cl_ulong.
struct IndexArg {
  uint64_t value;
};
// A count a plan that keeps device state from run to run (LaunchPlan::resets) takes from the
// runs before it, since its resets last ran, as a cl_uint: kRunNumber, this run's number (1 for
// the first); kGroupsBefore, the work-groups the earlier runs' launches that take it started
// (wrapping at 2^32, as a device's ticket counter does).
struct RunArg {
  enum Which { kRunNumber, kGroupsBefore } which;
};

using KernelArg = std::variant<BufferArg, cl_uint, cl_ulong, IndexArg, RunArg>;

// The largest n whose kernels index with 32-bit IDX: every index a kernel computes for it,
// rounding up to whole tiles and work-groups included, stays below 2^32. Larger n, and plans
// asked for it (--tune index-bits=64), build with -DRSB_INDEX64=1.
constexpr uint64_t kMaxElements32BitIndex = uint64_t(1) << 31;

// The course's parallel time, cost and work for one run of a variant on one problem, and the
// global memory traffic from which GB/s is computed.
struct CostModel {
  uint64_t launches = 0;      // device commands (kernels, fills) per run
  uint64_t steps = 0;         // parallel steps: dependent phases separated by a barrier or launch
  uint64_t ops = 0;           // applications of the operator (work W(n))
  uint64_t bytesRead = 0;     // from global memory: every read the kernels ask for
  uint64_t bytesWritten = 0;  // to global memory
  // Of bytesRead, the reads of a byte that the same command has already read (neighbouring
  // work-items reading overlapping input: convolution's taps, halos), and the reads of what the
  // command before wrote where that fits in the last-level cache (CountCacheServedReads): the
  // cache can serve them, DRAM need not. Utilisation of the memory ceilings counts
  // MemoryBytes(), GB/s BytesMoved().
  uint64_t bytesReadRepeated = 0;
  // p, the work-items launched: the largest global size of the run's launches (CostOf; fills
  // launch none). The course's cost of a run is p * steps.
  uint64_t workItems = 0;
  uint64_t BytesMoved() const { return bytesRead + bytesWritten; }
  uint64_t DistinctBytesRead() const { return bytesRead - bytesReadRepeated; }
  uint64_t MemoryBytes() const { return DistinctBytesRead() + bytesWritten; }
};

struct LaunchStep {
  std::string kernel;  // kernel name; empty: a fill of fillBuffer with pattern
  std::vector<KernelArg> args;
  size_t globalSize = 0, localSize = 0;
  size_t fillBuffer = 0, fillBytes = 0;
  std::vector<unsigned char> pattern;
  CostModel cost;  // this command's share; cost.launches is 1
  // Where one kernel plays two roles in a run (the first pass over the input, then the smaller
  // passes over partials or block sums), the later ones say so: the per-kernel breakdown groups
  // commands by Name().
  std::string role;

  // Sets the command's traffic and work; returns itself so that a plan reads as one line a step.
  LaunchStep& Costs(uint64_t bytesRead, uint64_t bytesWritten, uint64_t ops, uint64_t steps);
  // Of the reads Costs() set, how many bytes repeat a byte this command already read.
  LaunchStep& Repeated(uint64_t bytes);
  // Sets the role ("" leaves the kernel's name alone).
  LaunchStep& As(std::string stepRole);
  // "ReduceInterleaved", "ScanWorkEfficient (block sums)", "FillBuffer": the command's name in
  // the per-kernel breakdown.
  std::string Name() const;
};

// workItems rounded up to whole work-groups of localSize.
LaunchStep KernelStep(std::string kernel, std::vector<KernelArg> args, size_t workItems,
                      size_t localSize);
template <class P>
LaunchStep FillStep(size_t buffer, P pattern, size_t bytes) {
  LaunchStep s;
  s.fillBuffer = buffer;
  s.fillBytes = bytes;
  const auto* p = reinterpret_cast<const unsigned char*>(&pattern);
  s.pattern.assign(p, p + sizeof(P));
  return s;
}

// What a validated run writes over a scratch buffer before it runs: `pattern` repeated (empty:
// nothing); with runShift >= 0, pattern is one 64-bit word with the runs since the plan's resets
// OR'ed in at that bit (a status word left by the run before).
struct ScratchPoison {
  std::vector<unsigned char> pattern;
  int runShift = -1;
};

// A case's memory, in bytes: its device buffers and its host arrays (input, reference,
// read-back).
struct MemoryNeeds {
  uint64_t hostBytes = 0, deviceBytes = 0;
};

struct LaunchPlan {
  std::string file;                  // program (kernels/<file>) every kernel step comes from
  std::string options;               // its build options, but for the index width (BuildOptions)
  bool index64 = false;              // IDX is 64-bit: -DRSB_INDEX64=1, IndexArg as cl_ulong
  std::vector<size_t> scratchBytes;  // buffer kFirstScratch + i holds scratchBytes[i]
  std::vector<LaunchStep> prepare;   // untimed, before every run: resets of scratch state
  std::vector<LaunchStep> steps;     // one run, timed
  // Device state a run leaves for the next (the single-pass scan's status words and ticket):
  // `resets` (untimed) restore it before a case's first run and again once resetEvery runs
  // (0: never) have run since; RunArg counts the runs since.
  std::vector<LaunchStep> resets;
  uint64_t resetEvery = 0;
  // Scratch buffer i's poison, where i < poison.size(); the others: the poison byte, unless a
  // prepare or reset step fills them (counters the protocol needs at zero).
  std::vector<ScratchPoison> poison;
  size_t outputElements = 0;  // the output's elements
  MemoryNeeds memory;         // what the case holds at once

  size_t AddScratch(size_t bytes) {
    scratchBytes.push_back(bytes);
    return kFirstScratch + scratchBytes.size() - 1;
  }
  // What the program is built with: options, the index width and the kernels the plan launches
  // (-DRSB_KERNELS_SELECTED=1 -DRSB_KERNEL_<name>=1 each: kernels/Common.clh's RSB_WANTS, so
  // that where the whole file does not build, the plan's kernels build alone: ProgramCache).
  std::string BuildOptions() const;
};

// A command's reads of what the command before it wrote (a tree's partial sums, the next level
// of a multi-launch reduction), where that is at most cacheBytes (the last-level cache): the
// cache serves them, so they join cost.bytesReadRepeated (at most the command's distinct reads,
// at most what the one before wrote). cacheBytes 0: nothing changes. PlannedTask::PlanFor
// applies it with the device's CL_DEVICE_GLOBAL_MEM_CACHE_SIZE.
void CountCacheServedReads(LaunchPlan& plan, uint64_t cacheBytes);

// Whether a step of the run (not a prepare step) writes the buffer: a kernel that takes it as an
// argument, or a fill of it.
bool StepsTouch(const LaunchPlan& plan, size_t buffer);

// The run's cost: the sum of its steps (prepare steps are not part of a run); workItems the
// largest global size among them.
CostModel CostOf(const LaunchPlan& plan);

}  // namespace rsb
