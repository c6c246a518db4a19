#!/usr/bin/env bash
# Export and conversion targets of docs/PERFORMANCE.md, each side by side
# with its reference (runs alternating, medians compared):
#   - export a 256 MiB tensor to .npy  vs  cp --reflink=never of as many bytes + sync
#   - convert a 1 GiB OXCK file to safetensors  vs  cp --reflink=never of it + sync
#   - open + list a 1 GiB safetensors file  vs  the same tensors in 1 MiB
# Our writes fsync before renaming, so the reference syncs its copy too.
#
#   bench/compare-export.sh [BUILD_DIR]   (default build/release; run by compare.sh)
#
# Only ckptscope-cli is needed. Inputs are generated once into
# $CKPTSCOPE_BENCH_DATA (default BUILD_DIR/bench-data); outputs go to a
# temporary folder beside them (same file system as the inputs).
set -euo pipefail

BUILD=${1:-build/release}
RUNS=${RUNS:-5}
CLI=$BUILD/app/ckptscope-cli
DATA=${CKPTSCOPE_BENCH_DATA:-$BUILD/bench-data}
# shellcheck source=benchlib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/benchlib.sh"
require_exe compare-export.sh "$CLI"
mkdir -p "$DATA"
OUT=$(mktemp -d "$DATA/export-XXXXXX")
trap 'rm -rf "$OUT"' EXIT
TMP=$OUT # benchlib.sh's scratch files, beside the outputs

# The reference write: a plain copy of SRC's first BYTES bytes, then sync.
copy_sync() { # SRC DST
    cp --reflink=never "$1" "$2" && sync "$2"
}
export -f copy_sync

# Inputs: one 256 MiB tensor; 256 tensors in 1 GiB and in 1 MiB (OXCK and
# safetensors).
T256=$DATA/tensor-256M.oxck
L=$DATA/oxck-1G-256.oxck
S=$DATA/oxck-1M-256.oxck
[ -f "$T256" ] || "$CLI" generate oxck "$T256" --tensors 1 --size 256M
[ -f "$L" ] || "$CLI" generate oxck "$L" --tensors 256 --size 1G
[ -f "$S" ] || "$CLI" generate oxck "$S" --tensors 256 --size 1M
[ -f "$DATA/st-1G.safetensors" ] || "$CLI" convert "$L" "$DATA/st-1G.safetensors"
[ -f "$DATA/st-1M.safetensors" ] || "$CLI" convert "$S" "$DATA/st-1M.safetensors"
for f in "$T256" "$L" "$S" "$DATA"/st-1*.safetensors; do cat "$f" >/dev/null; done

# A same-size file for the 256 MiB reference: the tensor's bytes.
NAME=$("$CLI" info "$T256" --json | sed -n 's/.*"name": "\(.*\)".*/\1/p' | head -1)
BYTES=$(( $("$CLI" info "$T256" --json | sed -n 's/.*"data_len": \([0-9]*\).*/\1/p' | head -1) * 4 ))
head -c "$BYTES" "$T256" >"$OUT/ref-256M"

row "Figure" "Ckptscope" "Reference" "Ratio" "Target" "Result"
row "---" "---:" "---:" "---:" "---" "---"
read -r ours ref < <(pair -- "$CLI" export "$T256" --tensor "$NAME" -o "$OUT/t.npy" \
    -- bash -c 'copy_sync "$0" "$1"' "$OUT/ref-256M" "$OUT/copy")
r=$(ratio "$ours" "$ref")
row "Export a 256 MiB tensor to .npy (\`ckptscope-cli export F --tensor N -o t.npy\`)" "$(ms "$ours")" "\`cp --reflink=never\` + \`sync\`: $(ms "$ref")" "$r" "≤ 1.5" "$(verdict "$r" 1.5)"
read -r ours ref < <(pair -- "$CLI" convert "$L" "$OUT/l.safetensors" \
    -- bash -c 'copy_sync "$0" "$1"' "$L" "$OUT/copy")
r=$(ratio "$ours" "$ref")
row "Convert a 1 GiB OXCK file to safetensors (\`ckptscope-cli convert F F.safetensors\`)" "$(ms "$ours")" "\`cp --reflink=never\` + \`sync\`: $(ms "$ref")" "$r" "≤ 1.5" "$(verdict "$r" 1.5)"
read -r big small < <(pair -- "$CLI" info "$DATA/st-1G.safetensors" --json -- "$CLI" info "$DATA/st-1M.safetensors" --json)
r=$(ratio "$big" "$small")
row "Open + list 256 tensors, 1 GiB safetensors file (\`ckptscope-cli info F --json\`)" "$(ms "$big")" "1 MiB file: $(ms "$small")" "$r" "≤ 1.5" "$(verdict "$r" 1.5)"
