#!/usr/bin/env python3
"""Checks that every #include between the folders of core/ and ui/ points
down the declared layers (ctest runs it as `layers`; docs/ARCHITECTURE.md
draws the same stack).

A file may include a file of its own folder or of a folder on a lower layer;
folders on one layer are peers and include none of each other. ui/ may
include any of core/; core/ includes nothing of ui/ and no Qt header.
Includes are resolved as the compiler resolves them (the including file's
folder first, then core/include, core/src and ui/), so "../stats/x.h",
"stats/x.h" and "ckptscope/stats/x.h" are all the same edge.

    tools/check-layers.py [--root DIR]   exit 1 and one line per back edge
    tools/check-layers.py --self-test    plants back edges in a scratch tree
"""
import os
import re
import tempfile

import treecheck

# Lowest layer first. A folder not listed here is an error: a new folder
# takes its place in the stack when it is made.
LAYERS = {
    "core": [["common"], ["io"], ["formats"], ["document"], ["stats"], ["optimizer"],
             ["export", "run", "diff", "layout"]],
    "ui": [["common"], ["chart", "widgets"], ["gguf"], ["tensor", "metadata", "graph"], ["export"], ["launch"],
           ["browser", "compare", "run"], ["shell"]],
}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def folder_of(root, path):
    """('core', 'stats') for core/src/stats/x.cpp or core/include/ckptscope/stats/x.h."""
    parts = os.path.relpath(path, root).split(os.sep)
    if parts[0] == "core" and len(parts) > 3 and parts[1] == "src":
        return ("core", parts[2])
    if parts[0] == "core" and len(parts) > 4 and parts[1] == "include":
        return ("core", parts[3])
    if parts[0] == "ui" and len(parts) > 2:
        return ("ui", parts[1])
    return None


def resolve(root, including, name):
    candidates = [os.path.join(os.path.dirname(including), name),
                  os.path.join(root, "core", "include", name),
                  os.path.join(root, "core", "src", name),
                  os.path.join(root, "ui", name)]
    for c in candidates:
        c = os.path.normpath(c)
        if os.path.isfile(c):
            return c
    return None


def rank(side, folder):
    for i, layer in enumerate(LAYERS[side]):
        if folder in layer:
            return i
    return None


def check(root):
    errors = []
    for path in treecheck.sources(root, ("core", "ui")):
        here = folder_of(root, path)
        if here is None:
            continue
        if rank(*here) is None:
            errors.append(f"{os.path.relpath(path, root)}: folder {here[0]}/{here[1]} has no "
                          f"layer (add it to LAYERS in tools/check-layers.py)")
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for line_no, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                bracket, name = m.groups()
                where = f"{os.path.relpath(path, root)}:{line_no}"
                if here[0] == "core" and bracket == "<" and re.match(r"Q[A-Za-z]*(/|$)", name):
                    errors.append(f"{where}: core includes Qt <{name}>")
                    continue
                target = resolve(root, path, name)
                there = folder_of(root, target) if target else None
                if there is None or there == here:
                    continue
                if here[0] == "core" and there[0] == "ui":
                    errors.append(f"{where}: core/{here[1]} includes ui/{there[1]} ({name})")
                elif here[0] == there[0]:
                    low, high = rank(*there), rank(*here)
                    if low is None or low >= high:
                        how = "a peer" if low == high else "a higher layer"
                        errors.append(f"{where}: {here[0]}/{here[1]} includes {there[0]}/"
                                      f"{there[1]}, {how} ({name})")
    return errors


def self_test():
    """Back edges in each spelling are found; a clean tree passes."""
    with tempfile.TemporaryDirectory() as root:
        treecheck.plant(root, {
            "core/include/ckptscope/stats/s.h": "#pragma once\n",
            "core/src/io/a.cpp": '#include "ckptscope/stats/s.h"\n',
            "core/src/io/b.cpp": '#include "../stats/p.h"\n',
            "core/src/stats/p.h": "#pragma once\n",
            "core/src/run/c.cpp": '#include "diff/d.h"\n',
            "core/src/diff/d.h": "#pragma once\n",
            "core/src/common/q.cpp": "#include <QString>\n",
            "ui/common/w.cpp": '#include "shell/x.h"\n',
            "ui/shell/x.h": "#pragma once\n",
            "ui/tensor/ok.cpp": '#include "common/y.h"\n#include "ckptscope/stats/s.h"\n',
            "ui/common/y.h": "#pragma once\n",
        })
        found = check(root)
        expected = ["core/src/io/a.cpp:1", "core/src/io/b.cpp:1", "core/src/run/c.cpp:1",
                    "core/src/common/q.cpp:1", "ui/common/w.cpp:1"]
        missing = [e for e in expected if not any(f.startswith(e + ":") for f in found)]
        extra = [f for f in found if not any(f.startswith(e + ":") for e in expected)]
        if missing or extra:
            print("self-test failed; missed:", missing, "wrongly reported:", extra)
            return 1
    print(f"self-test: {len(expected)} planted back edges found, nothing else")
    return 0


if __name__ == "__main__":
    treecheck.main(__doc__, check, self_test,
                   lambda n: f"{n} include(s) against the layers of tools/check-layers.py",
                   "layers: every include points down")
