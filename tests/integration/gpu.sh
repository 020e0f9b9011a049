#!/bin/sh
# gpu.sh GPUPOOL SRCDIR - gpupool serve on this host's real NVIDIA GPUs.
#
# 1. The NVML monitor: the daemon, with monitor.nvml = on, lists the GPUs
#    nvidia-smi lists (same count, index, UUID, name and memory), and
#    samples them.
# 2. A process that gpupool did not start, holding a CUDA context, is
#    reported as foreign (/v1/nodes, /metrics and the log).
# 3. A real PyTorch job on a GPU (examples/train_torch.py --device cuda):
#    it runs on the GPU it was given, NVML sees its process there and
#    gpupool counts it as its own; a lender's reclaim preempts it, it
#    checkpoints, is queued again, resumes from its checkpoint and ends with
#    the same model, bit for bit, as an uninterrupted run of the script on
#    this GPU outside gpupool.
# 4. A job that holds its GPU without using it is reported idle.
# 5. Under gandiva two PyTorch jobs share GPU 0 (NVML lists both, none
#    foreign) and each ends with the reference model.
#
# Skips (exit 77) without nvidia-smi, a GPU, or a python3 whose torch sees
# CUDA: CI has none. A GPU machine runs it with `meson test gpu` or
# directly, as docs/monitor.md says.
set -u
. "$(dirname "$0")/lib.sh"
exe=$1
src=$2
train=$src/examples/train_torch.py
steps=600
seed=7

skip() {
    echo "SKIP: $*"
    exit 77
}
command -v nvidia-smi >/dev/null 2>&1 || skip "no nvidia-smi here"
smi=$(nvidia-smi --query-gpu=index,uuid,name,memory.total \
    --format=csv,noheader,nounits 2>/dev/null) || skip "nvidia-smi sees no GPU"
[ -n "$smi" ] || skip "nvidia-smi sees no GPU"
ngpus=$(echo "$smi" | wc -l)
py=
for c in python3 /usr/bin/python3; do
    p=$(command -v "$c" 2>/dev/null) || continue
    if "$p" -c "import torch, sys; sys.exit(not torch.cuda.is_available())" \
        >/dev/null 2>&1; then
        py=$p
        break
    fi
done
[ -n "$py" ] || skip "no python3 here has a torch that sees CUDA"
echo "GPUs (nvidia-smi): $(echo "$smi" | tr '\n' ';')"
echo "python: $py, torch $("$py" -c 'import torch; print(torch.__version__)')"

it_begin gpu
helper=
cleanup() {
    [ -n "$helper" ] && kill -9 "$helper" 2>/dev/null
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    it_stop_jobs
    rm -rf "$tmp"
}
trap cleanup EXIT
finish() {
    [ $fails -eq 0 ] && return
    it_report
    exit 1
}

# The lender is guaranteed every GPU; the borrower none: it runs only on
# what the lender leaves idle, and gives it back when the lender asks.
cat >"$tmp/tenants.json" <<JSON
{"tenants": [{"name": "lender", "guarantee": $ngpus},
             {"name": "borrower", "guarantee": 0}]}
JSON
start_daemon() {
    "$exe" serve --set server.state_dir="$tmp" --set server.socket="$sock" \
        --set monitor.nvml=on --set scheduler.tenants="$tmp/tenants.json" \
        --set scheduler.grace=30s --set backend.kill_after=2s \
        --set monitor.period=1s --set monitor.idle_after=4s \
        >>"$tmp/daemon.log" 2>&1 &
    pid=$!
    it_wait_up "$tmp/daemon.log"
}
start_daemon

# py_json EXPR: EXPR over `gpupool nodes --json` (as n)
nodes_json() {
    "$exe" nodes --json | "$py" -c "import json,sys; n=json.load(sys.stdin); print($1)"
}

# metrics: GET /metrics over the socket (python: no curl needed)
metrics() {
    "$py" - "$sock" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
head, _, body = data.partition(b"\r\n\r\n")
sys.stdout.write(body.decode())
sys.exit(0 if head.split(b" ")[1] == b"200" else 1)
PY
}

# --- 1. the GPUs, as NVML shows them to gpupool and to nvidia-smi --------
"$exe" nodes
echo "$smi" | while IFS=, read -r i uuid name mem; do
    uuid=$(echo "$uuid" | tr -d ' ')
    name=$(echo "$name" | sed 's/^ *//')
    mem=$(echo "$mem" | tr -d ' ')
    got=$(nodes_json "[(g['uuid'], g['name'], g['mem_total_mib'], g['type']) for g in n['nodes'][0]['gpus'] if g['index'] == $i]")
    case $got in
    "[('$uuid', '$name', $mem, "*) ;;
    *) fail "GPU $i: gpupool shows $got, nvidia-smi $uuid, $name, $mem MiB" ;;
    esac
