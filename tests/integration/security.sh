#!/bin/sh
# security.sh GPUPOOL - who may do what in `gpupool serve`. A root daemon
# with tenants vision (users: gpupool-test-ann), nlp (gpupool-test-bob),
# shared (everyone) and ops (no users: admins only), on its Unix socket and
# on TCP with hashed tokens (plain HTTP on loopback; then TLS with a
# self-signed certificate). For every endpoint the wrong tenant and the
# anonymous caller are refused, the right one and an admin served; jobs
# run as the users who submitted them; tenants an admin made or changed
# survive a restart; bad tokens files and plain HTTP off loopback stop the
# daemon with the place named.
#
# Needs root (it adds the two users when missing, and acts as them with
# runuser); exits 77 (skipped) otherwise.
set -u
exe=$1
case $exe in /*) ;; *) exe=$(pwd)/$exe ;; esac
if [ "$(id -u)" != 0 ]; then
    echo "skip: needs root (useradd, runuser)"
    exit 77
fi
for t in useradd runuser curl openssl python3; do
    if ! command -v $t >/dev/null 2>&1; then
        echo "skip: no $t"
        exit 77
    fi
done
ANN=gpupool-test-ann
BOB=gpupool-test-bob
for u in $ANN $BOB; do
    id -u $u >/dev/null 2>&1 || useradd -m -s /bin/sh $u || exit 1
done
tmp=$(mktemp -d /tmp/gpupool-sec.XXXXXX)
chmod 711 "$tmp"
cd "$tmp" || exit 1 # the jobs' working directory (the users may enter it)
sock=$tmp/gp.sock
fails=0
pid=
jobpids=
# the users run a copy of the client: the build tree may be closed to them
cp "$exe" "$tmp/gpupool-cli"
chmod 755 "$tmp/gpupool-cli"

cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    for p in $jobpids; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
port=$(free_port)
url=http://127.0.0.1:$port

cat >"$tmp/tenants.json" <<JSON
{"tenants": [{"name": "vision", "guarantee": 2, "users": ["$ANN"]},
             {"name": "nlp", "guarantee": 2, "users": ["$BOB"]},
             {"name": "shared", "users": ["*"]},
             {"name": "ops"}]}
JSON

# tokens: ann's acts as ann (her tenants by the tenants file), bob's is
# kept to nlp, and an admin's; the file holds their hashes only
token() { # NAME USER [ARGS...]
    name=$1
    shift
    "$exe" token new "$@" --json >"$tmp/$name.json" || fail "token new $*"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['token'])" \
        "$tmp/$name.json" >"$tmp/$name"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['line'])" \
        "$tmp/$name.json" >>"$tmp/tokens"
}
: >"$tmp/tokens"
token tok-ann $ANN
token tok-bob $BOB --tenant nlp
token tok-admin root --admin
chmod 600 "$tmp/tokens"
grep -q "$(cat "$tmp/tok-ann")" "$tmp/tokens" && fail "the tokens file holds a token"

start() {
    "$exe" serve --set server.state_dir="$tmp" --set server.socket="$sock" \
        --set backend.gpus=4 --set scheduler.tenants="$tmp/tenants.json" \
        --set server.listen="127.0.0.1:$port" --set server.tls=off \
        --set server.tokens_file="$tmp/tokens" --set backend.kill_after=2s \
        >>"$tmp/daemon.log" 2>&1 &
    pid=$!
    i=0
    while ! curl -sf --unix-socket "$sock" http://localhost/v1/health >/dev/null; do
        i=$((i + 1))
        if [ $i -gt 600 ] || ! kill -0 "$pid" 2>/dev/null; then
            fail "the daemon did not come up"
            cat "$tmp/daemon.log"
            exit 1
        fi
        sleep 0.1
    done
}

# call WHO METHOD PATH [BODY]: the HTTP status on stdout, the body in
# $tmp/out. WHO: root, ann, bob (the Unix socket as that user), anon (TCP
# without a token), tok-ann, tok-bob, tok-admin (TCP with that token).
call() {
    who=$1 m=$2 p=$3 body=${4-}
    set -- -s -w '\n%{http_code}' -X "$m"
    [ -n "$body" ] && set -- "$@" -H 'Content-Type: application/json' \
        --data-binary "$body"
    case $who in
    root) out=$(curl "$@" --unix-socket "$sock" "http://localhost$p") ;;
    ann) out=$(runuser -u $ANN -- curl "$@" --unix-socket "$sock" "http://localhost$p") ;;
    bob) out=$(runuser -u $BOB -- curl "$@" --unix-socket "$sock" "http://localhost$p") ;;
    anon) out=$(curl "$@" "$url$p") ;;
    tok-*) out=$(curl "$@" -H "Authorization: Bearer $(cat "$tmp/$who")" "$url$p") ;;
    esac
    printf '%s\n' "$out" | sed '$d' >"$tmp/out"
    printf '%s\n' "$out" | tail -n 1
}
# expect STATUS WHO METHOD PATH [BODY]
expect() {
    want=$1
    shift
    got=$(call "$@")
    [ "$got" = "$want" ] ||
        fail "$1 $2 $3 ${4-}: HTTP $got, expected $want: $(head -c 300 "$tmp/out")"
}
# has WORD / hasnt WORD: in the last answer
has() { grep -q -- "$1" "$tmp/out" || fail "$2: '$1' is missing: $(head -c 300 "$tmp/out")"; }
hasnt() { grep -q -- "$1" "$tmp/out" && fail "$2: '$1' is shown: $(head -c 300 "$tmp/out")"; }
# ids WHO PATH: the job ids a list shows, one line
ids() {
    call "$1" GET "$2" >/dev/null
    python3 -c 'import json,sys; print(" ".join(str(j["id"]) for j in json.load(open(sys.argv[1]))["jobs"]))' \
        "$tmp/out" 2>/dev/null
}
as() { # USER COMMAND...: the CLI as that user
    u=$1
    shift
    runuser -u "$u" -- env GPUPOOL_SOCKET="$sock" "$tmp/gpupool-cli" "$@"
}
jfield() { # JOB FIELD, as root
    GPUPOOL_SOCKET=$sock "$exe" show --json "$1" |
        python3 -c "import json,sys; print(json.load(sys.stdin).get('$2'))"
}
wait_state() { # JOB STATE
    n=600
    while [ $n -gt 0 ]; do
        s=$(jfield "$1" state)
        [ "$s" = "$2" ] && return 0
        n=$((n - 1))
        sleep 0.1
    done
    fail "job $1 is $s, expected $2"
    return 1
}
wait_output() { # FILE: until it has its second line (uid)
    n=600
    while [ $n -gt 0 ]; do
        [ -s "$1" ] && [ "$(wc -l <"$1")" -ge 2 ] && return 0
        n=$((n - 1))
        sleep 0.1
    done
    fail "$1: no output"
}

start

# ---- jobs run as the users who submitted them ----------------------------
A=$(as $ANN submit -t vision -J ann-job -- sh -c 'id -u; exec sleep 600' | sed -n 's/^Submitted job //p')
B=$(as $BOB submit -t nlp -J bob-job -- sh -c 'id -u; exec sleep 600' | sed -n 's/^Submitted job //p')
[ -n "$A" ] && [ -n "$B" ] || {
    fail "ann or bob could not submit to their own tenant"
    tail -n 20 "$tmp/daemon.log"
    exit 1
}
wait_state "$A" running
wait_state "$B" running
jobpids="$(jfield "$A" pid) $(jfield "$B" pid)"
wait_output "$(jfield "$A" stdout)"
wait_output "$(jfield "$B" stdout)"
[ "$(tail -n 1 "$(jfield "$A" stdout)")" = "$(id -u $ANN)" ] ||
    fail "ann's job did not run as ann"
[ "$(tail -n 1 "$(jfield "$B" stdout)")" = "$(id -u $BOB)" ] ||
    fail "bob's job did not run as bob"
[ "$(jfield "$A" user)" = $ANN ] || fail "job $A is not ann's"

# ---- anonymous on TCP: 401 everywhere but /v1/health ---------------------
for route in "GET /v1/jobs" "POST /v1/jobs" "GET /v1/jobs/$A" \
    "GET /v1/jobs/$A/why" "GET /v1/jobs/$A/events" "POST /v1/jobs/$A/cancel" \
    "DELETE /v1/jobs/$A" "GET /v1/tenants" "POST /v1/tenants" \
    "PATCH /v1/tenants/vision" "GET /v1/ledger" "GET /v1/nodes" \
    "GET /v1/policy" "PUT /v1/policy/options" "GET /metrics" \
    "GET /v1/no/such/route"; do
    set -- $route
    expect 401 anon "$1" "$2" '{"command": ["true"]}'
    has '"error":"AUTH"' "anonymous $route"
    # a token that is not in the file is as good as none
    got=$(curl -s -o /dev/null -w '%{http_code}' -X "$1" \
        -H "Authorization: Bearer $(cat "$tmp/tok-ann")x" "$url$2")
    [ "$got" = 401 ] || fail "a wrong token on $route: HTTP $got"
    # nor is the hash the file holds
    got=$(curl -s -o /dev/null -w '%{http_code}' -X "$1" \
        -H "Authorization: Bearer $(sed -n '1s/^sha256:\([0-9a-f]*\) .*/\1/p' "$tmp/tokens")" "$url$2")
    [ "$got" = 401 ] || fail "the stored hash as a token on $route: HTTP $got"
