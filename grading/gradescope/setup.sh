#!/usr/bin/env bash
# Gradescope autograder, part 1 of 2: setup.sh, which Gradescope runs once, as root, when it
# builds the autograder's image (its Ubuntu image), with this source tree unpacked into
# /autograder/source. It installs what the suite needs (scripts/install-deps.sh: a compiler,
# CMake, OpenCL with pocl, a CPU device, since Gradescope's machines have no GPU) and builds
# reduce-scan-bench (Release, no tests, no bench/ references) into /autograder/source/build,
# with the hand-in kit that students' host code is built against. Part 2, run_autograder,
# grades each submission with it.
#
# The autograder zip is the course's solution tree (the grader's reference: its own kernels must
# pass the rubric) with this file and run_autograder at the zip's root, say from the tree's root:
#   git archive -o autograder.zip HEAD
#   zip -j autograder.zip grading/gradescope/setup.sh grading/gradescope/run_autograder
# The rubric is grading/rubric.json of that tree. AUTOGRADER_ROOT (default /autograder) moves the
# whole layout, for a trial run outside Gradescope.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SRC="$ROOT/source"
bash "$SRC/scripts/install-deps.sh"
cmake -S "$SRC" -B "$SRC/build" -DCMAKE_BUILD_TYPE=Release -DRSB_BUILD_TESTS=OFF \
  -DRSB_BUILD_REFERENCES=OFF
cmake --build "$SRC/build" -j "$(nproc)"
# The image is only useful if the suite finds its OpenCL device: fail the image build now, where
# the instructor sees it, instead of in every student's submission.
"$SRC/build/reduce-scan-bench" --list-devices
