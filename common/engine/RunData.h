// RunData: what the runs of a case hold, owned by the runner, never by a task: the input and the
// CPU references on the host; on the device the input, the output, the task's read-only inputs
// and the plan's scratch buffers; and the runs since the plan's resets (LaunchPlan::resets). The
// functions below run a case's plan (ResolveCase's) on it; the task's const calls make what it
// holds (ConstInputs, KeyedReference).
#pragma once

#include "engine/IComputeTask.h"
#include "engine/TaskUtil.h"

#include <map>
#include <string>
#include <vector>

namespace rsb {

struct RunData {
  ProblemSpec problem;  // of the input (MakeInput)
  HostArray input;
  std::map<std::string, Expected> expected;  // by ReferenceKey, each computed when first needed
  cl::Buffer inputBuffer, outputBuffer;
  size_t outputBytes = 0;
  std::vector<cl::Buffer> constBuffers;
  std::vector<ScratchBuffer> scratch;  // shared by the cases of a job
  // The runs since the plan's resets ran, and the work-groups those runs' launches that take a
  // RunArg started; resetDue: the resets run before the next run (a new case).
  uint64_t runs = 0, groups = 0;
  bool resetDue = true;

  void StartCase() { resetDue = true; }
  // Everything released (the job's end, or an OpenCL error).
  void Release() { *this = RunData(); }
};

// The input of spec (seeded random, or spec.input) made and uploaded with the task's read-only
// inputs; the references of an earlier input dropped. Untimed.
void MakeInput(TaskContext& ctx, const IComputeTask& task, const ProblemSpec& spec, RunData& data);

// Untimed, before each run: the output and the plan's scratch buffers allocated, every kernel of
// the run built and checked against the device's limits, the resets where due, the prepare
// steps; with poison, the scratch buffers and the output poisoned, so that unwritten elements
// are caught. Commands take their events from `untimed`.
void PrepareRun(TaskContext& ctx, const LaunchPlan& plan, RunData& data, bool poison,
                RunEvents& untimed);

// Enqueues one complete run of the plan, each command's event from `events`. Does not wait.
void EnqueueRun(TaskContext& ctx, const LaunchPlan& plan, RunData& data, RunEvents& events);

// Reads back the output and compares every element with the task's reference for the variant.
Validation ValidateRun(TaskContext& ctx, const IComputeTask& task, const std::string& variant,
                       const LaunchPlan& plan, RunData& data);

}  // namespace rsb