done
expect 200 anon GET /v1/health
GPUPOOL_URL=$url "$exe" queue >/dev/null 2>&1 &&
    fail "the CLI without a token was served"

# ---- list: each sees its tenants' jobs only --------------------------------
for who in ann tok-ann; do
    l=$(ids $who /v1/jobs)
    [ "$l" = "$A" ] || fail "$who lists '$l', expected '$A'"
    l=$(ids $who "/v1/jobs?tenant=nlp&all=1")
    [ -z "$l" ] || fail "$who lists nlp's jobs: '$l'"
done
for who in bob tok-bob; do
    l=$(ids $who /v1/jobs)
    [ "$l" = "$B" ] || fail "$who lists '$l', expected '$B'"
done
for who in root tok-admin; do
    l=$(ids $who /v1/jobs)
    [ "$l" = "$A $B" ] || fail "$who lists '$l', expected '$A $B'"
done
as $ANN queue | grep -q bob-job && fail "ann's queue shows bob's job"
as $ANN queue | grep -q ann-job || fail "ann's queue lacks her job"

# ---- show, why, events: another tenant's job does not exist ---------------
for what in "" /why /events; do
    for who in ann tok-ann root tok-admin; do expect 200 $who GET "/v1/jobs/$A$what"; done
    for who in bob tok-bob; do
        expect 404 $who GET "/v1/jobs/$A$what"
        has '"error":"NOENT"' "$who GET /v1/jobs/$A$what"
        hasnt ann-job "$who GET /v1/jobs/$A$what"
    done
    for who in bob tok-bob root; do expect 200 $who GET "/v1/jobs/$B$what"; done
    for who in ann tok-ann; do expect 404 $who GET "/v1/jobs/$B$what"; done
