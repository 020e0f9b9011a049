#!/bin/sh
# Reproduce the pooling table of docs/pooling.md: static-quota vs
# pool-noreclaim vs pool on the same cluster and load, for the Philly
# per-job table (15 VCs as tenants), Gavel's per-VC Philly traces and the
# Microsoft ITP clusters; then the load sweep with its HTML report.
# usage: scripts/pooling-table.sh [BUILD_DIR] [SHARED_TRACES_DIR]
set -eu
cd "$(dirname "$0")/.."
. ./scripts/build-lib.sh
gp_build "${1:-build-release}" gpupool --buildtype=release || exit 1
B=${1:-build-release}/gpupool
T=${2:-../shared/traces}
OUT=${OUT:-pooling-out}
mkdir -p "$OUT"
P=static-quota,pool-noreclaim,pool
COMMON="--policy $P --checkpointable all --json --no-wall --no-progress"

"$B" sim --trace data/philly.csv.xz --cluster 64x8 \
    --tenants data/tenants/philly-vcs.json $COMMON >"$OUT/philly.json"
"$B" sim --trace data/gavel-philly-vcs.tar.gz --cluster 64x8 \
    --tenants data/tenants/gavel-vcs.json $COMMON >"$OUT/gavel.json"
if [ -f "$T/microsoft-itp-elasticflow/raw-traces.tar.gz" ]; then
    "$B" sim --trace "$T/microsoft-itp-elasticflow/raw-traces.tar.gz" \
        --cluster itp --tenants data/tenants/itp-clusters.json $COMMON \
        >"$OUT/itp.json"
fi
"$B" sim --trace data/philly.csv.xz --cluster 64x8 \
    --tenants data/tenants/philly-vcs.json $COMMON \
    --sweep-load 0.6,0.8,1.0,1.2 --report "$OUT/report" >"$OUT/sweep.json"

python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
def pct(x): return "-" if x is None else f"{100*x:.1f}%"
rows = [
    ("Average GPU utilization", lambda r: pct(r["gpu_utilization"])),
    ("Jobs waiting (time average)", lambda r: f"{r['avg_queue_len']:.0f}"),
    ("Average wait", lambda r: f"{r['avg_wait_s']/3600:.2f} h"),
    ("p99 wait", lambda r: f"{r['p99_wait_s']/3600:.1f} h"),
    ("Average JCT", lambda r: f"{r['avg_jct_s']/3600:.2f} h"),
    ("Guarantee compliance", lambda r: pct(r["guarantee_compliance"])),
    ("Fair-share compliance", lambda r: pct(r["fairshare_compliance"])),
    ("Preemptions", lambda r: f"{r['preemptions']}"),
    ("GPU-hours lost to preemption", lambda r: f"{r['lost_gpu_s']/3600:.0f}"),
    ("Reclaim delay p50 / p99", lambda r: f"{r['reclaim_delay_p50_s']:.0f} s / {r['reclaim_delay_p99_s']:.0f} s"),
    ("Reclaims that waited: number, delay p50 / p99", lambda r: f"{r['reclaim_episodes_waited']} of {r['reclaim_episodes']}: {r['reclaim_waited_p50_s']:.0f} s / {r['reclaim_waited_p99_s']:.0f} s"),
    ("Jobs completed", lambda r: f"{r['completed']} of {r['jobs']}"),
]
for name, title in (("philly", "Philly per-job table, 82,247 jobs, 64x8 (512 GPUs), 15 VCs"),
                    ("gavel", "Gavel per-VC Philly traces (seed 0), 15,264 jobs, 64x8, 15 VCs"),
                    ("itp", "Microsoft ITP, 69,351 jobs, preset itp (1,544 GPUs), 10 clusters as tenants")):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        continue
    runs = json.load(open(path))
    print(f"\n### {title}\n")
    print(f"Offered load {runs[0]['offered_load']:.2f}.\n")
    print("| metric | " + " | ".join(r["policy"] for r in runs) + " |")
    print("|---|" + "---:|" * len(runs))
    for label, f in rows:
        print(f"| {label} | " + " | ".join(f(r) for r in runs) + " |")
runs = json.load(open(os.path.join(out, "sweep.json")))
print("\n### Load sweep, Philly (cluster resized, guarantees scaled)\n")
print("| load | GPUs | policy | utilization | avg wait | p99 wait | fair-share | guarantee |")
print("|---:|---:|---|---:|---:|---:|---:|---:|")
for r in runs:
    print(f"| {r['offered_load']:.2f} | {r['cluster_gpus']} | {r['policy']} | {pct(r['gpu_utilization'])} | "
          f"{r['avg_wait_s']/3600:.2f} h | {r['p99_wait_s']/3600:.1f} h | {pct(r['fairshare_compliance'])} | {pct(r['guarantee_compliance'])} |")
PY
