#!/bin/sh
# cli.sh GPUPOOL TRACE - the gpupool command's contract with its user:
# usage errors exit 2 with one line naming the problem and the help hint,
# runtime errors exit 1, `gpupool help sim` is the sim help, pooling
# policies refuse to run without tenants and warn about tenants that do
# not match the trace, a trace whose every job is rejected fails, and the
# results say what was simulated.
set -u
exe=$1
trace=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect RC NAME -- ARGS...: run, keep stdout/stderr in $tmp/out, $tmp/err
expect() {
    want=$1 name=$2
    shift 3
    "$exe" "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    [ "$got" -eq "$want" ] || fail "$name: exit $got, expected $want"
}
has() { # FILE TEXT NAME
    grep -qF -- "$2" "$1" || fail "$3: no '$2' in $(basename "$1")"
}
one_line() { # NAME
    [ "$(wc -l <"$tmp/err")" -eq 1 ] ||
        fail "$1: stderr has $(wc -l <"$tmp/err") lines, expected 1"
}

expect 0 "help sim" -- help sim
has "$tmp/out" "usage: gpupool sim --trace FILE" "help sim"
expect 0 "help demo" -- help demo
has "$tmp/out" "usage: gpupool demo" "help demo"
expect 2 "help of an unknown command" -- help nosuch

expect 2 "misspelled flag" -- sim --trace "$trace" --clustr 1x4
one_line "misspelled flag"
has "$tmp/err" "'--clustr'" "misspelled flag"
has "$tmp/err" "did you mean '--cluster'" "misspelled flag"
has "$tmp/err" "see \`gpupool sim --help\`" "misspelled flag"
expect 2 "flag without its value" -- sim --trace
one_line "flag without its value"
has "$tmp/err" "'--trace' needs a value" "flag without its value"
expect 2 "unknown short flag" -- sim -Z --trace "$trace"
one_line "unknown short flag"
has "$tmp/err" "unknown option '-Z'" "unknown short flag"
expect 2 "value to a flag without one" -- sim --trace "$trace" --json=yes
one_line "value to a flag without one"
has "$tmp/err" "option '--json' takes no value" "value to a flag without one"
expect 2 "no trace" -- sim
expect 2 "unknown policy" -- sim --trace "$trace" --cluster 1x4 --policy nope
expect 2 "bad placement" -- sim --trace "$trace" --cluster 1x4 --placement x
expect 2 "bad placer" -- sim --trace "$trace" --cluster 1x4 --placer x
one_line "bad placer"
has "$tmp/err" "--placer: expected bestfit or fgd, got 'x'" "bad placer"
expect 0 "fgd placer" -- sim --trace "$trace" --cluster 2x4 --placer fgd
has "$tmp/out" "placed by FGD over the trace's shapes" "fgd placer"
expect 2 "stray argument" -- sim --trace "$trace" --cluster 1x4 extra
expect 2 "unknown policy option" -- sim --trace "$trace" --cluster 1x4 \
    --policy las --opt las.nosuch=1
one_line "unknown policy option"
expect 2 "option to a policy without options" -- sim --trace "$trace" \
    --cluster 1x4 --opt x=1
expect 1 "missing trace file" -- sim --trace "$tmp/none.csv" --cluster 1x4

# pooling policies and tenants
for p in pool pool-noreclaim static-quota; do
    expect 2 "$p without tenants" -- sim --trace "$trace" --cluster 1x4 \
        --policy "fifo,$p"
    has "$tmp/err" "needs --tenants FILE" "$p without tenants"
done
printf 'id,submit_s,gpus,duration_s,tenant\na,0,2,100,x\nb,10,2,50,y\nc,20,1,30,z\nd,30,1,5,z\n' \
    >"$tmp/t.csv"
printf '{"tenants":[{"name":"x","guarantee":3},{"name":"y","guarantee":3},{"name":"w","guarantee":1}]}' \
    >"$tmp/tenants.json"
