#!/usr/bin/env bash
# GitHub Classroom autograding, the first test's setup (autograding.json): builds the grader from
# the course's solution tree (the grader's reference: its own kernels must pass the rubric, and
# its rubric is the one graded with, out of the student's reach) into $HOME/rsb-grader. The
# student's repository, the hand-out, is the hand-in: each test grades it on one rubric item with
#   $HOME/rsb-grader/build/reduce-scan-bench grade --format github-classroom --items ITEM ... .
# which prints the item's report and exits 0 only with all the item's points.
#
# RSB_SOLUTION_REPO: a URL git can clone the solution from, token included (a private repository:
# https://x-access-token:TOKEN@github.com/COURSE/solution.git, the token a secret that the
# autograding workflow passes as this variable). --sandbox none: the runner's VM is the sandbox.
set -euo pipefail
DIR="$HOME/rsb-grader"
: "${RSB_SOLUTION_REPO:?set RSB_SOLUTION_REPO to a clonable URL of the course's solution tree}"
rm -rf "$DIR"
git clone --depth 1 "$RSB_SOLUTION_REPO" "$DIR"
bash "$DIR/scripts/install-deps.sh" --grade
cmake -S "$DIR" -B "$DIR/build" -DCMAKE_BUILD_TYPE=Release -DRSB_BUILD_TESTS=OFF \
  -DRSB_BUILD_REFERENCES=OFF
cmake --build "$DIR/build" -j "$(nproc)"
"$DIR/build/reduce-scan-bench" --list-devices
