"""Speed of tiny_model: one LLD probe (60 groups x 4 methods) and GRPO training steps per second.

    python benchmarks/probe_speed.py [--device cpu|cuda|auto] [--threads 2] [--groups 60] [--steps 20]
                                     [--optimizer adam|sgd]

The observations per configuration and device (and the GPU row): benchmarks/tiny_model_table.py.

The baseline is the CPU measured in the same run; with --device cuda (or auto
on a machine with a GPU) the same work is timed on CUDA beside it and printed
as a ratio. Target (DESIGN.md): the probe under 15 s on a 2-core CPU.
"""

from __future__ import annotations

import argparse
import time

import torch

from tiny_model import experiment, training
from tiny_model.probe import ProbeConfig, run_probe
from tiny_model.seam import Functions


def measure(
    device: torch.device, fns: Functions, groups: int, steps: int, optimizer: str = "adam"
) -> dict[str, float]:
    model = experiment.load_warm(device)
    run_probe(model, fns, ProbeConfig(groups=2))  # warm-up: first-call overheads, CUDA context
    if device.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    res = run_probe(model, fns, ProbeConfig(groups=groups, optimizer=optimizer))
    if device.type == "cuda":
        torch.cuda.synchronize()
    probe_s = time.perf_counter() - t0
    out = {"probe_s": probe_s, "groups": float(len(res.changes["grpo"]))}
    for method in ("grpo", "nthr"):
        t0 = time.perf_counter()
        training.train(
            fns,
            experiment.load_warm(device).train(),
            training.TrainConfig(method=method, steps=steps, eval_every=steps),
        )
        if device.type == "cuda":
            torch.cuda.synchronize()
        out[f"train_{method}_steps_per_s"] = steps / (time.perf_counter() - t0)
    return out


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--device", default="cpu", choices=("auto", "cpu", "cuda"))
    p.add_argument(
        "--threads", type=int, default=2, help="CPU threads (the target machine has 2 cores)"
    )
    p.add_argument("--groups", type=int, default=60)
    p.add_argument("--steps", type=int, default=20, help="training steps timed per method")
    p.add_argument("--optimizer", default="adam", choices=("adam", "sgd"), help="the probe's step")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    fns = Functions.from_solutions()
    devices = [torch.device("cpu")]
    target = experiment.resolve_device(args.device)
    if target.type == "cuda":
        devices.append(target)
    rows = {d.type: measure(d, fns, args.groups, args.steps, args.optimizer) for d in devices}
    base = rows["cpu"]
    print(
        f"torch {torch.__version__}, CPU threads {args.threads}, {args.groups} groups x 4 methods, "
        f"{args.optimizer} probe"
    )
    print(
        f"{'device':<8}{'probe s':>10}{'vs cpu':>8}{'grpo steps/s':>14}{'vs cpu':>8}{'nthr steps/s':>14}{'vs cpu':>8}"
    )
    for name, r in rows.items():
        print(
            f"{name:<8}{r['probe_s']:>10.2f}{base['probe_s'] / r['probe_s']:>7.2f}x"
            f"{r['train_grpo_steps_per_s']:>14.2f}{r['train_grpo_steps_per_s'] / base['train_grpo_steps_per_s']:>7.2f}x"
            f"{r['train_nthr_steps_per_s']:>14.2f}{r['train_nthr_steps_per_s'] / base['train_nthr_steps_per_s']:>7.2f}x"
        )
    verdict = "meets" if base["probe_s"] < 15 else "MISSES"
    print(f"CPU probe {base['probe_s']:.2f} s: {verdict} the 15 s target")


if __name__ == "__main__":
    main()
