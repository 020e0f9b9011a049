#!/bin/sh
# pollux-compare.sh GPUPOOL [LOAD] - gpupool's fifo, tiresias, optimus and
# pollux on the Pollux artifact's eight workloads at a relative job load
# (1.0, the default: bundled, data/pollux-workloads; 0.5, 1.5, 2.0: the
# artifact's simulator/workloads-LOAD, read from $POLLUX_WORKLOADS or
# ../shared/traces/pollux-adaptdl/simulator/workloads-LOAD), in the
# artifact's world (a re-allocation restarts the job from its checkpoint,
# 30 s without progress, nothing lost; 60 s rounds), beside the average
# JCTs the artifact reports for its own Tiresias, Optimus+Oracle and
# Pollux at that load. Prints a markdown table (docs/policies/pollux.md);
# at load 1.0 also each policy job for job against the artifact's own
# run of it (data/pollux-workloads/artifact-jcts-1.0.json.xz: the same
# summary.json files' "jcts", every job's JCT).
#
# The artifact's figures: petuum/adaptdl, branch osdi21-artifact (commit
# c793c7089bd307462686339d29707925c461f9a9),
# simulator/results-jobload/{tiresias,optimus,pollux}-LOAD/summary.json,
# "avgs" (seconds, workload-1 .. workload-8).
set -eu
exe=${1:?usage: pollux-compare.sh GPUPOOL [LOAD]}
load=${2:-1.0}
here=$(dirname "$0")
case $load in
1.0) dir=$here/../data/pollux-workloads ;;
0.5 | 1.5 | 2.0)
    dir=${POLLUX_WORKLOADS:-$here/../../shared/traces/pollux-adaptdl/simulator/workloads-$load}
    ;;
*) echo "pollux-compare.sh: LOAD must be 0.5, 1.0, 1.5 or 2.0" >&2; exit 2 ;;
esac
[ -f "$dir/workload-1.csv" ] || { echo "pollux-compare.sh: no workloads in $dir" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for w in 1 2 3 4 5 6 7 8; do
    "$exe" sim --trace "$dir/workload-$w.csv" \
        --policy fifo,tiresias,optimus,pollux --preemption free \
        --restart-cost 30 --resize-cost 30 --round 60 --elastic trace \
        --opt tiresias.limits=57600 --opt optimus.speed=true \
        --opt optimus.remaining=true --opt optimus.interval=60 \
        --json --jobs-csv "$tmp/w$w" --no-progress >"$tmp/w$w.json"
done

python3 - "$tmp" "$load" "$here/../data/pollux-workloads/artifact-jcts-1.0.json.xz" <<'PY'
import csv, json, lzma, statistics, sys
reported = {
    ("0.5", "tiresias"): [1450.94, 2333.28, 1869.90, 1946.76, 1425.39, 1826.58, 3979.15, 1899.95],
    ("0.5", "optimus"): [1309.69, 3124.56, 1986.84, 2173.86, 1324.53, 1957.96, 5314.00, 1971.47],
    ("0.5", "pollux"): [1059.51, 1826.26, 1310.53, 1497.76, 976.84, 1287.83, 2881.05, 1432.04],
    ("1.0", "tiresias"): [2473.65, 5144.96, 3876.26, 3280.26, 3501.01, 3469.69, 5479.91, 5079.71],
    ("1.0", "optimus"): [4087.06, 6913.88, 3944.01, 5967.75, 5656.25, 5301.88, 7290.86, 6293.79],
    ("1.0", "pollux"): [2088.77, 3322.94, 2188.49, 2720.98, 2673.70, 2446.13, 3616.14, 2951.91],
    ("1.5", "tiresias"): [5520.29, 6333.77, 6561.98, 5577.32, 6832.42, 5830.48, 5366.78, 7435.75],
    ("1.5", "optimus"): [7673.84, 6678.19, 5683.62, 7683.79, 7899.73, 7500.25, 6426.18, 8331.30],
    ("1.5", "pollux"): [3855.78, 3380.58, 3299.92, 3902.68, 4007.30, 3474.27, 3217.63, 4345.12],
    ("2.0", "tiresias"): [10138.17, 8655.99, 10727.82, 9664.73, 12098.10, 10254.67, 8370.85, 10405.81],
    ("2.0", "optimus"): [10806.60, 8515.39, 8363.36, 10312.91, 11830.04, 9767.26, 6997.97, 11174.79],
    ("2.0", "pollux"): [6186.26, 4190.83, 5131.84, 5262.40, 6590.82, 5105.31, 3836.32, 6009.81],
}
load = sys.argv[2]
art = {p: reported[(load, p)] for p in ("tiresias", "optimus", "pollux")}
ours = ["fifo", "tiresias", "optimus", "pollux"]
print("| workload | " + " | ".join(ours) +
      " | artifact: Tiresias | artifact: Optimus | artifact: Pollux |")
print("|---|" + "---:|" * 7)
sums = {k: 0.0 for k in ours + ["a" + k for k in art]}
for w in range(1, 9):
    runs = {r["policy"]: r for r in json.load(open(f"{sys.argv[1]}/w{w}.json"))}
    cells = []
    for p in ours:
        r = runs[p]
        if r["completed"] != r["jobs"]:
            sys.exit(f"workload-{w}: {p} completed {r['completed']} of {r['jobs']}")
        cells.append(r["avg_jct_s"])
        sums[p] += r["avg_jct_s"]
    for p in art:
        cells.append(art[p][w - 1])
        sums["a" + p] += art[p][w - 1]
    print(f"| {w} | " + " | ".join(f"{c:,.0f}" for c in cells) + " |")
print("| mean | " + " | ".join(f"{sums[k] / 8:,.0f}" for k in ours + ["a" + k for k in art]) + " |")
for p in art:
    print(f"{p}: gpupool {sums[p] / 8:,.0f} s, artifact {sums['a' + p] / 8:,.0f} s "
          f"({100 * (sums[p] / sums['a' + p] - 1):+.1f}%)")
if load == "1.0":
    # job for job: |gpupool - artifact| / artifact over the 8 x 160 jobs
    per_job = json.load(lzma.open(sys.argv[3]))
    print()
    print("| policy | jobs | within 10% | within 25% | median difference | without ncf: jobs, within 10%, median |")
    print("|---|---:|---:|---:|---:|---:|")
    for p in art:
        rel, big = [], []
        for w in range(1, 9):
            theirs = per_job[p][f"workload-{w}"]
            with open(f"{sys.argv[1]}/w{w}.{p}.csv") as f:
                ours_j = {r["id"]: float(r["jct_s"]) for r in csv.DictReader(f)}
            if set(ours_j) != set(theirs):
                sys.exit(f"workload-{w}: {p}: the jobs differ from the artifact's")
            rel += [abs(ours_j[k] - v) / v for k, v in theirs.items()]
            big += [abs(ours_j[k] - v) / v for k, v in theirs.items()
                    if not k.startswith("ncf-")]
        n = len(rel)
        w10 = sum(d <= 0.10 for d in rel)
        w25 = sum(d <= 0.25 for d in rel)
        b10 = sum(d <= 0.10 for d in big)
        print(f"| {p} | {n:,} | {w10:,} ({100 * w10 / n:.1f}%) | "
              f"{w25:,} ({100 * w25 / n:.1f}%) | {100 * statistics.median(rel):.1f}% | "
              f"{len(big):,}, {b10:,} ({100 * b10 / len(big):.1f}%), "
              f"{100 * statistics.median(big):.1f}% |")
PY
