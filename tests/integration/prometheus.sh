#!/bin/sh
# prometheus.sh GPUPOOL PROMETHEUS PROMTOOL - Debian's Prometheus server,
# really started, scrapes a real `gpupool serve` over loopback TCP with a
# bearer token, and its own HTTP API (/api/v1/query) answers per-tenant
# held and guaranteed GPUs and queue lengths equal to what
# `gpupool tenants --json` says and to what the test set up; a scrape
# without the token is refused (401); `promtool check metrics` finds
# nothing to complain about on /metrics.
#
# The daemon has 4 fake GPUs and two tenants: "lender" (3 GPUs guaranteed)
# and "borrower" (1). Each fills its guarantee with `sleep` jobs, then
# queues more (lender 1, borrower 2): both sit exactly at their guarantee,
# so the pool has nothing to reclaim and the numbers stay put while
# Prometheus scrapes. Every tenant's three numbers differ from the other
# tenant's, so a mixed-up label shows.
set -u
exe=$1
prometheus=${2:-}
promtool=${3:-}
tmp=$(mktemp -d /tmp/gpupool-prom.XXXXXX)
export GPUPOOL_SOCKET="$tmp/gp.sock"
fails=0
pid=
ppid_=
cleanup() {
    if [ -n "$ppid_" ]; then
        kill -TERM "$ppid_" 2>/dev/null
        wait "$ppid_" 2>/dev/null
    fi
    if [ -n "$pid" ]; then
        # jobs outlive the daemon by design: cancel them while it is up
        for j in $(jobs_alive); do "$exe" cancel "$j" >/dev/null 2>&1; done
        within 30 none_alive
        kill -TERM "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    fi
    # whatever is left (the daemon died, a cancel hung): each run's process
    # group and supervisor, found by the run file's pid and start time
    python3 - "$tmp" <<'PY'
import glob, os, signal, sys
for f in glob.glob(sys.argv[1] + "/jobs/*/run-*.pid"):
    if os.path.exists(f[:-4] + ".status"):
        continue
    try:
        kv = dict(l.split("=", 1) for l in open(f).read().split())
    except (OSError, ValueError):
        continue
    for who in ("job", "supervisor"):
        pid = int(kv.get(who + "_pid", "0"))
        try:
            stat = open("/proc/%d/stat" % pid).read()
        except OSError:
            continue
        if pid > 1 and stat.rsplit(")", 1)[1].split()[19] == kv.get(who + "_start"):
            try:
                if who == "job":
                    os.killpg(pid, signal.SIGKILL)
                else:
                    os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
PY
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# within SECONDS CMD...: run CMD every 0.1 s until it succeeds, for at most
# SECONDS of wall time (generous: the machine may be busy); 1 if it never did
within() {
    end=$(($(date +%s) + $1))
    shift
    until "$@"; do
        [ "$(date +%s)" -lt $end ] || return 1
        sleep 0.1
    done
}
die() {
    echo "FAIL: $*"
    for f in daemon.log prometheus.log; do
        [ -s "$tmp/$f" ] && { echo "--- $f"; tail -n 40 "$tmp/$f"; }
    done
    exit 1
}

# the ids of the jobs still queued, running or stopping
jobs_alive() {
    "$exe" queue --json 2>/dev/null | python3 -c '
import json, sys
print(*[j["id"] for j in json.load(sys.stdin)["jobs"]])' 2>/dev/null
}
none_alive() { [ -z "$(jobs_alive)" ]; }

for p in "$prometheus" "$promtool"; do
    [ -n "$p" ] && [ -x "$p" ] && continue
    die "prometheus and promtool are needed (Debian package" \
        "prometheus; scripts/install-deps.sh installs it)"
done

# A loopback port nobody listens on now. Another process may take it before
# we bind it: the callers retry with another.
free_port() {
    python3 -c '
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}

# http_code URL [curl options]: the status of a GET, 000 if no answer
http_code() {
    u=$1
    shift
    curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" "$u" 2>/dev/null
}

cat >"$tmp/tenants.json" <<JSON
{"tenants": [{"name": "lender", "guarantee": 3},
             {"name": "borrower", "guarantee": 1}]}
JSON
token=$(python3 -c 'import secrets; print(secrets.token_hex(20))')
# the tokens file holds only the token's hash (docs/api.md)
hash=$(printf '%s' "$token" | sha256sum | cut -d' ' -f1)
printf '# gpupool API tokens: sha256:HASH USER [TENANT...|admin]\nsha256:%s %s admin\n' \
    "$hash" "$(id -un)" >"$tmp/tokens"
printf '%s\n' "$token" >"$tmp/prometheus.token"
chmod 600 "$tmp/tokens" "$tmp/prometheus.token"

# ---- the daemon, on the Unix socket and on loopback TCP ----
# true once it answers on both; false at once if it exited
daemon_answers() {
    kill -0 "$pid" 2>/dev/null || return 0
    [ "$(http_code "http://127.0.0.1:$port/v1/health")" = 200 ] &&
        "$exe" queue >/dev/null 2>&1
}
tries=0
while :; do
    tries=$((tries + 1))
    [ $tries -le 5 ] || die "the daemon did not come up in 5 tries"
    port=$(free_port)
    "$exe" serve --set server.state_dir="$tmp" --set server.socket="$tmp/gp.sock" \
        --set backend.gpus=4 --set scheduler.tenants="$tmp/tenants.json" \
        --set server.listen="127.0.0.1:$port" --set server.tls=off \
        --set server.tokens_file="$tmp/tokens" --set monitor.period=1s \
        >>"$tmp/daemon.log" 2>&1 &
    pid=$!
    within 60 daemon_answers
    ok=$?
    if kill -0 "$pid" 2>/dev/null; then
        [ $ok -eq 0 ] && break
        die "the daemon runs but does not answer on 127.0.0.1:$port"
    fi
    wait "$pid" 2>/dev/null
    pid=
    echo "the daemon exited on start (port $port taken?); trying another port"
done
base="http://127.0.0.1:$port"

# /metrics over TCP: the token is needed
[ "$(http_code "$base/metrics")" = 401 ] ||
    fail "/metrics without a token: not refused with 401"
[ "$(http_code "$base/metrics" -H "Authorization: Bearer not-$token")" = 401 ] ||
    fail "/metrics with a wrong token: not refused with 401"

# ---- jobs: both tenants at their guarantee, both with a queue ----
state() { "$exe" show --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])'; }
# wait_state JOB STATE: a generous deadline, as the machine may be busy
is_state() { [ "$(state "$1")" = "$2" ]; }
wait_state() {
    within 60 is_state "$1" "$2" || die "job $1 is $(state "$1"), expected $2"
}
submit() {
    j=$("$exe" submit -t "$1" -J "$2" -- sleep 600 | sed -n 's/^Submitted job //p')
    [ -n "$j" ] || die "submit for $1 failed"
    echo "$j"
}
running=
for k in 1 2 3; do
    j=$(submit lender "lender-run-$k") || exit 1
    wait_state "$j" running
    running="$running $j"
done
j=$(submit borrower borrower-run-1) || exit 1
wait_state "$j" running
running="$running $j"
queued=
for t in lender borrower borrower; do
    j=$(submit $t "$t-wait") || exit 1
    queued="$queued $j"
done
for j in $queued; do wait_state "$j" pending; done
for j in $running; do wait_state "$j" running; done

# what the daemon says now: tenant held guaranteed pending, one per line
ledger() {
    "$exe" tenants --json | python3 -c '
import json, sys
for t in sorted(json.load(sys.stdin)["tenants"], key=lambda t: t["name"]):
    print(t["name"], "%g" % t["held_gpus"], "%g" % t["guarantee_gpus"],
          "%g" % t["pending"])'
}
want="borrower 1 1 2
lender 3 3 1"
said=$(ledger)
[ "$said" = "$want" ] ||
    die "gpupool tenants --json says (tenant held guaranteed pending):
$said
expected:
$want"

# ---- promtool on the page as served ----
curl -sf --max-time 10 -H "Authorization: Bearer $token" "$base/metrics" \
    >"$tmp/metrics.txt" || fail "GET /metrics with the token failed"
grep -q '^gpupool_tenant_held_gpus{tenant="lender"} 3$' "$tmp/metrics.txt" ||
    fail "/metrics: no 'gpupool_tenant_held_gpus{tenant=\"lender\"} 3'"
"$promtool" check metrics <"$tmp/metrics.txt" >"$tmp/promtool.out" 2>&1
rc=$?
if [ $rc -ne 0 ] || [ -s "$tmp/promtool.out" ]; then
    fail "promtool check metrics (exit $rc):"
    cat "$tmp/promtool.out"
fi

# ---- Prometheus, scraping every second ----
# true once it is ready; false at once if it exited
prometheus_ready() {
    kill -0 "$ppid_" 2>/dev/null || return 0
    [ "$(http_code "http://127.0.0.1:$pport/-/ready")" = 200 ]
}
tries=0
while :; do
    tries=$((tries + 1))
    [ $tries -le 5 ] || die "Prometheus did not come up in 5 tries"
    pport=$(free_port)
    # job "gpupool" presents the token; job "anonymous" does not and must
    # be refused
    cat >"$tmp/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gpupool
    authorization:
      type: Bearer
      credentials_file: $tmp/prometheus.token
    static_configs:
      - targets: ["127.0.0.1:$port"]
  - job_name: anonymous
    static_configs:
      - targets: ["127.0.0.1:$port"]
YAML
    "$promtool" check config "$tmp/prometheus.yml" >"$tmp/promtool.out" 2>&1 ||
        die "promtool check config refused the generated config: $(cat "$tmp/promtool.out")"
    rm -rf "$tmp/prometheus-data"
    "$prometheus" --config.file="$tmp/prometheus.yml" \
        --storage.tsdb.path="$tmp/prometheus-data" \
        --web.listen-address="127.0.0.1:$pport" \
        >>"$tmp/prometheus.log" 2>&1 &
    ppid_=$!
    within 60 prometheus_ready
    ok=$?
    if kill -0 "$ppid_" 2>/dev/null; then
        [ $ok -eq 0 ] && break
        die "Prometheus runs but is not ready on 127.0.0.1:$pport"
    fi
    wait "$ppid_" 2>/dev/null
    ppid_=
    echo "Prometheus exited on start (port $pport taken?); trying another port"
done
papi="http://127.0.0.1:$pport/api/v1"

# query EXPR: one line per series of an instant query, "tenant value" (the
# tenant label, or - without one), sorted; nothing when the answer is empty
query() {
    python3 - "$papi" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
url = sys.argv[1] + "/query?" + urllib.parse.urlencode({"query": sys.argv[2]})
with urllib.request.urlopen(url, timeout=10) as r:
    ans = json.load(r)
if ans.get("status") != "success" or ans["data"]["resultType"] != "vector":
    sys.exit("query %s: %s" % (sys.argv[2], ans))
rows = ["%s %g" % (s["metric"].get("tenant", "-"), float(s["value"][1]))
        for s in ans["data"]["result"]]
print("\n".join(sorted(rows)))
PY
}

# target JOB: its health and last error in Prometheus' target list
target() {
    python3 - "$papi" "$1" <<'PY'
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1] + "/targets", timeout=10) as r:
    ans = json.load(r)
for t in ans["data"]["activeTargets"]:
    if t["labels"].get("job") == sys.argv[2]:
        print(t["health"], t.get("lastError", ""))
PY
}

