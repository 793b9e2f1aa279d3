"""Training over seeds: every method from the same warm model, held-out curves, paired results.

``run_study`` trains each method once per seed (the seed fixes the problem
draws, the samples and the held-out evaluation draws, so at one seed the
methods differ only by their weights: the comparison is paired) and keeps,
per run, the held-out evaluations and the per-step metrics averaged over each
evaluation window: small enough to ship. ``SHIPPED`` is the full study of
``python -m tiny_model train --seeds 0-4 --methods all --write-shipped``,
which notebook 06 loads instead of training 20 runs live:

    >>> study = load_shipped()
    >>> print(study.table())
    >>> study.paired("nthr", "grpo", "heldout_accuracy")   # paired t over seeds
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from tiny_model.harness import deterministic, figure
from tiny_model.probe import verdict
from tiny_model.seam import Functions
from tiny_model.training import EVALUATED, TrainConfig, TrainResult, train
from tiny_model.warm import WarmupConfig, load_warm

SHIPPED = Path(__file__).resolve().parent / "results" / "train_seeds.json"
WINDOWED = ("reward_mean", "correct_logp_change", "selected_frac", "kl_ref", "zero_adv_frac")
PAIRS = (("nthr", "grpo"), ("nthr", "random"), ("pos_only", "grpo"))
COLORS = {"grpo": "tab:red", "pos_only": "tab:green", "nthr": "tab:blue", "random": "tab:gray"}
# two-sided 95 % quantiles of Student's t, df = 1..30 (beyond: the normal 1.96)
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip


def paired_t_interval(diffs: Sequence[float]) -> dict[str, float]:
    """Mean of paired differences (one per seed) and its 95 % Student-t interval."""
    d = np.asarray(diffs, dtype=np.float64)
    n = d.size
    if n < 2:
        raise ValueError("a paired interval needs at least 2 seeds")
    t = _T975[n - 2] if n - 1 <= len(_T975) else 1.96
    half = t * d.std(ddof=1) / math.sqrt(n)
    return {"mean": float(d.mean()), "ci_low": float(d.mean() - half), "ci_high": float(d.mean() + half), "n": n}  # fmt: skip


def run_summary(result: TrainResult) -> dict[str, list[float]]:
    """The held-out evaluations, and each windowed metric's mean over the steps since the last one."""
    h = result.history
    out = {k: list(h[k]) for k in EVALUATED}
    bounds = [int(s) for s in h["eval_step"]]
    for k in WINDOWED:
        values = np.asarray(h[k], dtype=np.float64)
        means = [float("nan")]  # nothing before the first evaluation (step 0)
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            w = values[lo:hi]
            w = w[~np.isnan(w)]
            means.append(float(w.mean()) if w.size else float("nan"))
        out[k] = means
    return out


