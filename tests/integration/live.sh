#!/bin/sh
# live.sh GPUPOOL - what changes while a real `gpupool serve` runs: the
# policy's options through PUT /v1/policy/options (kept across a restart)
# and through the config file on SIGHUP (the latest change wins), a bad
# [policy] or tenants file on SIGHUP (logged, nothing changes), and the
# tenants file on SIGHUP (tenants added and updated; one an admin changed
# through the API keeps that definition). The daemon's own user is its
# admin on the socket.
set -u
. "$(dirname "$0")/lib.sh"
exe=$1
it_begin live
trap it_kill_all EXIT

# config POLICY_LINES...: the config file, [policy] as given
config() {
    {
        echo "[server]"
        echo "state_dir = $tmp"
        echo "socket = $sock"
        echo "log_level = debug"
        echo "[scheduler]"
        echo "tenants = $tmp/tenants.json"
        echo "[backend]"
        echo "gpus = 4"
        echo "[policy]"
        for l in "$@"; do echo "$l"; done
    } >"$tmp/gpupool.ini"
}
tenants() { echo "{\"tenants\": [$1]}" >"$tmp/tenants.json"; }

start() {
    "$exe" serve --config "$tmp/gpupool.ini" >>"$tmp/daemon.log" 2>&1 &
    pid=$!
    it_wait_up "$tmp/daemon.log"
}
stop() {
    kill -TERM "$pid"
    wait "$pid" || fail "the daemon exited $? on SIGTERM"
    pid=
}

# req METHOD PATH [BODY]: the reply in $tmp/out, the status echoed
req() {
    curl -s -o "$tmp/out" -w '%{http_code}' --unix-socket "$sock" \
        -X "$1" "http://localhost$2" ${3:+-d "$3"}
}
# policy EXPR: a Python expression over the policy's JSON (p) holds
policy() {
    [ "$(req GET /v1/policy)" = 200 ] || fail "GET /v1/policy: $(cat "$tmp/out")"
    python3 -c "import json,sys; p=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" \
        "$tmp/out" || fail "policy: not ($1): $(cat "$tmp/out")"
}
# tenant NAME EXPR: over the tenant's JSON (t)
tenant() {
    [ "$(req GET /v1/tenants)" = 200 ] || fail "GET /v1/tenants"
    python3 -c "
import json,sys
t={x['name']: x for x in json.load(open(sys.argv[1]))['tenants']}.get(sys.argv[2])
sys.exit(0 if t is not None and ($2) else 1)" "$tmp/out" "$1" ||
        fail "tenant $1: not ($2): $(cat "$tmp/out")"
}
# hup: SIGHUP, then wait for the reload's line N (counted from 1)
nhup=0
hup() {
    nhup=$((nhup + 1))
    kill -HUP "$pid"
    i=0
    while [ "$(grep -c 'reload: tenants file' "$tmp/daemon.log")" -lt $nhup ]; do
        i=$((i + 1))
        [ $i -gt 100 ] && { fail "no reload seen after SIGHUP $nhup"; return; }
        sleep 0.1
    done
}

config "lifo = 1"
tenants '{"name": "a", "guarantee": 2}, {"name": "b", "guarantee": 2}'
start

# ---- the file's options, then an admin's -----------------------------------
policy 'p["options"] == {"lifo": "1"} and p["options_from"] == "file"'
[ "$(req PUT /v1/policy/options '{"lifo": "0", "tolerance": "0.1"}')" = 200 ] ||
    fail "PUT /v1/policy/options: $(cat "$tmp/out")"
policy 'p["options"] == {"lifo": "0", "tolerance": "0.1"} and p["options_from"] == "api"'
# refused: names the option, changes nothing
[ "$(req PUT /v1/policy/options '{"tolerance": "2"}')" = 400 ] ||
    fail "a bad tolerance was not refused"
grep -q '"field":"tolerance"' "$tmp/out" || fail "the refusal names no field: $(cat "$tmp/out")"
policy 'p["options"] == {"lifo": "0", "tolerance": "0.1"}'
# jobs still start under the new options
j=$("$exe" submit -t a -- true | sed -n 's/^Submitted job //p')
i=0
until [ "$("$exe" show --json "$j" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" = completed ]; do
    i=$((i + 1))
    [ $i -gt 100 ] && { fail "job $j did not complete"; break; }
    sleep 0.1
done

# ---- the admin's set survives a restart ------------------------------------
stop
start
policy 'p["options"] == {"lifo": "0", "tolerance": "0.1"} and p["options_from"] == "api"'
grep -q 'the set an admin gave through the API replaces the file' "$tmp/daemon.log" ||
    fail "the start does not say the admin's options apply"

# ---- SIGHUP: an unchanged [policy] leaves the admin's set ------------------
hup
policy 'p["options_from"] == "api"'
# a changed [policy] wins over it
config "lifo = 1" "hold_line = 60"
hup
policy 'p["options"] == {"lifo": "1", "hold_line": "60"} and p["options_from"] == "file"'
# a [policy] the policy refuses: logged, the options in force stay
config "lifo = 1" "no_such_option = 1"
hup
policy 'p["options"] == {"lifo": "1", "hold_line": "60"}'
grep -q 'reload: \[policy\] no_such_option' "$tmp/daemon.log" ||
    fail "the refused [policy] is not logged"
