#!/usr/bin/env bash
# PyTorch checkpoints (issue 39): opening a 1 GiB torch.save state dict
# (256 tensors) against a 1 MiB one (≤ 1.5×), `stats --json` of the 1 GiB
# file against the same tensors as safetensors (≤ 1.1×), and `info --json`
# of an optimizer state of 100 000 parameters (200 000 tensors, each its own
# storage) against Python's zipfile + C unpickler loading it with
# placeholder globals and storages (≤ 0.5×: bench/loadpickle.py, the least a
# script can do without PyTorch). The files come from bench/makept.py (no
# PyTorch needed), written once into $CKPTSCOPE_BENCH_DATA/pytorch.
#
#   bench/pytorchbench.sh [BUILD_DIR]     (default build/release)
set -euo pipefail
BUILD=${1:-build/release}
RUNS=${RUNS:-5}
C=$BUILD/app/ckptscope-cli
# shellcheck source=benchlib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/benchlib.sh"
bench_scratch
require_exe pytorchbench.sh "$C"
HERE=$(dirname "$0")

DATA=$CKPTSCOPE_BENCH_DATA/pytorch
mkdir -p "$DATA"
BIG=$DATA/state-1G.pt
SMALL=$DATA/state-1M.pt
TWIN=$DATA/state-1G.safetensors
OPT=$DATA/optimizer-100k.pt
[ -s "$BIG" ] || "$PYTHON" "$HERE/makept.py" state "$BIG" 256 1073741824
[ -s "$SMALL" ] || "$PYTHON" "$HERE/makept.py" state "$SMALL" 256 1048576
[ -s "$TWIN" ] || "$C" convert "$BIG" "$TWIN" >/dev/null 2>&1
[ -s "$OPT" ] || "$PYTHON" "$HERE/makept.py" optimizer "$OPT" 100000
cat "$BIG" "$SMALL" "$TWIN" "$OPT" >/dev/null # warm the page cache

info_json() { "$C" info --json "$1" >/dev/null; }
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
read -r big_s small_s < <(pair big small -- info_json "$BIG" -- info_json "$SMALL")
read -r pt_s st_s < <(pair pt st -- "$C" stats --json "$BIG" -- "$C" stats --json "$TWIN")
read -r opt_s py_s < <(pair ours python -- info_json "$OPT" -- "$PYTHON" "$HERE/loadpickle.py" "$OPT")

echo
echo "| target | measured | reference | ratio | bar | verdict |"
echo "|---|---|---|---|---|---|"
row "open + info --json, 1 GiB .pt (256 tensors)" "$(ms "$big_s")" "1 MiB .pt $(ms "$small_s")" "$(ratio "$big_s" "$small_s")" "≤ 1.5" "$(verdict "$(ratio "$big_s" "$small_s")" 1.5)"
row "stats --json, 1 GiB .pt" "$(ms "$pt_s")" "same tensors as safetensors $(ms "$st_s")" "$(ratio "$pt_s" "$st_s")" "≤ 1.1" "$(verdict "$(ratio "$pt_s" "$st_s")" 1.1)"
row "info --json, optimizer of 100 000 parameters (200 000 tensors)" "$(ms "$opt_s")" "zipfile + C unpickler $(ms "$py_s")" "$(ratio "$opt_s" "$py_s")" "≤ 0.5" "$(verdict "$(ratio "$opt_s" "$py_s")" 0.5)"
bench_exit
