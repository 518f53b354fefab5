#!/usr/bin/env bash
# Every C++ source of the repository is formatted as .clang-format says (clang-format from
# Debian's package, installed by scripts/install-deps.sh): lists the files that are not, with
# the command that formats them, and fails. Skips (77), saying why, where clang-format is absent.
set -u
root=${1:?usage: format_test.sh SOURCE_DIR}
cd "$root" || exit 1
command -v clang-format >/dev/null || { echo "skipped: no clang-format on PATH (scripts/install-deps.sh installs it)"; exit 77; }
mapfile -t files < <(find common src tests bench -name '*.cpp' -o -name '*.h' | sort)
# One clang-format process for every file (a process each cost most of the test's time): it
# names each file that is not formatted in its "FILE:LINE:COL: error:" lines.
out=$(clang-format --dry-run --Werror "${files[@]}" 2>&1)
status=$?
mapfile -t bad < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: .*-Wclang-format-violations.*$/\1/p' <<<"$out" | sort -u)
if [ $status -ne 0 ] && [ ${#bad[@]} -eq 0 ]; then
  echo "clang-format failed (exit $status) and named no file that is not formatted:"
  echo "$out" | tail -20
  exit 1
fi
if [ ${#bad[@]} -gt 0 ]; then
  echo "not formatted as .clang-format says (${#bad[@]} of ${#files[@]} files):"
  printf '  %s\n' "${bad[@]}"
  echo "format them with: clang-format -i ${bad[*]}"
  exit 1
fi
echo "all ${#files[@]} C++ files formatted as .clang-format says ($(clang-format --version))"
