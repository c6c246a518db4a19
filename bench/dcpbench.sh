#!/usr/bin/env bash
# PyTorch distributed checkpoints (issue 40): a 1 GiB DCP folder of 8 rank
# files (64 f32 tensors, each split by rows over the ranks) against the same
# tensors in one safetensors file — `info --json` (≤ 1.5×: the plan is read
# at open, no chunk), `stats` (≤ 1.3×) — and `convert` of the folder
# to safetensors against `cp --reflink=never` + `sync` of the same bytes
# (≤ 1.5×), all from the page cache; and the peak RSS of `stats` of one 1 GiB
# tensor spread over 8 files (read in bounded windows, never whole). The
# folders come from bench/makept.py (Python's own pickler, no PyTorch),
# written once into $CKPTSCOPE_BENCH_DATA/dcp.
#
#   bench/dcpbench.sh [BUILD_DIR]     (default build/release)
set -euo pipefail
BUILD=${1:-build/release}
RUNS=${RUNS:-5}
C=$BUILD/app/ckptscope-cli
# shellcheck source=benchlib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/benchlib.sh"
bench_scratch
require_exe dcpbench.sh "$C"
HERE=$(dirname "$0")

MODEL=$CKPTSCOPE_BENCH_DATA/dcp/model    # 64 tensors of 16 MiB
ONE=$CKPTSCOPE_BENCH_DATA/dcp/one        # one tensor of 1 GiB
[ -s "$MODEL/single.safetensors" ] || "$PYTHON" "$HERE/makept.py" dcp "$MODEL" 1073741824 8 64
[ -s "$ONE/single.safetensors" ] || "$PYTHON" "$HERE/makept.py" dcp "$ONE" 1073741824 8 1
cat "$MODEL"/ckpt/* "$MODEL/single.safetensors" "$ONE"/ckpt/* >/dev/null # warm the page cache
OUT=$(dirname "$MODEL")/out.safetensors   # on the same file system as the copy
COPY=$(dirname "$MODEL")/copy.safetensors
trap 'rm -rf "$TMP" "$OUT" "$COPY"' EXIT

copy() { rm -f "$COPY"; cp --reflink=never "$MODEL/single.safetensors" "$COPY" && sync; }
convert() { rm -f "$OUT"; "$C" convert "$MODEL/ckpt" "$OUT"; }
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
read -r info_d info_s < <(pair dcp single -- "$C" info --json "$MODEL/ckpt" -- "$C" info --json "$MODEL/single.safetensors")
read -r stats_d stats_s < <(pair dcp single -- "$C" stats --json "$MODEL/ckpt" -- "$C" stats --json "$MODEL/single.safetensors")
read -r conv cp_s < <(pair convert copy -- convert -- copy)
rss=$(rss_of "$C" stats --json "$ONE/ckpt")
rss_conv=$(rss_of "$C" convert "$ONE/ckpt" "$TMP/one.safetensors")

echo
echo "| target | measured | reference | ratio | bar | verdict |"
echo "|---|---|---|---|---|---|"
row "info --json, 1 GiB DCP (8 files, 64 tensors, 512 chunks)" "$(ms "$info_d")" "the same in one safetensors $(ms "$info_s")" "$(ratio "$info_d" "$info_s")" "≤ 1.5" "$(verdict "$(ratio "$info_d" "$info_s")" 1.5)"
row "stats of it" "$(ms "$stats_d")" "the same in one safetensors $(ms "$stats_s")" "$(ratio "$stats_d" "$stats_s")" "≤ 1.3" "$(verdict "$(ratio "$stats_d" "$stats_s")" 1.3)"
row "convert it to safetensors" "$(ms "$conv")" "cp --reflink=never + sync $(ms "$cp_s")" "$(ratio "$conv" "$cp_s")" "≤ 1.5" "$(verdict "$(ratio "$conv" "$cp_s")" 1.5)"
row "peak RSS, stats of one 1 GiB tensor over 8 files" "$(mib "$rss")" "the tensor: 1024 MiB" "" "≤ 256 MiB" "$(verdict "$rss" 262144)"
row "peak RSS, convert of it" "$(mib "$rss_conv")" "the tensor: 1024 MiB" "" "" ""
bench_exit
