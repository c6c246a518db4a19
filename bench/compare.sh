#!/usr/bin/env bash
# Measures each performance target of docs/PERFORMANCE.md side by side with
# its reference, in one run: the two commands of a pair alternate, RUNS times
# each (default 7), and the medians are compared. These machines are noisy;
# alternating keeps both sides under the same load.
#
#   bench/compare.sh [BUILD_DIR]          (default build/release; `make bench`)
#
# Environment: RUNS (default 7), PYTHON (default /usr/bin/python3, else the
# python3 on PATH resolved past any pyenv shim), CKPTSCOPE_BENCH_DATA (cached
# inputs, default BUILD_DIR/bench-data), STRICT=1 (exit 1 when a target is
# missed). Uses hyperfine when installed, else `date +%s%N` around each run;
# peak RSS from /usr/bin/time (else from Python's resource module). Shared
# helpers: bench/benchlib.sh.
set -euo pipefail

BUILD=${1:-build/release}
RUNS=${RUNS:-7}
CLI=$BUILD/app/ckptscope-cli
TOOL=$BUILD/bench/ckptscope-benchtool
HYPERFINE=$(command -v hyperfine || true)
# shellcheck source=benchlib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/benchlib.sh"
bench_scratch
require_exe compare.sh "$CLI" "$TOOL"

# --- measuring (more in benchlib.sh) -----------------------------------------

# Peak resident set size of a command, KiB (median of 3 runs).
rss() {
    for _ in 1 2 3; do rss_of "$@"; done | median
}

# CPU seconds (user + system) of a command (median of 3 runs): what it costs
# whatever the other load on the machine.
cpu() {
    : >"$TMP/cpu"
    for _ in 1 2 3; do
        if [ -x /usr/bin/time ]; then
            /usr/bin/time -v -o "$TMP/time" "$@" >/dev/null 2>&1
            awk -F': ' '/User time|System time/ { t += $2 } END { print t }' "$TMP/time" >>"$TMP/cpu"
        else
            "$PYTHON" -c 'import resource,subprocess,sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN); print(r.ru_utime + r.ru_stime)' "$@" >>"$TMP/cpu"
        fi
    done
    median <"$TMP/cpu"
}

# --- inputs ------------------------------------------------------------------

