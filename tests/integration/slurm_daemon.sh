#!/bin/sh
# slurm_daemon.sh GPUPOOL SRCDIR - `gpupool serve` with backend = slurm on a
# real Slurm cluster (scripts/slurm-cluster.sh: four nodes of 4 v100 fake
# GPUs, leaf0 = n[1-2], leaf1 = n[3-4]), driven through the CLI:
#  - a borrower fills the cluster; a lender's 8-GPU gang reclaims two
#    nodes: the borrower's jobs get the signal, checkpoint, are requeued
#    held in Slurm, and the gang runs on two nodes under one switch;
#  - one of the gang's nodes is drained mid-run: gpupool sees it within a
#    poll, the gang goes on and completes, nothing new lands there, and
#    the preempted jobs resume from their checkpoints on other nodes;
#  - slurmctld restarts and the daemon is killed (-9) and restarted while
#    jobs run: they are adopted, none is started twice;
#  - a job a user submits with plain sbatch is held by the job_submit
#    plugin and adopted (tenant = its account);
#  - a node goes DOWN under a job: the run ends, the job is held again in
#    Slurm and completes later;
#  - a node crashes (slurmd and jobs killed) and stays DOWN: gpupool sees it
#    down within a poll, the job resumes from its last checkpoint on
#    another node, and the node is back in gpupool once its slurmd is;
#  - a failing run, a cancel and a time limit come back with Slurm's exit
#    code and state;
#  - every job ends, and gpupool's GPU-seconds match Slurm's job
#    completion log within one poll period per run (slurm_ledger.py).
#
# Needs root (Slurm's daemons run as root here): exit 77 otherwise.
set -u
. "$(dirname "$0")/lib.sh"
exe=$1
src=$2
if [ "$(id -u)" -ne 0 ]; then
    echo "skip: the test cluster needs root"
    exit 77
