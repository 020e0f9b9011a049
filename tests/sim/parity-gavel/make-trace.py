#!/usr/bin/python3
"""make-trace.py MSR_TRACE THROUGHPUTS.json[.xz] N [SF] > OUT.trace - the
first N rows of a Gavel msr trace (7 fields) whose model and scale factor
Gavel's throughput table measured on all three GPU types: the artifact's
simulator can run no other (gpupool scales the rest, docs/traces.md).
With SF, only the rows of that scale factor (the artifact's AlloX takes
jobs of one GPU only)."""
import ast
import json
import lzma
import sys

trace, table, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
sf = int(sys.argv[4]) if len(sys.argv) > 4 else None
opener = lzma.open if table.endswith(".xz") else open
with opener(table, "rt") as f:
    t = json.load(f)
have = [set(ast.literal_eval(k) for k in t[w]) for w in ("v100", "p100", "k80")]
kept = 0
for line in open(trace):
    f = line.rstrip("\n").split("\t")
    if all((f[0], int(f[6])) in h for h in have) and \
            (sf is None or int(f[6]) == sf):
        sys.stdout.write(line)
        kept += 1
        if kept == n:
            break
