#!/usr/bin/env bash
# s3:// objects (issue 41): s3rver (build/node, packaging/install-deps.sh)
# on 127.0.0.1 holds a 1 GiB safetensors model; nginx in front of it logs
# what opening costs (requests, body bytes: `info` ≤ 3 requests and ≤ the
# header + 64 KiB), and `stats` of the object, signed, is timed against curl
# fetching it whole with the same SigV4 signing (≤ 1.3×). The model comes
# from NumPy, written once into $CKPTSCOPE_BENCH_DATA/s3.
#
#   bench/s3bench.sh [BUILD_DIR]     (default build/release)
set -euo pipefail
BUILD=${1:-build/release}
RUNS=${RUNS:-5}
C=$BUILD/app/ckptscope-cli
TMP=$(mktemp -d)
# shellcheck source=benchlib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/benchlib.sh"
require_exe s3bench.sh "$C"
S3RVER=$(cd "$(dirname "$0")/.." && pwd)/build/node/node_modules/.bin/s3rver
[ -x "$S3RVER" ] || { echo "s3bench.sh: s3rver is missing (packaging/install-deps.sh)" >&2; exit 2; }
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "s3bench.sh: nginx is missing (packaging/install-deps.sh)" >&2; exit 2; }

mkdir -p "$CKPTSCOPE_BENCH_DATA/s3"
MODEL=$(cd "$CKPTSCOPE_BENCH_DATA/s3" && pwd)/model-1G.safetensors
if [ ! -s "$MODEL" ]; then # 64 F32 tensors of 16 MiB
    "$PYTHON" - "$MODEL" <<'PY'
import json, struct, sys
import numpy as np
rng = np.random.default_rng(41)
names = [f"layers.{i}.weight" for i in range(64)]
header, offset = {}, 0
for n in names:
    header[n] = {"dtype": "F32", "shape": [2048, 2048], "data_offsets": [offset, offset + (16 << 20)]}
    offset += 16 << 20
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(sys.argv[1] + ".part", "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text)
    for n in names:
        f.write(rng.standard_normal(2048 * 2048, dtype=np.float32).tobytes())
import os; os.replace(sys.argv[1] + ".part", sys.argv[1])
PY
fi
free_port() { "$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
S3PORT=$(free_port)
PROXYPORT=$(free_port)
mkdir -p "$TMP/s3"
NODE_OPTIONS=--openssl-legacy-provider "$S3RVER" --directory "$TMP/s3" --address 127.0.0.1 \
    --port "$S3PORT" --configure-bucket bench --silent &
S3_PID=$!
nginx_conf "$PROXYPORT" "location / { proxy_pass http://127.0.0.1:$S3PORT; proxy_http_version 1.1;" \
    "proxy_set_header Host \$http_host; proxy_set_header Connection \"\";" \
    "proxy_buffering off; proxy_request_buffering off; }"
"$NGINX" -p "$TMP" -c "$TMP/nginx.conf" &
NGINX_PID=$!
# (a server killed by the trap makes wait return 143, which set -e would
# turn into the script's exit status)
trap 'kill $NGINX_PID $S3_PID 2>/dev/null; wait $NGINX_PID $S3_PID 2>/dev/null || true; rm -rf "$TMP"' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$S3PORT/" && break; sleep 0.1; done
export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_REGION=us-east-1
SIGN=(--aws-sigv4 aws:amz:us-east-1:s3 --user S3RVER:S3RVER -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")
curl -sS -f "${SIGN[@]}" -T "$MODEL" "http://127.0.0.1:$S3PORT/bench/model-1G.safetensors" >/dev/null
traffic() { awk '{ n++; s += $2 } END { printf "%d %d\n", n, s }' "$TMP/access.log"; }

echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$TMP/access.log"
AWS_ENDPOINT_URL_S3=http://127.0.0.1:$PROXYPORT "$C" info s3://bench/model-1G.safetensors >/dev/null
read -r open_requests open_bytes < <(traffic)
header=$("$PYTHON" -c 'import struct,sys; print(8 + struct.unpack("<Q", open(sys.argv[1], "rb").read(8))[0])' "$MODEL")
export AWS_ENDPOINT_URL_S3=http://127.0.0.1:$S3PORT
read -r s3_s curl_s < <(pair stats curl -- "$C" stats s3://bench/model-1G.safetensors -- \
    curl -sS -f "${SIGN[@]}" -o /dev/null "$AWS_ENDPOINT_URL_S3/bench/model-1G.safetensors")
s3_rss=$(rss_of "$C" stats s3://bench/model-1G.safetensors)

echo
echo "| target | measured | reference | ratio / limit | bar | verdict |"
echo "|---|---|---|---|---|---|"
row "info s3://…/1 GiB: requests" "$open_requests" "—" "—" "≤ 3" "$(verdict "$open_requests" 3)"
row "info s3://…/1 GiB: bytes sent" "$open_bytes B" "header $header B" "—" "≤ header + 64 KiB" "$(verdict "$open_bytes" $((header + 65536)))"
row "stats s3://…/1 GiB, signed, loopback" "$(ms "$s3_s")" "curl --aws-sigv4 to /dev/null $(ms "$curl_s")" "$(ratio "$s3_s" "$curl_s")" "≤ 1.3" "$(verdict "$(ratio "$s3_s" "$curl_s")" 1.3)"
row "peak RSS, stats of it" "$(mib "$s3_rss")" "—" "—" "cache ≤ 64 MiB" "—"
bench_exit
