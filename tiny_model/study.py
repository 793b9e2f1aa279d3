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

from tiny_model.grpo import REWEIGHTING
from tiny_model.harness import deterministic, figure
from tiny_model.probe import verdict
from tiny_model.seam import Functions
from tiny_model.thr import NEW_METHODS
from tiny_model.training import (
    DIVERSITY,
    EVALUATED,
    TrainConfig,
    TrainResult,
    step0_evaluation,
    train,
)
from tiny_model.warm import WarmupConfig, load_warm

SHIPPED = Path(__file__).resolve().parent / "results" / "train_seeds.json"
SHIPPED_07 = Path(__file__).resolve().parent / "results" / "train_07.json"
"""The course task's 8-method study: the first 50 steps (docs/notebook-07-plan.md)."""
SHIPPED_MULTI = Path(__file__).resolve().parent / "results" / "train_multi.json"
"""Notebook 07's study: the multi-answer task (``--config multi``), where the methods separate."""
WINDOWED = (
    "reward_mean",
    "correct_logp_change",
    "selected_frac",
    "kl_ref",
    "zero_adv_frac",
    "correct_logp",
    "clip_frac",
) + REWEIGHTING
PAIRS_06 = (("nthr", "grpo"), ("nthr", "random"), ("pos_only", "grpo"))
PAIRS = PAIRS_06 + tuple((m, "grpo") for m in NEW_METHODS)
COLORS = {
    "grpo": "tab:red",
    "pos_only": "tab:green",
    "nthr": "tab:blue",
    "random": "tab:gray",
    "thr_exploit": "tab:purple",
    "thr_explore": "tab:orange",
    "nll": "tab:brown",
    "smaug": "tab:olive",
    "thr_only": "tab:cyan",
}
BEYOND = ("heldout_greedy_accuracy",) + tuple(f"heldout_pass@{2**i}" for i in range(7)) + DIVERSITY
"""Final held-out metrics beyond accuracy (each study holds those its config records)."""
ONLINE = ("correct_logp_change", "correct_logp")
"""Per-step metrics on the batch's freshly sampled correct responses, averaged over the run."""
LABELS = {
    "heldout_accuracy": "sampled acc.",
    "heldout_answer_logp": "ln π(correct)",
    "heldout_greedy_accuracy": "greedy acc.",
    "correct_logp_change": "online Eq. 2",
    "correct_logp": "online ln π(y+)",
    **{f"heldout_pass@{2**i}": f"Pass@{2**i}" for i in range(7)},
    "heldout_distinct_correct": "distinct right",
    "heldout_top_path_share": "top path share",
    "heldout_path_entropy": "path entropy",
}
# two-sided 95 % quantiles of Student's t, df = 1..30 (beyond: the normal 1.96)
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip


def _t975(df: int) -> float:
    """Student's two-sided 95 % quantile at ``df`` degrees of freedom (beyond 30: 1.96)."""
    return _T975[df - 1] if df <= len(_T975) else 1.96


def paired_t_interval(diffs: Sequence[float]) -> dict[str, float]:
    """Mean of paired differences (one per seed) and its 95 % Student-t interval."""
    d = np.asarray(diffs, dtype=np.float64)
    n = d.size
    if n < 2:
        raise ValueError("a paired interval needs at least 2 seeds")
    half = _t975(n - 1) * d.std(ddof=1) / math.sqrt(n)
    return {"mean": float(d.mean()), "ci_low": float(d.mean() - half), "ci_high": float(d.mean() + half), "n": n}  # fmt: skip