done
# the same answer as a job that does not exist
call bob GET /v1/jobs/999999 >/dev/null
nothere=$(sed "s/999999/$A/" "$tmp/out")
call bob GET "/v1/jobs/$A" >/dev/null
[ "$(cat "$tmp/out")" = "$nothere" ] || fail "another tenant's job is told apart from none"
as $BOB show "$A" >/dev/null 2>&1 && fail "bob's CLI shows ann's job"

# ---- cancel: not another tenant's job -------------------------------------
for who in bob tok-bob; do
    expect 404 $who POST "/v1/jobs/$A/cancel"
    expect 404 $who DELETE "/v1/jobs/$A"
done
for who in ann tok-ann; do expect 404 $who POST "/v1/jobs/$B/cancel"; done
as $BOB cancel "$A" >/dev/null 2>&1 && fail "bob cancelled ann's job with the CLI"
[ "$(jfield "$A" state)" = running ] || fail "job $A was touched by the wrong tenant"
[ "$(jfield "$B" state)" = running ] || fail "job $B was touched by the wrong tenant"

# ---- submit: only to one's tenants ----------------------------------------
job='{"command": ["true"], "tenant": "%s"}'
for pair in "ann nlp" "ann ops" "ann default" "ann no-such" "bob vision" \
    "tok-ann nlp" "tok-bob vision" "tok-bob shared"; do
    set -- $pair
    # shellcheck disable=SC2059
    expect 403 "$1" POST /v1/jobs "$(printf "$job" "$2")"
    has '"field":"tenant"' "$1 submitting to $2"
