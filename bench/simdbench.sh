#!/usr/bin/env bash
# F32 statistics at the memory limit with each instruction set (issue 38,
# item 12): `stats --json` of the 1 GiB OXCK file (256 tensors, 32-bin
# histograms) against `cat` of it, and `timeline --json --no-cache` of a run
# of 8 × 256 MiB checkpoints (64-bin histograms) against `cat` of its files,
# once with the widest kernels the CPU has and once with AVX2 alone
# (CKPTSCOPE_SIMD=avx2: the kernels an AVX2-only CPU runs, on this CPU).
# Bars: ≤ 1.0× with AVX-512, ≤ 1.2× with AVX2 only. Files from the page
# cache; each pair alternates its two commands (bench/benchlib.sh).
#
#   bench/simdbench.sh [BUILD_DIR]     (default build/release; `make bench`)
set -euo pipefail
BUILD=${1:-build/release}
RUNS=${RUNS:-9}
C=$BUILD/app/ckptscope-cli
TOOL=$BUILD/bench/ckptscope-benchtool
# shellcheck source=benchlib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/benchlib.sh"
bench_scratch
require_exe simdbench.sh "$C" "$TOOL"
MODEL=$("$TOOL" path oxck-1G)
RUN=$("$TOOL" path run-8x256M)
cat "$MODEL" "$RUN"/*.oxck >/dev/null # warm the page cache
simd=$(grep -qw avx512f /proc/cpuinfo && echo "AVX-512" || echo "AVX2")

echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg); widest kernels here: $simd"
echo
echo "| command | kernels | ckptscope | \`cat\` | ratio | bar | verdict |"
echo "|---|---|---|---|---|---|---|"
measure() { # LABEL KERNELS BAR CAT_FILES... -- COMMAND...
    local label=$1 kernels=$2 bar=$3 files=() got ref r
    shift 3
    while [ "$1" != "--" ]; do files+=("$1"); shift; done
    shift
    read -r got ref < <(pair a b -- "$@" -- cat "${files[@]}")
    r=$(ratio "$got" "$ref")
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$kernels" "$(ms "$got")" "$(ms "$ref")" "$r" "≤ $bar" "$(verdict "$r" "$bar")"
}
for kernels in widest avx2; do
    if [ "$kernels" = widest ]; then
        [ "$simd" = "AVX-512" ] && bar=1.0 || bar=1.2
        env=(env -u CKPTSCOPE_SIMD)
        name=$simd
    else
        bar=1.2
        env=(env CKPTSCOPE_SIMD=avx2)
        name="AVX2 (CKPTSCOPE_SIMD=avx2)"
    fi
    measure "\`stats --json\` 1 GiB F32" "$name" "$bar" "$MODEL" -- "${env[@]}" "$C" stats "$MODEL" --json
    measure "\`timeline --json --no-cache\` 8 × 256 MiB" "$name" "$bar" "$RUN"/*.oxck -- "${env[@]}" "$C" timeline "$RUN" --json --no-cache
done
bench_exit
