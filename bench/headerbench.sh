#!/usr/bin/env bash
# Large safetensors headers (issue 38, item 10): files of 50 000 and 200 000
# small tensors, their header written by Python's json.dumps both compact
# (separators "," and ":") and as it writes by default (a space after each),
# from the page cache.
#   - Indexing, measured as `stats F --tensor ONE --json` (the header indexed,
#     one 8-byte tensor read), against Python's `json.loads` of the same
#     header bytes, whole processes both: ≤ 0.7×.
#   - `info --json` against `json.loads` of the header + `json.dumps` of the
#     result (the object `info --json` prints), as Python times them inside
#     one process (the result loaded beforehand, untimed), plus the start-up
#     of `python3 -c 'import json'`: ≤ 1.0×.
#
#   bench/headerbench.sh [BUILD_DIR]     (default build/release)
set -euo pipefail
BUILD=${1:-build/release}
RUNS=${RUNS:-7}
C=$BUILD/app/ckptscope-cli
# shellcheck source=benchlib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/benchlib.sh"
bench_scratch
require_exe headerbench.sh "$C"
DATA=$CKPTSCOPE_BENCH_DATA/headers
mkdir -p "$DATA"

# Written once: DATA/hN-STYLE.safetensors and its header alone (.json).
for n in 50000 200000; do
    for style in compact spaced; do
        f=$DATA/h$n-$style.safetensors
        [ -s "$f" ] && continue
        "$PYTHON" - "$f" "$n" "$style" <<'PY'
import json, struct, sys
path, n, style = sys.argv[1], int(sys.argv[2]), sys.argv[3]
header, offset = {"__metadata__": {"format": "pt"}}, 0
for i in range(n):
    header[f"model.layers.{i // 10}.block.{i % 10}.weight"] = {"dtype": "F32", "shape": [2], "data_offsets": [offset, offset + 8]}
    offset += 8
text = (json.dumps(header, separators=(",", ":")) if style == "compact" else json.dumps(header)).encode()
text += b" " * (-len(text) % 8)
with open(path + ".tmp", "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + bytes(offset))
with open(path + ".json.tmp", "wb") as f:
    f.write(text)
import os
os.replace(path + ".json.tmp", path + ".json")
os.replace(path + ".tmp", path)
PY
    done
done

# Seconds Python takes inside one process for json.loads of HEADER and
# json.dumps of the object in RESULT (a JSON file, loaded untimed): the
# median of RUNS runs.
py_loads_dumps() {
    "$PYTHON" - "$1" "$2" "$RUNS" <<'PY'
import json, statistics, sys, time
header, result, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
obj = json.load(open(result))
text = open(header, "rb").read()
times = []
for _ in range(runs):
    t0 = time.perf_counter()
    json.loads(text)
    json.dumps(obj)
    times.append(time.perf_counter() - t0)
print(statistics.median(times))
PY
}

echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$TMP/s"
for _ in $(seq "$RUNS"); do seconds "$PYTHON" -c 'import json' >>"$TMP/s"; done
startup=$(median <"$TMP/s")

echo
echo "| target | measured | reference | ratio | bar | verdict |"
echo "|---|---|---|---|---|---|"
for n in 50000 200000; do
    for style in compact spaced; do
        f=$DATA/h$n-$style.safetensors
        size=$(stat -c %s "$f.json")
        label="$n tensors, $style header ($((size / 1024)) KiB)"
        read -r ours py < <(pair stats loads -- "$C" stats "$f" --tensor model.layers.7.block.3.weight --json -- "$PYTHON" -c 'import json,sys; json.loads(open(sys.argv[1], "rb").read())' "$f.json")
        r=$(ratio "$ours" "$py")
        row "Index, $label: \`stats F --tensor N --json\`" "$(ms "$ours")" "\`json.loads\` of the header $(ms "$py")" "$r" "≤ 0.7" "$(verdict "$r" 0.7)"
        "$C" info --json "$f" >"$TMP/info.json"
        : >"$TMP/i"
        "$C" info --json "$f" >/dev/null
        for _ in $(seq "$RUNS"); do seconds "$C" info --json "$f" >>"$TMP/i"; done
        info=$(median <"$TMP/i")
        ref=$(awk -v a="$(py_loads_dumps "$f.json" "$TMP/info.json")" -v s="$startup" 'BEGIN { printf "%.6f", a + s }')
        r=$(ratio "$info" "$ref")
        row "\`info --json\`, $label" "$(ms "$info")" "\`json.loads\` + \`json.dumps\` of the result $(ms "$ref") (start-up $(ms "$startup") included)" "$r" "≤ 1.0" "$(verdict "$r" 1.0)"
    done
done
bench_exit
