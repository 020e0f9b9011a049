#!/bin/sh
# daemon-demo.sh [BUILD_DIR] - gpupool serve on this machine, for real:
# a daemon on the local backend (fake GPUs when there are none), two
# tenants of 2 guaranteed GPUs each, real processes. "nlp" borrows the GPUs
# "vision" does not use; when vision submits, the pool reclaims them: nlp's
# jobs get SIGUSR1, save a checkpoint, are queued again and resume from it.
# Everything happens in a temporary state directory, removed at the end.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build-release}
gp=$build/gpupool
[ -x "$gp" ] || { echo "daemon-demo: no $gp; build first" >&2; exit 1; }
dir=$(mktemp -d /tmp/gpupool-demo.XXXXXX)
export GPUPOOL_SOCKET=$dir/gpupool.sock
pid= tailer=
cleanup() {
    [ -n "$tailer" ] && kill "$tailer" 2>/dev/null
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    pkill -f "$dir/" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM
cat >"$dir/tenants.json" <<JSON
{"tenants": [{"name": "vision", "guarantee": 2},
             {"name": "nlp", "guarantee": 2}]}
JSON
say() { printf '\n== %s\n' "$*"; }

say "gpupool serve: 4 GPUs (fake ones when NVML finds none), tenants vision and nlp, 2 GPUs guaranteed each"
"$gp" serve --set server.state_dir="$dir" --set scheduler.tenants="$dir/tenants.json" \
    --set backend.gpus=4 --set scheduler.grace=30s >"$dir/daemon.log" 2>&1 &
pid=$!
i=0
until "$gp" queue >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -lt 100 ] || { cat "$dir/daemon.log"; exit 1; }
    sleep 0.1
done
# what the daemon does, as it happens
tail -n +1 -f "$dir/daemon.log" | sed -un 's/^ts=[^ ]*T\([0-9:]*\)\.[0-9]*Z level=[a-z]* msg="\(job .*\)"$/  \1  \2/p' &
tailer=$!

say "nlp submits 4 checkpointable training jobs (examples/ckpt_counter.py): vision is idle, so nlp borrows its 2 GPUs"
for k in 1 2 3 4; do
    "$gp" submit --tenant nlp --name "nlp-train-$k" --checkpointable -- \
        python3 "$PWD/examples/ckpt_counter.py" --steps 40 --step-seconds 0.25 >/dev/null
done
sleep 3
"$gp" tenants

say "vision submits 2 jobs: the pool reclaims its 2 lent GPUs by graceful preemption"
for k in 1 2; do
    "$gp" submit --tenant vision --name "vision-eval-$k" -- sh -c 'sleep 4; echo evaluated' >/dev/null
done
sleep 2
"$gp" queue
"$gp" tenants

say "every job runs to its end; the preempted ones resume from their checkpoints"
while [ -n "$("$gp" queue --json | python3 -c 'import json,sys; print(*[j["id"] for j in json.load(sys.stdin)["jobs"]])')" ]; do
    sleep 0.5
done
kill "$tailer" 2>/dev/null; tailer=
"$gp" history
for j in $("$gp" history --json | python3 -c 'import json,sys; print(*[j["id"] for j in json.load(sys.stdin)["jobs"] if j["preemptions"]])'); do
    out=$("$gp" show --json "$j" | python3 -c 'import json,sys; print(json.load(sys.stdin)["stdout"])')
    printf '\n  job %s output (its stdout file):\n' "$j"
    grep -E 'checkpointed|resumed|done' "$out" | sed 's/^/    /'
done

say "SIGTERM: the daemon stops cleanly (jobs would keep running and be adopted by the next start)"
kill -TERM "$pid"
wait "$pid" && echo "  stopped, exit status 0"
pid=
