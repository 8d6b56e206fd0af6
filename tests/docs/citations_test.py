#!/usr/bin/env python3
"""Every document a tracked file cites is in the repository (CTest DocsCitations).

Fails, naming each file and line, on:
  * a citation of the design or rule documents that live outside the repository (their old names,
    and the seed's .rst beside them);
  * `docs/NAME.md` where the repository has no such file;
  * `docs/NAME.md §Section` (also `§A, §B`) where NAME.md has no heading whose first word is
    `Section` (or that contains `§Section`);
  * `docs/NAME.md, "Heading"` where NAME.md has no heading that starts with `Heading`.

Usage: citations_test.py [ROOT]      check the tree at ROOT (default: this repository)
       citations_test.py --self-test plant one bad citation of each kind and expect each caught
"""
import os
import re
import subprocess
import sys
import tempfile

# Files being rewritten: their citations are left for the rewrite to mend. The goldens are the
# generated text of kernels/device_function.cc, so they change with it. Empty this list when the
# rewrite lands.
EXCLUDED: set[str] = set()
EXCLUDED_DIRS: tuple[str, ...] = ()

SELF = "tests/docs/citations_test.py"

# Spelled in pieces so that this file does not cite them itself.
OUTSIDE = [
    re.compile(r"\b" + "DESIGN" + r"\.md\b"),
    re.compile(r"\b" + "TCGEN05" + r"\.md\b"),
    re.compile(r"tcgen05_ld_st" + r"\.rst\b"),
    re.compile(r"\.\./" + r"shared/"),
]

# docs/NAME.md, not part of a longer path (a `${VAR}/docs/...` is a path in the tree too).
DOC = re.compile(r"(?:(?<=[^\w.\-/])|^|(?<=\}/))docs/([\w\-]+(?:/[\w\-]+)*\.md)")
SECTIONS = re.compile(r"(?:\s*(?:,|and|or)?\s*§([A-Za-z0-9][\w\-]*))")
QUOTED = re.compile(r'^,\s*"([^"\n]+)"')
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                             capture_output=True).stdout
        files = [f for f in out.decode("utf-8", "replace").split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for dirpath, dirnames, filenames in os.walk(root):
            rel = os.path.relpath(dirpath, root)
            dirnames[:] = [d for d in dirnames
                           if not d.startswith(".") and not (rel == "." and d.startswith("build"))]
            for name in filenames:
                files.append(os.path.normpath(os.path.join(rel, name)))
    return sorted(f for f in files if not f.startswith("build"))


def read_text(path):
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None  # deleted in the work tree, or unreadable
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


def headings(text):
    """The heading texts of a markdown file, outside code fences, without markup."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        match = HEADING.match(line)
        if match:
            out.append(match.group(2).replace("`", "").replace("*", ""))
    return out


def has_section(heads, name):
    for head in heads:
        if re.match(re.escape(name) + r"(?![\w\-])", head):
            return True
        if re.search("§" + re.escape(name) + r"(?![\w\-])", head):
            return True
    return False


def check(root):
    problems = []
    heading_cache = {}

    def doc_headings(rel):
        if rel not in heading_cache:
            text = read_text(os.path.join(root, "docs", rel)) or ""
            heading_cache[rel] = headings(text)
        return heading_cache[rel]

    for rel in tracked_files(root):
        if rel == SELF or rel in EXCLUDED or rel.startswith(EXCLUDED_DIRS):
            continue
        text = read_text(os.path.join(root, rel))
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            where = f"{rel}:{number}"
            for pattern in OUTSIDE:
                for match in pattern.finditer(line):
                    problems.append(f"{where}: cites {match.group(0)}, which is not in the "
                                    "repository (docs/design.md, docs/transfer-semantics.md and "
                                    "docs/tcgen05-rules.md hold what it said)")
            for match in DOC.finditer(line):
                doc = match.group(1)
                if not os.path.isfile(os.path.join(root, "docs", doc)):
                    problems.append(f"{where}: cites docs/{doc}, which does not exist")
                    continue
                rest = line[match.end():]
                position = 0
                while True:
                    section = SECTIONS.match(rest, position)
                    if not section:
                        break
                    position = section.end()
                    name = section.group(1)
                    if not has_section(doc_headings(doc), name):
                        problems.append(f"{where}: cites docs/{doc} §{name}, but docs/{doc} has "
                                        f"no heading starting with '{name}'")
                quoted = QUOTED.match(rest)
                if quoted and not any(h.startswith(quoted.group(1)) for h in doc_headings(doc)):
                    problems.append(f"{where}: cites docs/{doc}, \"{quoted.group(1)}\", but "
                                    f"docs/{doc} has no heading starting with it")
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        os.makedirs(os.path.join(root, "src"))
        with open(os.path.join(root, "docs", "a.md"), "w") as f:
            f.write("# A\n\n## Lifecycle: alloc\n\n```\n## Hidden\n```\n## 2. Numbered\n")
        good = ("// docs/a.md §Lifecycle, §2 and docs/a.md, \"Lifecycle: al\"\n"
                "// ${PROJECT_SOURCE_DIR}/docs/a.md\n")
        bad = {
            "outside design": "// see " + "DESIGN" + ".md §3\n",
            "outside rules": "// see " + "TCGEN05" + ".md §6\n",
            "seed": "// the seed " + "tcgen05_ld_st" + ".rst\n",
            "missing file": "// docs/missing.md\n",
            "missing section": "// docs/a.md §Hidden\n",
            "missing second section": "// docs/a.md §Lifecycle, §Nope\n",
            "missing quoted": "// docs/a.md, \"Nope\"\n",
        }
        with open(os.path.join(root, "src", "good.cc"), "w") as f:
            f.write(good)
        if check(root):
            print("self-test: a good tree was flagged:", *check(root), sep="\n  ")
            return 1
        failures = 0
        for what, line in bad.items():
            path = os.path.join(root, "src", "bad.cc")
            with open(path, "w") as f:
                f.write(line)
            found = check(root)
            if len(found) != 1:
                print(f"self-test: {what}: expected one problem, got {found}")
                failures += 1
            os.remove(path)
        print("self-test:", "ok" if not failures else f"{failures} failures")
        return 1 if failures else 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test()
    root = os.path.abspath(argv[1] if len(argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    problems = check(root)
    for problem in problems:
        print("error:", problem)
    if problems:
        print(f"{len(problems)} citations of documents the repository does not have")
        return 1
    print("every citation names a document and a section of the repository")
    if EXCLUDED or EXCLUDED_DIRS:
        print("not checked (being rewritten):", ", ".join(sorted(EXCLUDED) + list(EXCLUDED_DIRS)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
