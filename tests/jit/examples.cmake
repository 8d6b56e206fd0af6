# The examples softmax (FA4-style: P packed bf16 over S) and warp_specialized (DeepGEMM-style:
# epilogue warps 4-7, a swizzled shared-memory tile), built against the library of this build and
# run as their users run them, in C++ and in Python. Each has two tests:
#   example_NAME_sm100a (label cache): every layout compiled for sm_100a, the SASS checked (the
#     plan's LDTM/STTM, no local memory) and the misfit layout refused by the kernel's static_assert;
#     no GPU needed;
#   example_NAME (label emu): the same, then each layout run on a GPU (the sm_90 emulation on
#     Hopper, tcgen05 on Blackwell) with its data checked against a host reference; skipped with the
#     reason where nothing can run it.
# tests/install_test.sh builds the C++ examples against the installed package too.
set(_examples_cache "${CMAKE_CURRENT_BINARY_DIR}/examples_cache")
foreach(_example softmax warp_specialized)
  string(TOUPPER ${_example} _dir_macro)
  add_executable(example_${_example} ${PROJECT_SOURCE_DIR}/examples/${_example}/main.cc)
  target_compile_features(example_${_example} PRIVATE cxx_std_20)
  target_compile_definitions(example_${_example} PRIVATE
                             ${_dir_macro}_DIR="${PROJECT_SOURCE_DIR}/examples/${_example}")
  target_link_libraries(example_${_example} PRIVATE tmemjit tmemjit_warnings CUDA::cudart_static)
  add_test(NAME example_${_example}_sm100a COMMAND example_${_example} --compile-only)
  add_test(NAME example_${_example} COMMAND example_${_example})
  set_tests_properties(example_${_example}_sm100a PROPERTIES LABELS cache
                       ENVIRONMENT "TMEMJIT_CACHE_DIR=${_examples_cache}")
  set_tests_properties(example_${_example} PROPERTIES LABELS emu SKIP_REGULAR_EXPRESSION
                       "SKIP runs: " ENVIRONMENT "TMEMJIT_CACHE_DIR=${_examples_cache}")
endforeach()

# The GEMM-style epilogue: every layout on the specialized kernel (eager), and with lazy every
# layout first on the generic tier, launched at once and checked, then on the specialized kernel
# once it takes over (docs/specialization.md §Tiers). Without a GPU both compile and skip the runs.
add_executable(example_epilogue ${PROJECT_SOURCE_DIR}/examples/epilogue/main.cc)
target_compile_features(example_epilogue PRIVATE cxx_std_20)
target_compile_definitions(example_epilogue PRIVATE
                           EPILOGUE_DIR="${PROJECT_SOURCE_DIR}/examples/epilogue")
target_link_libraries(example_epilogue PRIVATE tmemjit tmemjit_warnings CUDA::cudart_static)
add_test(NAME example_epilogue COMMAND example_epilogue)
add_test(NAME example_epilogue_lazy COMMAND example_epilogue --specialization lazy)
set_tests_properties(example_epilogue example_epilogue_lazy PROPERTIES LABELS emu
                     SKIP_REGULAR_EXPRESSION "SKIP runs: "
                     ENVIRONMENT "TMEMJIT_CACHE_DIR=${_examples_cache}")

# The Python versions, against the package of this build (python/): skipped with the reason where
# it is not built or numpy is missing; their runs need CuPy besides a GPU.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  foreach(_script softmax/softmax.py warp_specialized/ws.py)
    get_filename_component(_example ${_script} DIRECTORY)
    set(_run "\"$0\" -c 'import numpy, tmemjit' 2>/dev/null || { echo 'skipped: the tmemjit \
package of this build (python/) or numpy cannot be imported'; exit 77; }; exec \"$0\" \"$1\" $2")
    add_test(NAME python_example_${_example}_sm100a
             COMMAND sh -c "${_run}" ${Python3_EXECUTABLE}
                     ${PROJECT_SOURCE_DIR}/examples/${_script} --compile-only)
    add_test(NAME python_example_${_example}
             COMMAND sh -c "${_run}" ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/examples/${_script})
    set(_environment "PYTHONPATH=${PROJECT_BINARY_DIR}/python" "PYTHONDONTWRITEBYTECODE=1"
                     "TMEMJIT_CACHE_DIR=${_examples_cache}")
    set_tests_properties(python_example_${_example}_sm100a PROPERTIES LABELS "cache;python"
                         SKIP_RETURN_CODE 77 ENVIRONMENT "${_environment}")
    set_tests_properties(python_example_${_example} PROPERTIES LABELS "emu;python"
                         SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "SKIP runs: "
                         ENVIRONMENT "${_environment}")
  endforeach()

  # Launching with a launcher of one's own (docs/specialization.md, "Launching with your own
  # launcher"): the lazy epilogue, generic tier then specialized kernel, launched after
  # Kernel.prepare() by cuda.core's launch and by cuLaunchKernel on PyTorch tensors. Their runs
  # (label emu) need a GPU and cuda.core or PyTorch, and skip with the reason without; the
  # cuda.core one compile-only (label cache) checks Kernel.binding() of both tiers.
  set(_launch_anywhere ${PROJECT_SOURCE_DIR}/examples/launch_anywhere)
  add_test(NAME python_example_launch_cuda_core_sm100a
           COMMAND sh -c "${_run}" ${Python3_EXECUTABLE} ${_launch_anywhere}/cuda_core_launch.py
                   --compile-only)
  add_test(NAME python_example_launch_cuda_core
           COMMAND sh -c "${_run}" ${Python3_EXECUTABLE} ${_launch_anywhere}/cuda_core_launch.py)
  add_test(NAME python_example_launch_torch
           COMMAND sh -c "${_run}" ${Python3_EXECUTABLE} ${_launch_anywhere}/torch_launch.py)
  set_tests_properties(python_example_launch_cuda_core_sm100a PROPERTIES LABELS "cache;python"
                       SKIP_RETURN_CODE 77 ENVIRONMENT "${_environment}")
  set_tests_properties(python_example_launch_cuda_core python_example_launch_torch PROPERTIES
                       LABELS "emu;python" SKIP_RETURN_CODE 77
                       SKIP_REGULAR_EXPRESSION "SKIP runs: " ENVIRONMENT "${_environment}")
endif()
