#!/usr/bin/env bash
# Installs the Debian 12 packages Ckptscope needs to build, test and package.
# Only missing packages are installed, so a second run is a no-op and fast.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  qt6-base-dev qt6-base-dev-tools qt6-charts-dev qt6-svg-dev libqt6opengl6-dev
  libqt6svg6 libgl-dev libxkbcommon-dev
  nlohmann-json3-dev libsimdjson-dev libbenchmark-dev zlib1g-dev python3-numpy
  libcurl4-openssl-dev libexpat1-dev nginx-light curl
  clang libclang-rt-14-dev
  xvfb xauth imagemagick fonts-dejavu-core
  file dpkg-dev lintian desktop-file-utils help2man
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Node.js and npm run the S3 test server; a machine with its own Node (and
# the npm bundled with it) keeps it, Debian's packages otherwise.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The S3-compatible server the s3:// tests start (tests/support/httpservers.h):
# s3rver from the npm registry, pinned, into build/node (not a system path).
S3RVER_VERSION=3.7.1
NODE_DIR="$(cd "$(dirname "$0")/.." && pwd)/build/node"
if ! grep -qs "\"version\": \"$S3RVER_VERSION\"" "$NODE_DIR/node_modules/s3rver/package.json"; then
  echo "install-deps: installing s3rver $S3RVER_VERSION into $NODE_DIR"
  mkdir -p "$NODE_DIR"
  npm install --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error "s3rver@$S3RVER_VERSION"
fi
