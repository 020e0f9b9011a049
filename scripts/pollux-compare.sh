#!/bin/sh
# pollux-compare.sh GPUPOOL [WORKLOADS_DIR] - gpupool's fifo, tiresias,
# optimus and pollux on the Pollux artifact's eight workloads (bundled:
# data/pollux-workloads), in the artifact's world (re-allocation = restart
# from a checkpoint, 30 s without progress, nothing lost; 60 s rounds), beside
# the average JCTs the artifact reports for its own Tiresias, Optimus+Oracle
# and Pollux. Prints a markdown table (docs/policies/pollux.md).
#
# The artifact's figures: petuum/adaptdl, branch osdi21-artifact (commit
# c793c7089bd307462686339d29707925c461f9a9),
# simulator/results-jobload/{tiresias,optimus,pollux}-1.0/summary.json,
# "avgs" (seconds, workload-1 .. workload-8).
set -eu
exe=${1:?usage: pollux-compare.sh GPUPOOL [WORKLOADS_DIR]}
dir=${2:-$(dirname "$0")/../data/pollux-workloads}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for w in 1 2 3 4 5 6 7 8; do
    "$exe" sim --trace "$dir/workload-$w.csv" \
        --policy fifo,tiresias,optimus,pollux --preemption free \
        --restart-cost 30 --resize-cost 30 --round 60 --elastic trace \
        --opt tiresias.limits=57600 --opt optimus.speed=true \
        --opt optimus.remaining=true --opt optimus.interval=60 \
        --json --no-progress >"$tmp/w$w.json"
done

python3 - "$tmp" <<'PY'
import json, sys
art = {
    "tiresias": [2473.65, 5144.96, 3876.26, 3280.26, 3501.01, 3469.69, 5479.91, 5079.71],
    "optimus": [4087.06, 6913.88, 3944.01, 5967.75, 5656.25, 5301.88, 7290.86, 6293.79],
    "pollux": [2088.77, 3322.94, 2188.49, 2720.98, 2673.70, 2446.13, 3616.14, 2951.91],
}
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
PY
