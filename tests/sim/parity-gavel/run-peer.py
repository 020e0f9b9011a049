#!/usr/bin/python3
"""run-peer.py GAVEL TRACE OBJECTIVE GPUS OUT.csv - run Gavel's own simulator
(GAVEL: a checkout of github stanford-futuredata/gavel; it is not modified)
on TRACE (gpupool's copy of a Gavel msr trace, 7 fields, or 10 with SLOs)
with OBJECTIVE (max_min_fairness_perf, min_total_duration_perf,
finish_time_fairness_perf, fifo_perf, fifo, fifo_packed,
max_sum_throughput_perf, max_sum_throughput_normalized_by_cost_perf_SLOs,
max_min_fairness_packed, min_total_duration_packed,
finish_time_fairness_packed, max_min_fairness_water_filling_packed, gandiva
or allox) on GPUS V100,
P100 and K80 each (8 to a server), and write
each job's completion time to OUT.csv as gpupool names the job
(<trace>-<line>).

cvxpy, which Debian lacks, is replaced at run time (the artifact's files
stay as they are) by scipy's HiGHS in the three LP policies:
max_min_fairness_perf solves the same max-min LP, min_total_duration_perf
the same feasibility LP inside its own bisection, and
finish_time_fairness_perf minimizes the same largest finish-time fraction
by bisection on it with feasibility LPs (the artifact states it in cvxpy's
convex inv_pos form), and max_sum_throughput_perf the same LP of summed
throughputs (over instance costs, all 1 in a simulation without price
data); max_min_fairness_packed the same LP over jobs and pairs of jobs, and
min_total_duration_packed and finish_time_fairness_packed the same
feasibility LPs over them, the latter by bisection as finish_time_fairness_perf;
max_min_fairness_water_filling_perf and _packed the same LP and MILP of each
iteration (scipy's linprog and milp), over jobs or over jobs and pairs
(gandiva, fifo and fifo_packed solve none). The RPC layer and matrix_completion, which the
simulation does not use, are stubbed. Needs Debian's python3-numpy,
python3-scipy and python3-psutil."""
import contextlib
import copy
import io
import os
import re
import runpy
import sys
import tempfile
import types

import numpy as np
from scipy.optimize import linprog

gavel, trace, objective, gpus, out = sys.argv[1:6]
sched_dir = os.path.join(gavel, "scheduler")

# GAVEL_AS_WRITTEN=1: the artifact's policies as they are, on cvxpy (which
# must then be importable: docs/solver.md says how it was built here)
as_written = os.environ.get("GAVEL_AS_WRITTEN") == "1"

# ---- stubs for what the simulation does not use
for name in ("matrix_completion",) if as_written else ("cvxpy",
                                                       "matrix_completion"):
    sys.modules[name] = types.ModuleType(name)
rpc = types.ModuleType("runtime.rpc")
rpc.scheduler_server = types.ModuleType("scheduler_server")
rpc.scheduler_client = types.ModuleType("scheduler_client")
sys.modules["runtime"] = types.ModuleType("runtime")
sys.modules["runtime.rpc"] = rpc
sys.path.insert(0, sched_dir)

# as the artifact's utils.py imports them (after the stubs)
from policies import finish_time_fairness  # noqa: E402
from policies import max_min_fairness  # noqa: E402
from policies import max_sum_throughput  # noqa: E402
from policies import min_total_duration  # noqa: E402
from policies import max_min_fairness_water_filling  # noqa: E402
from scipy.optimize import Bounds, LinearConstraint, milp  # noqa: E402


