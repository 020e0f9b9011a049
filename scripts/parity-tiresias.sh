#!/bin/sh
# parity-tiresias.sh SIMDIR GPUPOOL OUTDIR [SEEDS] - run the published
# Tiresias simulator (SIMDIR: its simulator/ folder, runnable under
# python3; see docs/policies/tiresias.md#artifact-mode) and gpupool's
# tiresias artifact mode on random traces, and compare them job for job.
# For each seed (default 1 to 10): a trace of 300 jobs (seeds 1-5) or 1000
# (6 and up) from scripts/tiresias-trace.py, on 16 GPUs (1x4x4) and 64
# (2x4x8), under dlas-gpu and the knobs 0.5, 1, 2, 4, 8 and 100. OUTDIR
# gets the traces, cluster specs and the simulator's job.csv files in the
# layout of tests/sim/parity-tiresias/, then tests/sim/parity_tiresias.sh
# compares every case.
set -eu
sim=$(cd "$1" && pwd)
exe=$2
out=$3
seeds=${4:-"1 2 3 4 5 6 7 8 9 10"}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
spec='num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node'
printf '%s\n1,4,4,40,256\n' "$spec" >"$out/cluster-n1s4g4.csv"
printf '%s\n2,4,8,64,256\n' "$spec" >"$out/cluster-n2s4g8.csv"
for seed in $seeds; do
    n=300
    [ "$seed" -gt 5 ] && n=1000
    t=s${seed}n$n
    python3 "$here/tiresias-trace.py" "$seed" "$n" >"$out/trace-$t.csv"
    for c in n1s4g4 n2s4g8; do
        for s in dlas-gpu dlas-gpu-05 dlas-gpu-1 dlas-gpu-2 dlas-gpu-4 \
            dlas-gpu-8 dlas-gpu-100; do
            log=$(mktemp -d)
            (cd "$sim" && python3 run_sim.py \
                --cluster_spec="$out/cluster-$c.csv" --scheme=count \
                --trace_file="$out/trace-$t.csv" --schedule=$s \
                --log_path="$log" >/dev/null 2>&1)
            cp "$log/job.csv" "$out/peer-$t-$c-$s.csv"
            rm -rf "$log"
        done
    done
done
sh "$here/../tests/sim/parity_tiresias.sh" "$exe" "$out"
