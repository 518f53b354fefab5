#!/usr/bin/env bash
# A hand-in's grade depends on nothing beside it: a class with hand-ins whose kernels never end,
# graded on the GPU machine's NVIDIA device, against the same class without them. In one device
# call, within BUDGET seconds (default 570):
#
#   bench/gpu_grade_hangs.sh [N [HANGS [JOBS [TIMEOUT]]]]    (default 17 2 8 60; output in $OUT)
#
# (PLATFORM=pocl BUILD=build, with BUILD already built, tries it on another device: no build.)
#
# 1. build (Release, sm_90, no tests);
# 2. bench/make-class: N hand-ins (seed 7, 30% host-code: one hanging hand-in brings host code),
#    HANGS of them with its endless-loop defect (the naive scan never ends), the rest correct;
# 3. grade the class without the endless hand-ins, then the whole class, each at --jobs JOBS
#    (--platform NVIDIA --sandbox none --timeout TIMEOUT, the shipped rubric without its Oclgrind
#    gates: the GPU machine has no Oclgrind; fresh kernel caches), timed (the whole class within
#    what is left of BUDGET);
# 4. per hand-in without an endless loop, its total in both runs (they must be equal), make-class
#    --check of the whole class, the runs charged as they ran again with the device to itself
#    (ran_alone), each hand-in's time and each endless hand-in's limit; last line PASS, FAIL
#    or INCOMPLETE (the budget ran out).
# REV=main (a revision git knows here): the grader built from REV's sources instead, the class,
# rubric and this script the tree's own: the time and the totals before a change, in a call of
# their own. $OUT: summary.txt, {without,with}-{summary.csv,trace.csv,grade.log}.
set -u
n=${1:-17} hangs=${2:-2} jobs=${3:-8} limit=${4:-60} budget=${BUDGET:-570}
platform=${PLATFORM:-NVIDIA} build=${BUILD:-build-hangs}
out=${OUT:-gpu-out}; mkdir -p "$out"; out=$(cd "$out" && pwd)
work=/tmp/rsb-hangs; rm -rf "$work"; mkdir -p "$work"
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd \
  && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
t0=$(date +%s); at() { echo "== $1 (at $(( $(date +%s) - t0 )) s)"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  git log --oneline -1 2>/dev/null; echo "N=$n HANGS=$hangs JOBS=$jobs TIMEOUT=$limit"; } \
  | tee "$out/summary.txt"
src=.
if [ -n "${REV:-}" ]; then
  src=/tmp/rsb-rev build=/tmp/rsb-rev/build-hangs; rm -rf "$src"; mkdir -p "$src"
  { git archive -o /tmp/rsb-rev.tar "$REV" && tar -xf /tmp/rsb-rev.tar -C "$src"; } \
    || { echo "REV=$REV: git has no such revision here"; exit 1; }
  echo "the grader built from $REV ($(git rev-parse --short "$REV"))" | tee -a "$out/summary.txt"
fi
at build | tee -a "$out/summary.txt"
[ -n "${BUILD:-}" ] || { cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DRSB_CUDA_ARCH=90 \
    -DRSB_BUILD_TESTS=OFF -DRSB_BUILD_REFERENCES=OFF && cmake --build "$build" -j16; } \
    > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
python3 scripts/rubric-without-oclgrind grading/rubric.json "$work/rubric.json" || exit 1
share=$(python3 -c "print($hangs / $n)")
python3 bench/make-class "$work/class" "$n" --seed 7 --host-share 0.3 --defects endless-loop \
  --defect-share "$share" | tee -a "$out/summary.txt" || exit 1
mapfile -t calm < <(python3 -c "
import json, sys
for h in json.load(open('$work/class/class.json'))['handins']:
    if h['defect'] != 'endless-loop':
        print('$work/class/' + h['name'])")
# grade NAME SECONDS HANDIN...: one grading run, its time, reports in $work/NAME.
grade() {
  local name=$1 secs=$2; shift 2
  rm -rf "$work/cache"; mkdir -p "$work/cache"
  at "grade $name: $# hand-ins, --jobs $jobs, within $secs s" | tee -a "$out/summary.txt"
  local s=$(date +%s%N) rc ms
  XDG_CACHE_HOME="$work/cache" timeout "$secs" "$build/reduce-scan-bench" grade \
    --platform "$platform" --sandbox none --jobs "$jobs" --timeout "$limit" \
    --rubric "$work/rubric.json" --output-dir "$work/$name" --trace "$out/$name-trace.csv" "$@" \
    2> "$out/$name-grade.log"
  rc=$? ms=$(( ($(date +%s%N) - s) / 1000000 ))
  printf '%s: exit %d%s, %d.%d s\n' "$name" "$rc" "$([ $rc = 124 ] && echo ', stopped at the budget')" \
    $(( ms / 1000 )) $(( ms % 1000 / 100 )) | tee -a "$out/summary.txt"
  cp "$work/$name/summary.csv" "$out/$name-summary.csv" 2>/dev/null
}
grade without 300 "${calm[@]}"
left=$(( budget - ($(date +%s) - t0) )); [ $left -ge 60 ] || left=60
grade with $left "$work"/class/*/
at compare | tee -a "$out/summary.txt"
grep -h '^\[' "$out/with-grade.log" | tee -a "$out/summary.txt"  # each hand-in's total and time
python3 bench/make-class "$work/class" --check "$work/with" 2>&1 | tail -4 | tee -a "$out/summary.txt"
python3 - "$work" <<'EOF' 2>&1 | tee -a "$out/summary.txt"
import json, os, sys
work = sys.argv[1]
handins = json.load(open(os.path.join(work, "class", "class.json")))["handins"]
def report(run, name):
    try:
        return json.load(open(os.path.join(work, run, name + ".json")))
    except OSError:
        return None
bad = missing = 0
for h in handins:
    w = report("with", h["name"])
    missing += w is None
    alone = [f"{i['id']}: {note}" for i in (w or {}).get("items", []) for note in i.get("ran_alone", [])]
    if h["defect"] == "endless-loop":
        limits = {i["id"]: i["time_limit_s"] for i in (w or {}).get("items", []) if i["points"] < i["max_points"]}
        print(f"{h['name']} (endless, {h['kind']}): {w and w['total']} of {w and w['max']}, lost {limits} (limit s)")
    else:
        o = report("without", h["name"])
        missing += o is None
        same = w is None or o is None or w["total"] == o["total"]
        bad += not same
        print(f"{h['name']} ({h['kind']}): {w and w['total']} beside the endless ones, {o and o['total']} "
              f"without them{'' if same else '  <- DIFFERENT'}")
    for a in alone:
        print(f"    ran alone: {a}")
print(f"FAIL: {bad} hand-in(s) differ" if bad
      else f"INCOMPLETE: {missing} hand-in(s) not graded within the budget" if missing
      else "PASS: every total equals the one without the endless hand-ins")
EOF
