#!/usr/bin/env bash
# The hand-out and the hand-in (scripts/make-handout, the handin target):
#  - make-handout's marker handling on a small tree (stub uncommented, solution gone) and its
#    refusals (unbalanced marker, OUT not empty): exit 2, one line, nothing written;
#  - the hand-out of this tree holds no marker and no stub prefix, nor the lab archives or the
#    tests that patch the solution, and configures with its tests;
#  - its executable, built through the suite's hand-in kit (KIT: the hand-out's task sources
#    compiled, the rest of its code is the source tree's, checked byte for byte), without
#    warnings; `--check` runs on the test device within 120 s: exit status 1, every variant whose
#    kernel file the hand-out stubs (its --list-variants names the files) `failed` with a message
#    naming it, the others (single-pass) `passed`; the same --check on the solution
#    (BINARY, the suite's own) passes;
#  - its kernels, graded as a hand-in, get 0 points without a crash or a hang;
#  - its handin target packs kernels/, the task sources, the results file just written and a
#    HANDIN.txt naming the task API;
#  - that hand-in, its scan source edited, graded by the hand-out's binary: its host code builds
#    against the kit.
#   tests/handout_test.sh SOURCE_DIR CMAKE BINARY KIT
# (KIT: ctest gives the tests' copy of the suite's hand-in kit, compiling at -O0: handin-kit-O0.)
# The device: RSB_TEST_PLATFORM / RSB_TEST_DEVICE as for the other tests (default: the first).
set -u
src=$1
cmake=$2
bin=$3
kit=$4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rsb-handout.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "FAIL: $*"; fail=1; }

# --- make-handout on a small tree outside git --------------------------------------------------
mini=$tmp/mini
mkdir -p "$mini/scripts" "$mini/kernels"
cp "$src/scripts/make-handout" "$mini/scripts/"
cat >"$mini/kernels/K.cl" <<'EOF'
kernel void K(global int* p) {
  // SOLUTION BEGIN
  p[0] = 42;
  // SOLUTION END
  //! // TODO: write 42.
  //!
  //! p[0] = 0;
  p[1] = 1;
}
EOF
printf '// SOLUTION BEGIN\nkeep me\n' >"$mini/README.md"
out=$(python3 "$mini/scripts/make-handout" "$tmp/mini-out" 2>&1); rc=$?
want=$'kernel void K(global int* p) {\n  // TODO: write 42.\n\n  p[0] = 0;\n  p[1] = 1;\n}'
if [ $rc -ne 0 ] || [ "$(cat "$tmp/mini-out/kernels/K.cl" 2>/dev/null)" != "$want" ] ||
   ! cmp -s "$mini/README.md" "$tmp/mini-out/README.md"; then
  say "make-handout on a small tree -> exit $rc: $out; K.cl: $(cat "$tmp/mini-out/kernels/K.cl")"
fi
expect_refusal() {  # out-folder text
  local o rc
  o=$(python3 "$mini/scripts/make-handout" "$1" 2>&1); rc=$?
  if [ $rc -ne 2 ] || [ "$(printf '%s\n' "$o" | wc -l)" -ne 1 ] || [[ $o != *"$2"* ]]; then
    say "make-handout $1 -> exit $rc: $o (wanted exit 2, one line with '$2')"
  fi
}
expect_refusal "$tmp/mini-out" "is not an empty folder"
printf 'a\n  // SOLUTION BEGIN\nb\n' >"$mini/kernels/Open.cl"
expect_refusal "$tmp/mini-open" "kernels/Open.cl:2: SOLUTION BEGIN never closed"
printf 'a\n// SOLUTION END\n' >"$mini/kernels/Open.cl"
expect_refusal "$tmp/mini-open" "kernels/Open.cl:2: SOLUTION END without a SOLUTION BEGIN"
printf '// SOLUTION BEGIN\n// SOLUTION BEGIN\n// SOLUTION END\n' >"$mini/kernels/Open.cl"
expect_refusal "$tmp/mini-open" "kernels/Open.cl:2: SOLUTION BEGIN inside"
[ -e "$tmp/mini-open" ] && say "make-handout wrote $tmp/mini-open despite an unbalanced marker"