def base_rows(m, n, sf, workers, groups=None):
    """sum_k x[j,k] <= 1 per job (summed over the rows of x in groups[j],
    with space sharing: the combinations job j is in); sum_j sf x[j,k] <=
    W_k per type, as (rows, rhs) over x flattened row-major."""
    rows, rhs = [], []
    for group in (groups if groups is not None else [[j] for j in range(m)]):
        r = np.zeros(m * n)
        for j in group:
            r[j * n:(j + 1) * n] = 1.0
        rows.append(r)
        rhs.append(1.0)
    for k in range(n):
        r = np.zeros(m * n)
        for j in range(m):
            r[j * n + k] = sf[j, k]
        rows.append(r)
        rhs.append(workers[k])
    return rows, rhs


def feasible(rate, need, sf, workers):
    """x with sum_k rate[j,k] x[j,k] >= need[j], or None."""
    m, n = rate.shape
    rows, rhs = base_rows(m, n, sf, workers)
    for j in range(m):
        r = np.zeros(m * n)
        r[j * n:(j + 1) * n] = -rate[j]
        rows.append(r)
        rhs.append(-need[j])
    res = linprog(np.zeros(m * n), A_ub=np.array(rows), b_ub=np.array(rhs),
                  bounds=[(0.0, None)] * (m * n), method="highs")
    return res.x.reshape((m, n)) if res.status == 0 else None


def max_z(self, index, m, n, obj, a, b, bounds):
    """Solve a max-min LP (its last variable z), and the policy's
    allocation of its m x n others, or None as the artifact when not
    optimal."""
    res = linprog(obj, A_ub=a, b_ub=b, bounds=bounds, method="highs")
    if res.status != 0:
        print("WARNING: Allocation returned by policy not optimal!")
        return None
    x = res.x[:-1].reshape((m, n))
    return self.unflatten(x.clip(min=0.0).clip(max=1.0), index)


def max_min_perf(self, unflattened_throughputs, scale_factors,
                 unflattened_priority_weights, cluster_spec):
    throughputs, index = self.flatten(unflattened_throughputs, cluster_spec)
    if throughputs is None:
        return None
    (m, n) = throughputs.shape
    (job_ids, worker_types) = index
    sf = self.scale_factors_array(scale_factors, job_ids, m, n)
    weights = np.array([1. / unflattened_priority_weights[j] for j in job_ids])
    prop = self._proportional_policy.get_throughputs(throughputs, index,
                                                     cluster_spec)
    weights = weights.reshape((m, 1)) / prop.reshape((m, 1))
    c = throughputs * weights * sf
    # maximize z: z - sum_k c x <= 0 per job
    rows, rhs = base_rows(m, n, sf, [cluster_spec[w] for w in worker_types])
    rows = [np.append(r, 0.0) for r in rows]
    for j in range(m):
        r = np.zeros(m * n + 1)
        r[j * n:(j + 1) * n] = -c[j]
        r[-1] = 1.0
        rows.append(r)
        rhs.append(0.0)
    obj = np.zeros(m * n + 1)
    obj[-1] = -1.0
    return max_z(self, index, m, n, obj, np.array(rows), np.array(rhs),
                 [(0.0, 1.0)] * (m * n) + [(None, None)])


def makespan_helper(self, throughputs, scale_factors_array, T):
    x = types.SimpleNamespace(value=feasible(
        throughputs, self._num_steps_remaining / T, scale_factors_array,
        self._num_workers))
    return ("optimal" if x.value is not None else "infeasible"), x


def ftf_terms(self, job_ids, iso_rate, num_steps_remaining,
              times_since_start):
    """Each job's work left, time since its start and time in isolation
    (the artifact's cumulative isolated time, advanced as it does)."""
    m = len(job_ids)
    left, since, iso = np.zeros(m), np.zeros(m), np.zeros(m)
    for i, j in enumerate(job_ids):
        if j not in self._cumulative_isolated_time:
            self._cumulative_isolated_time[j] = 0
        if j in self._num_steps_remaining_prev_iteration:
            self._cumulative_isolated_time[j] += (
                self._num_steps_remaining_prev_iteration[j] -
                num_steps_remaining[j]) / \
                self._isolated_throughputs_prev_iteration[j]
        left[i] = num_steps_remaining[j]
        since[i] = times_since_start[j]
        iso[i] = self._cumulative_isolated_time[j] + \
            left[i] / float(iso_rate[i])
    return left, since, iso


