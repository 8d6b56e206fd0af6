# Shared by scripts/demo.sh and scripts/test.sh: install what is missing, configure, build.
# Idempotent and quiet when everything is already present.

TMEMJIT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMEMJIT_BUILD_DIR=${TMEMJIT_BUILD_DIR:-$TMEMJIT_ROOT/build}
TMEMJIT_JOBS=${TMEMJIT_JOBS:-$(nproc 2>/dev/null || echo 2)}

# Debian packages the build and the tests need (the CUDA toolkit is assumed installed).
# libhiredis-dev, libssl-dev: the remote cache tier and entry signing; redis-server: the `remote`
# tests start their own on a loopback port (a packaged service that starts is not used).
# clang: HeadersCompileAlone.clang++ compiles the public headers with it (scripts/sanitize.sh and
# scripts/fuzz.sh need it anyway).
TMEMJIT_DEBIAN_PACKAGES=(cmake ninja-build g++ clang libgtest-dev libgmock-dev libbenchmark-dev
                         libxxhash-dev nlohmann-json3-dev python3 python3-dev python3-pip
                         libhiredis-dev libssl-dev redis-server)

tmemjit_log() { printf '[tmemjit] %s\n' "$*" >&2; }

# True when TMEMJIT_REQUIRE (a comma list: emu,device,sass,cute) names $1: a missing tool is then
# an error, not a logged skip (tests/common/require.cc does the same for the tests' skips).
tmemjit_required() { case ",${TMEMJIT_REQUIRE:-}," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

tmemjit_find_cuda() {
  if ! command -v nvcc >/dev/null 2>&1; then
    for dir in /usr/local/cuda/bin /usr/local/cuda-13.0/bin; do
      [ -x "$dir/nvcc" ] && export PATH="$dir:$PATH" && break
    done
  fi
  command -v nvcc >/dev/null 2>&1 || { tmemjit_log "the CUDA toolkit (nvcc) is not installed; install CUDA 12.8 or later"; return 1; }
}

tmemjit_install_packages() {
  local missing=()
  for pkg in "${TMEMJIT_DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  tmemjit_log "installing missing Debian packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >/dev/null
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The SASS checks need nvdisasm; the toolkit image may lack it, PyPI has it as a wheel.
tmemjit_install_nvdisasm() {
  command -v nvdisasm >/dev/null 2>&1 && return 0
  [ -x "$(dirname "$(command -v nvcc)")/nvdisasm" ] && return 0
  python3 -c 'import nvidia, os, sys; sys.exit(0 if any(os.path.exists(os.path.join(p, "cu13/bin/nvdisasm")) for p in nvidia.__path__) else 1)' 2>/dev/null && return 0
  tmemjit_log "installing nvdisasm from PyPI (nvidia-cuda-nvdisasm) for the SASS checks"
  python3 -m pip install -q --disable-pip-version-check nvidia-cuda-nvdisasm >/dev/null 2>&1 || {
    tmemjit_log "could not install nvidia-cuda-nvdisasm; SASS checks will be skipped with a reason"
    ! tmemjit_required sass
  }
}

# The compact default backend needs nvPTXCompiler (libnvptxcompiler_static.a); a toolkit may lack
# it, PyPI has it as a wheel. The wheel must match the toolkit's major.minor, as ptxas does.
# Failure only logs: configure then builds without it and `auto` falls back to nvJitLink.
tmemjit_install_nvptxcompiler() {
  local cuda_lib version
  cuda_lib="$(dirname "$(dirname "$(command -v nvcc)")")"
  for dir in "$cuda_lib/lib64" "$cuda_lib/lib" "$cuda_lib/targets/x86_64-linux/lib"; do
    [ -f "$dir/libnvptxcompiler_static.a" ] && return 0
  done
  version=$(nvcc --version | sed -n 's/.*release \([0-9]*\.[0-9]*\).*/\1/p')
  [ -n "$version" ] || { tmemjit_log "cannot read the CUDA version from nvcc --version"; return 0; }
  python3 -c 'import nvidia, os, sys; sys.exit(0 if any(os.path.exists(os.path.join(p, "cu'"${version%%.*}"'/lib/libnvptxcompiler_static.a")) for p in nvidia.__path__) else 1)' 2>/dev/null && return 0
  tmemjit_log "installing nvPTXCompiler $version from PyPI (nvidia-nvptxcompiler) for the compact default backend"
  python3 -m pip install -q --disable-pip-version-check "nvidia-nvptxcompiler==$version.*" >/dev/null 2>&1 ||
    tmemjit_log "could not install nvidia-nvptxcompiler==$version.*; the auto backend will use nvJitLink"
}

# The Python package (python/, CTest label `python`): nanobind and scikit-build-core build it,
# pytest runs its tests. Where a GPU is visible, cuda.core too, so the cubin-loading test runs
# instead of skipping. Failure only logs: configure then leaves the package out and says why.
tmemjit_install_python_packages() {
  local missing=() pair module pkg
  # lizard: the complexity check of the tree (tests/layering/check_complexity.py).
  for pair in nanobind:nanobind scikit_build_core:scikit-build-core pytest:pytest lizard:lizard; do
    module=${pair%%:*} pkg=${pair#*:}
    python3 -c "import $module" 2>/dev/null || missing+=("$pkg")
  done
  if [ -e /dev/nvidia0 ] && ! python3 -c 'import cuda.core' 2>/dev/null; then
    missing+=("cuda-core[cu13]")
  fi
  [ ${#missing[@]} -eq 0 ] && return 0
  tmemjit_log "installing ${missing[*]} from PyPI for the Python package and its tests"
  python3 -m pip install -q --disable-pip-version-check "${missing[@]}" >/dev/null 2>&1 ||
    tmemjit_log "could not install ${missing[*]}; the Python package or its tests may be left out"
}

# The CuTe agreement tests (tests/cute, CTest label `cute`) compile against CUTLASS 4.2's headers,
# which PyPI ships in the nvidia-cutlass wheel (cutlass_library/source/include). Skipped when
# $TMEMJIT_CUTLASS_DIR names a checkout; failure only logs: the cute tests then skip with the reason.
TMEMJIT_CUTLASS_WHEEL=nvidia-cutlass==4.2.0.0
tmemjit_install_cutlass() {
  [ -n "${TMEMJIT_CUTLASS_DIR:-}" ] && return 0
  python3 -c 'import importlib.util as u, os, sys; s = u.find_spec("cutlass_library"); sys.exit(0 if s and os.path.exists(os.path.join(os.path.dirname(s.origin), "source/include/cute/atom/copy_traits_sm100.hpp")) else 1)' 2>/dev/null && return 0
  tmemjit_log "installing CUTLASS's headers from PyPI ($TMEMJIT_CUTLASS_WHEEL) for the CuTe agreement tests"
  python3 -m pip install -q --disable-pip-version-check "$TMEMJIT_CUTLASS_WHEEL" >/dev/null 2>&1 || {
    tmemjit_log "could not install $TMEMJIT_CUTLASS_WHEEL; the cute tests will be skipped with a reason"
    ! tmemjit_required cute
  }
}

tmemjit_setup() {
  tmemjit_install_packages
  tmemjit_find_cuda
  tmemjit_install_nvdisasm
  tmemjit_install_nvptxcompiler
  tmemjit_install_cutlass
  tmemjit_install_python_packages
}

tmemjit_configure_and_build() {
  mkdir -p "$TMEMJIT_BUILD_DIR"
  if [ ! -f "$TMEMJIT_BUILD_DIR/build.ninja" ]; then
    cmake -S "$TMEMJIT_ROOT" -B "$TMEMJIT_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "$@" >"$TMEMJIT_BUILD_DIR/configure.log" 2>&1 ||
      { cat "$TMEMJIT_BUILD_DIR/configure.log" >&2; return 1; }
  fi
  cmake --build "$TMEMJIT_BUILD_DIR" -j "$TMEMJIT_JOBS" >"$TMEMJIT_BUILD_DIR/build.log" 2>&1 ||
    { tail -n 60 "$TMEMJIT_BUILD_DIR/build.log" >&2; return 1; }
}
