#!/usr/bin/env python3
"""The environment is read in one file (docs/settings.md; CTest EnvironmentReadOnce).

* No file of runtime/, kernels/, tools/ or python/src/ but runtime/support/settings.cc calls
  getenv (nor secure_getenv): a variable read anywhere else would escape Settings, its one table
  in docs/settings.md and a host's own Settings. bench/ keeps its bench-only knobs.
* Every variable settings.cc reads (the first argument of its read_* functions) has a row in the
  table of docs/settings.md, and the table has no row for a variable that is not read.

Usage: check_getenv.py ROOT         exit 1 and one line per violation when any
       check_getenv.py --self-test  shows that a stray getenv and an undocumented variable are
                                    caught
"""
import pathlib
import re
import sys
import tempfile

FOLDERS = ("runtime", "kernels", "tools", "python/src")
SUFFIXES = {".h", ".cc", ".cuh", ".cu"}
READER = pathlib.Path("runtime/support/settings.cc")
TABLE = pathlib.Path("docs/settings.md")
# A call, not a mention in a comment: getenv followed by "(".
CALL = re.compile(r"\b(?:secure_)?getenv\s*\(")
COMMENT = re.compile(r"//.*?$|/\*.*?\*/", re.S | re.M)
READ = re.compile(r'\bread_\w+\(\s*"([A-Z][A-Z0-9_]*)"')
ROW = re.compile(r"^\| `([A-Z][A-Z0-9_]*)` \|", re.M)


def violations(root: pathlib.Path):
    found = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            rel = path.relative_to(root)
            if rel == READER:
                continue
            code = COMMENT.sub("", path.read_text(errors="replace"))
            if CALL.search(code):
                found.append(f"{rel}: calls getenv; read the variable through Settings "
                             f"({READER}) and add its row to {TABLE}")
    reader, table = root / READER, root / TABLE
    if not reader.is_file() or not table.is_file():
        return found + [f"{READER} or {TABLE} is missing"]
    read = set(READ.findall(reader.read_text(errors="replace")))
    rows = set(ROW.findall(table.read_text(errors="replace")))
    for name in sorted(read - rows):
        found.append(f"{TABLE}: no row for {name}, which {READER} reads")
    for name in sorted(rows - read):
        found.append(f"{TABLE}: a row for {name}, which {READER} does not read")
    return found


def self_test():
    reader = 'std::string read_text(const char* name) { return std::getenv(name); }\n' \
             'void f() { read_text("TMEMJIT_A"); read_text("TMEMJIT_B"); }\n'
    clean = {str(READER): reader,
             str(TABLE): "| variable |\n|---|\n| `TMEMJIT_A` |\n| `TMEMJIT_B` |\n",
             "runtime/compile/ok.cc": "// getenv( in a comment is no call\nint x;\n"}
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        for rel, text in clean.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        if violations(root):
            print(f"self-test failed: a clean tree has violations: {violations(root)}")
            return 1
        (root / "tools/stray.cc").parent.mkdir(parents=True)
        (root / "tools/stray.cc").write_text('auto p = ::getenv("HOME");\n')
        (root / TABLE).write_text("| `TMEMJIT_A` |\n| `TMEMJIT_C` |\n")
        found = violations(root)
    expected = ["tools/stray.cc: calls getenv", "no row for TMEMJIT_B", "a row for TMEMJIT_C"]
    missed = [e for e in expected if not any(e in message for message in found)]
    if missed or len(found) != len(expected):
        print(f"self-test failed: caught {found}, expected one of each of {expected}")
        return 1
    print("self-test: a stray getenv, an undocumented variable and a stale row are caught")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    found = violations(pathlib.Path(argv[1]))
    for message in found:
        print(f"error: {message}")
    if not found:
        print(f"getenv only in {READER}; every variable it reads has its row in {TABLE}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