done
[ "$(nodes_json "len(n['nodes'][0]['gpus'])")" = "$ngpus" ] ||
    fail "gpupool lists another number of GPUs than nvidia-smi ($ngpus)"
[ "$(nodes_json "n['nodes'][0]['gpus'][0]['type']")" != fake ] ||
    fail "monitor.nvml = on, and the GPUs are fake"
finish

# --- 2. a process gpupool did not start ------------------------------------
CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_ORDER=PCI_BUS_ID "$py" -c "
import time, torch
x = torch.ones(1, device='cuda')
print('up', flush=True)
time.sleep(120)" >"$tmp/foreign.out" 2>&1 &
helper=$!
is_foreign() {
    nodes_json "$helper in n['nodes'][0]['gpus'][0]['foreign_pids']" |
        grep -qx True
}
wait_for 90 "pid $helper (a CUDA process not gpupool's) in foreign_pids" \
    is_foreign
metrics | grep -q '^gpupool_foreign_gpu_processes [1-9]' ||
    fail "gpupool_foreign_gpu_processes is not 1 or more"
grep -q "pid $helper uses gpu 0 and was not started by gpupool" \
    "$tmp/daemon.log" || fail "the log does not name the foreign pid $helper"
kill -9 "$helper"
wait "$helper" 2>/dev/null
helper=
echo "foreign process reported: pid in foreign_pids, in the metric and the log"

# --- 3. a real training job on a GPU, preempted and resumed ---------------
# Jobs start with a clean environment (docs/jobs.md): pass on the library
# path that CUDA's driver library may need here.
envs=
[ -n "${LD_LIBRARY_PATH:-}" ] && envs="--env LD_LIBRARY_PATH=$LD_LIBRARY_PATH"

mkdir "$tmp/ref"
t0=$(date +%s.%N)
CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_ORDER=PCI_BUS_ID "$py" "$train" \
    --steps $steps --seed $seed --device cuda --log-every 0 \
    --checkpoint-dir "$tmp/ref" --hash-file "$tmp/ref.hash" \
    >"$tmp/ref.out" 2>&1 || {
    cat "$tmp/ref.out"
    echo "FAIL: the reference run failed"
    exit 1
}
t1=$(date +%s.%N)
ref=$(cat "$tmp/ref.hash")
echo "reference run on cuda, outside gpupool: $steps steps," \
    "$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s, model $ref"

# shellcheck disable=SC2086 # $envs: no word or two
b=$("$exe" submit -t borrower -g 1 --checkpointable -J gtrain $envs -- \
    "$py" "$train" --steps $steps --seed $seed --device cuda \
    --step-seconds 0.05 | sed -n 's/^Submitted job //p')
[ -n "$b" ] || fail "submit refused the training job"
finish
wait_for 60 "job $b to run" has_state "$b" running
out=$(field "$b" stdout)
wait_for 120 "job $b to pass step 50" past_step "$out" 50
finish
grep -q '^started on cuda' "$out" || fail "job $b did not train on cuda"
dev=$(field "$b" devices)
jpid=$(field "$b" pid)
# NVML lists the job's process on its GPU, and gpupool knows it for its own
gpu_has_job() {
    [ "$(nodes_json "[(g.get('processes'), g['foreign_pids'], g.get('job')) for g in n['nodes'][0]['gpus'] if g['index'] == $dev][0]")" = "(1, [], $b)" ]
}
wait_for 30 "NVML to list job $b's process (pid $jpid) as gpupool's on GPU $dev" gpu_has_job
used=$(nodes_json "[g['mem_used_mib'] for g in n['nodes'][0]['gpus'] if g['index'] == $dev][0]")
[ "$used" -gt 0 ] 2>/dev/null ||
    fail "GPU $dev: $used MiB used while job $b trains on it"
echo "job $b trains on GPU $dev (pid $jpid): NVML lists 1 process there," \
    "none foreign, $used MiB used"

# kill -9 the daemon while the job trains: the next one adopts the run, and
# its process on the GPU is still gpupool's, not foreign.
kill -9 "$pid"
wait "$pid" 2>/dev/null
start_daemon
[ "$(field "$b" pid)" = "$jpid" ] && has_state "$b" running ||
    fail "job $b (pid $jpid) was not adopted after a kill -9 of the daemon"
sleep 2 # two samples
wait_for 30 "job $b's process to be gpupool's after the restart" gpu_has_job
finish
echo "daemon killed with -9 and restarted: job $b adopted, still gpupool's on GPU $dev"

# The lender wants its GPUs: the borrower's job is preempted, checkpoints,
# waits and resumes when the lender's job ends.
l=$("$exe" submit -t lender -g "$ngpus" -J reclaim -- sleep 2 |
    sed -n 's/^Submitted job //p')
wait_for 90 "the lender's job $l to complete" has_state "$l" completed
wait_for 180 "job $b to complete" has_state "$b" completed
finish
h=$(final_hash "$out")
[ "$h" = "$ref" ] ||
    fail "job $b ended with model $h, the uninterrupted run with $ref"
