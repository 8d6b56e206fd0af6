# nvPTXCompiler (nvPTXCompiler.h + libnvptxcompiler_static.a), the toolkit's in-process ptxas, for
# the whole-program `nvptxcompiler` backend (docs/compile-backends.md). Optional: without it the
# `auto` backend resolves to nvJitLink. Searched, first hit wins:
#   1. TMEMJIT_NVPTXCOMPILER_ROOT (ROOT/include, ROOT/lib or ROOT/lib64), when set: an explicit
#      choice beats what is found by itself;
#   2. the CUDA toolkit (CUDAToolkit_INCLUDE_DIRS, CUDAToolkit_LIBRARY_DIR);
#   3. the nvidia-nvptxcompiler wheel of python3 (site-packages/nvidia/cu<major>/{include,lib}),
#      which scripts/common.sh installs where the toolkit lacks the archive.
# Nothing is downloaded here. Result: the IMPORTED target tmemjit::nvptxcompiler, or none.

option(TMEMJIT_WITH_NVPTXCOMPILER "Build the in-process nvPTXCompiler backend when it is found" ON)
set(TMEMJIT_NVPTXCOMPILER_ROOT "" CACHE PATH
    "Directory with include/nvPTXCompiler.h and lib/libnvptxcompiler_static.a")

# Sets TMEMJIT_NVPTXCOMPILER_INCLUDE_DIR / _LIBRARY when `include_dirs` hold the header and
# `lib_dirs` the archive. if(EXISTS) instead of find_path/find_library: nothing sticks in the
# cache, so a wheel installed after the first configure is picked up by the next one.
function(_tmemjit_try_nvptxcompiler include_dirs lib_dirs)
  foreach(inc IN LISTS include_dirs)
    if(NOT EXISTS "${inc}/nvPTXCompiler.h")
      continue()
    endif()
    foreach(lib IN LISTS lib_dirs)
      if(EXISTS "${lib}/libnvptxcompiler_static.a")
        set(TMEMJIT_NVPTXCOMPILER_INCLUDE_DIR "${inc}" PARENT_SCOPE)
        set(TMEMJIT_NVPTXCOMPILER_LIBRARY "${lib}/libnvptxcompiler_static.a" PARENT_SCOPE)
        return()
      endif()
    endforeach()
  endforeach()
endfunction()

set(TMEMJIT_NVPTXCOMPILER_INCLUDE_DIR "")
set(TMEMJIT_NVPTXCOMPILER_LIBRARY "")
set(_tmemjit_nvptxcompiler_source "")
if(TMEMJIT_WITH_NVPTXCOMPILER)
  if(TMEMJIT_NVPTXCOMPILER_ROOT)
    _tmemjit_try_nvptxcompiler("${TMEMJIT_NVPTXCOMPILER_ROOT}/include"
      "${TMEMJIT_NVPTXCOMPILER_ROOT}/lib;${TMEMJIT_NVPTXCOMPILER_ROOT}/lib64")
    set(_tmemjit_nvptxcompiler_source "TMEMJIT_NVPTXCOMPILER_ROOT")
    if(NOT TMEMJIT_NVPTXCOMPILER_LIBRARY)
      message(WARNING "TMEMJIT_NVPTXCOMPILER_ROOT=${TMEMJIT_NVPTXCOMPILER_ROOT} holds no "
                      "include/nvPTXCompiler.h with lib/libnvptxcompiler_static.a; searching on")
    endif()
  endif()
  if(NOT TMEMJIT_NVPTXCOMPILER_LIBRARY)
    _tmemjit_try_nvptxcompiler("${CUDAToolkit_INCLUDE_DIRS}" "${CUDAToolkit_LIBRARY_DIR}")
    set(_tmemjit_nvptxcompiler_source "the CUDA toolkit")
  endif()
  if(NOT TMEMJIT_NVPTXCOMPILER_LIBRARY)
    # The python3 on PATH: the one scripts/common.sh installs the wheel with.
    find_program(TMEMJIT_PYTHON3 python3)
    if(TMEMJIT_PYTHON3)
      # nvidia is a namespace package; each of its paths may hold cu<major>/.
      execute_process(
        COMMAND "${TMEMJIT_PYTHON3}" -c
                "import nvidia; print(';'.join(nvidia.__path__))"
        OUTPUT_VARIABLE _tmemjit_nvidia_paths OUTPUT_STRIP_TRAILING_WHITESPACE
        ERROR_QUIET RESULT_VARIABLE _tmemjit_python_result)
      if(_tmemjit_python_result EQUAL 0)
        set(_tmemjit_wheel_inc "")
        set(_tmemjit_wheel_lib "")
        foreach(path IN LISTS _tmemjit_nvidia_paths)
          list(APPEND _tmemjit_wheel_inc "${path}/cu${CUDAToolkit_VERSION_MAJOR}/include")
          list(APPEND _tmemjit_wheel_lib "${path}/cu${CUDAToolkit_VERSION_MAJOR}/lib")
        endforeach()
        _tmemjit_try_nvptxcompiler("${_tmemjit_wheel_inc}" "${_tmemjit_wheel_lib}")
        set(_tmemjit_nvptxcompiler_source "the nvidia-nvptxcompiler wheel")
      endif()
    endif()
  endif()
endif()

if(TMEMJIT_NVPTXCOMPILER_LIBRARY)
  add_library(tmemjit::nvptxcompiler STATIC IMPORTED)
  # The archive is ptxas as a library: it needs threads, dlopen, libm and clock_gettime (rt).
  set_target_properties(tmemjit::nvptxcompiler PROPERTIES
    IMPORTED_LOCATION "${TMEMJIT_NVPTXCOMPILER_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${TMEMJIT_NVPTXCOMPILER_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS};m;rt")
  message(STATUS "tmemjit: nvPTXCompiler from ${_tmemjit_nvptxcompiler_source}: "
                 "${TMEMJIT_NVPTXCOMPILER_LIBRARY}")
elseif(NOT TMEMJIT_WITH_NVPTXCOMPILER)
  message(STATUS "tmemjit: nvPTXCompiler disabled (TMEMJIT_WITH_NVPTXCOMPILER=OFF); "
                 "the auto backend uses nvJitLink")
else()
  message(STATUS "tmemjit: nvPTXCompiler not found (TMEMJIT_NVPTXCOMPILER_ROOT, the CUDA toolkit, "
                 "the nvidia-nvptxcompiler wheel); the auto backend uses nvJitLink")
endif()
