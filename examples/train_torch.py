#!/usr/bin/env python3
"""train_torch.py - a small PyTorch training job that gpupool can preempt
and resume without changing its result.

It trains a small MLP (with dropout, Adam and a learning-rate schedule) on
a synthetic regression problem generated from --seed, for --steps steps.
It speaks the checkpoint protocol of docs/jobs.md; docs/pytorch.md walks
through it:

- it resumes from $GPUPOOL_CHECKPOINT_DIR/ckpt.pt if a run before it left
  one there ("resumed at step K (restart R)");
- on the preempt signal ($GPUPOOL_PREEMPT_SIGNAL, SIGUSR1 by default) it
  finishes the step it is in, saves the model, the optimizer, the schedule,
  the step and every random number generator's state atomically (temporary
  file, fsync, rename, fsync of the directory), prints
  "checkpointed at step K" and exits 0;
- it also saves every --checkpoint-every steps, so that a run killed
  without warning loses at most that many steps;
- at the end it saves, prints "done N" and
  "final_state_sha256 <hex>": the SHA-256 of the model's state_dict
  (each entry's name and its tensor's bytes, in order), and writes the
  same hex digest to --hash-file if given.

Resumed or not, a run with the same --seed and --steps ends with the same
model, bit for bit: the data order and dropout come from generators whose
states are in the checkpoint, and the arithmetic is deterministic
(torch.use_deterministic_algorithms, one CPU thread).

It runs on the GPU when $CUDA_VISIBLE_DEVICES names one and this torch
has CUDA (--device auto), else on the CPU. A CPU result and a GPU result
differ in the last bits; compare runs on the same kind of device.

Usage: train_torch.py [--steps N] [--seed S] [--device auto|cpu|cuda]
                      [--checkpoint-every K] [--log-every K]
                      [--step-seconds S] [--hash-file PATH]
                      [--checkpoint-dir DIR]
Needs Debian's python3-torch (or any PyTorch >= 1.11).
"""
import argparse
import hashlib
import os
import random
import signal
import sys
import time

# Set before torch is imported: the signal can come while the import
# (seconds) is still under way, and cuBLAS reads this when CUDA starts.
preempted = False


def on_preempt(signum, frame):
    # Only note it: the loop saves between steps, never half-way through
    # one, and a handler must not do I/O that the interrupted code may be
    # doing too.
    global preempted
    preempted = True


signal.signal(int(os.environ.get("GPUPOOL_PREEMPT_SIGNAL", signal.SIGUSR1)),
              on_preempt)
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402  (after the handler, on purpose)

CKPT_NAME = "ckpt.pt"
CKPT_VERSION = 1

# The problem and the model: small enough for a test on two slow cores.
N_SAMPLES = 2048
N_IN = 16
N_HIDDEN = 64
BATCH = 64


