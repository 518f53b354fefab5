// A sandbox for a hand-in's code (its host code when built and run, the child runs of its
// kernels), made of existing Debian tools: bubblewrap (`bwrap`, package bubblewrap) builds the
// namespaces and mounts, util-linux's `prlimit` (and `setpriv`, when a uid is given) sets the
// limits right before the real program starts. SandboxCommand only builds an argv; the caller
// hands it to RunProcess (common/platform/Subprocess.h), which keeps its own wall-clock deadline.
//
// Inside: no network (a network namespace of its own, loopback only, so not even the host's
// 127.0.0.1), its own PID, IPC and UTS namespaces, no capabilities (also when the grader runs as
// root), the whole filesystem read-only, a private /tmp and /run (small tmpfs), a minimal /dev
// plus the GPU device nodes, each hidden folder an empty read-only tmpfs and each hidden file
// /dev/null, writableDir the only folder it can write to on the host, and its working folder.
// Not isolated: the GPU driver and device (the kernels run on them), files outside the hidden
// ones that the grader's user may read (it runs as the same uid unless `uid` is set), CPU and
// memory bandwidth (timings of other runs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rsb::grade {

// Per-process limits (setrlimit through prlimit), inherited by everything the program starts.
// 0 means "not limited". The defaults are far above what a correct hand-in needs (a pocl child
// run, scan naive n=1000 with a cold kernel cache: ~450 MB of address space, ~220 MB resident).
struct SandboxLimits {
  // RLIMIT_DATA: private writable memory (heap, anonymous mappings, thread stacks). Used instead
  // of RLIMIT_AS because GPU drivers reserve huge PROT_NONE address ranges that RLIMIT_AS counts
  // and RLIMIT_DATA does not; with pocl the device buffers are host memory and count here.
  uint64_t dataBytes = uint64_t(8) << 30;
  // RLIMIT_AS: address space. Off by default: NVIDIA's OpenCL driver (580, on an H100) maps
  // ~13 GiB of address space at start-up and its platform is gone under an 8 GiB limit; pocl
  // needs ~0.5 GiB.
  uint64_t addressSpaceBytes = 0;
  // RLIMIT_CPU: seconds of CPU time per process (all its threads); SIGXCPU at the limit, SIGKILL
  // 5 s later. Each process of a build (one compiler per file) has its own count.
  uint64_t cpuSeconds = 900;
  // RLIMIT_NPROC: processes and threads of the sandbox's user. The kernel does not enforce it
  // for uid 0 (root), also inside a user namespace mapped from root: set SandboxPolicy::uid.
  uint64_t processes = 4096;
  // RLIMIT_FSIZE: the largest file it may write (SIGXFSZ / EFBIG beyond).
  uint64_t fileBytes = uint64_t(4) << 30;
  // The size of the private /tmp, /run and /dev/shm (tmpfs, i.e. memory).
  uint64_t tmpBytes = uint64_t(256) << 20;
};

struct SandboxPolicy {
  // The only host folder it may write to; HOME, TMPDIR, POCL_CACHE_DIR (a folder below) point
  // there. Must exist. The working folder stays the caller's (RunProcess's workDir): pass this
  // folder or one inside it.
  std::string writableDir;
  // A compiled-kernel cache shared with other sandboxes (grade --kernel-cache): writable, and
  // POCL_CACHE_DIR, CUDA_CACHE_PATH and MESA_SHADER_CACHE_DIR point there. Empty: a cache in
  // writableDir.
  std::string kernelCache;
  // Folders (become an empty read-only folder) and files (become empty, /dev/null) it must not
  // see: other hand-ins, the class folder, the rubric, the reports folder. Paths that do not
  // exist are left out. /tmp and /run are always replaced by private ones.
  std::vector<std::string> hidden;
  // Shown again read-only where a hidden folder covers them (the suite's binary folder, a kit).
  // The innermost rule wins: a path inside a hidden folder inside a readOnly folder is hidden,
  // writableDir inside a hidden folder stays writable.
  std::vector<std::string> readOnly;
  SandboxLimits limits;
  // Device nodes to bind into the minimal /dev; nullopt: GpuDeviceNodes() (those that exist).
  std::optional<std::vector<std::string>> devices;
  // When >= 0 (and the grader runs as root): run the program as this uid/gid (no supplementary
  // groups), which makes RLIMIT_NPROC enforced and hides root-only files; writableDir must then
  // be writable for it (GiveWritableDir), and everything it must read readable for it.
  int uid = -1;
  int gid = -1;
};

// The argv that runs `argv` under the policy: bwrap ... [setpriv ...] prlimit ... -- argv.
// argv[0] is looked up on PATH inside the sandbox when it has no '/'; relative paths are
// relative to writableDir. Throws std::invalid_argument when writableDir is empty or missing.
std::vector<std::string> SandboxCommand(const std::vector<std::string>& argv,
                                        const SandboxPolicy& policy);

// Whether the sandbox works on this machine: bwrap and prlimit on PATH, and bwrap able to create
// its namespaces (tried once per process). `reason` says what is missing, naming the Debian
// package to install.
struct SandboxAvailability {
  bool ok = false;
  std::string reason;
};
SandboxAvailability SandboxStatus();

// The GPU device nodes that exist on this machine: /dev/nvidia*, /dev/nvidia-caps, /dev/dri,
// /dev/kfd.
std::vector<std::string> GpuDeviceNodes();

// Makes writableDir (recursively) owned by policy.uid/gid when they are set; returns false with
// the reason in `error` when that fails. Does nothing without a uid.
bool GiveWritableDir(const SandboxPolicy& policy, std::string& error);

}  // namespace rsb::grade
