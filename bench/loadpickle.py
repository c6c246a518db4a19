#!/usr/bin/env python3
"""The least a Python script does to read a torch.save file's object without
PyTorch: zipfile finds data.pkl, the C unpickler loads it with every global a
placeholder and every storage its persistent id. The reference of the
PyTorch benchmarks (docs/PERFORMANCE.md).

    loadpickle.py FILE.pt
"""
import pickle
import sys
import zipfile


class Placeholder:
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return Placeholder()

    def __setstate__(self, state):
        pass


class Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        return Placeholder()

    def persistent_load(self, pid):
        return pid


with zipfile.ZipFile(sys.argv[1]) as z:
    name = next(n for n in z.namelist() if n.endswith("/data.pkl"))
    with z.open(name) as f:
        obj = Unpickler(f).load()
print(type(obj).__name__, len(obj))
