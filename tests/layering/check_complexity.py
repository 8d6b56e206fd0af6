#!/usr/bin/env python3
"""No function of the library's stages (runtime/, kernels/), of the command (tools/), of the Python
bindings (python/src/) or of the benches (bench/) is longer than 120 lines or has a cyclomatic
complexity over 50, as lizard counts them (docs/architecture.md, "Rules the tree keeps"). A
function past either limit is a grammar walked by hand or several steps in one body: carve it (a
table, one function per step; a command's parse, run and print) rather than raise the limit.

    check_complexity.py ROOT       checks those folders of ROOT; prints the largest numbers
    check_complexity.py --self-test  shows that a function past each limit is caught

Exits 0 when every function is within the limits, 1 naming each one that is not, and 77 (CTest's
skip) when lizard, a PyPI package that scripts/test.sh installs, is missing.
"""

import os
import sys
import tempfile

MAX_LINES = 120
MAX_CCN = 50
FOLDERS = ("runtime", "kernels", "tools", "python/src", "bench")
EXTENSIONS = (".cc", ".h")


def functions_of(path):
    import lizard
    return lizard.analyze_file(path).function_list


def sources(root):
    for folder in FOLDERS:
        for directory, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if name.endswith(EXTENSIONS):
                    yield os.path.join(directory, name)


def offences(paths, root):
    """(message, ...) for every function past a limit, and the largest (lines, ccn) seen."""
    found, largest_lines, largest_ccn = [], (0, ""), (0, "")
    for path in paths:
        for function in functions_of(path):
            where = f"{os.path.relpath(path, root)}:{function.start_line}: {function.name}"
            largest_lines = max(largest_lines, (function.length, where))
            largest_ccn = max(largest_ccn, (function.cyclomatic_complexity, where))
            if function.length > MAX_LINES or function.cyclomatic_complexity > MAX_CCN:
                found.append(f"{where} has {function.length} lines (limit {MAX_LINES}) and "
                             f"cyclomatic complexity {function.cyclomatic_complexity} "
                             f"(limit {MAX_CCN})")
    return found, largest_lines, largest_ccn


def self_test():
    branches = "\n".join(f"  if (x == {i}) return {i};" for i in range(MAX_CCN + 1))
    statements = "\n".join(f"  x += {i};" for i in range(MAX_LINES + 1))
    cases = {
        "complex.cc": f"int complex(int x) {{\n{branches}\n  return -1;\n}}\n",
        "long.cc": f"int long_one(int x) {{\n{statements}\n  return x;\n}}\n",
        "fine.cc": "int fine(int x) {\n  return x + 1;\n}\n",
    }
    with tempfile.TemporaryDirectory() as root:
        paths = []
        for name, text in cases.items():
            paths.append(os.path.join(root, name))
            with open(paths[-1], "w") as f:
                f.write(text)
        found, _, _ = offences(paths, root)
    names = sorted(message.split(": ")[1].split(" ")[0] for message in found)
    if names != ["complex", "long_one"]:
        print(f"self-test failed: caught {names}, expected ['complex', 'long_one']")
        return 1
    print("self-test: a function past each limit is caught, a small one is not")
    return 0


def main(argv):
    try:
        import lizard  # noqa: F401
    except ImportError:
        print("skipped: lizard is not installed (python3 -m pip install lizard; scripts/test.sh "
              "installs it)")
        return 77
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    root = argv[1]
    found, largest_lines, largest_ccn = offences(sources(root), root)
    for message in found:
        print(f"error: {message}")
    print(f"longest function: {largest_lines[0]} lines ({largest_lines[1]}); most complex: "
          f"{largest_ccn[0]} ({largest_ccn[1]}); limits {MAX_LINES} lines, complexity {MAX_CCN}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
