#!/bin/sh
# oasis-compare.sh [BUILD_DIR] - oasis against fifo, drf and optimus on
# synthetic workloads in the style of OASiS' evaluation
# (scripts/oasis-workload.py): 300 elastic jobs arriving at 6, 10, 15 and
# 20 an hour on 16 nodes of 8 GPUs (data/oasis-16x8.json), seeds 1-3. One
# row per rate and policy: the mean over the seeds of the offered load,
# the utility earned (as oasis-workload.py utility recomputes it from the
# jobs CSV), the jobs rejected and the average JCT of the completed jobs.
# Writes its traces and jobs CSVs under ${OUT:-oasis-out}.
set -eu
build=${1:-build-release}
out=${OUT:-oasis-out}
here=$(cd "$(dirname "$0")/.." && pwd)
gp="$build/gpupool"
[ -x "$gp" ] || { echo "oasis-compare.sh: no $gp (build it first)" >&2; exit 2; }
mkdir -p "$out"
printf '| jobs/h | policy | offered load | utility | rejected | avg JCT (h) |\n'
printf '|---:|---|---:|---:|---:|---:|\n'
for rate in 6 10 15 20; do
    for seed in 1 2 3; do
        w="$out/w$rate-$seed"
        python3 "$here/scripts/oasis-workload.py" make --rate "$rate" \
            --seed "$seed" >"$w.csv"
        "$gp" sim --trace "$w.csv" --cluster "$here/data/oasis-16x8.json" \
            --elastic trace --policy oasis,fifo,drf,optimus --no-progress \
            --no-wall --json --jobs-csv "$w-jobs.csv" >"$w.json"
    done
    for pol in oasis fifo drf optimus; do
        for seed in 1 2 3; do
            w="$out/w$rate-$seed"
            python3 - "$w.json" "$pol" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))
runs = runs if isinstance(runs, list) else [runs]
for r in runs:
    if r["policy"] == sys.argv[2]:
        print("load", r["offered_load"], "rejected", r["rejected"],
              "jct", r["avg_jct_s"] / 3600)
PY
            python3 "$here/scripts/oasis-workload.py" utility \
                --trace "$w.csv" "$w-jobs.csv.$pol.csv"
        done | awk -v rate="$rate" -v pol="$pol" '
            $1 == "load" { l += $2; rj += $4; j += $6; n++ }
            $2 == "utility" { u += $3 }
            END { printf "| %s | %s | %.2f | %.0f | %.1f | %.2f |\n",
                  rate, pol, l / n, u / n, rj / n, j / n }'
    done
done
