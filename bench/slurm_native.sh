#!/bin/sh
# slurm_native.sh [JOBS] - the workload of bench/slurm_daemon.sh on Slurm's
# own scheduler, for comparison: the test cluster started with
# `--scheduler slurm` (sched/backfill, preempt/partition_prio with
# PreemptMode=REQUEUE, no job_submit plugin; partition `high` preempts
# `gpu`), as root. All times from slurmctld's log (milliseconds):
#  - reclaim latency: four 4-GPU jobs fill the cluster in `gpu`; a 4-GPU
#    job submitted to `high` until Slurm allocates it;
#  - submit -> allocate latency of JOBS one-GPU jobs that exit at once;
#  - throughput: those JOBS from the first submit to the last end.
set -u
njobs=${1:-200}
src=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "bench/slurm_native.sh: needs root" >&2; exit 2; }
tmp=$(mktemp -d /tmp/gpupool-bench-native.XXXXXX)
chmod 755 "$tmp"
cluster="$src/scripts/slurm-cluster.sh"
lab=$tmp/cluster
cleanup() {
    "$cluster" stop "$lab" >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
"$cluster" start "$lab" --nodes 4 --gpus 4 --per-switch 2 --gpu-type v100 \
    --scheduler slurm >"$tmp/cluster.log" 2>&1 || { cat "$tmp/cluster.log"; exit 1; }
slurm() { "$cluster" exec "$lab" -- "$@"; }
sb() { slurm sbatch --parsable -o /dev/null "$@"; }
running() { # N: wait until N jobs run
    n=600
    until [ "$(slurm squeue -h -t R | wc -l)" -ge "$1" ]; do
        n=$((n - 1))
        [ $n -gt 0 ] || { echo "not $1 jobs running" >&2; exit 1; }
        sleep 0.1
    done
}
idle() {
    n=1200
    until [ "$(slurm squeue -h | wc -l)" -eq 0 ]; do
        n=$((n - 1))
        [ $n -gt 0 ] || { echo "jobs left" >&2; exit 1; }
        sleep 0.1
    done
}

for k in 1 2 3 4; do
    sb -p gpu --requeue --gres=gpu:v100:4 --wrap 'while :; do sleep 0.2; done' >/dev/null
done
running 4
sleep 2
lender=$(sb -p high --gres=gpu:v100:4 --wrap 'sleep 1')
n=300
until slurm squeue -h -j "$lender" -t R | grep -q .; do
    n=$((n - 1))
    [ $n -gt 0 ] || break
    sleep 0.1
done
slurm scancel -p gpu
idle
first=$(sb -p gpu --gres=gpu:v100:1 --wrap true)
i=1
while [ $i -lt "$njobs" ]; do
    sb -p gpu --gres=gpu:v100:1 --wrap true >/dev/null
    i=$((i + 1))
done
idle
python3 - "$lab/log/slurmctld.log" "$lender" "$first" <<'EOF'
import re, sys, time

def ts(t):
    return time.mktime(time.strptime(t[:19], "%Y-%m-%dT%H:%M:%S")) + float(t[19:] or 0)

sub, alloc, done = {}, {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"\[(\S+)\] (.*)", line)
    if not m:
        continue
    t, msg = ts(m.group(1)), m.group(2)
    for pat, d in ((r"_slurm_rpc_submit_batch_job: JobId=(\d+)", sub),
                   (r"sched.*: Allocate JobId=(\d+)", alloc),
                   (r"_job_complete: JobId=(\d+) done", done)):
        x = re.search(pat, msg)
        if x:
            d.setdefault(int(x.group(1)), t)
lender, first = int(sys.argv[2]), int(sys.argv[3])
print("reclaim latency (lender submit -> Slurm allocates it): %.2f s"
      % (alloc[lender] - sub[lender]))
ids = [j for j in sub if j >= first]
lat = sorted(alloc[j] - sub[j] for j in ids if j in alloc)
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
print("submit -> allocate, %d jobs: p50 %.2f s, p90 %.2f s, max %.2f s"
      % (len(lat), q(0.5), q(0.9), lat[-1]))
end = max(done[j] for j in ids if j in done)
print("throughput: %d one-GPU jobs in %.1f s from the first submit to the "
      "last end: %.1f jobs/s" % (len(ids), end - sub[first],
                                  len(ids) / (end - sub[first])))
EOF
