#!/usr/bin/env python3
"""tiresias-trace.py SEED N - a random job trace in the Tiresias simulator's
CSV format (job_id,num_gpu,submit_time,iterations,model_name,duration,
interval): GPUs drawn from 1, 2, 3, 4, 8 and 16 (1 most often), durations
log-normal (mu 7.5, sigma 1.6, whole seconds), gaps exponential (mean 300 s).
The traces of tests/sim/parity-tiresias/ come from it."""
import random
import sys

seed, n = int(sys.argv[1]), int(sys.argv[2])
r = random.Random(seed)
models = ['vgg19', 'vgg16', 'vgg11', 'alexnet', 'resnet152', 'resnet101',
          'resnet50', 'inception4', 'inception3']
t = 0
print('job_id,num_gpu,submit_time,iterations,model_name,duration,interval')
for i in range(n):
    g = r.choice([1, 1, 1, 2, 2, 3, 4, 4, 8, 8, 16])
    d = int(r.lognormvariate(7.5, 1.6)) + 1
    gap = int(r.expovariate(1 / 300.0))
    print(','.join(map(str, (i, g, t, 1000, r.choice(models), d, gap))))
    t += gap
