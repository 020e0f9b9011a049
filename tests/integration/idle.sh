#!/bin/sh
# idle.sh GPUPOOL SRCDIR - idle GPUs join the pool, end to end: a daemon
# with 2 fake GPUs that show 0% (monitor.fake_busy=no), so every job looks
# idle once monitor.idle_after has passed. Tenant a is guaranteed both
# GPUs, tenant b nothing.
#
# With policy.lend_idle=1: a's checkpointable job is reported idle; b's
# 2-GPU job arrives; a's job is preempted (it checkpoints), b's job runs,
# a's job waits parked - nothing is taken back for it while b's job runs -
# and resumes from its checkpoint once b's job ends.
# Without lend_idle: the same idle job keeps its GPUs and b's job waits.
set -u
. "$(dirname "$0")/lib.sh"
exe=$1
src=$2
it_begin idle
jobs=
cleanup() {
    # jobs outlive the daemon by design: cancel what this test started
    # while the daemon is up, give them a moment, then stop the daemon
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        for j in $jobs; do "$exe" cancel "$j" >/dev/null 2>&1; done
        n=50
        while [ $n -gt 0 ] && "$exe" queue 2>/dev/null | grep -Eq 'running|stopping|starting'; do
            n=$((n - 1))
            sleep 0.1
        done
        kill -TERM "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

cat >"$tmp/tenants.json" <<JSON
{"tenants": [{"name": "a", "guarantee": 2},
             {"name": "b", "guarantee": 0}]}
JSON

# start DIR [--set ...]: a daemon with its store in DIR
start() {
    dir=$1
    shift
    mkdir -p "$dir"
    "$exe" serve --set server.state_dir="$dir" --set server.socket="$sock" \
        --set backend.gpus=2 --set scheduler.tenants="$tmp/tenants.json" \
        --set scheduler.grace=20s --set backend.kill_after=2s \
        --set scheduler.min_run=1s \
        --set monitor.fake_busy=no --set monitor.idle_after=2s \
        --set monitor.period=1s --set server.log_level=debug "$@" \
        >>"$tmp/daemon.log" 2>&1 &
    pid=$!
    it_wait_up "$tmp/daemon.log"
}

stop() {
    kill -TERM "$pid"
    wait "$pid"
    [ $? -eq 0 ] || fail "SIGTERM: the daemon did not exit 0"
    pid=
    jobs=
}

show() { "$exe" show --json "$1"; }
# get JOB EXPR: a Python expression over the job's JSON (j)
get() { show "$1" | python3 -c "import json,sys; j=json.load(sys.stdin); print($2)"; }
state() { get "$1" 'j["state"]'; }

# wait_for JOB EXPR SECONDS: until EXPR is True
wait_for() {
    n=$(($3 * 10))
    while [ $n -gt 0 ]; do
        [ "$(get "$1" "$2" 2>/dev/null)" = True ] && return 0
        n=$((n - 1))
        sleep 0.1
    done
    fail "job $1: still not $2 after $3 s (state $(state "$1"))"
    return 1
}

submit() {
    j=$("$exe" submit "$@" | sed -n 's/^Submitted job //p')
    jobs="$jobs $j"
    echo "$j"
}

# a's job counts for 60 s at most, 0.1 s a step, checkpointing on SIGUSR1
ck="$src/examples/ckpt_counter.py"
a_job() { submit -t a --gpus 2 --checkpointable -J idle-a -- python3 "$ck" --steps 600 --step-seconds 0.1; }
reported_idle='any(e["kind"] == "idle" for e in j["events"])'

# ---- lend_idle = 1 ----------------------------------------------------
start "$tmp/on" --set policy.lend_idle=1
a=$(a_job)
wait_for "$a" 'j["state"] == "running"' 30
wait_for "$a" "$reported_idle" 30
# b's job must outlast the checks below, a restart and 3 s more: under
# ASan those took 14 s once, and a 14 s job ended just before the last
b=$(submit -t b --gpus 2 -J borrower -- sleep 24)
# a's job is signalled, checkpoints and waits; b's job gets its GPUs
wait_for "$b" 'j["state"] == "running"' 40
[ "$(state "$a")" = pending ] || fail "job $a: $(state "$a") while b runs, expected pending"
[ "$(get "$a" 'j.get("parked")')" = True ] || fail "job $a: not parked"
[ "$(get "$a" 'j["preemptions"]')" = 1 ] || fail "job $a: $(get "$a" 'j["preemptions"]') preemptions, expected 1"
get "$a" '[e for e in j["events"] if e["kind"] == "preempted"][-1]["detail"]' >"$tmp/ev"
grep -q "'idle': True" "$tmp/ev" || fail "job $a: its preemption does not say it was idle: $(cat "$tmp/ev")"
grep -q "'lent_to': 'b'" "$tmp/ev" || fail "job $a: its preemption does not name tenant b: $(cat "$tmp/ev")"
[ "$(get "$a" 'any(r.get("end_reason") == "idle: lent to tenant b" for r in j["runs"])')" = True ] ||
    fail "job $a: no run ended 'idle: lent to tenant b': $(get "$a" 'j["runs"]')"
"$exe" why "$a" | grep -q parked || fail "gpupool why $a does not say it is parked"
grep -q "job $a holds gpus .* idle: preempted, its GPUs lent to tenant b" "$tmp/daemon.log" ||
    fail "the log does not say job $a was preempted for b"
grep -q "checkpointed at step" "$(get "$a" 'j["stdout"]')" ||
    fail "job $a: preempted without a checkpoint"
# parked, it makes no claim: b's job keeps running (a reclaim would have
# signalled it within a round or two)
sleep 5
[ "$(state "$b")" = running ] || fail "job $b: $(state "$b") while a's job is parked, expected running"
[ "$(get "$b" 'j["preemptions"]')" = 0 ] || fail "job $b: preempted for a parked job"
[ "$(state "$a")" = pending ] || fail "job $a: $(state "$a"), expected pending (parked)"
# a restart keeps it parked (read back from its history): still no claim
kill -TERM "$pid"
wait "$pid" || fail "the daemon exited $? on SIGTERM"
start "$tmp/on" --set policy.lend_idle=1
[ "$(get "$a" 'j.get("parked")')" = True ] || fail "job $a: not parked after a restart"
sleep 3
[ "$(state "$b")" = running ] || fail "job $b: $(state "$b") after a restart with a's job parked, expected running"
[ "$(get "$b" 'j["preemptions"]')" = 0 ] || fail "job $b: preempted for a parked job after a restart"
# b's job ends: a's job resumes from its checkpoint
wait_for "$b" 'j["state"] == "completed"' 30
wait_for "$a" 'j["state"] == "running"' 30
[ "$(get "$a" 'j.get("parked")')" = None ] || fail "job $a: still parked once it runs"
n=50
until grep -q "resumed at step" "$(get "$a" 'j["stdout"]')"; do
    n=$((n - 1))
    [ $n -gt 0 ] || { fail "job $a: did not resume from its checkpoint"; break; }
    sleep 0.1
done
"$exe" cancel "$a" >/dev/null
wait_for "$a" 'j["state"] == "cancelled"' 30
stop

# ---- lend_idle = 0 (the default): an idle job keeps its GPUs ------------
start "$tmp/off"
a=$(a_job)
wait_for "$a" 'j["state"] == "running"' 30
wait_for "$a" "$reported_idle" 30
b=$(submit -t b --gpus 2 -J borrower -- sleep 8)
sleep 5
[ "$(state "$a")" = running ] || fail "lend_idle=0: job $a is $(state "$a"), expected running"
[ "$(get "$a" 'j["preemptions"]')" = 0 ] || fail "lend_idle=0: job $a was preempted"
[ "$(state "$b")" = pending ] || fail "lend_idle=0: job $b is $(state "$b"), expected pending"
"$exe" cancel "$a" >/dev/null
wait_for "$b" 'j["state"] == "running"' 30
"$exe" cancel "$b" >/dev/null
wait_for "$a" 'j["state"] == "cancelled"' 30
wait_for "$b" 'j["state"] == "cancelled"' 30
stop

if [ $fails -ne 0 ]; then
    echo "--- daemon log"
    tail -n 80 "$tmp/daemon.log"
    exit 1
fi
echo "ok: idle"
