#!/bin/sh
# every_policy.sh GPUPOOL TRACES_DIR - every policy `gpupool policies`
# lists runs on a trace of every format gpupool reads (the fixtures in
# tests/data/traces), on one small cluster, with a tenants file and every
# job checkpointable, and finishes every job it accepted (none left unfinished). A policy added
# to the registry is picked up here without a change to this test.
set -u
exe=$1
dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
runs=0

# One tenant with a guarantee; the traces' other tenants get weight 1 and
# no guarantee (docs/tenants.md), so the pooling policies lend and reclaim.
cat >"$tmp/tenants.json" <<'JSON'
{"tenants": [{"name": "vc1", "weight": 2, "guarantee": 4}]}
JSON

policies=$("$exe" policies | awk '{print $1}')
[ -n "$policies" ] || { echo "FAIL: gpupool policies listed nothing"; exit 1; }

# format fixture: one per format gpupool reads
fixtures="philly-csv:philly/philly.csv itp:itp/cluster01.csv
gavel:gavel/vcs.tar.gz helios:helios/cluster_log.csv
gws-excerpt:gws/helios_data_training.csv openb:openb/pods.csv
pai:pai/pai_job_table.csv tiresias:tiresias/jobs.csv gpupool:gpupool/good.csv
pollux:pollux/workload.csv"

for pol in $policies; do
    # pollux searches every minute of a run (100 x 100 states by default):
    # a small search keeps it to seconds here, under ASan too, and still
    # exercises every step of the policy
    extra=
    [ "$pol" = pollux ] &&
        extra="--opt pollux.population=6 --opt pollux.generations=3"
    for fx in $fixtures; do
        fmt=${fx%%:*}
        trace=$dir/${fx#*:}
        runs=$((runs + 1))
        if ! "$exe" sim --trace "$trace" --format "$fmt" --cluster 2x8 \
            --tenants "$tmp/tenants.json" --policy "$pol" $extra \
            --checkpointable all --json --no-progress --no-wall \
            >"$tmp/out.json" 2>"$tmp/err"; then
            echo "FAIL: $pol on $fmt ($trace) exited non-zero:"
            sed 's/^/    /' "$tmp/err"
            fails=$((fails + 1))
            continue
        fi
        if ! python3 - "$tmp/out.json" "$pol" "$fmt" <<'PY'; then
import json, sys
runs = json.load(open(sys.argv[1]))
r = runs[0] if isinstance(runs, list) else runs
pol, fmt = sys.argv[2], sys.argv[3]
bad = []
if r["policy"] != pol:
    bad.append(f"policy {r['policy']!r}")
if r["jobs"] < 1:
    bad.append("no jobs")
if r["completed"] + r["rejected"] != r["jobs"] or r["unfinished"]:
    bad.append(f"{r['completed']} completed, {r['rejected']} rejected, {r['unfinished']} unfinished of {r['jobs']}")
if r["trace_format"] != fmt:
    bad.append(f"trace_format {r['trace_format']!r}")
if bad:
    print(f"FAIL: {pol} on {fmt}: " + ", ".join(bad))
    sys.exit(1)
PY
            fails=$((fails + 1))
        fi
    done
done
# gavel's objectives that share GPUs, on 24 jobs of Gavel's trace (the
# parity test's) with its pair figures (--speed gavel), on a cluster small
# enough that jobs pair: every job finishes, and some GPU time is
# co-located
head -24 "$dir/../../sim/parity-gavel/vc200.trace" >"$tmp/vc24.trace"
for obj in max_min_fairness_packed gandiva fifo_packed \
    finish_time_fairness_packed min_total_duration_packed \
    max_min_fairness_water_filling_packed; do
    runs=$((runs + 1))
    if ! "$exe" sim --trace "$tmp/vc24.trace" --format gavel \
        --cluster 1x4:V100+1x4:K80 --speed gavel --policy gavel \
        --opt gavel.objective=$obj --checkpointable all --json \
        --no-progress --no-wall >"$tmp/out.json" 2>"$tmp/err"; then
        echo "FAIL: gavel $obj exited non-zero:"
        sed 's/^/    /' "$tmp/err"
        fails=$((fails + 1))
        continue
    fi
    python3 - "$tmp/out.json" "$obj" <<'PY' || fails=$((fails + 1))
import json, sys
runs = json.load(open(sys.argv[1]))
r = runs[0] if isinstance(runs, list) else runs
if r["completed"] != r["jobs"] or r["unfinished"] or not r["colocated_gpu_s"] > 0:
    print(f"FAIL: gavel {sys.argv[2]}: {r['completed']} of {r['jobs']} "
          f"completed, co-located {r['colocated_gpu_s']} GPU-s")
    sys.exit(1)
PY
done
echo "$runs runs, $fails failed"
[ "$fails" -eq 0 ]
