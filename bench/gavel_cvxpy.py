#!/usr/bin/python3
"""gavel_cvxpy.py GAVEL PROBLEM.json... - Gavel's own solve of the problems
bench_gavel wrote (--problem DIR): its MaxMinFairnessPolicyWithPerf, as the
artifact has it (GAVEL: a checkout of github stanford-futuredata/gavel, not
modified), on cvxpy with ECOS, its default solver. Needs cvxpy and ECOS,
which Debian does not package (docs/solver.md says how they were built
here), Debian's python3-numpy and python3-scipy.

For each problem: the jobs' throughputs from the artifact's own table
(GAVEL/scheduler/simulation_throughputs.json, the throughput of the job's
type at its scale factor on each type, alone: 'null'), priority weights 1,
the cluster spec as written; then get_allocation timed whole (wall clock:
cvxpy's problem building and canonicalization and ECOS's solve), ECOS's
own solve time as cvxpy reports it, and the objective of the allocation
that came back, computed here as bench_gavel's optimum is defined:
min over jobs of sum_k T_jk s_j X_jk / P_j, P_j = sum_k T_jk W_k / sum W.
Median of --reps (default 3) solves. Prints one line per problem; exits 1
when an optimum differs from gpupool's by more than 1e-6 (relative)."""
import argparse
import ast
import json
import os
import statistics
import sys
import time
import warnings

import numpy as np

warnings.simplefilter("ignore", FutureWarning)
try:
    import cvxpy as cp  # noqa: E402
except ImportError as e:
    sys.exit(f"gavel_cvxpy.py: cannot import cvxpy ({e}): build it with "
             "bench/build-cvxpy.sh and put its PREFIX on PYTHONPATH")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gavel", help="a checkout of stanford-futuredata/gavel")
    ap.add_argument("problems", nargs="+", help="bench_gavel's gavel-N.json")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--solver", default="ECOS")
    a = ap.parse_args()

    sched = os.path.join(a.gavel, "scheduler")
    if not os.path.isfile(os.path.join(sched, "policies",
                                       "max_min_fairness.py")):
        sys.exit(f"gavel_cvxpy.py: {a.gavel}: not a checkout of Gavel "
                 "(no scheduler/policies/max_min_fairness.py)")
    sys.path.insert(0, os.path.join(sched, "policies"))
    import max_min_fairness  # the artifact's, unmodified

    with open(os.path.join(sched, "simulation_throughputs.json")) as f:
        raw = json.load(f)
    table = {}
    for wt, rows in raw.items():
        for key, row in rows.items():
            table[(wt, ast.literal_eval(key))] = row["null"]

    # ECOS's own time, from the problem get_allocation builds and solves
    stats = []
    solve = cp.Problem.solve

    def timed_solve(self, *args, **kw):
        r = solve(self, *args, **kw)
        stats.append((self.solver_stats.solve_time, self.status,
                      self.value, self.solver_stats.num_iters))
        return r

    cp.Problem.solve = timed_solve

    print("%8s %12s %12s %8s %10s %14s %14s %10s" %
          ("jobs", "whole (ms)", "ECOS (ms)", "iters", "status",
           "objective", "gpupool z", "gap"))
    bad = 0
    for path in a.problems:
        try:
            with open(path) as f:
                prob = json.load(f)
            spec = prob["cluster_spec"]
            jobs = prob["jobs"]
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"gavel_cvxpy.py: {path}: not a problem of bench_gavel "
                     f"--problem ({e!r})")
        types = sorted(spec)
        tput, sf, weights = {}, {}, {}
        for j, (jt, s) in enumerate(jobs):
            tput[j] = {wt: table.get((wt, (jt, s)), 0.0) for wt in types}
            sf[j] = s
            weights[j] = 1.0
        policy = max_min_fairness.MaxMinFairnessPolicyWithPerf(a.solver)
        whole, ecos = [], []
        for _ in range(a.reps):
            stats.clear()
            t0 = time.perf_counter()
            alloc = policy.get_allocation(tput, sf, weights, spec)
            whole.append(time.perf_counter() - t0)
            ecos.append(stats[-1][0] or 0.0)
        _, status, _, iters = stats[-1]
        total = sum(spec.values())
        z = min(sum(tput[j][wt] * sf[j] * alloc[j][wt] for wt in types) /
                sum(tput[j][wt] * spec[wt] / total for wt in types)
                for j in range(len(jobs)))
        ours = prob["gpupool_objective"]
        print("%8d %12.1f %12.1f %8s %10s %14.10g %14.10g %+9.2e" %
              (len(jobs), 1e3 * statistics.median(whole),
               1e3 * statistics.median(ecos), iters, status, z, ours,
               (z - ours) / ours), flush=True)
        if status != "optimal" or abs(z - ours) > 1e-6 * abs(ours):
            bad += 1
    if bad:
        sys.exit(f"gavel_cvxpy.py: {bad} problem(s) without the same optimum")


if __name__ == "__main__":
    main()
