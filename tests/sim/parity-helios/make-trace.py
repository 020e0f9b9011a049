#!/usr/bin/env python3
"""make-trace.py SEED N - a gpupool trace for the Helios parity test, on
stdout: N jobs of one VC, 1-32 GPUs (12: a node and a half), bursts of
arrivals in the same second, durations and estimates in whole seconds
(estimate_s: the duration times a factor between about 1/4 and 4, as a
history-based predictor might give; the peer reads it as its priority)."""
import math
import random
import sys

seed, n = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
sizes = [(1, 50), (2, 15), (4, 15), (8, 10), (12, 3), (16, 5), (32, 2)]
print("id,submit_s,gpus,duration_s,estimate_s,name")
t = 0
for k in range(n):
    if k and rng.random() >= 0.25:  # else the same second as the last
        t += int(rng.expovariate(1 / 200))
    gpus = rng.choices([s for s, _ in sizes], [w for _, w in sizes])[0]
    dur = max(1, int(math.exp(rng.uniform(math.log(20), math.log(20000)))))
    if rng.random() < 0.3:  # round figures: ties in priority
        dur = max(60, dur // 60 * 60)
    est = max(1, int(dur * math.exp(rng.uniform(-1.4, 1.4))))
    if rng.random() < 0.2:
        est = max(60, est // 600 * 600)
    print(f"j{k:03d},{t},{gpus},{dur},{est},job{k:03d}")