def least_rho(test, lo):
    """The x of the least largest finish-time fraction rho that test(rho)
    finds feasible, to 0.1%: doubling from 2 lo to a feasible rho, then
    halving; None if none."""
    hi = max(2 * lo, 1e-6)
    best = None
    for _ in range(60):
        best = test(hi)
        if best is not None:
            break
        lo, hi = hi, 2 * hi
    for _ in range(60):
        if best is None or hi <= lo * 1.001:
            break
        mid = (lo + hi) / 2
        x = test(mid)
        if x is not None:
            hi, best = mid, x
        else:
            lo = mid
    return best


def ftf_perf(self, unflattened_throughputs, scale_factors,
             unflattened_priority_weights, times_since_start,
             num_steps_remaining, cluster_spec):
    throughputs, index = self.flatten(unflattened_throughputs, cluster_spec)
    if throughputs is None:
        self._isolated_throughputs_prev_iteration = {}
        self._num_steps_remaining_prev_iteration = {}
        return None
    (m, n) = throughputs.shape
    (job_ids, worker_types) = index
    sf = self.scale_factors_array(scale_factors, job_ids, m, n)
    iso_rate = self._isolated_policy.get_throughputs(
        throughputs, index, scale_factors, cluster_spec)
    left, since, iso = ftf_terms(self, job_ids, iso_rate, num_steps_remaining,
                                 times_since_start)
    workers = [cluster_spec[w] for w in worker_types]

    def test(rho):
        room = rho * iso - since
        if np.any(room <= 0):
            return None
        return feasible(throughputs, left / room, sf, workers)

    lo = max(0.0, float(np.max((since + left / throughputs.max(axis=1)) / iso)))
    best = least_rho(test, lo)
    self._num_steps_remaining_prev_iteration = copy.copy(num_steps_remaining)
    self._isolated_throughputs_prev_iteration = {
        j: iso_rate[i] for i, j in enumerate(job_ids)}
    if best is None:
        return self._isolated_policy.get_allocation(
            unflattened_throughputs, scale_factors, cluster_spec)
    return self.unflatten(best.clip(min=0.0).clip(max=1.0), index)


def sum_perf(self, unflattened_throughputs, scale_factors, cluster_spec,
             instance_costs=None, SLOs={}, num_steps_remaining={}):
    throughputs, index = self.flatten(unflattened_throughputs, cluster_spec)
    if throughputs is None:
        return None
    (m, n) = throughputs.shape
    (job_ids, worker_types) = index
    sf = self.scale_factors_array(scale_factors, job_ids, m, n)
    costs = np.ones(n)
    if instance_costs is not None:
        costs = np.array([instance_costs[w] for w in worker_types])
    rows, rhs = base_rows(m, n, sf, [cluster_spec[w] for w in worker_types])
    obj = -(throughputs / costs.reshape((1, n))).reshape(m * n)
    # _SLOs: sum_k T x >= steps left / time to the deadline, per job with
    # an SLO (the artifact's SLO_constraints); none met: solved without
    slo_rows, slo_rhs = [], []
    for job_id in SLOs or {}:
        i = job_ids.index(job_id)
        r = np.zeros(m * n)
        r[i * n:(i + 1) * n] = -throughputs[i]
        slo_rows.append(r)
        slo_rhs.append(-(num_steps_remaining[job_id] / SLOs[job_id]))
    res = linprog(obj, A_ub=np.array(rows + slo_rows),
                  b_ub=np.array(rhs + slo_rhs),
                  bounds=[(0.0, None)] * (m * n), method="highs")
    if res.status != 0 and slo_rows:
        print("WARNING: No allocation possible with provided SLOs!")
        res = linprog(obj, A_ub=np.array(rows), b_ub=np.array(rhs),
                      bounds=[(0.0, None)] * (m * n), method="highs")
    if res.status != 0:
        print("WARNING: Allocation returned by policy not optimal!")
        return None
    x = res.x.reshape((m, n))
    return self.unflatten(x.clip(min=0.0).clip(max=1.0), index)


