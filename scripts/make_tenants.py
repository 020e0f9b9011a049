#!/usr/bin/env python3
"""make_tenants.py - derive a tenants file (guarantees per tenant) for a
trace, as documented in docs/pooling.md.

  make_tenants.py --jobs-csv JOBS.csv --gpus N [--sizes VC_SIZES.csv]

JOBS.csv is what `gpupool sim --jobs-csv` writes for the trace (any policy:
only tenant, gpus and duration_s are read). A tenant listed in VC_SIZES.csv
(`vc,node num`, as HeliosArtifact/philly_vc.csv) weighs its node count; any
other tenant weighs its GPU-time at the same nodes per GPU-time as the
listed ones (all tenants by GPU-time when no sizes are given). Guarantees
are the weights scaled to N GPUs, largest remainder first, so they add up
to N exactly. Weights in the file are 1 (excess is shared equally).
"""
import argparse
import csv
import json
import math
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs-csv", required=True)
    ap.add_argument("--gpus", type=int, required=True)
    ap.add_argument("--sizes")
    a = ap.parse_args()
    gpu_time = {}
    with open(a.jobs_csv, newline="") as f:
        for row in csv.DictReader(f):
            t = row["tenant"]
            gpu_time[t] = gpu_time.get(t, 0.0) + \
                float(row["gpus"]) * float(row["duration_s"])
    sizes = {}
    if a.sizes:
        with open(a.sizes, newline="") as f:
            r = csv.reader(f)
            next(r)
            for vc, nodes in r:
                sizes[vc] = float(nodes)
    listed = [t for t in gpu_time if t in sizes]
    if listed:
        per_gt = sum(sizes[t] for t in listed) / sum(gpu_time[t] for t in listed)
    else:
        per_gt = 1.0
    w = {t: sizes[t] if t in sizes else gpu_time[t] * per_gt
         for t in gpu_time}
    total = sum(w.values())
    g = {t: math.floor(a.gpus * w[t] / total) for t in w}
    left = a.gpus - sum(g.values())
    for t in sorted(w, key=lambda t: (-(a.gpus * w[t] / total - g[t]), t))[:left]:
        g[t] += 1
    json.dump({"tenants": [{"name": t, "weight": 1, "guarantee": g[t]}
                           for t in sorted(g)]}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
