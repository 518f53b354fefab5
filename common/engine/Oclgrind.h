// --check --oclgrind: the selected cases run on Oclgrind (an OpenCL device simulator), which
// reports what validation cannot see on the device at hand: out-of-bounds accesses (always on),
// data races (--data-races) and barrier divergence, each with the kernel's file, line and
// work-item, and counts the instructions each kernel executes (--inst-counts).
//
// How: the run starts itself again under `oclgrind` (ExecUnderOclgrind), so that its only
// platform is Oclgrind's; its cases run in worker processes (Worker.h), each with a log file of
// its own (Oclgrind's messages) and its stdout in a file (the instruction counts). Between a
// case's `begin` and `result`, what a worker added to the two files is that case's
// (ParseOclgrindLog, ParseInstructionCounts); ApplyOclgrind makes the case `failed` on a
// diagnostic.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rsb {

struct Result;

// Where a helper function is called: the calling function, its file and the lines of its calls.
struct OclgrindCall {
  std::string function;
  std::string file;
  std::vector<size_t> lines;
};

struct OclgrindDiagnostic {
  // invalid-read, invalid-write (out of bounds), data-race, divergence (a barrier or a
  // work-group function not reached by every work-item), uninitialized, other.
  std::string kind;
  std::string kernel;
  std::string file;      // the kernel file's name (Scan.cl), or a header's (Atomics.clh)
  size_t line = 0;       // 0: Oclgrind gave none
  std::string workItem;  // "Global(99,0,0) Local(3,0,0) Group(6,0,0)" (a race: the first)
  std::string text;      // Oclgrind's first line of the message
  // Where the line is in a helper function, not in the kernel itself: the helper's name, and
  // the calls that lead to it, its caller's first and the kernel's last (read from the source
  // files, AddCallers: where a function calls the next on several lines, each line).
  std::string function;
  std::vector<OclgrindCall> calledFrom;
};

struct OclgrindReport {
  // Distinct diagnostics (kind, kernel, file, line), in the order first seen, at most
  // kMaxOclgrindDiagnostics; diagnosticCount counts every message.
  std::vector<OclgrindDiagnostic> diagnostics;
  size_t diagnosticCount = 0;
  uint64_t instructions = 0;                // every kernel launch of the case
  std::map<std::string, uint64_t> kernels;  // per kernel name, summed over its launches
};

constexpr size_t kMaxOclgrindDiagnostics = 20;

// The environment variable that marks a process started under Oclgrind by this program.
constexpr const char* kOclgrindMarker = "RSB_UNDER_OCLGRIND";

// The oclgrind program on PATH; a UsageError naming the Debian package where there is none.
std::string FindOclgrind();

// True in a process ExecUnderOclgrind started.
bool UnderOclgrind();

// Replaces this process with `oclgrind --data-races --inst-counts --num-threads 1 SELF args...`
// (SELF: this executable), marked with kOclgrindMarker. One work-item thread: the instruction
// counts and the order of atomics are then the same every run. Does not return.
[[noreturn]] void ExecUnderOclgrind(const std::string& oclgrind, int argc, char** argv);

// Oclgrind's messages (its --log file's text) as diagnostics, each one. A message Oclgrind
// attributes to input.cl (the program source, as this suite hands it over) is given the name of
// the .cl file in kernelDir that defines its kernel; a header's path its file name.
std::vector<OclgrindDiagnostic> OclgrindMessages(const std::string& log,
                                                 const std::string& kernelDir);

// The messages as a report's distinct diagnostics (and their count), each with its callers
// (AddCallers).
void ParseOclgrindLog(const std::string& log, const std::string& kernelDir, OclgrindReport& out);

// Oclgrind optimises a program before it runs it (unless built with -cl-opt-disable), and where
// the optimiser merges two accesses into one (a load of src[i - 1] or src[i] made one load), the
// access has line 0. The options a run that locates such diagnostics builds with (through
// OCLGRIND_BUILD_OPTIONS): unoptimised, every access keeps its line, while the instruction
// counts come from the optimised run.
constexpr const char* kOclgrindLocateOptions = "-cl-opt-disable";

// Whether a diagnostic of the report has a kernel but no line.
bool NeedsLocating(const OclgrindReport& report);

// Each diagnostic without a line takes the file and line of a message of the unoptimised run
// (OclgrindMessages) of the same kind and kernel, the same work-item's where there is one; then
// the report's diagnostics are distinct again and have their callers.
void LocateFrom(OclgrindReport& report, const std::vector<OclgrindDiagnostic>& unoptimised,
                const std::string& kernelDir);

// Each diagnostic whose line lies in a helper function, not in its kernel: the helper's name
// and the calls from the kernel down to it (function and calledFrom), read from the .cl and
// .clh files of kernelDir.
void AddCallers(OclgrindReport& report, const std::string& kernelDir);

// --inst-counts' histograms ("Instructions executed for kernel 'K':" then "  N - opcode" lines)
// summed per kernel and in all.
void ParseInstructionCounts(const std::string& text, OclgrindReport& out);

// Records the report in the result. A diagnostic fails a case that passed, with a message
// "oclgrind: <kind> at <file>:<line> in <kernel>, work-item <...> (<text>)[; N more]"; where the
// case already failed (or errored) the message is appended to its own. A clean case keeps its
// status, and its message says how many instructions it took.
void ApplyOclgrind(Result& r, OclgrindReport report);

// "oclgrind: no diagnostic, 12345 instructions" or the diagnostic's line: for the table's notes.
std::string OclgrindSummary(const OclgrindReport& report);
// " (LoadOrIdentity, called at Scan.cl:43 in LoadTile, called at Scan.cl:190, 192)" where the
// diagnostic's line is in a helper function; "" where it is in the kernel.
std::string OclgrindHelperText(const OclgrindDiagnostic& d);

}  // namespace rsb
