#!/usr/bin/env bash
# Every public header (include/tmem/*.h, globbed: a new header is covered) compiles alone as C++17
# and as C++20, without a warning: hosts such as PyTorch extensions build with -std=c++17 while the
# library itself is C++20 (docs/specialization.md §Hosts).
#
# Usage: check_headers.sh ROOT COMPILER      exit 1 naming each header and standard that fails
#        check_headers.sh --self-test COMPILER  shows that each kind of C++20-only header is caught
# Exits 77 (CTest: skipped, with this reason) where COMPILER is not installed.
set -euo pipefail

# -Wpedantic with -Werror: GCC and clang accept some C++20 (designated initializers) in C++17 mode
# with only a pedantic warning.
FLAGS=(-fsyntax-only -Wall -Wextra -Wpedantic -Werror)
STANDARDS=(c++17 c++20)

# check ROOT COMPILER: prints "error: ..." and the compiler's first lines for each failure.
check() {
  local root=$1 compiler=$2 status=0 header name standard log count=0
  for header in "$root"/include/tmem/*.h; do
    name=$(basename "$header")
    for standard in "${STANDARDS[@]}"; do
      count=$((count + 1))
      if ! log=$(printf '#include "tmem/%s"\n' "$name" |
          "$compiler" -std="$standard" "${FLAGS[@]}" -I"$root/include" -x c++ - 2>&1); then
        echo "error: tmem/$name does not compile alone with $compiler -std=$standard:"
        printf '%s\n' "$log" | head -n 8
        status=1
      fi
    done
  done
  [ $status -eq 0 ] && echo "$count header compiles passed with $compiler"
  return $status
}

# Plants one header per C++20-only construct next to a clean one: each must fail under C++17 alone.
self_test() {
  local compiler=$1 root output status=0 bad
  root=$(mktemp -d)
  trap 'rm -rf "$root"' RETURN
  mkdir -p "$root/include/tmem"
  printf '#pragma once\nstruct Clean { int a = 0; };\n' >"$root/include/tmem/clean.h"
  printf '#pragma once\nstruct A { int a; friend bool operator==(const A&, const A&) = default; };\n' \
    >"$root/include/tmem/bad_defaulted_equality.h"
  printf '#pragma once\n#include <span>\nvoid f(std::span<const int> values);\n' \
    >"$root/include/tmem/bad_span.h"
  printf '#pragma once\nstruct B { int a, b; };\ninline B g() { return {.a = 1, .b = 2}; }\n' \
    >"$root/include/tmem/bad_designated_initializer.h"
  printf '#pragma once\ntemplate <class T>\nconcept Small = sizeof(T) < 8;\n' \
    >"$root/include/tmem/bad_concept.h"
  output=$(check "$root" "$compiler") && status=1
  for bad in bad_defaulted_equality bad_span bad_designated_initializer bad_concept; do
    if ! grep -q "error: tmem/$bad.h does not compile alone with $compiler -std=c++17" <<<"$output"; then
      echo "self-test: $bad.h was not caught"
      status=1
    fi
  done
  if grep -q "tmem/clean.h" <<<"$output"; then
    echo "self-test: clean.h was refused"
    status=1
  fi
  [ $status -eq 0 ] && echo "self-test passed: every planted C++20-only header was caught"
  return $status
}

if [ "${1:-}" = --self-test ]; then
  compiler=${2:?usage: check_headers.sh --self-test COMPILER}
else
  root=${1:?usage: check_headers.sh ROOT COMPILER}
  compiler=${2:?usage: check_headers.sh ROOT COMPILER}
fi
if ! command -v "$compiler" >/dev/null 2>&1; then
  echo "skipped: $compiler is not installed (Debian package: clang for clang++, g++ for g++)"
  exit 77
fi
if [ "${1:-}" = --self-test ]; then
  self_test "$compiler"
else
  check "$root" "$compiler"
fi
