#!/usr/bin/env python3
"""The include rules of docs/architecture.md, checked over the source tree.

* runtime/<stage>/ and kernels/ include only their own stage, the stages below it, and tmem/;
* include/tmem/ includes only tmem/ and standard headers (no CUDA or third-party header);
* tools/ and python/ include only tmem/ (and their own files): the CLI and the bindings are
  clients of the public API.

Usage: check_layering.py ROOT         exit 1 and one line per violation when any
       check_layering.py --self-test  shows that each kind of wrong include is caught
"""
import pathlib
import re
import sys
import tempfile

# Bottom to top; a stage may include itself and anything earlier in this list.
STAGES = ["support", "isa", "descriptor", "check", "ptx", "kernels", "cuda", "compile", "cache",
          "sim", "jit", "exec"]
SOURCE_SUFFIXES = {".h", ".cc", ".cuh", ".cu"}
QUOTED = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ANGLED = re.compile(r'^\s*#\s*include\s+<([^>]+)>', re.M)
# Headers a public header must not pull into a user's build.
FORBIDDEN_IN_PUBLIC = re.compile(r"^(cuda|cudaTypedefs|cuda_runtime.*|nvrtc|nvJitLink|nvPTXCompiler"
                                 r"|xxhash|nlohmann/.*)(\.h|\.hpp)?$")


def stage_of(path: pathlib.Path, root: pathlib.Path):
    parts = path.relative_to(root).parts
    if parts[0] == "kernels":
        return "kernels"
    if parts[0] == "runtime" and len(parts) > 2:
        return parts[1]
    return None


def included_stage(include: str):
    parts = include.split("/")
    if parts[0] == "kernels":
        return "kernels"
    if parts[0] == "runtime" and len(parts) > 2:
        return parts[1]
    return None


def violations(root: pathlib.Path):
    found = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
            continue
        rel = path.relative_to(root)
        top = rel.parts[0]
        if top not in ("runtime", "kernels", "include", "tools", "python"):
            continue
        text = path.read_text(errors="replace")
        quoted = QUOTED.findall(text)
        where = f"{rel}"
        if top in ("runtime", "kernels"):
            own = stage_of(path, root)
            if own not in STAGES:
                found.append(f"{where}: not in a stage folder of {', '.join(STAGES)}")
                continue
            for include in quoted:
                if include.startswith("tmem/"):
                    continue
                target = included_stage(include)
                if target not in STAGES:
                    found.append(f'{where}: includes "{include}", which is not a stage header')
                elif STAGES.index(target) > STAGES.index(own):
                    found.append(f'{where}: stage {own} includes "{include}" of stage {target}, '
                                 f"which is above it")
        elif top == "include":
            for include in quoted:
                if not include.startswith("tmem/"):
                    found.append(f'{where}: public header includes "{include}"')
            for include in ANGLED.findall(text):
                if FORBIDDEN_IN_PUBLIC.match(include):
                    found.append(f"{where}: public header includes <{include}>")
        else:  # tools/, python/: clients of the public API
            for include in quoted:
                beside = "/" not in include and (path.parent / include).is_file()
                if not (include.startswith("tmem/") or include.startswith(f"{top}/") or beside):
                    found.append(f'{where}: {top}/ includes "{include}"; it may use tmem/ only')
    return found


def self_test():
    """Each rule catches a wrong include planted in a scratch tree, and a clean tree passes."""
    cases = {
        "runtime/check/a.cc": '#include "runtime/exec/executor.h"\n',  # upward
        "kernels/b.cc": '#include "runtime/jit/kernel_impl.h"\n',  # upward from kernels
        "include/tmem/c.h": "#include <cuda.h>\n",  # CUDA header in a public header
        "tools/d.cc": '#include "runtime/compile/backends.h"\n',  # CLI reaching inside
        "runtime/e.cc": '#include "tmem/result.h"\n',  # outside any stage
    }
    clean = {"runtime/exec/ok.cc": '#include "runtime/check/owner.h"\n#include "kernels/x.h"\n',
             "tools/ok.cc": '#include "tmem/check.h"\n#include "tools/cli.h"\n',
             "python/src/ok.cc": '#include "tmem/jit.h"\n#include "ok.h"\n', "python/src/ok.h": ""}
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        for name, text in clean.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        if violations(root):
            failures.append(f"a clean tree reported: {violations(root)}")
        for name, text in cases.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            hits = [v for v in violations(root) if v.startswith(name)]
            if not hits:
                failures.append(f"{name} with {text.strip()} was not caught")
            else:
                print(f"caught: {hits[0]}")
            path.unlink()
    for failure in failures:
        print(f"error: {failure}")
    return 1 if failures else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = violations(pathlib.Path(argv[1]))
    for line in found:
        print(f"error: {line}")
    if not found:
        print("layering ok")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
