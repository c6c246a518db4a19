#!/usr/bin/env bash
# Checks the .deb that `make package` built the way a distribution would:
# lintian (errors and warnings fail) and desktop-file-validate on the desktop
# entry inside the package (anything it reports fails).
#   packaging/check-package.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: check-package.sh BUILD_DIR}
shopt -s nullglob
debs=("$build"/ckptscope_*.deb)
if [ ${#debs[@]} -ne 1 ]; then
  echo "check-package: expected one ckptscope_*.deb in $build, found ${#debs[@]}" >&2
  exit 1
fi
deb=${debs[0]}

echo "check-package: lintian $deb"
# --fail-on: exit non-zero on any error or warning (info and pedantic tags
# are printed but pass).
lintian --info --fail-on error,warning "$deb"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp"
desktop=("$tmp"/usr/share/applications/*.desktop)
if [ ${#desktop[@]} -eq 0 ]; then
  echo "check-package: no desktop entry in $deb" >&2
  exit 1
fi
for f in "${desktop[@]}"; do
  echo "check-package: desktop-file-validate ${f#"$tmp"}"
  # It exits 0 on warnings and hints: any output at all is a failure here.
  out=$(desktop-file-validate "$f" 2>&1) || { echo "$out" >&2; exit 1; }
  if [ -n "$out" ]; then
    echo "$out" >&2
    exit 1
  fi
done
echo "check-package: $deb passes lintian and desktop-file-validate"
