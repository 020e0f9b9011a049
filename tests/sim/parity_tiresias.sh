#!/bin/sh
# parity_tiresias.sh GPUPOOL DIR [MIN_CASES] - for every DIR/peer-TRACE-CLUSTER-SCHEDULE.csv
# (the job.csv the published Tiresias simulator wrote for DIR/trace-TRACE.csv
# on DIR/cluster-CLUSTER.csv under --schedule=SCHEDULE; DIR/README.md says
# how it was produced), replay the trace with `gpupool sim --parity
# tiresias --policy tiresias` and the schedule's starvation knob, and check
# every job's first start, end, preemptions and starts against the peer's.
# Jobs the peer completed with work left (its stale end list: as many
# preemptions as starts, or JCT minus pending time below the duration)
# are left out of the check and counted; when
# DIR/aside exists, their number must be what it says for the case. At
# least MIN_CASES cases (default 1) must be there. Every case is checked;
# the last line says how many failed.
set -eu
exe=$1
dir=$2
min=${3:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
for peer in "$dir"/peer-*.csv; do
    name=$(basename "$peer" .csv)
    name=${name#peer-}
    trace=${name%%-*}
    rest=${name#*-}
    cluster=${rest%%-*}
    schedule=${rest#*-}
    case $schedule in
    dlas-gpu) knob=0 ;;
    dlas-gpu-05) knob=0.5 ;;
    dlas-gpu-*) knob=${schedule#dlas-gpu-} ;;
    *) echo "FAIL: $peer: unknown schedule $schedule"; exit 1 ;;
    esac
    "$exe" sim --trace "$dir/trace-$trace.csv" \
        --cluster "$dir/cluster-$cluster.csv" --parity tiresias \
        --policy tiresias --opt tiresias.promote_knob="$knob" \
        --jobs-csv "$tmp/jobs.csv" --no-wall --no-progress >"$tmp/out.txt"
    grep -q '^parity.*tiresias' "$tmp/out.txt" ||
        { echo "FAIL: $name: the output does not state the parity"; exit 1; }
    want_aside=-1
    [ -f "$dir/aside" ] &&
        want_aside=$(awk -v c="$name" '$1 == c { print $2 }' \
            "$dir/aside") && want_aside=${want_aside:-0}
    python3 - "$peer" "$tmp/jobs.csv" "$name" "$want_aside" <<'PY' || failed=$((failed + 1))
import csv, sys
peer_csv, ours_csv, name, want_aside = sys.argv[1:5]
peer = {r["job_id"]: r for r in csv.DictReader(open(peer_csv))}
ours = {r["id"]: r for r in csv.DictReader(open(ours_csv))}
if set(peer) != set(ours):
    sys.exit(f"FAIL: {name}: jobs differ: {sorted(set(peer) ^ set(ours))[:5]}")
# completed while waiting (as many preemptions as starts), or while it
# ran again with work left (its run time short of its duration)
aside = [k for k, p in peer.items()
         if p["preempt"] == p["resume"]
         or int(p["JCT"]) - int(p["pending_time"]) < int(p["duration"])]
bad = []
for k, p in peer.items():
    if k in aside:
        continue
    o = ours[k]
    a = (int(p["start_time"]), int(p["end_time"]), int(p["preempt"]),
         int(p["resume"]))
    b = (float(o["first_start_s"]), float(o["end_s"]), int(o["preemptions"]),
         int(o["starts"]))
    if a != b:
        bad.append(f"job {k}: peer start,end,preempt,resume {a}, gpupool {b}")
if bad:
    sys.exit(f"FAIL: {name}: {len(bad)} of {len(peer)} jobs differ\n  " +
             "\n  ".join(bad[:5]))
if int(want_aside) >= 0 and len(aside) != int(want_aside):
    sys.exit(f"FAIL: {name}: {len(aside)} jobs completed with work left "
             f"by the peer, expected {want_aside}")
print(f"{name}: {len(peer)} jobs, all equal"
      + (f" ({len(aside)} the peer completed with work left: {aside})"
         if aside else ""))
PY
    n=$((n + 1))
done
[ "$n" -ge "$min" ] || { echo "FAIL: only $n cases in $dir"; exit 1; }
echo "$((n - failed)) of $n cases equal"
[ "$failed" -eq 0 ]