# the target is up once Prometheus scraped it with the token
target_is() { [ "$(target "$1" | cut -d' ' -f1)" = "$2" ]; }
within 60 target_is gpupool up ||
    die "Prometheus' gpupool target is not up: $(target gpupool)"
within 60 target_is anonymous down ||
    die "the anonymous target did not turn down: $(target anonymous)"
target anonymous | grep -q 401 ||
    fail "the anonymous scrape failed, but not with 401: $(target anonymous)"
[ "$(query 'up{job="gpupool"}')" = "- 1" ] ||
    fail "up{job=\"gpupool\"} is not 1: $(query 'up{job="gpupool"}')"
[ "$(query 'up{job="anonymous"}')" = "- 0" ] ||
    fail "up{job=\"anonymous\"} is not 0: $(query 'up{job="anonymous"}')"

# Prometheus' view: tenant held guaranteed pending, as ledger() prints it.
# A series missing for a tenant prints "?".
prom_ledger() {
    python3 - "$(query 'gpupool_tenant_held_gpus{job="gpupool"}')" \
        "$(query 'gpupool_tenant_guaranteed_gpus{job="gpupool"}')" \
        "$(query 'gpupool_tenant_pending_jobs{job="gpupool"}')" <<'PY'
import sys
cols = [dict(l.split() for l in a.splitlines()) for a in sys.argv[1:]]
for t in sorted(set().union(*cols)):
    print(t, *[c.get(t, "?") for c in cols])
PY
}