p=$(field "$b" preemptions)
r=$(field "$b" restarts)
[ "$p" -ge 1 ] 2>/dev/null || fail "job $b was not preempted ($p)"
[ "$r" -ge 1 ] 2>/dev/null || fail "job $b did not restart ($r)"
saved=$(sed -n 's/^checkpointed at step //p' "$out" | head -n 1)
resumed=$(sed -n 's/^resumed at step \([0-9]*\) .*/\1/p' "$out" | head -n 1)
[ -n "$saved" ] && [ "$saved" = "$resumed" ] ||
    fail "job $b: checkpointed at step '$saved', resumed at step '$resumed'"
[ "$(grep -c '^started on cuda' "$out")" = 1 ] ||
    fail "job $b started from scratch more than once"
finish
echo "job $b: preempted $p, checkpointed at step $saved on cuda, resumed" \
    "there, ended with the reference model $h"

# --- 4. a job that holds its GPU idle --------------------------------------
# shellcheck disable=SC2086
i=$("$exe" submit -t lender -g 1 -J holder $envs -- "$py" -c "
import time, torch
x = torch.ones(1024, device='cuda')
print('holding', flush=True)
time.sleep(300)" | sed -n 's/^Submitted job //p')
wait_for 60 "job $i to run" has_state "$i" running
idev=$(field "$i" devices)
wait_for 90 "job $i to hold its GPU" grep -q '^holding' "$(field "$i" stdout)"
is_idle() { [ "$(field "$i" idle_since)" != None ]; }
wait_for 90 "job $i to be reported idle" is_idle
"$exe" show --json "$i" | grep -q '"kind": "idle"' ||
    fail "job $i: no idle event in its history"
"$exe" cancel "$i" >/dev/null
wait_for 30 "job $i to be cancelled" has_state "$i" cancelled
echo "job $i, which holds GPU $idev without using it," \
    "was reported idle"

metrics | grep '^gpupool_gpu_\(info\|memory_total_bytes\|utilization\)' |
    head -n 3
kill -TERM "$pid"
wait "$pid" || fail "SIGTERM: the daemon did not exit 0"
pid=
finish

# --- 5. gandiva: two training jobs share one GPU ---------------------------
# A daemon under gandiva on GPU 0 only: the second job finds no free GPU
# and shares the first's; the driver time-slices them. NVML lists both
# processes there, both gpupool's; each ends with the reference model.
"$exe" serve --set server.state_dir="$tmp/g" --set server.socket="$sock" \
    --set monitor.nvml=on --set monitor.period=1s \
    --set scheduler.policy=gandiva --set policy.share=2 \
    >>"$tmp/daemon.log" 2>&1 &
pid=$!
it_wait_up "$tmp/daemon.log"
# shellcheck disable=SC2086
x=$("$exe" submit -g 1 -J share1 $envs -- "$py" "$train" --steps $steps \
    --seed $seed --device cuda --step-seconds 0.02 |
    sed -n 's/^Submitted job //p')
wait_for 60 "job $x to run" has_state "$x" running
# shellcheck disable=SC2086
y=$("$exe" submit -g 1 -J share2 $envs -- "$py" "$train" --steps $steps \
    --seed $seed --device cuda --step-seconds 0.02 |
    sed -n 's/^Submitted job //p')
wait_for 60 "job $y to run beside $x" has_state "$y" running
finish
both_on_gpu() {
    [ "$(nodes_json "[(g.get('processes'), g['foreign_pids'], g.get('jobs')) for g in n['nodes'][0]['gpus'] if g['index'] == 0][0]")" = "(2, [], [$x, $y])" ]
}
wait_for 60 "NVML to list jobs $x and $y as gpupool's on GPU 0" both_on_gpu
[ "$(field "$x" devices)" = "$(field "$y" devices)" ] ||
    fail "jobs $x and $y were given GPUs $(field "$x" devices) and $(field "$y" devices)"
echo "jobs $x and $y share GPU $(field "$x" devices): NVML lists 2" \
    "processes there, none foreign"
wait_for 240 "job $x to complete" has_state "$x" completed
wait_for 240 "job $y to complete" has_state "$y" completed
finish
for j in $x $y; do
    h=$(final_hash "$(field "$j" stdout)")
    [ "$h" = "$ref" ] || fail "job $j ended with model $h, the reference $ref"
done
kill -TERM "$pid"
wait "$pid" || fail "SIGTERM: the gandiva daemon did not exit 0"
pid=
finish
echo "jobs $x and $y trained side by side on one GPU and each ended with" \
    "the reference model"
echo "ok: gpu: $ngpus GPUs through NVML; a PyTorch job on cuda preempted," \
    "resumed and ended with the reference model; foreign and idle reported;" \
    "two jobs shared a GPU under gandiva"
