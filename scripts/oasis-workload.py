#!/usr/bin/env python3
"""oasis-workload.py - a synthetic workload in the style of OASiS' evaluation
(INFOCOM'18: data-parallel training jobs arriving online, elastic in their
workers, each worth a utility of its completion time), as a gpupool CSV
trace; and the total utility a run earned, from its jobs CSV.

  oasis-workload.py make [--jobs N] [--rate R] [--seed S] > trace.csv
  oasis-workload.py utility [--trace trace.csv] JOBS.csv [JOBS.csv ...]

The workload's numbers are gpupool's choices (docs/policies/oasis.md):
Poisson arrivals at R jobs per hour (6); each job elastic from 1 worker to
its size, a size drawn from 1, 2, 4, 8, 16 GPUs (weights 30, 25, 20, 15,
10); its work on all its GPUs log-normal with a median of 2 hours (sigma
1, clipped to 6 minutes..48 hours); per worker 4 CPUs and 16 GiB, and its
parameter servers' share, one server of 4 CPUs and 16 GiB for every 2
workers (2 CPUs and 8 GiB a worker), so 6 CPUs and 24 GiB per GPU;
priority 0..99 uniform, so its utility weight is 1..100; checkpointable;
its tenant one of --tenants teams (10), uniformly (drf divides by tenant).

`utility` recomputes what oasis maximises, for any policy's run: each
completed job earns w / (1 + exp(k (d / D - m))) with d its JCT, D its
duration, w = 1 + priority (1 / (1 - priority) below 0), m = 2, k = 4
(--deadline, --steepness: oasis.deadline, oasis.steepness); rejected and
unfinished jobs earn 0.
"""
import argparse
import csv
import math
import random
import sys


def make(args):
    rnd = random.Random(args.seed)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["id", "tenant", "name", "submit_s", "gpus", "duration_s",
                  "cpus",
                  "mem_mib", "priority", "min_gpus", "max_gpus",
                  "checkpointable"])
    t = 0.0
    sizes, weights = [1, 2, 4, 8, 16], [30, 25, 20, 15, 10]
    for i in range(args.jobs):
        t += rnd.expovariate(args.rate / 3600.0)
        g = rnd.choices(sizes, weights)[0]
        hours = min(48.0, max(0.1, math.exp(math.log(2.0) +
                                            rnd.gauss(0.0, 1.0))))
        out.writerow([f"j{i}", f"team{rnd.randrange(args.tenants)}",
                      f"size{g}", f"{t:.0f}", g,
                      f"{hours * 3600:.0f}", 6 * g, 24576 * g,
                      rnd.randrange(100), 1, g, 1])


def weight(prio):
    return 1.0 + prio if prio >= 0 else 1.0 / (1.0 - prio)


def utility(args):
    prio = {}
    if args.trace:
        with open(args.trace, newline="") as f:
            for row in csv.DictReader(f):
                prio[row["id"]] = int(row.get("priority") or 0)
    for path in args.jobs:
        total, done, rejected, n = 0.0, 0, 0, 0
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                n += 1
                if row["state"] == "rejected":
                    rejected += 1
                if row["state"] != "completed":
                    continue
                done += 1
                d, dur = float(row["jct_s"]), float(row["duration_s"])
                x = args.steepness * (d / dur - args.deadline)
                total += 0 if x > 700 else weight(prio.get(row["id"], 0)) / (
                    1 + math.exp(x))
        print(f"{path}: utility {total:.2f} from {done} completed of {n} "
              f"jobs ({rejected} rejected)")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("--jobs", type=int, default=300)
    m.add_argument("--rate", type=float, default=6.0)
    m.add_argument("--seed", type=int, default=1)
    m.add_argument("--tenants", type=int, default=10)
    u = sub.add_parser("utility")
    u.add_argument("--trace", help="a gpupool CSV trace with the jobs' "
                   "priorities (without it every weight is 1)")
    u.add_argument("--deadline", type=float, default=2.0)
    u.add_argument("--steepness", type=float, default=4.0)
    u.add_argument("jobs", nargs="+")
    args = p.parse_args()
    if args.cmd == "make":
        if args.jobs < 1 or args.rate <= 0 or args.tenants < 1:
            p.error("--jobs and --tenants must be at least 1, --rate above 0")
        make(args)
    else:
        utility(args)


if __name__ == "__main__":
    main()