# A scrape from before the jobs settled cannot match (held and queues were
# lower), so wait for one that does, then check the daemon still says the
# same: the two were compared on one state.
prom_agrees() {
    seen=$(prom_ledger)
    [ "$seen" = "$said" ]
}
within 60 prom_agrees ||
    fail "Prometheus says (tenant held guaranteed pending):
$seen
gpupool tenants --json says:
$said"
[ "$(ledger)" = "$said" ] ||
    fail "the ledger changed while Prometheus scraped: $(ledger)"
# and a number no other check touches: the jobs submitted, as a counter
[ "$(query 'gpupool_jobs_submitted_total{job="gpupool"}')" = "- 7" ] ||
    fail "gpupool_jobs_submitted_total is not 7: $(query 'gpupool_jobs_submitted_total{job="gpupool"}')"

# ---- a clean stop: Prometheus, the jobs, the daemon ----
kill -TERM "$ppid_"
wait "$ppid_"
rc=$?
ppid_=
[ $rc -eq 0 ] || fail "SIGTERM: Prometheus exited $rc"
for j in $(jobs_alive); do "$exe" cancel "$j" >/dev/null || fail "cancel $j"; done
within 60 none_alive || fail "jobs still alive after cancel: $(jobs_alive)"
# every run that started has ended: its supervisor wrote the status
for f in "$tmp"/jobs/*/run-*.pid; do
    [ -e "${f%.pid}.status" ] || fail "$f: the run has no status after cancel"
done
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc -eq 0 ] || fail "SIGTERM: the daemon exited $rc" # a leak, under ASan

if [ $fails -ne 0 ]; then
    for f in daemon.log prometheus.log; do
        echo "--- $f"
        tail -n 40 "$tmp/$f"
    done
    exit 1
fi
echo "ok: prometheus (gpupool on 127.0.0.1:$port, Prometheus on 127.0.0.1:$pport)"
echo "$seen" | sed 's/^/  tenant held guaranteed pending: /'
