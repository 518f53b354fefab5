#!/usr/bin/env bash
# scan-trace's bad input: exit 2 and one line naming what was wrong, on any machine (without an
# NVIDIA GPU too, where it must say that one is needed rather than fail otherwise).
#   tests/scan_trace_options.sh SCAN_TRACE_BINARY
set -u
bin=$1
fail=0
check() {  # expected-status text args...
  local want_rc=$1 want=$2 out rc; shift 2
  out=$("$bin" "$@" 2>&1 >/dev/null); rc=$?
  if [ $rc -ne "$want_rc" ] || [[ $out != *"$want"* ]]; then
    echo "FAIL: $* -> exit $rc: $out (wanted exit $want_rc and '$want')"; fail=1
  fi
}
check 2 "--n 'abc'" --n abc
check 2 "--n '2^40+1'" --n 2^40+1
check 2 "--runs" --runs 0
check 2 "--type" --type int
check 2 "--tune: 'items': unknown knob" --tune items
check 2 "--tune: 'scan-gpu-items=5': not allowed" --tune scan-gpu-items=5
# A small run: measured where there is an NVIDIA GPU, else the one-line reason.
out=$("$bin" --n 1000 --runs 2 2>&1); rc=$?
if ! { [ $rc -eq 0 ] && [[ $out == *"wrong elements=0"* ]]; } &&
   ! { [ $rc -eq 2 ] && [[ $out == *"an NVIDIA GPU is needed"* ]]; }; then
  echo "FAIL: --n 1000 -> exit $rc: $out"; fail=1
fi
exit $fail