def wf_get_allocation(self, unflattened_throughputs, scale_factors,
                      unflattened_priority_weights, cluster_spec,
                      entity_weights=None, entity_to_job_mapping=None,
                      verbose=False, return_effective_throughputs=False):
    # the artifact's get_allocation without its cvxpy expression; its
    # own iterations (_run_get_allocation_iterations) then call the two
    # problems below
    throughputs, index = self.flatten(unflattened_throughputs, cluster_spec)
    if throughputs is None:
        return None
    (job_ids, worker_types) = index
    (m, n) = throughputs.shape
    sf = self.scale_factors_array(scale_factors, job_ids, m, n)
    prop = self._proportional_policy.get_throughputs(throughputs, index,
                                                     cluster_spec)
    self._M = np.max(np.multiply(
        throughputs * (1.0 / prop).reshape((m, 1)), sf))
    self._wf_T = throughputs
    self._wf_workers = [cluster_spec[w] for w in worker_types]
    x = self._run_get_allocation_iterations(
        job_ids, m, n, prop, sf, entity_weights,
        unflattened_priority_weights, cluster_spec,
        entity_to_job_mapping=entity_to_job_mapping, verbose=verbose)
    return self.unflatten(x.clip(min=0.0).clip(max=1.0), index)


def wf_norm_rows(self, m, n, proportional_throughputs, width):
    """Row i: normalized effective throughput of job i over width vars
    (with space sharing: summed over the combinations it is in)."""
    rows = []
    P = np.asarray(proportional_throughputs).reshape(-1)
    pack = getattr(self, "_wf_pack", None)
    if pack is not None:
        all_m, relevant, singles = pack
        for i, j in enumerate(singles):
            r = np.zeros(width)
            for c in relevant[j]:
                r[c * n:(c + 1) * n] = all_m[i][c] / P[i]
            rows.append(r)
        return rows
    for i in range(m):
        r = np.zeros(width)
        r[i * n:(i + 1) * n] = self._wf_T[i] / P[i]
        rows.append(r)
    return rows


def wf_base(self, m, n, sf, width):
    """The base rows of both problems over width vars (x first): each
    job's time at most 1 (over the combinations it is in, with space
    sharing), each type's GPUs; and the bounds of x (0 for a combination
    of two scale factors)."""
    pack = getattr(self, "_wf_pack", None)
    groups = None
    if pack is not None:
        _, relevant, singles = pack
        groups = [relevant[j] for j in singles]
    rows, rhs = base_rows(m, n, sf, self._wf_workers, groups)
    rows = [np.append(r, np.zeros(width - m * n)) for r in rows]
    bounds = [(0.0, 0.0) if sf[c, k] == 0 else (0.0, None)
              for c in range(m) for k in range(n)]
    return rows, rhs, bounds


