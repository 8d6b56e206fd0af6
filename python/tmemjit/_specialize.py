"""device_function and compile_kernel: a transfer inside the user's own kernel (docs/design.md §Specialization)."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping
from typing import Union

from . import _tmemjit
from ._tmemjit import CompileOptions, Kernel, TransferSpec

__all__ = ["SpecFile", "Transfer", "compile_kernel", "device_function", "spec_file",
           "warmup_kernel"]


@dataclasses.dataclass(frozen=True)
class Transfer:
    """A transfer of compile_kernel with its device-function options.

    wait=False: the kernel calls NAME_wait() itself (to overlap a load with other work);
    warp_argument: the kernel passes the warp's index in the scope (warp-specialized kernels);
    column_argument: the kernel passes a column offset added to every TMEM address.
    """

    spec: TransferSpec
    wait: bool = True
    warp_argument: bool = False
    column_argument: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.spec, TransferSpec):
            raise TypeError(f"Transfer.spec must be a TransferSpec, not {type(self.spec).__name__}")


@dataclasses.dataclass(frozen=True)
class SpecFile:
    """A spec file read with its device-function options (tmemjit.spec_file)."""

    name: Union[str, None]  # the "name" the file gives, or None
    transfer: Transfer      # the spec with the file's wait / warp_argument / column_argument
    cta_group: int          # the file's "cta_group", or 1
    keys: tuple             # the option keys the file names, in the order of the format


def spec_file(text: str) -> SpecFile:
    """Reads one spec file: the TransferSpec JSON (op, scope, tmem, regs[, tmem2, imm]) that may
    also carry the device function's options, "name", "wait", "warp_argument",
    "column_argument" and "cta_group" (docs/specialization.md), as `tmemjit specialize
    --transfer N=SPEC.json` reads it. Raises Error "parse" naming an unknown key and the allowed
    set. compile_kernel(source, entry, {f.name: f.transfer}, cta_group=f.cta_group) uses it.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    if not _tmemjit._have_specialize:
        raise _unavailable("spec_file")
    spec, name, wait, warp_argument, column_argument, cta_group, keys = \
        _tmemjit._parse_spec_file(text)
    return SpecFile(name, Transfer(spec, wait, warp_argument, column_argument), cta_group,
                    tuple(keys))


def _usage_error(message: str) -> _tmemjit.Error:
    error = _tmemjit.Error(message)
    error.code, error.message, error.details = "usage", message, ""
    return error


def _with_option_keywords(function):
    """Shows `function`'s **keywords as the CompileOptions fields they stand for, with their
    defaults (help(), inspect.signature): the fields are listed once, in CompileOptions."""
    signature = inspect.signature(function)
    parameters = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    parameters += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=value)
                   for name, value in CompileOptions().to_dict().items()]
    function.__signature__ = signature.replace(parameters=parameters)
    return function


def _unavailable(name: str) -> _tmemjit.Error:
    message = (f"{name} needs kernel specialization (include/tmem/specialize.h), which this build "
               f"of libtmemjit does not have")
    return _usage_error(message)


if _tmemjit._have_specialize:
    device_function = _tmemjit.device_function
    DeviceFunction = _tmemjit.DeviceFunction
    background_compiles = _tmemjit.background_compiles
    wait_background_compiles = _tmemjit.wait_background_compiles
    __all__ += ["DeviceFunction", "background_compiles", "wait_background_compiles"]
else:

    def device_function(spec: TransferSpec, *, name: str = "tmem_transfer", language: str = "cuda",
                        wait: bool = True, warp_argument: bool = False,
                        column_argument: bool = False, cta_group: int = 1):
        """The transfer as a device function to paste into a kernel (docs/design.md §Specialization).

        Raises Error (code "usage"): this build of libtmemjit has no kernel specialization.
        """
        if not isinstance(spec, TransferSpec):
            raise TypeError(f"spec must be a TransferSpec, not {type(spec).__name__}")
        raise _unavailable("device_function")


