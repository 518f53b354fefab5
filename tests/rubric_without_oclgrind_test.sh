#!/usr/bin/env bash
# scripts/rubric-without-oclgrind: its refusals (exit 2, one line, nothing written), and the
# shipped rubric it rewrites is one the grader takes: a copy of the suite's own code graded on
# one item gets full points, and no child run of that grading is an Oclgrind run.
#   tests/rubric_without_oclgrind_test.sh SOURCE_DIR BINARY
# The device: RSB_TEST_PLATFORM / RSB_TEST_DEVICE as for the other tests (default: the first).
set -u
src=$1 bin=$2
script=$src/scripts/rubric-without-oclgrind
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rsb-rubric-no-oclgrind.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "FAIL: $*"; fail=1; }

for args in "" "$src/grading/rubric.json" "$tmp/nosuch.json $tmp/out.json" \
            "$src/README.md $tmp/out.json"; do
  # shellcheck disable=SC2086
  err=$(python3 "$script" $args 2>&1); rc=$?
  [ $rc -eq 2 ] || say "'$args' -> exit $rc (wanted 2)"
  [ "$(wc -l <<<"$err")" -eq 1 ] && [[ $err == rubric-without-oclgrind:* ]] ||
    say "'$args' -> not one line: $err"
  [ -e "$tmp/out.json" ] && say "'$args' wrote $tmp/out.json"
done

python3 "$script" "$src/grading/rubric.json" "$tmp/rubric.json" || say "the shipped rubric -> exit $?"
python3 - "$src/grading/rubric.json" "$tmp/rubric.json" <<'PY' || fail=1
import json, sys
before, after = (json.load(open(p)) for p in sys.argv[1:3])
bad = []
if [i["id"] for i in after["items"]] != [i["id"] for i in before["items"]]:
    bad.append("the items changed")
for i in after["items"]:
    if i.get("oclgrind") != "off" or "work_ceiling" in i or "oclgrind_case" in i:
        bad.append(f"{i['id']} still has a gate: {i}")
if "Oclgrind" not in after["name"]:
    bad.append(f"the name does not say so: {after['name']}")
for b in bad:
    print(f"FAIL: {b}")
sys.exit(1 if bad else 0)
PY

selectors=()
[ -n "${RSB_TEST_PLATFORM:-}" ] && selectors+=(--platform "$RSB_TEST_PLATFORM")
[ -n "${RSB_TEST_DEVICE:-}" ] && selectors+=(--device "$RSB_TEST_DEVICE")
# The test run's kernel cache (ctest sets POCL_CACHE_DIR): the hand-in is this test's own.
[ -n "${POCL_CACHE_DIR:-}" ] && selectors+=(--kernel-cache "$POCL_CACHE_DIR")
mkdir -p "$tmp/class/good/src/tasks"
cp -r "$src/kernels" "$tmp/class/good/"
cp "$src"/src/tasks/C{Reduction,Scan}Task.{h,cpp} "$tmp/class/good/src/tasks/"
timeout 300 "$bin" grade --rubric "$tmp/rubric.json" --items reduction-decomposition \
  --sandbox none -q --trace "$tmp/trace.csv" --output-dir "$tmp/out" "${selectors[@]}" \
  "$tmp/class/good" >"$tmp/grade.out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  say "grading with the rewritten rubric -> exit $rc: $(tail -5 "$tmp/grade.out")"
else
  grep -qx "good,2,2,2" "$tmp/out/summary.csv" || say "not full points: $(cat "$tmp/out/summary.csv")"
  grep -q ",oclgrind," "$tmp/trace.csv" && say "an Oclgrind run: $(grep ',oclgrind,' "$tmp/trace.csv")"
fi
[ $fail -eq 0 ] && echo "rubric-without-oclgrind: all checks passed"
exit $fail