config "lifo = 1" "hold_line = 60"
# and a restart keeps the file's (the admin's set was dropped)
stop
start
policy 'p["options"] == {"lifo": "1", "hold_line": "60"} and p["options_from"] == "file"'

# ---- SIGHUP: the tenants file ----------------------------------------------
# an admin changes b through the API; the file then changes a and b and
# adds c: a and c follow the file, b keeps the admin's definition
[ "$(req PATCH /v1/tenants/b '{"weight": 3}')" = 200 ] || fail "PATCH b: $(cat "$tmp/out")"
tenants '{"name": "a", "guarantee": 1, "weight": 2}, {"name": "b", "guarantee": 1}, {"name": "c", "guarantee": 2, "users": ["*"]}'
hup
tenant a 't["guarantee_gpus"] == 1 and t["weight"] == 2'
tenant b 't["guarantee_gpus"] == 2 and t["weight"] == 3'
tenant c 't["guarantee_gpus"] == 2'
j=$("$exe" submit -t c -- true | sed -n 's/^Submitted job //p')
[ -n "$j" ] || fail "no job submitted to the new tenant c"
grep -q 'reload: tenants file: 1 added, 1 updated, 1 kept' "$tmp/daemon.log" ||
    fail "the reload's counts are not logged"
# a broken tenants file: logged, nothing changes
echo '{"tenants": [' >"$tmp/tenants.json"
kill -HUP "$pid"
i=0
until grep -q "reload: tenants.json:2: " "$tmp/daemon.log"; do
    i=$((i + 1))
    [ $i -gt 100 ] && { fail "the broken tenants file is not logged"; break; }
    sleep 0.1
done
tenant c 't["guarantee_gpus"] == 2'
# a tenant that left the file stays until a restart
tenants '{"name": "a", "guarantee": 1, "weight": 2}, {"name": "b", "guarantee": 1}, {"name": "c", "guarantee": 2, "users": ["*"]}'
hup
long=$("$exe" submit -t c -- sleep 300 | sed -n 's/^Submitted job //p')
i=0
until [ "$("$exe" show --json "$long" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" = running ]; do
    i=$((i + 1))
    [ $i -gt 100 ] && { fail "job $long did not start"; break; }
    sleep 0.1
done
tenants '{"name": "a", "guarantee": 1, "weight": 2}, {"name": "b", "guarantee": 1}'
hup
tenant c 't["guarantee_gpus"] == 2'
grep -q 'tenant c is no longer in the tenants file' "$tmp/daemon.log" ||
    fail "a tenant that left the file is not logged"
[ "$("$exe" show --json "$long" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" = running ] ||
    fail "job $long of the tenant that left the file stopped before a restart"

# at a restart the tenant is gone: its running job goes on (re-adopted),
# with no guarantee, and the log says so
lpid=$("$exe" show --json "$long" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
stop
start
[ "$("$exe" show --json "$long" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" = running ] ||
    fail "job $long of a tenant no longer defined was not re-adopted"
grep -q "job $long: its tenant c is no longer defined" "$tmp/daemon.log" ||
    fail "the restart does not say job $long's tenant is gone"

# a job whose record the core refuses now (here made so by hand in the
# store: a share of a device and a whole one at once) cannot be restored:
# it fails with the reason, and its process is killed (nothing runs that
# gpupool does not account for)
stop
python3 - "$tmp/gpupool.db" "$long" <<'PY' || fail "cannot edit the store"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("""UPDATE jobs SET spec_json = json_set(spec_json, '$.gpu_milli', 500)
              WHERE id = ?""", (int(sys.argv[2]),))
db.commit()
PY
start
"$exe" show --json "$long" >"$tmp/out"
python3 -c '
import json,sys
j=json.load(open(sys.argv[1]))
sys.exit(0 if j["state"] == "failed" and "cannot be restored" in j["reason"] else 1)' "$tmp/out" ||
    fail "job $long of a tenant gone: $(cat "$tmp/out")"
i=0
while kill -0 "$lpid" 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt 50 ] && { fail "job $long's process $lpid still runs"; break; }
    sleep 0.1
done

# yes/no arguments of the job list: ended=1 lists the jobs that ended,
# ended=0 the others (here none), another value is refused naming it
[ "$(req GET '/v1/jobs?ended=1')" = 200 ] || fail "GET /v1/jobs?ended=1"
python3 -c "import json,sys; sys.exit(0 if len(json.load(open(sys.argv[1]))['jobs']) >= 3 else 1)" "$tmp/out" ||
    fail "ended=1 does not list the ended jobs: $(cat "$tmp/out")"
[ "$(req GET '/v1/jobs?ended=0')" = 200 ] || fail "GET /v1/jobs?ended=0"
python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['jobs'] == [] else 1)" "$tmp/out" ||
    fail "ended=0 lists ended jobs: $(cat "$tmp/out")"
[ "$(req GET '/v1/jobs?ended=maybe')" = 400 ] || fail "ended=maybe was not refused"
grep -q '"field":"ended"' "$tmp/out" || fail "ended=maybe: the refusal names no field: $(cat "$tmp/out")"

stop
if [ $fails -ne 0 ]; then
    echo "--- daemon log"
    tail -n 60 "$tmp/daemon.log"
    echo "$fails failed"
    exit 1
fi
echo "ok: policy options and tenants changed live"
