"""Experiments: the warm-up, probes and short training runs, metrics.json and PNG figures.

The harness lives here (devices, determinism, checkpoints, files, figures);
the algorithm lives in grpo.py and probe.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from tiny_model import grpo, task
from tiny_model.grpo import TrainConfig, TrainResult
from tiny_model.model import TinyConfig, TinyModel
from tiny_model.probe import ProbeConfig, ProbeResult, run_probe
from tiny_model.seam import Functions

CHECKPOINT = Path(__file__).resolve().parent / "checkpoints" / "warm.pt"
CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "reward-drills"


# ------------------------------------------------------------------------- harness


def resolve_device(name: str = "auto") -> torch.device:
    """'auto' -> cuda when available, else cpu; 'cpu' / 'cuda' as given."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda, but torch sees no CUDA device")
    if name not in ("cpu", "cuda"):
        raise ValueError(f"unknown device {name!r}: auto, cpu or cuda")
    return torch.device(name)


@contextlib.contextmanager
def deterministic(threads: int | None = None) -> Iterator[None]:
    """Deterministic torch algorithms (and optionally a fixed CPU thread count) inside the block."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    was = torch.are_deterministic_algorithms_enabled()
    old_threads = torch.get_num_threads()
    torch.use_deterministic_algorithms(True)
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was)
        if threads is not None:
            torch.set_num_threads(old_threads)


def write_json(path: Path, obj: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1, sort_keys=True, allow_nan=True) + "\n")
    tmp.replace(path)


def progress_bar(total: int, desc: str, enabled: bool | None = None):
    """A tqdm bar on a terminal, a silent stand-in elsewhere."""
    from tqdm.auto import tqdm

    if enabled is None:
        enabled = sys.stderr.isatty()
    return tqdm(total=total, desc=desc, disable=not enabled, leave=False)


# ------------------------------------------------------------------------- warm-up


@dataclass(frozen=True)
class WarmupConfig:
    """Supervised warm-up on correct scratchpads, stopped at mid competence."""

    steps: int = 225
    """Adam steps; 225 leaves sampled answers right about half the time."""
    batch_size: int = 64
    """Problems per step (drawn uniformly from all 1000)."""
    lr: float = 5e-3
    """Peak Adam learning rate (10 steps of linear warm-up, then cosine decay to 0)."""
    seed: int = 0
    """Seeds the initialization and the problem draws."""
    model: TinyConfig = field(default_factory=TinyConfig)

    def to_dict(self) -> dict:
        return asdict(self)

    def key(self) -> str:
        """A short hash of the recipe (and torch's version): the cache key of its checkpoint."""
        text = json.dumps({"recipe": self.to_dict(), "torch": torch.__version__}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def warmup(
    config: WarmupConfig | None = None, device: str | torch.device = "cpu", progress=None
) -> tuple[TinyModel, dict[str, list[float]]]:
    """Train a fresh model with cross-entropy on the correct response tokens."""
    config = config or WarmupConfig()
    device = torch.device(device)
    torch.manual_seed(config.seed)  # the initialization
    model = TinyModel(config.model).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 10) * 0.5 * (1 + math.cos(math.pi * s / config.steps))
    )
    gen = torch.Generator().manual_seed(config.seed)
    problems = task.all_problems()  # (1000, 3)
    history: dict[str, list[float]] = {"loss": []}
    for _ in range(config.steps):
        idx = torch.randint(0, task.N_PROBLEMS, (config.batch_size,), generator=gen)  # (B,)
        batch = problems[idx].to(device)  # (B, 3)
        target = task.correct_responses(batch).unsqueeze(1)  # (B, 1, 5)
        logits, _ = grpo.response_forward(model, batch, target)  # (B, 1, 5, V)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        history["loss"].append(float(loss.detach()))
        if progress is not None:
            progress(1)
    model.eval()
    return model, history


@torch.no_grad()
def sampled_accuracy(
    model: TinyModel, seed: int = 0, temperature: float = 1.0, samples: int = 1
) -> float:
    """Fraction of sampled responses that are correct, over all 1000 problems."""
    device = next(model.parameters()).device
    gen = torch.Generator(device=device).manual_seed(seed)
    problems = task.all_problems().to(device)  # (1000, 3)
    groups = grpo.sample_groups(model, problems, samples, gen, temperature)
    return float(groups.rewards.mean())


