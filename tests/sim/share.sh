#!/bin/sh
# share.sh - gpupool share from the command line: the table, --json and
# --csv agree on a two-node list, and a bad row exits 1 naming file:line
# and the field.
#   usage: share.sh GPUPOOL
set -eu
G=$1
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
printf 'sn,cpu_milli,memory_mib,gpu,model\nn1,32000,65536,1,T4\nn2,32000,65536,1,T4\n' >"$D/n.csv"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\np0,1000,1024,1,500,0,\np1,1000,1024,1,500,10,\np2,1000,1024,1,1000,20,\n' >"$D/p.csv"
$G share --nodes "$D/n.csv" --pods "$D/p.csv" --samples 2 --csv "$D/s.csv" >"$D/out.txt"
# round-up gives p0 and p1 a GPU each: p2 fails; sharing places all three
grep -q '^could not be placed  *1  *0  *0$' "$D/out.txt" || { cat "$D/out.txt"; exit 1; }
$G share --nodes "$D/n.csv" --pods "$D/p.csv" --json --mode fgd | grep -q '"mode": "fgd", "pods": 3, "placed": 3, "failed": 0'
[ "$(wc -l <"$D/s.csv")" -eq 10 ] # header + 3 modes x 3 samples
grep -q '^20,round-up,1.000000,0.500000,' "$D/s.csv"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\np0,1000,1024,2,500,0,\n' >"$D/bad.csv"
if $G share --nodes "$D/n.csv" --pods "$D/bad.csv" 2>"$D/err.txt"; then exit 1; fi
grep -q "bad.csv:2.*gpu_milli" "$D/err.txt" || { cat "$D/err.txt"; exit 1; }
echo ok
