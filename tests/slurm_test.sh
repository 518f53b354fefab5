#!/usr/bin/env bash
# scripts/grade-slurm against a real Slurm started here, as the current user:
#  - its refusals (bad --shards, --time, no --output-dir, no hand-ins, no sbatch on PATH) and
#    sbatch's (--gpu where the node has none, --partition that does not exist): exit 2, one line;
#    sbatch's controller not reached: exit 3, no folder made;
#  - a one-node Slurm started by scripts/slurm-local.sh (munged, slurmctld and slurmd in a temp
#    folder, no cgroups), a trivial job array with a dependent job run to the end;
#  - a class of 4 hand-ins (the suite's kernels and task sources; student-2's reduction and
#    student-3's scan kernels broken) graded with a two-item rubric once by `grade` and once by
#    `grade-slurm --shards 2 --wait`: the merged summary.csv equals the single run's, every
#    hand-in's report is there with the same status and points per item and case (each shard
#    is a grader of its own: a class as small as shows a merge of shards keeps it quick);
#  - a class whose shards all fail (a rubric that is not JSON): --wait names the failed shards
#    and exits with their status (2), the merge job never runs.
# Where munge or Slurm is not installed or does not start here, it says why and exits 77 (skip).
# Every daemon it started is stopped on any exit.
#   tests/slurm_test.sh BINARY SOURCE_DIR
# The device: RSB_TEST_PLATFORM / RSB_TEST_DEVICE as for the other tests (default: the first).
set -u
bin=$1
src=$2
gs=$src/scripts/grade-slurm
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rsb-slurm.XXXXXX")
chmod 755 "$tmp"  # munged wants its socket's folders searchable by all
fail=0
say() { echo "FAIL: $*"; fail=1; }
skip() { echo "SKIP: $*"; exit 77; }
phase() { echo "== $* (at $SECONDS s)"; }
. "$src/scripts/slurm-local.sh"
cleanup() {
  slurm_local_stop
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# expect_usage TEXT ARGS...: exit 2 and one line on stderr holding TEXT.
expect_usage() {
  local want=$1 err rc
  shift
  err=$("$@" 2>&1 >/dev/null); rc=$?
  if [ $rc -ne 2 ] || [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ] || [[ $err != *"$want"* ]]; then
    say "grade-slurm ${*:2} -> exit $rc: '$err' (wanted exit 2, one line with '$want')"
  fi
}

# --- refusals, before anything is submitted ------------------------------------------------------
mkdir -p "$tmp/h/kernels"
expect_usage "--shards '0'" "$gs" --shards 0 --output-dir "$tmp/o" -- "$tmp/h"
expect_usage "--time 'soon'" "$gs" --time soon --output-dir "$tmp/o" -- "$tmp/h"
expect_usage "--cpus-per-task 'x'" "$gs" --cpus-per-task x --output-dir "$tmp/o" -- "$tmp/h"
expect_usage "--output-dir is required" "$gs" --binary "$bin" -- "$tmp/h"
expect_usage "no hand-ins" "$gs" --output-dir "$tmp/o" -- --rubric "$tmp/r.json"
expect_usage "hand-in '$tmp/nope' is not a folder" "$gs" --output-dir "$tmp/o" -- "$tmp/nope"
expect_usage "--shard: grade-slurm sets it" "$gs" --output-dir "$tmp/o" -- --shard 1/2 "$tmp/h"
expect_usage "-j: grade-slurm sets it" "$gs" --output-dir "$tmp/o" -- -j 2 "$tmp/h"
expect_usage "unknown option '--bogus'" "$gs" --bogus
expect_usage "--binary '$tmp/none'" "$gs" --binary "$tmp/none" --output-dir "$tmp/o" -- "$tmp/h"
expect_usage "slurm-wlm's sbatch" env PATH=/nonexistent /bin/bash "$gs" --binary "$bin" \
  --output-dir "$tmp/o" -- "$tmp/h"
# sbatch there but its controller not reached: exit 3 (one line), no folder made.
mkdir -p "$tmp/fake"
printf '#!/bin/sh\necho "sbatch: fatal: Could not establish a configuration source" >&2\nexit 1\n' \
  >"$tmp/fake/sbatch"
chmod +x "$tmp/fake/sbatch"
err=$(PATH="$tmp/fake:$PATH" "$gs" --binary "$bin" --output-dir "$tmp/nc/o" -- "$tmp/h" 2>&1)
rc=$?
[ $rc -eq 3 ] && [[ $err == *"controller not reached"* ]] ||
  say "no controller -> exit $rc: '$err' (wanted exit 3, 'controller not reached')"
[ ! -e "$tmp/nc" ] || say "no controller: $tmp/nc made before refusing"

# --- munge and Slurm -----------------------------------------------------------------------------
phase "starting munged, slurmctld and slurmd"
mkdir -p "$tmp/slurm-local" "$tmp/jobs"
slurm_local_start "$tmp/slurm-local" || skip "$slurm_local_why"

# A trivial job array and a job after it: Slurm runs jobs here.
phase "a trivial job array and a job after it"
a=$(sbatch --parsable -o "$tmp/jobs/a-%a.out" --array=1-2 --wrap 'echo $SLURM_ARRAY_TASK_ID' \
     2>&1) &&
  b=$(sbatch --parsable -o "$tmp/jobs/b.out" --dependency=afterok:"$a" --wrap true 2>&1) ||
  skip "sbatch does not take a job here: $a ${b:-} $(slurm_local_logs)"
for _ in $(seq 150); do
  [ -z "$(squeue -h -j "$a,$b" -o %i 2>/dev/null)" ] && break
  sleep 0.2
done
[[ $(scontrol -o show job "$b" 2>&1) == *JobState=COMPLETED* ]] ||
  skip "a trivial job array and a dependent job did not run to the end within 30 s:" \
       "$(scontrol -o show job "$b" 2>&1) $(slurm_local_logs)"

# What sbatch refuses (no GPU on this node, no such partition): exit 2 with sbatch's reason, and
# no merge job left waiting.
expect_usage "sbatch refused the array job: sbatch: error: Invalid generic resource" \
  "$gs" --gpu --binary "$bin" --output-dir "$tmp/o" -- "$tmp/h"
expect_usage "sbatch refused the array job: sbatch: error: invalid partition specified: nosuch" \
  "$gs" --partition nosuch --sbatch-arg=--job-name=x --binary "$bin" --output-dir "$tmp/o" \
  -- "$tmp/h"
left=$(squeue -h -o '%i %j' 2>&1)
[ -z "$left" ] || say "jobs left after sbatch's refusals: $left"

# --- the class ----------------------------------------------------------------------------------
class=$tmp/class
for i in 1 2 3 4; do
  mkdir -p "$class/student-$i/src/tasks"
  cp -r "$src/kernels" "$class/student-$i/"
  cp "$src"/src/tasks/CReductionTask.* "$src"/src/tasks/CScanTask.* "$class/student-$i/src/tasks/"
done
break_kernel() {  # file from to
  grep -qF "$2" "$1" || { say "'$2' is not in ${1#"$class"/} (update this test)"; return; }
  sed -i "s/$(sed 's/[][\/.*^$]/\\&/g' <<<"$2")/$3/" "$1"
}
break_kernel "$class/student-2/kernels/Reduction.cl" 'OP(a, src[idx + stride])' 'OP(a, a)'
break_kernel "$class/student-3/kernels/Scan.cl" 'v = OP(LoadShifted(src, i - offset, shift), v);' \
  'v = OP(v, v);'
cat >"$tmp/rubric.json" <<'EOF'
{"name": "slurm test rubric", "seed": 7,
 "items": [
  {"id": "reduction-interleaved", "task": "reduction", "variant": "interleaved", "points": 2,
   "cases": [{"sizes": [1000], "types": ["uint"]}]},
  {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 3,
   "cases": [{"sizes": [257], "types": ["uint"], "scan_kinds": ["inclusive"]}]}
 ]}
EOF
opts=(--rubric "$tmp/rubric.json" --sandbox none -q)
# The test run's kernel cache (ctest sets POCL_CACHE_DIR): the class is this test's own.
[ -n "${POCL_CACHE_DIR:-}" ] && opts+=(--kernel-cache "$POCL_CACHE_DIR")
[ -n "${RSB_TEST_PLATFORM:-}" ] && opts+=(--platform "$RSB_TEST_PLATFORM")
[ -n "${RSB_TEST_DEVICE:-}" ] && opts+=(--device "$RSB_TEST_DEVICE")

phase "grading the class in one run"
timeout 300 "$bin" grade "${opts[@]}" --output-dir "$tmp/single" "$class"/student-* \
  >"$tmp/single.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { say "grade (one run) -> exit $rc: $(tail -5 "$tmp/single.out")"; exit 1; }

phase "grading the class with grade-slurm --shards 2 --cpus-per-task 1 --wait"
(cd "$class" && timeout 300 "$gs" --shards 2 --cpus-per-task 1 --wait --binary "$bin" \
   --output-dir "$tmp/slurm" \
   -- "${opts[@]}" student-* >"$tmp/gs.out" 2>"$tmp/gs.err")
rc=$?
out=$(cat "$tmp/gs.out")
echo "$out"
if [ $rc -ne 0 ]; then
  say "grade-slurm --wait -> exit $rc: $out $(cat "$tmp/gs.err")" \
      "logs: $(tail -n 3 "$tmp"/slurm/logs/* 2>/dev/null)"
  exit 1
fi
re="^array job ([0-9]+) \(2 shards\): $tmp/slurm/shards/1\.\.2
merge job [0-9]+ \(after array job ([0-9]+)\): $tmp/slurm/summary.csv
merged: $tmp/slurm/summary.csv$"
[[ $out =~ $re ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] ||
  say "grade-slurm printed '$out' (wanted the array job, the merge job after it, merged)"
cmp -s "$tmp/single/summary.csv" "$tmp/slurm/summary.csv" ||
  say "the merged summary.csv differs from the single run's:" \
      "$(diff "$tmp/single/summary.csv" "$tmp/slurm/summary.csv")"
[ -f "$tmp/slurm/index.md" ] || say "the merge wrote no index.md"
python3 - "$tmp/single" "$tmp/slurm" <<'EOF' || fail=1
import json, sys
single, merged = sys.argv[1], sys.argv[2]
def items(folder, name):
    d = json.load(open(f"{folder}/{name}.json"))
    return {i["id"]: (i["status"], i["points"], [(c["case"], c["status"]) for c in i["cases"]])
            for i in d["items"]}
bad = []
for k in range(1, 5):
    name = f"student-{k}"
    try:
        one, sharded = items(single, name), items(merged, name)
    except Exception as e:
        bad.append(f"{name}: {e}")
        continue
    open(f"{merged}/{name}.md").close()
    if one != sharded:
        bad.append(f"{name}: one run {one}, sharded {sharded}")
    broken = {"student-2": "reduction-interleaved", "student-3": "scan-naive"}.get(name)
    for item, (status, points, _) in one.items():
        if (item == broken) != (status != "passed"):
            bad.append(f"{name} {item}: {status} (the broken kernel should fail, the rest pass)")
for b in bad:
    print(f"FAIL: {b}")
sys.exit(1 if bad else 0)
EOF

# --- every shard fails: --wait names them, the merge never runs ----------------------------------
phase "grade-slurm --wait with failing shards"
echo '{' >"$tmp/bad-rubric.json"
timeout 120 "$gs" --shards 2 --wait --binary "$bin" --output-dir "$tmp/failed" \
  -- --rubric "$tmp/bad-rubric.json" "$class/student-1" >"$tmp/failed.out" 2>"$tmp/failed.err"
rc=$?
err=$(cat "$tmp/failed.err")
echo "$err"
re="shard ([12]): FAILED, exit 2; log: $tmp/failed/logs/shard-([12])\.log"
[ $rc -eq 2 ] && [[ $err =~ $re ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] &&
  [[ $err == *"merge job"*"cancelled"* ]] && [ ! -e "$tmp/failed/summary.csv" ] ||
  say "grade-slurm --wait with failing shards -> exit $rc: $err"
phase "done"
exit $fail
