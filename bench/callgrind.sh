#!/bin/sh
# callgrind.sh - count the instructions of one fixed simulation, so the cost
# of the core and the policies can be compared between commits: wall time
# moves with the machine's load, instruction counts do not.
#
# The case is bench_sim's callgrind-fixed: 20,000 synthetic jobs on 2,000
# GPUs (250x8) under las, placement pack, seed 1, offered load 2.0 (so las
# queues and preempts). It prints no clock readings, so the same binary
# gives the same count on every run.
#
# usage: bench/callgrind.sh [BUILD_DIR]      (default: build-release)
#        BENCH_SIM=path/to/bench_sim bench/callgrind.sh
#        KEEP=DIR bench/callgrind.sh         keep callgrind.out in DIR
#
# Prints:
#   total_ir      every instruction of the process (startup, generation,
#                 the simulation, the summary)
#   sim_ir        inclusive in gp_sim_run: the simulation alone
#   ..._per_job   the same divided by the job count
# and the 15 costliest functions by their own (exclusive) Ir.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-release}

for tool in valgrind callgrind_annotate; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "callgrind.sh: $tool not found (apt-get install valgrind)" >&2
        exit 2
    fi
done

if [ -n "${BENCH_SIM:-}" ]; then
    bin=$BENCH_SIM
else
    if [ ! -f "$build/build.ninja" ]; then
        meson setup "$build" "$root" --buildtype=release >/dev/null
    fi
    ninja -C "$build" bench/bench_sim >/dev/null
    bin=$build/bench/bench_sim
fi

if [ -n "${KEEP:-}" ]; then
    out=$KEEP
    mkdir -p "$out"
else
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
fi

# --no-fork: one process, one output file. An empty environment: its size
# moves the stack, which changes the count of startup code and of
# alignment-dependent copies by a few hundred instructions.
if ! env -i PATH="$PATH" valgrind --tool=callgrind \
    --callgrind-out-file="$out/callgrind.out" \
    "$bin" --case callgrind-fixed --no-fork >"$out/stdout" \
    2>"$out/valgrind.log"; then
    echo "callgrind.sh: the run failed; valgrind said:" >&2
    tail -n 20 "$out/valgrind.log" >&2
    exit 1
fi

jobs=$(sed -n 's/^callgrind-fixed: .*jobs=\([0-9]*\).*/\1/p' "$out/stdout")
# The file's last "totals:" (older valgrind: "summary:") line holds the
# event counts; Ir is the first.
total=$(awk '$1 == "totals:" || $1 == "summary:" { ir = $2 } END { print ir }' \
    "$out/callgrind.out")
annot=$out/annotate.txt
callgrind_annotate --inclusive=yes "$out/callgrind.out" >"$annot" 2>/dev/null
sim=$(awk '/[: ]gp_sim_run( |$)/ { gsub(",", "", $1); print $1; exit }' \
    "$annot")

if [ -z "$jobs" ] || [ -z "$total" ]; then
    echo "callgrind.sh: could not read the figures; see $out" >&2
    exit 1
fi

echo "callgrind-fixed: $(head -n 1 "$out/stdout" | cut -d' ' -f2-)"
awk -v t="$total" -v s="${sim:-0}" -v j="$jobs" 'BEGIN {
    printf "total_ir=%.0f total_ir_per_job=%.0f\n", t, t / j
    if (s > 0)
        printf "sim_ir=%.0f sim_ir_per_job=%.0f (%.1f%% of total)\n",
            s, s / j, 100 * s / t
    else
        printf "sim_ir=? (gp_sim_run not found in the annotation)\n"
}'
echo
echo "costliest functions, own Ir:"
# Rows look like "1,234,567 (12.34%)  file:function [object]".
callgrind_annotate --inclusive=no "$out/callgrind.out" 2>/dev/null |
    grep -E '^ *[0-9,]+ \( *[0-9.]+%\) ' | grep -v 'PROGRAM TOTALS' |
    head -n 15