# --- the hand-out of this tree ------------------------------------------------------------------
ho=$tmp/handout
out=$(python3 "$src/scripts/make-handout" "$ho" 2>&1) || { say "make-handout: $out"; exit 1; }
expect_refusal_full=$(python3 "$src/scripts/make-handout" "$ho" 2>&1); rc=$?
[ $rc -eq 2 ] || say "make-handout into the non-empty hand-out -> exit $rc: $expect_refusal_full"
left=$(grep -rnE 'SOLUTION (BEGIN|END)|^[[:space:]]*//!' "$ho/kernels" "$ho/src" "$ho/common")
[ -z "$left" ] || say "markers left in the hand-out: $left"
# No solution line anywhere in it: tests/handout_leak_test.py (ctest HandoutLeaks). Left out:
# the lab archives and the tests and tools that patch the solution (make-handout's LEFT_OUT).
for f in docs/results bench/make-class tests/GradeClassTests.cpp tests/slurm_test.sh; do
  [ -e "$src/$f" ] || say "$f is not in the source tree (update this test)"
  [ -e "$ho/$f" ] && say "the hand-out holds $f"
done
for f in tests/ReductionTests.cpp tests/ScanTests.cpp tests/ConvolutionTests.cpp docs/USAGE.md; do
  [ -e "$ho/$f" ] || say "the hand-out lacks $f"
done
# What the single-pass variants and the shared code need is untouched.
for f in kernels/WorkGroup.clh kernels/Atomics.clh kernels/Common.clh kernels/SinglePassScan.cl \
         kernels/SinglePassReduction.cl common/engine/Runner.cpp src/main.cpp; do
  cmp -s "$src/$f" "$ho/$f" || say "the hand-out's $f differs from the source tree's"
done

# Configured with its tests: the test list holds only the suites the hand-out has.
if ! timeout 600 "$cmake" -S "$ho" -B "$ho/build" -DCMAKE_BUILD_TYPE=None -DRSB_BUILD_TESTS=ON \
     >"$tmp/configure.log" 2>&1; then
  say "configuring the hand-out: $(tail -20 "$tmp/configure.log")"; exit 1
fi

# Its executable, built through the suite's hand-in kit as the grader builds a hand-in's: the
# hand-out's task sources and registry (src/tasks/*.cpp; where alike in the source tree, the kit's
# objects) compiled with the kit's flags (and -O0: it builds faster) and the hand-out's own
# headers, linked with the kit's main.o and library. It
# is the hand-out's binary: every other file of its common/ and src/ is the source tree's, byte
# for byte (checked here), and the suite's build compiles those. (Building the whole hand-out
# compiled the shared code a second time: 75 of this test's 140 CPU-s on 2 cores.)
[ -f "$kit/kit.txt" ] || { say "no hand-in kit at '$kit' (cmake --build BUILD --target handin-kit-O0)"; exit 1; }
# (And its build files: what a student's `cmake --build` builds is what the suite's build built.)
tree_files() { (cd "$1" && { git ls-files CMakeLists.txt cmake common src 2>/dev/null ||
                             find CMakeLists.txt cmake common src -type f; } | sort); }
[ -n "$(tree_files "$src")" ] || say "no files of common/ and src/ listed in $src"
while IFS= read -r f; do
  case $f in src/tasks/C*Task.h | src/tasks/C*Task.cpp) continue ;; esac
  if [ ! -f "$ho/$f" ]; then
    say "the hand-out lacks $f: a student's build of it needs every file of the shared code"
  elif ! cmp -s "$src/$f" "$ho/$f"; then
    say "the hand-out's $f differs from the source tree's: the kit's objects are not the hand-out's"
  fi
