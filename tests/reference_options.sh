#!/usr/bin/env bash
# The bench references' options: every bad value ends with exit status 2 and one line naming
# the option, the value and what is allowed (never a crash); with a device (boost-reference on
# pocl), a tiny measurement prints its JSON lines.
#   tests/reference_options.sh BINARY [--platform P]
set -u
bin=$1; shift
fail=0
expect_usage() {  # args... ; the last argument is text the message must contain
  local want=${*: -1} out rc
  out=$("$bin" "${@:1:$#-1}" 2>&1 >/dev/null); rc=$?
  if [ $rc -ne 2 ] || [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ] || [[ $out != *"$want"* ]]; then
    echo "FAIL: ${*:1:$#-1} -> exit $rc: $out (wanted exit 2, one line with '$want')"; fail=1
  fi
}
expect_usage --sizes abc "--sizes: 'abc'"
expect_usage --sizes 2^24,0 "--sizes: '0'"
expect_usage --sizes 2^40+1 "--sizes: '2^40+1'"
expect_usage --types half "--types: 'half'"
expect_usage --reps 0 "--reps: '0'"
expect_usage --reps abc "--reps: 'abc'"
expect_usage --bogus 1 "--bogus"
expect_usage --sizes "--sizes"
if [ $# -gt 0 ]; then  # a device to measure on
  out=$("$bin" "$@" --sizes 2^10+3 --types uint --reps 2 2>/dev/null); rc=$?
  lines=$(printf '%s\n' "$out" | grep -c '"n":1027,')
  if [ $rc -ne 0 ] || [ "$lines" -lt 2 ]; then
    echo "FAIL: $* --sizes 2^10+3 -> exit $rc, $lines result lines: $out"; fail=1
  fi
fi
exit $fail
