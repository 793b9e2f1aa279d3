"""The probe observations and the cost of tiny_model, per configuration and device, as one table.

    python benchmarks/tiny_model_table.py [--seeds 0-4] [--groups 60] [--train-steps 20]
                                          [--large-on-cpu] [--threads 2]

Rows:
  course / cpu   the shipped warm model (3 single digits, 2x64 decoder), always run;
  large  / cuda  LARGE_WARMUP (four 2-digit numbers with carries, 4x256 decoder): warmed up on
                 the GPU to mid competence (cached afterwards), then the same probes. Skipped,
                 with the reason printed, when torch sees no CUDA device (``--large-on-cpu``
                 runs it on the CPU instead: slow, for checking the code, not the timings).

Columns: warm-up seconds (0 when the checkpoint is shipped or cached) and its sampled
accuracy; the pooled Adam probe's seconds and its three paired 95 % intervals
(positive-only − GRPO, NTHR − GRPO, NTHR − random; all three above 0 is the paper's
picture) and GRPO's LLD rate; the pooled SGD probe's positive-only − GRPO interval (≤ 0 is
the first-order identity); training steps per second (GRPO, 16 prompts x 8). The baseline of
the speed ratios is the course row on the CPU, measured in the same run.

Then notebook 07's study (``--study``, default the shipped tiny_model/results/train_07.json, or a
metrics.json of ``python -m tiny_model train --methods all ...``): every method's final greedy
accuracy and Pass@K and its run-mean online Eq. 2, each paired with GRPO over the seeds (95 %
t intervals). ``--study-only`` prints that table alone (no probes, no timing).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tiny_model import experiment  # noqa: E402
from tiny_model.pooled import parse_seeds, run_probe_seeds  # noqa: E402
from tiny_model.probe import ProbeConfig  # noqa: E402
from tiny_model.seam import Functions  # noqa: E402
from tiny_model.study import SHIPPED_07, load_shipped  # noqa: E402
from tiny_model.training import TrainConfig, train  # noqa: E402
from tiny_model.warm import (  # noqa: E402
    CHECKPOINT,
    LARGE_WARMUP,
    WarmupConfig,
    cache_path,
    load_warm,
    sampled_accuracy,
)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def _ci(p: dict[str, float]) -> str:
    return f"[{p['ci_low']:+.1e},{p['ci_high']:+.1e}]"


def measure(
    name: str,
    warm: WarmupConfig,
    device: torch.device,
    fns: Functions,
    seeds: tuple[int, ...],
    groups: int,
    train_steps: int,
) -> dict[str, object]:
    """Warm-up (or load), both pooled probes and a few training steps on ``device``."""
    shipped = CHECKPOINT.is_file() and name == "course"
    cached = cache_path(warm).is_file()
    t0 = time.perf_counter()
    model = load_warm(device, warm)
    _sync(device)
    warm_s = 0.0 if (shipped or cached) else time.perf_counter() - t0
    with experiment.deterministic():
        acc = sampled_accuracy(model, seed=0, task=warm.task)
    row: dict[str, object] = {
        "config": name,
        "device": device.type,
        "params": model.num_parameters(),
        "warm_s": warm_s,
        "acc": acc,
    }
    for optimizer in ("adam", "sgd"):
        config = ProbeConfig(groups=groups, optimizer=optimizer, task=warm.task)
        t0 = time.perf_counter()
        with experiment.deterministic():
            pooled = run_probe_seeds(model, fns, seeds, config)
        _sync(device)
        row[f"{optimizer}_s"] = time.perf_counter() - t0
        row[optimizer] = pooled
    t0 = time.perf_counter()
    config = TrainConfig(method="grpo", steps=train_steps, eval_every=train_steps, task=warm.task)
    with experiment.deterministic():
        train(fns, load_warm(device, warm).train(), config)
    _sync(device)
    row["train_steps_per_s"] = train_steps / (time.perf_counter() - t0)
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--seeds", default="0-4", help="probe seeds to pool (default 0-4)")
    p.add_argument("--groups", type=int, default=60, help="mixed groups per seed")
    p.add_argument("--train-steps", type=int, default=20)
    p.add_argument("--threads", type=int, default=2, help="CPU threads (target machine: 2)")
    p.add_argument("--large-on-cpu", action="store_true", help="run the large row on the CPU")
    p.add_argument("--study", type=Path, default=SHIPPED_07, help="notebook 07's study to print")
    p.add_argument("--study-only", action="store_true", help="print notebook 07's study table only")
    args = p.parse_args(argv)
    study = load_shipped(args.study)
    if args.study_only:
        print(f"notebook 07 study: {args.study}")
        print(study.table())
        return 0
    torch.set_num_threads(args.threads)
    seeds = parse_seeds(args.seeds)
    fns = Functions.from_solutions()
    plan = [("course", WarmupConfig(), torch.device("cpu"))]
    skipped = None
    if torch.cuda.is_available():
        plan.append(("large", LARGE_WARMUP, torch.device("cuda")))
    elif args.large_on_cpu:
        plan.append(("large", LARGE_WARMUP, torch.device("cpu")))
    else:
        skipped = "large/cuda row skipped: torch sees no CUDA device (--large-on-cpu runs it here)"
    rows = []
    for name, warm, device in plan:
        print(f"running {name} on {device.type} ...", file=sys.stderr, flush=True)
        rows.append(measure(name, warm, device, fns, seeds, args.groups, args.train_steps))
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    print(
        f"torch {torch.__version__}, CPU threads {args.threads}, GPU {gpu}; probes: seeds "
        f"{args.seeds} x {args.groups} mixed groups, lr 1e-5; training: GRPO 16 prompts x 8"
    )
    head = (
        f"{'config':<7}{'device':<7}{'params':>9}{'warm s':>8}{'acc':>6}{'adam s':>8}"
        f"{'pos-grpo (adam)':>22}{'nthr-grpo (adam)':>22}{'nthr-rand (adam)':>22}"
        f"{'LLD':>6}{'sgd s':>7}{'pos-grpo (sgd)':>22}{'steps/s':>9}"
    )
    print(head)
    base = rows[0]
    for r in rows:
        a, s = r["adam"], r["sgd"]
        print(
            f"{r['config']:<7}{r['device']:<7}{r['params']:>9,d}{r['warm_s']:>8.1f}{r['acc']:>6.2f}"
            f"{r['adam_s']:>8.1f}{_ci(a.paired['pos_only-grpo']):>22}"
            f"{_ci(a.paired['nthr-grpo']):>22}{_ci(a.paired['nthr-random']):>22}"
            f"{a.summary()['grpo']['lld_rate']:>6.2f}{r['sgd_s']:>7.1f}"
            f"{_ci(s.paired['pos_only-grpo']):>22}{r['train_steps_per_s']:>9.2f}"
        )
    for r in rows[1:]:
        print(
            f"{r['config']}/{r['device']} vs course/cpu: probe {base['adam_s'] / r['adam_s']:.2f}x"
            f" the speed with {r['params'] / base['params']:.0f}x the parameters; training "
            f"{r['train_steps_per_s'] / base['train_steps_per_s']:.2f}x the steps per second"
        )
    for r in rows:
        a, s = r["adam"].paired, r["sgd"].paired
        adam_ok = all(a[k]["ci_low"] > 0 for k in ("pos_only-grpo", "nthr-grpo", "nthr-random"))
        sgd_ok = s["pos_only-grpo"]["mean"] <= 0
        print(
            f"{r['config']}/{r['device']}: adam shows the paper's three observations: "
            f"{'yes' if adam_ok else 'NO'}; sgd pos_only-grpo <= 0 (identity): "
            f"{'yes' if sgd_ok else 'NO'}"
        )
    if skipped:
        print(skipped)
    print(f"notebook 07 study: {args.study}")
    print(study.beyond_table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