fi
it_begin slurmd
chmod 755 "$tmp" # munged wants the folders above its socket searchable
cluster="$src/scripts/slurm-cluster.sh"
lab=$tmp/cluster
poll=1
watchdog=
cleanup() {
    [ -n "$watchdog" ] && { pkill -P "$watchdog"; kill "$watchdog"; } 2>/dev/null
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    "$cluster" stop "$lab" >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# phase WHAT: where the test is, with the time, in its output and in
# $tmp/phase for the watchdog
phase() {
    echo "$*" >"$tmp/phase"
    echo "[$(date +%T)] $*"
}
report() {
    echo "--- gpupool queue -a"
    timeout 10 "$exe" queue -a 2>&1 | tail -n 30
    echo "--- gpupool nodes"
    timeout 10 "$exe" nodes 2>&1 | grep -v "^  job"
    echo "--- squeue"
    timeout 10 "$cluster" exec "$lab" -- squeue -a 2>&1 | tail -n 30
    echo "--- daemon log (tail)"
    grep -v "stop step" "$tmp/daemon.log" | tail -n 60
    echo "--- slurmctld log (tail)"
    tail -n 30 "$lab/log/slurmctld.log"
}
# The watchdog: a test that hangs ends (before meson's 400 s) saying
# where, with the logs, rather than being killed silently.
(
    sleep "${GP_TEST_WATCHDOG:-330}" >/dev/null 2>&1
    echo "FAIL: the test still runs after ${GP_TEST_WATCHDOG:-330} s, at: $(cat "$tmp/phase" 2>/dev/null)"
    report
    kill -TERM $$
    pkill -TERM -P $$
) &
watchdog=$!
if ! "$cluster" start "$lab" --nodes 4 --gpus 4 --per-switch 2 \
    --gpu-type v100 >"$tmp/cluster.log" 2>&1; then
    echo "FAIL: the test cluster did not start"
    cat "$tmp/cluster.log"
    exit 1
fi
slurm() { "$cluster" exec "$lab" -- "$@"; }

cat >"$tmp/tenants.json" <<JSON
{"tenants": [{"name": "lender", "guarantee": 8},
             {"name": "borrower", "guarantee": 8}]}
JSON
# ck.sh STEPS [every]: 0.2 s a step; at the preempt signal it saves its
# step and leaves (with `every`, it also saves each step); a run resumes
# from the step saved. STEPS 0: until the test creates $tmp/release-JOB
# (a job runs until the test is done with it, however slow the machine,
# rather than for a time the test must keep within)
cat >"$tmp/ck.sh" <<'EOF'
#!/bin/sh
trap 'echo "$step" >"$GPUPOOL_CHECKPOINT_DIR/step"; echo "preempted at $step on $SLURMD_NODENAME"; exit 0' "$GPUPOOL_PREEMPT_SIGNAL"
step=$(cat "$GPUPOOL_CHECKPOINT_DIR/step" 2>/dev/null || echo 0)
echo "start restart=$GPUPOOL_RESTART_COUNT step=$step node=$SLURMD_NODENAME nodes=$SLURM_JOB_NODELIST gpus=$CUDA_VISIBLE_DEVICES leak=${GP_TEST_LEAK:-none}"
while [ "$step" -lt "$1" ] ||
    { [ "$1" = 0 ] && [ ! -e "${0%/*}/release-$GPUPOOL_JOB_ID" ]; }; do
    sleep 0.2
    step=$((step + 1))
    [ "${2:-}" != every ] || echo "$step" >"$GPUPOOL_CHECKPOINT_DIR/step"
done
echo "done $step"
EOF
chmod 755 "$tmp/ck.sh"

start() {
    # (GP_TEST_LEAK: the jobs must not inherit the daemon's environment)
    "$cluster" exec "$lab" -- env GP_TEST_LEAK=daemon \
        "$exe" serve --set server.state_dir="$tmp" \
        --set server.socket="$sock" --set backend.kind=slurm \
        --set scheduler.tenants="$tmp/tenants.json" \
        --set scheduler.placement=topo --set scheduler.grace=5s \
        --set slurm.poll=${poll}s --set server.log_level=debug \
        >>"$tmp/daemon.log" 2>&1 &
    pid=$!
    it_wait_up "$tmp/daemon.log"
}
# py JOB EXPR: EXPR of j, the job's `show --json`
py() { "$exe" show --json "$1" | python3 -c "import json,sys; j=json.load(sys.stdin); print($2)"; }
sjob() { py "$1" '[e["detail"]["slurm_job"] for e in j["events"] if "slurm_job" in (e.get("detail") or {})][-1]'; }
nodes_of() { py "$1" "j['runs'][$2]['node']"; }
preemptions() { py "$1" 'j["preemptions"]'; }
# wait_node NODE STATE WHAT: `gpupool nodes` shows NODE in STATE within a
# poll (and a second), or the test fails saying WHAT
wait_node() {
    n=$(((poll + 1) * 10))
    until "$exe" nodes | grep -q "^$1 .*state=$2"; do
        n=$((n - 1))
        [ $n -gt 0 ] || { fail "gpupool did not see $1 $3 within a poll"; return 1; }
        sleep 0.1
    done
}
# sq FIELD SLURMID: a field of the job in squeue's JSON
sq() {
    slurm squeue --json | python3 -c "import json,sys
for j in json.load(sys.stdin)['jobs']:
    if j['job_id'] == $2: print(j['$1'])"
}

phase "the daemon starts"
start
grep -q "slurm 22\|slurm [0-9]" "$tmp/daemon.log" ||
    fail "the daemon does not say which Slurm it drives"
[ "$("$exe" nodes | grep -c 'state=up  gpus=4')" = 4 ] ||
    fail "gpupool nodes does not list Slurm's 4 nodes of 4 GPUs"

# ---- a time limit (Slurm's are in minutes: it ends at the next check of
# limits after 60 s, while the rest goes on). A CPU-only job, so that it
# takes no GPU from what follows.
phase "a job with a time limit"
tj=$(submit -t lender -J limit -g 0 --time 1m -- sleep 600)
wait_state "$tj" running 30

# ---- a borrower fills the cluster, one job at a time: each starts in a
# round of its own, so the reclaim below takes the two started last (on
# the last two nodes the placer filled, under one switch). Submitted at
# once, they can start in one round, and the latest-started rule then has
# no order to go by.
phase "a borrower fills the cluster"
b=
for k in 1 2 3 4; do
    j=$(submit -t borrower -J "b$k" -g 4 --checkpointable -- "$tmp/ck.sh" 0)
    b="$b $j"
    wait_state "$j" running 30
done
# running in gpupool once Slurm runs it
for j in $b; do
    [ "$(sq job_state "$(sjob "$j")")" = RUNNING ] ||
        fail "job $j runs in gpupool, not in Slurm"
done

# ---- the lender reclaims two nodes for an 8-GPU gang
phase "the lender's gang reclaims two nodes"
l=$(submit -t lender -J gang -g 8 -- "$tmp/ck.sh" 0)
wait_state "$l" running 30
victims=
for j in $b; do
    [ "$(preemptions "$j")" -ge 1 ] && victims="$victims $j"
done
[ "$(echo $victims | wc -w)" = 2 ] ||
    fail "the gang should preempt exactly 2 borrower jobs, preempted:$victims"
gang=$(nodes_of "$l" -1)
case $gang in
n1,n2 | n2,n1 | n3,n4 | n4,n3) ;;
*) fail "the gang runs on $gang, not two nodes under one switch" ;;
esac
for v in $victims; do
    grep -q "preempted at [1-9]" "$tmp/jobs/$v/stdout" ||
        fail "job $v did not checkpoint at the signal"
    [ "$(sq priority "$(sjob "$v")")" = 0 ] ||
        fail "job $v is not held in Slurm after its preemption"