done
# a batch with one job out of bounds queues nothing
before=$(ids root "/v1/jobs?all=1")
expect 403 ann POST /v1/jobs '{"jobs": [{"command": ["true"], "tenant": "vision"}, {"command": ["true"], "tenant": "nlp"}]}'
has 'jobs\[1\].tenant' "ann's batch"
[ "$(ids root "/v1/jobs?all=1")" = "$before" ] || fail "a refused batch left jobs behind"
# shellcheck disable=SC2059
for pair in "ann shared" "tok-ann vision" "tok-bob nlp" "root ops" \
    "tok-admin nlp" "bob shared"; do
    set -- $pair
    # shellcheck disable=SC2059
    expect 201 "$1" POST /v1/jobs "$(printf "$job" "$2")"
done
as $ANN submit -t nlp -- true >/dev/null 2>&1 && fail "ann's CLI submitted to nlp"

# ---- malformed and oversized bodies -----------------------------------------
expect 400 ann POST /v1/jobs '{"command": ["true"], "tenant": "vision", "gpuz": 1}'
has '"field":"gpuz"' "an unknown field"
expect 400 ann POST /v1/jobs 'not json'
has '"field":"body"' "a body that is not JSON"
expect 400 tok-ann POST /v1/jobs '{"command": ["true"], "gpus": 65}'
has '"error":"RANGE"' "gpus out of range"
python3 -c 'import sys; sys.stdout.write("{\"command\": [\"" + "a" * (1 << 20) + "\"]}")' >"$tmp/big.json"
chmod 644 "$tmp/big.json"
expect 413 ann POST /v1/jobs "@$tmp/big.json"
expect 413 tok-ann POST /v1/jobs "@$tmp/big.json"

# ---- tenants and the ledger: each sees its own ----------------------------
names() { # WHO PATH: the tenant names shown
    call "$1" GET "$2" >/dev/null
    python3 -c 'import json,sys; print(" ".join(sorted(t["name"] for t in json.load(open(sys.argv[1]))["tenants"])))' \
        "$tmp/out" 2>/dev/null
}
for path in /v1/tenants /v1/ledger; do
    [ "$(names ann $path)" = "shared vision" ] || fail "ann sees tenants '$(names ann $path)' at $path"
    [ "$(names bob $path)" = "nlp shared" ] || fail "bob sees tenants '$(names bob $path)' at $path"
    [ "$(names tok-bob $path)" = "nlp" ] || fail "bob's nlp token sees '$(names tok-bob $path)' at $path"
    [ "$(names root $path)" = "nlp ops shared vision" ] || fail "root sees '$(names root $path)' at $path"
done
call root GET /v1/ledger >/dev/null
for k in guarantee_gpus entitled_gpus held_gpus borrowed_gpus owed_gpus pending_gpus; do
    has "\"$k\"" "the ledger"
done

# ---- only admins change tenants --------------------------------------------
for who in ann bob tok-ann tok-bob; do
    expect 403 $who POST /v1/tenants '{"name": "speech", "guarantee": 1}'
    expect 403 $who PATCH /v1/tenants/vision '{"guarantee": 3}'
done
expect 201 tok-admin POST /v1/tenants "{\"name\": \"speech\", \"guarantee\": 1, \"users\": [\"$BOB\"]}"
expect 409 root POST /v1/tenants '{"name": "speech"}'
expect 400 root POST /v1/tenants '{"name": "x", "guarantee": 2, "cap": 1}'
has '"field":"cap"' "cap below the guarantee"
expect 400 root POST /v1/tenants '{"name": "x", "parent": "nope"}'
has '"field":"parent"' "a parent not defined"
expect 400 root POST /v1/tenants '{"name": "x", "colour": "red"}'
has '"field":"colour"' "an unknown field"
expect 201 root POST /v1/tenants '{"name": "asr", "parent": "speech"}'
expect 200 root PATCH /v1/tenants/vision '{"guarantee": 3, "weight": 2}'
expect 404 root PATCH /v1/tenants/no-such '{"guarantee": 3}'
expect 400 root PATCH /v1/tenants/vision '{"name": "v2"}'
expect 400 root PATCH /v1/tenants/vision '{"guarantee": 1, "lend_limit": 2}'
expect 405 root DELETE /v1/tenants/vision
call root GET /v1/ledger >/dev/null
python3 - "$tmp/out" <<'PY' || fail "the ledger does not show vision's new guarantee"
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["tenants"]}
assert t["vision"]["guarantee_gpus"] == 3 and t["vision"]["weight"] == 2, t
PY
# speech's member is bob; the change is live
[ "$(names bob /v1/tenants)" = "nlp shared speech" ] || fail "bob does not see speech: '$(names bob /v1/tenants)'"
expect 201 bob POST /v1/jobs '{"command": ["true"], "tenant": "speech"}'

