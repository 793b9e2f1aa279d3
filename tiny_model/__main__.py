"""python -m tiny_model warmup|probe|train [--config course|multi|large] [--device auto|cpu|cuda] ...

python -m tiny_model probe --optimizer adam --seeds 0-4     # the paper's observations, pooled
python -m tiny_model probe --optimizer sgd --seeds 0-4      # the first-order control
python -m tiny_model train --methods grpo,pos_only,nthr,random --seeds 0-4 --write-shipped
                                                            # notebook 06's file
python -m tiny_model train --methods all --seeds 0-4 --steps 150   # every method
python -m tiny_model train --config multi --steps 300 --eval-every 50 --pass-samples 64
    --methods grpo,pos_only,thr_exploit,thr_explore,thr_only,nll,smaug,nthr --seeds 0
                                                            # notebook 07's 300-step study, main
                                                            # arm, one seed (one command, on one
                                                            # line; python benchmarks/
                                                            # multi_study.py --commands --long
                                                            # prints every seed and arm)
python -m tiny_model train --config multi --steps 150 --stop-after 40 --eval-every 40
    --pass-samples 32 --methods grpo,pos_only,thr_exploit,thr_explore,thr_only --seeds 0-9
                                                            # its 40-step version (one command;
                                                            # --compare-shipped: within the
                                                            # bands measured across CPU kernels?)
python -m tiny_model probe --config large --device cuda --seeds 0-4    # the GPU configuration
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from tiny_model import experiment
from tiny_model.grpo import ALL_METHODS, LOSS_AGG_MODES, METHODS
from tiny_model.pooled import parse_seeds
from tiny_model.probe import OPTIMIZERS, ProbeConfig
from tiny_model.training import LR_SCHEDULES, TrainConfig
from tiny_model.warm import (
    CHECKPOINT_MULTI,
    LARGE_WARMUP,
    MULTI_WARMUP,
    WarmupConfig,
    cache_path,
    has_warm_model,
    load_warm,
    seconds_per_step,
)

CONFIGS = {"course": WarmupConfig(), "multi": MULTI_WARMUP, "large": LARGE_WARMUP}


def _method_list(text: str, known: tuple[str, ...]) -> tuple[str, ...]:
    if text.strip() == "all":
        return known
    methods = tuple(m.strip() for m in text.split(",") if m.strip())
    bad = [m for m in methods if m not in known]
    if bad or not methods or len(set(methods)) != len(methods):
        raise argparse.ArgumentTypeError(f"methods from {','.join(known)} or all; got {text!r}")
    return methods


def _methods(text: str) -> tuple[str, ...]:
    """The probe's methods: ``all`` is notebooks 05-06's four; notebook 07's may be named."""
    if text.strip() == "all":
        return METHODS
    return _method_list(text, ALL_METHODS)


def _train_methods(text: str) -> tuple[str, ...]:
    """Training's methods: those of 05-06 and notebook 07's (thr_exploit, thr_explore, nll, smaug)."""
    return _method_list(text, ALL_METHODS)


