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
# A synthetic run (tools/makerun.py: layer 5's MLP weights drift) in the
# layer profile, with its own summary cache so nothing of the user's is used.
run=$(mktemp -d)
trap 'rm -rf "$XDG_CONFIG_HOME" "$run"' EXIT
python3 tools/makerun.py "$run/run"
XDG_CACHE_HOME="$run/cache" "$app" --screenshot "$out/layer-profile.png" \
    --select layers.5.mlp.fc.weight --tab "Layer profile" --size 1400x860 "$run/run"
echo "screenshots written to $out"