expect 0 "pool with mismatched tenants" -- sim --trace "$tmp/t.csv" \
    --cluster 1x4 --policy static-quota,pool --tenants "$tmp/tenants.json" \
    --no-wall --no-progress
has "$tmp/err" "belongs to 1 of the 3 tenants in $tmp/tenants.json: w" \
    "unused tenant"
has "$tmp/err" "2 of 4 jobs belong to a tenant not in" "jobs outside"
has "$tmp/err" "guarantees sum to 7 GPUs, more than the cluster's 4" \
    "guarantees beyond the cluster"
printf '{"tenants":[{"name":"x","guarantee":2},{"name":"y","guarantee":1},{"name":"z","guarantee":1}]}' \
    >"$tmp/fit.json"
expect 0 "pool with matching tenants" -- sim --trace "$tmp/t.csv" \
    --cluster 1x4 --policy pool --tenants "$tmp/fit.json" --no-wall
[ -s "$tmp/err" ] && fail "matching tenants: warned: $(cat "$tmp/err")"

# fair-share CSV: a tenant's intervals of holding its share or being owed;
# the owed waits of the jobs CSV and the fair-share compliance of the JSON
# are recomputed from it
printf 'id,submit_s,gpus,duration_s,tenant\na,0,4,600,x\nb,0,1,200,x\nc,100,2,300,y\nd,150,1,90,z\n' \
    >"$tmp/owe.csv"
expect 0 "fair-share CSV" -- sim --trace "$tmp/owe.csv" --cluster 1x4 \
    --policy fifo --tenants "$tmp/fit.json" --jobs-csv "$tmp/owej.csv" \
    --fairshare-csv "$tmp/owes.csv" --json --no-wall
head -n 1 "$tmp/owes.csv" | grep -qx 'tenant,start_s,end_s,state' ||
    fail "fair-share CSV: no header"
if ! python3 - "$tmp/owej.csv" "$tmp/owes.csv" "$tmp/out" <<'PY'
import csv, json, math, sys
jobs = list(csv.DictReader(open(sys.argv[1])))
rows = list(csv.DictReader(open(sys.argv[2])))
out = json.load(open(sys.argv[3]))
t0 = min(float(r["submit_s"]) for r in jobs)
held = n = 0
owed = {}
for r in rows:
    a, b = float(r["start_s"]), float(r["end_s"])
    if r["state"] == "owed":
        owed.setdefault(r["tenant"], []).append((a, b))
    k = max(0, math.floor((b - t0) / 60) - math.floor((a - t0) / 60))
    n += k
    held += k if r["state"] == "held" else 0
assert n > 0 and owed, (n, owed)
assert abs(held / n - out["fairshare_compliance"]) < 1e-6, (held / n, out)
some = 0
for r in jobs:
    s, f = float(r["submit_s"]), float(r["first_start_s"])
    w = sum(max(0, min(b, f) - max(a, s)) for a, b in owed.get(r["tenant"], []))
    assert abs(w - float(r["wait_owed_s"])) < 1e-6, (r, w)
    some += w > 0
assert some > 0
PY
then
    fail "fair-share CSV: owed waits or compliance differ from the CSV's"
fi

# rejected jobs
expect 0 "some rejected" -- sim --trace "$trace" --cluster 1x2 --no-wall
has "$tmp/out" "rejected in fifo: 1 of 4 jobs can never run" "some rejected"
grep -qE '^  larger than the cluster +1$' "$tmp/out" ||
    fail "some rejected: no 'larger than the cluster ... 1' in out"
printf 'id,submit_s,gpus,duration_s\na,0,2,100\nb,10,4,50\n' >"$tmp/big.csv"
expect 1 "all rejected" -- sim --trace "$tmp/big.csv" --cluster 1x1 --no-wall
has "$tmp/err" "every job of the trace was rejected by fifo: 2 larger than the cluster (the largest asks for 4 GPUs; the cluster has 1)" \
    "all rejected"

# what was simulated
expect 0 "settings" -- sim --trace "$trace" --cluster 1x4 \
    --policy fifo,las,sjf --seed 9 --no-wall
