#!/bin/sh
# The quick start: install what is missing, build gpupool, and run its main
# job on the embedded default - the bundled Philly trace replayed under five
# policies on a 512-GPU cluster, side by side, with an HTML report.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
[ -d build-release ] || meson setup build-release --buildtype=release >/dev/null
ninja -C build-release gpupool >/dev/null
exec ./build-release/gpupool demo "$@"
