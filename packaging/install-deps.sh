#!/usr/bin/env bash
# Installs the Debian 12 packages Ckptscope needs to build, test and package.
# Only missing packages are installed, so a second run is a no-op and fast.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  qt6-base-dev qt6-base-dev-tools qt6-charts-dev qt6-svg-dev libqt6opengl6-dev
  libqt6svg6 libgl-dev libxkbcommon-dev
  nlohmann-json3-dev libbenchmark-dev zlib1g-dev python3-numpy
  libcurl4-openssl-dev nginx-light
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

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
