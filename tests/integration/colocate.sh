#!/bin/sh
# colocate.sh GPUPOOL - gandiva under `gpupool serve` on one fake GPU: a
# second job shares the GPU the first holds (both run at once, with the
# same CUDA_VISIBLE_DEVICES), /v1/nodes lists both on it, a kill -9 of the
# daemon and a restart adopt both runs on the shared GPU, a third job
# waits while share=2 jobs hold it and runs once one ends; and a daemon
# on the Slurm backend refuses gandiva at startup, naming the policy,
# and gavel with space sharing (objective max_min_fairness_packed).
set -u
. "$(dirname "$0")/lib.sh"
exe=$1
it_begin colocate
trap it_kill_all EXIT

start() {
    "$exe" serve --set server.state_dir="$tmp" --set server.socket="$sock" \
        --set backend.gpus=1 --set scheduler.policy=gandiva \
        --set policy.share=2 --set backend.kill_after=2s \
        --set server.log_level=debug >>"$tmp/daemon.log" 2>&1 &
    pid=$!
    it_wait_up "$tmp/daemon.log"
}
finish() {
    [ $fails -eq 0 ] && return
    it_report
    exit 1
}
# job NAME SECONDS: a job that writes the GPUs it was given, then sleeps
job() {
    submit -g 1 -J "$1" -- sh -c \
        "echo gpus=\$CUDA_VISIBLE_DEVICES; sleep $2; echo done"
}
# on_gpu0: the jobs /v1/nodes lists on GPU 0, as "a b"
on_gpu0() {
    "$exe" nodes --json | python3 -c "
import json, sys
g = json.load(sys.stdin)['nodes'][0]['gpus'][0]
print(' '.join(str(j) for j in g.get('jobs', [g['job']] if 'job' in g else [])))"
}
gpus_of() { sed -n 's/^gpus=//p' "$(field "$1" stdout)"; }

start
a=$(job a 300)
wait_for 20 "job $a to run" has_state "$a" running
b=$(job b 300)
wait_for 20 "job $b to run beside $a" has_state "$b" running
finish
wait_for 10 "job $a to print its GPUs" grep -q '^gpus=' "$(field "$a" stdout)"
wait_for 10 "job $b to print its GPUs" grep -q '^gpus=' "$(field "$b" stdout)"
[ -n "$(gpus_of "$a")" ] && [ "$(gpus_of "$a")" = "$(gpus_of "$b")" ] ||
    fail "jobs $a and $b were given '$(gpus_of "$a")' and '$(gpus_of "$b")'"
[ "$(on_gpu0)" = "$a $b" ] || fail "/v1/nodes lists '$(on_gpu0)' on GPU 0"
echo "jobs $a and $b share GPU $(gpus_of "$a"): /v1/nodes lists $(on_gpu0)"

# a third waits: two jobs on a GPU at most
c=$(job c 3)
sleep 2
has_state "$c" pending || fail "job $c: $(field "$c" state), not pending"
finish

# the daemon dies; both runs go on and are adopted on the shared GPU
apid=$(field "$a" pid)
bpid=$(field "$b" pid)
kill -9 "$pid"
wait "$pid" 2>/dev/null
start
[ "$(field "$a" pid)" = "$apid" ] && has_state "$a" running ||
    fail "job $a (pid $apid) was not adopted"
[ "$(field "$b" pid)" = "$bpid" ] && has_state "$b" running ||
    fail "job $b (pid $bpid) was not adopted on the GPU $a holds"
grep -q "cannot be adopted" "$tmp/daemon.log" &&
    fail "the log says a run could not be adopted"
[ "$(on_gpu0)" = "$a $b" ] ||
    fail "after the restart /v1/nodes lists '$(on_gpu0)' on GPU 0"
finish
echo "daemon killed with -9 and restarted: jobs $a and $b adopted on GPU 0"

# one ends: the third takes its place
"$exe" cancel "$a" >/dev/null
wait_for 20 "job $a to be cancelled" has_state "$a" cancelled
ran() { has_state "$c" running || has_state "$c" completed; }
wait_for 20 "job $c to run once $a left" ran
wait_for 20 "job $c to complete" has_state "$c" completed
"$exe" cancel "$b" >/dev/null
wait_for 20 "job $b to be cancelled" has_state "$b" cancelled
kill -TERM "$pid"
wait "$pid" || fail "SIGTERM: the daemon did not exit 0"
pid=
finish
echo "job $c waited while two jobs held the GPU and ran when one left"

# Slurm gives a GPU to one job: gandiva is refused there, by name
out=$("$exe" serve --set server.state_dir="$tmp/slurm" \
    --set server.socket="$tmp/slurm.sock" --set backend.kind=slurm \
    --set scheduler.policy=gandiva 2>&1)
rc=$?
[ $rc -ne 0 ] || fail "gandiva on the Slurm backend started (exit 0)"
echo "$out" | grep -q "gandiva" ||
    fail "the refusal does not name gandiva: $out"
# and gavel when its options share GPUs (space sharing), by the option
out2=$("$exe" serve --set server.state_dir="$tmp/slurm2" \
    --set server.socket="$tmp/slurm2.sock" --set backend.kind=slurm \
    --set scheduler.policy=gavel \
    --set policy.objective=max_min_fairness_packed 2>&1)
rc=$?
[ $rc -ne 0 ] || fail "gavel's space sharing on the Slurm backend started"
echo "$out2" | grep -q "gavel shares GPUs" ||
    fail "the refusal does not name gavel: $out2"
# pollux decides GPUs per node: refused under the count placement, by name
out3=$("$exe" serve --set server.state_dir="$tmp/count" \
    --set server.socket="$tmp/count.sock" --set scheduler.policy=pollux \
    --set scheduler.placement=count 2>&1)
rc=$?
[ $rc -ne 0 ] || fail "pollux under the count placement started (exit 0)"
echo "$out3" | grep -q "pollux decides GPUs per node" ||
    fail "the refusal does not name pollux: $out3"
finish
echo "ok: colocate: two jobs on one GPU under gandiva, adopted after kill -9;" \
    "refused on Slurm: $(echo "$out" | grep -m 1 gandiva);" \
    "$(echo "$out2" | grep -m 1 gavel);" \
    "$(echo "$out3" | grep -m 1 pollux)"
