#!/bin/sh
# The quick start: install what is missing, build gpupool, and run its main
# job on the embedded default - the bundled Philly trace replayed under five
# policies on a 512-GPU cluster, side by side, with an HTML report.
set -eu
cd "$(dirname "$0")/.."
. ./scripts/build-lib.sh
./scripts/install-deps.sh
gp_build build-release gpupool --buildtype=release || exit 1
exec ./build-release/gpupool demo "$@"