# ---- only admins change the policy's options -------------------------------
for who in ann bob tok-ann tok-bob; do
    expect 403 $who PUT /v1/policy/options '{}'
done
expect 200 root PUT /v1/policy/options '{"lifo": "1"}'
has '"options_from":"api"' "a valid option"
expect 200 tok-admin PUT /v1/policy/options '{}'
has '"options":{}' "an empty set"
expect 400 root PUT /v1/policy/options '{"no_such_option": "1"}'
has '"field":"no_such_option"' "an unknown option"
expect 400 root PUT /v1/policy/options '[1]'
for who in ann bob tok-ann; do expect 200 $who GET /v1/policy; done

# ---- nodes and metrics: another tenant's jobs and series are hidden --------
expect 200 ann GET /v1/nodes
has "\"job\":$A[,}]" "ann's nodes"
hasnt "\"job\":$B[,}]" "ann's nodes"
expect 200 root GET /v1/nodes
has "\"job\":$B[,}]" "root's nodes"
for who in ann tok-ann; do
    expect 200 $who GET /metrics
    has 'gpupool_tenant_held_gpus{tenant="vision"}' "$who's metrics"
    hasnt 'tenant="nlp"' "$who's metrics"
done
expect 200 tok-admin GET /metrics
has 'gpupool_tenant_held_gpus{tenant="nlp"}' "the admin's metrics"

# ---- membership changes take effect at once --------------------------------
expect 200 root PATCH /v1/tenants/nlp "{\"users\": [\"$BOB\", \"$ANN\"]}"
expect 200 ann GET "/v1/jobs/$B"
expect 403 ann POST "/v1/jobs/$B/cancel" # a member, but not the submitter
expect 200 root PATCH /v1/tenants/nlp "{\"users\": [\"$BOB\"]}"
expect 404 ann GET "/v1/jobs/$B"

# ---- what an admin changed survives a restart; the jobs are adopted ---------
kill -TERM "$pid"
wait "$pid"
pid=
start
call root GET /v1/tenants >/dev/null
python3 - "$tmp/out" "$BOB" <<'PY' || fail "the tenants changed through the API did not survive a restart"
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["tenants"]}
assert t["vision"]["guarantee_gpus"] == 3 and t["vision"]["weight"] == 2, t["vision"]
assert t["speech"]["guarantee_gpus"] == 1 and t["speech"]["users"] == [sys.argv[2]], t["speech"]
assert t["asr"]["parent"] == "speech", t["asr"]
PY
grep -q "tenant vision: the definition an admin gave" "$tmp/daemon.log" ||
    fail "the restart does not log that the API's vision replaces the file's"
expect 200 ann GET "/v1/jobs/$A"
expect 404 bob GET "/v1/jobs/$A"

# ---- the right ones cancel their own ----------------------------------------
expect 200 ann POST "/v1/jobs/$A/cancel"
expect 200 tok-bob DELETE "/v1/jobs/$B"
wait_state "$A" cancelled
wait_state "$B" cancelled
jobpids=
kill -TERM "$pid"
wait "$pid" || fail "the daemon did not stop cleanly"
pid=