def wf_packed_get_allocation(self, unflattened_throughputs, scale_factors,
                             unflattened_priority_weights, cluster_spec,
                             entity_weights=None, entity_to_job_mapping=None,
                             verbose=False,
                             return_effective_throughputs=False):
    # MaxMinFairnessWaterFillingPolicyWithPacking.get_allocation without
    # its cvxpy expression: x per combination (a job or a pair of jobs)
    # and type, each job's normalized throughput summed over the
    # combinations it is in; the artifact's own _get_M and iterations
    all_m, index = self.flatten(d=unflattened_throughputs,
                                cluster_spec=cluster_spec)
    if all_m is None or len(all_m) == 0:
        return None
    (job_ids, single_job_ids, worker_types, relevant) = index
    (m, n) = all_m[0].shape
    sf = self.scale_factors_array(scale_factors, job_ids, m, n)
    prop = self._proportional_policy.get_throughputs(
        alone(unflattened_throughputs, single_job_ids, worker_types),
        (single_job_ids, worker_types), cluster_spec)
    self._M = self._get_M(all_m, index, prop, sf)
    self._wf_pack = (all_m, relevant, single_job_ids)
    self._wf_workers = [cluster_spec[w] for w in worker_types]
    x = self._run_get_allocation_iterations(
        single_job_ids, m, n, prop, sf, entity_weights,
        unflattened_priority_weights, cluster_spec,
        entity_to_job_mapping=entity_to_job_mapping, verbose=verbose)
    return self.unflatten(x.clip(min=0.0).clip(max=1.0), index)


def wf_lower(job_ids, final, sofar):
    return [final[j] if j in final else sofar[i]
            for i, j in enumerate(job_ids)]


def wf_lp(self, job_ids, priority_weights, proportional_throughputs,
          scale_factors_array, m, n, final, sofar):
    """The artifact's _get_allocation: max min_i (norm_i - sofar_i) mult_i
    + add_i, norm >= lower, base constraints."""
    M = self._M
    J = len(job_ids)  # m with space sharing is the number of combinations
    mult, mask, add = np.zeros(J), np.zeros(J), np.zeros(J)
    for i, j in enumerate(job_ids):
        if j not in final and priority_weights[i] > 0.0:
            mult[i] = priority_weights[i] * scale_factors_array[i, 0]
            mask[i] = 1.0 / mult[i]
        else:
            add[i] = M
    lower = wf_lower(job_ids, final, sofar)
    rows, rhs, bounds = wf_base(self, m, n, scale_factors_array, m * n + 1)
    for i, norm in enumerate(wf_norm_rows(self, m, n,
                                          proportional_throughputs,
                                          m * n + 1)):
        r = -mult[i] * norm
        r[-1] = 1.0
        rows.append(r)
        rhs.append(-mult[i] * sofar[i] + add[i])
        rows.append(-norm)
        rhs.append(-lower[i])
    obj = np.zeros(m * n + 1)
    obj[-1] = -1.0
    res = linprog(obj, A_ub=np.array(rows), b_ub=np.array(rhs),
                  bounds=bounds + [(None, None)], method="highs")
    if res.status != 0:
        return None, None, mask
    return res.x[:-1].reshape((m, n)), res.x[-1], mask


def wf_milp(self, job_ids, priority_weights, proportional_throughputs,
            scale_factors_array, m, n, final, sofar, slack=1.0001):
    """The artifact's _get_bottleneck_jobs (GLPK_MI there): max sum z with
    M z >= norm - sofar slack + eps, M (1 - z) >= sofar slack - norm,
    norm >= lower, z = 0 where masked; a failure raises, as there."""
    M, eps = self._M, 1e-5
    lower = wf_lower(job_ids, final, sofar)
    J = len(job_ids)
    width = m * n + J
    rows, rhs, bounds = wf_base(self, m, n, scale_factors_array, width)
    for i, norm in enumerate(wf_norm_rows(self, m, n,
                                          proportional_throughputs, width)):
        zi = np.zeros(width)
        zi[m * n + i] = M
        rows.append(norm - zi)
        rhs.append(sofar[i] * slack - eps)
        rows.append(zi - norm)
        rhs.append(M - sofar[i] * slack)
        rows.append(-norm)
        rhs.append(-lower[i])
    ub = np.ones(width)
    ub[:m * n] = [np.inf if hi is None else hi for _, hi in bounds]
    for i, j in enumerate(job_ids):
        if j in final or priority_weights[i] == 0.0:
            ub[m * n + i] = 0.0
    c = np.zeros(width)
    c[m * n:] = -1.0
    integrality = np.zeros(width)
    integrality[m * n:] = 1
    res = milp(c, constraints=LinearConstraint(np.array(rows), -np.inf,
                                               np.array(rhs)),
               bounds=Bounds(np.zeros(width), ub), integrality=integrality)
    if not res.success:
        raise Exception("WARNING: Non-optimal allocation in "
                        "_get_bottleneck_jobs()!")
    return res.x[m * n:]