done < <(tree_files "$src")
extra=$(comm -13 <(tree_files "$src") <(cd "$ho" && find CMakeLists.txt cmake common src -type f | sort))
[ -z "$extra" ] || say "the hand-out holds files the source tree does not: $extra"
compiler='' flags=() includes=() link_flags=() libraries=()
while read -r key value; do
  case $key in
    compiler) compiler=$value ;;
    compile-flag) flags+=("$value") ;;
    define) flags+=("-D$value") ;;
    include) case $value in /*) includes+=("-I$value") ;; common | src) includes+=("-I$ho/$value") ;;
             *) includes+=("-I$kit/$value") ;; esac ;;
    link-flag) [ -n "$value" ] && link_flags+=("$value") ;;
    library) case $value in '') ;; /* | -*) libraries+=("$value") ;; *) libraries+=("$kit/$value") ;; esac ;;
  esac
done <"$kit/kit.txt"
mkdir -p "$tmp/bin" "$tmp/obj"
objects=("$kit/obj/main.o")
# (A source the hand-out has as the source tree has it, the task headers too: the kit's object,
# as the grader takes it for a hand-in's unchanged file.)
same_headers=1
for h in "$src"/src/tasks/*.h "$ho"/src/tasks/*.h; do
  cmp -s "$src/src/tasks/${h##*/}" "$ho/src/tasks/${h##*/}" || same_headers=0
done
for f in "$ho"/src/tasks/*.cpp; do
  o=$tmp/obj/$(basename "$f" .cpp).o
  if [ $same_headers = 1 ] && cmp -s "$src/src/tasks/${f##*/}" "$f" &&
     [ -f "$kit/obj/$(basename "$f" .cpp).o" ]; then
    objects+=("$kit/obj/$(basename "$f" .cpp).o")
    continue
  fi
  if ! timeout 300 "$compiler" "${flags[@]}" -O0 "${includes[@]}" -c "$f" -o "$o" \
       >>"$tmp/build.log" 2>&1; then
    say "compiling the hand-out's ${f#"$ho"/} against the kit: $(grep -m5 error "$tmp/build.log")"
    exit 1
  fi
  objects+=("$o")
done
bench=$tmp/bin/reduce-scan-bench
if ! timeout 300 "$compiler" "${flags[@]}" "${link_flags[@]}" "${objects[@]}" -o "$bench" \
     "${libraries[@]}" >>"$tmp/build.log" 2>&1; then
  say "linking the hand-out's binary: $(tail -5 "$tmp/build.log")"; exit 1
fi
grep -q 'warning:' "$tmp/build.log" && say "the hand-out builds with warnings: $(grep -m5 'warning:' "$tmp/build.log")"
cp -r "$ho/kernels" "$tmp/bin/kernels"  # (its kernels: beside the binary, read first)

selectors=()
[ -n "${RSB_TEST_PLATFORM:-}" ] && selectors+=(--platform "$RSB_TEST_PLATFORM")
[ -n "${RSB_TEST_DEVICE:-}" ] && selectors+=(--device "$RSB_TEST_DEVICE")
(cd "$ho/build" && timeout 120 "$bench" --check --size 1000,100x37 -q --format json \
   -o results.json "${selectors[@]}" >"$tmp/stdout" 2>"$tmp/stderr")
rc=$?
[ $rc -eq 1 ] || say "hand-out --check -> exit $rc (wanted 1): $(tail -5 "$tmp/stderr")"
# The same command on the solution (the suite's own binary) passes: what fails above is the stubs.
if [ -n "$bin" ]; then
  timeout 120 "$bin" --check --size 1000,100x37 -q --format json -o "$tmp/solution.json" \
    "${selectors[@]}" >/dev/null 2>"$tmp/solution.err"
  rc=$?
  [ $rc -eq 0 ] || say "the solution's --check -> exit $rc (wanted 0): $(tail -5 "$tmp/solution.err")"
  python3 - "$tmp/solution.json" <<'PY' || fail=1
import json, sys
bad = [f"{r['task']} {r['variant']}: {r['status']}" for r in json.load(open(sys.argv[1]))["results"]
       if r["status"] != "passed"]
if bad:
    print("FAIL: the solution's --check: " + ", ".join(bad))
sys.exit(1 if bad else 0)
PY
fi
# Which variants the hand-out stubs: those whose kernel file make-handout changed (the hand-out's
# binary lists each variant's file); every other one (single-pass) runs the solution's kernels.
"$bench" --list-variants --format json >"$tmp/variants.json" 2>"$tmp/variants.err" ||
  say "hand-out --list-variants --format json: $(cat "$tmp/variants.err")"
