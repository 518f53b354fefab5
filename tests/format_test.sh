#!/usr/bin/env bash
# Every C++ source of the repository is formatted as .clang-format says (clang-format from
# Debian's package, installed by scripts/install-deps.sh): lists the files that are not, with
# the command that formats them, and fails. Skips (77), saying why, where clang-format is absent.
set -u
root=${1:?usage: format_test.sh SOURCE_DIR}
cd "$root" || exit 1
command -v clang-format >/dev/null || { echo "skipped: no clang-format on PATH (scripts/install-deps.sh installs it)"; exit 77; }
mapfile -t files < <(find common src tests bench -name '*.cpp' -o -name '*.h' | sort)
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "not formatted as .clang-format says (${#bad[@]} of ${#files[@]} files):"
  printf '  %s\n' "${bad[@]}"
  echo "format them with: clang-format -i ${bad[*]}"
  exit 1
fi
echo "all ${#files[@]} C++ files formatted as .clang-format says ($(clang-format --version))"
