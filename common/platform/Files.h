// Output the suite writes, by one rule: every file whole or not at all (a temporary file in the
// file's folder, written, closed and checked, then renamed over it), every output place probed
// before any work (a real file made, written and removed in the folder the temporary file goes
// to), and stdout checked after a command's output. A failed write (a full disk, a closed pipe)
// is exit 3 naming the file and the reason, never exit 0 with a short file.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace rsb {

// Flushes stdout; throws DeviceError naming the reason when a write to it failed.
void CheckStdout();

// `option` names where a path came from ("--output", "profile"): messages say "<option> '<path>'".

// Up front, before any work and before anything is made: `path` can be written by WriteWhole.
// UsageError (exit 2): a folder, a symlink loop. DeviceError (exit 3), with the reason: its
// folder refuses the probe (missing, not a folder, permissions, a read-only or full file
// system; as an unwritable output always was). A special file (/dev/null, a pipe) must be
// writable.
void CheckOutputFile(const std::string& option, const std::string& path);

// Up front for a folder that the command makes (where missing) and writes files in: the folder,
// or the nearest existing one above it, is probed; nothing is made. UsageError where the folder
// or one above it is a file or a symlink loop; DeviceError where the probe fails.
void CheckOutputFolder(const std::string& option, const std::string& dir);

// Writes text to path whole or not at all (a special file is written directly, checked).
// DeviceError "<option> '<path>': writing failed: <reason>" where any step fails; the temporary
// file is removed then and path is left as it was.
void WriteWhole(const std::string& option, const std::string& path, const std::string& text);
void WriteWhole(const std::string& option, const std::string& path,
                const std::function<void(std::ostream&)>& write);

// An input file read whole: UsageError (exit 2) "<option> '<path>': <why>; allowed: <allowed>"
// where it is missing, a folder, a symlink loop or unreadable.
std::string ReadInput(const std::string& option, const std::string& path,
                      const std::string& allowed);

// For a file another program writes (a plot): a temporary name in path's folder keeping its
// extension, and the rename that puts it in place once that program succeeded (an empty or
// missing file is a failure). DiscardTemp removes it where the program failed.
std::string TempBeside(const std::string& path);
void CommitTemp(const std::string& option, const std::string& tmp, const std::string& path);
void DiscardTemp(const std::string& tmp);

// A new folder "<prefix>-XXXXXX" in TMPDIR (/tmp where TMPDIR names no folder), removed with what
// is in it when this goes. DeviceError (exit 3) naming it where it cannot be made. A process
// killed first leaves it: a parent that kills its children gives them a TMPDIR inside its own.
class TempFolder {
 public:
  explicit TempFolder(const std::string& prefix);
  ~TempFolder();
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::string& Path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace rsb
