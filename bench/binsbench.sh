#!/usr/bin/env bash
# A histogram of any bin count (issue 38, item 9): `stats --json --bins N`
# against `stats` alone (no histogram) for N = 10, 32, 64, 65, 100 and 1000,
# on 512 MiB of F32 (an OXCK file of 256 tensors), on a Q4_K GGUF of
# 471 MiB (878 M values) and on 64 MiB of F32 in 50 000 tensors (where the
# JSON text of the histograms is the larger part), from the page cache.
# Bar: ≤ 1.35× `stats` alone.
# The files come from `ckptscope-cli generate`, written once into
# $CKPTSCOPE_BENCH_DATA/bins.
#
#   bench/binsbench.sh [BUILD_DIR]     (default build/release)
set -euo pipefail
BUILD=${1:-build/release}
RUNS=${RUNS:-7}
C=$BUILD/app/ckptscope-cli
# shellcheck source=benchlib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/benchlib.sh"
bench_scratch
require_exe binsbench.sh "$C"
DATA=$CKPTSCOPE_BENCH_DATA/bins
mkdir -p "$DATA"
[ -s "$DATA/f32.oxck" ] || "$C" generate oxck "$DATA/f32.oxck" --size 512M 2>/dev/null
[ -s "$DATA/q4k.gguf" ] || "$C" generate gguf "$DATA/q4k.gguf" --type Q4_K --size 512M 2>/dev/null
[ -s "$DATA/many.oxck" ] || "$C" generate oxck "$DATA/many.oxck" --tensors 50000 --size 64M 2>/dev/null
cat "$DATA/f32.oxck" "$DATA/q4k.gguf" "$DATA/many.oxck" >/dev/null # warm the page cache

echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| file | bins | \`stats --json --bins N\` | \`stats\` alone | ratio | bar | verdict |"
echo "|---|---|---|---|---|---|---|"
for f in f32.oxck q4k.gguf many.oxck; do
    for bins in 10 32 64 65 100 1000; do
        read -r withBins alone < <(pair bins alone -- "$C" stats "$DATA/$f" --json --bins "$bins" -- "$C" stats "$DATA/$f")
        r=$(ratio "$withBins" "$alone")
        printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$f" "$bins" "$(ms "$withBins")" "$(ms "$alone")" "$r" "≤ 1.35" "$(verdict "$r" 1.35)"
    done
done
bench_exit
