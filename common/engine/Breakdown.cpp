#include "engine/Breakdown.h"

#include <algorithm>
#include <numeric>

namespace rsb {

namespace {

size_t IndexOf(std::vector<KernelRun>& kernels, const std::string& name) {
  for (size_t i = 0; i < kernels.size(); ++i)
    if (kernels[i].name == name)
      return i;
  kernels.push_back({name, 0, 0, 0});
  return kernels.size() - 1;
}

const KernelRun* Find(const RunBreakdown& run, const std::string& name) {
  for (const auto& k : run.kernels)
    if (k.name == name)
      return &k;
  return nullptr;
}

double Median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  const size_t k = v.size();
  return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

// A name for a command the task did not name: what kind of command it was.
std::string UnnamedCommand(const cl::Event& e) {
  switch (e.getInfo<CL_EVENT_COMMAND_TYPE>()) {
    case CL_COMMAND_NDRANGE_KERNEL:
    case CL_COMMAND_TASK:
      return "unnamed kernel";
    case CL_COMMAND_FILL_BUFFER:
      return "unnamed fill";
    case CL_COMMAND_COPY_BUFFER:
      return "unnamed copy";
    case CL_COMMAND_WRITE_BUFFER:
      return "unnamed write";
    case CL_COMMAND_READ_BUFFER:
      return "unnamed read";
    default:
      return "unnamed command";
  }
}

}  // namespace

RunBreakdown BreakDownRun(const std::vector<CommandTiming>& commands) {
  RunBreakdown run;
  if (commands.empty())
    return run;
  const uint64_t begin = commands.front().startNs;
  const uint64_t end = std::max(begin, commands.back().endNs);  // the span, as the suite times it
  run.spanNs = end - begin;
  uint64_t cursor = begin;  // where the previous command's time ended
  for (const auto& c : commands) {
    // Clipped to the span and to what follows the previous command, so that nothing is counted
    // twice and the parts add up to the span exactly.
    const uint64_t s = std::clamp(c.startNs, cursor, end);
    const uint64_t e = std::clamp(c.endNs, s, end);
    KernelRun& k = run.kernels[IndexOf(run.kernels, c.name)];
    ++k.launches;
    k.bytes += c.bytes;
    k.memoryBytes += c.memoryBytes;
    k.ns += e - s;
    run.gapsNs += s - cursor;
    cursor = e;
  }
  run.gapsNs += end - cursor;  // zero unless an earlier command ended after the last one
  return run;
}

RunBreakdown BreakDownRun(const RunEvents& events) {
  if (events.Commands().empty()) {  // only the first and the last command's events were kept
    RunBreakdown run;
    if (events.Count()) {
      const cl_ulong start = events.First().getProfilingInfo<CL_PROFILING_COMMAND_START>();
      const cl_ulong end = events.Last().getProfilingInfo<CL_PROFILING_COMMAND_END>();
      run.spanNs = end > start ? end - start : 0;
    }
    return run;
  }
  std::vector<CommandTiming> commands;
  commands.reserve(events.Commands().size());
  for (const auto& c : events.Commands())
    commands.push_back({c.name.empty() ? UnnamedCommand(c.event) : c.name, c.cost.BytesMoved(),
                        c.event.getProfilingInfo<CL_PROFILING_COMMAND_START>(),
                        c.event.getProfilingInfo<CL_PROFILING_COMMAND_END>(),
                        c.cost.MemoryBytes()});
  return BreakDownRun(commands);
}

std::vector<KernelRun> SumCommands(const RunEvents& events) {
  std::vector<KernelRun> sums;
  for (const auto& c : events.Commands()) {
    const cl_ulong start = c.event.getProfilingInfo<CL_PROFILING_COMMAND_START>();
    const cl_ulong end = c.event.getProfilingInfo<CL_PROFILING_COMMAND_END>();
    KernelRun& k = sums[IndexOf(sums, c.name.empty() ? UnnamedCommand(c.event) : c.name)];
    ++k.launches;
    k.bytes += c.cost.BytesMoved();
    k.memoryBytes += c.cost.MemoryBytes();
    k.ns += end > start ? end - start : 0;
  }
  return sums;
}

std::vector<UntimedTime> Untimed(const std::vector<KernelRun>& commands, const std::string& phase) {
  std::vector<UntimedTime> untimed;
  for (const auto& c : commands)
    untimed.push_back({c.name, phase, c.launches, 1e-6 * double(c.ns)});
  return untimed;
}

namespace {

// The resets before each run: per name, the median over the runs of the per-run sum.
std::vector<KernelRun> MedianResets(const std::vector<RunBreakdown>& runs) {
  std::vector<KernelRun> resets;
  for (const auto& run : runs)
    for (const auto& k : run.untimed)
      if (std::find_if(resets.begin(), resets.end(),
                       [&](const KernelRun& r) { return r.name == k.name; }) == resets.end())
        resets.push_back(k);
  for (auto& reset : resets) {
    std::vector<double> samples;
    for (const auto& run : runs) {
      const auto it = std::find_if(run.untimed.begin(), run.untimed.end(),
                                   [&](const KernelRun& r) { return r.name == reset.name; });
      samples.push_back(it == run.untimed.end() ? 0 : double(it->ns));
    }
    reset.ns = uint64_t(Median(samples));
  }
  return resets;
}

// The median run(s): the middle of the runs sorted by span (two for an even count).
std::vector<size_t> MedianRuns(const std::vector<RunBreakdown>& runs) {
  std::vector<size_t> order(runs.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t c) { return runs[a].spanNs < runs[c].spanNs; });
  const size_t k = order.size();
  if (k % 2 == 0)
    return {order[k / 2 - 1], order[k / 2]};
  return {order[k / 2]};
}

// One kernel's time: the mean over the median runs `middle` (perRun: ns summed over them -> mean
// ms), its share of their span spanMs, and its median over every run.
KernelTime KernelTimeOf(const std::vector<RunBreakdown>& runs, const std::vector<size_t>& middle,
                        const std::string& name, double perRun, double spanMs) {
  KernelTime t;
  t.kernel = name;
  for (size_t m : middle)
    if (const KernelRun* kr = Find(runs[m], name))
      t.timeMs += perRun * double(kr->ns);
  // Launches and bytes as in the median run (the same in every run of a plan).
  const KernelRun* shape = Find(runs[middle.front()], name);
  for (size_t i = 0; !shape && i < runs.size(); ++i)
    shape = Find(runs[i], name);
  t.launches = shape->launches;
  t.bytes = shape->bytes;
  t.memoryBytes = shape->memoryBytes;
  std::vector<double> samples;
  for (const auto& run : runs) {
    const KernelRun* kr = Find(run, name);
    samples.push_back(kr ? 1e-6 * double(kr->ns) : 0);
  }
  t.timeMsMedian = Median(samples);
  t.share = spanMs > 0 ? t.timeMs / spanMs : 0;
  t.gbytesS = t.timeMs > 0 ? double(t.bytes) / (t.timeMs * 1e6) : 0;
  return t;
}

}  // namespace