@dataclass
class TrainStudy:
    """Runs of every method at every seed: ``runs[method][seed]`` = run_summary(...)."""

    config: TrainConfig  # the shared settings (method and seed: the first run's)
    methods: tuple[str, ...]
    seeds: tuple[int, ...]
    runs: dict[str, dict[int, dict[str, list[float]]]]

    def final(self, metric: str = "heldout_accuracy") -> dict[str, np.ndarray]:
        """method -> (seeds,) the metric at the last evaluation."""
        return {
            m: np.array([self.runs[m][s][metric][-1] for s in self.seeds]) for m in self.methods
        }

    def start(self, metric: str = "heldout_accuracy") -> float:
        """The metric of the warm model (step 0; the same for every run of a seed)."""
        return float(np.mean([self.runs[self.methods[0]][s][metric][0] for s in self.seeds]))

    def paired(self, a: str, b: str, metric: str = "heldout_accuracy") -> dict[str, float]:
        """Final ``metric`` of a minus b, paired by seed: mean and 95 % t interval."""
        fin = self.final(metric)
        return paired_t_interval(fin[a] - fin[b])

    def curve(self, method: str, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """(eval steps, (seeds, points) values) of one method."""
        steps = np.asarray(self.runs[method][self.seeds[0]]["eval_step"])
        return steps, np.array([self.runs[method][s][metric] for s in self.seeds])

    def table(self) -> str:
        c = self.config
        held = c.task.n_heldout
        lines = [
            f"training: {len(self.methods)} methods x {len(self.seeds)} seeds "
            f"({','.join(map(str, self.seeds))}), {c.steps} steps of {c.prompts_per_step} prompts"
            f" x {c.group_size}, Adam lr {c.lr:g} ({c.lr_warmup}-step ramp, {c.lr_schedule}); "
            f"held-out: {held} problems x {c.eval_samples} samples",
            f"warm model: held-out accuracy {self.start():.3f}, "
            f"ln π(correct) {self.start('heldout_answer_logp'):+.3f}",
            f"{'method':<10}{'final held-out accuracy per seed':<40}{'mean':>7}{'sd':>7}"
            f"{'ln π(correct)':>15}",
        ]
        acc, lp = self.final(), self.final("heldout_answer_logp")
        for m in self.methods:
            per = " ".join(f"{v:.3f}" for v in acc[m])
            sd = acc[m].std(ddof=1) if len(self.seeds) > 1 else float("nan")
            lines.append(f"{m:<10}{per:<40}{acc[m].mean():>7.3f}{sd:>7.3f}{lp[m].mean():>+15.3f}")
        if len(self.seeds) > 1:
            lines.append(f"paired over {len(self.seeds)} seeds, final values, 95 % t interval:")
            for a, b in PAIRS:
                if a in self.methods and b in self.methods:
                    for metric, label in (
                        ("heldout_accuracy", "accuracy"),
                        ("heldout_answer_logp", "ln π(correct)"),
                    ):
                        p = self.paired(a, b, metric)
                        lines.append(
                            f"  {a + '-' + b:<14}{label:<15}{p['mean']:+.4f} "
                            f"[{p['ci_low']:+.4f}, {p['ci_high']:+.4f}]  {verdict(p)}"
                        )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def to_dict(self) -> dict:
        out: dict = {
            "config": {
                k: v for k, v in self.config.to_dict().items() if k not in ("method", "seed")
            },
            "methods": list(self.methods),
            "seeds": list(self.seeds),
            "runs": {m: {str(s): self.runs[m][s] for s in self.seeds} for m in self.methods},
            "final": {
                metric: {m: v.tolist() for m, v in self.final(metric).items()}
                for metric in ("heldout_accuracy", "heldout_answer_logp")
            },
        }
        if len(self.seeds) > 1:
            out["paired"] = {
                f"{a}-{b}": {
                    metric: self.paired(a, b, metric)
                    for metric in ("heldout_accuracy", "heldout_answer_logp")
                }
                for a, b in PAIRS
                if a in self.methods and b in self.methods
            }
        return out

    @classmethod
    def from_dict(cls, d: dict) -> TrainStudy:
        seeds = tuple(int(s) for s in d["seeds"])
        methods = tuple(d["methods"])
        config = TrainConfig.from_dict({**d["config"], "method": methods[0], "seed": seeds[0]})
        runs = {m: {int(s): v for s, v in d["runs"][m].items()} for m in methods}
        return cls(config=config, methods=methods, seeds=seeds, runs=runs)


def run_study(
    fns: Functions,
    methods: Sequence[str],
    seeds: Iterable[int],
    *,
    device: str | torch.device = "cpu",
    warm: WarmupConfig | None = None,
    progress: Callable[[int], object] | None = None,
    **overrides: object,
) -> TrainStudy:
    """Train every method at every seed from the warm model (``overrides``: TrainConfig fields)."""
    seeds = tuple(int(s) for s in seeds)
    methods = tuple(methods)
    if not seeds or not methods:
        raise ValueError("need at least one method and one seed")
    if len(set(seeds)) != len(seeds) or len(set(methods)) != len(methods):
        raise ValueError(f"each method and seed once; got {methods} x {seeds}")
    warm = warm or WarmupConfig()
    overrides.setdefault("task", warm.task)
    runs: dict[str, dict[int, dict[str, list[float]]]] = {m: {} for m in methods}
    for s in seeds:
        for m in methods:
            config = TrainConfig(method=m, seed=s, **overrides)
            model = load_warm(device, warm).train()
            with deterministic():
                result = train(fns, model, config, progress=progress)
            runs[m][s] = run_summary(result)
    first = TrainConfig(method=methods[0], seed=seeds[0], **overrides)
    return TrainStudy(config=first, methods=methods, seeds=seeds, runs=runs)


def load_shipped(path: Path = SHIPPED) -> TrainStudy:
    """The shipped multi-seed study (regenerate it with the CLI's ``--write-shipped``)."""
    import json

    return TrainStudy.from_dict(json.loads(path.read_text()))


def study_figure(study: TrainStudy):
    """Held-out accuracy and ln π(correct), and the batch reward: mean over seeds and min-max band."""
    fig = figure(13, 3.8)
    axes = fig.subplots(1, 3)
    panels = (
        ("heldout_accuracy", "held-out sampled accuracy"),
        ("heldout_answer_logp", "held-out mean ln π(correct scratchpad | x)"),
        ("reward_mean", "batch reward (mean over each window)"),
    )
    for ax, (metric, title) in zip(axes, panels):
        for m in study.methods:
            steps, values = study.curve(m, metric)
            if metric in WINDOWED:  # no window before the first evaluation
                steps, values = steps[1:], values[:, 1:]
            mean = np.nanmean(values, axis=0)
            lo, hi = np.nanmin(values, axis=0), np.nanmax(values, axis=0)
            color = COLORS.get(m)
            ax.plot(steps, mean, color=color, label=m)
            ax.fill_between(steps, lo, hi, color=color, alpha=0.15, lw=0)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("training step")
        ax.legend(fontsize=8)
    fig.suptitle(f"mean over {len(study.seeds)} seeds; band: min to max", fontsize=9)
    fig.tight_layout()
    return fig
