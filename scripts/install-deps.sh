#!/usr/bin/env bash
# Installs what reduce-scan-bench needs to build, test and run on Debian 12 (or Ubuntu 22.04+):
# a C++17 compiler, CMake, the OpenCL ICD loader and C++ bindings, pocl (an OpenCL device on the
# CPU, so the suite runs on any machine), CLI11, nlohmann-json, fmt, GoogleTest, and Python 3 with
# matplotlib for `reduce-scan-bench plot` and jsonschema for the result-schema test, and oneTBB
# for the bench/ CPU reference (cpu-reference: C++17 parallel algorithms), Oclgrind for
# `--check --oclgrind` and the grader's Oclgrind gate, and bubblewrap with util-linux (prlimit,
# setpriv) for the grader's sandbox, and Mesa's OpenCL (rusticl: a second CPU device,
# `RUSTICL_ENABLE=llvmpipe`, that scripts/run-tests runs the device tests on), and Slurm with
# munge (slurm-wlm: sbatch for scripts/grade-slurm; tests/slurm_test.sh starts its own munged,
# slurmctld and slurmd, so the packages' own services are not started here: see below).
# Safe to run again: what is installed stays.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# Debian's postinst scripts of munge, slurmctld and slurmd start their services through
# invoke-rc.d; where no policy-rc.d forbids that already (containers usually have one), forbid it
# for this install (101: action forbidden), so no daemon of theirs is left holding the default
# ports (6817, 6818) or munge's socket.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod 755 "$policy"
  trap '$SUDO rm -f "$policy"' EXIT
fi
$SUDO apt-get install -y -qq --no-install-recommends \
  g++ cmake make ocl-icd-opencl-dev opencl-clhpp-headers opencl-c-headers pocl-opencl-icd \
  clinfo libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev python3 python3-matplotlib \
  python3-jsonschema libtbb-dev oclgrind bubblewrap util-linux mesa-opencl-icd slurm-wlm \
  munge clang-format >/dev/null
echo "dependencies installed"
