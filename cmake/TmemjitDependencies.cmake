# Third-party dependencies, all from Debian packages or the CUDA toolkit; nothing is downloaded.

# xxHash (libxxhash-dev): used header-only (XXH_INLINE_ALL) so no shared library is needed at run time.
find_path(TMEMJIT_XXHASH_INCLUDE_DIR xxhash.h HINTS ${TMEMJIT_XXHASH_ROOT} PATH_SUFFIXES include REQUIRED)
add_library(tmemjit_xxhash INTERFACE)
target_include_directories(tmemjit_xxhash SYSTEM INTERFACE ${TMEMJIT_XXHASH_INCLUDE_DIR})

find_package(nlohmann_json 3.10 REQUIRED)
find_package(Threads REQUIRED)

# nvJitLink: CMake < 3.26 has no CUDA::nvJitLink target.
if(NOT TARGET CUDA::nvJitLink)
  find_library(TMEMJIT_NVJITLINK_LIBRARY nvJitLink HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
  add_library(CUDA::nvJitLink SHARED IMPORTED)
  set_target_properties(CUDA::nvJitLink PROPERTIES IMPORTED_LOCATION ${TMEMJIT_NVJITLINK_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES "${CUDAToolkit_INCLUDE_DIRS}")
endif()

# nvPTXCompiler, optional: the in-process whole-program PTX compiler (tmemjit::nvptxcompiler).
include(TmemjitNvPtxCompiler)

if(TMEMJIT_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(TMEMJIT_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
