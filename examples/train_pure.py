#!/usr/bin/env python3
"""train_pure.py - the twin of train_torch.py for machines without torch:
the same checkpoint protocol, options and output, in pure Python 3.

It trains a tiny MLP (4 inputs, 16 tanh units, 1 output) with SGD and
momentum on a synthetic regression problem generated from --seed, for
--steps steps, one random minibatch per step. Like train_torch.py:

- it resumes from $GPUPOOL_CHECKPOINT_DIR/ckpt.json if a run before it
  left one there ("resumed at step K (restart R)");
- on the preempt signal ($GPUPOOL_PREEMPT_SIGNAL, SIGUSR1 by default) it
  finishes the step it is in, saves weights, momentum, step and the state
  of its random number generator atomically (temporary file, fsync,
  rename, fsync of the directory), prints "checkpointed at step K" and
  exits 0;
- it also saves every --checkpoint-every steps;
- at the end it saves, prints "done N" and "final_state_sha256 <hex>" (the
  SHA-256 of the weights as little-endian doubles, in order), and writes
  the hex digest to --hash-file if given.

Floats go through JSON exactly (Python writes the shortest repr that reads
back as the same double), so a resumed run ends with the same weights, bit
for bit, as one that was never interrupted.

Usage: train_pure.py [--steps N] [--seed S] [--checkpoint-every K]
                     [--log-every K] [--step-seconds S] [--hash-file PATH]
                     [--checkpoint-dir DIR]
"""
import argparse
import hashlib
import json
import math
import os
import random
import signal
import struct
import sys
import time

preempted = False


def on_preempt(signum, frame):
    # Only note it: the loop saves between steps.
    global preempted
    preempted = True


CKPT_NAME = "ckpt.json"
CKPT_VERSION = 1
N_SAMPLES = 256
N_IN = 4
N_HIDDEN = 16
BATCH = 16
LR = 0.05
MOMENTUM = 0.9


