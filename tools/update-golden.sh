#!/bin/sh
# Regenerates tests/golden/ from the current ckptscope-cli: builds the CLI and
# tst_cligolden in BUILD_DIR (default build/dev) and runs the test with
# CKPTSCOPE_UPDATE_GOLDEN=1, which writes the files instead of comparing.
# Review the result with `git diff tests/golden` before committing it.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build/dev}
rm -f tests/golden/*  # stale cases go too
cmake --build "$build" --target ckptscope-cli tst_cligolden
CKPTSCOPE_UPDATE_GOLDEN=1 QT_QPA_PLATFORM=offscreen "$build/tests/cli/tst_cligolden"
# Check what was written: the same command must now compare equal.
"$build/tests/cli/tst_cligolden" >/dev/null
git status --short tests/golden
