#!/usr/bin/env bash
# Installs with apt-get (through sudo when not root) what reduce-scan-bench needs on Debian 12 (or
# Ubuntu 22.04+), in groups, so that a first run waits only for what it uses:
#   (no option)    build and run the benchmark: a C++17 compiler, CMake, the OpenCL ICD loader and
#                  C++ bindings, pocl (an OpenCL device on the CPU, so the suite runs on any
#                  machine), CLI11, nlohmann-json, fmt
#   --plot         `reduce-scan-bench plot`: Python 3 with matplotlib
#   --grade        `reduce-scan-bench grade` as the shipped rubric grades: Oclgrind (its race and
#                  out-of-bounds gate, also `--check --oclgrind`), bubblewrap and util-linux
#                  (prlimit, setpriv: the sandbox)
#   --slurm        scripts/grade-slurm: Slurm and MUNGE (their services kept from starting, see
#                  below; tests/slurm_test.sh starts its own)
#   --references   the bench/ references that need more (-DRSB_BUILD_REFERENCES=ON): oneTBB
#   --html         headless Chromium: the tests open the HTML pages the suite writes as a browser
#                  shows them
#   --tests        the test command (scripts/run-tests): all of the above, GoogleTest, Python's
#                  jsonschema, Mesa's OpenCL (rusticl: a second CPU device, RUSTICL_ENABLE=llvmpipe),
#                  clang-format, gperftools' tcmalloc (the allocator of the test steps)
# Options combine (--plot --grade). Safe to run again: what is installed stays, and where every
# package asked for is installed already apt is not asked at all.
set -euo pipefail
base="g++ cmake make ocl-icd-opencl-dev opencl-clhpp-headers opencl-c-headers pocl-opencl-icd
      clinfo libcli11-dev nlohmann-json3-dev libfmt-dev"
plot="python3 python3-matplotlib"
grade="oclgrind bubblewrap util-linux"
slurm="slurm-wlm munge"
references="libtbb-dev"
html="chromium"
tests="$plot $grade $slurm $references $html libgtest-dev python3-jsonschema mesa-opencl-icd clang-format
       libtcmalloc-minimal4"
packages=$base
for arg in "$@"; do
  case $arg in
    --plot) packages+=" $plot" ;;
    --grade) packages+=" $grade" ;;
    --slurm) packages+=" $slurm" ;;
    --references) packages+=" $references" ;;
    --html) packages+=" $html" ;;
    --tests) packages+=" $tests" ;;
    -h | --help) sed -n '2,20p' "$0" | cut -c3-; exit 0 ;;
    *) echo "install-deps.sh: unknown option '$arg'; allowed: --plot --grade --slurm --references --html --tests" >&2
       exit 2 ;;
  esac
done
missing=""
for p in $packages; do
  [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)" = "ii " ] || missing+=" $p"
done
if [ -z "$missing" ]; then
  echo "dependencies installed (all there already)"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# Debian's postinst scripts of munge, slurmctld and slurmd start their services through
# invoke-rc.d; where no policy-rc.d forbids that already (containers usually have one), forbid it
# for this install (101: action forbidden), so no daemon of theirs is left holding the default
# ports (6817, 6818) or munge's socket.
policy=/usr/sbin/policy-rc.d
if [[ " $packages " == *" slurm-wlm "* ]] && [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod 755 "$policy"
  trap '$SUDO rm -f "$policy"' EXIT
fi
# shellcheck disable=SC2086 # the lists split into package names
$SUDO apt-get install -y -qq --no-install-recommends $packages >/dev/null
echo "dependencies installed"
