#!/usr/bin/env python3
"""Writes a small synthetic training run of OXCK checkpoints (plain Python,
no NumPy) for the README's run screenshots: 8 layers of a transformer-like
model over 12 checkpoints, layer 5's MLP weights drifting upward, and loss,
lr and optimizer name in the metadata.

    tools/makerun.py DIR
"""
import math
import os
import random
import struct
import sys
from array import array


def write_oxck(path, metadata, tensors):
    meta = "{" + ",".join('"%s":"%s"' % (k, metadata[k]) for k in sorted(metadata)) + "}"
    meta = meta.encode()
    out = bytearray(b"OXCK" + struct.pack("<IQQI", 1, 0, len(tensors), len(meta)) + meta)
    for name, shape, values in tensors:
        n = name.encode()
        out += struct.pack("<I", len(n)) + n + struct.pack("<I", len(shape))
        out += struct.pack("<%dQ" % len(shape), *shape)
        data = array("f", values)
        if sys.byteorder != "little":
            data.byteswap()
        out += struct.pack("<Q", len(values)) + data.tobytes()
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(out)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    folder = sys.argv[1]
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(12)
    layers, width, steps = 8, 48, 12
    for i in range(steps):
        step = i * 100
        tensors = [("embed.weight", [64, width], [rng.gauss(0, 0.02) for _ in range(64 * width)])]
        for layer in range(layers):
            # Weights settle a little over training; layer 5's MLP drifts.
            scale = 0.05 * (1 + 0.1 * layer) * (1 - 0.02 * i)
            mlp = scale * (1.35 ** i if layer == 5 else 1)
            shift = 0.004 * i if layer == 5 else 0
            tensors.append(("layers.%d.attn.q.weight" % layer, [width, width],
                            [rng.gauss(0, scale) for _ in range(width * width)]))
            tensors.append(("layers.%d.mlp.fc.weight" % layer, [width, width],
                            [rng.gauss(shift, mlp) for _ in range(width * width)]))
            tensors.append(("layers.%d.norm.weight" % layer, [width],
                            [1 + rng.gauss(0, 0.01 * (i + 1)) for _ in range(width)]))
        loss = 2.3 * math.exp(-i / 5) + 0.4 + rng.gauss(0, 0.02)
        lr = 3e-4 * 0.5 * (1 + math.cos(math.pi * i / steps))
        write_oxck(os.path.join(folder, "step_%05d.oxck" % step),
                   {"step": str(step), "loss": "%.4f" % loss, "lr": "%.6g" % lr,
                    "optimizer": "adamw"}, tensors)


if __name__ == "__main__":
    main()
