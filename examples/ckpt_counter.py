#!/usr/bin/env python3
"""ckpt_counter.py - a gpupool job that can be preempted and resumed.

It counts to N, one step every S seconds, as a stand-in for a training
loop. It speaks the checkpoint protocol of docs/jobs.md:

- it resumes from $GPUPOOL_CHECKPOINT_DIR/state.json if a run before it
  left one there;
- on the preempt signal ($GPUPOOL_PREEMPT_SIGNAL, SIGUSR1 by default) it
  finishes the step it is in, saves its state atomically (write a temporary
  file, fsync, rename, fsync the directory), prints
  "checkpointed at step K" and exits 0;
- at the end it prints "done N" and exits 0.

Usage: ckpt_counter.py --steps N [--step-seconds S]
Pure Python 3, no third-party modules.
"""
import argparse
import json
import os
import signal
import sys
import time

preempted = False


def on_preempt(signum, frame):
    # Only note it: the loop saves between steps, never half-way through.
    global preempted
    preempted = True


def save(ckpt_dir, step):
    path = os.path.join(ckpt_dir, "state.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"step": step}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(ckpt_dir, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def load(ckpt_dir):
    try:
        with open(os.path.join(ckpt_dir, "state.json")) as f:
            return int(json.load(f)["step"])
    except FileNotFoundError:
        return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--step-seconds", type=float, default=0.1)
    args = ap.parse_args()

    ckpt_dir = os.environ.get("GPUPOOL_CHECKPOINT_DIR")
    if not ckpt_dir:
        sys.exit("ckpt_counter: GPUPOOL_CHECKPOINT_DIR is not set "
                 "(run it under gpupool)")
    sig = int(os.environ.get("GPUPOOL_PREEMPT_SIGNAL", signal.SIGUSR1))
    signal.signal(sig, on_preempt)

    step = load(ckpt_dir)
    restarts = os.environ.get("GPUPOOL_RESTART_COUNT", "0")
    if step:
        print(f"resumed at step {step} (restart {restarts})", flush=True)
    while step < args.steps:
        if preempted:
            save(ckpt_dir, step)
            print(f"checkpointed at step {step}", flush=True)
            return 0
        time.sleep(args.step_seconds)
        step += 1
        print(f"step {step}", flush=True)
    save(ckpt_dir, step)
    print(f"done {step}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
