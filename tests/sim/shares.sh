#!/bin/sh
# shares.sh - jobs asking for a share of one GPU through `gpupool sim`:
# four quarter-GPU jobs on one GPU run together (--shares real, the
# default) or one after another (--shares round-up); the jobs and runs CSV
# show the share; a zero-GPU job runs beside them; a bad share is an error
# naming file:line and the field.
#   usage: shares.sh GPUPOOL
set -eu
G=$1
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
printf 'id,submit_s,gpus,gpu_milli,duration_s\nq0,0,0,250,100\nq1,0,0,250,100\nq2,0,0,250,100\nq3,0,0,250,100\nps,0,0,0,50\n' >"$D/t.csv"
$G sim --trace "$D/t.csv" --cluster 1x1 --policy fifo --no-progress --json \
    --jobs-csv "$D/jobs.csv" --runs-csv "$D/runs.csv" >"$D/real.json"
# together: every job ends at 100 s but the zero-GPU one (50 s)
grep -q '"avg_jct_s": 90.0,' "$D/real.json" || { cat "$D/real.json"; exit 1; }
grep -q '"shares": "several jobs on one device, best fit"' "$D/real.json"
grep -q '^q2,[^,]*,[^,]*,[^,]*,0.25,' "$D/jobs.csv" || { cat "$D/jobs.csv"; exit 1; }
grep -q '^ps,[^,]*,[^,]*,[^,]*,0,' "$D/jobs.csv"
grep -q '^ps,.*,0,gpu,node0,completed$' "$D/runs.csv"
grep -q '^q1,.*,0.25,gpu,node0:0@250,completed$' "$D/runs.csv" || { cat "$D/runs.csv"; exit 1; }
# a whole GPU each: 100, 200, 300, 400 s; strict fifo starts the zero-GPU
# job only once it heads the queue (at 300 s): 350 s
$G sim --trace "$D/t.csv" --cluster 1x1 --policy fifo --no-progress --json \
    --shares round-up >"$D/up.json"
grep -q '"avg_jct_s": 270.0,' "$D/up.json" || { cat "$D/up.json"; exit 1; }
grep -q '"shares": "a whole GPU each (--shares round-up)"' "$D/up.json"
# the table says how shares were placed
$G sim --trace "$D/t.csv" --cluster 1x1 --policy fifo --no-progress |
    grep -q '^placement  *pack; shares: several jobs on one device, best fit$'
# bad input
printf 'id,submit_s,gpus,gpu_milli,duration_s\nq0,0,1,250,100\n' >"$D/bad.csv"
if $G sim --trace "$D/bad.csv" --cluster 1x1 --no-progress 2>"$D/err.txt"; then exit 1; fi
grep -q "bad.csv:2.*gpu_milli" "$D/err.txt" || { cat "$D/err.txt"; exit 1; }
if $G sim --trace "$D/t.csv" --cluster 1x1 --shares half 2>"$D/err.txt"; then exit 1; fi
grep -q -- "--shares: expected real or round-up" "$D/err.txt"
echo ok
