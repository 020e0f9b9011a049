#!/bin/sh
# run_golden.sh GPUPOOL CASE_DIR - replay CASE_DIR/../trace.csv with the
# options in CASE_DIR/args (where @DIR@ stands for the folder of the
# trace, for files beside it: a cluster, tenants); check the per-job results against
# expected-jobs.csv (id, first start, end, preemptions), the summary against
# expected-summary.json, the invariants (no GPU over-allocated, every job
# ended), that utilization recomputed from the runs CSV (one row per run
# interval) is the printed one over both windows, and that a second run
# prints byte-identical output.
set -eu
exe=$1
case_dir=$2
trace="$case_dir/../trace.csv"
[ -f "$case_dir/trace.csv" ] && trace="$case_dir/trace.csv"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=$(sed "s|@DIR@|$(dirname "$trace")|g" "$case_dir/args")
# shellcheck disable=SC2086
"$exe" sim --trace "$trace" $args --json --no-wall \
    --no-progress --jobs-csv "$tmp/jobs1.csv" --runs-csv "$tmp/runs1.csv" \
    >"$tmp/out1.json"
# shellcheck disable=SC2086
"$exe" sim --trace "$trace" $args --json --no-wall \
    --no-progress --jobs-csv "$tmp/jobs2.csv" --runs-csv "$tmp/runs2.csv" \
    >"$tmp/out2.json"
# the same bytes, but for the command line (which names other CSV files)
sed '/^  "command": /d' "$tmp/out1.json" >"$tmp/out1.nocmd"
sed '/^  "command": /d' "$tmp/out2.json" >"$tmp/out2.nocmd"
cmp -s "$tmp/out1.nocmd" "$tmp/out2.nocmd" ||
    { echo "FAIL: two runs printed different JSON"; exit 1; }
cmp -s "$tmp/jobs1.csv" "$tmp/jobs2.csv" ||
    { echo "FAIL: two runs wrote different job CSVs"; exit 1; }
cmp -s "$tmp/runs1.csv" "$tmp/runs2.csv" ||
    { echo "FAIL: two runs wrote different runs CSVs"; exit 1; }
python3 - "$case_dir" "$tmp" <<'PY'
import csv, json, sys
case, tmp = sys.argv[1], sys.argv[2]
out = json.load(open(tmp + "/out1.json"))
jobs = {r["id"]: r for r in csv.DictReader(open(tmp + "/jobs1.csv"))}
bad = []
for want in csv.DictReader(open(case + "/expected-jobs.csv")):
    got = jobs.get(want["id"])
    if got is None:
        bad.append(f"job {want['id']}: missing from the output")
        continue
    for k, v in want.items():
        if k == "id":
            continue
        if abs(float(got[k]) - float(v)) > 1e-6:
            bad.append(f"job {want['id']}: {k} = {got[k]}, expected {v}")
for k, v in json.load(open(case + "/expected-summary.json")).items():
    if k not in out:
        bad.append(f"summary: no key {k}")
    elif abs(float(out[k]) - float(v)) > 1e-6 * max(1.0, abs(float(v))):
        bad.append(f"summary: {k} = {out[k]}, expected {v}")
# utilization from the runs CSV, as docs/metrics.md shows a user: GPU-
# seconds of the run intervals over GPUs x window, the arrival window
# cutting each interval to [first, last submission]; a device that
# co-located jobs share (gandiva) counts once: the union of the runs on it
runs = list(csv.DictReader(open(tmp + "/runs1.csv")))
submits = [float(j["submit_s"]) for j in jobs.values() if j["state"] != "rejected"]
t0, t1 = min(submits), max(submits)


def devices(placement):
    out = []
    for piece in filter(None, placement.split(";")):
        node, _, devs = piece.partition(":")
        for part in devs.split(","):
            lo, _, hi = part.partition("-")
            out += [(node, d) for d in range(int(lo), int(hi or lo) + 1)]
    return out


def busy_in(lo, hi):
    total, per_dev = 0.0, {}
    for r in runs:
        a, b = max(float(r["start_s"]), lo), min(float(r["end_s"]), hi)
        if b <= a:
            continue
        pl = r["placement"]
        devs = devices(pl) if ":" in pl and "@" not in pl else []
        if len(devs) != int(r["gpus"]):  # no devices named: count the GPUs
            total += (b - a) * int(r["gpus"])
            continue
        for d in devs:
            per_dev.setdefault(d, []).append((a, b))
    for spans in per_dev.values():
        end = None
        for a, b in sorted(spans):
            if end is None or a > end:
                total += b - a
                end = b
            elif b > end:
                total += b - end
                end = b
    return total


busy = busy_in(float("-inf"), float("inf"))
busy_arr = busy_in(t0, t1)
gpus = out["cluster_gpus"]
checks = [("gpu_utilization_makespan", busy / (gpus * out["makespan_s"]))]
if t1 > t0:
    checks.append(("gpu_utilization_arrivals", busy_arr / (gpus * (t1 - t0))))
elif out["gpu_utilization_arrivals"] is not None:
    bad.append("summary: gpu_utilization_arrivals should be null (one submit time)")
for key, got in checks:
    if abs(got - out[key]) > 1e-6:
        bad.append(f"runs CSV: {key} recomputed {got:.6f}, printed {out[key]}")
starts = sum(int(j["starts"]) for j in jobs.values())
if len(runs) != starts:
    bad.append(f"runs CSV: {len(runs)} rows for {starts} starts")
if out.get("unfinished", 0) != 0:
    bad.append(f"invariant: {out['unfinished']} jobs never ended")
if not 0 <= float(out["gpu_utilization"]) <= 1 + 1e-9:
    bad.append("invariant: GPU utilization above 1 (a GPU given twice)")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
echo "ok: $(basename "$case_dir")"
