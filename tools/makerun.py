#!/usr/bin/env python3
"""Writes a small synthetic training run of OXCK checkpoints (plain Python,
no NumPy) for the README's run screenshots: 8 layers of a transformer-like
model over 12 checkpoints, layer 5's MLP weights drifting upward, and loss,
lr and optimizer name in the metadata. With --trainer, laid out as a
Hugging Face Trainer writes a run: checkpoint-N/ folders, each with its
model and a trainer_state.json whose log_history has the loss every 10
steps (a spike at step 730) and an evaluation every 250.

    tools/makerun.py DIR [--trainer]
"""
import json
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


def trainer_log(rng, last):
    """log_history up to step `last`, as the Trainer writes it."""
    log = []
    for step in range(10, last + 1, 10):
        loss = 2.3 * math.exp(-step / 500) + 0.4 + rng.gauss(0, 0.04)
        if step == 730:
            loss += 1.5  # a bad batch
        lr = 3e-4 * 0.5 * (1 + math.cos(math.pi * step / 1100))
        log.append({"epoch": round(step / 1100, 4), "grad_norm": round(abs(rng.gauss(1, 0.2)), 4),
                    "learning_rate": lr, "loss": round(loss, 4), "step": step})
        if step % 250 == 0:
            log.append({"epoch": round(step / 1100, 4),
                        "eval_loss": round(2.3 * math.exp(-step / 600) + 0.55, 4), "step": step})
    return log


def main():
    trainer = "--trainer" in sys.argv[1:]
    args = [a for a in sys.argv[1:] if a != "--trainer"]
    if len(args) != 1:
        sys.exit(__doc__)
    folder = args[0]
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
        if not trainer:
            write_oxck(os.path.join(folder, "step_%05d.oxck" % step),
                       {"step": str(step), "loss": "%.4f" % loss, "lr": "%.6g" % lr,
                        "optimizer": "adamw"}, tensors)
            continue
        if step == 0:
            continue  # the Trainer saves no checkpoint before training
        ck = os.path.join(folder, "checkpoint-%d" % step)
        os.makedirs(ck, exist_ok=True)
        write_oxck(os.path.join(ck, "model.oxck"), {}, tensors)
        state = {"global_step": step, "log_history": trainer_log(random.Random(7), step),
                 "max_steps": 1100}
        with open(os.path.join(ck, "trainer_state.json"), "w") as f:
            json.dump(state, f, indent=2)


if __name__ == "__main__":
    main()
