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
echo "screenshots written to $out"
