"""tmemjit.emulate: a Blackwell kernel lowered to run on Hopper (docs/emulation.md §Blackwell kernels
on Hopper)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from . import _tmemjit
from ._tmemjit import Kernel


@dataclasses.dataclass(frozen=True)
class Emulation:
    """What tmemjit.emulate made: the kernel to launch (Kernel.launch binds the emulated TMEM;
    Kernel.emulation_check() reports a guardrail violation) and what the lowering did."""

    kernel: Kernel
    ptx: str            # the lowered sm_90 module, the emulation functions spliced in
    lowered: dict       # statements rewritten per family: {"tcgen05.mma": 4, ...}
    changed: bool       # False: nothing sm_90 lacks; the module was only retargeted
    registers: int      # of the entry, from the sm_90 cubin
    local_bytes: int
    lower_ms: float
    library_ms: float   # NVRTC's compile of the emulation functions (0 when reused)
    ptx_compile_ms: float
    warnings: list


def emulate(source: str, entry: str = "", *, language: str = "cuda", path: str = "",
            target: str = "sm_100a", backend: str = "auto", opt_level: int = 3,
            nvrtc_options: Iterable[str] = (), ptx_options: Iterable[str] = (),
            strict: bool = False, standalone_ctas: int = 0) -> Emulation:
    """Lowers a kernel written for a tcgen05 target so that it runs on Hopper (sm_90).

    `source` is CUDA C++ (language "cuda": compiled by NVRTC for `target` first, with
    `nvrtc_options` such as "-I/path/to/cute") or PTX (language "ptx": a module for a tcgen05
    target). Every statement sm_90 lacks -- tcgen05.alloc/ld/st/mma/commit/cp/shift, fences,
    waits, cluster launch control, packed f32x2 arithmetic -- becomes emulation code with TMEM in
    global memory. `entry` names the kernel (empty: the module's only one). Raises Error "usage"
    naming a statement the emulation does not know, with its line. `strict` turns on strict
    mode: an access to TMEM columns an MMA writes before its tcgen05.commit completes it is an
    error from kernel.emulation_check(), and fresh allocations read as all ones.
    `standalone_ctas` > 0 makes a standalone module (docs/emulation.md "Standalone modules"):
    its cubin (kernel.cubin) holds the emulated state of that many CTAs, so any host can load
    and launch it without the library; grids of up to that many CTAs, one launch at a time.
    """
    for name, value in (("source", source), ("entry", entry), ("language", language),
                        ("path", path), ("target", target), ("backend", backend)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    if not isinstance(opt_level, int) or isinstance(opt_level, bool):
        raise TypeError(f"opt_level must be an int, not {type(opt_level).__name__}")
    if not isinstance(strict, bool):
        raise TypeError(f"strict must be a bool, not {type(strict).__name__}")
    if not isinstance(standalone_ctas, int) or isinstance(standalone_ctas, bool):
        raise TypeError(f"standalone_ctas must be an int, not {type(standalone_ctas).__name__}")
    if not 0 <= standalone_ctas < 2**32:
        raise ValueError(f"standalone_ctas {standalone_ctas} is not a CTA count (0: the host binds)")
    if language not in ("cuda", "ptx"):
        raise ValueError(f"language {language!r} is not one of 'cuda', 'ptx'")
    options = {}
    for name, given in (("nvrtc_options", nvrtc_options), ("ptx_options", ptx_options)):
        if isinstance(given, str) or not isinstance(given, Iterable):
            raise TypeError(f"{name} must be a sequence of str, not {type(given).__name__}")
        options[name] = list(given)
        for index, item in enumerate(options[name]):
            if not isinstance(item, str):
                raise TypeError(f"{name}[{index}] must be a str, not {type(item).__name__}")
    kernel, info = _tmemjit._emulate(source, language, entry, path, target, backend, opt_level,
                                     options["nvrtc_options"], options["ptx_options"], strict,
                                     standalone_ctas)
    return Emulation(kernel=kernel, ptx=info["ptx"], lowered=dict(info["lowered"]),
                     changed=info["changed"], registers=info["registers"],
                     local_bytes=info["local_bytes"], lower_ms=info["lower_ms"],
                     library_ms=info["library_ms"], ptx_compile_ms=info["ptx_compile_ms"],
                     warnings=list(info["warnings"]))