@torch.no_grad()
def greedy_accuracy(model: TinyModel) -> float:
    """Fraction of the 1000 problems answered correctly by greedy decoding."""
    device = next(model.parameters()).device
    problems = task.all_problems().to(device)  # (1000, 3)
    seq = task.prompt_tokens(problems)  # (1000, 7)
    for _ in range(task.RESPONSE_LEN):
        logits, _ = model(seq)  # (1000, t, V)
        seq = torch.cat([seq, logits[:, -1, :].argmax(dim=-1, keepdim=True)], dim=1)
    return float(task.rewards(problems, seq[:, task.PROMPT_LEN :]).mean())


def save_checkpoint(model: TinyModel, path: Path, config: WarmupConfig, info: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    torch.save(
        {"key": config.key(), "recipe": config.to_dict(), "info": info, "state": state}, path
    )


def load_checkpoint(path: Path, device: str | torch.device = "cpu") -> TinyModel:
    blob = torch.load(path, map_location="cpu", weights_only=True)
    model = TinyModel(TinyConfig(**blob["recipe"]["model"]))
    model.load_state_dict(blob["state"])
    return model.to(device).eval()


_WARM: dict[str, dict[str, torch.Tensor]] = {}


def load_warm(device: str | torch.device = "cpu", config: WarmupConfig | None = None) -> TinyModel:
    """The warm model (mid competence), a fresh copy on every call.

    The shipped checkpoint when its recipe matches ``config``; otherwise a
    cached rebuild (``~/.cache/reward-drills``), otherwise a rebuild (seconds).
    """
    config = config or WarmupConfig()
    device = resolve_device(str(device)) if str(device) == "auto" else torch.device(device)
    key = config.key()
    if key not in _WARM:
        model = None
        for path in (CHECKPOINT, CACHE_DIR / f"warm-{key}.pt"):
            if path.is_file():
                blob = torch.load(path, map_location="cpu", weights_only=True)
                if blob.get("recipe") == config.to_dict():
                    model = load_checkpoint(path)
                    break
        if model is None:
            with deterministic(threads=1):
                model, _ = warmup(config, "cpu")  # one thread: the same bits on any machine
            with contextlib.suppress(OSError):
                save_checkpoint(model, CACHE_DIR / f"warm-{key}.pt", config, {})
        _WARM[key] = {k: v.clone() for k, v in model.state_dict().items()}
    model = TinyModel(config.model)
    model.load_state_dict(_WARM[key])
    return model.to(device).eval()


# ------------------------------------------------------------------------- training


def train(
    fns: Functions,
    method: str = "grpo",
    steps: int = 100,
    seed: int = 0,
    *,
    model: TinyModel | None = None,
    device: str | torch.device = "cpu",
    progress=None,
    **overrides: object,
) -> TrainResult:
    """A short GRPO run of ``method`` from the warm model (or ``model``, trained in place).

    ``overrides`` set other TrainConfig fields (lr, kl_coef, loss_agg, ...).
    ``result.history`` holds one list per logged metric (see grpo.LOGGED).
    """
    config = TrainConfig(method=method, steps=steps, seed=seed, **overrides)
    model = model if model is not None else load_warm(device)
    model.train()
    with deterministic():
        result = grpo.train(fns, model, config, progress=progress)
    model.eval()
    return result


# ------------------------------------------------------------------------- figures

COLORS = {"grpo": "tab:red", "pos_only": "tab:green", "nthr": "tab:blue", "random": "tab:gray"}


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100)


