# Sanitizer and fuzzer builds (docs/reliability.md). Options, set at configure time:
#   TMEMJIT_SANITIZE  "address;undefined", "thread", or empty (the default): the sanitizers every
#                     target of this project is compiled and linked with.
#   TMEMJIT_FUZZ      ON builds the libFuzzer targets of tests/fuzz (clang only). It implies
#                     TMEMJIT_SANITIZE=address;undefined unless that is set, and adds coverage
#                     instrumentation (-fsanitize=fuzzer-no-link) to every target, the library too.
# Directory-scoped flags on purpose: they apply to every target of this build and to nothing a user
# builds against the installed package. UB is fatal (-fno-sanitize-recover) so a CTest run fails on it.

set(TMEMJIT_SANITIZE "" CACHE STRING "Sanitizers for every target: address;undefined, thread or empty")
option(TMEMJIT_FUZZ "Build the libFuzzer targets in tests/fuzz (clang only)" OFF)

# FindCUDAToolkit's targets can carry the libcuda stub (CUDA::nvrtc does); Debian's gcc
# links with --as-needed and drops it, clang does not, and a NEEDED libcuda.so.1 would keep a
# program from starting where no driver is installed (libtmemjit dlopens the driver lazily,
# docs/design.md §Codegen).
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  add_link_options(LINKER:--as-needed)
endif()

if(TMEMJIT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TMEMJIT_FUZZ needs clang (libFuzzer); configure with "
                        "-DCMAKE_CXX_COMPILER=clang++ (Debian: clang, libclang-rt-dev)")
  endif()
  if(NOT TMEMJIT_SANITIZE)
    set(TMEMJIT_SANITIZE "address;undefined" CACHE STRING
        "Sanitizers for every target: address;undefined, thread or empty" FORCE)
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(TMEMJIT_SANITIZE)
  set(_tmemjit_known address undefined thread leak)
  foreach(_tmemjit_sanitizer IN LISTS TMEMJIT_SANITIZE)
    if(NOT _tmemjit_sanitizer IN_LIST _tmemjit_known)
      message(FATAL_ERROR "TMEMJIT_SANITIZE: unknown sanitizer '${_tmemjit_sanitizer}' "
                          "(allowed: ${_tmemjit_known})")
    endif()
  endforeach()
  if("thread" IN_LIST TMEMJIT_SANITIZE AND "address" IN_LIST TMEMJIT_SANITIZE)
    message(FATAL_ERROR "TMEMJIT_SANITIZE: thread and address cannot be combined; use two builds")
  endif()
  list(JOIN TMEMJIT_SANITIZE "," _tmemjit_sanitize_flags)
  add_compile_options(-fsanitize=${_tmemjit_sanitize_flags} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_tmemjit_sanitize_flags})
  message(STATUS "tmemjit: every target is built with -fsanitize=${_tmemjit_sanitize_flags}")
endif()
