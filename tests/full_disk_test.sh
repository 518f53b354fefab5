#!/usr/bin/env bash
# Every writer on a full disk: a small tmpfs mounted in a mount namespace of this test's own
# (`unshare -m` as root, else `unshare -rm` in a user namespace; exit 77, saying why, where
# neither works). On a disk with no byte free, a run's -o, tune -o, grade --output-dir, --trace,
# grade merge --output-dir and plot -o are refused up front (exit 3, naming the option and the
# reason) and nothing is made; on a disk that takes the probe but not the file, a run, a merge and
# a plot exit 3 naming the file, and no file is left short (the earlier one, or the last that
# fitted, whole). A file nobody may write in a folder nobody may not: refused before any case.
#   tests/full_disk_test.sh BINARY SOURCE_DIR
set -u
bin=$1
src=$2
if [ -z "${RSB_FULL_DISK_NS:-}" ]; then
  export RSB_FULL_DISK_NS=1
  if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then exec unshare -m "$0" "$@"; fi
  if unshare -rm true 2>/dev/null; then exec unshare -rm "$0" "$@"; fi
  echo "SKIP: no mount namespace (unshare -m as root, or unshare -rm): no small disk to fill"
  exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rsb-full-disk.XXXXXX")
trap 'umount "$tmp"/disk-* 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
say() { echo "FAIL: $*"; fail=1; }
disk() {  # NAME SIZE: a new tmpfs of SIZE bytes at $tmp/disk-NAME
  mkdir "$tmp/disk-$1" && mount -t tmpfs -o size="$2" tmpfs "$tmp/disk-$1" ||
    { echo "SKIP: cannot mount a tmpfs here"; exit 77; }
}
expect3() {  # WHAT TEXT COMMAND...: exit 3 with TEXT on stderr
  local what=$1 want=$2 err rc
  shift 2
  err=$("$@" 2>&1 >/dev/null); rc=$?
  [ $rc -eq 3 ] && [[ $err == *"$want"* ]] ||
    say "$what: exit $rc, stderr '$err' (wanted 3 with '$want')"
}
run=("$bin" --check -q --size 100 --task reduction --format json)

# A hand-in, and a grade shard of one hand-in whose report does not fit on a 8 KiB disk.
mkdir -p "$tmp/h/kernels" "$tmp/shard"
cat >"$tmp/shard/grading.json" <<'EOF'
{"schema": "reduce-scan-bench-grading/1", "suite": "s", "rubric": {"path": "r", "name": "r",
 "hash": "h"}, "items": ["a"], "seed": 1, "device": "d", "shard": {"index": 1, "count": 1},
 "class": ["s1"], "graded": ["s1"], "complete": true}
EOF
echo '{"handin": "s1", "total": 1, "max": 1, "items": [{"points": 1, "max_points": 1, "status": "passed", "detail": ""}]}' >"$tmp/shard/s1.json"
head -c 20000 /dev/zero | tr '\0' x >"$tmp/shard/s1.md"

# --- no byte free: refused up front, nothing made ---
disk full 4096
full=$tmp/disk-full
head -c 1000000 /dev/zero >"$full/fill" 2>/dev/null
expect3 "run -o, full disk" "--output '$full/r.json': cannot write there: No space left" \
  "${run[@]}" -o "$full/r.json"
expect3 "tune -o, full disk" "--output '$full/p.json': cannot write there: No space left" \
  "$bin" tune -q --budget 1 -o "$full/p.json"
# (--sandbox none: the output checks are the subject, and a machine without bubblewrap would
# refuse the default sandbox first)
expect3 "grade --output-dir, full disk" "--output-dir '$full/g': cannot write there" \
  "$bin" grade -q --sandbox none --output-dir "$full/g" "$tmp/h"
expect3 "grade --trace, full disk" "--trace '$full/t.csv': cannot write there" \
  "$bin" grade -q --sandbox none --trace "$full/t.csv" --output-dir "$tmp/g" "$tmp/h"
expect3 "grade merge --output-dir, full disk" "--output-dir '$full/m': cannot write there" \
  "$bin" grade merge --output-dir "$full/m" "$tmp/shard"
expect3 "plot -o, full disk" "--output '$full/p.png': cannot write there" \
  "$bin" plot -q -o "$full/p.png" "$src/tests/fixtures/base.json"
left=$(ls -A "$full" | grep -v '^fill$')
[ -z "$left" ] || say "full disk: made $left"
[ ! -e "$tmp/g" ] || say "grade --trace refused, but --output-dir $tmp/g made"

# --- the probe fits, the file does not: exit 3 naming it, the old file kept, none left short ---
disk small 8192
small=$tmp/disk-small
echo old >"$small/r.json"
expect3 "run -o, a file beyond the free space" \
  "--output '$small/r.json': writing failed: No space left" "${run[@]}" -o "$small/r.json"
# What r.json holds: the earlier file, or the last report that fitted, whole.
[ "$(cat "$small/r.json")" = old ] ||
  python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["results"]' "$small/r.json" ||
  say "run -o: r.json is neither the earlier file nor a whole report"
expect3 "grade merge, a report beyond the free space" "No space left" \
  "$bin" grade merge --output-dir "$small/m" "$tmp/shard"
err=$("$bin" plot -q -o "$small/p.png" "$src/tests/fixtures/base.json" 2>&1); rc=$?
if [[ $err == *"plot needs"* ]]; then
  echo "note: no Python with matplotlib: plot's full disk not tried"
elif [ $rc -ne 3 ] || [[ $err != *"--output '$small/p.png': not written"* ]]; then
  say "plot -o, a figure beyond the free space: exit $rc, stderr '$err'"
fi
# --- a file this user may write, in a folder it may not (as nobody): refused before any case ---
mkdir "$tmp/ro" && chmod 755 "$tmp" "$tmp/ro" && echo old >"$tmp/ro/r.json"
chown 65534 "$tmp/ro/r.json" 2>/dev/null
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp)
if "${as_nobody[@]}" "$bin" --version >/dev/null 2>&1; then
  err=$("${as_nobody[@]}" "$bin" --check --size 100 --task reduction --variant interleaved -o "$tmp/ro/r.json" 2>&1); rc=$?
  [ $rc -eq 3 ] && [[ $err == *"--output '$tmp/ro/r.json': cannot write there"* ]] &&
    [[ $err != *passed* ]] || say "-o in a folder nobody may write: exit $rc, stderr '$err'"
  [ "$(cat "$tmp/ro/r.json")" = old ] || say "-o in a folder nobody may write: r.json changed"
else
  echo "note: the binary does not run as nobody here (setpriv, or a folder above it): not tried"
fi

short=$(find "$small" -type f -size 0)
[ -z "$short" ] || say "empty files left: $short"
left=$(find "$small" -name '*.tmp*')
[ -z "$left" ] || say "temporary files left: $left"
exit $fail
