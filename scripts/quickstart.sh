#!/bin/sh
# The quick start: install what is missing, build gpupool, and run its main
# job on the embedded default - the daemon on this machine's GPUs (fake ones
# when there are none), real jobs of two tenants, a reclaim by graceful
# preemption with a checkpoint and a resume (scripts/daemon-demo.sh). The
# simulator's demo stays one command away: build-release/gpupool demo.
set -eu
cd "$(dirname "$0")/.."
. ./scripts/build-lib.sh
./scripts/install-deps.sh
gp_build build-release "gpupool src/backend/gpupool-supervisor" \
    --buildtype=release || exit 1
exec ./scripts/daemon-demo.sh build-release
