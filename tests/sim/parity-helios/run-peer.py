#!/usr/bin/env python3
"""run-peer.py TRACE NODES OUT - run the Helios artifact's QSSF simulator
(github S-Lab-System-Group/HeliosArtifact, "framework/QSSF Service/", run
from that folder) on a gpupool trace of one VC of NODES 8-GPU nodes, and
write each job's start and end to OUT (id,start_s,end_s).

This stands in for the artifact's simulator.py and utils.trace_process,
which read its own Philly/Helios data files: it builds the same job table
(the columns trace_process makes, sorted by submit time, stable), the
same Cluster, and the artifact's own PhillyEstimator, whose priority
column (estimators/Philly_lgb.csv, written here from the trace's
estimate_s, keyed by job name) it multiplies by the GPU count; then it
calls the artifact's utils.simulate_vc with the consolidate placer, as
simulator.py does for each VC. Nothing of the artifact is changed."""
import csv
import logging
import os
import sys
import tempfile

import pandas as pd

sys.path.insert(0, os.getcwd())
import cluster  # noqa: E402  (the artifact's)
import utils  # noqa: E402
from estimators import PhillyEstimator  # noqa: E402

trace_csv, nodes, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = list(csv.DictReader(open(trace_csv)))
df = pd.DataFrame({
    "job_id": [r["id"] for r in rows],
    "user": "u",
    "vc": "vc1",
    "jobname": [r["name"] for r in rows],
    "gpu_num": [int(r["gpus"]) for r in rows],
    "state": "COMPLETED",
    "submit_time": [int(r["submit_s"]) for r in rows],
    "duration": [int(r["duration_s"]) for r in rows],
})
df["remain"] = df["duration"]
df[["start_time", "end_time"]] = sys.maxsize
df[["ckpt_times", "queue", "jct"]] = 0
df["status"] = None
df = df.sort_values(by="submit_time", kind="stable").reset_index(drop=True)
os.makedirs("estimators", exist_ok=True)
pd.DataFrame({"jobname": [r["name"] for r in rows],
              "priority": [int(r["estimate_s"]) for r in rows]}).to_csv(
    "estimators/Philly_lgb.csv", index=False)

log_dir = tempfile.mkdtemp()
logger = logging.getLogger()
vcs = cluster.Cluster({"vc1": nodes}, 8, 96)
utils.simulate_vc(utils.trace_parser(df), vcs.vc_list[0], "consolidate",
                  log_dir, "qssf", logger, 0, PhillyEstimator(None))
res = pd.read_csv(f"{log_dir}/vc1/qssf_consolidate_vc1_log.csv")
with open(out, "w") as f:
    f.write("id,start_s,end_s\n")
    for _, r in res.iterrows():
        f.write(f"{r['job_id']},{int(r['start_time'])},{int(r['end_time'])}\n")
