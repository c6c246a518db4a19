#!/usr/bin/env bash
# Runs each libFuzzer target built in BUILD_DIR for SECONDS and prints a
# summary (executions, coverage, corpus size). Usage:
#   tests/fuzz/run-fuzzers.sh BUILD_DIR SECONDS [TARGET...]   (TARGET: oxck, metadata, ...)
# Corpora: BUILD_DIR/fuzz-corpus/TARGET (written by libFuzzer, kept between
# runs) plus, read only, the conformance corpus's valid/ and invalid/ and
# tests/data/regressions — pointed at, never copied into the repository.
# Crashes are written to BUILD_DIR/fuzz-artifacts/TARGET/; the script then
# exits 1. Reproduce one with: BUILD_DIR/tests/fuzz/fuzz_TARGET FILE
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:?usage: run-fuzzers.sh BUILD_DIR SECONDS [TARGET...]}"
seconds="${2:?usage: run-fuzzers.sh BUILD_DIR SECONDS [TARGET...]}"
shift 2
build="$(cd "$build" && pwd)"
# The corpus the build was configured with (cache entry CKPTSCOPE_CONFORMANCE_DIR,
# see the top CMakeLists.txt); else the environment variable; else the default.
conformance=$(sed -n 's/^CKPTSCOPE_CONFORMANCE_DIR:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null)
conformance="${conformance:-${CKPTSCOPE_CONFORMANCE_DIR:-$root/../shared/conformance}}"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(oxck metadata gradient document layout safetensors gguf pickle pytorch s3xml dcp)
fi

# Per target: max input length and dictionary.
max_len() {
    case "$1" in
    metadata) echo 4096 ;;
    layout) echo 1024 ;;
    *) echo 65536 ;;
    esac
}
mkdir -p "$build/fuzz-logs"
cat "$root/tests/fuzz/oxck.dict" "$root/tests/fuzz/json.dict" >"$build/fuzz-logs/all.dict"
dict() {
    case "$1" in
    oxck | metadata) echo "$root/tests/fuzz/oxck.dict" ;;
    gradient) echo "$root/tests/fuzz/json.dict" ;;
    document) echo "$build/fuzz-logs/all.dict" ;;
    safetensors) echo "$root/tests/fuzz/safetensors.dict" ;;
    pickle | pytorch | dcp) echo "$root/tests/fuzz/pickle.dict" ;;
    gguf) echo "$root/tests/fuzz/gguf.dict" ;;
    s3xml) echo "$root/tests/fuzz/xml.dict" ;;
    esac
}

seeds=()
for d in "$conformance/valid" "$conformance/invalid" "$conformance/safetensors/valid" \
    "$conformance/safetensors/invalid" "$conformance/gguf/valid" "$conformance/gguf/invalid" \
    "$conformance/pytorch/valid" "$conformance/pytorch/invalid" \
    "$root/tests/data/regressions"; do
    [ -d "$d" ] && seeds+=("$d")
done
[ -d "$conformance/valid" ] || echo "run-fuzzers: $conformance not found; fuzzing without seeds" >&2

status=0
summary="$build/fuzz-logs/summary.txt"
printf '%-10s %8s %12s %10s %8s %14s %s\n' target seconds executions exec/s cov corpus result >"$summary"
for t in "${targets[@]}"; do
    exe="$build/tests/fuzz/fuzz_$t"
    if [ ! -x "$exe" ]; then
        printf '%-10s %8s %12s %10s %8s %14s %s\n' "$t" - - - - - "not built" >>"$summary"
        continue
    fi
    corpus="$build/fuzz-corpus/$t"
    artifacts="$build/fuzz-artifacts/$t"
    log="$build/fuzz-logs/$t.log"
    mkdir -p "$corpus" "$artifacts"
    args=(-max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=20 -rss_limit_mb=2048
        -print_final_stats=1 -artifact_prefix="$artifacts/")
    d="$(dict "$t")"
    [ -n "$d" ] && args+=(-dict="$d")
    echo "== fuzz_$t for ${seconds}s" >&2
    # fuzz_dcp lays its input over a plan of its own: no file is a seed.
    if [ "$t" = dcp ]; then
        "$exe" "${args[@]}" "$corpus" >"$log" 2>&1
    else
        "$exe" "${args[@]}" "$corpus" "${seeds[@]}" >"$log" 2>&1
    fi
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")
    result=ok
    if [ $rc -ne 0 ]; then
        result="FAILED (exit $rc, see $log)"
        status=1
        grep -E 'ERROR|invariant violated|SUMMARY|Test unit written' "$log" >&2
    fi
    printf '%-10s %8s %12s %10s %8s %14s %s\n' "$t" "$seconds" "${execs:--}" "${rate:--}" \
        "${cov:--}" "${corp:--}" "$result" >>"$summary"
done
cat "$summary"
exit $status