done
[ "$("$exe" nodes | grep -c "^  job $l .* 4 GPUs")" = 2 ] ||
    fail "gpupool nodes does not show the gang's 4 GPUs on each of its nodes"
sl=$(sjob "$l")
grep -q "leak=none" "$tmp/jobs/$l/stdout" ||
    fail "the gang's job has the daemon's environment: $(cat "$tmp/jobs/$l/stdout")"
[ "$(sq node_count "$sl")" = 2 ] || fail "the gang has $(sq node_count "$sl") nodes in Slurm"

# ---- a node of the gang drained mid-run
phase "a node of the gang drains"
drained=${gang%%,*}
slurm scontrol update NodeName="$drained" State=DRAIN Reason=maintenance
wait_node "$drained" drain drained
[ "$(state "$l")" = running ] || fail "the gang stopped when its node drained"

# ---- slurmctld restarts under the daemon
phase "slurmctld restarts"
"$cluster" restart-ctld "$lab" >>"$tmp/cluster.log" 2>&1 ||
    fail "slurmctld did not restart"
sleep 2
kill -0 "$pid" 2>/dev/null || fail "the daemon died with slurmctld's restart"
# every slurmd registered with the new slurmctld (sinfo marks a node not
# responding with '*'): a job started before may be launched into the
# void, and Slurm requeues it only minutes later
responding() { ! slurm sinfo -h -N -o '%T' | grep -q '\*'; }
wait_for 60 "every node to answer the new slurmctld" responding
touch "$tmp/release-$l"
wait_state "$l" completed 60
# the borrower's jobs not preempted end, leaving room for the others
for j in $b; do
    case " $victims " in *" $j "*) ;; *) touch "$tmp/release-$j" ;; esac
done

# ---- the preempted jobs resume from their checkpoints, elsewhere
phase "the preempted jobs resume"
for v in $victims; do wait_state "$v" running 90; done
# (Slurm says RUNNING a moment before slurmd has the script going)
resumed() { grep -q "start restart=1 step=[1-9]" "$tmp/jobs/$1/stdout"; }
for v in $victims; do
    wait_for 60 "job $v's script to start again" resumed "$v"
    resumed "$v" ||
        fail "job $v did not resume from its checkpoint: $(cat "$tmp/jobs/$v/stdout")"
    [ "$(nodes_of "$v" -1)" != "$drained" ] ||
        fail "job $v resumed on the drained node $drained"
