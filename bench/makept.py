#!/usr/bin/env python3
"""Writes torch.save files for the PyTorch benchmarks without PyTorch.

    makept.py state OUT.pt TENSORS BYTES     a state dict: TENSORS f32 tensors
                                             sharing BYTES between them
    makept.py optimizer OUT.pt PARAMS        an AdamW state dict: PARAMS
                                             parameters, exp_avg and exp_avg_sq
                                             of 64 f32 each, every tensor its
                                             own storage (2 * PARAMS storages)
    makept.py adam-checkpoint DIR BYTES LAYERS   a Trainer checkpoint folder:
                                             model.safetensors of BYTES in
                                             LAYERS f32 weights, optimizer.pt
                                             with AdamW's exp_avg, exp_avg_sq
                                             and step for each (twice BYTES)
    makept.py adam-run DIR CHECKPOINTS       a Trainer run of CHECKPOINTS
                                             checkpoint-N folders (12 layers,
                                             small): update / weight near
                                             1e-3, layer 9's growing 4x per
                                             checkpoint, layer 2's frozen

    makept.py dcp DIR BYTES RANKS TENSORS    a PyTorch distributed checkpoint
                                             DIR/ckpt (.metadata and RANKS
                                             __R_0.distcp files) of TENSORS
                                             f32 tensors of BYTES in all,
                                             each split by rows over the
                                             ranks, and the same tensors in
                                             DIR/single.safetensors

The layout is torch.save's: a stored zip of ARCHIVE/data.pkl (pickle
protocol 2: collections.OrderedDict, torch._utils._rebuild_tensor_v2, the
storages as persistent ids ('storage', torch.FloatStorage, KEY, 'cpu',
NUMEL)), ARCHIVE/data/KEY and ARCHIVE/version. The torch globals are stand-in
classes registered under torch's module names, so pickle writes the names
torch writes; nothing of torch is needed or imported.
"""
import collections
import json
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
    # Written in large pieces, as torch.save and our own writers write: the
    # page cache keeps a file written 64 KiB at a time in small folios, which
    # copy out 1.5x slower (stats of the 1 GiB .pt measured 1.41x the same
    # tensors in a safetensors file before, 1.0x after).
    with open(tmp, "wb", buffering=16 << 20) as raw, \
            zipfile.ZipFile(raw, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
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


def scaled_block(scale, square=False, seed=1):
    """A block of 65,536 little-endian f32: normal values times `scale`
    (their squares plus a floor with `square`, as Adam's exp_avg_sq)."""
    rng = random.Random(seed)
    vals = [rng.gauss(0, 1) * scale for _ in range(1 << 16)]
    if square:
        vals = [v * v + scale * scale * 0.1 for v in vals]
    return struct.pack("<%df" % len(vals), *vals)


def repeat(block):
    def fill(f, n):
        done = 0
        while done < n:
            k = min(len(block) // 4, n - done)
            f.write(block[: 4 * k])
            done += k
    return fill


def write_safetensors(path, tensors):
    """tensors: [(name, shape, fill, numel)] of f32, written in order."""
    header, offset = {}, 0
    for name, shape, _, numel in tensors:
        header[name] = {"dtype": "F32", "shape": list(shape),
                        "data_offsets": [offset, offset + 4 * numel]}
        offset += 4 * numel
    text = json.dumps(header).encode()
    text += b" " * (-(8 + len(text)) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, fill, numel in tensors:
            fill(f, numel)
    os.replace(tmp, path)


def adam_checkpoint(folder, layers, step, lr=3e-4, beta1=0.9, beta2=0.999):
    """layers: [(name, rows, weight_rms, update_to_weight)]. The moments are
    chosen so Adam's update has about that RMS against the weight's."""
    os.makedirs(folder, exist_ok=True)
    bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
    weights, storages, state, fills = [], [], {}, {}
    for i, (name, rows, w_rms, ratio) in enumerate(layers):
        n = rows * 256
        weights.append((name, (rows, 256), repeat(scaled_block(w_rms, seed=i + 1)), n))
        v_scale = 1e-3  # sqrt of exp_avg_sq
        m_rms = w_rms * ratio * bc1 * (v_scale / bc2 ** 0.5) / lr
        entry = {}
        s = Storage(str(len(storages)), 1)
        storages.append(s)
        fills[s.key] = lambda f, n, st=float(step): f.write(struct.pack("<f", st))
        entry["step"] = Tensor(s, ())
        for key, block in (("exp_avg", scaled_block(m_rms, seed=100 + i)),
                           ("exp_avg_sq", scaled_block(v_scale, True, seed=200 + i))):
            s = Storage(str(len(storages)), n)
            storages.append(s)
            fills[s.key] = repeat(block)
            entry[key] = Tensor(s, (rows, 256))
        state[i] = entry
    write_safetensors(os.path.join(folder, "model.safetensors"), weights)
    groups = [{"lr": lr, "betas": (beta1, beta2), "eps": 1e-8, "weight_decay": 0.01,
               "amsgrad": False, "params": list(range(len(layers)))}]
    save(os.path.join(folder, "optimizer.pt"), {"state": state, "param_groups": groups},
         storages, lambda f, n, it=iter(storages): fills[next(it).key](f, n))
    with open(os.path.join(folder, "trainer_state.json"), "w") as f:
        json.dump({"global_step": step, "log_history": []}, f)


def dcp_classes():
    """Stand-ins for torch.distributed.checkpoint's pickled classes, under
    torch's module names, pickled as torch pickles them: dataclasses (NEWOBJ
    and a state dict), TensorProperties' state a tuple, _StorageInfo's state
    without its None fields, the memory format an Enum member."""
    import dataclasses
    import enum
    md = types.ModuleType("torch.distributed.checkpoint.metadata")
    fsm = types.ModuleType("torch.distributed.checkpoint.filesystem")
    stm = types.ModuleType("torch.distributed._shard.sharded_tensor.metadata")
    for name, m in (("torch.distributed", types.ModuleType("torch.distributed")),
                    ("torch.distributed.checkpoint",
                     types.ModuleType("torch.distributed.checkpoint")),
                    ("torch.distributed._shard", types.ModuleType("torch.distributed._shard")),
                    ("torch.distributed._shard.sharded_tensor",
                     types.ModuleType("torch.distributed._shard.sharded_tensor")),
                    (md.__name__, md), (fsm.__name__, fsm), (stm.__name__, stm)):
        sys.modules[name] = m

    class Size(tuple):
        def __reduce__(self):
            return (Size, (tuple(self),))

    class Dtype:
        def __init__(self, name):
            self.name = name

        def __reduce__(self):
            return self.name

    Size.__module__ = Dtype.__module__ = "torch"
    Size.__qualname__ = "Size"
    torch.Size, torch.float32, torch.strided = Size, Dtype("float32"), Dtype("strided")

    class MEM_FORMAT_ENCODING(enum.Enum):
        TORCH_CONTIGUOUS_FORMAT = 0

    class TensorProperties:
        def __getstate__(self):
            return (torch.float32, torch.strided, False,
                    MEM_FORMAT_ENCODING.TORCH_CONTIGUOUS_FORMAT, False)

    @dataclasses.dataclass
    class ChunkStorageMetadata:
        offsets: object
        sizes: object

    @dataclasses.dataclass
    class TensorStorageMetadata:
        properties: object
        size: object
        chunks: list

    @dataclasses.dataclass
    class BytesStorageMetadata:
        pass

    @dataclasses.dataclass
    class Metadata:
        state_dict_metadata: dict
        planner_data: object = None
        storage_data: object = None
        storage_meta: object = None
        version: str = "1.0.0"

    @dataclasses.dataclass(frozen=True)
    class MetadataIndex:
        fqn: str
        offset: object = None
        index: object = None

    @dataclasses.dataclass
    class _StorageInfo:
        relative_path: str
        offset: int
        length: int
        transform_descriptors: object = None

        def __getstate__(self):
            return {k: v for k, v in self.__dict__.items() if v is not None}

    for c in (MEM_FORMAT_ENCODING, TensorProperties):
        c.__module__, c.__qualname__ = stm.__name__, c.__name__
        setattr(stm, c.__name__, c)
    for c in (ChunkStorageMetadata, TensorStorageMetadata, BytesStorageMetadata, Metadata,
              MetadataIndex):
        c.__module__, c.__qualname__ = md.__name__, c.__name__
        setattr(md, c.__name__, c)
    _StorageInfo.__module__, _StorageInfo.__qualname__ = fsm.__name__, "_StorageInfo"
    fsm._StorageInfo = _StorageInfo
    return types.SimpleNamespace(**{c.__name__: c for c in (
        Size, TensorProperties, ChunkStorageMetadata, TensorStorageMetadata,
        BytesStorageMetadata, Metadata, MetadataIndex, _StorageInfo)})


def torch_save_bytes(obj, storages, fill):
    """torch.save to a stream: archive "archive", storages 64-byte aligned."""
    import io
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        buf = io.BytesIO()
        Pickler(buf, protocol=2).dump(obj)
        z.writestr("archive/data.pkl", buf.getvalue())
        for s in storages:
            with z.open(aligned(z, "archive/data/" + s.key), "w") as f:
                fill(f, s.numel)
        z.writestr("archive/version", "3\n")
    return out.getvalue()


def from_element(block, start):
    """A fill that writes the endless repetition of `block` from element
    `start` on: a chunk's part of a tensor filled with repeat(block)."""
    def fill(f, n):
        per = len(block) // 4
        at, done = start % per, 0
        while done < n:
            k = min(per - at, n - done)
            f.write(block[4 * at: 4 * (at + k)])
            done += k
            at = 0
    return fill


def dcp_checkpoint(folder, size, ranks, count):
    """A DCP folder and single.safetensors holding the same f32 tensors."""
    c = dcp_classes()
    ckpt = os.path.join(folder, "ckpt")
    os.makedirs(ckpt, exist_ok=True)
    rows = max(ranks, size // 4 // count // 256)
    names = ["model.layers.%d.weight" % i for i in range(count)]
    blocks = [scaled_block(0.02, seed=i + 1) for i in range(count)]
    items, storage_data, planner = {}, {}, {}
    files = [open(os.path.join(ckpt, "__%d_0.distcp" % r), "wb") for r in range(ranks)]
    per = (rows + ranks - 1) // ranks
    for i, name in enumerate(names):
        chunks = []
        for r in range(ranks):
            lo, hi = min(rows, r * per), min(rows, (r + 1) * per)
            if lo == hi:
                continue
            chunks.append(c.ChunkStorageMetadata(c.Size((lo, 0)), c.Size((hi - lo, 256))))
            s = Storage("0", (hi - lo) * 256)
            data = torch_save_bytes(Tensor(s, (hi - lo, 256)), [s],
                                    from_element(blocks[i], lo * 256))
            f = files[r]
            storage_data[c.MetadataIndex(name, c.Size((lo, 0)), len(chunks) - 1)] = \
                c._StorageInfo("__%d_0.distcp" % r, f.tell(), len(data))
            f.write(data)
        items[name] = c.TensorStorageMetadata(c.TensorProperties(), c.Size((rows, 256)), chunks)
        planner[name] = ("model", name[len("model."):])  # get_state_dict's key path
    for f in files:
        f.close()
    meta = c.Metadata(items, planner, storage_data)
    with open(os.path.join(ckpt, ".metadata"), "wb") as f:
        pickle.dump(meta, f, protocol=4)
    write_safetensors(os.path.join(folder, "single.safetensors"),
                      [(n, (rows, 256), repeat(blocks[i]), rows * 256)
                       for i, n in enumerate(names)])


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
    elif kind == "adam-checkpoint":
        size, count = int(sys.argv[3]), int(sys.argv[4])
        rows = max(1, size // 4 // count // 256)
        adam_checkpoint(out, [("model.layers.%d.weight" % i, rows, 0.02, 1e-3)
                              for i in range(count)], 1000)
    elif kind == "dcp":
        dcp_checkpoint(out, int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    elif kind == "adam-run":
        for c in range(int(sys.argv[3])):
            step = 100 * (c + 1)
            layers = []
            for i in range(12):
                ratio = 1e-3 * (1 + 0.3 * ((i * 7) % 5) / 5)
                if i == 9 and c >= 2:
                    ratio *= 4 ** (c - 1)  # diverging
                if i == 2:
                    ratio = 2e-6  # frozen
                for part, rows in (("self_attn.q_proj", 64), ("mlp.down_proj", 128)):
                    layers.append(("model.layers.%d.%s.weight" % (i, part), rows,
                                   0.02 * (1 + i / 12), ratio))
            adam_checkpoint(os.path.join(out, "checkpoint-%d" % step), layers, step)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
