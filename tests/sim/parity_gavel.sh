#!/bin/sh
# parity_gavel.sh GPUPOOL DIR [gpupool] - for every DIR/peer-TRACE-OBJECTIVE.csv
# (each job's completion time as Gavel's own simulator gave it for
# DIR/TRACE.trace on 8 V100, 8 P100 and 8 K80 GPUs; DIR/README.md says how
# it was produced), replay the trace with `gpupool sim --parity gavel
# --policy gavel --opt gavel.objective=OBJECTIVE` and check the average
# JCT within 2% of the peer's and at least 80% of the jobs within 10% of
# theirs (or the part in DIR/peer-TRACE-OBJECTIVE.near, for an objective
# whose LP has many optima: the README says why), on the cluster in
# DIR/peer-TRACE-OBJECTIVE.cluster where there is one, with the policy
# options in DIR/peer-TRACE-OBJECTIVE.opts (one KEY=VALUE a line) where
# there are some. OBJECTIVE~VARIANT names a second case of one objective
# (another run of the artifact, other options). With `gpupool`, run
# gpupool's own world instead (--speed gavel --preemption free, the
# restart cost of 30 s, solves not spaced) on the cases without space
# sharing and require some case to miss (FIFO, which moves no job, meets
# it there too): the check can fail.
set -eu
exe=$1
dir=$2
own=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# what contradicts the world is refused, not silently replaced
refused() { # WHAT ARGS...: exit 2 and a message naming WHAT
    what=$1
    shift
    if "$exe" sim --trace "$dir/vc200.trace" --cluster 1x8:V100 "$@" \
        >/dev/null 2>"$tmp/err"; then
        echo "FAIL: $* was accepted"
        exit 1
    fi
    grep -q -- "$what" "$tmp/err" ||
        { echo "FAIL: $*: $(cat "$tmp/err")"; exit 1; }
}
if [ -z "$own" ]; then
    refused "conflicts with --speed" --parity gavel --speed types
    refused "conflicts with --restart-cost" --parity gavel --restart-cost 30
    refused "conflicts with --preemption" --parity gavel --preemption graceful
    refused "expected tiresias, helios or gavel" --parity gavl
fi
n=0
failed=0
for peer in "$dir"/peer-*.csv; do
    name=$(basename "$peer" .csv)
    name=${name#peer-}
    trace=${name%%-*}
    objective=${name#*-}
    objective=${objective%%~*}
    # the own world only has to miss somewhere: the cases with space
    # sharing, the slowest to replay, are left to the parity run
    if [ -n "$own" ]; then
        case $objective in *_packed | gandiva) continue ;; esac
    fi
    if [ -n "$own" ]; then
        world="--speed gavel --preemption free"
    else
        world="--parity gavel"
    fi
    cluster=1x8:V100+1x8:P100+1x8:K80
    [ -f "${peer%.csv}.cluster" ] && cluster=$(cat "${peer%.csv}.cluster")
    opts=
    if [ -f "${peer%.csv}.opts" ]; then
        while read -r kv; do
            [ -n "$kv" ] && opts="$opts --opt gavel.$kv"
        done <"${peer%.csv}.opts"
    fi
    # shellcheck disable=SC2086
    "$exe" sim --trace "$dir/$trace.trace" \
        --cluster "$cluster" $world --policy gavel \
        --opt gavel.objective="$objective" $opts \
        --jobs-csv "$tmp/jobs.csv" --no-wall --no-progress >"$tmp/out.txt"
    if [ -z "$own" ]; then
        grep -q '^parity.*gavel' "$tmp/out.txt" ||
            { echo "FAIL: $name: the output does not state the parity"; exit 1; }
    fi
    near_part=0.8
    [ -f "${peer%.csv}.near" ] && near_part=$(cat "${peer%.csv}.near")
    python3 - "$peer" "$tmp/jobs.csv" "$name" "$near_part" <<'PY' || failed=$((failed + 1))
import csv, sys
peer_csv, ours_csv, name = sys.argv[1:4]
near_part = float(sys.argv[4])
peer = {r["id"]: float(r["jct_s"]) for r in csv.DictReader(open(peer_csv))}
ours = {r["id"]: float(r["jct_s"]) for r in csv.DictReader(open(ours_csv))}
if set(peer) != set(ours):
    sys.exit(f"FAIL: {name}: jobs differ: {sorted(set(peer) ^ set(ours))[:5]}")
a = sum(peer.values()) / len(peer)
b = sum(ours.values()) / len(ours)
near = sum(1 for k in peer if abs(ours[k] - peer[k]) <= 0.10 * peer[k])
line = (f"{name}: avg JCT peer {a / 3600:.2f} h, gpupool {b / 3600:.2f} h "
        f"({100 * (b - a) / a:+.2f}%), {near} of {len(peer)} jobs within 10%")
if abs(b - a) > 0.02 * a or near < near_part * len(peer):
    sys.exit("FAIL: " + line)
print(line)
PY
    n=$((n + 1))
done
[ "$n" -ge 1 ] || { echo "FAIL: no case in $dir"; exit 1; }
echo "$((n - failed)) of $n cases within the bounds"
if [ -n "$own" ]; then
    [ "$failed" -ge 1 ] ||
        { echo "FAIL: gpupool's own world met the peer on every case"; exit 1; }
    echo "ok: $failed of $n cases miss under gpupool's own world"
    exit 0
fi
[ "$failed" -eq 0 ]
