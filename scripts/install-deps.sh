#!/usr/bin/env bash
# Installs what reduce-scan-bench needs to build, test and run on Debian 12 (or Ubuntu 22.04+):
# a C++17 compiler, CMake, the OpenCL ICD loader and C++ bindings, pocl (an OpenCL device on the
# CPU, so the suite runs on any machine), CLI11, nlohmann-json, fmt, GoogleTest, and Python 3 with
# matplotlib for `reduce-scan-bench plot` and jsonschema for the result-schema test, and oneTBB
# for the bench/ CPU reference (cpu-reference: C++17 parallel algorithms), Oclgrind for
# `--check --oclgrind` and the grader's Oclgrind gate, and bubblewrap with util-linux (prlimit,
# setpriv) for the grader's sandbox, and Mesa's OpenCL (rusticl: a second CPU device,
# `RUSTICL_ENABLE=llvmpipe`, that scripts/run-tests runs the device tests on). Safe to run again: what is installed stays.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  g++ cmake make ocl-icd-opencl-dev opencl-clhpp-headers opencl-c-headers pocl-opencl-icd \
  clinfo libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev python3 python3-matplotlib \
  python3-jsonschema libtbb-dev oclgrind bubblewrap util-linux mesa-opencl-icd >/dev/null
echo "dependencies installed"