def run_summary(result: TrainResult) -> dict[str, list[float]]:
    """The held-out evaluations, and each windowed metric's mean over the steps since the last one."""
    h = result.history
    out = {k: list(v) for k, v in h.items() if k in EVALUATED or k.startswith("heldout_")}
    bounds = [int(s) for s in h["eval_step"]]
    for k in (k for k in WINDOWED if k in h):  # runs made before a metric was logged lack it
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
        """Final ``metric`` of a minus b, paired by seed: mean and 95 % t interval.

        For the online metrics (ONLINE) the value of a run is its mean over the whole run."""
        fin = self.run_mean(metric) if metric in ONLINE else self.final(metric)
        return paired_t_interval(fin[a] - fin[b])

    def run_mean(self, metric: str) -> dict[str, np.ndarray]:
        """method -> (seeds,) a windowed metric averaged over every window of the run."""
        return {
            m: np.array([float(np.nanmean(self.runs[m][s][metric][1:])) for s in self.seeds])
            for m in self.methods
        }

    def has(self, metric: str) -> bool:
        """Does every run hold ``metric`` (studies made before notebook 07 lack its metrics)?"""
        return all(metric in self.runs[m][s] for m in self.methods for s in self.seeds)

    def beyond_table(self) -> str:
        """Notebook 07's metrics: greedy accuracy, Pass@K, online Eq. 2, each method minus GRPO."""
        metrics = [m for m in BEYOND + ONLINE if self.has(m)]
        head = f"{'method':<12}" + "".join(f"{LABELS[m]:>16}" for m in metrics)
        lines = ["final held-out (greedy, Pass@K) and run-mean online metrics, mean over seeds:"]
        lines.append(head)
        for meth in self.methods:
            cells = []
            for metric in metrics:
                v = self.run_mean(metric) if metric in ONLINE else self.final(metric)
                cells.append(f"{v[meth].mean():>16.4f}")
            lines.append(f"{meth:<12}" + "".join(cells))
        if len(self.seeds) > 1 and "grpo" in self.methods:
            lines.append(
                f"each method - GRPO, paired over {len(self.seeds)} seeds, 95 % t interval:"
            )
            for meth in self.methods:
                if meth == "grpo":
                    continue
                for metric in ("heldout_accuracy",) + tuple(metrics):
                    p = self.paired(meth, "grpo", metric)
                    lines.append(
                        f"  {meth + '-grpo':<18}{LABELS[metric]:<17}{p['mean']:+.4f} "
                        f"[{p['ci_low']:+.4f}, {p['ci_high']:+.4f}]  {verdict(p)}"
                    )
        return "\n".join(lines)

    def curve(self, method: str, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """(eval steps, (seeds, points) values) of one method."""
        steps = np.asarray(self.runs[method][self.seeds[0]]["eval_step"])
        return steps, np.array([self.runs[method][s][metric] for s in self.seeds])

    def table(self) -> str:
        c = self.config
        held = c.task.n_heldout
        w = max(10, 1 + max(len(m) for m in self.methods))  # 10: notebook 06's layout
        lines = [
            f"training: {len(self.methods)} methods x {len(self.seeds)} seeds "
            f"({','.join(map(str, self.seeds))}), {c.steps} steps"
            + (f" (stopped after {c.stop_after})" if c.stop_after is not None else "")
            + f" of {c.prompts_per_step} prompts"
            f" x {c.group_size}, Adam lr {c.lr:g} ({c.lr_warmup}-step ramp, {c.lr_schedule}); "
            f"held-out: {held} problems x {c.eval_samples} samples",
            f"warm model: held-out accuracy {self.start():.3f}, "
            f"ln π(correct) {self.start('heldout_answer_logp'):+.3f}",
            f"{'method':<{w}}{'final held-out accuracy per seed':<40}{'mean':>7}{'sd':>7}"
            f"{'ln π(correct)':>15}",
        ]
        acc, lp = self.final(), self.final("heldout_answer_logp")
        for m in self.methods:
            per = " ".join(f"{v:.3f}" for v in acc[m])
            sd = acc[m].std(ddof=1) if len(self.seeds) > 1 else float("nan")
            lines.append(f"{m:<{w}}{per:<40}{acc[m].mean():>7.3f}{sd:>7.3f}{lp[m].mean():>+15.3f}")
        if len(self.seeds) > 1:
            lines.append(f"paired over {len(self.seeds)} seeds, final values, 95 % t interval:")
            for a, b in PAIRS_06:
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
        if self.has("heldout_greedy_accuracy"):
            lines.append(self.beyond_table())
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
        beyond = [m for m in BEYOND if self.has(m)]
        online = [m for m in ONLINE if self.has(m)] if beyond else []
        for metric in beyond:
            out["final"][metric] = {m: v.tolist() for m, v in self.final(metric).items()}
        if online:
            out["run_mean"] = {
                metric: {m: v.tolist() for m, v in self.run_mean(metric).items()}
                for metric in online
            }
        if len(self.seeds) > 1:
            out["paired"] = {
                f"{a}-{b}": {
                    metric: self.paired(a, b, metric)
                    for metric in ("heldout_accuracy", "heldout_answer_logp", *beyond, *online)
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
        # Every method at a seed starts from the same warm model and evaluates it on the same
        # draws: the first run's step-0 evaluation is the others' (bit for bit), done once.
        step0 = None
        for m in methods:
            config = TrainConfig(method=m, seed=s, **overrides)
            model = load_warm(device, warm).train()
            with deterministic():
                result = train(fns, model, config, progress=progress, step0=step0)
            if step0 is None:
                step0 = step0_evaluation(result.history)
            runs[m][s] = run_summary(result)
    first = TrainConfig(method=methods[0], seed=seeds[0], **overrides)
    return TrainStudy(config=first, methods=methods, seeds=seeds, runs=runs)


# ------------------------------------------------------------------------- other CPUs
# torch picks its CPU kernels at run time (ATen by ATEN_CPU_CAPABILITY, matrix products by MKL
# and oneDNN), so another CPU rounds the last float32 bit differently from step 0 on, and the
# shipped file was built on one machine. benchmarks/cross_kernel_spread.py measures how far a
# rerun lands from the shipped file when only the kernels change; the tolerances below are
# those figures times a margin (the measured figures are in the comments).

CROSS_CPU_RTOL = 1e-3
"""Relative tolerance for the continuous metrics of a short slice of training (kl_ref,
correct_logp_change, heldout_answer_logp over the first 50 steps). Measured against the shipped
file on an x86-64 AMD CPU: at most 1.7e-5 under ATEN_CPU_CAPABILITY=default, 4.9e-7 under avx2,
8.6e-6 with oneDNN off, 8.3e-7 with MKL_CBWR=COMPATIBLE; 1.2e-6 on an AVX-512 Xeon
(its first metric); 1.5e-4 with every weight of the warm model perturbed by a relative 1e-6, a
stand-in for kernels not at hand (1e-5 perturbations make the run diverge within 50 steps:
no tolerance of this kind covers that). Margin: 6x the largest."""

CROSS_CPU_FLIPS = 4
"""Samples that may be drawn differently in such a slice: a probability nudged by the last bit
can move a draw across the edge of its bin. Measured: none under the four kernel settings
above, one of the 800 held-out draws at step 50 under a 1e-6 perturbation; a count metric
(held-out accuracy, reward_mean, zero_adv_frac) may move by this many samples' worth."""

LIVE_TOLERANCE = {
    50: {"heldout_accuracy": 0.005, "heldout_answer_logp": 1e-3},
    100: {"heldout_accuracy": 0.04, "heldout_answer_logp": 0.12},
}
"""How far notebook 06's live run (NTHR, seed 0, 100 steps) may land from the shipped run when
only the CPU kernels differ: step -> metric -> absolute tolerance (accuracy; nats). Measured
against the shipped file at step 50: no accuracy difference and at most 1.8e-6 nats (the four
kernel settings), 1.7e-5 nats (1e-6 weight perturbations, 2 seeds); at step 100, after draws near
a bin's edge have compounded for 50 more steps: at most 0.0025 and 4.2e-4 nats (kernels), 0.020
and 0.061 nats (perturbations). Step 50 tells a learner's mistake from rounding; step 100 is
shown with its wider band."""


LIVE_TOLERANCE_07 = {40: {"heldout_accuracy": 0.025, "heldout_answer_logp": 0.035}}
"""How far notebook 07's live run (thr_explore on the multi-answer task, seed 0, 40 steps) may
land from the shipped run when only the CPU kernels differ. Measured on an AVX-512 CPU (which
built the file) under ATEN_CPU_CAPABILITY=default and avx2 (benchmarks/cross_kernel_spread.py
--parts live07): held-out accuracy -0.00125 and +0.0075 (1 and 6 of the 800 draws), ln π(correct)
+2.3e-3 and +1.07e-2 nats; its first 10 steps had moved by at most 1.8e-5 relative (--parts
methods), so the spread comes from THR's threshold: a token near it flips and the runs part.
Margin: about 3x. Plain GRPO at the same seed lands 0.064 and 0.32 nats away. The whole study
rerun under the same two settings (MULTI_BANDS) moved no thr_explore run further than these, at
any of the ten seeds."""


def compare_with_shipped(
    live: dict[str, list[float]],
    shipped: dict[str, list[float]],
    baseline: dict[str, list[float]] | None = None,
    tolerance: dict[int, dict[str, float]] | None = None,
    name: str = "NTHR",
) -> tuple[bool, str]:
    """Does a live run land on a shipped run at the evaluations both made, within what another CPU
    moves it?

    ``live`` and ``shipped`` hold ``eval_step`` and the held-out metrics (a run's history, or
    one of ``TrainStudy.runs``); ``baseline``, another shipped run at the same seed (plain
    GRPO for an NTHR run), gives the scale of a real difference; ``name`` is the live run's
    method, as the text calls it. Returns (agrees, text): the
    points side by side, the differences in numbers, and what they mean.
    """
    tol = LIVE_TOLERANCE if tolerance is None else tolerance
    labels = {"heldout_accuracy": "accuracy", "heldout_answer_logp": "ln π(correct)"}
    common = [s for s in live["eval_step"] if s in shipped["eval_step"] and int(s) in tol]
    if not common:
        raise ValueError(
            f"the live run and the shipped run share no evaluation at a step with a tolerance "
            f"({sorted(tol)})"
        )

    def at(run: dict[str, list[float]], metric: str, step: float) -> float:
        return float(run[metric][run["eval_step"].index(step)])

    lines, worst = [], 0.0
    for s in common:
        cells = []
        for metric, label in labels.items():
            mine, theirs = at(live, metric, s), at(shipped, metric, s)
            band = tol[int(s)][metric]
            worst = max(worst, abs(mine - theirs) / band)
            cells.append(
                f"{label} {mine:.4f} (shipped {theirs:.4f}: {mine - theirs:+.1e}, "
                f"another CPU ±{band:g})"
            )
        lines.append(f"step {int(s):>3}: " + "; ".join(cells))
    lines.append(
        "Another CPU rounds the last float32 bit differently (torch picks its kernels by CPU); "
        "the ± bands are how far that moved this run, measured, with a margin. They widen with "
        "the steps: a draw that lands in another bin changes every later step."
    )
    if baseline is not None:
        gaps = [
            f"{label} {at(baseline, metric, s) - at(shipped, metric, s):+.3f} at step {int(s)}"
            for s in common
            if s in baseline["eval_step"]
            for metric, label in labels.items()
        ]
        if gaps:
            lines.append(
                "For scale, what a real difference looks like: plain GRPO at the same seed lands "
                f"{', '.join(gaps)} away from the shipped {name} run."
            )
    agrees = worst <= 1.0
    if agrees:
        lines.append(
            "Agrees: your functions compute what the reference computes, or differ too little "
            "to move training measurably (the hidden tests check them exactly)."
        )
    else:
        lines.append(
            f"Differs: {worst:.1f} times the band another CPU explains. Your functions select or "
            "weight other tokens than the reference's; the hidden tests will say which."
        )
    return agrees, "\n".join(lines)


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


# -------------------------------------------------------------- the multi-answer study
MULTI_COLUMNS = (
    ("heldout_greedy_accuracy", "greedy"),
    ("heldout_pass@1", "Pass@1"),
    ("heldout_pass@4", "Pass@4"),
    ("heldout_pass@16", "Pass@16"),
    ("heldout_pass@32", "Pass@32"),
    ("heldout_pass@64", "Pass@64"),
    ("heldout_distinct_correct", "distinct"),
    ("heldout_top_path_share", "top path"),
)
"""The multi-answer study's columns (those it holds): greedy accuracy, Pass@K, how many distinct
right answers a problem's draws hold, and the commonest right answer's share of the right draws."""


def merge_studies(studies: Sequence[TrainStudy]) -> TrainStudy:
    """One study from studies of the same methods and settings at disjoint seeds.

    Seeds are independent (each seed's runs start from the warm model with their own draws), so
    running seeds in separate processes and merging gives the study one process would make."""
    first = studies[0]
    shared = {k: v for k, v in first.config.to_dict().items() if k not in ("method", "seed")}
    runs: dict[str, dict[int, dict[str, list[float]]]] = {m: {} for m in first.methods}
    for s in studies:
        theirs = {k: v for k, v in s.config.to_dict().items() if k not in ("method", "seed")}
        if s.methods != first.methods or theirs != shared:
            raise ValueError("studies to merge need the same methods and settings")
        if set(s.seeds) & {seed for m in runs.values() for seed in m}:
            raise ValueError(f"seed(s) {sorted(s.seeds)} appear in two studies")
        for m in s.methods:
            runs[m].update(s.runs[m])
    seeds = tuple(sorted(runs[first.methods[0]]))
    config = TrainConfig.from_dict({**shared, "method": first.methods[0], "seed": seeds[0]})
    return TrainStudy(config=config, methods=first.methods, seeds=seeds, runs=runs)


# ------------------------------------------- the multi-answer study on other CPU kernels
MULTI_BANDS = Path(__file__).resolve().parent / "results" / "train_multi_bands.json"
"""How far each figure of the multi-answer study moved when the study was rerun with only the CPU
kernels changed, and the band a rerun must stay within: ``{"runs", "means", "paired"}`` ->
method -> metric -> absolute band, the measured figures beside them (``"measured"``), the
reruns' final values (``"reruns"``) and where they ran. Written by ``python
benchmarks/multi_study.py --bands``; read by ``compare_study`` (and ``python -m tiny_model
train --compare-shipped``)."""
BAND_MARGIN = 3.0
"""A band is this many times the largest difference measured (or BAND_FLOOR, if larger)."""
BAND_FLOOR = {
    "heldout_accuracy": 2 / 800,
    "heldout_greedy_accuracy": 2 / 200,
    "heldout_distinct_correct": 2 / 200,
    "heldout_top_path_share": 0.005,
    "heldout_answer_logp": 5e-3,
}
"""The least band of a metric, for a figure that came out identical under every kernel measured:
two draws' worth for the counts (800 held-out samples, 200 greedy answers, 200 problems' distinct
answers), 5e-3 for the top path's share and in nats; Pass@K: two of its 200 x 32 draws
(``_floor``). A method that reproduced bit for bit here would otherwise get a band of 0, which
the first draw moved on another CPU breaks."""


def _floor(metric: str, study: TrainStudy) -> float:
    if metric.startswith("heldout_pass@"):
        return 2 / (study.config.task.n_heldout * (study.config.pass_samples or 8))
    return BAND_FLOOR.get(metric, 0.0)


def band_metrics(study: TrainStudy) -> tuple[str, ...]:
    """The held-out metrics a multi-answer study holds (every figure its table and text quote)."""
    keys = sorted(
        k for k in study.runs[study.methods[0]][study.seeds[0]] if k.startswith("heldout_")
    )
    return tuple(k for k in keys if study.has(k))


def subset(study: TrainStudy, seeds: Iterable[int]) -> TrainStudy:
    """The same study at some of its seeds (in its order)."""
    keep = tuple(s for s in study.seeds if s in set(seeds))
    if not keep:
        raise ValueError(f"none of the seeds {sorted(seeds)} is in the study ({study.seeds})")
    runs = {m: {s: study.runs[m][s] for s in keep} for m in study.methods}
    return TrainStudy(config=study.config, methods=study.methods, seeds=keep, runs=runs)


def _same_settings(a: TrainStudy, b: TrainStudy) -> list[str]:
    da = {k: v for k, v in a.config.to_dict().items() if k not in ("method", "seed")}
    db = {k: v for k, v in b.config.to_dict().items() if k not in ("method", "seed")}
    return [f"{k}: {da.get(k)!r} against the shipped {db.get(k)!r}" for k in sorted(set(da) | set(db)) if da.get(k) != db.get(k)]  # fmt: skip


def _differences(rerun: TrainStudy, shipped: TrainStudy) -> dict[str, dict[str, dict[str, float]]]:
    """|rerun - shipped| of every figure both hold: "runs" (each seed's every evaluation),
    "means" (the mean over the rerun's seeds at the end; "warm model": at step 0) and "paired"
    (method - GRPO over those seeds: the mean and both ends of the 95 % interval)."""
    bad = _same_settings(rerun, shipped)
    if bad:
        raise ValueError("the rerun's settings are not the shipped study's: " + "; ".join(bad))
    if missing := [m for m in rerun.methods if m not in shipped.methods]:
        raise ValueError(f"method(s) {missing} are not in the shipped study ({shipped.methods})")
    if extra := [s for s in rerun.seeds if s not in shipped.seeds]:
        raise ValueError(f"seed(s) {extra} are not in the shipped study ({shipped.seeds})")
    ship = subset(shipped, rerun.seeds)
    metrics = [k for k in band_metrics(shipped) if rerun.has(k)]
    out: dict[str, dict[str, dict[str, float]]] = {"runs": {}, "means": {}, "paired": {}}
    for m in rerun.methods:
        out["runs"][m], out["means"][m] = {}, {}
        for k in metrics:
            out["runs"][m][k] = max(
                abs(a - b)
                for s in rerun.seeds
                for a, b in zip(rerun.runs[m][s][k], ship.runs[m][s][k], strict=True)
            )
            out["means"][m][k] = abs(rerun.final(k)[m].mean() - ship.final(k)[m].mean())
        if m != "grpo" and "grpo" in rerun.methods and len(rerun.seeds) > 1:
            out["paired"][m] = {}
            for k in metrics:
                p, q = rerun.paired(m, "grpo", k), ship.paired(m, "grpo", k)
                out["paired"][m][k] = max(abs(p[f] - q[f]) for f in ("mean", "ci_low", "ci_high"))
    out["means"]["warm model"] = {k: abs(rerun.start(k) - ship.start(k)) for k in metrics}
    return out


def measure_bands(
    shipped: TrainStudy, reruns: dict[str, TrainStudy], margin: float = BAND_MARGIN
) -> dict:
    """The bands of ``shipped`` from ``reruns`` (setting name -> the study rerun under it, every
    method of the shipped study at some of its seeds): each figure's largest difference over the
    reruns times ``margin``, at least its floor (BAND_FLOOR)."""
    if not reruns:
        raise ValueError("no rerun to measure a band from")
    for name, r in reruns.items():
        if missing := [m for m in shipped.methods if m not in r.methods]:
            raise ValueError(f"the rerun {name!r} lacks method(s) {missing}: no band for them")
    diffs = [_differences(r, shipped) for r in reruns.values()]
    measured: dict[str, dict[str, dict[str, float]]] = {}
    for part in ("runs", "means", "paired"):
        measured[part] = {}
        for d in diffs:
            for m, figs in d[part].items():
                for k, v in figs.items():
                    row = measured[part].setdefault(m, {})
                    row[k] = max(row.get(k, 0.0), float(v))
    bands = {
        part: {
            m: {k: max(margin * v, _floor(k, shipped)) for k, v in figs.items()}
            for m, figs in rows.items()
        }
        for part, rows in measured.items()
    }
    metrics = band_metrics(shipped)
    return {
        "margin": margin,
        "metrics": list(metrics),
        **bands,
        "measured": measured,
        "reruns": {
            name: {
                "seeds": list(r.seeds),
                "final": {k: {m: v.tolist() for m, v in r.final(k).items()} for k in metrics},
                "start": {
                    k: {m: [r.runs[m][s][k][0] for s in r.seeds] for m in r.methods}
                    for k in metrics
                },  # fmt: skip
            }
            for name, r in reruns.items()
        },
    }


def load_bands(path: Path = MULTI_BANDS) -> dict:
    """The multi-answer study's cross-kernel bands (see MULTI_BANDS)."""
    import json

    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: the multi-answer study's cross-CPU bands are measured by "
            "python benchmarks/multi_study.py --bands"
        )
    return json.loads(path.read_text())


def recorded_rerun(bands: dict, name: str, shipped: TrainStudy) -> TrainStudy:
    """A rerun the band file records (its step-0 and final values of every held-out metric), as
    a study with the shipped settings: what ``compare_study`` measured the bands against."""
    rec = bands["reruns"][name]
    seeds = tuple(int(s) for s in rec["seeds"])
    last = float(shipped.runs[shipped.methods[0]][shipped.seeds[0]]["eval_step"][-1])
    runs = {
        m: {
            s: {"eval_step": [0.0, last]}
            | {k: [rec["start"][k][m][i], rec["final"][k][m][i]] for k in rec["final"]}
            for i, s in enumerate(seeds)
        }
        for m in shipped.methods
    }
    return TrainStudy(config=shipped.config, methods=shipped.methods, seeds=seeds, runs=runs)


def missing_bands(shipped: TrainStudy, bands: dict) -> list[str]:
    """Every figure of ``shipped`` that ``bands`` gives no band for (empty: all covered)."""
    out = []
    for k in band_metrics(shipped):
        for m in shipped.methods:
            if k not in bands.get("runs", {}).get(m, {}):
                out.append(f"{m} {k} (each run)")
            if k not in bands.get("means", {}).get(m, {}):
                out.append(f"{m} {k} (mean over seeds)")
            if m != "grpo" and k not in bands.get("paired", {}).get(m, {}):
                out.append(f"{m} - grpo {k} (paired)")
        if k not in bands.get("means", {}).get("warm model", {}):
            out.append(f"warm model {k}")
    return out


def compare_study(
    rerun: TrainStudy, shipped: TrainStudy | None = None, bands: dict | None = None
) -> tuple[bool, str]:
    """Does a rerun of the multi-answer study land on the shipped one within the bands measured
    under other CPU kernels, for every method and every figure?

    Each run (a seed's every evaluation) is held to its method's "runs" band; when the rerun
    holds all the shipped seeds, the means over seeds (the table's rows, the warm model's too) to
    the "means" bands and each method's paired difference with GRPO (mean and interval ends) to
    the "paired" bands. Raises ValueError when a shipped method or figure has no band, or when
    the rerun's settings, methods or seeds are not the shipped study's. Returns (agrees, text)."""
    shipped = shipped if shipped is not None else load_shipped(SHIPPED_MULTI)
    bands = bands if bands is not None else load_bands()
    if missing := missing_bands(shipped, bands):
        raise ValueError(f"no cross-CPU band for {len(missing)} figure(s): " + ", ".join(missing[:8]))  # fmt: skip
    diffs = _differences(rerun, shipped)
    whole = set(rerun.seeds) == set(shipped.seeds)
    parts = ("runs", "means", "paired") if whole else ("runs",)
    outside, lines = [], []
    lines.append(
        f"rerun: {len(rerun.methods)} method(s) x seed(s) {','.join(map(str, rerun.seeds))} "
        "against the shipped study; largest |difference| / band per method (1 = at the band):"
    )
    for m in [*rerun.methods, "warm model"]:
        cells = []
        for part in parts:
            figs = diffs[part].get(m, {})
            if not figs:
                continue
            ratio = {k: v / bands[part][m][k] for k, v in figs.items()}
            k = max(ratio, key=ratio.get)
            cells.append(f"{part} {ratio[k]:.2f} ({LABELS.get(k, k)} {figs[k]:.2g} of ±{bands[part][m][k]:.2g})")  # fmt: skip
            outside += [
                f"{m} {LABELS.get(k, k)} ({part}): {figs[k]:.3g} outside ±{bands[part][m][k]:.3g}"
                for k in figs
                if ratio[k] > 1
            ]
        if cells:
            lines.append(f"  {m:<12} " + "; ".join(cells))
    if not whole:
        lines.append(
            "Means over seeds and the paired intervals are compared only when the rerun holds "
            f"every shipped seed ({','.join(map(str, shipped.seeds))})."
        )
    if outside:
        lines.append(f"Differs: {len(outside)} figure(s) outside the band another CPU explains:")
        lines += [f"  {o}" for o in outside]
    else:
        lines.append("Agrees: every figure within the band measured across CPU kernels.")
    return not outside, "\n".join(lines)


def bands_table(shipped: TrainStudy, bands: dict) -> str:
    """The reruns under other kernels in at most 88 characters a line: per method the largest
    move of a run, of the mean over seeds and of a paired difference with GRPO (its mean or an
    interval's end, any figure), then the shipped conclusions a band could flip."""
    import textwrap

    cols = (
        ("heldout_greedy_accuracy", "greedy"),
        ("heldout_pass@1", "Pass@1"),
        ("heldout_distinct_correct", "distinct"),
        ("heldout_answer_logp", "ln π"),
    )
    names = ", ".join(bands["reruns"])
    measured = bands["measured"]
    lines = [
        *textwrap.wrap(f"the study rerun with CPU kernel settings {names}:", 88),
        "largest |rerun - shipped|: of a run, of the mean over seeds, of a paired difference",
        f"{'':<12}" + "".join(f"{label:>9}" for _, label in cols)
        + "".join(f"{label:>9}" for label in ("greedy", "Pass@1", "any")),
        f"{'':<12}{'(a run)':>36}{'(the mean)':>18}{'(paired)':>9}",
    ]  # fmt: skip
    for m in [*shipped.methods, "warm model"]:
        run, mean = measured["runs"].get(m), measured["means"][m]
        cells = "".join(f"{run[k]:>9.2g}" for k, _ in cols) if run else f"{'':>36}"
        cells += "".join(f"{mean[k]:>9.2g}" for k, _ in cols[:2])
        paired = measured["paired"].get(m)
        cells += f"{max(paired.values()):>9.2g}" if paired else f"{'':>9}"
        lines.append(f"{m:<12}{cells}".rstrip())
    fragile = fragile_conclusions(shipped, bands)
    lines.append(f"bands: {bands['margin']:g} x the largest move, at least two draws' worth")
    lines.append(
        "paired intervals within their band of 0 (a rerun elsewhere may flip them):"
        if fragile
        else "no paired interval lies within its band of 0"
    )
    return "\n".join(lines + [f"  {f}" for f in fragile])


def fragile_conclusions(shipped: TrainStudy, bands: dict) -> list[str]:
    """The shipped paired intervals (method - GRPO) that a rerun within the bands could flip: one
    that excludes 0 by less than its band (it could come to include 0), or one that includes 0
    and whose nearer end lies within its band of 0 (it could come to exclude 0)."""
    out = []
    for m, figs in bands["paired"].items():
        for k, band in figs.items():
            p = shipped.paired(m, "grpo", k)
            lo, hi = p["ci_low"], p["ci_high"]
            if lo > 0 or hi < 0:
                near, verb = (lo if lo > 0 else -hi), "excludes"
            else:
                near, verb = min(-lo, hi), "includes"
            if near <= band:
                out.append(
                    f"{m} - grpo {LABELS.get(k, k)} [{lo:+.5f}, {hi:+.5f}]: {verb} 0 by "
                    f"{near:.5f} < {band:.5f}"
                )
    return out


def multi_table(study: TrainStudy, width: int = 9) -> str:
    """The multi-answer study in at most 88 characters a line: the warm model and each method's
    mean over seeds, then each method minus GRPO (* where the paired 95 % t interval excludes 0),
    then those intervals in full."""
    cols = [(k, label) for k, label in MULTI_COLUMNS if study.has(k)]
    c = study.config
    stop = c.stop_after if c.stop_after is not None else c.steps
    head = f"{'':<12}" + "".join(f"{label:>{width}}" for _, label in cols)
    lines = [
        f"{len(study.methods)} methods x {len(study.seeds)} seeds, {stop} steps; held-out "
        f"{c.task.n_heldout} problems, {c.pass_samples} draws each; mean over seeds",
        head,
        f"{'warm model':<12}" + "".join(f"{study.start(k):>{width}.3f}" for k, _ in cols),
    ]
    fin = {k: study.final(k) for k, _ in cols}
    for m in study.methods:
        lines.append(f"{m:<12}" + "".join(f"{fin[k][m].mean():>{width}.3f}" for k, _ in cols))
    if len(study.seeds) < 2 or "grpo" not in study.methods:
        return "\n".join(lines)
    lines.append("minus GRPO, paired by seed (* the 95 % t interval excludes 0):")
    lines.append(head)
    strong = []
    for m in study.methods:
        if m == "grpo":
            continue
        cells = []
        for k, label in cols:
            p = study.paired(m, "grpo", k)
            star = verdict(p) != "includes 0"
            cells.append(f"{p['mean']:>+{width - 1}.3f}{'*' if star else ' '}")
            if star:
                strong.append(
                    f"  {m} {label}: {p['mean']:+.4f} [{p['ci_low']:+.4f}, {p['ci_high']:+.4f}]"
                )
        lines.append(f"{m:<12}" + "".join(cells))
    lines.append("intervals that exclude 0:" if strong else "no interval excludes 0")
    return "\n".join(lines + strong)


def multi_figure(study: TrainStudy, fig=None):
    """Pass@K against K, distinct right answers and the top path's share: per method, at the end
    (mean over seeds; dots: each seed), with the warm model for reference. ``fig``: a figure to
    draw on (a notebook's ``plt.figure(figsize=(13, 3.6))``); default a new one."""
    fig = fig if fig is not None else figure(13, 3.6)
    axes = fig.subplots(1, 3)
    ks = [2**i for i in range(7) if study.has(f"heldout_pass@{2**i}")]
    axes[0].plot(ks, [study.start(f"heldout_pass@{k}") for k in ks], "k--", label="warm model")
    for m in study.methods:
        means = [study.final(f"heldout_pass@{k}")[m].mean() for k in ks]
        axes[0].plot(ks, means, marker="o", ms=3, color=COLORS.get(m), label=m)
    axes[0].set_xscale("log", base=2)
    axes[0].set_xlabel("K")
    axes[0].set_title("held-out Pass@K at the end", fontsize=10)
    axes[0].legend(fontsize=8)
    for ax, (metric, title) in zip(
        axes[1:],
        (
            (
                "heldout_distinct_correct",
                f"distinct right answers in {study.config.pass_samples} draws",
            ),
            ("heldout_top_path_share", "commonest right answer's share"),
        ),
    ):
        ax.axhline(study.start(metric), color="k", ls="--", lw=1, label="warm model")
        for i, m in enumerate(study.methods):
            v = study.final(metric)[m]
            ax.scatter(np.full(v.size, i), v, s=8, color=COLORS.get(m), alpha=0.5)
            ax.plot([i - 0.3, i + 0.3], [v.mean()] * 2, color=COLORS.get(m), lw=2)
        ax.set_xticks(range(len(study.methods)))
        ax.set_xticklabels(study.methods, rotation=30, fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)
    fig.suptitle(f"{len(study.seeds)} seeds; bars: mean, dots: seeds", fontsize=9)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------ the 300-step multi-answer study
SHIPPED_LONG = Path(__file__).resolve().parent / "results" / "train_multi_300.json"
"""Notebook 07's long study: the multi-answer task over a whole 300-step schedule, its main arm
(GRPO, positive-only, THR exploit / explore at |p| = 0.5, THR-only, NLL, SMAUG, NTHR) as a
TrainStudy dict under ``"study"``, with the CPU time the runs took (``"cpu"``). Built by
``python benchmarks/multi_study.py --long --merge DIR``."""
SHIPPED_LONG_ARMS = Path(__file__).resolve().parent / "results" / "train_multi_300_arms.json"
"""The long study's other arms, each changing one setting at the same seeds (``"arms"``: name ->
TrainStudy dict), and every arm's method paired with the main arm's GRPO (``"paired"``)."""
LONG_ARMS = {
    "main": "",
    "mu2": "2 updates",
    "mu2_high": "2 upd. clip-higher",
    "p0.1": "|p| = 0.1",
    "mask": "mask + sign",
}
"""The long study's arms and the label each adds to its methods' names (``long_rows``)."""
LONG_COLUMNS = (
    ("heldout_greedy_accuracy", "greedy"),
    ("heldout_top_path_share", "top path"),
    ("heldout_path_entropy", "entropy"),
    ("heldout_pass@1", "Pass@1"),
    ("heldout_pass@16", "Pass@16"),
    ("heldout_pass@64", "Pass@64"),
)
"""The plane's two axes (greedy accuracy; the commonest right answer's share of the right draws,
and the entropy over right paths, which do not follow accuracy), then Pass@K."""


def load_long(
    path: Path = SHIPPED_LONG, arms: Path | None = SHIPPED_LONG_ARMS
) -> dict[str, TrainStudy]:
    """The long study's arms, name -> study (``"main"`` first; ``arms`` None: the main only)."""
    import json

    out = {"main": TrainStudy.from_dict(json.loads(path.read_text())["study"])}
    if arms is not None and arms.is_file():
        blob = json.loads(arms.read_text())
        out |= {name: TrainStudy.from_dict(d) for name, d in blob["arms"].items()}
    return out


def long_rows(arms: dict[str, TrainStudy]) -> list[tuple[str, TrainStudy, str]]:
    """(label, study, method) of every run series of the long study, the main arm's first."""
    rows = []
    for name, study in arms.items():
        for m in study.methods:
            tag = LONG_ARMS.get(name, name)
            rows.append((f"{m}, {tag}" if tag else m, study, m))
    return rows


def long_paired(
    arms: dict[str, TrainStudy], metrics: Iterable[str] | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    """label -> metric -> the row's final value minus the main arm's GRPO, paired by seed (the
    seeds every arm holds), with its 95 % t interval; ``clip_frac``: the run means."""
    main = arms["main"]
    seeds = [s for s in main.seeds if all(s in st.seeds for st in arms.values())]
    metrics = tuple(metrics or [k for k, _ in LONG_COLUMNS if main.has(k)])
    out: dict[str, dict[str, dict[str, float]]] = {}
    for label, study, m in long_rows(arms):
        if study is main and m == "grpo":
            continue
        row = {}
        for k in metrics:
            a = np.array([study.runs[m][s][k][-1] for s in seeds])
            b = np.array([main.runs["grpo"][s][k][-1] for s in seeds])
            row[k] = paired_t_interval(a - b)
        out[label] = row
    return out


def run_means(study: TrainStudy, method: str, metric: str) -> np.ndarray:
    """(seeds,) a windowed metric's mean over a run's steps (the windows weighted by length)."""
    out = []
    for s in study.seeds:
        r = study.runs[method][s]
        steps = np.diff(np.asarray(r["eval_step"], dtype=np.float64))
        v = np.asarray(r[metric][1:], dtype=np.float64)
        ok = ~np.isnan(v)
        out.append(float((v[ok] * steps[ok]).sum() / steps[ok].sum()) if ok.any() else np.nan)
    return np.array(out)


def long_table(arms: dict[str, TrainStudy], width: int = 9) -> str:
    """The long study in at most 88 characters a line: each row's mean over seeds at the end,
    then each minus GRPO paired by seed (* the 95 % t interval excludes 0)."""
    main = arms["main"]
    cols = [(k, label) for k, label in LONG_COLUMNS if main.has(k)]
    c = main.config
    head = f"{'':<26}" + "".join(f"{label:>{width}}" for _, label in cols)
    lines = [
        f"{len(long_rows(arms))} run series x {len(main.seeds)} seeds, {c.steps} steps; "
        f"{c.task.n_heldout} held-out problems x {c.pass_samples} draws; means at the end",
        head,
        f"{'warm model':<26}" + "".join(f"{main.start(k):>{width}.3f}" for k, _ in cols),
    ]
    for label, study, m in long_rows(arms):
        fin = [np.mean([study.runs[m][s][k][-1] for s in study.seeds]) for k, _ in cols]
        lines.append(f"{label:<26}" + "".join(f"{v:>{width}.3f}" for v in fin))
    lines.append("minus GRPO, paired by seed (* the 95 % t interval excludes 0):")
    for label, row in long_paired(arms, [k for k, _ in cols]).items():
        cells = "".join(
            f"{p['mean']:>+{width - 1}.3f}{'*' if verdict(p) != 'includes 0' else ' '}"
            for p in row.values()
        )
        lines.append(f"{label:<26}{cells}")
    return "\n".join(lines)


def reweighting_table(arms: dict[str, TrainStudy]) -> str:
    """What each row's weights did, mean over its steps and seeds (REWEIGHTING; training.py):
    the share of tokens reweighted ("changed"), of those the share with THR > 0, the correct responses'
    tokens amplified / weakened on the majority and the minority paths; and how often the clip
    bound (two updates per batch)."""
    cols = (
        ("reweighted_frac", "changed"),
        ("reweighted_thr_pos", "THR>0"),
        ("amplified_majority", "amp maj"),
        ("amplified_minority", "amp min"),
        ("weakened_majority", "weak maj"),
        ("weakened_minority", "weak min"),
        ("clip_frac", "clipped"),
    )
    lines = [
        "per update (mixed groups), mean over the run and the seeds; maj: the group's commonest",
        "right answer, min: its other right answers; clipped: tokens outside the clip bounds",
        f"{'':<25}" + "".join(f"{label:>9}" for _, label in cols),
    ]
    for label, study, m in long_rows(arms):
        if not study.has("reweighted_frac"):
            continue
        cells = []
        for k, _ in cols:
            v = run_means(study, m, k)
            cells.append(f"{np.nanmean(v):>9.3f}" if np.isfinite(v).any() else f"{'-':>9}")
        lines.append(f"{label:<25}" + "".join(cells))
    return "\n".join(lines)


def plane_figure(arms: dict[str, TrainStudy], diversity: str = "heldout_top_path_share", fig=None):
    """The exploit-explore plane at the end of training: greedy accuracy (x) against a diversity
    measure (y), one panel per row (each zoomed on its own dots), one dot per seed joined to its
    GRPO twin (the same seed's GRPO run, grey)."""
    main = arms["main"]
    rows = [r for r in long_rows(arms) if not (r[1] is main and r[2] == "grpo")]
    ncol = 5
    nrow = math.ceil(len(rows) / ncol)
    fig = fig if fig is not None else figure(15, 3.0 * nrow)
    axes = np.atleast_1d(fig.subplots(nrow, ncol)).ravel()
    gx = {s: main.runs["grpo"][s]["heldout_greedy_accuracy"][-1] for s in main.seeds}
    gy = {s: main.runs["grpo"][s][diversity][-1] for s in main.seeds}
    for ax, (label, study, m) in zip(axes, rows):
        color = COLORS.get(m, "tab:blue")
        for s in study.seeds:
            x, y = study.runs[m][s]["heldout_greedy_accuracy"][-1], study.runs[m][s][diversity][-1]
            ax.plot([gx[s], x], [gy[s], y], color="0.7", lw=0.8)
            ax.scatter([gx[s]], [gy[s]], s=10, color="0.5")
            ax.scatter([x], [y], s=16, color=color)
        ax.set_title(label, fontsize=9)
        ax.tick_params(labelsize=7)
    for ax in axes[len(rows) :]:
        ax.set_visible(False)
    for ax in axes[::ncol]:
        ax.set_ylabel(LABELS.get(diversity, diversity), fontsize=8)
    for ax in axes[-ncol:]:
        ax.set_xlabel("greedy accuracy", fontsize=8)
    fig.suptitle(
        f"at step {int(main.config.steps)}, each seed's run (colour) joined to its GRPO twin "
        f"(grey); the warm model: greedy {main.start('heldout_greedy_accuracy'):.3f}, "
        f"{LABELS.get(diversity, diversity)} {main.start(diversity):.3f}",
        fontsize=9,
    )
    fig.tight_layout()
    return fig


def share_figure(arms: dict[str, TrainStudy], metric: str = "heldout_top_path_share", fig=None):
    """A metric against the training step, mean over seeds, one line per row (GRPO thick)."""
    fig = fig if fig is not None else figure(8, 4.5)
    ax = fig.subplots()
    styles = {"main": "-", "mu2": ":", "mu2_high": ":", "p0.1": "--", "mask": "-."}
    for label, study, m in long_rows(arms):
        name = next(n for n, st in arms.items() if st is study)
        steps, values = study.curve(m, metric)
        lw = 2.5 if label == "grpo" else 1.2
        color = COLORS.get(m) if name == "main" or m != "grpo" else "k"
        ax.plot(steps, values.mean(axis=0), styles.get(name, "-"), color=color, lw=lw, label=label)
    ax.set_xlabel("training step")
    ax.set_ylabel(LABELS.get(metric, metric))
    ax.legend(fontsize=7, ncol=2)
    ax.set_title(f"mean over {len(arms['main'].seeds)} seeds", fontsize=9)
    fig.tight_layout()
    return fig


# ------------------------------------------- the 300-step study on other CPU kernels
SHIPPED_LONG_KERNELS = Path(__file__).resolve().parent / "results" / "train_multi_300_kernels.json"
"""What became of the 300-step study when some of its seeds were rerun with only the CPU kernels
changed (``python benchmarks/multi_study.py --long --kernels NAME=DIR ...``): per row the largest
|rerun - shipped| at any evaluation and at the end (``"moved"``, ``"moved_end"``), the shipped
spread over seeds at the end (``"spread"``), each rerun's paired differences with its own GRPO
at the end, per seed (``"reruns"``), and how many of those lie outside the shipped study's 95 %
prediction interval for one more seed (``"agreement"``). Over 300 steps a rerun under other
kernels does not stay near the shipped run (one token drawn differently sends it elsewhere), so
the study is checked the way a new seed would be, not within a band of its digits."""


def long_metrics(arms: dict[str, TrainStudy]) -> tuple[str, ...]:
    """The held-out metrics every arm of a long study holds."""
    return tuple(k for k in band_metrics(arms["main"]) if all(st.has(k) for st in arms.values()))


def _check_rerun(rerun: dict[str, TrainStudy], shipped: dict[str, TrainStudy]) -> None:
    if missing := [a for a in shipped if a not in rerun]:
        raise ValueError(f"the rerun lacks arm(s) {missing}")
    for arm, st in rerun.items():
        if arm not in shipped:
            raise ValueError(f"arm {arm!r} is not in the shipped study ({list(shipped)})")
        if bad := _same_settings(st, shipped[arm]):
            raise ValueError(f"arm {arm!r}: the rerun's settings differ: " + "; ".join(bad))
        if st.methods != shipped[arm].methods:
            raise ValueError(f"arm {arm!r}: methods {st.methods} against {shipped[arm].methods}")
        if extra := [s for s in st.seeds if s not in shipped[arm].seeds]:
            raise ValueError(f"arm {arm!r}: seed(s) {extra} are not in the shipped study")
        if st.seeds != rerun["main"].seeds:
            raise ValueError(f"arm {arm!r}: seeds {st.seeds} against the main arm's")


def long_differences(
    rerun: dict[str, TrainStudy], shipped: dict[str, TrainStudy], at_end: bool = False
) -> dict[str, dict[str, float]]:
    """Row label -> metric -> the largest |rerun - shipped| over the rerun's seeds, at every
    evaluation (step 0 included) or, ``at_end``, at the last. The rerun must hold every shipped
    arm, with the shipped settings and methods, at seeds the shipped study holds."""
    _check_rerun(rerun, shipped)
    metrics = long_metrics(shipped)
    ship_rows = {label: study for label, study, _ in long_rows(shipped)}
    out: dict[str, dict[str, float]] = {}
    for label, st, m in long_rows(rerun):  # paired by label: the two may list arms in any order
        ship = ship_rows[label]
        out[label] = {}
        which = slice(-1, None) if at_end else slice(None)
        for k in metrics:
            out[label][k] = max(
                abs(a - b)
                for s in st.seeds
                for a, b in zip(st.runs[m][s][k][which], ship.runs[m][s][k][which], strict=True)
            )
    return out


def prediction_interval(diffs: Sequence[float]) -> tuple[float, float]:
    """The 95 % Student-t prediction interval for one more paired difference, from n of them:
    mean +- t(n - 1) * sd * sqrt(1 + 1 / n)."""
    d = np.asarray(diffs, dtype=np.float64)
    n = d.size
    if n < 2:
        raise ValueError("a prediction interval needs at least 2 seeds")
    half = _t975(n - 1) * d.std(ddof=1) * math.sqrt(1 + 1 / n)
    return float(d.mean() - half), float(d.mean() + half)


def _paired_at_end(
    arms: dict[str, TrainStudy], st: TrainStudy, m: str, metric: str
) -> dict[int, float]:
    """Seed -> the row (``st``'s method ``m``) minus the main arm's GRPO at the end."""
    grpo = arms["main"].runs["grpo"]
    return {s: float(st.runs[m][s][metric][-1] - grpo[s][metric][-1]) for s in st.seeds}


def long_agreement(
    rerun: dict[str, TrainStudy], shipped: dict[str, TrainStudy]
) -> list[tuple[str, str, int, float, float, float]]:
    """Each paired difference of the rerun (row minus the rerun's own GRPO at the same seed, at
    the end, the quoted metrics) with the shipped study's 95 % prediction interval for one more
    seed: (label, metric, seed, value, low, high)."""
    _check_rerun(rerun, shipped)
    metrics = [k for k, _ in LONG_COLUMNS if k in long_metrics(shipped)]
    theirs = {label: (st, m) for label, st, m in long_rows(rerun)}
    out = []
    for label, st, m in long_rows(shipped):
        if label == "grpo":
            continue
        for k in metrics:
            lo, hi = prediction_interval(list(_paired_at_end(shipped, st, m, k).values()))
            for s, v in _paired_at_end(rerun, *theirs[label], k).items():
                out.append((label, k, s, v, lo, hi))
    return out


def binomial_upper(n: int, p: float = 0.05, q: float = 0.99) -> int:
    """The least c with P(Binomial(n, p) <= c) >= q: more than c of n checks outside a 95 %
    interval is more than chance explains (at level 1 - q)."""
    total = 0.0
    for c in range(n + 1):
        total += math.comb(n, c) * p**c * (1 - p) ** (n - c)
        if total >= q:
            return c
    return n


def _verdict(checks: list) -> dict:
    """How many checks lie outside their interval, overall and per row, against what chance
    explains: at most ``binomial_upper`` of all at 99 %, and per row at 1 - 1 % / rows (so that
    one row far off is caught even when the total is small). The checks share each seed's GRPO,
    so they are not independent: the binomial is a guide, not an exact level."""
    outside = [c for c in checks if not c[4] <= c[3] <= c[5]]
    rows: dict[str, list[int]] = {}
    for c in checks:
        rows.setdefault(c[0], [0, 0])[0] += 1
    for c in outside:
        rows[c[0]][1] += 1
    q_row = 1 - 0.01 / max(len(rows), 1)
    far = sorted(label for label, (n, out) in rows.items() if out > binomial_upper(n, q=q_row))
    limit = binomial_upper(len(checks))
    return {
        "checks": len(checks),
        "outside": [list(c) for c in outside],
        "chance_up_to": limit,
        "rows_too_far": far,
        "agrees": len(outside) <= limit and not far,
    }


def long_compare(rerun: dict[str, TrainStudy], shipped: dict[str, TrainStudy]) -> tuple[bool, str]:
    """Does a rerun of the 300-step study (every arm, any of the shipped seeds; another CPU, other
    kernels) land where the shipped study says a new seed would? Each of its paired differences
    with GRPO is held to the shipped 95 % prediction interval; about 5 % fall outside by chance,
    so the rerun disagrees when more fall outside than ``_verdict`` allows, overall or in one
    row. On the CPU that built the study a rerun repeats it bit for bit: the largest |rerun -
    shipped| is printed first."""
    moved = long_differences(rerun, shipped)
    worst = max((v, label, k) for label, figs in moved.items() for k, v in figs.items())
    v = _verdict(long_agreement(rerun, shipped))
    seeds = rerun["main"].seeds
    lines = [
        f"rerun of the 300-step study at seed(s) {','.join(map(str, seeds))}: the largest "
        f"|rerun - shipped| is {worst[0]:.3g} ({worst[1]}, {LABELS.get(worst[2], worst[2])})"
        + (" (bit for bit)" if worst[0] == 0 else ""),
        f"its {v['checks']} paired differences with GRPO at the end, against the shipped 95 % "
        f"prediction interval for one more seed: {len(v['outside'])} outside (chance explains "
        f"up to {v['chance_up_to']})",
    ]
    lines += [
        f"  {label} {LABELS.get(k, k)} seed {s}: {x:+.4f} outside [{lo:+.4f}, {hi:+.4f}]"
        for label, k, s, x, lo, hi in v["outside"]
    ]
    if v["rows_too_far"]:
        lines.append("rows with more outside than chance explains: " + ", ".join(v["rows_too_far"]))
    lines.append(
        "Agrees: the rerun lands where another seed of the shipped study would."
        if v["agrees"]
        else "Differs: more paired differences outside the shipped intervals than chance explains."
    )
    return v["agrees"], "\n".join(lines)


def long_kernels(shipped: dict[str, TrainStudy], reruns: dict[str, dict[str, TrainStudy]]) -> dict:
    """The record ``SHIPPED_LONG_KERNELS`` holds, from ``reruns`` (setting -> the arms rerun)."""
    if not reruns:
        raise ValueError("no rerun to measure")
    metrics = long_metrics(shipped)
    moved: dict[str, dict[str, float]] = {}
    moved_end: dict[str, dict[str, float]] = {}
    for rerun in reruns.values():
        for target, at_end in ((moved, False), (moved_end, True)):
            for label, figs in long_differences(rerun, shipped, at_end).items():
                row = target.setdefault(label, {})
                for k, v in figs.items():
                    row[k] = max(row.get(k, 0.0), float(v))
    spread = {
        label: {k: float(np.std([st.runs[m][s][k][-1] for s in st.seeds], ddof=1)) for k in metrics}
        for label, st, m in long_rows(shipped)
    }
    agreement = {name: _verdict(long_agreement(r, shipped)) for name, r in reruns.items()}
    return {
        "metrics": list(metrics),
        "moved": moved,
        "moved_end": moved_end,
        "spread": spread,
        "reruns": {
            name: {
                "seeds": list(rerun["main"].seeds),
                "paired_end": {
                    label: {
                        k: _paired_at_end(rerun, st, m, k) for k, _ in LONG_COLUMNS if k in metrics
                    }
                    for label, st, m in long_rows(rerun)
                    if label != "grpo"
                },
            }
            for name, rerun in reruns.items()
        },
        "agreement": agreement,
    }


def load_long_kernels(path: Path = SHIPPED_LONG_KERNELS) -> dict:
    """The 300-step study's reruns under other CPU kernels (see SHIPPED_LONG_KERNELS)."""
    import json

    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: python benchmarks/multi_study.py --long --kernels NAME=DIR ... "
            "measures it"
        )
    return json.loads(path.read_text())


def long_kernels_table(shipped: dict[str, TrainStudy], kernels: dict) -> str:
    """The reruns under other kernels in at most 88 characters a line: per row how far a run
    moved (at any evaluation, and at the end) against the shipped spread over seeds at the end,
    for greedy accuracy and the top-path share; then how many paired differences lie outside the
    shipped prediction intervals."""
    import textwrap

    g, t = "heldout_greedy_accuracy", "heldout_top_path_share"
    seeds = sorted({s for r in kernels["reruns"].values() for s in r["seeds"]})
    lines = [
        *textwrap.wrap(
            f"seed(s) {','.join(map(str, seeds))} rerun under CPU kernel settings "
            f"{', '.join(kernels['reruns'])}: the largest |rerun - shipped| of a run, and the "
            "shipped spread over seeds (sd at the end)",
            88,
        ),
        f"{'':<26}{'greedy: any':>12}{'end':>7}{'sd':>7}{'top path: any':>15}{'end':>7}{'sd':>7}",
    ]
    for label, _, _ in long_rows(shipped):
        mv, me, sd = kernels["moved"][label], kernels["moved_end"][label], kernels["spread"][label]
        lines.append(
            f"{label:<26}{mv[g]:>12.3f}{me[g]:>7.3f}{sd[g]:>7.3f}{mv[t]:>15.3f}{me[t]:>7.3f}{sd[t]:>7.3f}"
        )
    for name, a in kernels["agreement"].items():
        lines.append(
            f"{name}: {len(a['outside'])} of {a['checks']} paired differences outside the "
            f"shipped 95 % prediction interval (chance explains up to {a['chance_up_to']})"
            + ("" if a["agrees"] else "; rows too far: " + ", ".join(a["rows_too_far"]))
        )
        lines += [
            f"  {label} {LABELS.get(k, k)} seed {s}: {v:+.3f} outside [{lo:+.3f}, {hi:+.3f}]"
            for label, k, s, v, lo, hi in a["outside"]
        ]
    return "\n".join(lines)
