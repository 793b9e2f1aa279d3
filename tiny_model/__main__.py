"""python -m tiny_model warmup|probe|train [--device auto|cpu|cuda] [--seed N] [--out DIR]"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tiny_model import experiment
from tiny_model.grpo import LOSS_AGG_MODES, METHODS
from tiny_model.probe import ProbeConfig


def _methods(text: str) -> tuple[str, ...]:
    methods = tuple(m.strip() for m in text.split(",") if m.strip())
    bad = [m for m in methods if m not in METHODS]
    if bad or not methods:
        raise argparse.ArgumentTypeError(f"methods from {','.join(METHODS)}; got {text!r}")
    return methods


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tiny_model", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    common.add_argument("--seed", type=int, default=0)
    common.add_argument(
        "--out", type=Path, default=None, help="output folder (default runs/<command>)"
    )

    w = sub.add_parser("warmup", parents=[common], help="supervised warm-up; writes the checkpoint")
    w.add_argument("--steps", type=int, default=experiment.WarmupConfig.steps)
    w.add_argument("--checkpoint", type=Path, default=experiment.CHECKPOINT)

    pr = sub.add_parser("probe", parents=[common], help="the one-step LLD probe (Eq. 2)")
    pr.add_argument("--methods", type=_methods, default=METHODS)
    pr.add_argument("--groups", type=int, default=ProbeConfig.groups)
    pr.add_argument("--group-size", type=int, default=ProbeConfig.group_size)
    pr.add_argument("--lr", type=float, default=ProbeConfig.lr)
    pr.add_argument("--random-draws", type=int, default=ProbeConfig.random_draws)

    t = sub.add_parser("train", parents=[common], help="short GRPO runs, one per method")
    t.add_argument("--methods", type=_methods, default=("grpo", "nthr"))
    t.add_argument("--steps", type=int, default=100)
    t.add_argument("--lr", type=float, default=3e-4)
    t.add_argument("--kl-coef", type=float, default=0.0)
    t.add_argument("--loss-agg", choices=LOSS_AGG_MODES, default="seq-mean-token-mean")
    t.add_argument("--inner-steps", type=int, default=1)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    device = experiment.resolve_device(args.device)
    out = args.out or Path("runs") / args.command
    if args.command == "warmup":
        m = experiment.cmd_warmup(out, device, args.seed, args.steps, args.checkpoint)
        print(
            f"warm-up: loss {m['final_loss']:.3f}, sampled accuracy {m['sampled_accuracy']:.3f}, "
            f"greedy {m['greedy_accuracy']:.3f}, checkpoint {m['checkpoint']}"
        )
    else:
        from tiny_model.seam import Functions

        fns = Functions.from_solutions()
        if args.command == "probe":
            config = ProbeConfig(
                methods=args.methods,
                groups=args.groups,
                group_size=args.group_size,
                lr=args.lr,
                random_draws=args.random_draws,
                seed=args.seed,
            )
            print(experiment.cmd_probe(out, device, fns, config).table())
        else:
            results = experiment.cmd_train(
                out,
                device,
                fns,
                args.methods,
                steps=args.steps,
                seed=args.seed,
                lr=args.lr,
                kl_coef=args.kl_coef,
                loss_agg=args.loss_agg,
                inner_steps=args.inner_steps,
            )
            for r in results:
                h = r.history
                print(
                    f"{r.config.method:>8}: reward {h['reward_mean'][0]:.3f} -> "
                    f"{sum(h['reward_mean'][-10:]) / min(10, len(h['reward_mean'])):.3f} (last 10), "
                    f"answer ln π {h['answer_logp_start'][0]:+.3f} -> {h['answer_logp'][-1]:+.3f}"
                )
    print(f"wrote {out}/metrics.json and figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