python3 - "$ho/build/results.json" "$tmp/variants.json" "$src/kernels" "$ho/kernels" <<'EOF' || fail=1
import filecmp, json, os, sys
try:
    results = json.load(open(sys.argv[1]))["results"]
    variants = json.load(open(sys.argv[2]))["variants"]
except Exception as e:
    print(f"FAIL: hand-out --check wrote no readable results or variants: {e}")
    sys.exit(1)
stubbed = {(v["task"], v["variant"]): not filecmp.cmp(os.path.join(sys.argv[3], v["file"]),
                                                      os.path.join(sys.argv[4], v["file"]), False)
           for v in variants}
bad = [] if any(stubbed.values()) else ["make-handout stubbed no variant's kernel file"]
seen = set()
for r in results:
    task, variant, status, msg = r["task"], r["variant"], r["status"], r.get("message", "")
    seen.add((task, variant))
    if (task, variant) not in stubbed:
        bad.append(f"{task} {variant}: a variant --list-variants does not list")
    elif stubbed[(task, variant)]:
        if status != "failed" or variant not in msg:
            bad.append(f"{task} {variant}: {status} '{msg}' (wanted failed, naming the variant)")
    elif status != "passed":
        bad.append(f"{task} {variant}: {status} '{msg}' (its kernel file is the solution's: "
                   "wanted passed)")
for task, variant in stubbed:
    if (task, variant) not in seen:
        bad.append(f"{task} {variant}: no result")
for b in bad:
    print(f"FAIL: hand-out --check: {b}")
sys.exit(1 if bad else 0)
EOF

# How the grading steps grade where the machine lacks what the default needs (the GPU machines
# have neither): --sandbox none without bubblewrap, the shipped rubric with its Oclgrind gates off
# without Oclgrind (as bench/gpu_grade_class.sh grades there). `rubric`: the first step's.
grading=() cache=()
# The test run's kernel cache (ctest sets POCL_CACHE_DIR): these hand-ins are this test's own.
[ -n "${POCL_CACHE_DIR:-}" ] && cache=(--kernel-cache "$POCL_CACHE_DIR")
grading+=("${cache[@]}")
if ! command -v bwrap >/dev/null 2>&1; then
  echo "note: no bwrap on PATH: the grading steps use --sandbox none"
  grading+=(--sandbox none)
fi
if ! command -v oclgrind >/dev/null 2>&1; then
  echo "note: no oclgrind on PATH: the grading steps use the shipped rubric with its Oclgrind gates off"
  python3 "$src/scripts/rubric-without-oclgrind" "$ho/grading/rubric.json" "$tmp/rubric.json"
  rubric=(--rubric "$tmp/rubric.json")
else
  rubric=(--rubric "$ho/grading/rubric.json")  # (the hand-out's, as its own build reads it)
fi