def die(msg):
    print(f"train_pure: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def make_data(seed):
    """The same (x, y) for a given seed on every run; not checkpointed."""
    g = random.Random(seed)
    w = [g.gauss(0, 1) for _ in range(N_IN)]
    data = []
    for _ in range(N_SAMPLES):
        x = [g.gauss(0, 1) for _ in range(N_IN)]
        y = math.sin(sum(a * b for a, b in zip(w, x))) + 0.1 * g.gauss(0, 1)
        data.append((x, y))
    return data


def init_params(rng):
    """Weights as one flat list: W1 (N_HIDDEN x N_IN), b1, w2, b2."""
    s1, s2 = 1 / math.sqrt(N_IN), 1 / math.sqrt(N_HIDDEN)
    return ([rng.uniform(-s1, s1) for _ in range(N_HIDDEN * N_IN)] +
            [0.0] * N_HIDDEN +
            [rng.uniform(-s2, s2) for _ in range(N_HIDDEN)] + [0.0])


def grad(p, batch):
    """Mean squared error over the batch and its gradient."""
    g = [0.0] * len(p)
    b1o, w2o = N_HIDDEN * N_IN, N_HIDDEN * N_IN + N_HIDDEN
    b2o = w2o + N_HIDDEN
    loss = 0.0
    for x, y in batch:
        h = [math.tanh(sum(p[j * N_IN + i] * x[i] for i in range(N_IN)) +
                       p[b1o + j]) for j in range(N_HIDDEN)]
        out = sum(p[w2o + j] * h[j] for j in range(N_HIDDEN)) + p[b2o]
        err = out - y
        loss += err * err
        d = 2 * err / len(batch)
        g[b2o] += d
        for j in range(N_HIDDEN):
            g[w2o + j] += d * h[j]
            dh = d * p[w2o + j] * (1 - h[j] * h[j])
            g[b1o + j] += dh
            for i in range(N_IN):
                g[j * N_IN + i] += dh * x[i]
    return loss / len(batch), g


def state_sha256(p):
    return hashlib.sha256(struct.pack(f"<{len(p)}d", *p)).hexdigest()


def write_atomically(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save(path, args, step, params, velocity, rng):
    version, internal, gauss_next = rng.getstate()
    ckpt = {"version": CKPT_VERSION, "seed": args.seed, "steps": args.steps,
            "step": step, "params": params, "velocity": velocity,
            "rng": [version, list(internal), gauss_next]}
    write_atomically(path, json.dumps(ckpt).encode())


def load(path, args, rng):
    try:
        with open(path) as f:
            ckpt = json.load(f)
        if ckpt.get("version") != CKPT_VERSION:
            die(f"{path}: not a version {CKPT_VERSION} checkpoint "
                "of this script")
        for key in ("seed", "steps"):
            if ckpt[key] != getattr(args, key):
                die(f"{path}: made with --{key} {ckpt[key]}, "
                    f"this run has --{key} {getattr(args, key)}")
        version, internal, gauss_next = ckpt["rng"]
        rng.setstate((version, tuple(internal), gauss_next))
        return ckpt["step"], ckpt["params"], ckpt["velocity"]
    except KeyError as e:
        die(f"{path}: not a checkpoint of this script: no field {e}")
    except (OSError, ValueError, TypeError, AttributeError) as e:
        die(f"{path}: not a checkpoint of this script: {e}")


def positive(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number")
    if v < 0:
        raise argparse.ArgumentTypeError(f"'{text}' is negative")
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=positive, default=400)
    ap.add_argument("--seed", type=positive, default=0)
    ap.add_argument("--checkpoint-every", type=positive, default=100,
                    metavar="K", help="also save every K steps (0: never)")
    ap.add_argument("--log-every", type=positive, default=10, metavar="K",
                    help="print 'step K loss L' every K steps (0: never)")
    ap.add_argument("--step-seconds", type=float, default=0.0, metavar="S",
                    help="sleep S seconds after each step (for demos)")
    ap.add_argument("--hash-file", metavar="PATH",
                    help="also write the final state's SHA-256 here")
    ap.add_argument("--checkpoint-dir", metavar="DIR",
                    help="default: $GPUPOOL_CHECKPOINT_DIR")
    args = ap.parse_args()
    if args.step_seconds < 0:
        ap.error("--step-seconds: must not be negative")
    signal.signal(int(os.environ.get("GPUPOOL_PREEMPT_SIGNAL",
                                     signal.SIGUSR1)), on_preempt)

    ckpt_dir = args.checkpoint_dir or os.environ.get("GPUPOOL_CHECKPOINT_DIR")
    if not ckpt_dir:
        die("no checkpoint directory: run it under gpupool "
            "(GPUPOOL_CHECKPOINT_DIR) or pass --checkpoint-dir")
    if not os.path.isdir(ckpt_dir):
        die(f"checkpoint directory {ckpt_dir}: no such directory")
    ckpt_path = os.path.join(ckpt_dir, CKPT_NAME)

    data = make_data(args.seed)
    rng = random.Random(args.seed + 1)  # weights, then the batch order
    params = init_params(rng)
    velocity = [0.0] * len(params)
    step = 0
    if os.path.exists(ckpt_path):
        step, params, velocity = load(ckpt_path, args, rng)
        restarts = os.environ.get("GPUPOOL_RESTART_COUNT", "0")
        print(f"resumed at step {step} (restart {restarts})", flush=True)
    else:
        print(f"started on cpu, seed {args.seed}, {args.steps} steps",
              flush=True)

    while step < args.steps:
        if preempted:
            save(ckpt_path, args, step, params, velocity, rng)
            print(f"checkpointed at step {step}", flush=True)
            return 0
        batch = [data[rng.randrange(N_SAMPLES)] for _ in range(BATCH)]
        loss, g = grad(params, batch)
        for k in range(len(params)):
            velocity[k] = MOMENTUM * velocity[k] + g[k]
            params[k] -= LR * velocity[k]
        step += 1
        if args.log_every and step % args.log_every == 0:
            print(f"step {step} loss {loss:.6f}", flush=True)
        if args.checkpoint_every and step % args.checkpoint_every == 0:
            save(ckpt_path, args, step, params, velocity, rng)
        if args.step_seconds:
            time.sleep(args.step_seconds)

    save(ckpt_path, args, step, params, velocity, rng)
    digest = state_sha256(params)
    if args.hash_file:
        write_atomically(args.hash_file, (digest + "\n").encode())
    print(f"done {step}", flush=True)
    print(f"final_state_sha256 {digest}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
