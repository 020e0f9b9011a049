#!/usr/bin/python3
"""make-trace.py MSR_TRACE THROUGHPUTS.json[.xz] N [SF] [slo=SEED] > OUT.trace
- the first N rows of a Gavel msr trace (7 fields) whose model and scale
factor Gavel's throughput table measured on all three GPU types: the
artifact's simulator can run no other (gpupool scales the rest,
docs/traces.md). With SF (a number, or `any`), only the rows of that scale
factor (the artifact's AlloX takes jobs of one GPU only). With slo=SEED,
the rows in the 10-field layout with an SLO each, drawn as the artifact's
generator draws them (utils.py: 1.2, 2.0 or 10 times the job's duration,
at 33%, 34% and 33%) from Python's random seeded with SEED; priority
weight 1."""
import ast
import json
import lzma
import random
import sys

args = [a for a in sys.argv[1:] if not a.startswith("slo=")]
slo = [a for a in sys.argv[1:] if a.startswith("slo=")]
rng = random.Random(int(slo[0][4:])) if slo else None
trace, table, n = args[0], args[1], int(args[2])
sf = int(args[3]) if len(args) > 3 and args[3] != "any" else None
opener = lzma.open if table.endswith(".xz") else open
with opener(table, "rt") as f:
    t = json.load(f)
have = [set(ast.literal_eval(k) for k in t[w]) for w in ("v100", "p100", "k80")]
kept = 0
for line in open(trace):
    f = line.rstrip("\n").split("\t")
    if all((f[0], int(f[6])) in h for h in have) and \
            (sf is None or int(f[6]) == sf):
        if rng is None:
            sys.stdout.write(line)
        else:
            r = rng.uniform(0, 1)
            s = 1.2 if r < 0.33 else 2.0 if r < 0.67 else 10.0
            # job_type, command, working_directory, num_steps_arg,
            # needs_data_dir, total_steps, scale_factor, priority_weight,
            # SLO, arrival_time
            sys.stdout.write("\t".join([f[0], f[1], "", f[2], f[3], f[4], f[6],
                                        "1", f"{s:.6f}", f[5]]) + "\n")
        kept += 1
        if kept == n:
            break
