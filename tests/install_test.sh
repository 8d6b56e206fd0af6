#!/usr/bin/env bash
# Installs the build into a scratch prefix and builds and runs a consumer with find_package(tmemjit).
set -euo pipefail
build_dir=$1
source_dir=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build_dir" --prefix "$prefix/install" >/dev/null
cmake -S "$source_dir/tests/install_consumer" -B "$prefix/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix/install" >/dev/null
cmake --build "$prefix/consumer" >/dev/null
LD_LIBRARY_PATH="$prefix/install/lib:$prefix/install/lib64" "$prefix/consumer/consumer"