def alone(unflattened_throughputs, single_job_ids, worker_types):
    """Each job's throughput alone on each type (jobs x types)."""
    return np.array([[unflattened_throughputs[j][w] for w in worker_types]
                     for j in single_job_ids], dtype=float).reshape(
                         (len(single_job_ids), len(worker_types)))


def packed_rows(all_m, relevant, single_job_ids, sf, workers, term, thr_rhs,
                z=None):
    """The packed LPs' rows (A_ub, b_ub) over x per combination and type:
    per job, the sum over the combinations it is in of term(i, c, k, its
    throughput there) (+ column z, when given) <= thr_rhs[i], and its time
    at most 1; per type, its GPUs."""
    from scipy.sparse import coo_matrix
    (m, n) = all_m[0].shape
    ri, ci, va, rhs = [], [], [], []
    row = 0
    for i, j in enumerate(single_job_ids):
        if z is not None:
            ri.append(row), ci.append(z), va.append(1.0)
        for c in relevant[j]:
            for k in range(n):
                ri.append(row), ci.append(c * n + k)
                va.append(term(i, c, k, float(all_m[i][c][k])))
        rhs.append(float(thr_rhs[i]))
        row += 1
        for c in relevant[j]:
            for k in range(n):
                ri.append(row), ci.append(c * n + k), va.append(1.0)
        rhs.append(1.0)
        row += 1
    for k in range(n):
        for c in range(m):
            ri.append(row), ci.append(c * n + k), va.append(sf[c, k])
        rhs.append(workers[k])
        row += 1
    width = m * n + (1 if z is not None else 0)
    return (coo_matrix((va, (ri, ci)), shape=(row, width)).tocsr(),
            np.array(rhs))


def max_min_packed(self, unflattened_throughputs, scale_factors,
                   unflattened_priority_weights, cluster_spec):
    """MaxMinFairnessPolicyWithPacking.get_allocation's LP: a variable per
    job or pair of jobs and type; each job's normalized throughput summed
    over the combinations it is in, the smallest maximized; each job's
    time at most 1, each type's GPUs; combinations of two scale factors 0."""
    all_m, index = self.flatten(d=unflattened_throughputs,
                                cluster_spec=cluster_spec,
                                priority_weights=unflattened_priority_weights)
    if all_m is None or len(all_m) == 0:
        return None
    (m, n) = all_m[0].shape
    (job_ids, single_job_ids, worker_types, relevant) = index
    sf = self.scale_factors_array(scale_factors, job_ids, m, n)
    tnp = alone(unflattened_throughputs, single_job_ids, worker_types)
    prop = self._proportional_policy.get_throughputs(
        tnp, (single_job_ids, worker_types), cluster_spec)
    z = m * n
    a, rhs = packed_rows(all_m, relevant, single_job_ids, sf,
                         self._num_workers,
                         lambda i, c, k, t: -t * sf[c, k] / float(prop[i]),
                         np.zeros(len(single_job_ids)), z)
    bounds = [(0.0, 0.0) if sf[c, k] == 0 else (0.0, None)
              for c in range(m) for k in range(n)] + [(None, None)]
    obj = np.zeros(z + 1)
    obj[-1] = -1.0
    return max_z(self, index, m, n, obj, a, rhs, bounds)


