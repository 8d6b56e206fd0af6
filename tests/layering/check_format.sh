#!/usr/bin/env bash
# Every C++ file of the project is formatted as .clang-format says (CTest ClangFormat).
# Exits 77 (CTest: skipped, with this reason) where clang-format is missing.
set -euo pipefail
root=$1
if ! command -v clang-format >/dev/null 2>&1; then
  echo "skipped: clang-format is not installed (Debian package clang-format)"
  exit 77
fi
cd "$root"
# tests/golden holds generated code compared byte for byte: never reformatted.
mapfile -t files < <(find include runtime kernels tools tests bench examples python/src -path tests/golden -prune -o \
  \( -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' \) -type f -print 2>/dev/null | sort)
status=0
for file in "${files[@]}"; do
  if ! clang-format --dry-run --Werror "$file" >/dev/null 2>&1; then
    echo "error: $file is not clang-formatted (run: clang-format -i $file)"
    status=1
  fi
done
[ $status -eq 0 ] && echo "${#files[@]} files formatted"
exit $status
