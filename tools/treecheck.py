"""What the tree checks share (check-layers.py, check-format-branches.py):
their command line, the walk over the C++ sources and the scratch tree
their self-tests plant findings in."""
import argparse
import os
import sys


def sources(root, tops):
    """Every .h and .cpp under root/TOP for each of tops, by folder, then name."""
    for top in tops:
        for folder, _, names in sorted(os.walk(os.path.join(root, top))):
            for name in sorted(names):
                if name.endswith((".h", ".cpp")):
                    yield os.path.normpath(os.path.join(folder, name))


def plant(root, files):
    """Writes {relative path: text} under root, folders made as needed."""
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


def main(doc, check, self_test, failed, passed):
    """`check(root)` gives one line per finding: printed, then `failed(n)`
    and exit 1, or `passed` and exit 0. --self-test runs `self_test()`."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        sys.exit(self_test())
    found = check(os.path.abspath(args.root))
    for line in found:
        print(line)
    print(failed(len(found)) if found else passed)
    sys.exit(1 if found else 0)