def _seeds(text: str) -> tuple[int, ...]:
    try:
        return parse_seeds(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tiny_model",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    common.add_argument(
        "--cpu-warmup",
        action="store_true",
        help="with --config large on a CPU: warm its model up here (hours; measured and said "
        "before it starts) instead of stopping",
    )
    common.add_argument(
        "--config",
        default="course",
        choices=tuple(CONFIGS),
        help="course: 3 single digits, 2x64 model (CPU, the shipped checkpoint); "
        "multi: the same with any pair's partial sum accepted (several right answers; its own "
        "shipped checkpoint); large: four 2-digit numbers, 4x256 model (warmed up on first use: minutes on a GPU)",
    )
    common.add_argument("--seed", type=int, default=0)
    common.add_argument(
        "--out", type=Path, default=None, help="output folder (default runs/<command>)"
    )

    w = sub.add_parser("warmup", parents=[common], help="supervised warm-up; writes the checkpoint")
    w.add_argument("--steps", type=int, default=None, help="default: the config's")
    w.add_argument(
        "--checkpoint",
        type=Path,
        default=None,
        help="default: the shipped file (course) or the cache (large)",
    )

    pr = sub.add_parser("probe", parents=[common], help="the one-step LLD probe (Eq. 2)")
    pr.add_argument(
        "--methods",
        type=_methods,
        default=METHODS,
        help="comma-separated (notebook 07's thr_exploit, thr_explore, nll, smaug too), or all "
        "(notebooks 05-06's four)",
    )
    pr.add_argument("--groups", type=int, default=ProbeConfig.groups, help="mixed groups per seed")
    pr.add_argument("--group-size", type=int, default=ProbeConfig.group_size)
    pr.add_argument("--lr", type=float, default=ProbeConfig.lr)
    pr.add_argument(
        "--optimizer",
        choices=OPTIMIZERS,
        default=ProbeConfig.optimizer,
        help="adam: Adam's first step -lr·g/(|g|+ε) (the paper's observations); "
        "sgd: -lr·g (the first-order control)",
    )
    pr.add_argument(
        "--seeds",
        type=_seeds,
        default=None,
        help="pool several seeds, e.g. 0-4 or 0,2,7 (overrides --seed); "
        "prints pooled and per-seed figures",
    )
    pr.add_argument("--random-draws", type=int, default=ProbeConfig.random_draws)

    t = sub.add_parser("train", parents=[common], help="GRPO runs: every method at every seed")
    t.add_argument(
        "--methods", type=_train_methods, default=METHODS, help="comma-separated, or all"
    )
    t.add_argument("--seeds", type=_seeds, default=None, help="e.g. 0-4 (overrides --seed)")
    t.add_argument("--steps", type=int, default=TrainConfig.steps)
    t.add_argument(
        "--stop-after",
        type=int,
        default=None,
        help="stop after this many steps, the --steps schedule unchanged (its first part)",
    )
    t.add_argument("--lr", type=float, default=TrainConfig.lr)
    t.add_argument("--lr-warmup", type=int, default=TrainConfig.lr_warmup)
    t.add_argument("--lr-schedule", choices=LR_SCHEDULES, default=TrainConfig.lr_schedule)
    t.add_argument("--prompts-per-step", type=int, default=TrainConfig.prompts_per_step)
    t.add_argument("--kl-coef", type=float, default=TrainConfig.kl_coef)
    t.add_argument("--loss-agg", choices=LOSS_AGG_MODES, default=TrainConfig.loss_agg)
    t.add_argument("--inner-steps", type=int, default=TrainConfig.inner_steps)
    t.add_argument("--eval-every", type=int, default=TrainConfig.eval_every)
    t.add_argument("--clip-eps", type=float, default=TrainConfig.clip_eps, help="lower clip bound")
    t.add_argument(
        "--clip-eps-high",
        type=float,
        default=TrainConfig.clip_eps_high,
        help="clip-higher: upper bound 1 + this (default: symmetric, 1 + --clip-eps)",
    )
    t.add_argument("--thr-p", type=float, default=TrainConfig.thr_p)
    t.add_argument(
        "--thr-dominance",
        choices=("thr", "score"),
        default=TrainConfig.thr_dominance,
        help="THR's dominant tokens: |A·s| > tau (thr) or |s| > tau (score, the first reading)",
    )
    t.add_argument(
        "--thr-mask",
        action="store_true",
        help="thr_exploit / thr_explore also mask the tokens that are not dominant (weight 0): "
        "the 'mask plus sign' reading of the THR paper's reviews",
    )
    t.add_argument(
        "--pass-samples",
        type=int,
        default=None,
        help="draws per held-out problem for Pass@K (K up to it); default 8, 64 for multi",
    )
    t.add_argument("--eval-samples", type=int, default=TrainConfig.eval_samples)
    t.add_argument("--nll-coef", type=float, default=TrainConfig.nll_coef)
    t.add_argument("--smaug-coef", type=float, default=TrainConfig.smaug_coef)
    t.add_argument(
        "--write-shipped",
        nargs="?",
        const="06",
        choices=("06", "07", "multi"),
        default=None,
        help="also copy metrics.json to the shipped study: 06 (default) "
        "tiny_model/results/train_seeds.json, notebook 06's (its 4 methods only); "
        "07 tiny_model/results/train_07.json (the course task's 8-method study); multi "
        "tiny_model/results/train_multi.json (notebook 07's study, --config multi)",
    )
    t.add_argument(
        "--compare-shipped",
        action="store_true",
        help="with --config multi and the shipped study's settings: compare every method's every "
        "figure with tiny_model/results/train_multi.json within the band measured across CPU "
        "kernels (exit status 1 when one lies outside)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        device = experiment.resolve_device(args.device)
    except ValueError as e:
        parser.error(str(e))
    out = args.out or Path("runs") / args.command
    warm = CONFIGS[args.config]
    if args.command == "train" and args.write_shipped == "06" and set(args.methods) - set(METHODS):
        parser.error("--write-shipped 06 takes notebook 06's methods only (07 for the others)")
    if args.command == "train" and (args.write_shipped == "multi") != (args.config == "multi"):
        if args.write_shipped is not None:
            parser.error("--write-shipped multi goes with --config multi, and only with it")
    if args.command == "train" and args.compare_shipped and args.config != "multi":
        parser.error("--compare-shipped compares with the multi-answer study: --config multi")
    if args.config == "large" and device.type == "cpu":
        refused = _large_on_cpu(args, warm)
        if refused:
            return refused
    if args.command == "warmup":
        config = dataclasses.replace(warm, seed=args.seed, steps=args.steps or warm.steps)
        shipped = {"course": experiment.CHECKPOINT, "multi": CHECKPOINT_MULTI}
        checkpoint = args.checkpoint or shipped.get(args.config) or cache_path(config)
        m = experiment.cmd_warmup(out, device, config, checkpoint)
        print(
            f"warm-up: {m['steps_taken']} steps, loss {m['final_loss']:.3f}, sampled accuracy "
            f"{m['sampled_accuracy']:.3f}, greedy {m['greedy_accuracy']:.3f}, first Adam step at "
            f"3e-4 changes ln π(correct) by {m['first_step_damage_3e-4']:+.3f}; "
            f"checkpoint {m['checkpoint']}"
        )
    else:
        from tiny_model.seam import Functions

        fns = Functions.from_solutions()
        seeds = args.seeds or (args.seed,)
        if args.command == "probe":
            config = ProbeConfig(
                methods=args.methods,
                groups=args.groups,
                group_size=args.group_size,
                lr=args.lr,
                optimizer=args.optimizer,
                random_draws=args.random_draws,
                seed=seeds[0],
                task=warm.task,
            )
            print(experiment.cmd_probe(out, device, fns, config, seeds, warm).table())
        else:
            study = experiment.cmd_train(
                out,
                device,
                fns,
                args.methods,
                seeds,
                warm=warm,
                write_shipped=args.write_shipped,
                steps=args.steps,
                stop_after=args.stop_after,
                lr=args.lr,
                lr_warmup=args.lr_warmup,
                lr_schedule=args.lr_schedule,
                prompts_per_step=args.prompts_per_step,
                kl_coef=args.kl_coef,
                loss_agg=args.loss_agg,
                inner_steps=args.inner_steps,
                eval_every=args.eval_every,
                clip_eps=args.clip_eps,
                clip_eps_high=args.clip_eps_high,
                thr_p=args.thr_p,
                thr_dominance=args.thr_dominance,
                thr_mask=args.thr_mask,
                pass_samples=args.pass_samples or (64 if args.config == "multi" else 8),
                eval_samples=args.eval_samples,
                nll_coef=args.nll_coef,
                smaug_coef=args.smaug_coef,
            )
            print(study.table())
            if args.compare_shipped:
                from tiny_model.study import compare_study

                print(f"wrote {out}/metrics.json and figures")
                try:
                    agrees, text = compare_study(study)
                except (ValueError, FileNotFoundError) as e:
                    print(f"cannot compare with the shipped study: {e}", file=sys.stderr)
                    return 2
                print(text)
                return 0 if agrees else 1
    print(f"wrote {out}/metrics.json and figures")
    return 0


def _large_on_cpu(args, warm: WarmupConfig) -> int:
    """The GPU configuration asked on a CPU: say what its warm-up would cost here, measured,
    and go on only with --cpu-warmup (then with a progress line every 5 %); 0 to go on."""
    steps = (args.steps or warm.steps) if args.command == "warmup" else warm.steps
    if args.command != "warmup" and has_warm_model(warm):
        return 0  # built before (cached): the run itself is what it is
    per_step = seconds_per_step(warm)
    hours = per_step * steps / 3600
    print(
        f"--config large warms a {warm.model.n_layer}x{warm.model.d_model} model up for up to "
        f"{steps:,} steps before anything else (it stops once {warm.target_accuracy:.0%} of "
        f"sampled answers are right; minutes on a GPU). On this CPU a step took "
        f"{per_step:.2f} s, so up to about {hours:.1f} h of warm-up alone.",
        file=sys.stderr,
    )
    if not args.cpu_warmup:
        print(
            "Not started: run it where there is a GPU (--device cuda), or add --cpu-warmup to "
            "warm up here (the model is then cached for later runs).",
            file=sys.stderr,
        )
        return 2
    if args.command == "warmup":
        return 0  # the warm-up command shows its own progress bar
    every = max(1, steps // 20)
    done = [0]

    def progress(n: int) -> None:
        done[0] += n
        if done[0] % every == 0:
            print(f"  warm-up step {done[0]:,} of at most {steps:,}", file=sys.stderr, flush=True)

    load_warm("cpu", warm, progress=progress)
    return 0


if __name__ == "__main__":
    sys.exit(main())
