#include "grade/Sandbox.h"

#include "grade/Text.h"
#include "platform/Subprocess.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <system_error>

namespace fs = std::filesystem;

namespace rsb::grade {

namespace {

enum class Kind { Hide, Tmp, ReadOnly, Writable };  // the order at equal depth: later wins

struct Mount {
  fs::path path;
  Kind kind;
  std::string perms;  // Tmp: the tmpfs's mode
};

// The absolute path with symlinks resolved as far as it exists (bwrap mounts on the target).
fs::path Resolve(const std::string& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(fs::absolute(p), ec);
  if (ec)
    r = fs::absolute(p).lexically_normal();
  std::string s = r.string();
  while (s.size() > 1 && s.back() == '/')
    s.pop_back();
  return s;
}

size_t Depth(const fs::path& p) {
  return static_cast<size_t>(std::distance(p.begin(), p.end()));
}

// `inner` is `outer` or below it.
bool Within(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i)
    if (i == inner.end() || *i != *o)
      return false;
  return true;
}

bool OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / program;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0)
      return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

std::vector<std::string> GpuDeviceNodes() {
  std::vector<std::string> nodes;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/dev", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("nvidia", 0) == 0 || name == "dri" || name == "kfd")
      nodes.push_back(e.path().string());
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

namespace {

// bwrap's namespaces, the file system read-only, /dev with the GPUs' nodes, /dev/shm.
std::vector<std::string> BaseArguments(const SandboxPolicy& policy, const std::string& tmpSize) {
  std::vector<std::string> a = {"bwrap",
                                "--die-with-parent",
                                "--new-session",  // no TIOCSTI into the grader's terminal
                                "--unshare-net",
                                "--unshare-pid",
                                "--unshare-ipc",
                                "--unshare-uts",
                                "--unshare-cgroup-try",
                                "--cap-drop",
                                "ALL",
                                "--ro-bind",
                                "/",
                                "/",
                                "--dev",
                                "/dev",
                                "--proc",
                                "/proc"};
  for (const auto& d : policy.devices ? *policy.devices : GpuDeviceNodes())
    if (fs::exists(d))
      a.insert(a.end(), {"--dev-bind", d, d});
  a.insert(a.end(), {"--perms", "01777", "--size", tmpSize, "--tmpfs", "/dev/shm"});
  return a;
}

// Every rule as a mount, shallowest first, so that the innermost rule for a path wins.
std::vector<Mount> MountsOf(const SandboxPolicy& policy, const fs::path& writable) {
  std::vector<Mount> mounts = {{"/tmp", Kind::Tmp, "01777"}};
  if (fs::is_directory("/run"))
    mounts.push_back({"/run", Kind::Tmp, "0755"});
  for (const auto& h : policy.hidden) {
    std::error_code ec;
    if (fs::exists(h, ec))
      mounts.push_back({Resolve(h), Kind::Hide, ""});
  }
  for (const auto& r : policy.readOnly) {
    std::error_code ec;
    if (fs::exists(r, ec))
      mounts.push_back({Resolve(r), Kind::ReadOnly, ""});
  }
  mounts.push_back({writable, Kind::Writable, ""});
  if (!policy.kernelCache.empty())
    mounts.push_back({Resolve(policy.kernelCache), Kind::Writable, ""});
  mounts.erase(std::remove_if(mounts.begin(), mounts.end(),
                              [](const Mount& m) {
                                return Depth(m.path) < 2 || Within(m.path, "/proc") ||
                                       Within(m.path, "/dev");
                              }),
               mounts.end());
  std::stable_sort(mounts.begin(), mounts.end(), [](const Mount& x, const Mount& y) {
    const size_t dx = Depth(x.path), dy = Depth(y.path);
    return dx != dy ? dx < dy : x.kind < y.kind;
  });
  return mounts;
}

// Inside a tmpfs (a hidden folder, /tmp) bwrap creates the folders on the way to mount i; give
// them mode 0755 so that a non-root uid can walk through them.
void AddFoldersOnTheWay(const std::vector<Mount>& mounts, size_t i, std::vector<std::string>& a) {
  const Mount& m = mounts[i];
  const Mount* cover = nullptr;
  for (size_t j = 0; j < i; ++j)
    if (Within(m.path, mounts[j].path) && mounts[j].path != m.path &&
        (!cover || Depth(mounts[j].path) >= Depth(cover->path)))
      cover = &mounts[j];
  if (cover && (cover->kind == Kind::Hide || cover->kind == Kind::Tmp)) {
    fs::path p = cover->path;
    auto it = m.path.begin();
    std::advance(it, static_cast<long>(Depth(cover->path)));
    for (; std::next(it) != m.path.end(); ++it) {
      p /= *it;
      a.insert(a.end(), {"--perms", "0755", "--dir", p.string()});
    }
  }
}

void AddMounts(const std::vector<Mount>& mounts, const std::string& tmpSize,
               std::vector<std::string>& a) {
  for (size_t i = 0; i < mounts.size(); ++i) {
    const Mount& m = mounts[i];
    AddFoldersOnTheWay(mounts, i, a);
    const std::string p = m.path.string();
    switch (m.kind) {
      case Kind::Tmp:
        a.insert(a.end(), {"--perms", m.perms, "--size", tmpSize, "--tmpfs", p});
        break;
      case Kind::Hide:
        if (fs::is_directory(m.path))
          a.insert(a.end(), {"--perms", "0555", "--size", "65536", "--tmpfs", p});
        else
          a.insert(a.end(), {"--ro-bind", "/dev/null", p});
        break;
      case Kind::ReadOnly:
        a.insert(a.end(), {"--ro-bind", p, p});
        break;
      case Kind::Writable:
        a.insert(a.end(), {"--bind", p, p});
        break;
    }
  }
}

// The environment inside (home, temporary and cache folders in the writable one), the
// capabilities that setpriv needs where a uid is given, and then setpriv.
void AddEnvironment(const SandboxPolicy& policy, const fs::path& writable,
                    std::vector<std::string>& a) {
  const std::string w = writable.string();
  // No --chdir: bwrap keeps the caller's working folder (RunProcess's workDir, e.g. a compile's
  // folder inside writableDir), which must be visible inside.
  const std::string cache =
      policy.kernelCache.empty() ? w + "/.cache" : Resolve(policy.kernelCache).string();
  a.insert(a.end(),
           {"--setenv", "HOME", w, "--setenv", "TMPDIR", w, "--setenv", "XDG_CACHE_HOME",
            w + "/.cache", "--setenv", "POCL_CACHE_DIR",
            policy.kernelCache.empty() ? cache + "/pocl" : cache, "--setenv", "CUDA_CACHE_PATH",
            cache + "/nv", "--setenv", "MESA_SHADER_CACHE_DIR", cache + "/mesa"});
  if (policy.uid >= 0)
    a.insert(a.end(),
             {"--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"});
  a.push_back("--");
  if (policy.uid >= 0) {
    const int gid = policy.gid >= 0 ? policy.gid : policy.uid;
    a.insert(a.end(),
             {"setpriv", "--reuid=" + std::to_string(policy.uid), "--regid=" + std::to_string(gid),
              "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"});
  }
}

// prlimit with the policy's limits (no core dumps).
void AddLimits(const SandboxLimits& lim, std::vector<std::string>& a) {
  a.push_back("prlimit");
  a.push_back("--core=0");
  if (lim.dataBytes)
    a.push_back(fmt::format("--data={}", lim.dataBytes));
  if (lim.addressSpaceBytes)
    a.push_back(fmt::format("--as={}", lim.addressSpaceBytes));
  if (lim.cpuSeconds)  // SIGXCPU at the soft limit, SIGKILL at the hard one
    a.push_back(fmt::format("--cpu={}:{}", lim.cpuSeconds, lim.cpuSeconds + 5));
  if (lim.processes)
    a.push_back(fmt::format("--nproc={}", lim.processes));
  if (lim.fileBytes)
    a.push_back(fmt::format("--fsize={}", lim.fileBytes));
}

}  // namespace

std::vector<std::string> SandboxCommand(const std::vector<std::string>& argv,
                                        const SandboxPolicy& policy) {
  if (argv.empty())
    throw std::invalid_argument("sandbox: no program to run");
  if (policy.writableDir.empty() || !fs::is_directory(policy.writableDir))
    throw std::invalid_argument("sandbox: the writable folder '" + policy.writableDir +
                                "' does not exist");
  if (policy.uid >= 0 && ::geteuid() != 0)
    throw std::invalid_argument("sandbox: running as another uid needs the grader to be root");
  const SandboxLimits& lim = policy.limits;
  const std::string tmpSize = std::to_string(lim.tmpBytes ? lim.tmpBytes : uint64_t(1) << 40);
  const fs::path writable = Resolve(policy.writableDir);

  std::vector<std::string> a = BaseArguments(policy, tmpSize);
  const std::vector<Mount> mounts = MountsOf(policy, writable);
  AddMounts(mounts, tmpSize, a);
  AddEnvironment(policy, writable, a);
  AddLimits(lim, a);
  a.push_back("--");
  a.insert(a.end(), argv.begin(), argv.end());
  return a;
}

SandboxAvailability SandboxStatus() {
  static std::once_flag once;
  static SandboxAvailability status;
  std::call_once(once, [] {
    if (!OnPath("bwrap")) {
      status.reason =
          "bwrap is not on PATH: install the Debian package bubblewrap (apt-get install "
          "bubblewrap), or grade with --sandbox none";
      return;
    }
    if (!OnPath("prlimit")) {
      status.reason = "prlimit is not on PATH: install the Debian package util-linux";
      return;
    }
    std::string dir = (fs::temp_directory_path() / "rsb-sandbox-XXXXXX").string();
    if (!::mkdtemp(dir.data())) {
      status.reason = "cannot create a temporary folder to try the sandbox in";
      return;
    }
    SandboxPolicy policy;
    policy.writableDir = dir;
    const ProcessResult p = RunProcess(SandboxCommand({"true"}, policy), 30);
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (p.started && p.exitCode == 0) {
      status.ok = true;
      return;
    }
    const std::string why =
        !p.started   ? p.startError
        : p.timedOut ? std::string("no answer within 30 s")
                     : Excerpt(p.err.empty() ? fmt::format("exit status {}", p.exitCode) : p.err);
    status.reason = fmt::format(
        "bwrap (package bubblewrap) cannot create its namespaces on this machine ({}); in a "
        "container it needs user namespaces or CAP_SYS_ADMIN; or grade with --sandbox none",
        why);
  });
  return status;
}

bool GiveWritableDir(const SandboxPolicy& policy, std::string& error) {
  if (policy.uid < 0)
    return true;
  const uid_t uid = static_cast<uid_t>(policy.uid);
  const gid_t gid = static_cast<gid_t>(policy.gid >= 0 ? policy.gid : policy.uid);
  auto give = [&](const fs::path& p) {
    if (::lchown(p.c_str(), uid, gid) != 0) {
      error = fmt::format("cannot give '{}' to uid {}: {}", p.string(), uid,
                          std::error_code(errno, std::generic_category()).message());
      return false;
    }
    return true;
  };
  if (!give(policy.writableDir))
    return false;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(policy.writableDir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (!give(it->path()))
      return false;
  if (ec) {
    error = fmt::format("cannot walk '{}': {}", policy.writableDir, ec.message());
    return false;
  }
  return true;
}

}  // namespace rsb::grade