Breakdown SummariseBreakdown(const std::vector<RunBreakdown>& runs) {
  Breakdown b;
  b.untimed = Untimed(MedianResets(runs), "prepare");
  std::vector<std::string> names;  // in order of first launch, over every run
  for (const auto& run : runs)
    for (const auto& k : run.kernels)
      if (std::find(names.begin(), names.end(), k.name) == names.end())
        names.push_back(k.name);
  if (names.empty())
    return b;
  const std::vector<size_t> middle = MedianRuns(runs);
  const double perRun = 1e-6 / double(middle.size());  // ns summed over `middle` -> mean ms
  double spanMs = 0;
  for (size_t m : middle) {
    spanMs += perRun * double(runs[m].spanNs);
    b.gapsMs += perRun * double(runs[m].gapsNs);
  }
  std::vector<double> gaps;
  for (const auto& run : runs)
    gaps.push_back(1e-6 * double(run.gapsNs));
  b.gapsMsMedian = Median(gaps);
  for (const auto& name : names)
    b.kernels.push_back(KernelTimeOf(runs, middle, name, perRun, spanMs));
  return b;
}

double Utilisation(double gbytesS, double copyGBs) {
  return copyGBs > 0 && gbytesS > 0 ? gbytesS / copyGBs : 0;
}

}  // namespace rsb
