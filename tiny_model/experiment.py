"""Experiments: probes and training runs from the warm model, metrics.json and PNG figures.

The commands of ``python -m tiny_model`` live here; the warm model in
warm.py, the harness (devices, determinism, files) in harness.py, the
algorithm in grpo.py, probe.py, training.py and study.py. The names other
modules used to import from here are re-exported.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from tiny_model import training
from tiny_model.harness import (
    deterministic,
    figure,
    progress_bar,
    resolve_device,
    save_png,
    write_json,
)
from tiny_model.model import TinyModel
from tiny_model.pooled import PooledProbe, run_probe_seeds
from tiny_model.probe import ProbeConfig, ProbeResult, run_probe
from tiny_model.seam import Functions
from tiny_model.study import (
    COLORS,
    SHIPPED,
    SHIPPED_07,
    SHIPPED_MULTI,
    TrainStudy,
    run_study,
    study_figure,
)
from tiny_model.training import TrainConfig, TrainResult
from tiny_model.warm import (
    CHECKPOINT,
    WarmupConfig,
    first_step_damage,
    greedy_accuracy,
    load_checkpoint,
    load_warm,
    sampled_accuracy,
    save_checkpoint,
    warmup,
)

# ------------------------------------------------------------------------- training


def train(
    fns: Functions,
    method: str = "grpo",
    steps: int = TrainConfig.steps,
    seed: int = 0,
    *,
    model: TinyModel | None = None,
    device: str | torch.device = "cpu",
    progress=None,
    **overrides: object,
) -> TrainResult:
    """A GRPO run of ``method`` from the warm model (or ``model``, trained in place).

    ``overrides`` set other TrainConfig fields (lr, kl_coef, loss_agg, eval_every, ...).
    ``result.history`` holds one list per logged metric (training.LOGGED, one
    entry per step) and per held-out evaluation (training.EVALUATED).
    """
    config = TrainConfig(method=method, steps=steps, seed=seed, **overrides)
    model = model if model is not None else load_warm(device)
    model.train()
    with deterministic():
        result = training.train(fns, model, config, progress=progress)
    model.eval()
    return result


# ------------------------------------------------------------------------- figures


def probe_figure(result: ProbeResult | PooledProbe):
    """Histograms of the per-group change for each method, and each method vs GRPO paired."""
    fig = figure(11, 4)
    ax, bx = fig.subplots(1, 2)
    allc = np.concatenate(list(result.changes.values()))
    bins = np.linspace(allc.min(), allc.max(), 30)
    for m, c in result.changes.items():
        ax.hist(c, bins=bins, histtype="step", lw=1.5, color=COLORS.get(m), label=m)
    ax.axvline(0, color="k", lw=0.8)
    ax.set_xlabel("change of correct responses' ln π(y+|x) after one step")
    ax.set_ylabel("groups")
    ax.set_title(
        f"one-step {result.config.optimizer} probe, {len(allc) // len(result.changes)} groups, "
        f"lr={result.config.lr:g}"
    )
    ax.legend()
    if "grpo" in result.changes:
        x = result.changes["grpo"]
        for m in ("nthr", "pos_only", "random"):
            if m in result.changes:
                bx.scatter(x, result.changes[m], s=12, color=COLORS[m], label=m)
        lim = [min(allc.min(), 0), allc.max()]
        bx.plot(lim, lim, color="k", lw=0.8)
        bx.axhline(0, color="k", lw=0.5, ls=":")
        bx.axvline(0, color="k", lw=0.5, ls=":")
        bx.set_xlabel("GRPO change (same group)")
        bx.set_ylabel("method's change")
        bx.set_title("paired by group: above the diagonal = better than GRPO")
        bx.legend()
    fig.tight_layout()
    return fig


def warmup_figure(history: dict[str, list[float]]):
    fig = figure(5, 3.5)
    ax = fig.subplots()
    ax.plot(np.arange(1, len(history["loss"]) + 1), history["loss"])
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy per response token")
    ax.set_title("warm-up")
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------- commands


def cmd_warmup(out: Path, device: torch.device, config: WarmupConfig, checkpoint: Path) -> dict:
    """Warm up from scratch with ``config``; write the checkpoint, metrics.json and the loss curve."""
    with deterministic(threads=1), progress_bar(config.steps, "warm-up") as bar:
        model, history = warmup(config, device, progress=bar.update)
    model = model.cpu()
    with deterministic():
        metrics = {
            "recipe": config.to_dict(),
            "key": config.key(),
            "steps_taken": len(history["loss"]),
            "final_loss": history["loss"][-1],
            "sampled_accuracy": sampled_accuracy(model, seed=config.seed, task=config.task),
            "greedy_accuracy": greedy_accuracy(model, task=config.task),
            "first_step_damage_3e-4": first_step_damage(model, 3e-4, task=config.task),
            "parameters": model.num_parameters(),
            "history": history,
        }
    info = {k: metrics[k] for k in ("sampled_accuracy", "greedy_accuracy", "steps_taken")}
    save_checkpoint(model, checkpoint, config, info)
    metrics["checkpoint"] = str(checkpoint)
    write_json(out / "metrics.json", metrics)
    save_png(warmup_figure(history), out / "warmup_loss.png")
    return metrics


def cmd_probe(
    out: Path,
    device: torch.device,
    fns: Functions,
    config: ProbeConfig,
    seeds: Sequence[int] | None = None,
    warm: WarmupConfig | None = None,
) -> ProbeResult | PooledProbe:
    """One seed (``config.seed``) -> ProbeResult; several -> PooledProbe. Writes metrics.json, probe.png."""
    model = load_warm(device, warm)
    if seeds is None or len(seeds) == 1:
        if seeds:
            config = dataclasses.replace(config, seed=seeds[0])
        with deterministic(), progress_bar(config.groups, "probe") as bar:
            result = run_probe(model, fns, config, progress=bar.update)
    else:
        with deterministic(), progress_bar(config.groups * len(seeds), "probe") as bar:
            result = run_probe_seeds(model, fns, seeds, config, progress=bar.update)
    write_json(out / "metrics.json", result.to_dict())
    save_png(probe_figure(result), out / "probe.png")
    return result


def cmd_train(
    out: Path,
    device: torch.device,
    fns: Functions,
    methods: Sequence[str],
    seeds: Sequence[int] = (0,),
    *,
    write_shipped: bool | str | None = False,
    **overrides: object,
) -> TrainStudy:
    """Train every method at every seed; write metrics.json (the study) and train.png.

    ``write_shipped`` also copies metrics.json, atomically, to ``study.SHIPPED`` (True or
    "06": the file notebook 06 loads), ``study.SHIPPED_07`` ("07": the course task's 8-method
    study) or ``study.SHIPPED_MULTI`` ("multi": notebook 07's multi-answer study).
    """
    steps = int(overrides.get("steps", TrainConfig.steps))
    if overrides.get("stop_after") is not None:
        steps = min(steps, int(overrides["stop_after"]))
    with progress_bar(steps * len(methods) * len(seeds), "train") as bar:
        study = run_study(fns, methods, seeds, device=device, progress=bar.update, **overrides)
    write_json(out / "metrics.json", study.to_dict())
    save_png(study_figure(study), out / "train.png")
    if write_shipped:
        target = {"07": SHIPPED_07, "multi": SHIPPED_MULTI}.get(str(write_shipped), SHIPPED)
        write_json(target, study.to_dict())
    return study


__all__ = [
    "CHECKPOINT",
    "WarmupConfig",
    "cmd_probe",
    "cmd_train",
    "cmd_warmup",
    "deterministic",
    "first_step_damage",
    "greedy_accuracy",
    "load_checkpoint",
    "load_warm",
    "probe_figure",
    "resolve_device",
    "sampled_accuracy",
    "save_checkpoint",
    "train",
    "warmup",
    "write_json",
]
