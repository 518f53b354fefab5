// The per-kernel breakdown of a variant's time: where the span from the first command's start to
// the last command's end goes, kernel by kernel, and how long the queue sat idle in between.
//
// Each timed run is reduced to per-kernel sums as soon as it has finished (its events are then
// released, so hundreds of launches times many runs cost a few numbers per kernel and run):
// walking the commands in launch order, a command's time is the part of its [START, END] that
// lies after the previous command's end and inside the span, and a gap is the time between one
// command's end and the next one's start (none where they overlap). Kernel times plus gaps are
// then exactly the run's span, whatever the device reports.
//
// Over the timed runs, the breakdown reported is that of the median run: the run whose span is
// the median (for an even number of runs, the mean of the two middle runs, as the median is), so
// that its kernel times plus its gaps are the median span the suite reports. Each kernel also
// carries the median over all timed runs of its per-run sum (`time_ms_median`), the steadier
// figure for one kernel; those medians need not add up to the median span.
#pragma once

#include "engine/IComputeTask.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rsb {

// One command of a run, from its profiling event: name, modelled bytes, START and END in ns.
struct CommandTiming {
  std::string name;
  uint64_t bytes = 0;
  uint64_t startNs = 0, endNs = 0;
  uint64_t memoryBytes = 0;  // of bytes, those that must come from or go to memory (MemoryBytes)
};

// One kernel (commands of one name) in one run.
struct KernelRun {
  std::string name;
  size_t launches = 0;
  uint64_t bytes = 0;  // the traffic model's bytes read + written by its launches
  uint64_t ns = 0;
  uint64_t memoryBytes = 0;  // of bytes, the distinct reads and the writes (CostModel)
};

// One run reduced: kernels in order of first launch; sum of their ns + gapsNs == spanNs. Untimed:
// the commands enqueued before the run (resets), each name's launches and END - START summed.
struct RunBreakdown {
  uint64_t spanNs = 0, gapsNs = 0;
  std::vector<KernelRun> kernels;
  std::vector<KernelRun> untimed;
  double SpanMs() const { return 1e-6 * double(spanNs); }
};

RunBreakdown BreakDownRun(const std::vector<CommandTiming>& commands);
// Reads every command's profiling times (the run has finished) and reduces them.
RunBreakdown BreakDownRun(const RunEvents& events);
// Commands outside a timed span (resets, poison fills): per name, launches and END - START.
std::vector<KernelRun> SumCommands(const RunEvents& events);

// One kernel of a result's breakdown.
struct KernelTime {
  std::string kernel;
  size_t launches = 0;
  double timeMs = 0;         // in the median run: kernels' timeMs + gapsMs == the median span
  double timeMsMedian = 0;   // median over the timed runs of the per-run sum
  double share = 0;          // timeMs / the median span
  uint64_t bytes = 0;        // bytes read + written, from the plan's steps
  double gbytesS = 0;        // bytes / timeMs
  double bandwidthUtil = 0;  // memoryBytes / timeMs against the ceiling (Utilisation), 0: unknown
  uint64_t memoryBytes = 0;  // of bytes, the distinct reads and the writes (JSON memory_bytes)
  std::string utilisationSuspect;  // bandwidthUtil above the ceiling unexplained (SetUtilisation)
};

// Commands outside the timed span: phase "prepare" (the resets before every timed run, median
// over the timed runs of the per-run sum) or "validation" (the poison fills before the first
// validated run).
struct UntimedTime {
  std::string command, phase;
  size_t launches = 0;
  double timeMs = 0;
};
std::vector<UntimedTime> Untimed(const std::vector<KernelRun>& commands, const std::string& phase);

struct Breakdown {
  std::vector<KernelTime> kernels;  // in launch order
  std::vector<UntimedTime> untimed;
  double gapsMs = 0;        // queue idle time inside the median run's span
  double gapsMsMedian = 0;  // median over the timed runs
  bool Empty() const { return kernels.empty(); }
};

// The breakdown of a case from its timed runs (each already reduced), without utilisation.
Breakdown SummariseBreakdown(const std::vector<RunBreakdown>& runs);

// The bandwidth utilisation of a figure in GB/s: against the device's measured copy bandwidth
// for now. The one place the ceiling is applied, for a variant and for each of its kernels.
double Utilisation(double gbytesS, double copyGBs);

}  // namespace rsb
