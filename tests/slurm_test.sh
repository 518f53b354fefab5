#!/usr/bin/env bash
# scripts/grade-slurm against a real Slurm started here, as the current user:
#  - its refusals (bad --shards, --time, no --output-dir, no hand-ins, no sbatch on PATH) and
#    sbatch's (--gpu where the node has none, --partition that does not exist): exit 2, one line;
#  - munged (own key, socket, pid and log in a temp folder), slurmctld and slurmd (-D, a
#    generated slurm.conf: one node with nproc CPUs, free ports from 16817 on, state and spool in
#    the temp folder, proctrack/linuxproc, task/none, no cgroups), a trivial job array with a
#    dependent job run to the end;
#  - a class of 8 hand-ins (the suite's kernels and task sources; student-3's reduction and
#    student-6's scan kernels broken) graded with a two-item rubric once by `grade` and once by
#    `grade-slurm --shards 4 --wait`: the merged summary.csv equals the single run's, every
#    hand-in's report is there with the same status and points per item and case;
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
chmod 755 "$tmp"  # munged wants its socket's folder searchable by all
fail=0
say() { echo "FAIL: $*"; fail=1; }
skip() { echo "SKIP: $*"; exit 77; }
phase() { echo "== $* (at $SECONDS s)"; }
ctld=0 slurmd=0

stop_pid() {  # pid: TERM, then KILL after 5 s
  [ "$1" -gt 0 ] && kill -0 "$1" 2>/dev/null || return 0
  kill "$1" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$1" 2>/dev/null
}
cleanup() {
  if [ $ctld -gt 0 ] && kill -0 $ctld 2>/dev/null; then  # no job step left behind
    scancel --user="$(id -un)" 2>/dev/null
    for _ in $(seq 50); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.2; done
  fi
  stop_pid $slurmd
  stop_pid $ctld
  [ -f "$tmp/munged.pid" ] && stop_pid "$(cat "$tmp/munged.pid")"
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

# --- munge and Slurm -----------------------------------------------------------------------------
phase "starting munged, slurmctld and slurmd"
for c in munged munge slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
  command -v $c >/dev/null ||
    skip "$c not found: install slurm-wlm and munge (scripts/install-deps.sh)"
done
head -c 1024 /dev/urandom >"$tmp/munge.key" && chmod 600 "$tmp/munge.key"
munged --force --key-file="$tmp/munge.key" --socket="$tmp/munge.socket" \
  --pid-file="$tmp/munged.pid" --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed" \
  >"$tmp/munged.out" 2>&1 ||
  skip "munged does not start here: $(tail -3 "$tmp/munged.out" "$tmp/munged.log" 2>/dev/null)"
munge -S "$tmp/munge.socket" -n | unmunge -S "$tmp/munge.socket" >/dev/null 2>&1 ||
  skip "munge does not encode and decode a credential here: $(tail -3 "$tmp/munged.log")"

# Two free TCP ports in a row from 16817 on (slurmctld, slurmd).
ports=$(python3 -c '
import socket
for p in range(16817, 17817, 2):
    try:
        for q in (p, p + 1):
            with socket.socket() as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("", q))
        print(p, p + 1)
        break
    except OSError:
        pass')
read -r ctld_port slurmd_port <<<"$ports"
[ -n "${slurmd_port:-}" ] || skip "no two free TCP ports from 16817 to 17817"
node=$(hostname -s)
user=$(id -un)
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/jobs"
cat >"$tmp/slurm.conf" <<EOF
ClusterName=rsbtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.socket
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MailProg=/bin/true
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -D -c -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
ctld=$!
slurmd -D -N "$node" -f "$SLURM_CONF" >"$tmp/slurmd.out" 2>&1 &
slurmd=$!
slurm_logs() { tail -n 4 "$tmp"/slurmctld.out "$tmp"/slurmd.out 2>/dev/null | tr '\n' ' '; }
for _ in $(seq 100); do
  [ "$(sinfo -h -n "$node" -o %t 2>/dev/null)" = idle ] && break
  kill -0 $ctld 2>/dev/null && kill -0 $slurmd 2>/dev/null || break
  sleep 0.2
done
[ "$(sinfo -h -n "$node" -o %t 2>/dev/null)" = idle ] ||
  skip "slurmctld and slurmd did not bring node $node up within 20 s: $(slurm_logs)"

# A trivial job array and a job after it: Slurm runs jobs here.
phase "a trivial job array and a job after it"
a=$(sbatch --parsable -o "$tmp/jobs/a-%a.out" --array=1-2 --wrap 'echo $SLURM_ARRAY_TASK_ID' \
     2>&1) &&
  b=$(sbatch --parsable -o "$tmp/jobs/b.out" --dependency=afterok:"$a" --wrap true 2>&1) ||
  skip "sbatch does not take a job here: $a ${b:-} $(slurm_logs)"
for _ in $(seq 150); do
  [ -z "$(squeue -h -j "$a,$b" -o %i 2>/dev/null)" ] && break
  sleep 0.2
done
[[ $(scontrol -o show job "$b" 2>&1) == *JobState=COMPLETED* ]] ||
  skip "a trivial job array and a dependent job did not run to the end within 30 s:" \
       "$(scontrol -o show job "$b" 2>&1) $(slurm_logs)"

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
for i in 1 2 3 4 5 6 7 8; do
  mkdir -p "$class/student-$i/src/tasks"
  cp -r "$src/kernels" "$class/student-$i/"
  cp "$src"/src/tasks/CReductionTask.* "$src"/src/tasks/CScanTask.* "$class/student-$i/src/tasks/"
done
break_kernel() {  # file from to
  grep -qF "$2" "$1" || { say "'$2' is not in ${1#"$class"/} (update this test)"; return; }
  sed -i "s/$(sed 's/[][\/.*^$]/\\&/g' <<<"$2")/$3/" "$1"
}
break_kernel "$class/student-3/kernels/Reduction.cl" 'OP(a, src[idx + stride])' 'OP(a, a)'
break_kernel "$class/student-6/kernels/Scan.cl" 'v = OP(LoadShifted(src, i - offset, shift), v);' \
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
[ -n "${RSB_TEST_PLATFORM:-}" ] && opts+=(--platform "$RSB_TEST_PLATFORM")
[ -n "${RSB_TEST_DEVICE:-}" ] && opts+=(--device "$RSB_TEST_DEVICE")

phase "grading the class in one run"
timeout 300 "$bin" grade "${opts[@]}" --output-dir "$tmp/single" "$class"/student-* \
  >"$tmp/single.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { say "grade (one run) -> exit $rc: $(tail -5 "$tmp/single.out")"; exit 1; }

phase "grading the class with grade-slurm --shards 4 --cpus-per-task 1 --wait"
(cd "$class" && timeout 300 "$gs" --shards 4 --cpus-per-task 1 --wait --binary "$bin" \
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
re="^array job ([0-9]+) \(4 shards\): $tmp/slurm/shards/1\.\.4
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
for k in range(1, 9):
    name = f"student-{k}"
    try:
        one, sharded = items(single, name), items(merged, name)
    except Exception as e:
        bad.append(f"{name}: {e}")
        continue
    open(f"{merged}/{name}.md").close()
    if one != sharded:
        bad.append(f"{name}: one run {one}, sharded {sharded}")
    broken = {"student-3": "reduction-interleaved", "student-6": "scan-naive"}.get(name)
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