done
slurm scontrol update NodeName="$drained" State=RESUME
moved=0
for v in $victims; do
    [ "$(nodes_of "$v" 0)" != "$(nodes_of "$v" -1)" ] && moved=$((moved + 1))
done
[ $moved -ge 1 ] || fail "no preempted job resumed on another node"

# ---- kill -9 of the daemon while jobs run; restarted, it adopts them
phase "the daemon is killed and restarted"
before=""
for j in $b; do before="$before $(sq restart_cnt "$(sjob "$j")")"; done
kill -9 "$pid"
wait "$pid" 2>/dev/null
start
grep -q "adopted: Slurm job" "$tmp/daemon.log" ||
    fail "the restarted daemon adopted no running Slurm job"
# an adopted run's start names its nodes, in the history and the log
for v in $victims; do
    case $(py "$v" '[e["detail"].get("nodes") for e in j["events"] if e["kind"] == "started"][-1]') in
    n*) ;;
    *) fail "job $v's adopted run names no nodes in its history" ;;
    esac
done
grep -q 'started run=[0-9]* gpus="' "$tmp/daemon.log" &&
    fail "a start in the log names no nodes"
after=""
for j in $b; do after="$after $(sq restart_cnt "$(sjob "$j")")"; done
[ "$before" = "$after" ] ||
    fail "a job was started again by the restart (Slurm restarts $before -> $after)"
# the preempted jobs end now, leaving the cluster to what follows
for v in $victims; do touch "$tmp/release-$v"; done

