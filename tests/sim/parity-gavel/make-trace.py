#!/usr/bin/python3
"""make-trace.py MSR_TRACE THROUGHPUTS.json[.xz] N > OUT.trace - the first N
rows of a Gavel msr trace (7 fields) whose model and scale factor Gavel's
throughput table measured on all three GPU types: the artifact's simulator
can run no other (gpupool scales the rest, docs/traces.md)."""
import ast
import json
import lzma
import sys

trace, table, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
opener = lzma.open if table.endswith(".xz") else open
with opener(table, "rt") as f:
    t = json.load(f)
have = [set(ast.literal_eval(k) for k in t[w]) for w in ("v100", "p100", "k80")]
kept = 0
for line in open(trace):
    f = line.rstrip("\n").split("\t")
    if all((f[0], int(f[6])) in h for h in have):
        sys.stdout.write(line)
        kept += 1
        if kept == n:
            break
