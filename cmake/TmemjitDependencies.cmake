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

# The remote cache tier (docs/cache.md): hiredis (libhiredis-dev) as tmemjit::hiredis, and entry
# signing: OpenSSL's libcrypto (libssl-dev) as OpenSSL::Crypto. AUTO (the default) builds each
# where it is found; without hiredis, TMEMJIT_REMOTE_CACHE warns that the build has no remote tier,
# and without libcrypto a configured secret keeps every shared store off.
set(TMEMJIT_WITH_HIREDIS AUTO CACHE STRING "The Redis remote cache tier (hiredis): ON, OFF or AUTO")
set(TMEMJIT_WITH_OPENSSL AUTO CACHE STRING "Entry signing (OpenSSL libcrypto): ON, OFF or AUTO")
if(NOT TMEMJIT_WITH_HIREDIS STREQUAL "OFF")
  find_path(TMEMJIT_HIREDIS_INCLUDE_DIR hiredis/hiredis.h)
  find_library(TMEMJIT_HIREDIS_LIBRARY hiredis)
  if(TMEMJIT_HIREDIS_INCLUDE_DIR AND TMEMJIT_HIREDIS_LIBRARY)
    add_library(tmemjit::hiredis UNKNOWN IMPORTED)
    set_target_properties(tmemjit::hiredis PROPERTIES IMPORTED_LOCATION ${TMEMJIT_HIREDIS_LIBRARY}
      INTERFACE_INCLUDE_DIRECTORIES ${TMEMJIT_HIREDIS_INCLUDE_DIR})
  elseif(TMEMJIT_WITH_HIREDIS STREQUAL "ON")
    message(FATAL_ERROR "tmemjit: TMEMJIT_WITH_HIREDIS=ON but hiredis was not found (libhiredis-dev)")
  endif()
endif()
if(NOT TMEMJIT_WITH_OPENSSL STREQUAL "OFF")
  find_package(OpenSSL COMPONENTS Crypto)
  if(NOT TARGET OpenSSL::Crypto AND TMEMJIT_WITH_OPENSSL STREQUAL "ON")
    message(FATAL_ERROR "tmemjit: TMEMJIT_WITH_OPENSSL=ON but libcrypto was not found (libssl-dev)")
  endif()
endif()
if(TARGET tmemjit::hiredis)
  message(STATUS "tmemjit: remote cache tier with hiredis ${TMEMJIT_HIREDIS_LIBRARY}")
else()
  message(STATUS "tmemjit: no remote cache tier (hiredis not found or TMEMJIT_WITH_HIREDIS=OFF)")
endif()
if(NOT TARGET OpenSSL::Crypto)
  message(STATUS "tmemjit: no entry signing (libcrypto not found or TMEMJIT_WITH_OPENSSL=OFF)")
endif()

if(TMEMJIT_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(TMEMJIT_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