# ---- plain sbatch: held by the plugin, adopted by gpupool
phase "plain sbatch, adopted"
sid=$(slurm sh -c "printf '#!/bin/sh\necho adopted on \$SLURMD_NODENAME\nsleep 1\n' |
    sbatch --parsable --account=lender --gres=gpu:v100:2 --time=5 -o $tmp/adopted.out")
a=
n=100
while [ -z "$a" ] && [ $n -gt 0 ]; do
    a=$("$exe" queue -a | awk '$2 == "lender" && $4 == "sbatch" { print $1 }')
    n=$((n - 1))
    sleep 0.1
done
[ -n "$a" ] || fail "Slurm job $sid was not adopted"
if [ -n "$a" ]; then
    wait_state "$a" completed 30
    [ "$(sq comment "$sid")" = "gpupool:$a" ] ||
        fail "Slurm job $sid's comment is not gpupool:$a"
    grep -q "adopted on n" "$tmp/adopted.out" || fail "the adopted job did not run"
fi

# ---- a node goes DOWN under a job: its run ends "node down", the job is
# held again in Slurm (not started by Slurm 121 s later), and runs to its
# end from gpupool's next placement
wait_slurm() { # JOB STATE: the job's Slurm state, 30 s at most
    n=300
    until [ "$(sq job_state "$(sjob "$1")")" = "$2" ]; do
        n=$((n - 1))
        [ $n -gt 0 ] || { fail "job $1 is not $2 in Slurm"; return 1; }
        sleep 0.1
    done
}
phase "a node goes down under a job"
dj=$(submit -t lender -J down -g 4 --checkpointable -- "$tmp/ck.sh" 0)
wait_state "$dj" running 60
wait_slurm "$dj" RUNNING
dn=$(nodes_of "$dj" -1)
# (here slurmd answers again at once and the node is back within a second:
# gpupool may see the node down, or only that Slurm requeued the job)
slurm scontrol update NodeName="$dn" State=DOWN Reason=failed
n=50
until [ "$(py "$dj" 'j["runs"][0].get("end_reason")')" = "node down" ]; do
    n=$((n - 1))
    [ $n -gt 0 ] || { fail "job $dj's run did not end 'node down'"; break; }
    sleep 0.1
done
slurm scontrol update NodeName="$dn" State=RESUME 2>/dev/null
touch "$tmp/release-$dj"
wait_state "$dj" completed 40

# ---- a node crashes under a job and stays down (its slurmd and the job's
# processes killed, the node set DOWN as Slurm would at SlurmdTimeout):
# gpupool sees it down within a poll, the run ends "node down", the job
# resumes from its last checkpoint on another node; back up once its
# slurmd is
phase "a node crashes under a job"
kj=$(submit -t lender -J crash -g 4 --checkpointable -- "$tmp/ck.sh" 0 every)
wait_state "$kj" running 60
wait_slurm "$kj" RUNNING
kn=$(nodes_of "$kj" -1)
n=100
until [ "$(cat "$tmp/jobs/$kj/checkpoint/step" 2>/dev/null || echo 0)" -ge 3 ]; do
    n=$((n - 1))
    [ $n -gt 0 ] || { fail "job $kj saved no checkpoint"; break; }
    sleep 0.1
done
"$cluster" kill-node "$lab" "$kn" >>"$tmp/cluster.log" 2>&1 ||
    fail "could not kill node $kn"
slurm scontrol update NodeName="$kn" State=DOWN Reason=crash
wait_node "$kn" down down
[ "$(py "$kj" 'j["runs"][0].get("end_reason")')" = "node down" ] ||
    fail "job $kj's run on $kn did not end 'node down'"
wait_state "$kj" running 30
[ "$(nodes_of "$kj" -1)" != "$kn" ] || fail "job $kj runs again on the dead node $kn"
n=100
until grep -Eq "start restart=1 step=([3-9]|[1-9][0-9]+) " "$tmp/jobs/$kj/stdout"; do
    n=$((n - 1))
    [ $n -gt 0 ] || { fail "job $kj did not resume from its checkpoint: $(cat "$tmp/jobs/$kj/stdout")"; break; }
    sleep 0.1
done
"$cluster" start-node "$lab" "$kn" >>"$tmp/cluster.log" 2>&1 ||
    fail "node $kn did not come back"
wait_node "$kn" up "up again"
touch "$tmp/release-$kj"
wait_state "$kj" completed 40

# ---- a run that fails, and one cancelled while it runs
phase "a failing run, a cancel"
fj=$(submit -t lender -J fails -g 1 -- sh -c 'exit 3')
wait_state "$fj" failed 30
[ "$(field "$fj" exit_code)" = 3 ] || fail "job $fj: exit code $(field "$fj" exit_code), not 3"
cj=$(submit -t lender -J cancelled -g 1 -- sleep 600)
wait_state "$cj" running 30
wait_slurm "$cj" RUNNING
"$exe" cancel "$cj" >/dev/null
wait_state "$cj" cancelled 30
wait_slurm "$cj" CANCELLED

# ---- the time limit: Slurm's TIMEOUT, the job failed "time limit"
phase "the time limit"
wait_state "$tj" failed 120
[ "$(py "$tj" 'j.get("reason")')" = "time limit" ] ||
    fail "job $tj: reason '$(py "$tj" 'j.get("reason")')', not 'time limit'"
[ "$(sq job_state "$(sjob "$tj")")" = TIMEOUT ] || fail "job $tj is not TIMEOUT in Slurm"

# ---- everything completes; the ledger against Slurm's record
phase "everything completes; the ledger"
for j in $b; do wait_state "$j" completed 90; done
ids="$b $l $a $dj $kj $fj $cj $tj"
{
    echo "["
    sep=
    for j in $ids; do
        printf '%s' "$sep"
        "$exe" show --json "$j"
        sep=,
    done
    echo "]"
} >"$tmp/jobs.json"
python3 "$(dirname "$0")/slurm_ledger.py" "$tmp/jobs.json" \
    "$lab/log/jobcomp.log" "$poll" || fail "GPU-seconds do not match Slurm's"

if [ $fails -ne 0 ]; then
    report
    exit 1
fi
echo "ok: reclaim, gang under one switch, drain, restarts, adoption, node down, node crash, failure, cancel, time limit, ledger"
