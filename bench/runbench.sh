#!/usr/bin/env bash
# The speed and memory targets of issue 12 (a training run at a glance) that
# bench/compare.sh does not measure: re-opening a run from the summary cache,
# peak RSS of a large run, the run window's start to painted chart, and
# `info --json` on a 10 000-node gradient checkpoint against Python.
#
#   bench/runbench.sh [BUILD_DIR]          (default build/release; `make bench`)
#
# Environment: RUNS (default 5; the info pair 3 × RUNS), PYTHON (default
# /usr/bin/python3), CKPTSCOPE_BENCH_DATA (inputs, default
# BUILD_DIR/bench-data: run-8x256M is 2 GiB, run-100x300 100 MiB),
# STRICT=1 (exit 1 when a target is missed). A cold cache is a fresh, empty
# XDG_CACHE_HOME; the page cache is warm throughout. Peak RSS from
# /usr/bin/time, else Python's resource module. Shared helpers:
# bench/benchlib.sh.
set -euo pipefail

BUILD=${1:-build/release}
RUNS=${RUNS:-5}
CLI=$BUILD/app/ckptscope-cli
TOOL=$BUILD/bench/ckptscope-benchtool
GUI=$BUILD/bench/ckptscope-guibench
# shellcheck source=benchlib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/benchlib.sh"
bench_scratch
require_exe runbench.sh "$CLI" "$TOOL"
unset CKPTSCOPE_CACHE_MAX_BYTES

# --- measuring ---------------------------------------------------------------

# Milliseconds of one run of a command, output discarded.
ms_of() { seconds "$@" | awk '{ printf "%.1f\n", $1 * 1000 }'; }
# A fresh, empty cache folder (a cold cache).
fresh_cache() { mktemp -d "$TMP/cache.XXXXXX"; }

# --- inputs ------------------------------------------------------------------

RUN8=$("$TOOL" path run-8x256M)
RUN100=$("$TOOL" path run-100x300)
GRAPH=$("$TOOL" path gradient-10k)
cat "$RUN8"/* "$RUN100"/* "$GRAPH" >/dev/null # page cache warm

echo "# Ckptscope: issue 12 targets ($(date -u '+%Y-%m-%d %H:%M UTC'))"
echo
echo "$(nproc) cores; build type $(awk -F= '/^CMAKE_BUILD_TYPE:/ { print $2 }' "$BUILD/CMakeCache.txt");" \
    "load average at start $(cut -d' ' -f1-3 /proc/loadavg); $RUNS runs per figure."
echo
row "Figure" "Ckptscope" "Reference" "Ratio" "Target" "Result"
row "---" "---:" "---:" "---:" "---" "---"

# (a) Re-opening a run from the cache: cold (fresh cache) against warm.
: >"$TMP/cold"
for _ in $(seq "$RUNS"); do
    XDG_CACHE_HOME=$(fresh_cache) ms_of "$CLI" timeline "$RUN8" --json >>"$TMP/cold"
done
WARM=$(fresh_cache)
XDG_CACHE_HOME=$WARM "$CLI" timeline "$RUN8" --json >/dev/null
: >"$TMP/warm"
for _ in $(seq "$RUNS"); do
    XDG_CACHE_HOME=$WARM ms_of "$CLI" timeline "$RUN8" --json >>"$TMP/warm"
done
XDG_CACHE_HOME=$WARM "$CLI" timeline "$RUN8" --json >"$TMP/warm.json"
hits=$("$PYTHON" -c 'import json,sys; c=json.load(open(sys.argv[1]))["cache"]; print(c["hits"], c["misses"])' "$TMP/warm.json")
cold=$(median <"$TMP/cold")
warm=$(median <"$TMP/warm")
r=$(ratio "$warm" "$cold" 3)
row "Re-open a run of 8 × 256 MiB OXCK files from the cache (\`ckptscope-cli timeline DIR --json\`; cache hits, misses: $hits)" \
    "warm: $warm ms" "cold: $cold ms" "$r" "≤ 0.05" "$(verdict "$r" 0.05)"

# (b) Peak RSS, 100 checkpoints × 300 tensors, cold and warm cache.
CACHE100=$(fresh_cache)
k=$(XDG_CACHE_HOME=$CACHE100 rss_of "$CLI" timeline "$RUN100" --json)
row "Peak RSS, \`timeline --json\`, 100 checkpoints × 300 tensors, cold cache" "$(mib "$k")" "–" "–" "≤ 128 MiB" "$(verdict "$k" 131072)"
k=$(XDG_CACHE_HOME=$CACHE100 rss_of "$CLI" timeline "$RUN100" --json)
row "Peak RSS, the same, warm cache" "$(mib "$k")" "–" "–" "≤ 128 MiB" "$(verdict "$k" 131072)"

# (c) GUI, offscreen: the run window (ckptscope-guibench --run), median of 3.
if [ -x "$GUI" ]; then
    gui() { QT_QPA_PLATFORM=offscreen XDG_CACHE_HOME=$1 "$GUI" --run "$2" 2>/dev/null; }
    pick() { awk -v k="$1" '$1 == k { print $2 }' "$2" | median; }
    for cache in cold warm; do
        : >"$TMP/gui.$cache"
        for _ in 1 2 3; do
            if [ $cache = cold ]; then gui "$(fresh_cache)" "$RUN100"; else gui "$CACHE100" "$RUN100"; fi >>"$TMP/gui.$cache"
        done
        k=$(pick gui.run_peak_rss_kib "$TMP/gui.$cache")
        row "Peak RSS, run window (\`ckptscope-guibench --run DIR\`), 100 checkpoints × 300 tensors, $cache cache" "$(mib "$k")" "–" "–" "≤ 128 MiB" "$(verdict "$k" 131072)"
    done
    : >"$TMP/gui.chart"
    for _ in 1 2 3; do gui "$WARM" "$RUN8"; done >"$TMP/gui.chart"
    t=$(pick gui.run_start_to_chart_ms "$TMP/gui.chart")
    row "GUI: start of main() → run window with a chart painted, 8 × 256 MiB run, warm cache" "$t ms" "–" "–" "< 300 ms" "$(verdict "$t" 299.9)"
else
    row "GUI run window" "–" "–" "–" "see ckptscope-guibench" "not built (GUI off)"
fi

# (d) info --json on the 10 000-node gradient checkpoint against json.load,
# whole processes, runs alternating; best of each.
: >"$TMP/info"
: >"$TMP/py"
for _ in $(seq $((3 * RUNS))); do
    ms_of "$CLI" info "$GRAPH" --json >>"$TMP/info"
    ms_of "$PYTHON" -c 'import json,sys; json.load(open(sys.argv[1]))' "$GRAPH" >>"$TMP/py"
done
ours=$(best <"$TMP/info")
py=$(best <"$TMP/py")
r=$(ratio "$ours" "$py" 3)
row "\`ckptscope-cli info F --json\`, $(basename "$GRAPH") ($(stat -c %s "$GRAPH") bytes), best of $((3 * RUNS)) (medians: $(median <"$TMP/info") / $(median <"$TMP/py") ms)" \
    "$ours ms" "\`json.load\`: $py ms" "$r" "≤ 0.5" "$(verdict "$r" 0.5)"

bench_exit
