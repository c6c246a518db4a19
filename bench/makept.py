#!/usr/bin/env python3
"""Writes torch.save files for the PyTorch benchmarks without PyTorch.

    makept.py state OUT.pt TENSORS BYTES     a state dict: TENSORS f32 tensors
                                             sharing BYTES between them
    makept.py optimizer OUT.pt PARAMS        an AdamW state dict: PARAMS
                                             parameters, exp_avg and exp_avg_sq
                                             of 64 f32 each, every tensor its
                                             own storage (2 * PARAMS storages)

The layout is torch.save's: a stored zip of ARCHIVE/data.pkl (pickle
protocol 2: collections.OrderedDict, torch._utils._rebuild_tensor_v2, the
storages as persistent ids ('storage', torch.FloatStorage, KEY, 'cpu',
NUMEL)), ARCHIVE/data/KEY and ARCHIVE/version. The torch globals are stand-in
classes registered under torch's module names, so pickle writes the names
torch writes; nothing of torch is needed or imported.
"""
import collections
import os
import pickle
import random
import struct
import sys
import types
import zipfile

torch = types.ModuleType("torch")
utils = types.ModuleType("torch._utils")
sys.modules["torch"], sys.modules["torch._utils"] = torch, utils


class FloatStorage:
    pass


FloatStorage.__module__ = "torch"
torch.FloatStorage = FloatStorage


def _rebuild_tensor_v2(*args):
    raise RuntimeError("never called: this script only writes")


_rebuild_tensor_v2.__module__ = "torch._utils"
utils._rebuild_tensor_v2 = _rebuild_tensor_v2


class Storage:
    def __init__(self, key, numel):
        self.key, self.numel = key, numel


class Tensor:
    def __init__(self, storage, shape):
        self.storage, self.shape = storage, tuple(shape)

    def __reduce__(self):
        stride, step = [], 1
        for d in reversed(self.shape):
            stride.insert(0, step)
            step *= d
        return (_rebuild_tensor_v2,
                (self.storage, 0, self.shape, tuple(stride), False, collections.OrderedDict()))


class Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            return ("storage", FloatStorage, obj.key, "cpu", obj.numel)
        return None


def aligned(z, name):
    """A record whose data starts at a multiple of 64 bytes, as torch.save
    aligns its storages (an "FB" extra field of padding)."""
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_STORED
    start = z.fp.tell() + 30 + len(name.encode()) + 4
    pad = -start % 64
    info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad
    return info


def save(path, obj, storages, fill):
    archive = os.path.splitext(os.path.basename(path))[0]
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        import io
        buf = io.BytesIO()
        Pickler(buf, protocol=2).dump(obj)
        z.writestr(archive + "/data.pkl", buf.getvalue())
        for s in storages:
            with z.open(aligned(z, archive + "/data/" + s.key), "w") as f:
                fill(f, s.numel)
        z.writestr(archive + "/version", "3\n")
    os.replace(tmp, path)


_BLOCK = []


def random_floats(f, n):
    # One block of normal values (made once), written as often as needed.
    chunk = 1 << 16
    if not _BLOCK:
        rng = random.Random(1)
        _BLOCK.append(struct.pack("<%df" % chunk, *(rng.gauss(0, 0.02) for _ in range(chunk))))
    block = _BLOCK[0]
    done = 0
    while done < n:
        k = min(chunk, n - done)
        f.write(block[: 4 * k])
        done += k


def main():
    kind, out = sys.argv[1], sys.argv[2]
    if kind == "state":
        tensors, size = int(sys.argv[3]), int(sys.argv[4])
        per = max(1, size // 4 // tensors)
        rows = max(1, per // 256)
        storages, state = [], collections.OrderedDict()
        for i in range(tensors):
            s = Storage(str(i), rows * 256)
            storages.append(s)
            state["model.layers.%d.weight" % i] = Tensor(s, (rows, 256))
        save(out, state, storages, random_floats)
    elif kind == "optimizer":
        params = int(sys.argv[3])
        storages, state = [], {}
        for p in range(params):
            entry = {}
            for name in ("exp_avg", "exp_avg_sq"):
                s = Storage(str(len(storages)), 64)
                storages.append(s)
                entry[name] = Tensor(s, (64,))
            state[p] = entry
        groups = [{"lr": 1e-4, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01,
                   "params": list(range(params))}]
        save(out, {"state": state, "param_groups": groups}, storages,
             lambda f, n: f.write(b"\0" * (4 * n)))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
