#!/usr/bin/env bash
# Issue 25, the computation graph at 100 000 nodes: whole processes on the
# offscreen platform, each against its reference on the same file.
#   - Overview painted (`ckptscope --screenshot`) against `ckptscope-cli info`;
#   - the Graph tab drawn (`--tab Graph`) against `ckptscope-cli layout`;
#   both counted beyond the GUI's fixed start-up (the same launch on a
#   50-node graph); peak RSS of both; pan/zoom frames (ckptscope-guibench),
#   collapsed and after Expand All; expanding one group; Expand All drawn
#   against `ckptscope-cli layout`.
#
#   bench/graphbench.sh [BUILD_DIR] [NODES]   (default build/release 100000)
set -euo pipefail
BUILD=${1:-build/release}
NODES=${2:-100000}
RUNS=${RUNS:-5}
C=$BUILD/app/ckptscope-cli
G=$BUILD/app/ckptscope
GUI=$BUILD/bench/ckptscope-guibench
# shellcheck source=benchlib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/benchlib.sh"
bench_scratch
require_exe graphbench.sh "$C" "$G"
DATA=${CKPTSCOPE_BENCH_DATA:-$BUILD/bench-data}
mkdir -p "$DATA"
F=$DATA/gradient-${NODES}nodes-graph.json
S=$DATA/gradient-50nodes-graph.json
M=$DATA/graphbench-model.oxck
[ -e "$F" ] || "$C" generate gradient "$F" --nodes "$NODES" >/dev/null
[ -e "$S" ] || "$C" generate gradient "$S" --nodes 50 >/dev/null
[ -e "$M" ] || "$C" generate oxck "$M" >/dev/null
cat "$F" "$S" >/dev/null # page cache warm
export QT_QPA_PLATFORM=offscreen
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg); $(basename "$F"), RUNS=$RUNS"
echo
row "Figure" "Ckptscope" "Reference" "Ratio" "Target" "Result"
row "---" "---:" "---:" "---:" "---" "---"
SHOT=("$G" --screenshot "$TMP/s.png")
read -r base info < <(pair gui50 info -- "${SHOT[@]}" "$S" -- "$C" info "$F")
read -r overview layout < <(pair overview layout -- "${SHOT[@]}" "$F" -- "$C" layout "$F")
graph=$(for _ in $(seq "$RUNS"); do seconds "${SHOT[@]}" --tab Graph "$F"; done | median)
beyond() { awk -v a="$1" -v b="$base" 'BEGIN { d = a - b; printf "%.6f", (d > 0 ? d : 0) }'; }
r=$(ratio "$(beyond "$overview")" "$info")
row "Overview painted, $NODES nodes (beyond the 50-node launch, $(ms "$base"))" "$(ms "$overview")" "\`ckptscope-cli info\`: $(ms "$info")" "$r" "≤ 1.5" "$(verdict "$r" 1.5)"
r=$(ratio "$(beyond "$graph")" "$layout")
row "Graph tab drawn (\`--tab Graph\`), $NODES nodes (beyond the 50-node launch)" "$(ms "$graph")" "\`ckptscope-cli layout\`: $(ms "$layout")" "$r" "≤ 1.5" "$(verdict "$r" 1.5)"
for tab in Overview Graph; do
    k=$(rss_of "${SHOT[@]}" --tab "$tab" "$F")
    row "Peak RSS, $tab, $NODES nodes" "$(mib "$k")" "\`ckptscope-cli info\`: $(mib "$(rss_of "$C" info "$F")")" "–" "≤ 400 MiB" "$(verdict "$k" 409600)"
done
if [ -x "$GUI" ]; then
    for _ in 1 2 3; do "$GUI" "$M" "$F" 2>/dev/null; done >"$TMP/gui"
    for view in "" .expanded; do
        for z in fit 0.002 0.050 0.300 1.000; do
            t=$(grep "^gui.graph_frame_ms$view zoom=$z " "$TMP/gui" | awk '{ print $3 }' | median)
            [ -n "$t" ] || continue
            fps=$(awk -v t="$t" 'BEGIN { printf "%.0f", 1000 / t }')
            row "Pan/zoom frame, $NODES nodes${view:+ (Expand All)}, zoom $z (median of 3 runs)" "$t ms ($fps fps)" "–" "–" "≥ 30 fps" "$(verdict "$fps" 30 ge)"
        done
    done
    # Collapse by structure: one group expanded (placed, redrawn, painted),
    # and Expand All drawn whole against laying out every node.
    t=$(grep "^gui.graph_expand_group_ms " "$TMP/gui" | awk '{ print $2 }' | median)
    if [ -n "$t" ]; then
        row "Expand one group, $NODES nodes (the 7 largest, median of 3 runs)" "$t ms" "–" "–" "< 100 ms" "$(verdict "$t" 100)"
        t=$(grep "^gui.graph_expand_all_ms " "$TMP/gui" | awk '{ print $2 / 1000 }' | median)
        r=$(ratio "$t" "$layout")
        row "View ▸ Expand All drawn (Fit, every node painted), $NODES nodes" "$(ms "$t")" "\`ckptscope-cli layout\`: $(ms "$layout")" "$r" "≤ 2" "$(verdict "$r" 2)"
    fi
else
    row "Pan/zoom frames" "–" "–" "–" "≥ 30 fps" "not built (ckptscope-guibench)"
fi
bench_exit
