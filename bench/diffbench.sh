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
export CKPTSCOPE_BENCH_DATA=${CKPTSCOPE_BENCH_DATA:-$BUILD/bench-data}
A=$("$T" path oxck-1G)
B=$("$T" path oxck-1G-b)
TMP=$(mktemp)
trap 'rm -f "$TMP"' EXIT
cat "$A" "$B" >/dev/null # page cache warm
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s%N); echo $(((e - s) / 1000000)); }
for _ in $(seq "$RUNS"); do
    echo "diff $(ms "$C" diff "$A" "$B" --json)"
    echo "cat $(ms cat "$A" "$B")"
done >"$TMP"
for k in diff cat; do
    echo "$k median ms: $(grep "^$k " "$TMP" | awk '{ print $2 }' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
done
for _ in 1 2 3; do /usr/bin/time -f "diff: peak RSS %M KiB, user %U s, sys %S s, wall %e s" "$C" diff "$A" "$B" --json >/dev/null || true; done 2>&1 | grep -v '^Command exited'
for _ in 1 2 3; do /usr/bin/time -f "cat: user %U s, sys %S s, wall %e s" cat "$A" "$B" >/dev/null; done 2>&1
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
