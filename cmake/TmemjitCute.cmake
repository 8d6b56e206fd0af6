# Finds CUTLASS's headers for the CuTe agreement tests (tests/cute) and the CuTe benchmark rows
# (bench/cute_bench.cc): TMEMJIT_CUTLASS_DIR (a directory holding cute/, or include/cute/), else
# the nvidia-cutlass wheel that scripts/common.sh installs (cutlass_library/source/include).
# Sets TMEMJIT_CUTE_INCLUDE_DIR (NOTFOUND without them; nothing is downloaded) and
# TMEMJIT_CUTE_CUDA_INCLUDES: the toolkit's include directories plus include/cccl, where CUDA 13
# keeps the libcu++ (cuda/std) headers CuTe needs on the host and under NVRTC.
set(TMEMJIT_CUTLASS_DIR "$ENV{TMEMJIT_CUTLASS_DIR}" CACHE PATH
    "CUTLASS headers for the CuTe agreement tests and benchmark (default: the nvidia-cutlass wheel)")

# A changed TMEMJIT_CUTLASS_DIR searches again (find_path keeps what it found in the cache); when
# it is set, it is the only place searched, so it overrides the wheel.
if(NOT "${TMEMJIT_CUTLASS_DIR}" STREQUAL "${_TMEMJIT_CUTE_SEARCHED_FOR}")
  unset(TMEMJIT_CUTE_INCLUDE_DIR CACHE)
  set(_TMEMJIT_CUTE_SEARCHED_FOR "${TMEMJIT_CUTLASS_DIR}" CACHE INTERNAL "")
endif()
set(_cute_hints)
if(TMEMJIT_CUTLASS_DIR)
  list(APPEND _cute_hints ${TMEMJIT_CUTLASS_DIR}/include ${TMEMJIT_CUTLASS_DIR})
else()
  find_package(Python3 COMPONENTS Interpreter QUIET)
endif()
if(NOT TMEMJIT_CUTLASS_DIR AND Python3_Interpreter_FOUND)
  # find_spec locates the wheel without importing it.
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c
            "import importlib.util, os; s = importlib.util.find_spec('cutlass_library'); print(os.path.join(os.path.dirname(s.origin), 'source', 'include') if s else '')"
    OUTPUT_VARIABLE _cute_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_cute_wheel)
    list(APPEND _cute_hints ${_cute_wheel})
  endif()
endif()
find_path(TMEMJIT_CUTE_INCLUDE_DIR cute/atom/copy_traits_sm100.hpp HINTS ${_cute_hints}
          NO_DEFAULT_PATH)

set(TMEMJIT_CUTE_CUDA_INCLUDES ${CUDAToolkit_INCLUDE_DIRS})
foreach(_dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
  if(EXISTS ${_dir}/cccl)
    list(APPEND TMEMJIT_CUTE_CUDA_INCLUDES ${_dir}/cccl)
  endif()
endforeach()