def save_png(fig, path: Path) -> None:
    """Save without metadata that could change between runs (same data, same bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", metadata={"Software": None})


def probe_figure(result: ProbeResult):
    """Histograms of the per-group change for each method, and NTHR vs GRPO paired."""
    fig = _figure(11, 4)
    ax, bx = fig.subplots(1, 2)
    allc = np.concatenate(list(result.changes.values()))
    bins = np.linspace(allc.min(), allc.max(), 30)
    for m, c in result.changes.items():
        ax.hist(c, bins=bins, histtype="step", lw=1.5, color=COLORS.get(m), label=m)
    ax.axvline(0, color="k", lw=0.8)
    ax.set_xlabel("change of correct responses' ln π(y+|x) after one step")
    ax.set_ylabel("groups")
    ax.set_title(
        f"one-step probe, {len(allc) // len(result.changes)} groups, lr={result.config.lr:g}"
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


def train_figure(results: Sequence[TrainResult], smooth: int = 10):
    """Reward, correct-answer likelihood, per-step Eq. 2 change and selection over steps."""
    fig = _figure(11, 7)
    axes = fig.subplots(2, 2).flatten()
    panels = (
        ("reward_mean", "batch reward (moving mean)"),
        ("answer_logp", "mean ln π(correct scratchpad | x), eval problems"),
        ("correct_logp_change", "Δ ln π(y+|x) of the step's correct responses (moving mean)"),
        ("kl_ref", "k3 KL to the warm model"),
    )
    for ax, (key, title) in zip(axes, panels):
        for r in results:
            y = np.asarray(r.history[key], dtype=float)
            if key in ("reward_mean", "correct_logp_change"):
                y = _moving_mean(y, smooth)
            ax.plot(
                np.arange(1, len(y) + 1),
                y,
                color=COLORS.get(r.config.method),
                label=r.config.method,
            )
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("step")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _moving_mean(y: np.ndarray, k: int) -> np.ndarray:
    out = np.empty_like(y)
    for i in range(len(y)):
        window = y[max(0, i - k + 1) : i + 1]
        window = window[~np.isnan(window)]
        out[i] = window.mean() if len(window) else np.nan
    return out


def warmup_figure(history: dict[str, list[float]]):
    fig = _figure(5, 3.5)
    ax = fig.subplots()
    ax.plot(np.arange(1, len(history["loss"]) + 1), history["loss"])
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy per response token")
    ax.set_title("warm-up")
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------- commands


def cmd_warmup(out: Path, device: torch.device, seed: int, steps: int, checkpoint: Path) -> dict:
    config = WarmupConfig(seed=seed, steps=steps)
    with deterministic(threads=1), progress_bar(config.steps, "warm-up") as bar:
        model, history = warmup(config, device, progress=bar.update)
    model = model.cpu()
    with deterministic():
        metrics = {
            "recipe": config.to_dict(),
            "key": config.key(),
            "final_loss": history["loss"][-1],
            "sampled_accuracy": sampled_accuracy(model, seed=seed),
            "greedy_accuracy": greedy_accuracy(model),
            "parameters": model.num_parameters(),
            "history": history,
        }
    save_checkpoint(
        model, checkpoint, config, {k: metrics[k] for k in ("sampled_accuracy", "greedy_accuracy")}
    )
    metrics["checkpoint"] = str(checkpoint)
    write_json(out / "metrics.json", metrics)
    save_png(warmup_figure(history), out / "warmup_loss.png")
    return metrics


def cmd_probe(out: Path, device: torch.device, fns: Functions, config: ProbeConfig) -> ProbeResult:
    model = load_warm(device)
    with deterministic(), progress_bar(config.groups, "probe") as bar:
        result = run_probe(model, fns, config, progress=bar.update)
    write_json(out / "metrics.json", result.to_dict())
    save_png(probe_figure(result), out / "probe.png")
    return result


def cmd_train(
    out: Path, device: torch.device, fns: Functions, methods: Sequence[str], **kw: object
) -> list[TrainResult]:
    results = []
    for m in methods:
        with progress_bar(int(kw.get("steps", 100)), f"train {m}") as bar:
            results.append(train(fns, method=m, device=device, progress=bar.update, **kw))
    metrics = {}
    for r in results:
        with deterministic():
            acc = sampled_accuracy(r.model.cpu(), seed=r.config.seed)
        metrics[r.config.method] = {**r.to_dict(), "final_sampled_accuracy": acc}
    write_json(out / "metrics.json", metrics)
    save_png(train_figure(results), out / "train.png")
    return results


__all__ = [
    "CHECKPOINT",
    "WarmupConfig",
    "cmd_probe",
    "cmd_train",
    "cmd_warmup",
    "deterministic",
    "greedy_accuracy",
    "load_warm",
    "probe_figure",
    "resolve_device",
    "sampled_accuracy",
    "train",
    "train_figure",
    "warmup",
]
