#!/bin/sh
# slurm.sh CLIENT SOURCE_ROOT - a real Slurm cluster (scripts/slurm-cluster.sh:
# four nodes of 4 v100 fake GPUs, leaf0 = n[1-2], leaf1 = n[3-4], in a
# private network namespace where the machine allows one) and gpupool's
# Slurm client driven against it (tests/integration/slurm_client.c).
#
# Needs root (Slurm's daemons run as root here, fake GPUs are device
# nodes): exit 77, a skip, otherwise. As root, Slurm must be installed
# (scripts/install-deps.sh --tests does it): its absence is a failure.
set -u
client=$1
root=$2
if [ "$(id -u)" -ne 0 ]; then
    echo "skip: the test cluster needs root"
    exit 77
fi
lab=$(mktemp -d /tmp/gpupool-slurm.XXXXXX)
# munged wants every directory above its socket searchable by all
chmod 755 "$lab"
cluster="$root/scripts/slurm-cluster.sh"
cleanup() {
    "$cluster" stop "$lab/cluster" >/dev/null 2>&1
    rm -rf "$lab"
}
trap cleanup EXIT INT TERM
if ! "$cluster" start "$lab/cluster" --nodes 4 --gpus 4 --per-switch 2 \
    --gpu-type v100; then
    echo "FAIL: the test cluster did not start"
    exit 1
fi
mkdir -p "$lab/jobs"
"$cluster" exec "$lab/cluster" -- "$client" "$lab/jobs" \
    "$lab/cluster/log/jobcomp.log"
rc=$?
if [ $rc -ne 0 ]; then
    echo "--- slurmctld log (tail)"
    tail -n 30 "$lab/cluster/log/slurmctld.log" 2>/dev/null
    for f in "$lab"/jobs/*.out; do
        [ -f "$f" ] && { echo "--- $f"; cat "$f"; }
    done
fi
exit $rc
