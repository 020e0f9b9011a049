#!/bin/sh
# torch.sh GPUPOOL SRCDIR [pure] - a real PyTorch training job
# (examples/train_torch.py) under a real `gpupool serve` with 2 fake GPUs
# and two tenants of 1 guaranteed GPU each. The borrower runs two jobs on
# both GPUs; the lender then asks for its GPU back, so one borrower job is
# preempted: it saves a checkpoint on the preempt signal, is queued again,
# resumes from the checkpoint and finishes. Both borrower jobs must end
# with the same model, bit for bit, as an uninterrupted run of the script
# with the same seed outside gpupool.
#
# Skips (exit 77) when no python3 here can import torch
# (apt-get install python3-torch). With "pure" it runs the same story with
# examples/train_pure.py, the twin without torch, and never skips.
set -u
. "$(dirname "$0")/lib.sh"
exe=$1
src=$2
mode=${3:-torch}
steps=400
seed=7

# Debian's python3 first: the one python3-torch installs into, whatever
# python3 comes first in PATH.
py=
for c in /usr/bin/python3 python3; do
    p=$(command -v "$c" 2>/dev/null) || continue
    if [ "$mode" = pure ] || "$p" -c "import torch" >/dev/null 2>&1; then
        py=$p
        break
    fi
done
case $mode in
torch)
    train=$src/examples/train_torch.py
    # --device cpu everywhere: a GPU run differs from a CPU run in the
    # last bits, and the fake GPUs here may or may not be real ones.
    dev="--device cpu"
    if [ -z "$py" ]; then
        echo "SKIP: no python3 here imports torch" \
            "(apt-get install python3-torch)"
        exit 77
    fi
    ;;
pure)
    train=$src/examples/train_pure.py
    dev=
    if [ -z "$py" ]; then
        echo "FAIL: no python3"
        exit 1
    fi
    ;;
*)
    echo "usage: torch.sh GPUPOOL SRCDIR [pure]" >&2
    exit 2
    ;;
esac

it_begin torch
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    # Jobs outlive the daemon by design: after a failure, stop the runs this
    # test started, then remove everything.
    it_stop_jobs
    rm -rf "$tmp"
}
trap cleanup EXIT

cat >"$tmp/tenants.json" <<JSON
{"tenants": [{"name": "lender", "guarantee": 1},
             {"name": "borrower", "guarantee": 1}]}
JSON

"$exe" serve --set server.state_dir="$tmp" --set server.socket="$sock" \
    --set backend.gpus=2 --set scheduler.tenants="$tmp/tenants.json" \
    --set scheduler.grace=30s --set backend.kill_after=2s \
    --set monitor.period=1s >"$tmp/daemon.log" 2>&1 &
pid=$!
it_wait_up "$tmp/daemon.log"

# show JOB FIELD: one field of `gpupool show --json`
field() {
    "$exe" show --json "$1" |
        "$py" -c "import json,sys; print(json.load(sys.stdin).get('$2'))"
}


submit() { "$exe" submit "$@" | sed -n 's/^Submitted job //p'; }

# The reference: the same script, seed and steps, not under gpupool, never
# interrupted.
mkdir "$tmp/ref"
# shellcheck disable=SC2086
"$py" "$train" --steps $steps --seed $seed $dev --log-every 0 \
    --checkpoint-dir "$tmp/ref" --hash-file "$tmp/ref.hash" \
    >"$tmp/ref.out" 2>&1 || {
    cat "$tmp/ref.out"
    echo "FAIL: the reference run failed"
    exit 1
}
ref=$(cat "$tmp/ref.hash")
[ "$(final_hash "$tmp/ref.out")" = "$ref" ] ||
    fail "the reference run printed another hash than it wrote to --hash-file"

# Two borrower jobs take both GPUs. --step-seconds keeps each run at least
# steps x 0.03 = 12 s long, so the reclaim below comes while they train.
# shellcheck disable=SC2086 # $dev: no word or two
b1=$(submit -t borrower --checkpointable -J train1 -- "$py" "$train" \
    --steps $steps --seed $seed $dev --step-seconds 0.03)
# shellcheck disable=SC2086
b2=$(submit -t borrower --checkpointable -J train2 -- "$py" "$train" \
    --steps $steps --seed $seed $dev --step-seconds 0.03)
if [ -z "$b1" ] || [ -z "$b2" ]; then
    echo "FAIL: submit refused the training jobs"
    it_report
    exit 1
fi
for b in $b1 $b2; do
    wait_for 60 "job $b to run" has_state "$b" running || break
    wait_for 90 "job $b to pass step 50" past_step "$(field "$b" stdout)" 50 ||
        break
done

# The lender reclaims its guaranteed GPU: one borrower job is preempted.
l=$(submit -t lender -J reclaim -- sleep 2)
wait_for 60 "the lender's job $l to complete" has_state "$l" completed
for b in $b1 $b2; do
    wait_for 120 "job $b to complete" has_state "$b" completed
done

preempted=0
for b in $b1 $b2; do
    out=$(field "$b" stdout)
    h=$(final_hash "$out")
    [ "$h" = "$ref" ] ||
        fail "job $b ended with model $h, the uninterrupted run with $ref"
    [ "$(grep -c '^final_state_sha256 ' "$out")" = 1 ] ||
        fail "job $b finished more than once, or never"
    p=$(field "$b" preemptions)
    [ "$p" -gt 0 ] 2>/dev/null || continue
    preempted=$((preempted + 1))
    r=$(field "$b" restarts)
    [ "$r" -ge 1 ] 2>/dev/null || fail "job $b: preempted $p times, restarts $r"
    # It saved where it stopped and went on from exactly there, past the
    # 50 steps it had done before the reclaim.
    saved=$(sed -n 's/^checkpointed at step //p' "$out" | head -n 1)
    resumed=$(sed -n 's/^resumed at step \([0-9]*\) .*/\1/p' "$out" | head -n 1)
    [ -n "$saved" ] || fail "job $b: preempted without a checkpoint"
    [ -n "$resumed" ] || fail "job $b: did not resume from its checkpoint"
    [ "${saved:-0}" -ge 50 ] ||
        fail "job $b: checkpointed at step '$saved', it had passed step 50"
    [ "$saved" = "$resumed" ] ||
        fail "job $b: checkpointed at step $saved, resumed at step $resumed"
    grep -q "^resumed at step $saved (restart 1)" "$out" ||
        fail "job $b: its first resume did not see GPUPOOL_RESTART_COUNT=1"
    ls "$(field "$b" checkpoint_dir)"/ckpt.* >/dev/null 2>&1 ||
        fail "job $b: no checkpoint in its checkpoint directory"
done
[ $preempted -ge 1 ] || fail "the lender's reclaim preempted no borrower job"

kill -TERM "$pid"
wait "$pid" || fail "SIGTERM: the daemon did not exit 0"
pid=
if [ $fails -ne 0 ]; then
    it_report
    exit 1
fi
echo "ok: $mode: jobs $b1 and $b2 end with model $ref;" \
    "$preempted preempted and resumed"
