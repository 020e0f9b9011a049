#!/bin/sh
# openb-sharing.sh - build a release gpupool and replay the Alibaba openb
# trace on its own node list under round-up, best-fit and FGD (issue 7):
# first with the trace's own lifetimes, then filling the cluster
# (--no-deletions, the paper's experiment). The tables go to stdout, the
# series to $OUT (default build-release/openb-sharing). docs/sharing.md
# shows what this printed.
#   usage: scripts/openb-sharing.sh [TRACE_CSV_DIR]
set -eu
cd "$(dirname "$0")/.."
D=${1:-../shared/traces/alibaba-gpu-v2023-openb/csv}
OUT=${OUT:-build-release/openb-sharing}
[ -d build-release ] || meson setup build-release --buildtype=release >/dev/null
ninja -C build-release gpupool >/dev/null
mkdir -p "$OUT"
G=build-release/gpupool
N="$D/openb_node_list_gpu_node.csv"
P="$D/openb_pod_list_default.csv"
echo "== openb, real lifetimes (creation..deletion)"
$G share --nodes "$N" --pods "$P" --csv "$OUT/lifetimes.csv"
echo
echo "== openb, no deletions (fill the cluster)"
$G share --nodes "$N" --pods "$P" --no-deletions --csv "$OUT/fill.csv"