def packed_feasible(all_m, relevant, single_job_ids, sf, workers, need):
    """The packed policies' feasibility LP: x per combination (a job or a
    pair of jobs) and type with each job's throughput summed over the
    combinations it is in at least need[i], each job's time at most 1, each
    type's GPUs; combinations of two scale factors 0. x, or None."""
    (m, n) = all_m[0].shape
    a, rhs = packed_rows(all_m, relevant, single_job_ids, sf, workers,
                         lambda i, c, k, t: -t, -np.asarray(need, float))
    bounds = [(0.0, 0.0) if sf[c, k] == 0 else (0.0, None)
              for c in range(m) for k in range(n)]
    res = linprog(np.zeros(m * n), A_ub=a, b_ub=rhs, bounds=bounds,
                  method="highs")
    return res.x.reshape((m, n)) if res.status == 0 else None


def makespan_packed_helper(self, all_throughputs, job_ids, single_job_ids,
                           scale_factors_array, T, relevant_combinations):
    need = np.array(self._num_steps_remaining) / T
    x = types.SimpleNamespace(value=packed_feasible(
        all_throughputs, relevant_combinations, single_job_ids,
        scale_factors_array, self._num_workers, need))
    return ("optimal" if x.value is not None else "infeasible"), x


def ftf_packed(self, unflattened_throughputs, scale_factors,
               unflattened_priority_weights, times_since_start,
               num_steps_remaining, cluster_spec):
    """FinishTimeFairnessPolicyWithPacking.get_allocation: the same
    largest finish-time fraction minimized, by bisection on it with the
    packed feasibility LP (as ftf_perf)."""
    all_m, index = self.flatten(d=unflattened_throughputs,
                                cluster_spec=cluster_spec,
                                priority_weights=unflattened_priority_weights)
    if all_m is None or len(all_m) == 0:
        self._isolated_throughputs_prev_iteration = {}
        self._num_steps_remaining_prev_iteration = {}
        return None
    (m, n) = all_m[0].shape
    (job_ids, single_job_ids, worker_types, relevant) = index
    sf = self.scale_factors_array(scale_factors, job_ids, m, n)
    tnp = alone(unflattened_throughputs, single_job_ids, worker_types)
    iso_rate = self._isolated_policy.get_throughputs(
        tnp, (single_job_ids, worker_types), scale_factors, cluster_spec)
    left, since, iso = ftf_terms(self, single_job_ids, iso_rate,
                                 num_steps_remaining, times_since_start)
    fast = np.array([max(float(all_m[i][c][k]) for c in relevant[j]
                         for k in range(n))
                     for i, j in enumerate(single_job_ids)])
    workers = [cluster_spec[w] for w in worker_types]

    def test(rho):
        room = rho * iso - since
        if np.any(room <= 0):
            return None
        return packed_feasible(all_m, relevant, single_job_ids, sf, workers,
                               left / room)

    lo = max(0.0, float(np.max((since + left / fast) / iso)))
    best = least_rho(test, lo)
    self._num_steps_remaining_prev_iteration = copy.copy(num_steps_remaining)
    self._isolated_throughputs_prev_iteration = {
        j: iso_rate[i] for i, j in enumerate(single_job_ids)}
    if best is None:
        print("WARNING: Allocation returned by policy not optimal!")
        best = np.zeros((m, n))
    return self.unflatten(best.clip(min=0.0).clip(max=1.0), index)


if not as_written:
    max_min_fairness.MaxMinFairnessPolicyWithPerf.get_allocation = max_min_perf
    max_min_fairness.MaxMinFairnessPolicyWithPacking.get_allocation = \
        max_min_packed
    max_min_fairness_water_filling.MaxMinFairnessWaterFillingPolicyWithPerf\
        .get_allocation = wf_get_allocation
    max_min_fairness_water_filling.MaxMinFairnessWaterFillingPolicyWithPacking\
        .get_allocation = wf_packed_get_allocation
    max_min_fairness_water_filling.WaterFillingAlgorithm._get_allocation = wf_lp
    max_min_fairness_water_filling.WaterFillingAlgorithm._get_bottleneck_jobs = \
        wf_milp
    max_sum_throughput.ThroughputNormalizedByCostSumWithPerfSLOs.get_allocation = \
        sum_perf
    min_total_duration.MinTotalDurationPolicyWithPerf.get_allocation_helper = \
        makespan_helper
    finish_time_fairness.FinishTimeFairnessPolicyWithPerf.get_allocation = \
        ftf_perf
    min_total_duration.MinTotalDurationPolicyWithPacking.get_allocation_helper = \
        makespan_packed_helper
    finish_time_fairness.FinishTimeFairnessPolicyWithPacking.get_allocation = \
        ftf_packed

