#!/usr/bin/env python3
"""The include rules of docs/architecture.md, checked over the source tree.

* runtime/<stage>/ and kernels/ include only their own stage, the stages below it, and the public
  headers (tmem/) of those stages;
* include/tmem/ includes only public headers of its own stage or below, and standard headers (no
  CUDA or third-party header);
* every public header has a stage: the "public headers" column of the stage table of
  docs/architecture.md, which this script reads;
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


ARCHITECTURE = pathlib.Path("docs/architecture.md")
TABLE_ROW = re.compile(r"^\| (\w+) \| `(?:runtime/\w+/|kernels/)` \| ([^|]*) \|", re.M)


def public_stages(root: pathlib.Path):
    """{"compile.h": "compile", ...} from the stage table of docs/architecture.md."""
    path = root / ARCHITECTURE
    if not path.is_file():
        return None
    stages = {}
    for stage, headers in TABLE_ROW.findall(path.read_text(errors="replace")):
        for header in re.findall(r"`([\w.]+\.h)`", headers):
            stages[header] = stage
    return stages


def public_stage(include: str, stages):
    """The stage of "tmem/x.h"; None for a header the table does not list."""
    return stages.get(include[len("tmem/"):])


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
    stages = public_stages(root)
    if stages is None:
        return [f"{ARCHITECTURE}: missing; it gives each public header its stage"]
    for stage in sorted(set(stages.values()) - set(STAGES)):
        found.append(f"{ARCHITECTURE}: stage {stage} is not one of {', '.join(STAGES)}")
    for header in sorted((root / "include" / "tmem").glob("*.h")):
        if header.name not in stages:
            found.append(f"include/tmem/{header.name}: no stage in the table of {ARCHITECTURE}")
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
                    target = public_stage(include, stages)
                    if target in STAGES and STAGES.index(target) > STAGES.index(own):
                        found.append(f'{where}: stage {own} includes "{include}" of stage {target}, '
                                     f"which is above it")
                    continue
                target = included_stage(include)
                if target not in STAGES:
                    found.append(f'{where}: includes "{include}", which is not a stage header')
                elif STAGES.index(target) > STAGES.index(own):
                    found.append(f'{where}: stage {own} includes "{include}" of stage {target}, '
                                 f"which is above it")
        elif top == "include":
            own = stages.get(path.name)
            for include in quoted:
                if not include.startswith("tmem/"):
                    found.append(f'{where}: public header includes "{include}"')
                    continue
                target = public_stage(include, stages)
                if own in STAGES and target in STAGES and STAGES.index(target) > STAGES.index(own):
                    found.append(f'{where}: public header of stage {own} includes "{include}" of '
                                 f"stage {target}, which is above it")
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
        "include/tmem/mid.h": "#include <cuda.h>\n",  # CUDA header in a public header
        "tools/d.cc": '#include "runtime/compile/backends.h"\n',  # CLI reaching inside
        "runtime/e.cc": '#include "tmem/result.h"\n',  # outside any stage
        "include/tmem/low.h": '#include "tmem/high.h"\n',  # public header of a lower stage
        "runtime/cuda/f.h": '#include "tmem/high.h"\n',  # a stage reaching a public header above
        "include/tmem/unlisted.h": "",  # a public header without a stage
    }
    table = ("| stage | folder | public headers | tests |\n|---|---|---|---|\n"
             "| support | `runtime/support/` | `low.h` | `tests/support/` |\n"
             "| cuda | `runtime/cuda/` | `mid.h` | `tests/cuda/` |\n"
             "| jit | `runtime/jit/` | `high.h` | `tests/jit/` |\n")
    clean = {"docs/architecture.md": table, "include/tmem/high.h": '#include "tmem/mid.h"\n',
             "include/tmem/mid.h": '#include "tmem/low.h"\n',
             "runtime/jit/ok.cc": '#include "tmem/high.h"\n',
             "runtime/exec/ok.cc": '#include "runtime/check/owner.h"\n#include "kernels/x.h"\n',
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
            before = path.read_text() if path.is_file() else None
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            hits = [v for v in violations(root) if v.startswith(name)]
            if not hits:
                failures.append(f"{name} with {text.strip() or 'no stage'} was not caught")
            else:
                print(f"caught: {hits[0]}")
            if before is None:
                path.unlink()
            else:
                path.write_text(before)
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
