// `reduce-scan-bench serve`: the one protocol through which a parent process (`ab`, an isolated
// run, any program that runs the suite as its children) runs the benchmark. A resident child run
// serves command lines one after another in this one process, so that the device's OpenCL context
// (DeviceContext, platform/CLUtil.h) is made once for many runs instead of once per child process.
// On NVIDIA's driver a process's contexts take about 0.4 s of a machine-wide lock, which limits how
// many short child processes one device runs a minute (docs/BENCHMARKS.md). A child process of one
// run (`ab`'s, a parent's timed or checking run) is a serve process whose input is that request.
//
// Protocol: requests on stdin, one JSON object a line, {"argv": [...], "dir": D, "out": F,
// "err": G, "timer": T, "turns": FD}: the run's command line (argv[0] the binary; an argument
// that is not UTF-8 as the array of its bytes), its working folder, the files its stdout and
// stderr go to (each "" or absent: as they are), the device's timer verdict a parent's earlier
// timed run found ("usable", or why not: taken as told, not checked again; absent: checked), and
// the fd of this process's end of a turns socket whose timed runs alternate with another
// process's (platform/TimedTurns.h; absent: none). Each answer, one line on fd 3 (where it is
// open): {"exit": N}, N the run's exit status as the same command line in a process of its own
// would end (RunCommand). The process ends at the end of its input, with its parent (also in the
// middle of a run), or right after answering a run that ended other than 0 or 1 (an OpenCL error
// may have left the context unusable for the next run), with the exit status of its last run.
// A request may add "worker": {"job": J, "skip": S, "scope": "job"|"rest"|"case", "device": D,
// "bandwidth": B, "timer": T (optional), "build_failed": [KEY...]}: the process is then a worker
// of an isolated run (common/engine/Worker.h, which starts it), that request its only one; the
// worker's lines (Worker.h) come on fd 3 before the answer, and the process ends with the run's
// exit status.
#pragma once

namespace rsb {

int Serve(int argc, char** argv);

}  // namespace rsb
