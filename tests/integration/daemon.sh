#!/bin/sh
# daemon.sh GPUPOOL SRCDIR - a real `gpupool serve` on a Unix socket with a
# temporary store and 4 fake GPUs, driven through the CLI as a user would:
# submit -> run -> complete; exit codes; a failed start; cancel; a time
# limit; a lender's reclaim preempts a borrower, which checkpoints, is
# queued again and resumes from its checkpoint; kill -9 of the daemon while
# jobs run, and a restart that adopts them, each run exactly once.
set -u
. "$(dirname "$0")/lib.sh"
exe=$1
src=$2
it_begin it
trap it_kill_all EXIT

cat >"$tmp/tenants.json" <<JSON
{"tenants": [{"name": "lender", "guarantee": 2},
             {"name": "borrower", "guarantee": 2}]}
JSON

start() {
    "$exe" serve --set server.state_dir="$tmp" --set server.socket="$sock" \
        --set backend.gpus=4 --set scheduler.tenants="$tmp/tenants.json" \
        --set scheduler.grace=20s --set backend.kill_after=2s \
        --set monitor.period=1s --set server.log_level=debug "$@" \
        >>"$tmp/daemon.log" 2>&1 &
    pid=$!
    it_wait_up "$tmp/daemon.log"
}

start

# submit -> run -> complete, its output in its stdout file
j=$(submit -t lender -J hello -- sh -c 'echo hello from $GPUPOOL_JOB_ID on $CUDA_VISIBLE_DEVICES')
wait_state "$j" completed
grep -q "hello from $j on [0-3]" "$(field "$j" stdout)" ||
    fail "job $j: no greeting in its stdout"
[ "$(field "$j" exit_code)" = 0 ] || fail "job $j: exit code not 0"

# an exit code, a failed start, a crash
j=$(submit -t lender -- sh -c 'exit 3')
wait_state "$j" failed
[ "$(field "$j" exit_code)" = 3 ] || fail "job $j: exit code $(field "$j" exit_code), expected 3"
j=$(submit -t lender -- /no/such/program)
wait_state "$j" failed
field "$j" reason | grep -q "/no/such/program" ||
    fail "failed start: reason '$(field "$j" reason)' does not name the program"

# cancel a running job, and a time limit
j=$(submit -t lender -- sleep 600)
wait_state "$j" running
"$exe" cancel "$j" >/dev/null || fail "cancel $j"
wait_state "$j" cancelled
j=$(submit -t lender --time 2 -- sleep 600)
wait_state "$j" failed 20
[ "$(field "$j" reason)" = "time limit" ] || fail "job $j: reason '$(field "$j" reason)', expected time limit"
# an SLO is kept with the job (nothing stops it when it misses one)
j=$(submit -t lender --slo 1h -- true)
wait_state "$j" completed
[ "$(field "$j" slo_s)" = 3600.0 ] || fail "job $j: slo_s '$(field "$j" slo_s)', expected 3600"
"$exe" submit --slo 2x -- true 2>"$tmp/err"
[ $? -eq 2 ] || fail "submit --slo 2x: exit status not 2"
grep -q -- "--slo" "$tmp/err" || fail "submit --slo 2x: the error names no option"

# bad input: exit 2 for usage, 1 for a refusal, a message naming the field
"$exe" submit --gpus x -- true 2>"$tmp/err"
[ $? -eq 2 ] || fail "submit --gpus x: exit status not 2"
"$exe" submit --gpus 99 -- true 2>"$tmp/err"
[ $? -eq 1 ] || fail "submit --gpus 99: exit status not 1"
grep -q "gpus" "$tmp/err" || fail "submit --gpus 99: the error names no field"
"$exe" cancel 999999 2>"$tmp/err"
[ $? -eq 1 ] || fail "cancel of an unknown job: exit status not 1"

# preempt -> checkpoint -> resume: the borrower takes all 4 GPUs, then the
# lender asks for its 2 back
ck="$src/examples/ckpt_counter.py"
b1=$(submit -t borrower --checkpointable -- python3 "$ck" --steps 40 --step-seconds 0.25)
b2=$(submit -t borrower --checkpointable -- python3 "$ck" --steps 40 --step-seconds 0.25)
b3=$(submit -t borrower --checkpointable -- python3 "$ck" --steps 40 --step-seconds 0.25)
b4=$(submit -t borrower --checkpointable -- python3 "$ck" --steps 40 --step-seconds 0.25)
for b in $b1 $b2 $b3 $b4; do wait_state "$b" running; done
sleep 2
l1=$(submit -t lender -- sleep 1)
l2=$(submit -t lender -- sleep 1)
wait_state "$l1" completed 60
wait_state "$l2" completed 60
pre=0
for b in $b1 $b2 $b3 $b4; do
    wait_state "$b" completed 120
    p=$(field "$b" preemptions)
    pre=$((pre + p))
    out=$(field "$b" stdout)
    if [ "$p" -gt 0 ]; then
        grep -q "checkpointed at step" "$out" || fail "job $b: preempted without a checkpoint"
        grep -q "resumed at step" "$out" || fail "job $b: did not resume from its checkpoint"
    fi
    grep -q "done 40" "$out" || fail "job $b: did not count to 40"
done
[ $pre -ge 2 ] || fail "the lender's reclaim preempted $pre borrower jobs, expected 2"

# kill -9 while jobs run; the restarted daemon adopts them
r1=$(submit -t lender -- sh -c 'sleep 3; echo survived')
r2=$(submit -t borrower -- sh -c 'sleep 3; echo survived')
wait_state "$r1" running
wait_state "$r2" running
kill -9 "$pid"
wait "$pid" 2>/dev/null
start
grep -q "adopted" "$tmp/daemon.log" || fail "restart: no job adopted"
wait_state "$r1" completed
wait_state "$r2" completed
for r in $r1 $r2; do
    [ "$(grep -c survived "$(field "$r" stdout)")" = 1 ] ||
        fail "job $r: ran more than once, or not at all"
    n=$("$exe" show --json "$r" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
    [ "$n" = 1 ] || fail "job $r: $n runs, expected 1"
done

# a job that holds its GPU idle is reported (fake GPUs that show 0%)
kill -TERM "$pid"
wait "$pid"
[ $? -eq 0 ] || fail "SIGTERM: the daemon did not exit 0"
start --set monitor.fake_busy=no --set monitor.idle_after=1s \
    --set monitor.period=500ms
i=$(submit -t lender -- sleep 30)
wait_state "$i" running
n=100
until "$exe" show --json "$i" | grep -q '"kind": *"idle"'; do
    n=$((n - 1))
    [ $n -gt 0 ] || { fail "job $i: never reported idle"; break; }
    sleep 0.1
done
"$exe" show --json "$i" | grep -q '"idle_since"' || fail "job $i: no idle_since"
"$exe" cancel "$i" >/dev/null
wait_state "$i" cancelled

# a clean stop
kill -TERM "$pid"
wait "$pid"
[ $? -eq 0 ] || fail "SIGTERM: the daemon did not exit 0"
pid=
[ -e "$sock" ] && fail "the socket is left behind"
if [ $fails -ne 0 ]; then
    echo "--- daemon log"
    tail -n 60 "$tmp/daemon.log"
    exit 1
fi
echo "ok: daemon"
