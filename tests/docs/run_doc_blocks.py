#!/usr/bin/env python3
"""Runs the fenced code blocks of the user documents so they cannot rot (issue 10).

Fences and what happens to them:
  ```sh                 every command must exit 0 (bash, `set -e`, tmemjit on PATH)
  ```sh exit=N          every command must exit N (one command per logical line)
  ```cpp                a complete program: compiled against the library and run; must exit 0
  ```cpp compile-only   compiled and linked, not run (e.g. it needs a GPU)
  anything else         text, not run (output samples, JSON, grammar)
Each block runs in a fresh temporary directory. Usage:
  run_doc_blocks.py --cli PATH --cxx PATH --include DIR --libdir DIR DOC.md...
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\S*)(.*)$")


def blocks(path):
    """Yields (line number, language, attributes, body) of each fenced block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group(1):
            i += 1
            continue
        start, lang, attrs = i + 1, m.group(1), m.group(2).split()
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        yield start, lang, attrs, "\n".join(body) + "\n"


def logical_commands(body):
    """Joins backslash continuations; drops comments and blank lines."""
    out, current = [], ""
    for line in body.split("\n"):
        if current == "" and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        out.append(current + line)
        current = ""
    return out


def run_sh(body, attrs, env, cwd):
    expect = 0
    for attr in attrs:
        if attr.startswith("exit="):
            expect = int(attr[5:])
    if expect == 0:
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", body], env=env, cwd=cwd,
                           capture_output=True, text=True, timeout=300)
        return None if r.returncode == 0 else f"exit {r.returncode}\n{r.stdout}{r.stderr}"
    for command in logical_commands(body):
        r = subprocess.run(["bash", "-c", command], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
        if r.returncode != expect:
            return f"`{command}` exited {r.returncode}, expected {expect}\n{r.stdout}{r.stderr}"
    return None


def run_cpp(body, attrs, args, env, cwd):
    source = os.path.join(cwd, "example.cc")
    with open(source, "w", encoding="utf-8") as f:
        f.write(body)
    binary = os.path.join(cwd, "example")
    build = [args.cxx, "-std=c++20", "-O1", "-I", args.include, source, "-L", args.libdir, "-ltmemjit",
             "-Wl,-rpath," + args.libdir, "-o", binary]
    r = subprocess.run(build, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return "does not compile:\n" + r.stderr
    if "compile-only" in attrs:
        return None
    r = subprocess.run([binary], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    return None if r.returncode == 0 else f"exit {r.returncode}\n{r.stdout}{r.stderr}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--cxx", required=True)
    parser.add_argument("--include", required=True)
    parser.add_argument("--libdir", required=True)
    parser.add_argument("docs", nargs="+")
    args = parser.parse_args()
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(os.path.abspath(args.cli)) + os.pathsep + env.get("PATH", "")
    # Documents must not depend on the user's cache: every block gets its own.
    failures, ran = [], 0
    for doc in args.docs:
        for line, lang, attrs, body in blocks(doc):
            if lang not in ("sh", "cpp"):
                continue
            with tempfile.TemporaryDirectory(prefix="tmemjit_doc_") as cwd:
                env["TMEMJIT_CACHE_DIR"] = os.path.join(cwd, "cache")
                error = run_sh(body, attrs, env, cwd) if lang == "sh" else run_cpp(body, attrs, args, env, cwd)
            ran += 1
            status = "ok" if error is None else "FAILED"
            print(f"{os.path.basename(doc)}:{line}: {lang} {' '.join(attrs)} {status}")
            if error is not None:
                failures.append(f"{doc}:{line}: {error}")
    print(f"{ran} blocks run, {len(failures)} failed")
    for failure in failures:
        print(failure, file=sys.stderr)
    if ran == 0:
        print("no runnable blocks found: the documents lost their examples", file=sys.stderr)
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
