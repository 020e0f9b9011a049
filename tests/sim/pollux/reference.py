#!/usr/bin/env python3
"""reference.py PROFILES APP:REPLICAS:BSZ ... - how long one Pollux job runs
alone on an idle cluster of 4-GPU nodes, keeping its batch size.

An independent reimplementation, for tests/sim/pollux/run.sh, of the Pollux
artifact's simulator (github.com/petuum/adaptdl, tag osdi21-artifact:
simulator/applications.py, Application; simulator/simulator.py, Job.step
and Job.update_local_bsz) for a job with a target batch size, as the
artifact's Tiresias and Optimus runs make them: standard library only.

PROFILES is a model-profiles directory (a directory per application holding
placements.csv and validation-<B>.csv). For each APP:REPLICAS:BSZ it prints
one line: the case, the per-GPU batch, the accumulation steps, the
placement and the seconds to complete. The job's placement is its REPLICAS
packed four to a node (6 -> 4+2), the artifact's configurations. It runs
epoch e (0 .. max_epochs-1) from progress(e) to progress(e+1) at goodput

    gain / (step + accum x (step - sync)),
    gain = (var + sqr) / (var / scale + sqr),  scale = M / M0

with M = replicas x atomic x (accum + 1) the job's batch size, M0 the
smallest validated one, step/sync interpolated linearly in the per-GPU
batch size on the placement's rows (digits in smallest rotation), sqr/var
the validation rows of epoch e interpolated linearly between the validated
batch sizes around M, progress(e) the least progress any validation run had
after e epochs. The artifact rounds each epoch's time to whole seconds
(Job.step: delta = round(...)); by default this does not; --round does.
Only placements the profiles measured (up to four nodes: 16 GPUs) are
handled: the artifact's Delaunay interpolation of the others is not.
"""
import csv
import math
import os
import sys

# The artifact's APPLICATIONS table: max_epochs per application, and
# yolov3's per-GPU batch cap.
MAX_EPOCHS = {"bert": 2, "cifar10": 100, "ncf": 10, "imagenet": 90,
              "deepspeech2": 80, "yolov3": 50}
MAX_LOCAL_BSZ = {"yolov3": 8}
NODE_GPUS = 4


