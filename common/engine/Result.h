// One case's result: the record every output format, the worker protocol and the result-file
// reader share, its label and its JSON form (the fields docs/OUTPUT.md lists, the schema
// docs/result-schema.json checks).
#pragma once

#include "engine/Breakdown.h"
#include "engine/IComputeTask.h"
#include "engine/Oclgrind.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rsb {

struct TimeStats {
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0;  // milliseconds
  // 95% confidence interval of the median (order statistics); 0, 0: too few samples (< 6).
  double ciLow = 0, ciHigh = 0;
};

// error: an OpenCL or system error in that case; timeout: still running after --timeout;
// untimed: validated, but the device's profiling timer cannot be trusted (ProfilingTimer.h), so
// nothing of it was timed.
enum class Status { Passed, Failed, Skipped, Error, Timeout, Untimed };
std::string ToString(Status s);
const std::vector<Status>& AllStatuses();
std::optional<Status> ParseStatus(const std::string& s);

struct Result {
  std::string task, variant;
  ElementType type = ElementType::Uint;
  Op op = Op::Sum;
  // The task's parameters that are keys of the case (TaskParameter::field), by field name, as
  // written ("scan_kind": "inclusive").
  std::map<std::string, std::string> fields;
  size_t n = 0;
  size_t height = 0;  // > 0: an image of n / height x height (--size WxH); 0: a plain count
  size_t localSize = 0;
  size_t device = 0;      // which device of the run (RunInfo::devices; --device all or a list)
  std::string codePath;   // "gpu" or "cpu": the kernel shape that ran
  bool portable = false;  // --portable
  bool lookbackFallback = false;         // --lookback-fallback
  std::map<std::string, size_t> tuning;  // the task's tuning knobs, as used
  std::map<std::string, size_t> params;  // the task's parameters (mask-width), as used
  SettingsSource settings;               // where its local size and tuning came from
  // The kernels' build options: type, operator, local size, tuning, the index width
  // (-DRSB_INDEX64=1: 64-bit IDX). Empty where no plan was made (a case skipped before it).
  std::string kernelOptions;
  Status status = Status::Skipped;
  std::string message;
  // A kernel that did not build: the compiler's log, real file names and each error's source
  // line (CLUtil.h's KernelBuildError); message holds its first error. Empty otherwise.
  std::string buildLog;
  size_t iterations = 0;
  TimeStats timeMs;
  // The clock that timed it (--timer): "events" (profiling events) or "host" (the host's
  // monotonic clock around a finished queue); "" where it was not timed. Its resolution in ns.
  std::string timer;
  uint64_t timerResolutionNs = 0;
  // Every timed run's time in ms, a list per round (--repetitions N: N rounds, interleaved across
  // the selected cases; else one). time_ms summarises them all, as one run's.
  std::vector<std::vector<double>> samplesMs;
  // Across 2 or more rounds: their medians summarised (median, min, max, mean, stddev, and the
  // 95% interval of the median from 6 rounds), the run-to-run spread a comparison meets.
  TimeStats roundsMs;
  bool ciMet = false;             // the median's interval is within +-ciTarget of it
  double ciTarget = 0;            // the target it was timed to
  bool cold = false;              // timed with the last-level cache flushed before every run
  double gelemS = 0;              // n / median time
  double gbytesS = 0;             // cost.BytesMoved() / median time
  double bandwidthUtil = 0;       // gbytesS / the device's copy ceiling (0: unknown)
  std::string ceiling;            // the stream mix of its traffic (CeilingFor), "" if unknown
  double ceilingGBs = 0;          // that mix's ceiling
  size_t ceilingStreamBytes = 0;  // the smallest stream size that ceiling took rates from
  double utilisation = 0;         // gbytesS / ceilingGBs (0: unknown)
  // Why utilisation cannot be taken at its word: above kSuspectUtilisation of the ceiling
  // without the cache mark (fitsInCache) to explain it; empty when it can.
  std::string utilisationSuspect;
  bool fitsInCache = false;     // its bytes read fit in the device's last-level cache
  CostModel cost;               // the variant's launch plan, summed
  size_t launchesEnqueued = 0;  // commands the validated run actually enqueued
  size_t validatedRuns = 0;     // runs whose every output element was checked
  Breakdown breakdown;          // per kernel, from the timed runs (Breakdown.h)
  // The timed runs reduced (Breakdown.h), kept under --repetitions (RunSettings::keepRuns) so
  // that a later round's runs join the breakdown (AddRound) and it adds up to the median of
  // every round's runs. The worker protocol carries them; a result file does not.
  std::vector<RunBreakdown> timedRuns;
  // --oclgrind: Oclgrind's diagnostics and instruction counts for the case (Oclgrind.h);
  // absent when the case did not run under Oclgrind.
  std::optional<OclgrindReport> oclgrind;
};

// "scan/single-pass uint sum inclusive n=1000": one case, named the same way everywhere, its
// fields' values after the operator. With a local size (not 0) it ends in " L=<local size>". An
// image is n=<width>x<height>; a result's label ends with its task parameters (" mask-width=5").
std::string CaseLabel(const Result& r);
// Results alike for a person reading a list of them (the table's notes, the FAILED lines): one
// device, the same status, and the same message but for its numbers (a value, an index, n, a
// work-item; a number right after ':', a file's line and column, counts). Passed results are
// never grouped. Each group: the index of its first result and how many there are, in the
// order of their first results.
struct AlikeGroup {
  size_t first = 0, count = 0;
};
std::vector<AlikeGroup> GroupAlike(const std::vector<const Result*>& results);
// " (and 341 more cases with this message but for its numbers)" for a group of 342; "" for one.
std::string AlikeText(size_t count);

// "inclusive": the values of a result's fields, in their order, joined by sep ("" without any).
std::string FieldsText(const Result& r, const std::string& sep = " ");
// "1000", or "100x10" for an image.
std::string SizeText(size_t n, size_t height);

// A result as one JSON object of a results file's "results" and back (ResultFromJson throws
// nlohmann::json's exceptions for a missing or mistyped field). withRuns: with timedRuns too
// (`timed_runs`: a worker's report, not a result file's field).
nlohmann::json ResultToJson(const Result& r, bool withRuns = false);
// The case's identity as JSON (task, variant, type, op, its fields, n, width, height,
// local_size): the keys a result and an explained case share.
nlohmann::json CaseJson(const Result& r);
// fields: the fields the object may have (FieldParams of the tasks).
Result ResultFromJson(const nlohmann::json& j, const std::vector<std::string>& fields);

}  // namespace rsb
