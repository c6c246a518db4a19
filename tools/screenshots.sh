#!/usr/bin/env bash
# Renders the README screenshots offscreen from the bundled samples:
#   tools/screenshots.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/dev}
app="$build/app/ckptscope"
out=docs/screenshots
mkdir -p "$out"
export QT_QPA_PLATFORM=offscreen
# A private settings folder, so saved window layouts don't leak in.
export XDG_CONFIG_HOME
XDG_CONFIG_HOME=$(mktemp -d)
trap 'rm -rf "$XDG_CONFIG_HOME"' EXIT

"$app" --screenshot "$out/tensor-histogram.png" --select layers.2.attn.v.weight \
    --size 1400x860 resources/samples/model_sample.oxck
"$app" --screenshot "$out/gradient-overview.png" --tab Overview \
    --size 1400x860 resources/samples/gradient_sample.json
"$app" --screenshot "$out/gradient-graph.png" --tab Graph \
    --size 1400x860 resources/samples/gradient_sample.json

# Two gradient checkpoints to compare: the sample as A, and as B the sample a
# step later with a matmul removed, a dropout added, the metadata of that
# matmul's producer and an Adam moment changed (made with python3 from the
# sample).
pair=$(mktemp -d)
trap 'rm -rf "$XDG_CONFIG_HOME" "$pair"' EXIT
cp resources/samples/gradient_sample.json "$pair/step-1200.json"
python3 - resources/samples/gradient_sample.json "$pair/step-1250.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
nodes, edges = g["graph"]["nodes"], g["graph"]["edges"]
def key_of(op, n):
    return [k for k in sorted(nodes) if nodes[k]["op"] == op][n]
rm, src = key_of("matmul", 12), key_of("attention", 2)
ch = [e[0] for e in edges if e[1] == rm][0]
g["step"] += 50
g["timestamp"] += 3600
nodes["added-dropout-0"] = {"id": "added-dropout-0", "op": "dropout",
                            "input_cids": [nodes[src]["output_cid"]], "output_cid": None,
                            "gradient_cid": None, "metadata": {"p": "0.1"}}
edges.append([src, "added-dropout-0"])
del nodes[rm]
g["graph"]["edges"] = [e for e in edges if rm not in e]
nodes[ch]["metadata"]["eps"] = "1e-6"
m = g["optimizer_state"]["layers.0.mlp.up.weight.exp_avg"]
for i in range(1, 2048, 4):
    m[i] = (m[i] + 7) % 256
json.dump(g, open(sys.argv[2], "w"), indent=2)
PY
"$app" --compare --screenshot "$out/compare-graph.png" --size 1500x900 \
    "$pair/step-1200.json" "$pair/step-1250.json"

# A synthetic run (tools/makerun.py: layer 5's MLP weights drift) in the
# layer profile, with its own summary cache so nothing of the user's is used.
run=$(mktemp -d)
trap 'rm -rf "$XDG_CONFIG_HOME" "$pair" "$run"' EXIT
python3 tools/makerun.py "$run/run"
XDG_CACHE_HOME="$run/cache" "$app" --screenshot "$out/layer-profile.png" \
    --select layers.5.mlp.fc.weight --tab "Layer profile" --size 1400x860 "$run/run"
XDG_CACHE_HOME="$run/cache" "$app" --screenshot "$out/run-view.png" \
    --select layers.5.mlp.fc.weight --tab "Over steps" --size 1400x860 "$run/run"
# A Trainer run with AdamW's state (bench/makept.py adam-run: layer 9's
# updates grow 4x per checkpoint, layer 2's are frozen) in the layer profile
# of update / weight.
python3 bench/makept.py adam-run "$run/adam" 6
XDG_CACHE_HOME="$run/cache" "$app" --screenshot "$out/optimizer-profile.png" \
    --select model.layers.9.mlp.down_proj.weight --tab "Layer profile" \
    --statistic "update / weight" --size 1400x860 "$run/adam"
# The same as a Hugging Face Trainer writes it: the loss as logged at every
# 10 steps (trainer_state.json), the checkpoints as dots.
python3 tools/makerun.py "$run/trainer" --trainer
XDG_CACHE_HOME="$run/cache" "$app" --screenshot "$out/trainer-loss.png" \
    --tab Metadata --size 1400x860 "$run/trainer"
# Two checkpoints of that run compared: layer 5's drift stands out in the tree.
XDG_CACHE_HOME="$run/cache" "$app" --compare --screenshot "$out/compare-view.png" \
    --size 1400x860 "$run/run/step_00500.oxck" "$run/run/step_01100.oxck"
# A quantized GGUF (written by generate gguf): the Values page of a Q4_K
# tensor with the Block panel taking the selected element apart.
gguf=$(mktemp -d)
trap 'rm -rf "$XDG_CONFIG_HOME" "$pair" "$run" "$gguf"' EXIT
"$build/app/ckptscope-cli" generate gguf "$gguf/model-Q4_K.gguf" --type Q4_K --size 8M 2>/dev/null
"$app" --screenshot "$out/gguf-block-panel.png" --select blk.0.attn_q.weight --tab Values \
    --size 1400x860 "$gguf/model-Q4_K.gguf"
echo "screenshots written to $out"

# PyTorch checkpoints, read in place from the conformance corpus when it is
# beside the clone (never copied into the repository): a Trainer optimizer's
# moments named by parameter, a Lightning checkpoint's object tree, and the
# banner of a pickle that would run a command.
pt="${CKPTSCOPE_CONFORMANCE_DIR:-../shared/conformance}/pytorch"
if [ -d "$pt/valid" ]; then
    "$app" --screenshot "$out/pytorch-optimizer.png" --select state.16.exp_avg \
        --size 1400x860 "$pt/valid/checkpoint-50/optimizer.pt"
    "$app" --screenshot "$out/pytorch-metadata.png" --tab Metadata \
        --size 1400x860 "$pt/valid/lightning/epoch=2-step=150.ckpt"
    "$app" --screenshot "$out/pytorch-unsafe.png" --tab Overview \
        --size 1400x860 "$pt/invalid/malicious-os-system.pt"
else
    echo "screenshots: no PyTorch corpus at $pt; its three shots are kept as they are" >&2
fi