has "$tmp/out" "trace       $trace (gpupool)" "settings"
has "$tmp/out" "cluster     1x4, 4 GPUs" "settings"
has "$tmp/out" "preemption  fifo, sjf: none (the policy never preempts); las: graceful: grace 120 s" \
    "settings"
has "$tmp/out" "seed        9" "settings"
version=$("$exe" version | cut -d' ' -f2)
has "$tmp/out" "gpupool     $version" "settings"
expect 0 "settings in JSON" -- sim --trace "$trace" --cluster 1x4 \
    --policy las --grace 60 --json --no-wall
has "$tmp/out" "\"version\": \"$version\"" "settings in JSON"
has "$tmp/out" "\"preemption\": \"graceful: grace 60 s, checkpoint 30 s" \
    "settings in JSON"

# runs CSV, one file per policy
expect 0 "runs CSV" -- sim --trace "$trace" --cluster 1x4 --policy fifo,las \
    --runs-csv "$tmp/runs.csv" -q
for p in fifo las; do
    head -n 1 "$tmp/runs.csv.$p.csv" 2>/dev/null |
        grep -qx 'job,tenant,run,start_s,end_s,gpus,gpu_type,placement,end_reason' ||
        fail "runs CSV: no header in runs.csv.$p.csv"
done

# runs CSV: a time limit, no placement in the count model, devices in pack
printf 'id,submit_s,gpus,duration_s,time_limit_s\na,0,2,100,40\nb,10,4,50,0\n' \
    >"$tmp/tl.csv"
expect 0 "runs CSV, count" -- sim --trace "$tmp/tl.csv" --cluster 2x4 \
    --placement count --runs-csv "$tmp/count.csv" -q
has "$tmp/count.csv" "a,default,1,0.000000,40.000000,2,gpu,,time_limit" \
    "runs CSV, count"
expect 0 "runs CSV, pack" -- sim --trace "$tmp/tl.csv" --cluster 2x4 \
    --runs-csv "$tmp/pack.csv" -q
has "$tmp/pack.csv" "b,default,1,10.000000,60.000000,4,gpu,node1:0-3,completed" \
    "runs CSV, pack"

# summary CSV: a row per policy, each figure the JSON's, the command kept
expect 0 "summary CSV" -- sim --trace "$trace" --cluster 1x4 \
    --policy fifo,las --summary-csv "$tmp/sum.csv" --no-wall -q
expect 0 "summary CSV, JSON" -- sim --trace "$trace" --cluster 1x4 \
    --policy fifo,las --json --no-wall
if ! python3 - "$tmp/sum.csv" "$tmp/out" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
runs = json.load(open(sys.argv[2]))
assert [r["policy"] for r in rows] == ["fifo", "las"], rows
for r, j in zip(rows, runs):
    assert r["command"].startswith("gpupool sim --trace"), r["command"]
    assert "--summary-csv" in r["command"], r["command"]
    for k, v in j.items():
        if k == "command":  # each names its own output
            continue
        if isinstance(v, (dict, list)):
            assert k not in r, k
        elif v is None:
            assert r[k] == "", (k, r[k])
        elif isinstance(v, bool):
            assert r[k] == str(v).lower(), k
        elif isinstance(v, (int, float)):
            assert abs(float(r[k]) - v) <= 1e-9 * max(1, abs(v)), (k, r[k], v)
        else:
            assert r[k] == v, (k, r[k], v)
    assert set(r) - set(j) == {"shares"}, set(r) - set(j)
PY
then
    fail "summary CSV: rows do not match the JSON"
fi
expect 1 "summary CSV, unwritable" -- sim --trace "$trace" --cluster 1x4 \
    --summary-csv "$tmp/no/such/dir/sum.csv" -q
has "$tmp/err" "--summary-csv: $tmp/no/such/dir/sum.csv" \
    "summary CSV, unwritable"

[ "$fails" -eq 0 ] || exit 1
echo "ok: cli"
