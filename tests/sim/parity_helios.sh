#!/bin/sh
# parity_helios.sh GPUPOOL DIR [MODE] - for every DIR/peer-TRACE-CLUSTER.csv
# (each job's start and end as the Helios artifact's QSSF simulator gave
# them for DIR/trace-TRACE.csv on DIR/cluster-CLUSTER.csv; DIR/README.md
# says how it was produced), replay the trace with `gpupool sim --parity
# helios --policy qssf` (and qssf.mode=MODE when given) and check every
# job's start and end against the peer's. Every case is checked; the last
# line says how many failed. With MODE, every case must differ instead
# (the check can fail).
set -eu
exe=$1
dir=$2
mode=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
for peer in "$dir"/peer-*.csv; do
    name=$(basename "$peer" .csv)
    name=${name#peer-}
    trace=${name%%-*}
    cluster=${name#*-}
    "$exe" sim --trace "$dir/trace-$trace.csv" \
        --cluster "$dir/cluster-$cluster.csv" --parity helios --policy qssf \
        ${mode:+--opt qssf.mode="$mode"} \
        --jobs-csv "$tmp/jobs.csv" --no-wall --no-progress >"$tmp/out.txt"
    grep -q '^parity.*helios' "$tmp/out.txt" ||
        { echo "FAIL: $name: the output does not state the parity"; exit 1; }
    python3 - "$peer" "$tmp/jobs.csv" "$name" <<'PY' || failed=$((failed + 1))
import csv, sys
peer_csv, ours_csv, name = sys.argv[1:4]
peer = {r["id"]: r for r in csv.DictReader(open(peer_csv))}
ours = {r["id"]: r for r in csv.DictReader(open(ours_csv))}
if set(peer) != set(ours):
    sys.exit(f"FAIL: {name}: jobs differ: {sorted(set(peer) ^ set(ours))[:5]}")
bad = []
for k, p in peer.items():
    a = (int(p["start_s"]), int(p["end_s"]))
    b = (float(ours[k]["first_start_s"]), float(ours[k]["end_s"]))
    if a != b:
        bad.append(f"job {k}: peer start,end {a}, gpupool {b}")
if bad:
    sys.exit(f"FAIL: {name}: {len(bad)} of {len(peer)} jobs differ\n  " +
             "\n  ".join(bad[:5]))
print(f"{name}: {len(peer)} jobs, all equal")
PY
    n=$((n + 1))
done
[ "$n" -ge 1 ] || { echo "FAIL: no case in $dir"; exit 1; }
echo "$((n - failed)) of $n cases equal"
if [ -n "$mode" ]; then
    # another mode must differ on every case: the check can fail (a run
    # that errors stops the script above, so it cannot pass this way)
    [ "$failed" -eq "$n" ] ||
        { echo "FAIL: qssf.mode=$mode matched the peer on some case"; exit 1; }
    echo "ok: every case differs under qssf.mode=$mode"
    exit 0
fi
[ "$failed" -eq 0 ]
