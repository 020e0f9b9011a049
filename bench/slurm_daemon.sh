#!/bin/sh
# slurm_daemon.sh GPUPOOL [JOBS [SERVE-OPTION...]] - figures of `gpupool serve` with
# backend = slurm on the test cluster (4 nodes x 4 fake GPUs, two
# switches), as root:
#  - actuation latency: gpupool's decision to start a job (its run's start
#    in the store) to Slurm allocating it (slurmctld's log, "sched:
#    Allocate JobId=", milliseconds), over the JOBS jobs of the last part;
#  - reclaim latency: a lender's submit to Slurm allocating its job, while
#    a borrower's checkpointable jobs fill the cluster (signal, the job
#    leaves at once, held requeue, release);
#  - submit -> allocate latency of those jobs (bench/slurm_native.sh
#    measures the same on Slurm's own scheduler);
#  - throughput: JOBS one-GPU jobs that exit at once, from the first submit
#    to the last end gpupool records.
# SERVE-OPTIONs go to `gpupool serve` after the bench's own, e.g.
# --set slurm.busy_poll=1s to compare. Prints the figures; docs/slurm.md
# quotes a run.
set -u
exe=$(realpath "$1")
njobs=${2:-200}
shift
[ $# -eq 0 ] || shift
src=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "bench/slurm_daemon.sh: needs root" >&2; exit 2; }
tmp=$(mktemp -d /tmp/gpupool-bench-slurm.XXXXXX)
chmod 755 "$tmp"
cluster="$src/scripts/slurm-cluster.sh"
lab=$tmp/cluster
export GPUPOOL_SOCKET=$tmp/gp.sock
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    "$cluster" stop "$lab" >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
"$cluster" start "$lab" --nodes 4 --gpus 4 --per-switch 2 --gpu-type v100 \
    >"$tmp/cluster.log" 2>&1 || { cat "$tmp/cluster.log"; exit 1; }
cat >"$tmp/tenants.json" <<JSON
{"tenants": [{"name": "lender", "guarantee": 8},
             {"name": "borrower", "guarantee": 8}]}
JSON
cat >"$tmp/ck.sh" <<'EOF'
#!/bin/sh
trap 'exit 0' "$GPUPOOL_PREEMPT_SIGNAL"
while :; do sleep 0.2; done
EOF
chmod 755 "$tmp/ck.sh"
"$cluster" exec "$lab" -- "$exe" serve --set server.state_dir="$tmp" \
    --set server.socket="$GPUPOOL_SOCKET" --set backend.kind=slurm \
    --set scheduler.tenants="$tmp/tenants.json" --set scheduler.placement=topo \
    --set scheduler.grace=5s --set slurm.poll=1s "$@" >"$tmp/daemon.log" 2>&1 &
pid=$!
n=100
until "$exe" queue >/dev/null 2>&1; do
    n=$((n - 1))
    [ $n -gt 0 ] || { cat "$tmp/daemon.log"; exit 1; }
    sleep 0.1
done
submit() { "$exe" submit "$@" | sed -n 's/^Submitted job //p'; }
showall() {
    echo "["
    sep=
    for j in "$@"; do
        printf '%s' "$sep"
        "$exe" show --json "$j"
        sep=,
    done
    echo "]"
}
waitall() { # STATE JOB...
    st=$1
    shift
    for j in "$@"; do
        n=1200
        until [ "$("$exe" show --json "$j" | python3 -c \
            'import json,sys; print(json.load(sys.stdin)["state"])')" = "$st" ]; do
            n=$((n - 1))
            [ $n -gt 0 ] || { echo "job $j never $st" >&2; exit 1; }
            sleep 0.1
        done
    done
}

# ---- reclaim: the borrower fills the cluster, the lender asks for 4 GPUs
b=
for k in 1 2 3 4; do
    b="$b $(submit -t borrower -g 4 --checkpointable -- "$tmp/ck.sh")"
done
# shellcheck disable=SC2086
waitall running $b
sleep 2
l=$(submit -t lender -g 4 -- sleep 1)
waitall completed "$l"
showall "$l" >"$tmp/reclaim.json"
for j in $b; do "$exe" cancel "$j" >/dev/null; done
# shellcheck disable=SC2086
waitall cancelled $b

# ---- throughput and actuation: njobs one-GPU jobs that exit at once
t0=$(date +%s.%N)
ids=
i=0
while [ $i -lt "$njobs" ]; do
    ids="$ids $(submit -t lender -g 1 -- true)"
    i=$((i + 1))
done
# shellcheck disable=SC2086
waitall completed $ids
# shellcheck disable=SC2086
showall $ids >"$tmp/jobs.json"

python3 - "$tmp/reclaim.json" "$tmp/jobs.json" "$lab/log/slurmctld.log" \
    "$t0" <<'EOF'
import json, re, sys, time

def allocs(path):
    out = {}
    for line in open(path):
        m = re.match(r"\[(\S+)\] sched: Allocate JobId=(\d+)", line)
        if m:
            t = m.group(1)
            sec = time.mktime(time.strptime(t[:19], "%Y-%m-%dT%H:%M:%S"))
            out.setdefault(int(m.group(2)), []).append(sec + float(t[19:] or 0))
    return out

def sid(job):
    for ev in job["events"]:
        d = ev.get("detail") or {}
        if "slurm_job" in d:
            return d["slurm_job"]

def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))]

al = allocs(sys.argv[3])
lend = json.load(open(sys.argv[1]))[0]
alloc = al[sid(lend)][0]
print("reclaim latency (lender submit -> Slurm allocates it): %.2f s"
      % (alloc - lend["submit_time"]))
jobs = json.load(open(sys.argv[2]))
lat = []
for j in jobs:
    a = al.get(sid(j))
    if a and j["runs"]:
        lat.append(a[-1] - j["runs"][-1]["start"])
print("actuation latency (decision -> Slurm allocates), %d jobs: "
      "p50 %.2f s, p90 %.2f s, max %.2f s"
      % (len(lat), q(lat, 0.5), q(lat, 0.9), max(lat)))
sub = [al[sid(j)][0] - j["submit_time"] for j in jobs if al.get(sid(j))]
print("submit -> allocate, %d jobs: p50 %.2f s, p90 %.2f s, max %.2f s"
      % (len(sub), q(sub, 0.5), q(sub, 0.9), max(sub)))
t0 = float(sys.argv[4])
end = max(j["end_time"] for j in jobs)
print("throughput: %d one-GPU jobs in %.1f s from the first submit to the "
      "last end: %.1f jobs/s" % (len(jobs), end - t0, len(jobs) / (end - t0)))
EOF
