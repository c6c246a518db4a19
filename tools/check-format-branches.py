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
import os
import re
import tempfile

import treecheck

SCANNED = ["core", "app", "ui"]
MODULES = [os.path.join("core", "src", "formats"), os.path.join("core", "include", "ckptscope", "formats")]
# A target's format, said once: converter.cpp's formatOf.
ALLOWED = {os.path.join("core", "src", "export", "converter.cpp")}
BRANCH = re.compile(r"(==|!=)\s*(ckptscope::)?Format::\w|(ckptscope::)?Format::\w+\s*(==|!=)|case\s+(ckptscope::)?Format::\w")


def branches(root):
    found = []
    for source in treecheck.sources(root, SCANNED):
        path = os.path.relpath(source, root)
        folder = os.path.dirname(path)
        if path in ALLOWED or any(folder == m or folder.startswith(m + os.sep) for m in MODULES):
            continue
        with open(source, encoding="utf-8", errors="replace") as f:
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
        treecheck.plant(root, {**planted, **quiet})
        found = {line.split(":", 1)[0] for line in branches(root)}
        if found != set(planted):
            print("self-test failed; found", sorted(found), "expected", sorted(planted))
            return 1
    print(f"self-test: {len(planted)} planted branches found, nothing else")
    return 0


if __name__ == "__main__":
    treecheck.main(__doc__, branches, self_test,
                   lambda n: f"{n} branch(es) on a format outside its module: add a FormatModule field or hook",
                   "format branches: none outside the modules")
