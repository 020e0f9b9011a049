#!/bin/sh
# Reproduce the pooling table of docs/pooling.md: static-quota vs
# pool-noreclaim vs pool on the same cluster and load, for the Philly
# per-job table (15 VCs as tenants), Gavel's per-VC Philly traces and the
# Microsoft ITP clusters; the published policies on the same three runs
# (PUBLISHED=list to choose them, PUBLISHED= to skip); then the load sweep
# with its HTML report.
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
# The published policies on the same three runs, pool beside them.
PUB=${PUBLISHED-fifo,las,tiresias,qssf,drf,synergy,themis,gandiva,gandiva-fair,pool}
if [ -n "$PUB" ]; then
    PCOMMON="--policy $PUB --checkpointable all --json --no-wall --no-progress"
    "$B" sim --trace data/philly.csv.xz --cluster 64x8 \
        --tenants data/tenants/philly-vcs.json $PCOMMON >"$OUT/pub-philly.json"
    "$B" sim --trace data/gavel-philly-vcs.tar.gz --cluster 64x8 \
        --tenants data/tenants/gavel-vcs.json $PCOMMON >"$OUT/pub-gavel.json"
    if [ -f "$T/microsoft-itp-elasticflow/raw-traces.tar.gz" ]; then
        "$B" sim --trace "$T/microsoft-itp-elasticflow/raw-traces.tar.gz" \
            --cluster itp --tenants data/tenants/itp-clusters.json $PCOMMON \
            >"$OUT/pub-itp.json"
    fi
fi
"$B" sim --trace data/philly.csv.xz --cluster 64x8 \
    --tenants data/tenants/philly-vcs.json $COMMON \
    --sweep-load 0.6,0.8,1.0,1.2 --report "$OUT/report" >"$OUT/sweep.json"

python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
def pct(x): return "-" if x is None else f"{100*x:.1f}%"
def h(s): return f"{s/3600:.2f}"
# Every row names its unit: hours for waits, JCTs and windows, seconds for
# reclaim delays (most are seconds long). The utilization and queue rows
# name their window: the arrival window (first
# to last submission) or the makespan (first submission to last end).
def table(runs, rows):
    """A row per metric, a column per run (policy)."""
    print("| metric | " + " | ".join(r["policy"] for r in runs) + " |")
    print("|---|" + "---:|" * len(runs))
    for label, f in rows:
        print(f"| {label} | " + " | ".join(f(r) for r in runs) + " |")
rows = [
    ("Arrival window / makespan (h)", lambda r: f"{r['arrival_window_s']/3600:.0f} / {r['makespan_s']/3600:.0f}"),
    ("GPU utilization, arrival window", lambda r: pct(r["gpu_utilization_arrivals"])),
    ("GPU utilization, to the makespan", lambda r: pct(r["gpu_utilization_makespan"])),
    ("GPU utilization ceiling, to the makespan", lambda r: pct(r["gpu_utilization_ceiling"])),
    ("GPU utilization while jobs waited", lambda r: pct(r["gpu_utilization_saturated"])),
    ("Jobs waiting (time average), arrival window", lambda r: f"{r['avg_queue_len_arrivals']:.0f}"),
    ("Jobs waiting (time average), to the makespan", lambda r: f"{r['avg_queue_len_makespan']:.0f}"),
    ("Average wait (h)", lambda r: h(r["avg_wait_s"])),
    ("p99 wait (h)", lambda r: f"{r['p99_wait_s']/3600:.1f}"),
    ("Average JCT (h)", lambda r: h(r["avg_jct_s"])),
    ("Guarantee compliance", lambda r: pct(r["guarantee_compliance"])),
    ("Fair-share compliance", lambda r: pct(r["fairshare_compliance"])),
    ("Guarantee compliance, gang-aware", lambda r: pct(r["guarantee_compliance_gang"])),
    ("Fair-share compliance, gang-aware", lambda r: pct(r["fairshare_compliance_gang"])),
    ("Preemptions", lambda r: f"{r['preemptions']}"),
    ("GPU-hours lost to preemption", lambda r: f"{r['lost_gpu_s']/3600:.0f}"),
    ("Reclaim delay p50 / p99 (s)", lambda r: f"{r['reclaim_delay_p50_s']:.0f} / {r['reclaim_delay_p99_s']:.0f}"),
    ("Reclaims that waited: number, delay p50 / p99 (s)", lambda r: f"{r['reclaim_episodes_waited']} of {r['reclaim_episodes']}: {r['reclaim_waited_p50_s']:.0f} / {r['reclaim_waited_p99_s']:.0f}"),
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
    r0 = runs[0]
    print(f"Offered load {r0['offered_load']:.2f}. Simulated by gpupool {r0['version']}: "
          f"trace {r0['trace']} ({r0['trace_format']}), cluster {r0['cluster']} "
          f"({r0['cluster_gpus']} GPUs), placement {r0['placement']}, seed {r0['seed']}; "
          "preemption " + "; ".join(", ".join(r["policy"] for r in runs if r["preemption"] == p) + ": " + p
                                   for p in dict.fromkeys(r["preemption"] for r in runs)) + ".\n")
    table(runs, rows)
# The published policies: the figures they are judged by in their papers
# (waits and completion times), then the tenants' compliance.
pub_rows = [
    ("Average wait (h)", lambda r: h(r["avg_wait_s"])),
    ("Average JCT (h)", lambda r: h(r["avg_jct_s"])),
    ("p99 JCT (h)", lambda r: h(r["p99_jct_s"])),
    ("Makespan (h)", lambda r: f"{r['makespan_s']/3600:.0f}"),
    ("GPU utilization while jobs waited", lambda r: pct(r["gpu_utilization_saturated"])),
    ("Guarantee compliance", lambda r: pct(r["guarantee_compliance"])),
    ("Fair-share compliance", lambda r: pct(r["fairshare_compliance"])),
    ("Fair-share compliance, gang-aware", lambda r: pct(r["fairshare_compliance_gang"])),
    ("Preemptions", lambda r: f"{r['preemptions']}"),
    ("GPU-hours lost to preemption", lambda r: f"{r['lost_gpu_s']/3600:.0f}"),
    ("Jobs completed", lambda r: f"{r['completed']} of {r['jobs']}"),
]
for name, title in (("pub-philly", "Philly, the published policies"),
                    ("pub-gavel", "Gavel's VCs, the published policies"),
                    ("pub-itp", "ITP, the published policies")):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        continue
    print(f"\n#### {title}\n")
    table(json.load(open(path)), pub_rows)
runs = json.load(open(os.path.join(out, "sweep.json")))
print("\n### Load sweep, Philly (cluster resized, guarantees scaled)\n")
print("| load | GPUs | policy | utilization, arrival window | utilization, to the makespan | ceiling, to the makespan | utilization while jobs waited | avg wait (h) | p99 wait (h) | fair-share | guarantee | fair-share, gang-aware | guarantee, gang-aware |")
print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in runs:
    print(f"| {r['offered_load']:.2f} | {r['cluster_gpus']} | {r['policy']} | {pct(r['gpu_utilization_arrivals'])} | "
          f"{pct(r['gpu_utilization_makespan'])} | {pct(r['gpu_utilization_ceiling'])} | {pct(r['gpu_utilization_saturated'])} | {h(r['avg_wait_s'])} | {r['p99_wait_s']/3600:.1f} | "
          f"{pct(r['fairshare_compliance'])} | {pct(r['guarantee_compliance'])} | "
          f"{pct(r['fairshare_compliance_gang'])} | {pct(r['guarantee_compliance_gang'])} |")
PY
