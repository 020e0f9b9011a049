#!/usr/bin/env python3
"""themis-rho.py - finish-time fairness per app from a per-job CSV, as
docs/policies/themis.md defines it for a finished run (any policy's).

  themis-rho.py --jobs-csv JOBS.csv --gpus C [--app user+name] [--out APPS.csv]

Apps group jobs as themis.app= does (user+name, user, name, tenant, job; a
job whose chosen fields are all empty is an app of its own). For each app:

  T_shared = last end - first submission
  T_ind    = W / min(C / N_avg, D)
  rho      = T_shared / T_ind

W: GPU-seconds of work (duration_s x gpus, durations on the reference
GPU); D: GPUs its jobs ask in all; N_avg: the number of apps alive (first
submission <= t < last end) averaged over the app's own lifetime. Prints
the number of apps, max, mean and median rho, and the average JCT; --out
writes one row per app. Jobs that did not complete are left out (counted).
"""
import argparse
import bisect
import csv
import statistics
import sys


def app_key(row, by):
    fields = {"user+name": ("user", "name"), "user": ("user",),
              "name": ("name",), "tenant": ("tenant",), "job": ()}[by]
    vals = tuple(row[f] for f in fields)
    if not any(vals):
        return ("job", row["id"])
    return vals


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs-csv", required=True)
    ap.add_argument("--gpus", type=float, required=True,
                    help="GPUs of the cluster (C)")
    ap.add_argument("--app", default="user+name",
                    choices=["user+name", "user", "name", "tenant", "job"])
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.gpus <= 0:
        sys.exit("themis-rho.py: --gpus must be > 0")
    apps, jcts, skipped = {}, [], 0
    with open(a.jobs_csv, newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            try:
                if row["state"] != "completed":
                    skipped += 1
                    continue
                sub, end = float(row["submit_s"]), float(row["end_s"])
                gpus, dur = float(row["gpus"]), float(row["duration_s"])
            except (KeyError, ValueError) as e:
                sys.exit(f"themis-rho.py: {a.jobs_csv}:{line}: {e}")
            jcts.append(end - sub)
            k = app_key(row, a.app)
            ap_ = apps.setdefault(k, [sub, end, 0.0, 0.0])
            ap_[0], ap_[1] = min(ap_[0], sub), max(ap_[1], end)
            ap_[2] += dur * max(gpus, 1e-3)
            ap_[3] += max(gpus, 1e-3)
    if not apps:
        sys.exit("themis-rho.py: no completed job")
    # n(t), apps alive, as a step function; F(t) its integral
    ev = sorted([(v[0], 1) for v in apps.values()] +
                [(v[1], -1) for v in apps.values()])
    ts, cum, n, acc, last = [], [], 0, 0.0, ev[0][0]
    for t, d in ev:
        acc += n * (t - last)
        last = t
        n += d
        ts.append(t)
        cum.append((acc, n))

    def integral(t):
        i = bisect.bisect_right(ts, t) - 1
        c, n_ = cum[i]
        return c + n_ * (t - ts[i])

    rows = []
    for k, (sub, end, work, demand) in apps.items():
        span = end - sub
        navg = (integral(end) - integral(sub)) / span if span > 0 else 1.0
        share = min(a.gpus / max(navg, 1.0), demand)
        t_ind = work / share
        rows.append(("/".join(k), span, t_ind, span / t_ind if t_ind else 0))
    rhos = [r[3] for r in rows]
    print(f"apps {len(rows)}  max rho {max(rhos):.2f}  mean rho "
          f"{statistics.mean(rhos):.2f}  median rho "
          f"{statistics.median(rhos):.2f}  avg JCT "
          f"{statistics.mean(jcts) / 3600:.2f} h  (jobs not completed: "
          f"{skipped})")
    if a.out:
        with open(a.out, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["app", "t_shared_s", "t_ind_s", "rho"])
            for r in sorted(rows, key=lambda r: -r[3]):
                w.writerow([r[0], f"{r[1]:.0f}", f"{r[2]:.0f}", f"{r[3]:.4f}"])


if __name__ == "__main__":
    main()