class App:
    def __init__(self, profiles, name):
        d = os.path.join(profiles, name)
        if not os.path.isdir(d):
            raise SystemExit(f"reference.py: no profiles for {name} in {profiles}")
        self.name = name
        self.validation = {}
        for f in os.listdir(d):
            if f.startswith("validation-") and f.endswith(".csv"):
                bsz = int(f[len("validation-"):-len(".csv")])
                with open(os.path.join(d, f), newline="") as fh:
                    self.validation[bsz] = [
                        {k: float(v) for k, v in row.items()}
                        for row in csv.DictReader(fh)]
        self.bszs = sorted(self.validation)
        # placement id (string of digits) -> sorted [(local_bsz, step, sync)]
        self.placements = {}
        with open(os.path.join(d, "placements.csv"), newline="") as fh:
            for row in csv.DictReader(fh):
                self.placements.setdefault(row["placement"], []).append(
                    (float(row["local_bsz"]), float(row["step_time"]),
                     float(row["sync_time"])))
        for rows in self.placements.values():
            rows.sort()
        local = [r[0] for rows in self.placements.values() for r in rows]
        self.init_batch_size = self.bszs[0]
        self.max_batch_size = self.bszs[-1]
        self.min_local_bsz = min(local)
        self.max_local_bsz = MAX_LOCAL_BSZ.get(name, max(local))
        self.max_epochs = MAX_EPOCHS.get(
            name, min(len(v) for v in self.validation.values()))

    def around(self, bsz):
        """The validated batch sizes at or just below and above bsz."""
        lo = hi = None
        for b in self.bszs:
            if b <= bsz:
                lo = b
            if b >= bsz:
                hi = b
                break
        if lo is None or hi is None:
            raise SystemExit(f"reference.py: {self.name}: batch size {bsz} "
                             f"outside the validated {self.bszs}")
        return lo, hi

    def progress(self, epoch):
        if epoch == 0:
            return 0.0
        return min(rows[epoch - 1]["progress"]
                   for rows in self.validation.values())

    def grad_stats(self, bsz, epoch):
        lo, hi = self.around(bsz)
        lsqr = self.validation[lo][epoch]["grad_sqr"]
        lvar = self.validation[lo][epoch]["grad_var"]
        if lo == hi:
            return lsqr, lvar
        usqr = self.validation[hi][epoch]["grad_sqr"]
        uvar = self.validation[hi][epoch]["grad_var"]
        w = hi - lo
        return (((bsz - lo) * usqr + (hi - bsz) * lsqr) / w,
                ((bsz - lo) * uvar + (hi - bsz) * lvar) / w)

    def throughput(self, placement, local_bsz):
        p = tuple(x for x in placement if x)
        p = min(p[i:] + p[:i] for i in range(len(p)))
        pid = "".join(map(str, p))
        rows = self.placements.get(pid)
        if rows is None:
            raise SystemExit(f"reference.py: {self.name}: placement {pid} "
                             "not measured (only measured ones are handled)")
        for (x0, s0, y0), (x1, s1, y1) in zip(rows, rows[1:]):
            if x0 <= local_bsz <= x1 and x1 > x0:
                t = (local_bsz - x0) / (x1 - x0)
                return s0 + t * (s1 - s0), y0 + t * (y1 - y0)
        for x, s, y in rows:
            if x == local_bsz:
                return s, y
        raise SystemExit(f"reference.py: {self.name}: per-GPU batch "
                         f"{local_bsz} outside placement {pid}'s "
                         f"[{rows[0][0]:g}, {rows[-1][0]:g}]")

    def fixed_conf(self, replicas, bsz):
        """Job.update_local_bsz with a target batch size: (atomic, accum)."""
        local = math.ceil(bsz / replicas - 1e-8)
        accum = math.ceil(local / self.max_local_bsz - 1e-8) - 1
        if replicas == 1 and bsz > self.init_batch_size:
            accum = max(1, accum)
        atomic = math.ceil(local / (accum + 1) - 1e-8)
        atomic = min(atomic,
                     int(self.max_batch_size / (replicas * (accum + 1))))
        return atomic, accum


def packed(replicas):
    p = []
    while sum(p) < replicas:
        p.append(min(replicas - sum(p), NODE_GPUS))
    return tuple(p)


def run_time(app, replicas, bsz, rounded=False):
    """Seconds the job takes alone on its packed placement, and its
    configuration: (seconds, atomic, accum, placement)."""
    placement = packed(replicas)
    atomic, accum = app.fixed_conf(replicas, bsz)
    m = replicas * atomic * (accum + 1)
    scale = m / app.init_batch_size
    step, sync = app.throughput(placement, atomic)
    total = step + accum * (step - sync)
    seconds = 0.0
    for e in range(app.max_epochs):
        sqr, var = app.grad_stats(m, e)
        gain = (var + sqr) / (var / scale + sqr)
        goodput = gain / total
        dt = (app.progress(e + 1) - app.progress(e)) / goodput
        seconds += round(dt) if rounded else dt
    return seconds, atomic, accum, placement


def main(argv):
    rounded = "--round" in argv
    args = [a for a in argv if a != "--round"]
    if len(args) < 2:
        raise SystemExit(__doc__.split("\n\n")[0])
    apps = {}
    for case in args[1:]:
        name, replicas, bsz = case.split(":")
        if name not in apps:
            apps[name] = App(args[0], name)
        s, atomic, accum, placement = run_time(apps[name], int(replicas),
                                               int(bsz), rounded)
        print(f"{case} atomic={atomic} accum={accum} "
              f"placement={'+'.join(map(str, placement))} seconds={s:.6f}")


if __name__ == "__main__":
    main(sys.argv[1:])
