#!/usr/bin/env bash
# GGUF statistics and diff (issue 23): `stats` of 1 GiB of Q4_K (≤ 2.0×,
# since issue 38 item 11 ≤ 1.6×), of 1 GiB of Q1_0 (≤ 1.5×), and of 1 GiB
# of Q4_0, Q8_0, Q6_K, Q5_K, Q3_K and Q2_K (item 11: ≤ 1.6×) against
# `cat FILE > /dev/null`, and
# `diff` of an f32 model against its Q4_K GGUF (≤ 1.5×) against
# `cat A B > /dev/null`.
# The bars are read on each command as it runs by default: the statistics
# (`stats`' table) and the text report of `diff`. `stats --json`, which
# adds a 32-bin histogram per tensor (a second pass), is timed beside them.
# The files come from `ckptscope-cli generate gguf` (the f32 model is the
# GGUF's dequantized twin, about 1 GiB), written once into
# $CKPTSCOPE_BENCH_DATA/gguf; the page cache is warmed before timing.
#
#   bench/ggufbench.sh [BUILD_DIR]     (default build/release)
set -euo pipefail
BUILD=${1:-build/release}
RUNS=${RUNS:-5}
unset HYPERFINE # diff_b below is a shell function (exit 1 is "dtypes differ")
C=$BUILD/app/ckptscope-cli
# shellcheck source=benchlib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/benchlib.sh"
bench_scratch
require_exe ggufbench.sh "$C"

DATA=$CKPTSCOPE_BENCH_DATA/gguf
mkdir -p "$DATA"
Q4K=$DATA/q4_k-1G.gguf
Q1=$DATA/q1_0-1G.gguf
Q40=$DATA/q4_0-1G.gguf
Q80=$DATA/q8_0-1G.gguf
KQ=(Q6_K Q5_K Q3_K Q2_K) # each in $DATA/<type>-1G.gguf
PAIR_A=$DATA/pair-f32.safetensors
PAIR_B=$DATA/pair-q4_k.gguf
[ -s "$Q4K" ] || "$C" generate gguf "$Q4K" --type Q4_K --size 1G 2>/dev/null
[ -s "$Q1" ] || "$C" generate gguf "$Q1" --type Q1_0 --size 1G 2>/dev/null
[ -s "$Q40" ] || "$C" generate gguf "$Q40" --type Q4_0 --size 1G 2>/dev/null
[ -s "$Q80" ] || "$C" generate gguf "$Q80" --type Q8_0 --size 1G 2>/dev/null
kq_file() { echo "$DATA/$(echo "$1" | tr '[:upper:]' '[:lower:]')-1G.gguf"; }
for t in "${KQ[@]}"; do
    [ -s "$(kq_file "$t")" ] || "$C" generate gguf "$(kq_file "$t")" --type "$t" --size 1G 2>/dev/null
done
# 144 MiB of Q4_K: 1.0 GB of f32 values.
if [ ! -s "$PAIR_A" ] || [ ! -s "$PAIR_B" ]; then
    "$C" generate gguf "$PAIR_B" --type Q4_K --size 144M --f32-twin "$PAIR_A" 2>/dev/null
fi
# The page cache read afresh, for both sides: dropped, then read back. A
# fresh read is held in large folios and `cat` is at its fastest; after
# other reads and madvise calls they may be split and `cat` slows by up to
# 2x, ours much less, which would flatten the ratios (docs/PERFORMANCE.md).
for f in "$Q4K" "$Q1" "$Q40" "$Q80" "$PAIR_A" "$PAIR_B"; do
    dd if="$f" iflag=nocache count=0 status=none
done
cat "$Q4K" "$Q1" "$Q40" "$Q80" "$PAIR_A" "$PAIR_B" >/dev/null
declare -A kq_s kq_cat
for t in "${KQ[@]}"; do
    cat "$(kq_file "$t")" >/dev/null
    read -r "kq_s[$t]" "kq_cat[$t]" < <(pair stats cat -- "$C" stats "$(kq_file "$t")" -- cat "$(kq_file "$t")")
done
diff_b() { "$C" diff "$PAIR_A" "$PAIR_B" || [ $? = 1 ]; } # 1: dtypes differ
# Median CPU seconds (user + sys, all threads) of RUNS runs: on this shared
# VM the wall times follow the load, the CPU times much less.
cpu() {
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -f '%U %S' -o "$TMP/cpu" "$@" >/dev/null 2>&1 || true
        tail -n 1 "$TMP/cpu" | awk '{ print $1 + $2 }' # after any "exited with status" line
    done | median
}

echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
read -r q4k_s q4k_cat < <(pair stats cat -- "$C" stats "$Q4K" -- cat "$Q4K")
read -r q4kj_s q4kj_cat < <(pair stats cat -- "$C" stats --json "$Q4K" -- cat "$Q4K")
read -r q1_s q1_cat < <(pair stats cat -- "$C" stats "$Q1" -- cat "$Q1")
read -r q1j_s q1j_cat < <(pair stats cat -- "$C" stats --json "$Q1" -- cat "$Q1")
read -r q40_s q40_cat < <(pair stats cat -- "$C" stats "$Q40" -- cat "$Q40")
read -r q80_s q80_cat < <(pair stats cat -- "$C" stats "$Q80" -- cat "$Q80")
read -r diff_s diff_cat < <(pair diff cat -- diff_b -- cat "$PAIR_A" "$PAIR_B")
if [ -x /usr/bin/time ]; then
    q4k_cpu="$(cpu "$C" stats "$Q4K") s / $(cpu cat "$Q4K") s"
    q4kj_cpu="$(cpu "$C" stats --json "$Q4K") s / $(cpu cat "$Q4K") s"
    q1_cpu="$(cpu "$C" stats "$Q1") s / $(cpu cat "$Q1") s"
    q1j_cpu="$(cpu "$C" stats --json "$Q1") s / $(cpu cat "$Q1") s"
    q40_cpu="$(cpu "$C" stats "$Q40") s / $(cpu cat "$Q40") s"
    q80_cpu="$(cpu "$C" stats "$Q80") s / $(cpu cat "$Q80") s"
    diff_cpu="$(cpu "$C" diff "$PAIR_A" "$PAIR_B") s / $(cpu cat "$PAIR_A" "$PAIR_B") s"
else
    q4k_cpu=— q4kj_cpu=— q1_cpu=— q1j_cpu=— q40_cpu=— q80_cpu=— diff_cpu=—
fi

echo
echo "| target | measured | reference | ratio | bar | verdict | CPU ours / reference |"
echo "|---|---|---|---|---|---|---|"
crow() { printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$@"; }
# The statistics carry the bars; with their histograms (--json) beside them.
crow "stats 1 GiB Q4_K" "$(ms "$q4k_s")" "cat $(ms "$q4k_cat")" "$(ratio "$q4k_s" "$q4k_cat")" "≤ 1.6" "$(verdict "$(ratio "$q4k_s" "$q4k_cat")" 1.6)" "$q4k_cpu"
crow "stats --json 1 GiB Q4_K (+ histograms)" "$(ms "$q4kj_s")" "cat $(ms "$q4kj_cat")" "$(ratio "$q4kj_s" "$q4kj_cat")" "–" "–" "$q4kj_cpu"
crow "stats 1 GiB Q1_0" "$(ms "$q1_s")" "cat $(ms "$q1_cat")" "$(ratio "$q1_s" "$q1_cat")" "≤ 1.5" "$(verdict "$(ratio "$q1_s" "$q1_cat")" 1.5)" "$q1_cpu"
crow "stats --json 1 GiB Q1_0 (+ histograms)" "$(ms "$q1j_s")" "cat $(ms "$q1j_cat")" "$(ratio "$q1j_s" "$q1j_cat")" "–" "–" "$q1j_cpu"
crow "stats 1 GiB Q4_0" "$(ms "$q40_s")" "cat $(ms "$q40_cat")" "$(ratio "$q40_s" "$q40_cat")" "≤ 1.6" "$(verdict "$(ratio "$q40_s" "$q40_cat")" 1.6)" "$q40_cpu"
crow "stats 1 GiB Q8_0" "$(ms "$q80_s")" "cat $(ms "$q80_cat")" "$(ratio "$q80_s" "$q80_cat")" "≤ 1.6" "$(verdict "$(ratio "$q80_s" "$q80_cat")" 1.6)" "$q80_cpu"
for t in "${KQ[@]}"; do
    r=$(ratio "${kq_s[$t]}" "${kq_cat[$t]}")
    crow "stats 1 GiB $t" "$(ms "${kq_s[$t]}")" "cat $(ms "${kq_cat[$t]}")" "$r" "≤ 1.6" "$(verdict "$r" 1.6)" "–"
done
crow "diff f32 (1.0 GB) vs its Q4_K GGUF" "$(ms "$diff_s")" "cat A B $(ms "$diff_cat")" "$(ratio "$diff_s" "$diff_cat")" "≤ 1.5" "$(verdict "$(ratio "$diff_s" "$diff_cat")" 1.5)" "$diff_cpu"
bench_exit
