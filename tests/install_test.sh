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
# A C++17 host links and runs against the C++20 library (tests/install_consumer/main_cxx17.cc).
LD_LIBRARY_PATH="$prefix/install/lib:$prefix/install/lib64" "$prefix/consumer/consumer_cxx17" |
  tee "$prefix/consumer_cxx17.out"
grep -q '^PASS$' "$prefix/consumer_cxx17.out"
# The installed command starts on its own (RUNPATH $ORIGIN/../lib), with no LD_LIBRARY_PATH.
env -u LD_LIBRARY_PATH "$prefix/install/bin/tmemjit" describe tcgen05.ld.sync.aligned.32x32b.x4.b32 \
  >/dev/null
# Only the public API is exported (docs/architecture.md): no PTX IR, simulator or JSON symbols.
library=$(ls "$prefix"/install/lib*/libtmemjit.so | head -n 1)
# Anything outside tmem:: (a static archive's C++ runtime, weak std:: copies) is kept local too,
# so nothing can interpose on the user's own libstdc++.
if nm -D --defined-only "$library" | c++filt | grep -E 'tmem::(ptx|sim)::|nlohmann' | head -n 5 |
    grep .; then
  echo "error: $library exports private symbols (above)" >&2
  exit 1
fi
if nm -D --defined-only "$library" | c++filt | grep -v 'tmem::' | head -n 5 | grep .; then
  echo "error: $library exports private symbols (above)" >&2
  exit 1
fi
# The exported package holds the library alone: no internal target (tmemjit_warnings, ...).
if grep -h "add_library(" "$prefix"/install/lib*/cmake/tmemjit/tmemjitTargets.cmake |
    grep -v "tmem::tmemjit "; then
  echo "error: the exported package has targets other than tmem::tmemjit" >&2
  exit 1
fi
# The example application (examples/jit_transfer) against the same install: the seed's Layout B,
# selected, compiled and run on the best device here (the simulator where there is no GPU).
cmake -S "$source_dir/examples/jit_transfer" -B "$prefix/example" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix/install" >/dev/null
cmake --build "$prefix/example" >/dev/null
TMEMJIT_CACHE_DIR="$prefix/cache" LD_LIBRARY_PATH="$prefix/install/lib:$prefix/install/lib64" \
  "$prefix/example/jit_transfer" 'tmem_datapath_layout("B",64,128)' \
  'tensor((64,128), S[(64,2,64):(1@tid_in_wg,64@tid_in_wg,1)], f32)' | tee "$prefix/example.out"
grep -q '^selected tcgen05.st.sync.aligned.32x32b.x64.b32' "$prefix/example.out"
grep -q '^PASS' "$prefix/example.out"
# The GEMM-style epilogue (examples/epilogue) against the same install: its own kernel specialized
# at run time for three layouts through compile_kernel. It runs by emulation on a Hopper GPU and on
# tcgen05 on Blackwell (PASS); elsewhere it compiles every layout for sm_100a and says why it skips
# the runs.
cmake -S "$source_dir/examples/epilogue" -B "$prefix/epilogue" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix/install" >/dev/null
cmake --build "$prefix/epilogue" >/dev/null
TMEMJIT_CACHE_DIR="$prefix/cache" LD_LIBRARY_PATH="$prefix/install/lib:$prefix/install/lib64" \
  "$prefix/epilogue/epilogue" | tee "$prefix/epilogue.out"
grep -Eq '^(PASS$|SKIP runs: )' "$prefix/epilogue.out"
# The FA4-style softmax and the DeepGEMM-style warp-specialized epilogue (examples/softmax,
# examples/warp_specialized) against the same install: each compiles its layouts for sm_100a with
# the SASS checked and runs them where a GPU can (PASS); elsewhere it says why it skips the runs.
for example in softmax warp_specialized; do
  cmake -S "$source_dir/examples/$example" -B "$prefix/$example" -G Ninja \
    -DCMAKE_PREFIX_PATH="$prefix/install" >/dev/null
  cmake --build "$prefix/$example" >/dev/null
  TMEMJIT_CACHE_DIR="$prefix/cache" LD_LIBRARY_PATH="$prefix/install/lib:$prefix/install/lib64" \
    "$prefix/$example/$example" | tee "$prefix/$example.out"
  grep -Eq '^(PASS$|SKIP runs: )' "$prefix/$example.out"
done