# ---- refusals at start, naming the place ------------------------------------
bad() { # WORDS ARGS...: the daemon must refuse to start, saying WORDS
    words=$1
    shift
    mkdir -p "$tmp/bad"
    if "$exe" serve --set server.state_dir="$tmp/bad" --set backend.gpus=1 \
        "$@" >"$tmp/bad.log" 2>&1; then
        fail "started with $*"
    fi
    grep -q -- "$words" "$tmp/bad.log" || fail "$*: no '$words' in: $(cat "$tmp/bad.log")"
}
printf '%s\nsecret-in-clear-0123456789 root admin\n' "$(head -n 1 "$tmp/tokens")" >"$tmp/plain-tokens"
chmod 600 "$tmp/plain-tokens"
bad "plain-tokens:2" --set server.tokens_file="$tmp/plain-tokens"
bad "a plain token is refused" --set server.tokens_file="$tmp/plain-tokens"
cp "$tmp/tokens" "$tmp/open-tokens"
chmod 666 "$tmp/open-tokens"
bad "others may write it" --set server.tokens_file="$tmp/open-tokens"
bad "not loopback" --set server.listen="0.0.0.0:$(free_port)" --set server.tls=off
printf '{"tenants": [{"name": "v", "users": ["ann", "a b"]}]}\n' >"$tmp/bad-tenants.json"
bad "users\[1\]" --set scheduler.tenants="$tmp/bad-tenants.json"

# ---- TLS: HTTPS with the certificate, on any address ----------------------
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
    -keyout "$tmp/key.pem" -out "$tmp/cert.pem" >/dev/null 2>&1 ||
    fail "openssl could not make a certificate"
tport=$(free_port)
mkdir -p "$tmp/tls"
"$exe" serve --set server.state_dir="$tmp/tls" --set backend.gpus=1 \
    --set server.listen="0.0.0.0:$tport" --set server.tls_cert="$tmp/cert.pem" \
    --set server.tls_key="$tmp/key.pem" --set server.tokens_file="$tmp/tokens" \
    --set scheduler.tenants="$tmp/tenants.json" >>"$tmp/tls.log" 2>&1 &
pid=$!
turl=https://127.0.0.1:$tport
i=0
while ! curl -s --cacert "$tmp/cert.pem" "$turl/v1/health" >/dev/null; do
    i=$((i + 1))
    if [ $i -gt 600 ] || ! kill -0 "$pid" 2>/dev/null; then
        fail "the TLS daemon did not come up: $(cat "$tmp/tls.log")"
        break
    fi
    sleep 0.1
done
tls() { # TOKEN PATH: the status over HTTPS
    curl -s -o "$tmp/out" -w '%{http_code}' --cacert "$tmp/cert.pem" \
        ${1:+-H "Authorization: Bearer $1"} "$turl$2"
}
[ "$(tls "$(cat "$tmp/tok-admin")" /v1/jobs)" = 200 ] || fail "HTTPS with the admin's token"
[ "$(tls "$(cat "$tmp/tok-ann")" /v1/tenants)" = 200 ] || fail "HTTPS with ann's token"
[ "$(python3 -c 'import json,sys; print(" ".join(sorted(t["name"] for t in json.load(open(sys.argv[1]))["tenants"])))' "$tmp/out")" = "shared vision" ] ||
    fail "over HTTPS ann sees other tenants"
[ "$(tls "" /v1/jobs)" = 401 ] || fail "HTTPS without a token was not 401"
[ "$(tls "$(cat "$tmp/tok-ann")x" /v1/jobs)" = 401 ] || fail "HTTPS with a wrong token was not 401"
# the certificate is what makes it trusted, and plain HTTP gets no answer
curl -s -o /dev/null "$turl/v1/health" && fail "curl trusted a self-signed certificate without --cacert"
[ "$(curl -s -m 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$tport/v1/health")" = 200 ] &&
    fail "the TLS listener answered plain HTTP"
GPUPOOL_URL=$turl GPUPOOL_TOKEN=$(cat "$tmp/tok-ann") GPUPOOL_CACERT=$tmp/cert.pem \
    "$exe" tenants >"$tmp/out" 2>&1 || fail "the CLI over HTTPS: $(cat "$tmp/out")"
kill -TERM "$pid"
wait "$pid"
pid=

if [ $fails -ne 0 ]; then
    echo "--- daemon log"
    tail -n 40 "$tmp/daemon.log"
    exit 1
fi
echo "ok: security"
