# shellcheck shell=sh
# lib.sh - sourced by the daemon's shell tests (daemon.sh, idle.sh,
# live.sh, torch.sh), which set $exe to the gpupool program.

# it_begin NAME: a fresh folder $tmp (/tmp/gpupool-NAME.*) for the daemon's
# state, its socket $sock (exported as GPUPOOL_SOCKET for the CLI), no
# failure yet and no daemon yet ($pid).
it_begin() {
    tmp=$(mktemp -d "/tmp/gpupool-$1.XXXXXX")
    sock=$tmp/gp.sock
    export GPUPOOL_SOCKET="$sock"
    fails=0
    pid=
}

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# it_kill_all: a cleanup for tests that need no orderly stop: the daemon,
# then every process started under $tmp (jobs outlive the daemon by
# design), then $tmp.
it_kill_all() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    pkill -9 -f "$tmp/" 2>/dev/null
    rm -rf "$tmp"
}

# it_stop_jobs: stop the runs started under $tmp that have no status file
# yet (each job leads its own process group and outlives the daemon by
# design), and give their supervisors 5 s to write how they ended.
it_unended() {
    find "$tmp" -name 'run-*.pid' 2>/dev/null | sed 's/\.pid$//' |
        while read -r f; do [ -e "$f.status" ] || echo "$f"; done
}
it_stop_jobs() {
    for f in $(it_unended); do
        jp=$(sed -n 's/^job_pid=//p' "$f.pid")
        [ -n "$jp" ] && kill -9 "-$jp" 2>/dev/null
    done
    it_n=50
    while [ $it_n -gt 0 ] && [ -n "$(it_unended)" ]; do
        it_n=$((it_n - 1))
        sleep 0.1
    done
}

# it_report: the end of the daemon's log ($tmp/daemon.log) and of every
# job's stdout and stderr, after a failure.
it_report() {
    echo "--- daemon log"
    tail -n 40 "$tmp/daemon.log"
    find "$tmp" -name stdout -o -name stderr | sort | while read -r f; do
        echo "--- $f"
        tail -n 15 "$f"
    done
}

# it_wait_up LOG: wait (10 s at most) until the daemon answers `gpupool
# queue`; if it does not, print LOG and end the test with status 1.
it_wait_up() {
    it_i=0
    while ! "$exe" queue >/dev/null 2>&1; do
        it_i=$((it_i + 1))
        if [ $it_i -gt 100 ]; then
            echo "FAIL: the daemon did not come up"
            cat "$1"
            exit 1
        fi
        sleep 0.1
    done
}

# The CLI on $exe: a job's state and one field of `show --json`, a wait
# for a state (30 s unless told), and a submit that prints the new id.
state() { "$exe" show --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])'; }
field() { "$exe" show --json "$1" | python3 -c "import json,sys; print(json.load(sys.stdin).get('$2'))"; }

# it_deadline SECONDS: sets it_end, SECONDS of wall-clock time from now;
# it_late: true once it_end is past. (The waits count time, not tries: on
# a loaded machine a try costs more than its 0.1 s of sleep.)
it_deadline() { it_end=$(($(date +%s) + $1)); }
it_late() { [ "$(date +%s)" -ge "$it_end" ]; }

# wait_state JOB STATE [SECONDS]
wait_state() {
    it_deadline "${3:-30}"
    while :; do
        s=$(state "$1")
        [ "$s" = "$2" ] && return 0
        it_late && break
        sleep 0.1
    done
    fail "job $1 is $s, expected $2 (after ${3:-30} s)"
    return 1
}

submit() { "$exe" submit "$@" | sed -n 's/^Submitted job //p'; }

# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds. The limit only
# ends a test that hangs; nothing here is timed.
wait_for() {
    it_deadline "$1"
    it_what=$2
    shift 2
    while ! "$@"; do
        if it_late; then
            fail "waited too long for $it_what"
            return 1
        fi
        sleep 0.1
    done
}
has_state() { [ "$(field "$1" state)" = "$2" ]; }

# The training examples' output (examples/train_*.py): past_step FILE K,
# the job logged a step >= K; final_hash FILE, the model hash it printed
# last.
past_step() {
    awk -v k="$2" '$1 == "step" && $2 + 0 >= k { f = 1 } END { exit !f }' \
        "$1" 2>/dev/null
}
final_hash() { sed -n 's/^final_state_sha256 //p' "$1" | tail -n 1; }