def die(msg):
    print(f"train_torch: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def make_data(seed):
    """The same (x, y) for a given seed, on every run: the dataset is not
    in the checkpoint, it is made again."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(N_SAMPLES, N_IN, generator=g)
    w1 = torch.randn(N_IN, 8, generator=g)
    w2 = torch.randn(8, 1, generator=g)
    y = torch.tanh(x @ w1) @ w2 + 0.1 * torch.randn(N_SAMPLES, 1, generator=g)
    return x, y


def make_model():
    return torch.nn.Sequential(
        torch.nn.Linear(N_IN, N_HIDDEN),
        torch.nn.ReLU(),
        torch.nn.Dropout(p=0.1),  # draws from the global torch RNG
        torch.nn.Linear(N_HIDDEN, N_HIDDEN),
        torch.nn.ReLU(),
        torch.nn.Linear(N_HIDDEN, 1),
    )


def state_sha256(model):
    """SHA-256 over the state_dict: each entry's name, then its bytes."""
    h = hashlib.sha256()
    for name, t in model.state_dict().items():
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path, write):
    """write(f) into path.tmp, fsync, rename over path, fsync the folder:
    a run killed half-way leaves the previous file whole."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(os.path.dirname(path) or ".")


def save(path, args, step, model, opt, sched, data_gen, device):
    ckpt = {
        "version": CKPT_VERSION,
        "seed": args.seed,
        "steps": args.steps,
        "device": device.type,
        "step": step,
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "scheduler": sched.state_dict(),
        # Every generator the loop draws from; without them a resumed run
        # would see other batches and other dropout masks.
        "rng": {
            "torch": torch.get_rng_state(),
            "cuda": (torch.cuda.get_rng_state_all()
                     if device.type == "cuda" else None),
            "data": data_gen.get_state(),
            "python": random.getstate(),
        },
    }
    write_atomically(path, lambda f: torch.save(ckpt, f))


def load(path, args, model, opt, sched, data_gen, device):
    """Restore everything save() wrote; returns the step to go on from."""
    try:
        try:
            ckpt = torch.load(path, map_location="cpu", weights_only=False)
        except TypeError:  # torch < 1.13 has no weights_only
            ckpt = torch.load(path, map_location="cpu")
    except Exception as e:  # a foreign or damaged file: say which
        die(f"{path}: not a checkpoint of this script: {e}")
    if not isinstance(ckpt, dict) or ckpt.get("version") != CKPT_VERSION:
        die(f"{path}: not a version {CKPT_VERSION} checkpoint of this script")
    for key in ("seed", "steps"):
        if ckpt[key] != getattr(args, key):
            die(f"{path}: made with --{key} {ckpt[key]}, "
                f"this run has --{key} {getattr(args, key)}")
    if ckpt["device"] != device.type:
        # Allowed, but the result will differ from a run on one device.
        print(f"train_torch: {path}: made on {ckpt['device']}, "
              f"resuming on {device.type}", file=sys.stderr, flush=True)
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optimizer"])
    sched.load_state_dict(ckpt["scheduler"])
    rng = ckpt["rng"]
    torch.set_rng_state(rng["torch"])
    if device.type == "cuda" and rng["cuda"] is not None:
        torch.cuda.set_rng_state_all(rng["cuda"])
    data_gen.set_state(rng["data"])
    random.setstate(rng["python"])
    return ckpt["step"]


def pick_device(want):
    has_gpu = (os.environ.get("CUDA_VISIBLE_DEVICES", "") != ""
               and torch.cuda.is_available())
    if want == "cuda" and not has_gpu:
        die("--device cuda: no GPU (CUDA_VISIBLE_DEVICES is empty, "
            "or this torch has no CUDA)")
    if want == "cpu" or not has_gpu:
        return torch.device("cpu")
    return torch.device("cuda")


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
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"),
                    default="auto")
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

    ckpt_dir = args.checkpoint_dir or os.environ.get("GPUPOOL_CHECKPOINT_DIR")
    if not ckpt_dir:
        die("no checkpoint directory: run it under gpupool "
            "(GPUPOOL_CHECKPOINT_DIR) or pass --checkpoint-dir")
    if not os.path.isdir(ckpt_dir):
        die(f"checkpoint directory {ckpt_dir}: no such directory")
    ckpt_path = os.path.join(ckpt_dir, CKPT_NAME)

    # Determinism: one thread (a reduction split over threads may add in
    # another order), deterministic kernels, fixed seeds.
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    device = pick_device(args.device)
    torch.manual_seed(args.seed)  # weights and dropout; CUDA too
    random.seed(args.seed)

    x, y = make_data(args.seed)
    x, y = x.to(device), y.to(device)
    model = make_model().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=100, gamma=0.5)
    data_gen = torch.Generator().manual_seed(args.seed + 1)  # batch order

    step = 0
    if os.path.exists(ckpt_path):
        step = load(ckpt_path, args, model, opt, sched, data_gen, device)
        restarts = os.environ.get("GPUPOOL_RESTART_COUNT", "0")
        print(f"resumed at step {step} (restart {restarts})", flush=True)
    else:
        print(f"started on {device.type}, seed {args.seed}, "
              f"{args.steps} steps", flush=True)

    model.train()
    while step < args.steps:
        if preempted:
            save(ckpt_path, args, step, model, opt, sched, data_gen, device)
            print(f"checkpointed at step {step}", flush=True)
            return 0
        idx = torch.randint(0, N_SAMPLES, (BATCH,), generator=data_gen)
        idx = idx.to(device)
        loss = torch.nn.functional.mse_loss(model(x[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        step += 1
        if args.log_every and step % args.log_every == 0:
            print(f"step {step} loss {loss.item():.6f}", flush=True)
        if args.checkpoint_every and step % args.checkpoint_every == 0:
            save(ckpt_path, args, step, model, opt, sched, data_gen, device)
        if args.step_seconds:
            time.sleep(args.step_seconds)

    save(ckpt_path, args, step, model, opt, sched, data_gen, device)
    digest = state_sha256(model)
    if args.hash_file:
        write_atomically(args.hash_file, lambda f: f.write(
            (digest + "\n").encode()))
    print(f"done {step}", flush=True)
    print(f"final_state_sha256 {digest}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
