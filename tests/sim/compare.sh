#!/bin/sh
# compare.sh GPUPOOL DIR - gpupool compare over two traces: one summary row
# per trace and policy, each equal to what gpupool sim prints for that trace
# alone; a report and jobs CSV per trace; the table's figures those of the
# CSV; usage errors exit 2.
set -u
exe=$1
dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

t1=$dir/four-jobs/trace.csv
t2=$dir/drf/trace.csv
c2=$dir/drf/cluster.json
"$exe" compare --trace "$t1" --trace "$t2" --label four --label drf \
    --cluster 1x4 --cluster "$c2" --policy fifo,las,drf --restart-cost 0 \
    --no-wall --out "$tmp/out" >"$tmp/table" 2>"$tmp/err" ||
    fail "compare: exit $?: $(cat "$tmp/err")"
for f in index.html summary.csv four/index.html drf/index.html \
    four/jobs.csv.las.csv drf/jobs.csv.drf.csv; do
    [ -s "$tmp/out/$f" ] || fail "no $f"
done
grep -q '<td>gpupool compare --trace ' "$tmp/out/index.html" ||
    fail "index.html does not give the compare command"
grep -q 'href="four/index.html"' "$tmp/out/index.html" ||
    fail "index.html does not link four's report"
# each trace alone, as gpupool sim runs it
"$exe" sim --trace "$t1" --cluster 1x4 --policy fifo,las,drf \
    --restart-cost 0 --json --no-wall >"$tmp/four.json" || fail "sim four"
"$exe" sim --trace "$t2" --cluster "$c2" --policy fifo,las,drf \
    --restart-cost 0 --json --no-wall >"$tmp/drf.json" || fail "sim drf"
if ! python3 - "$tmp/out/summary.csv" "$tmp/four.json" "$tmp/drf.json" \
    "$tmp/table" <<'PY'; then
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
alone = json.load(open(sys.argv[2])) + json.load(open(sys.argv[3]))
assert len(rows) == 6, len(rows)
for r, j in zip(rows, alone):
    # the gpupool sim command that made the row, which a user may rerun
    assert r["command"].startswith("gpupool sim "), r["command"]
    assert "--trace " + j["trace"] + " " in r["command"], r["command"]
    for k in ("policy", "trace", "cluster"):
        assert r[k] == j[k], (k, r[k], j[k])
    for k in ("avg_jct_s", "p99_jct_s", "makespan_s", "preemptions"):
        assert float(r[k]) == j[k], (k, r[k], j[k])
# the table's average JCT: hours, 2 decimals, from the same runs
lines = open(sys.argv[4]).read().split("\n")
i = lines.index("average JCT, hours")
assert lines[i + 1].split()[2:] == ["fifo", "las", "drf"], lines[i + 1]
for n, row in enumerate(lines[i + 2:i + 4]):
    cells = row.split()[2:]
    want = ["%.2f" % (j["avg_jct_s"] / 3600) for j in alone[3 * n:3 * n + 3]]
    assert cells == want, (row, want)
PY
    fail "summary and table differ from gpupool sim's own runs"
fi

expect2() { # NAME ARGS...
    name=$1
    shift
    "$exe" compare "$@" >/dev/null 2>"$tmp/err2"
    rc=$?
    [ "$rc" -eq 2 ] || fail "$name: exit $rc, expected 2"
    [ "$(wc -l <"$tmp/err2")" -eq 1 ] || fail "$name: not one line"
}
expect2 "no trace"
expect2 "report refused" --trace "$t1" --report "$tmp/r"
expect2 "clusters unpaired" --trace "$t1" --cluster 1x4 --cluster 2x4
expect2 "labels unpaired" --trace "$t1" --trace "$t2" --label a
expect2 "sweep refused" --trace "$t1" --cluster 1x4 --sweep-load 0.5,1
"$exe" compare --trace "$tmp/none.csv" --cluster 1x4 --out "$tmp/o2" \
    >/dev/null 2>"$tmp/err3"
rc=$?
[ "$rc" -eq 1 ] || fail "missing trace: exit $rc, expected 1"
grep -qF "$tmp/none.csv" "$tmp/err3" || fail "missing trace: not named"

[ "$fails" -eq 0 ] || exit 1
echo "ok: compare"
