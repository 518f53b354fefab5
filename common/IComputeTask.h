// IComputeTask: what a task (reduction, scan, ...) provides to the shared runner.
//
// A task owns its device buffers and kernels, its CPU reference and its validation. It never
// prints, never times itself and never parses options: the runner (Runner.h) decides what runs
// when, times it with the events the task hands back, and the reporter prints.
#pragma once

#include "CLUtil.h"
#include "OpenCL.h"
#include "Types.h"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rsb {

// One problem: what to compute, on how many elements.
struct ProblemSpec {
  ElementType type = ElementType::Uint;
  Op op = Op::Sum;
  std::optional<ScanKind> scanKind;  // set for tasks whose ScanKinds() is not empty
  size_t n = 1;
  size_t localSize = 0;  // 0: the variant's best local size for the device (Task::LocalSize)
  uint64_t seed = 1;
};

// The course's parallel time, cost and work for one run of a variant on one problem, and the
// global memory traffic from which GB/s is computed.
struct CostModel {
  uint64_t launches = 0;    // device commands (kernels, fills, copies) per run
  uint64_t steps = 0;       // parallel steps: dependent phases separated by a barrier or launch
  uint64_t ops = 0;         // applications of the operator (work W(n))
  uint64_t bytesMoved = 0;  // bytes read from plus written to global memory
};

struct Validation {
  bool passed = false;
  std::string message;  // on failure: variant, first wrong index, expected, actual
};

// Thrown by a task when a variant cannot run on this device for this problem (local size
// beyond the kernel's limit, fp64 or 64-bit atomics missing, buffer larger than the device
// allows). The runner reports it as "skipped" with the reason; it does not fail the run.
class VariantSkipped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Collects the events of one run. The task passes Next() to every command it enqueues; the run
// is timed from the first command's start to the last command's end.
class RunEvents {
 public:
  cl::Event* Next() {
    ++count_;
    return count_ == 1 ? &first_ : &last_;
  }
  void Clear() {
    count_ = 0;
    first_ = cl::Event();
    last_ = cl::Event();
  }
  size_t Count() const { return count_; }
  const cl::Event& First() const { return first_; }
  const cl::Event& Last() const { return count_ > 1 ? last_ : first_; }

 private:
  size_t count_ = 0;
  cl::Event first_, last_;
};

class IComputeTask {
 public:
  virtual ~IComputeTask() = default;

  virtual std::string Name() const = 0;
  virtual std::vector<std::string> Variants() const = 0;
  virtual std::string Describe(const std::string& variant) const = 0;
  // Scan kinds this task distinguishes (empty: none, spec.scanKind stays unset).
  virtual std::vector<ScanKind> ScanKinds() const { return {}; }

  // The local size the variant will use: spec.localSize if set, else its best for the device.
  virtual size_t LocalSize(const std::string& variant, const ProblemSpec& spec,
                           const DeviceInfo& device) const = 0;

  // Creates the input (random, seeded), uploads it and allocates the output. Untimed.
  virtual void InitResources(const ProblemSpec& spec, ProgramCache& programs,
                             cl::CommandQueue& queue) = 0;
  // The CPU reference for the current problem.
  virtual void ComputeCPU() = 0;
  virtual void ReleaseResources() = 0;

  // Untimed, before each run: restores what a run consumes; with poison, fills every output
  // the variant writes with a poison pattern so that unwritten elements are caught.
  virtual void PrepareRun(cl::CommandQueue& queue, const std::string& variant,
                          const ProblemSpec& spec, bool poison) = 0;
  // Enqueues one complete run of the variant. Does not wait for it.
  virtual void ComputeGPU(cl::CommandQueue& queue, const std::string& variant,
                          const ProblemSpec& spec, RunEvents& events) = 0;
  // Reads back the variant's output and compares every element with the CPU reference.
  virtual Validation ValidateResults(cl::CommandQueue& queue, const std::string& variant,
                                     const ProblemSpec& spec) = 0;

  virtual CostModel Cost(const std::string& variant, const ProblemSpec& spec) const = 0;
};

}  // namespace rsb