# The hand-out's kernels graded as a hand-in: no crash, no hang, 0 points. (Two items, one per
# task: the hand-in's stubs run, as the shipped rubric requires only the kernels; --check above
# found every stub `failed`.) Its child runs in residents, outside a sandbox (the kernels are
# this tree's own): every case fails, so each is run again alone, the suite's too, 128 runs that
# would each be a process (what residents answer is what processes would:
# Grade.ResidentRunsAnswerAsChildProcessesWould; the sandboxed path, Grade.* and the next step).
mkdir -p "$tmp/class/handout"
cp -r "$ho/kernels" "$tmp/class/handout/"
(cd "$ho/build" && timeout 300 "$bench" grade --output-dir "$tmp/graded" \
   --items reduction-decomposition,scan-naive --sandbox none --resident-runs on \
   "${selectors[@]}" "${cache[@]}" "${rubric[@]}" "$tmp/class/handout" >"$tmp/grade.out" 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
  say "grading the hand-out -> exit $rc: $(tail -5 "$tmp/grade.out")"
else
  total=$(python3 -c 'import json, sys; print("{:g}".format(json.load(open(sys.argv[1]))["total"]))' \
    "$tmp/graded/handout.json" 2>&1)
  [ "$total" = 0 ] || say "the hand-out graded $total points (wanted 0)"
fi

# The hand-in of the hand-out: the target writes build/handin.tar.gz with the results file.
out=$(timeout 120 "$cmake" --build "$ho/build" --target handin 2>&1); rc=$?
if [ $rc -ne 0 ] || [[ $out != *"handin.tar.gz"* ]]; then
  say "handin target -> exit $rc: $out"
else
  listed=$(tar tzf "$ho/build/handin.tar.gz")
  for f in kernels/Reduction.cl kernels/Scan.cl kernels/WorkGroup.clh \
           $(cd "$src" && ls src/tasks/C*Task.h src/tasks/C*Task.cpp) results.json HANDIN.txt; do
    grep -qx "$f" <<<"$listed" || say "the hand-in lacks $f: $listed"
  done
  grep -q 'common/\|main.cpp' <<<"$listed" && say "the hand-in holds more than it should: $listed"
  # Its HANDIN.txt names the hand-out's task API (common/engine/TaskApi.h), which the grader reads.
  api=$(sed -n 's/.*kTaskApiVersion = \([0-9]*\);.*/\1/p' "$src/common/engine/TaskApi.h")
  manifest=$(tar xzf "$ho/build/handin.tar.gz" -O HANDIN.txt)
  grep -qx "task api: $api" <<<"$manifest" || say "the hand-in's HANDIN.txt names no task api $api: $manifest"
  # That hand-in graded by the hand-out's binary: its host code (the scan's, edited by the
  # student; the reduction's, the hand-out's stubs) is built against the kit in seconds. (The
  # grader building a build tree's missing kit: Grade.BuildTreeWithoutItsKitBuildsItOnceAndSaysSo.)
  mkdir -p "$tmp/class2/packed"
  tar xzf "$ho/build/handin.tar.gz" -C "$tmp/class2/packed"
  sed -i '1i // edited by the student' "$tmp/class2/packed/src/tasks/CScanTask.cpp"
  # (Two items of one small case each, one per task: the host builds are what is checked; the
  # shipped rubric ran above. Every case of the stubs fails, and a failed case group is run again
  # with a worker per case, for the hand-in and the suite's own code (here the stubs too): the
  # shipped rubric's groups took 20 s of runs here.)
  cat >"$tmp/host-rubric.json" <<'JSON'
{"name": "host code", "items": [
  {"id": "reduction-interleaved", "task": "reduction", "variant": "interleaved", "points": 1,
   "cases": {"sizes": [1000]}},
  {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 1, "cases": {"sizes": [1000]}}]}
JSON
  (cd "$ho/build" && timeout 300 "$bench" grade --output-dir "$tmp/graded2" --handin-kit "$kit" \
     "${selectors[@]}" "${grading[@]}" --rubric "$tmp/host-rubric.json" "$tmp/class2/packed" \
     >"$tmp/grade2.out" 2>&1)
  rc=$?
  if [ $rc -ne 0 ]; then
    say "grading the packed hand-in -> exit $rc: $(tail -5 "$tmp/grade2.out")"
  else
    stubbed=0
    cmp -s "$src/src/tasks/CReductionTask.cpp" "$ho/src/tasks/CReductionTask.cpp" || stubbed=1
    python3 - "$tmp/graded2/packed.json" "$stubbed" <<'PY' || fail=1
import json, sys
host = json.load(open(sys.argv[1]))["host_code"]["tasks"]
scan, red = host.get("scan", {}), host.get("reduction", {})
stubbed = sys.argv[2] == "1"  # the hand-out's reduction source is not the kit's: compiled
if not scan.get("built") or "src/tasks/CScanTask.cpp" not in scan.get("compiled", []) or \
   not red.get("built") or \
   ("src/tasks/CReductionTask.cpp" in red.get("compiled", [])) != stubbed:
    print(f"FAIL: the packed hand-in's host code against the kit: {host}")
    sys.exit(1)
PY
  fi
fi
exit $fail
