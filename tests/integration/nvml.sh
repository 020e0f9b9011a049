#!/bin/sh
# nvml.sh GPUPOOL NVML_STUB - `gpupool serve` on the NVML path, with the
# test stand-in for libnvidia-ml.so.1 (tests/unit/nvml_stub.c): the GPUs
# NVML lists become the daemon's, a process on a GPU that gpupool did not
# start is reported, a job gets the NVML GPUs it was given (by UUID in
# CUDA_VISIBLE_DEVICES), and SIGTERM
# still ends the daemon cleanly although NVML started a thread of its own
# (as a real driver's library does; seen on an H200: before the fix the
# signal landed in NVML's thread and killed the daemon).
# tests/integration/gpu.sh is the same on real GPUs, where there are some.
set -u
. "$(dirname "$0")/lib.sh"
exe=$1
stub=$2

it_begin nvml
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    it_stop_jobs
    rm -rf "$tmp"
}
trap cleanup EXIT

GPUPOOL_NVML_LIB=$stub NVML_STUB_GPUS=2 NVML_STUB_PROCS=1 NVML_STUB_THREAD=1 \
    NVML_STUB_NAMES="NVIDIA H100 80GB HBM3" \
    "$exe" serve --set server.state_dir="$tmp" --set server.socket="$sock" \
    --set monitor.nvml=on --set monitor.period=1s \
    >"$tmp/daemon.log" 2>&1 &
pid=$!
it_wait_up "$tmp/daemon.log"

nodes() {
    "$exe" nodes --json |
        python3 -c "import json,sys; n=json.load(sys.stdin)['nodes'][0]; print($1)"
}
[ "$(nodes "(n['ngpus'], n['gpu_type'])")" = "(2, 'h100')" ] ||
    fail "nodes: $(nodes "(n['ngpus'], n['gpu_type'])"), expected 2 h100 GPUs"
[ "$(nodes "[(g['name'], g['mem_total_mib']) for g in n['gpus']]")" = \
    "[('NVIDIA H100 80GB HBM3', 40960), ('NVIDIA H100 80GB HBM3', 40960)]" ] ||
    fail "nodes: GPUs $(nodes "[(g['name'], g['mem_total_mib']) for g in n['gpus']]")"
sampled() {
    [ "$(nodes "[(g.get('processes'), g.get('foreign_pids')) for g in n['gpus']]")" = \
        "[(1, [4000]), (1, [4100])]" ]
}
i=0
while ! sampled; do
    i=$((i + 1))
    if [ $i -gt 50 ]; then
        fail "the stub's processes 4000 and 4100 were not reported foreign:" \
            "$(nodes "[(g.get('processes'), g.get('foreign_pids')) for g in n['gpus']]")"
        break
    fi
    sleep 0.1
done
grep -q 'pid 4000 uses gpu 0 and was not started by gpupool' "$tmp/daemon.log" ||
    fail "the log does not report pid 4000 on gpu 0"

j=$(submit -g 2 -- sh -c 'echo "devices=$CUDA_VISIBLE_DEVICES"; sleep 60')
wait_state "$j" running
n=0
# NVML GPUs are named by UUID, which CUDA reads whatever its device order
want=devices=$(nodes "','.join(g['uuid'] for g in n['gpus'])")
while ! grep -qx "$want" "$(field "$j" stdout)" 2>/dev/null; do
    n=$((n + 1))
    if [ $n -gt 50 ]; then
        fail "job $j did not see CUDA_VISIBLE_DEVICES with both GPUs' UUIDs"
        break
    fi
    sleep 0.1
done

# SIGTERM with NVML's thread alive: a clean exit (status 0, its last line)
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc -eq 0 ] || fail "SIGTERM: the daemon exited $rc (143: killed by it)"
tail -n 1 "$tmp/daemon.log" | grep -q 'msg="stopping: ' ||
    fail "the daemon's last line is not its stop: $(tail -n 1 "$tmp/daemon.log")"
if [ $fails -ne 0 ]; then
    tail -n 20 "$tmp/daemon.log"
    exit 1
fi
echo "ok: nvml: 2 GPUs from NVML, foreign processes reported, a job on" \
    "both by UUID, SIGTERM clean with NVML's thread running"