@_with_option_keywords
def compile_kernel(source: str, entry: str,
                   transfers: Mapping[str, Union[TransferSpec, Transfer]], *,
                   language: str = "cuda", path: str = "",
                   options: Union[CompileOptions, None] = None, **keywords) -> Kernel:
    """Compiles the user's kernel `source` (CUDA C++ or PTX) with its transfers (docs/design.md §Specialization).

    `transfers` maps each device function's name to its TransferSpec, or to a Transfer with
    options. A CUDA source includes <tmemjit/transfers.cuh>, generated for these transfers; a PTX
    source calls them as .func. The compile options come as `options`, a CompileOptions, or as its
    fields given as keywords (target=, opt_level=, nvrtc_options=, ...), not both at once: a
    TypeError says so (options.replace(field=...) changes one field of a value). target "sm_90"
    builds the emulated form for a Hopper GPU. The result is cached in memory and on disk like
    compile_transfer. cta_group=2 gives the lifecycle
    helpers of a CTA pair (launch the kernel as clusters of 2 CTAs). `path` is the file name the
    compiler's messages give the source (default "kernel.cu" or "kernel.ptx"). `nvrtc_options`
    go to NVRTC (e.g. "-std=c++20", "-default-device", "-I/path"), `ptx_options` to the PTX
    compiler (e.g. "-maxrregcount=64"); both are checked before the compile. The returned
    Kernel's `report` says where it came from (a cache tier or this call's compile, with the
    front end's reuse and times), its warnings and each transfer's plan. `specialization`
    picks the tier (docs/specialization.md §Tiers): "eager" (the specialized kernel), "lazy"
    (the generic tier at once when a cache has it, the specialized kernel taking over when its
    background compile lands) or "generic"; Kernel.tier says which one launches run,
    Kernel.wait_specialized() waits for the switch, and report.tier_reason says why a tier
    asked for was not returned. `precompile` names headers, as #include <...> takes them (e.g.
    "cute/tensor.hpp"), that are included first and parsed once for every layout: those a
    header-only library includes after the transfers (report.headers says "reused" for a new
    layout; docs/specialization.md, "Header-only libraries"); a name with <>, quotes or nothing
    in it, or a header that includes <tmemjit/transfers.cuh>, is Error "usage". `front_end`
    "nvcc" compiles a CUDA source with the toolkit's nvcc instead of NVRTC, `nvrtc_options` being
    nvcc's options then (docs/specialization.md, "nvcc as the front end"). Raises Error: a
    transfer's rule error, "usage" for a wrong option, or "toolchain" with the compiler log.
    """
    if _tmemjit._have_specialize:
        # The same objects and equal options as an earlier call: its checks and conversions stand
        # (call_memo.h).
        kernel = _tmemjit._compile_kernel_again(source, entry, transfers, language, path,
                                                options, keywords)
        if kernel is not None:
            return kernel
    if not isinstance(source, str):
        raise TypeError(f"source must be a str, not {type(source).__name__}")
    if not isinstance(entry, str):
        raise TypeError(f"entry must be a str, not {type(entry).__name__}")
    if not isinstance(transfers, Mapping):
        raise TypeError(f"transfers must be a mapping of names to TransferSpec or Transfer, "
                        f"not {type(transfers).__name__}")
    for name, value in (("language", language), ("path", path)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    options = _tmemjit._call_options(options, keywords, "compile_kernel")
    rows = []
    for name, value in transfers.items():
        if not isinstance(name, str):
            raise TypeError(f"transfer names must be str, not {type(name).__name__}")
        if isinstance(value, TransferSpec):
            value = Transfer(value)
        elif not isinstance(value, Transfer):
            raise TypeError(f"transfer {name!r} must be a TransferSpec or a Transfer, "
                            f"not {type(value).__name__}")
        rows.append((name, value.spec, value.wait, value.warp_argument, value.column_argument))
    if not _tmemjit._have_specialize:
        raise _unavailable("compile_kernel")
    return _tmemjit._compile_kernel(source, entry, rows, language, path, options,
                                    (source, entry, transfers, language, path))


@_with_option_keywords
def warmup_kernel(source: str, entry: str,
                  transfers: Mapping[str, Union[TransferSpec, Transfer]], *,
                  language: str = "cuda", path: str = "",
                  options: Union[CompileOptions, None] = None, **keywords) -> None:
    """Builds the generic tier of the kernel for these transfers ahead of time (docs/specialization.md §Tiers).

    The same arguments as compile_kernel, options= or keywords, precompile= included (its
    `specialization` is set to "generic"). The tier goes
    to the cache tiers (memory, disk, the remote tier; cache bundles carry it), so that
    compile_kernel(..., specialization="lazy") answers a new layout of the same registers per
    thread at once, here or in another process. Raises Error "usage" naming the transfer when its
    plan cannot be data (no generic tier exists for it), or what compile_kernel raises.
    """
    options = _tmemjit._call_options(options, keywords, "warmup_kernel")
    kernel = compile_kernel(source, entry, transfers, language=language, path=path,
                            options=options.replace(specialization="generic"))
    if kernel.tier != "generic":
        message = "warmup_kernel: no generic tier for this kernel: " + kernel.report.tier_reason
        error = _tmemjit.Error(message)
        error.code, error.message, error.details = "usage", message, ""
        raise error
