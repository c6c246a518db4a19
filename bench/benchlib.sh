# shellcheck shell=bash
# Helpers shared by the bench scripts (bench/*.sh); sourced, not run:
#   . "$(dirname "$0")/benchlib.sh"
# The caller sets BUILD (the build folder) and RUNS (runs per side of a pair)
# before sourcing it, and TMP (a scratch folder it removes: bench_scratch
# below); HYPERFINE, when set, times pairs with hyperfine instead of date.

# --- setup -------------------------------------------------------------------

# require_exe SCRIPT EXE...: exit 2 when a program of the build is missing.
require_exe() {
    local script=$1 exe
    shift
    for exe in "$@"; do
        if [ ! -x "$exe" ]; then
            echo "$script: $exe is missing; build the release preset first (make bench)" >&2
            exit 2
        fi
    done
}

# bench_scratch: TMP, a scratch folder removed when the script exits (the
# scripts that start servers set their own trap instead).
bench_scratch() {
    TMP=$(mktemp -d)
    trap 'rm -rf "$TMP"' EXIT
}

# Generated inputs, written once: CKPTSCOPE_BENCH_DATA as given, else
# BUILD/bench-data; exported, as the bench tools read it.
if [ -n "${BUILD:-}" ]; then
    export CKPTSCOPE_BENCH_DATA=${CKPTSCOPE_BENCH_DATA:-$BUILD/bench-data}
fi

# PYTHON: as given, else /usr/bin/python3 (Debian's, with NumPy), else the
# python3 on PATH resolved past any pyenv shim.
PYTHON=${PYTHON:-/usr/bin/python3}
[ -x "$PYTHON" ] || PYTHON=$(python3 -c 'import sys; print(sys.executable)')

# nginx_conf PORT DIRECTIVES...: $TMP/nginx.conf for nginx run in the
# foreground from $TMP (no root needed), logging each request's status and
# body bytes to $TMP/access.log, serving 127.0.0.1:PORT with the directives
# given (a root, or a proxy_pass location).
nginx_conf() {
    local port=$1
    shift
    mkdir -p "$TMP/tmp"
    cat >"$TMP/nginx.conf" <<CONF
daemon off; master_process off; worker_processes 1;
pid $TMP/nginx.pid; error_log $TMP/error.log;
events { worker_connections 64; }
http {
  log_format counted '\$status \$body_bytes_sent';
  access_log $TMP/access.log counted;
  client_body_temp_path $TMP/tmp; proxy_temp_path $TMP/tmp; fastcgi_temp_path $TMP/tmp;
  uwsgi_temp_path $TMP/tmp; scgi_temp_path $TMP/tmp;
  default_type application/octet-stream; gzip off; sendfile on;
  server { listen 127.0.0.1:$port; $* }
}
CONF
}

# --- measuring ---------------------------------------------------------------

# Median of the numbers on stdin (the mean of the middle two for an even count).
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Smallest of the numbers on stdin.
best() { sort -g | head -n 1; }

# Wall seconds of one run of a command (output discarded).
seconds() {
    local s e
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s%N)
    awk -v d=$((e - s)) 'BEGIN { printf "%.6f\n", d / 1e9 }'
}

# pair [LABEL...] -- CMD_A... -- CMD_B...: median seconds of each, as "A B",
# RUNS runs each, alternating after one warm-up run of each (the labels only
# name the sides for the reader of the script).
pair() {
    local -a a=() b=()
    while [ "$1" != "--" ]; do shift; done
    shift
    while [ "$1" != "--" ]; do a+=("$1"); shift; done
    shift
    b=("$@")
    if [ -n "${HYPERFINE:-}" ]; then
        "$HYPERFINE" -N --warmup 1 --runs "$RUNS" --export-json "$TMP/h.json" \
            "$(printf '%q ' "${a[@]}")" "$(printf '%q ' "${b[@]}")" >/dev/null 2>&1
        "$PYTHON" -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(r[0]["median"], r[1]["median"])' "$TMP/h.json"
        return
    fi
    "${a[@]}" >/dev/null 2>&1
    "${b[@]}" >/dev/null 2>&1
    : >"$TMP/a"
    : >"$TMP/b"
    for _ in $(seq "$RUNS"); do
        seconds "${a[@]}" >>"$TMP/a"
        seconds "${b[@]}" >>"$TMP/b"
    done
    echo "$(median <"$TMP/a") $(median <"$TMP/b")"
}

# Peak resident set size of one run of a command, KiB.
rss_of() {
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f '%M' -o "$TMP/time" "$@" >/dev/null 2>&1
        tail -n 1 "$TMP/time"
    else
        "$PYTHON" -c 'import resource,subprocess,sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
    fi
}

# --- reporting ---------------------------------------------------------------

row() { printf '| %s | %s | %s | %s | %s | %s |\n' "$@"; }
ms() { awk -v s="$1" 'BEGIN { printf "%.1f ms", s * 1000 }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
# ratio A B [DIGITS]: A / B with DIGITS decimals (default 2).
ratio() { awk -v a="$1" -v b="$2" -v d="${3:-2}" 'BEGIN { printf "%." d "f", a / b }'; }
# verdict VALUE LIMIT [ge]: pass when VALUE <= LIMIT (>= with "ge"). Runs in
# $(...): a miss is recorded in $TMP/failed (see bench_exit).
verdict() {
    if awk -v v="$1" -v l="$2" -v ge="${3:-}" 'BEGIN { exit !(ge ? v >= l : v <= l) }'; then
        echo pass
    else
        echo 1 >"$TMP/failed"
        echo "**FAIL**"
    fi
}

# The closing line; with STRICT=1, exit 1 when a target was missed.
bench_exit() {
    echo
    echo "Load average at end: $(cut -d' ' -f1-3 /proc/loadavg)."
    if [ "${STRICT:-0}" = 1 ] && [ -e "$TMP/failed" ]; then
        exit 1
    fi
}