# ---- the _SLOs objective: the scheduler's assign_SLOs (each job's
# deadline SLO x duration + arrival), and the durations the artifact's
# parse_trace leaves unset (its generator sets them: steps over the V100
# throughput, as gpupool reads a Gavel trace)
made = []
if "SLO" in objective:
    import scheduler as gavel_scheduler  # noqa: E402
    import utils as gavel_utils  # noqa: E402

    oracle = gavel_utils.read_all_throughputs_json_v2(
        os.path.join(sched_dir, "simulation_throughputs.json"))
    plain_parse = gavel_utils.parse_trace

    def parse_with_durations(path):
        jobs, arrivals = plain_parse(path)
        for j in jobs:
            j._duration = j.total_steps / \
                oracle["v100"][(j.job_type, j.scale_factor)]["null"]
        return jobs, arrivals

    plain_init = gavel_scheduler.Scheduler.__init__

    def init_with_slos(self, *a, **kw):
        kw["assign_SLOs"] = True
        plain_init(self, *a, **kw)
        # the artifact keeps SLOs only beside spot-price logs (a
        # simulation has none: instance costs stay 1)
        if self._SLOs is None:
            self._SLOs = {}
        made.append(self)

    gavel_utils.parse_trace = parse_with_durations
    gavel_scheduler.Scheduler.__init__ = init_with_slos

# ---- the trace in the layout the artifact's parse_trace reads (10 fields:
# priority weight 1, SLO -1; a trace in that layout already is kept)
rows = []
for line in open(trace):
    f = line.rstrip("\n").split("\t")
    if len(f) == 10:
        rows.append(line)
        continue
    rows.append("\t".join([f[0], f[1], "", f[2], f[3], f[4], f[6], "1", "-1",
                           f[5]]) + "\n")
with tempfile.NamedTemporaryFile("w", suffix=".trace", delete=False) as t:
    t.writelines(rows)
driver = os.path.join(sched_dir, "scripts", "drivers",
                      "simulate_scheduler_with_trace.py")
sys.argv = [driver, "-t", t.name, "-p", objective, "-c",
            f"{gpus}:{gpus}:{gpus}", "--num_gpus_per_server", "8:8:8",
            "--throughputs_file",
            os.path.join(sched_dir, "simulation_throughputs.json"),
            "--seed", "0"]
buf = io.StringIO()
cwd = os.getcwd()
os.chdir(sched_dir)
try:
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(buf), \
            contextlib.redirect_stderr(null):  # its log, on stderr
        runpy.run_path(driver, run_name="__main__")
finally:
    os.chdir(cwd)
    os.unlink(t.name)
name = os.path.basename(trace).rsplit(".", 1)[0]
jct = [(int(mt.group(1)), mt.group(2)) for mt in
       (re.match(r"^Job (\d+): ([0-9.]+)$", s) for s in buf.getvalue().splitlines())
       if mt]
with open(out, "w") as f:
    f.write("id,jct_s\n")
    for i, v in sorted(jct):
        f.write(f"{name}-{i + 1},{v}\n")
avg = [s for s in buf.getvalue().splitlines() if s.startswith("Average job completion time:")]
print(f"{len(jct)} jobs; {avg[0] if avg else 'no average printed'}")
if made:
    print(f"SLO violations: {made[0].get_num_SLO_violations(verbose=False)}")
