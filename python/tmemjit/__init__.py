"""tmemjit: a JIT for Blackwell Tensor Memory transfers (tcgen05.ld / tcgen05.st).

Describe how a tile lies in TMEM and in registers, check it against the instruction's native
image, compile the transfer and run it on a Blackwell GPU, in Hopper emulation or in the CPU
simulator. The Python face of libtmemjit (docs/python.md); every call is the C++ library's.

    import tmemjit
    spec = tmemjit.TransferSpec(op="tcgen05.st.sync.aligned.32x32b.x64.b32", scope="warpgroup",
                                tmem=..., regs=...)
    plan = tmemjit.check(spec)
    kernel = tmemjit.compile_transfer(spec)          # kernel.cubin, kernel.ptx, kernel.name
    print(tmemjit.run_transfer(spec, device="sim"))  # ... PASS

Every failure of the library raises tmemjit.Error with .code, .message and .details.
"""

from ._tmemjit import (
    Candidate,
    CheckResult,
    CompileOptions,
    CompileReport,
    Error,
    Kernel,
    KernelBinding,
    Opcode,
    OwnerComparison,
    Plan,
    PreparedKernel,
    RepeatStep,
    RunReport,
    Runtime,
    Selection,
    TransferSpec,
    View,
    __version__,
    cache_dir,
    cache_stats,
    check,
    clear_cache,
    compile_transfer,
    coord_table,
    packed_twin,
    reset_cache_stats,
    run_transfer,
    same_owners,
    select,
    set_cache_dir,
    set_warning_handler,
    warmup,
)
from ._emulate import Emulation, emulate
from ._specialize import (SpecFile, Transfer, compile_kernel, device_function, spec_file,
                          warmup_kernel)
from ._tmemjit import _have_specialize

if _have_specialize:
    from ._specialize import background_compiles, wait_background_compiles

__all__ = [
    "Candidate",
    "CheckResult",
    "CompileOptions",
    "CompileReport",
    "Emulation",
    "Error",
    "Kernel",
    "KernelBinding",
    "Opcode",
    "OwnerComparison",
    "Plan",
    "PreparedKernel",
    "RepeatStep",
    "RunReport",
    "Runtime",
    "Selection",
    "Transfer",
    "TransferSpec",
    "View",
    "__version__",
    "cache_dir",
    "cache_stats",
    "check",
    "clear_cache",
    "compile_kernel",
    "warmup_kernel",
    "spec_file",
    "SpecFile",
    "compile_transfer",
    "coord_table",
    "device_function",
    "emulate",
    "packed_twin",
    "reset_cache_stats",
    "run_transfer",
    "same_owners",
    "select",
    "set_cache_dir",
    "set_warning_handler",
    "warmup",
]
if _have_specialize:
    __all__ += ["background_compiles", "wait_background_compiles"]
