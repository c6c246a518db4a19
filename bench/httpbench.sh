#!/usr/bin/env bash
# Files by URL (issue 24): nginx on 127.0.0.1 serves the 1 GiB bench model as
# safetensors; what opening and reading it over HTTP costs, counted from
# nginx's own access log (requests, body bytes sent) and timed against the
# local file and against curl fetching the whole file (the transfer's floor).
#
#   bench/httpbench.sh [BUILD_DIR]     (default build/release)
set -euo pipefail
BUILD=${1:-build/release}
RUNS=${RUNS:-5}
C=$BUILD/app/ckptscope-cli
T=$BUILD/bench/ckptscope-benchtool
TMP=$(mktemp -d)
# shellcheck source=benchlib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/benchlib.sh"
require_exe httpbench.sh "$C" "$T"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "httpbench.sh: nginx is missing (packaging/install-deps.sh)" >&2; exit 2; }

# Absolute: nginx takes a relative root from its prefix (the temporary folder).
mkdir -p "$CKPTSCOPE_BENCH_DATA/http"
ROOT=$(cd "$CKPTSCOPE_BENCH_DATA/http" && pwd)
MODEL=$ROOT/model-1G.safetensors
if [ ! -s "$MODEL" ]; then
    "$C" convert "$("$T" path oxck-1G)" "$MODEL" >/dev/null
fi
PORT=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
nginx_conf "$PORT" "root $ROOT;"
"$NGINX" -p "$TMP" -c "$TMP/nginx.conf" &
NGINX_PID=$!
trap 'kill $NGINX_PID 2>/dev/null; wait $NGINX_PID 2>/dev/null || true; rm -rf "$TMP"' EXIT
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done
URL=http://127.0.0.1:$PORT/model-1G.safetensors
cat "$MODEL" >/dev/null # page cache warm, for both sides
traffic() { awk '{ n++; s += $2 } END { printf "%d %d\n", n, s }' "$TMP/access.log"; }

echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$TMP/access.log"
"$C" info "$URL" >/dev/null
read -r open_requests open_bytes < <(traffic)
header=$("$PYTHON" -c 'import struct,sys; print(8 + struct.unpack("<Q", open(sys.argv[1], "rb").read(8))[0])' "$MODEL")
read -r name size < <("$C" info "$MODEL" --json | "$PYTHON" -c 'import json,sys
t = min((t for t in json.load(sys.stdin)["tensors"] if t["size_bytes"] >= 4 << 20), key=lambda t: t["size_bytes"])
print(t["name"], t["size_bytes"])')
: >"$TMP/access.log"
"$C" stats "$URL" --tensor "$name" >/dev/null
read -r tensor_requests tensor_bytes < <(traffic)
read -r url_s local_s < <(pair url local -- "$C" stats "$URL" -- "$C" stats "$MODEL")
curl_s=$(for _ in $(seq "$RUNS"); do seconds curl -s -o /dev/null "$URL"; done | median)
url_rss=$(rss_of "$C" stats "$URL")
local_rss=$(rss_of "$C" stats "$MODEL")

echo
echo "| target | measured | reference | ratio / limit | bar | verdict |"
echo "|---|---|---|---|---|---|"
row "open 1 GiB by URL: requests" "$open_requests" "—" "—" "≤ 3" "$(verdict "$open_requests" 3)"
row "open 1 GiB by URL: bytes sent" "$open_bytes B" "header $header B" "—" "≤ header + 64 KiB" "$(verdict "$open_bytes" $((header + 65536)))"
row "stats URL --tensor ($((size >> 20)) MiB)" "$tensor_bytes B, $tensor_requests requests" "$size B" "$(ratio "$tensor_bytes" "$size")" "≤ tensor + 1 MiB" "$(verdict "$tensor_bytes" $((size + (1 << 20))))"
row "stats URL (1 GiB), loopback" "$(ms "$url_s")" "local $(ms "$local_s")" "$(ratio "$url_s" "$local_s")" "≤ 2.0" "$(verdict "$(ratio "$url_s" "$local_s")" 2.0)"
row "curl of the whole file (floor)" "$(ms "$curl_s")" "local stats $(ms "$local_s")" "$(ratio "$curl_s" "$local_s")" "—" "—"
row "peak RSS, stats URL" "$(mib "$url_rss")" "local $(mib "$local_rss")" "—" "cache ≤ 64 MiB" "—"
bench_exit
