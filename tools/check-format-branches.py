#!/usr/bin/env python3
"""Checks that no code outside the format modules branches on which format a
file is (ctest runs it as `format-branches`; docs/ARCHITECTURE.md, "How to
add a format"). What a front end needs of a format is a field or hook of its
FormatModule (core/include/ckptscope/formats/formatmodule.h), so a new
format touches its own folder and one registry line, not every command.

A branch is a comparison with a Format value or a `case` of one
(`doc.format() == Format::Gguf`, `case Format::Oxck:`); naming a value
elsewhere (a default member initializer) is no branch. Allowed: the
modules themselves (core/src/formats/, core/include/ckptscope/formats/) and
the export layer's map from its targets to the formats they write
(ALLOWED below).

    tools/check-format-branches.py [--root DIR]   exit 1, one line per branch
    tools/check-format-branches.py --self-test    plants branches in a scratch tree
"""
import argparse
import os
import re
import sys
import tempfile

SCANNED = ["core", "app", "ui"]
MODULES = [os.path.join("core", "src", "formats"), os.path.join("core", "include", "ckptscope", "formats")]
# A target's format, said once: converter.cpp's formatOf.
ALLOWED = {os.path.join("core", "src", "export", "converter.cpp")}
BRANCH = re.compile(r"(==|!=)\s*(ckptscope::)?Format::\w|(ckptscope::)?Format::\w+\s*(==|!=)|case\s+(ckptscope::)?Format::\w")


def branches(root):
    found = []
    for top in SCANNED:
        for folder, _, files in os.walk(os.path.join(root, top)):
            rel = os.path.relpath(folder, root)
            if any(rel == m or rel.startswith(m + os.sep) for m in MODULES):
                continue
            for name in sorted(files):
                if not name.endswith((".cpp", ".h")):
                    continue
                path = os.path.join(rel, name)
                if path in ALLOWED:
                    continue
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        code = line.split("//", 1)[0]
                        if BRANCH.search(code):
                            found.append(f"{path}:{number}: branches on a format: {line.strip()}")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as root:
        planted = {
            os.path.join("app", "cli", "a.cpp"): "if (doc.format() == Format::Gguf) {}\n",
            os.path.join("ui", "x", "b.cpp"): "switch (f) { case ckptscope::Format::Oxck: break; }\n",
            os.path.join("core", "src", "run", "c.cpp"): "bool g = Format::Gradient != f;\n",
        }
        quiet = {
            os.path.join("core", "src", "formats", "gguf", "d.cpp"): "if (f == Format::Gguf) {}\n",
            os.path.join("core", "include", "ckptscope", "run", "e.h"): "Format format = Format::Oxck;\n",
            os.path.join("app", "cli", "f.cpp"): "// a comment: doc.format() == Format::Gguf\n",
        }
        for path, text in {**planted, **quiet}.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        found = {line.split(":", 1)[0] for line in branches(root)}
        if found != set(planted):
            print("self-test failed; found", sorted(found), "expected", sorted(planted))
            return 1
    print(f"self-test: {len(planted)} planted branches found, nothing else")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    found = branches(os.path.abspath(args.root))
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} branch(es) on a format outside its module: add a FormatModule field or hook")
        return 1
    print("format branches: none outside the modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
