#!/usr/bin/env bash
# The diff target alone (bench/compare.sh measures it among the others):
# `ckptscope-cli diff A B --json` of two 1 GiB files against `cat A B`, runs
# alternating, medians of RUNS (default 7); then peak RSS and CPU time from
# /usr/bin/time, three runs each.
#
#   bench/diffbench.sh [BUILD_DIR]     (default build/release)
set -euo pipefail
BUILD=${1:-build/release}
RUNS=${RUNS:-7}
C=$BUILD/app/ckptscope-cli
T=$BUILD/bench/ckptscope-benchtool
# shellcheck source=benchlib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/benchlib.sh"
bench_scratch
require_exe diffbench.sh "$C" "$T"
A=$("$T" path oxck-1G)
B=$("$T" path oxck-1G-b)
cat "$A" "$B" >/dev/null # page cache warm
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
# diff exits 1 (the files differ): `sh -c` turns that into success for set -e.
DIFF=(sh -c '"$0" "$@"; [ $? -le 1 ]' "$C" diff "$A" "$B" --json)
read -r diff cat < <(pair diff cat -- "${DIFF[@]}" -- cat "$A" "$B")
echo "diff median: $(ms "$diff")"
echo "cat median: $(ms "$cat")"
for _ in 1 2 3; do /usr/bin/time -f "diff: peak RSS %M KiB, user %U s, sys %S s, wall %e s" "$C" diff "$A" "$B" --json >/dev/null || true; done 2>&1 | grep -v '^Command exited'
for _ in 1 2 3; do /usr/bin/time -f "cat: user %U s, sys %S s, wall %e s" cat "$A" "$B" >/dev/null; done 2>&1
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
