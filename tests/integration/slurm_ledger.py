#!/usr/bin/env python3
"""slurm_ledger.py JOBS.json JOBCOMP.log POLL_S - gpupool's GPU-seconds
against Slurm's own record of the same runs.

JOBS.json is a JSON array of `gpupool show --json` answers. For each job,
its Slurm job is the one its events name ("started" or "adopted" carry
slurm_job). Slurm's job completion log has a line per run (a requeued run ends
with JobState=PENDING; one that left at the signal has a COMPLETED line and
then a PENDING one with the same start, counted once); it carries no GPU count (no slurmdbd), so
Slurm's GPU-seconds of a run are its length times the job's GPUs.

A run's start is seen by gpupool when it releases the job, its end at the
next poll; Slurm's times are whole seconds. So each run may differ by one
poll period plus one second, times the job's GPUs. Prints one line per job
and exits 1 if any job is off by more.
"""
import json
import re
import sys
import time


def slurm_runs(path):
    runs = {}
    with open(path) as f:
        for line in f:
            fields = dict(re.findall(r"(\w+)=(\S*)", line))
            if fields.get("NodeCnt", "0") == "0" and fields.get(
                    "JobState") != "PENDING":
                continue
            start, end = fields.get("StartTime"), fields.get("EndTime")
            if not start or start == "Unknown" or not end or end == "Unknown":
                continue
            t0 = time.mktime(time.strptime(start, "%Y-%m-%dT%H:%M:%S"))
            t1 = time.mktime(time.strptime(end, "%Y-%m-%dT%H:%M:%S"))
            mine = runs.setdefault(int(fields["JobId"]), [])
            # a run that left at the signal is recorded COMPLETED, then
            # its requeue is recorded again (PENDING, the same start):
            # one run
            if any(r[0] == t0 for r in mine):
                continue
            mine.append((t0, t1, fields["JobState"]))
    return runs


def slurm_id(job):
    for ev in job.get("events", []):
        d = ev.get("detail") or {}
        if "slurm_job" in d:
            return int(d["slurm_job"])
    return None


def main():
    jobs = json.load(open(sys.argv[1]))
    runs = slurm_runs(sys.argv[2])
    poll = float(sys.argv[3])
    bad = 0
    for job in jobs:
        sid = slurm_id(job)
        mine = [r for r in runs.get(sid, []) if r[1] > r[0] or r[2] != "PENDING"]
        slurm_s = sum((r[1] - r[0]) * job["gpus"] for r in mine)
        nruns = max(len(mine), len(job.get("runs", [])), 1)
        allowed = nruns * (poll + 1.0) * job["gpus"]
        diff = job["gpu_seconds"] - slurm_s
        ok = abs(diff) <= allowed
        bad += not ok
        print("job %d (Slurm %s): gpupool %.1f GPU-s, Slurm %.1f GPU-s over "
              "%d runs, diff %+.1f (allowed %.1f) %s"
              % (job["id"], sid, job["gpu_seconds"], slurm_s, len(mine), diff,
                 allowed, "ok" if ok else "OFF"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
