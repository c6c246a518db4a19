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
# step later with a matmul removed, a dropout added, a layer norm's metadata
# and an Adam moment changed (made with jq from the sample).
pair=$(mktemp -d)
trap 'rm -rf "$XDG_CONFIG_HOME" "$pair"' EXIT
cp resources/samples/gradient_sample.json "$pair/step-1200.json"
jq '
  def key_of(op; n): [.graph.nodes | to_entries[] | select(.value.op == op) | .key][n];
  key_of("matmul"; 12) as $rm | key_of("layer_norm"; 3) as $ch | key_of("attention"; 2) as $src
  | .step += 50 | .timestamp += 3600
  | .graph.nodes["added-dropout-0"] = {id: "added-dropout-0", op: "dropout",
      input_cids: [.graph.nodes[$src].output_cid], output_cid: null, gradient_cid: null,
      metadata: {p: "0.1"}}
  | .graph.edges += [[$src, "added-dropout-0"]]
  | .graph.nodes |= del(.[$rm])
  | .graph.edges |= map(select(.[0] != $rm and .[1] != $rm))
  | .graph.nodes[$ch].metadata.eps = "1e-6"
  | .optimizer_state["layers.0.mlp.up.weight.exp_avg"] |=
      [to_entries[] | if .key % 4 == 1 and .key < 2048 then (.value + 7) % 256 else .value end]
' resources/samples/gradient_sample.json >"$pair/step-1250.json"
"$app" --compare --screenshot "$out/compare-graph.png" --size 1500x900 \
    "$pair/step-1200.json" "$pair/step-1250.json"
echo "screenshots written to $out"
