// The version of the task API: what a course's task sources (src/tasks/C*Task.{h,cpp}) include
// and call, the headers of common/ they reach (IComputeTask.h, PlannedTask.h, LaunchPlan.h,
// HostData.h, HostSums.h, TaskUtil.h, platform/) with the names they declare, and what the suite's
// own src/tasks/Tasks.cpp and objects ask of a task class (its constructor, IComputeTask's
// virtual functions).
//
// A hand-in names the task API of its hand-out (scripts/make-handin reads this file and writes
// `task api: N` into its HANDIN.txt); a hand-in's task sources are built against this version,
// and where a hand-in of another version (or of none) does not build, the build says which
// versions met and what to do. Within a version the API only grows: a release may add a
// name or a virtual function with a default, never remove, rename or change one a task source of
// an earlier release of the same version uses. A release that must do so raises this number
// (CHANGELOG.md says how a release is made). tests/handout_api_test.py builds the task sources of
// the previous release's hand-out (tests/fixtures/handout-VERSION) against this tree.
#pragma once

namespace rsb {

inline constexpr int kTaskApiVersion = 2;

}  // namespace rsb
