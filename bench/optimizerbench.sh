#!/usr/bin/env bash
# The optimizer's figures (issue 42): `stats --optimizer` of a Trainer
# checkpoint folder holding a 1 GiB model (64 f32 weights) and an
# optimizer.pt with AdamW's exp_avg and exp_avg_sq (2 GiB), against `cat` of
# the two files (≤ 1.3×: one pass over weights and moments together), both
# from the page cache, and the peak RSS (the moments are read in blocks,
# never whole). The folder comes from bench/makept.py (no PyTorch needed),
# written once into $CKPTSCOPE_BENCH_DATA/optimizer.
#
#   bench/optimizerbench.sh [BUILD_DIR]     (default build/release)
set -euo pipefail
BUILD=${1:-build/release}
RUNS=${RUNS:-5}
C=$BUILD/app/ckptscope-cli
# shellcheck source=benchlib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/benchlib.sh"
bench_scratch
require_exe optimizerbench.sh "$C"
HERE=$(dirname "$0")

DIR=$CKPTSCOPE_BENCH_DATA/optimizer/checkpoint-1000
[ -s "$DIR/optimizer.pt" ] || "$PYTHON" "$HERE/makept.py" adam-checkpoint "$DIR" 1073741824 64
cat "$DIR/model.safetensors" "$DIR/optimizer.pt" >/dev/null # warm the page cache

catboth() { cat "$DIR/model.safetensors" "$DIR/optimizer.pt" >/dev/null; }
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
read -r ours cat_s < <(pair ours cat -- "$C" stats --optimizer --json "$DIR" -- catboth)
rss=$(rss_of "$C" stats --optimizer --json "$DIR")

echo
echo "| target | measured | reference | ratio | bar | verdict |"
echo "|---|---|---|---|---|---|"
row "stats --optimizer, 1 GiB model + 2 GiB AdamW state" "$(ms "$ours")" "cat of both $(ms "$cat_s")" "$(ratio "$ours" "$cat_s")" "≤ 1.3" "$(verdict "$(ratio "$ours" "$cat_s")" 1.3)"
row "peak RSS of it" "$(mib "$rss")" "the files: 3072 MiB" "" "" ""
bench_exit