SMALL=$("$TOOL" path oxck-1M)
LARGE=$("$TOOL" path oxck-1G)
LARGE_B=$("$TOOL" path oxck-1G-b)
RUN=$("$TOOL" path run-8x256M)
RUNFILES=("$RUN"/*.oxck)
GRAPH=$("$TOOL" path gradient-10k)
OPTIM=$("$TOOL" path gradient-opt4M)
for f in "$SMALL" "$LARGE" "$LARGE_B" "${RUNFILES[@]}" "$GRAPH" "$OPTIM"; do cat "$f" >/dev/null; done # page cache warm

echo "# Ckptscope: targets measured side by side ($(date -u '+%Y-%m-%d %H:%M UTC'))"
echo
echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"\
    "$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM;"\
    "build type $(awk -F= '/^CMAKE_BUILD_TYPE:/ { print $2 }' "$BUILD/CMakeCache.txt");"\
    "load average at start $(cut -d' ' -f1-3 /proc/loadavg)."
echo "Timing: $([ -n "$HYPERFINE" ] && echo hyperfine || echo 'date +%s%N'), median of $RUNS runs, runs alternating; Python: $PYTHON ($("$PYTHON" --version 2>&1))."
echo
row "Figure" "Ckptscope" "Reference" "Ratio" "Target" "Result"
row "---" "---:" "---:" "---:" "---" "---"

# (a) Open and list 256 tensors: 1 GiB against 1 MiB.
read -r big small < <(pair open-1G open-1M -- "$CLI" info "$LARGE" --json -- "$CLI" info "$SMALL" --json)
r=$(ratio "$big" "$small")
row "Open + list 256 tensors, 1 GiB file (\`ckptscope-cli info F --json\`)" "$(ms "$big")" "1 MiB file: $(ms "$small")" "$r" "≤ 1.5" "$(verdict "$r" 1.5)"
read -r big small < <(pair open-1G open-1M -- "$TOOL" open "$LARGE" -- "$TOOL" open "$SMALL")
r=$(ratio "$big" "$small")
row "Open + index alone, 1 GiB file (\`ckptscope-benchtool open F\`: Document::open, no Qt libraries)" "$(ms "$big")" "1 MiB file: $(ms "$small")" "$r" "≤ 1.5" "$(verdict "$r" 1.5)"
k=$(rss "$CLI" info "$LARGE" --json)
row "Peak RSS, open + list the 1 GiB file" "$(mib "$k")" "file: 1024 MiB" "–" "< 64 MiB" "$(verdict "$k" 65535)"

# (b) Statistics + 32-bin histograms over every value of the 1 GiB file.
read -r stats cat < <(pair stats cat -- "$CLI" stats "$LARGE" --json -- cat "$LARGE")
r=$(ratio "$stats" "$cat")
gbs=$(awk -v s="$stats" -v b="$(stat -c %s "$LARGE")" 'BEGIN { printf "%.1f GB/s", b / s / 1e9 }')
row "Stats + histogram, all 256 tensors of the 1 GiB file (\`ckptscope-cli stats F --json\`), $gbs" "$(ms "$stats")" "\`cat F\`: $(ms "$cat")" "$r" "≤ 1.0" "$(verdict "$r" 1.0)"
c1=$(cpu "$CLI" stats "$LARGE" --json)
c2=$(cpu cat "$LARGE")
row "CPU time (user + system) of the same two commands" "$(ms "$c1")" "\`cat F\`: $(ms "$c2")" "$(ratio "$c1" "$c2")" "(context: wall time on 2 free cores ≈ half the CPU time)" "–"

# (b2) Compare two 1 GiB files (256 tensors each, every value different):
# `diff --json` against reading both files. diff exits 1 (differences): a
# `sh -c` (about 1 ms) turns that into success for `set -e` and time(1).
DIFF=(sh -c '"$0" "$@"; [ $? -le 1 ]' "$CLI" diff "$LARGE" "$LARGE_B" --json)
read -r diff cat < <(pair diff cat -- "${DIFF[@]}" -- cat "$LARGE" "$LARGE_B")
r=$(ratio "$diff" "$cat")
row "Diff of two 1 GiB files, 256 tensors each (\`ckptscope-cli diff A B --json\`)" "$(ms "$diff")" "\`cat A B\`: $(ms "$cat")" "$r" "≤ 1.5" "$(verdict "$r" 1.5)"
k=$(rss "${DIFF[@]}")
row "Peak RSS, diff of the two 1 GiB files" "$(mib "$k")" "files: 2 × 1024 MiB" "–" "≤ 64 MiB" "$(verdict "$k" 65536)"
c1=$(cpu "${DIFF[@]}")
c2=$(cpu cat "$LARGE" "$LARGE_B")
row "CPU time (user + system) of the same two commands" "$(ms "$c1")" "\`cat A B\`: $(ms "$c2")" "$(ratio "$c1" "$c2")" "(context)" "–"

# (b3) Summarise a run: 8 OXCK files of 256 MiB (64 tensors of 4 MiB each),
# statistics and fine histograms of every tensor, no summary cache, against
# reading the same files.
read -r tl cat < <(pair timeline cat -- "$CLI" timeline "$RUN" --json --no-cache -- cat "${RUNFILES[@]}")
r=$(ratio "$tl" "$cat")
row "Summarise a run of 8 × 256 MiB OXCK files (\`ckptscope-cli timeline DIR --json --no-cache\`)" "$(ms "$tl")" "\`cat\` of the 8 files: $(ms "$cat")" "$r" "≤ 1.0" "$(verdict "$r" 1.0)"
k=$(rss "$CLI" timeline "$RUN" --json --no-cache)
row "Peak RSS, the same run summary" "$(mib "$k")" "files: 8 × 256 MiB" "–" "(context)" "–"
c1=$(cpu "$CLI" timeline "$RUN" --json --no-cache)
c2=$(cpu cat "${RUNFILES[@]}")
row "CPU time (user + system) of the same two commands" "$(ms "$c1")" "\`cat\`: $(ms "$c2")" "$(ratio "$c1" "$c2")" "(context)" "–"

# (c) JSON: our reader against Python's json.load, time and peak RSS.
for f in "$GRAPH" "$OPTIM"; do
    size=$(stat -c %s "$f")
    label="$(basename "$f") ($(awk -v b="$size" 'BEGIN { printf "%.1f MB", b / 1e6 }'))"
    read -r ours py < <(pair load python -- "$TOOL" load "$f" -- "$PYTHON" -c 'import json,sys; json.load(open(sys.argv[1]))' "$f")
    r=$(ratio "$ours" "$py")
    row "Load $label (\`ckptscope-benchtool load F\`)" "$(ms "$ours")" "\`json.load\`: $(ms "$py")" "$r" "≤ 0.5" "$(verdict "$r" 0.5)"
    k=$(rss "$TOOL" load "$f")
    kpy=$(rss "$PYTHON" -c 'import json,sys; json.load(open(sys.argv[1]))' "$f")
    limit=$(awk -v b="$size" 'BEGIN { printf "%.0f", 3 * b / 1024 + 40 * 1024 }')
    row "Peak RSS, load $label" "$(mib "$k")" "\`json.load\`: $(mib "$kpy")" "–" "≤ 3 × file + 40 MiB = $(mib "$limit")" "$(verdict "$k" "$limit")"
done
read -r ours cli < <(pair load info -- "$TOOL" open "$GRAPH" -- "$CLI" info "$GRAPH" --json)
row "Open $(basename "$GRAPH") as the app does (Document::open: + validation) / \`ckptscope-cli info F --json\` (+ topological order, JSON out)" "$(ms "$ours")" "$(ms "$cli")" "–" "(context)" "–"

# (c2) A safetensors header of 200 000 tensors (11+ MB of JSON, as large
# sharded-model shards have): the whole `stats --tensor` process against
# Python's json.loads of the same header bytes. Written here, with Python.
"$PYTHON" - "$TMP/h200k.safetensors" <<'PY'
import json, struct, sys
header, offset = {"__metadata__": {"format": "pt"}}, 0
for i in range(200_000):
    header[f"model.layers.{i // 10}.block.{i % 10}.weight"] = {"dtype": "F32", "shape": [2], "data_offsets": [offset, offset + 8]}
    offset += 8
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + bytes(offset))
with open(sys.argv[1] + ".json", "wb") as f:
    f.write(text)
PY
read -r ours py < <(pair header python -- "$CLI" stats "$TMP/h200k.safetensors" --tensor model.layers.7.block.3.weight --json -- "$PYTHON" -c 'import json,sys; json.loads(open(sys.argv[1], "rb").read())' "$TMP/h200k.safetensors.json")
r=$(ratio "$ours" "$py")
row "Index a 200 000-tensor safetensors header and read one tensor (\`stats F --tensor N --json\`)" "$(ms "$ours")" "\`json.loads\` of the header: $(ms "$py")" "$r" "≤ 1.0" "$(verdict "$r" 1.0)"

# (c3) BF16 and F16 statistics at F32's speed per value (issue 21): 256 Mi
# values as 16 tensors in each dtype (a 1 Mi-value random block repeated),
# `stats F --json` of the 512 MiB files against the 1 GiB F32 file.
"$PYTHON" - "$TMP" <<'PY'
import array, json, random, struct, sys
random.seed(1)
block = [random.gauss(0, 0.02) for _ in range(1 << 20)]
f32 = struct.pack(f"<{len(block)}f", *block)
words = array.array("I", f32)
payload = {"F32": f32, "F16": struct.pack(f"<{len(block)}e", *block),
           "BF16": array.array("H", (w >> 16 for w in words)).tobytes()}
for dtype, data in payload.items():
    per, header, offset = 16 * len(data), {}, 0
    for i in range(16):
        header[f"layers.{i}.weight"] = {"dtype": dtype, "shape": [16 << 20], "data_offsets": [offset, offset + per]}
        offset += per
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(f"{sys.argv[1]}/{dtype.lower()}.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for _ in range(256):
            f.write(data)
PY
cat "$TMP/f32.safetensors" "$TMP/bf16.safetensors" "$TMP/f16.safetensors" >/dev/null
for dtype in bf16 f16; do
    read -r half single < <(pair "$dtype" f32 -- "$CLI" stats "$TMP/$dtype.safetensors" --json -- "$CLI" stats "$TMP/f32.safetensors" --json)
    r=$(ratio "$half" "$single")
    row "Statistics of 256 Mi ${dtype^^} values against as many F32 (\`stats F --json\`)" "$(ms "$half")" "F32: $(ms "$single")" "$r" "≤ 1.1" "$(verdict "$r" 1.1)"
done
rm -f "$TMP/f32.safetensors" "$TMP/bf16.safetensors" "$TMP/f16.safetensors"

# (d) Layout; against Graphviz when installed.
if "$TOOL" layout "$GRAPH" >"$TMP/layout" 2>/dev/null; then
    G2K=$("$TOOL" path graph-2000)
    G100K=$("$TOOL" path graph-100000)
    if command -v dot >/dev/null; then
        "$TOOL" dot "$G2K" >"$TMP/g2k.dot"
        read -r ours dot < <(pair layout dot -- "$TOOL" layout "$G2K" -- dot -Tplain "$TMP/g2k.dot")
        r=$(ratio "$dot" "$ours")
        row "Layout, 2 000-node graph (\`ckptscope-benchtool layout F\`, whole process)" "$(ms "$ours")" "\`dot -Tplain\`: $(ms "$dot")" "$r× faster" "≥ 50× faster" "$(verdict "$r" 50 ge)"
    else
        row "Layout vs \`dot -Tplain\`, 2 000 nodes" "–" "Graphviz not installed" "–" "≥ 50× faster" "not measured"
    fi
    for g in "$GRAPH:10 000:1" "$G100K:100 000:10"; do
        IFS=: read -r file nodes limit <<<"$g"
        : >"$TMP/lt"
        for _ in $(seq 3); do
            "$TOOL" layout "$file" | awk '{ print $(NF - 1) }' >>"$TMP/lt"
        done
        t=$(median <"$TMP/lt")
        row "Layout alone, $nodes-node graph (median of 3)" "$(ms "$t")" "–" "–" "< $limit s" "$(verdict "$t" "$limit")"
    done
else
    row "Layout" "–" "–" "–" "10k nodes < 1 s" "FAILED (\`ckptscope-benchtool layout\` exited non-zero)"
fi

# (e) GUI, offscreen, in one process (ckptscope-guibench): median of 3 runs.
GUI=$BUILD/bench/ckptscope-guibench
if [ -x "$GUI" ]; then
    for _ in 1 2 3; do QT_QPA_PLATFORM=offscreen "$GUI" "$LARGE" "$GRAPH" 2>/dev/null; done >"$TMP/gui"
    pick() { grep "^$1" "$TMP/gui" | awk -v f="$2" '{ print $f }' | median; }
    t=$(pick gui.start_to_tree_ms 2)
    row "GUI: start of main() → window with the 1 GiB file's tree painted" "$t ms" "–" "–" "≤ 300 ms" "$(verdict "$t" 300)"
    t=$(pick gui.select_to_histogram_ms 2)
    row "GUI: select a 1M-value tensor → statistics done, histogram painted" "$t ms" "–" "–" "≤ 50 ms" "$(verdict "$t" 50)"
    for z in 0.002 0.050 1.000; do
        t=$(grep "zoom=$z" "$TMP/gui" | awk '{ print $3 }' | median)
        fps=$(awk -v t="$t" 'BEGIN { printf "%.0f", 1000 / t }')
        row "GUI: pan/zoom frame, $(grep -m1 '^gui.graph_nodes' "$TMP/gui" | awk '{ print $2 }')-node graph at zoom $z$([ "$z" = 0.002 ] && echo ' (whole graph on screen)')" "$t ms ($fps fps)" "–" "–" "≥ 30 fps" "$(verdict "$fps" 30 ge)"
    done
else
    row "GUI timings" "–" "–" "–" "see ckptscope-guibench" "not built (GUI off)"
fi

# (f) Export and conversion (bench/compare-export.sh: only the CLI needed).
"$(dirname "$0")/compare-export.sh" "$BUILD" | tail -n +3 | tee "$TMP/export"
grep -q FAIL "$TMP/export" && echo 1 >"$TMP/failed"

bench_exit
