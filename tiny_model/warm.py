"""The warm model: supervised warm-up to mid competence, checkpoints, and how to measure it.

The warm-up trains a fresh model with cross-entropy on the correct
scratchpads of the training problems and stops at mid competence (about
half of the sampled answers right). Its learning rate stays constant after
a short ramp. The course's first recipe decayed it to 0 (cosine), which left
the model in a valley so sharp that the first step of a fresh Adam optimizer
(every coordinate moves by lr at once) at lr 3e-4 lowered the correct
answers' mean ln π by 0.5 nats: RL from it could not learn.
``first_step_damage`` measures that; a test keeps the shipped model below it.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import math
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import torch
import torch.nn.functional as F

from tiny_model import grpo
from tiny_model.harness import deterministic, resolve_device
from tiny_model.model import TinyConfig, TinyModel
from tiny_model.task import DEFAULT, LARGE, MULTI, SumTask

CHECKPOINT = Path(__file__).resolve().parent / "checkpoints" / "warm.pt"
CHECKPOINT_MULTI = Path(__file__).resolve().parent / "checkpoints" / "warm_multi.pt"
"""The multi-answer task's warm model (``MULTI_WARMUP``; ``python -m tiny_model warmup
--config multi`` rebuilds it)."""
CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "reward-drills"


@dataclass(frozen=True)
class WarmupConfig:
    """Supervised warm-up on the training split's correct scratchpads, stopped at mid competence."""

    steps: int = 310
    """Adam steps (the most, when ``target_accuracy`` is set); 310 leaves about 45 % sampled right."""
    batch_size: int = 64
    """Problems per step (drawn uniformly from the training split)."""
    lr: float = 3e-3
    """Adam learning rate: 10 steps of linear ramp, then ``schedule``."""
    schedule: str = "constant"
    """``constant``; or ``cosine``: decay to 0 at ``steps``, the first recipe, which leaves the
    model too sharp for RL (kept to show it: ``first_step_damage``)."""
    seed: int = 0
    """Seeds the initialization and the problem draws."""
    target_accuracy: float | None = None
    """Stop at the first check where sampled accuracy on training problems reaches this."""
    check_every: int = 25
    """Steps between those checks (512 training problems, one sample each)."""
    task: SumTask = field(default_factory=lambda: DEFAULT)
    model: TinyConfig = field(default_factory=TinyConfig)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["task"] = self.task.to_dict()  # the course's recipe keeps its key (no any_pair)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> WarmupConfig:
        d = dict(d)
        d["task"] = SumTask(**d["task"])
        d["model"] = TinyConfig(**d["model"])
        return cls(**d)

    def key(self) -> str:
        """A short hash of the recipe (and torch's version): the cache key of its checkpoint."""
        text = json.dumps({"recipe": self.to_dict(), "torch": torch.__version__}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


LARGE_WARMUP = WarmupConfig(
    steps=20_000,
    batch_size=256,
    lr=1e-3,
    target_accuracy=0.45,
    check_every=50,
    task=LARGE,
    model=TinyConfig(block_size=LARGE.block_size, n_layer=4, n_head=8, d_model=256),
)
"""The GPU configuration: four 2-digit numbers, a 4-layer 256-wide model (~3.2M parameters),
warmed up until about 45 % of sampled answers are right (minutes on a GPU)."""

MULTI_WARMUP = WarmupConfig(steps=600, target_accuracy=0.30, check_every=10, task=MULTI)
"""The multi-answer task (``task.MULTI``): the course's model and optimizer, trained on one
correct path per problem drawn at random (any pair's partial sum), stopped at the first check
(every 10 steps) where 30 % of the sampled answers are right. Ships as CHECKPOINT_MULTI."""


def warmup(
    config: WarmupConfig | None = None, device: str | torch.device = "cpu", progress=None
) -> tuple[TinyModel, dict[str, list[float]]]:
    """Train a fresh model with cross-entropy on the correct response tokens of the training split.

    Returns the model (eval mode) and its history: ``loss`` per step, and
    ``check_step`` / ``check_accuracy`` at each stopping check.
    """
    config = config or WarmupConfig()
    task = config.task
    if config.model.block_size < task.block_size or config.model.vocab_size != 14:
        raise ValueError(f"model {config.model} cannot read the task's sequences ({task})")
    device = torch.device(device)
    torch.manual_seed(config.seed)  # the initialization
    model = TinyModel(config.model).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    if config.schedule not in ("constant", "cosine"):
        raise ValueError(f"unknown warm-up schedule {config.schedule!r}: constant or cosine")

    def factor(s: int) -> float:
        ramp = min(1.0, (s + 1) / 10)
        return ramp * (
            0.5 * (1 + math.cos(math.pi * s / config.steps)) if config.schedule == "cosine" else 1.0
        )

    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    gen = torch.Generator().manual_seed(config.seed)
    path_gen = torch.Generator().manual_seed(config.seed + 1)  # which pair (any_pair only)
    problems = task.split()[0].to(device)  # (n_train, terms)
    history: dict[str, list[float]] = {"loss": [], "check_step": [], "check_accuracy": []}
    for step in range(config.steps):
        idx = torch.randint(0, problems.shape[0], (config.batch_size,), generator=gen)  # (B,)
        batch = problems[idx.to(device)]  # (B, terms)
        if task.any_pair:  # one correct path per problem, drawn at random
            target = task.random_correct_responses(batch, path_gen).unsqueeze(1)  # (B, 1, R)
        else:
            target = task.correct_responses(batch).unsqueeze(1)  # (B, 1, R)
        logits, _ = grpo.response_forward(model, batch, target, task=task)  # (B, 1, R, V)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        history["loss"].append(float(loss.detach()))
        if progress is not None:
            progress(1)
        if config.target_accuracy is not None and (step + 1) % config.check_every == 0:
            model.eval()
            acc = sampled_accuracy(model, seed=config.seed, problems=problems[:512], task=task)
            model.train()
            history["check_step"].append(float(step + 1))
            history["check_accuracy"].append(acc)
            if acc >= config.target_accuracy:
                break
    model.eval()
    return model, history


@torch.no_grad()
def sampled_accuracy(
    model: TinyModel,
    seed: int = 0,
    temperature: float = 1.0,
    samples: int = 1,
    problems: torch.Tensor | None = None,
    task: SumTask = DEFAULT,
) -> float:
    """Fraction of sampled responses that are correct (default: all the task's split problems)."""
    device = next(model.parameters()).device
    if problems is None:
        problems = torch.cat(task.split())  # (n_train + n_heldout, terms)
    gen = torch.Generator(device=device).manual_seed(seed)
    groups = grpo.sample_groups(model, problems.to(device), samples, gen, temperature, task=task)
    return float(groups.rewards.mean())


@torch.no_grad()
def greedy_accuracy(
    model: TinyModel, problems: torch.Tensor | None = None, task: SumTask = DEFAULT
) -> float:
    """Fraction of problems (default: all the split's) answered correctly by greedy decoding."""
    device = next(model.parameters()).device
    if problems is None:
        problems = torch.cat(task.split())
    problems = problems.to(device)
    seq = task.prompt_tokens(problems)  # (N, P)
    for _ in range(task.response_len):
        logits, _ = model(seq)  # (N, t, V)
        seq = torch.cat([seq, logits[:, -1, :].argmax(dim=-1, keepdim=True)], dim=1)
    return float(task.rewards(problems, seq[:, task.prompt_len :]).mean())


def first_step_damage(
    model: TinyModel,
    lr: float = 3e-4,
    batch_size: int = 64,
    seed: int = 0,
    task: SumTask = DEFAULT,
) -> float:
    """How much one fresh Adam step (-lr·g/|g| per coordinate) of *supervised* training hurts.

    The step is taken on the cross-entropy of ``batch_size`` training
    problems' correct scratchpads: it should *raise* their likelihood. Returns
    the change of the mean ln π(correct scratchpad | x) over all training
    problems (nats; ≥ about 0 for a model that RL can start from; the
    cosine-to-0 warm-up gave -0.5 at lr 3e-4). ``model`` is not changed.
    """
    moved = copy.deepcopy(model).eval()
    problems = task.split()[0].to(next(model.parameters()).device)
    target = task.correct_responses(problems).unsqueeze(1)  # (n, 1, R)

    def mean_logp(m: TinyModel) -> float:
        with torch.no_grad():
            logits, _ = grpo.response_forward(m, problems, target, task=task)
        return float(grpo.token_logprobs(logits, target).sum(-1).mean())

    before = mean_logp(moved)
    gen = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, problems.shape[0], (batch_size,), generator=gen).to(problems.device)
    logits, _ = grpo.response_forward(moved, problems[idx], target[idx], task=task)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target[idx].reshape(-1))
    grads = torch.autograd.grad(loss, list(moved.parameters()))
    with torch.no_grad():
        for p, g in zip(moved.parameters(), grads):
            p.sub_(lr * g / (g.abs() + 1e-8))
    return mean_logp(moved) - before


def save_checkpoint(model: TinyModel, path: Path, config: WarmupConfig, info: dict) -> None:
    """Write the state and its recipe atomically (temp file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save({"key": config.key(), "recipe": config.to_dict(), "info": info, "state": state}, tmp)
    tmp.replace(path)


def load_checkpoint(path: Path, device: str | torch.device = "cpu") -> TinyModel:
    blob = torch.load(path, map_location="cpu", weights_only=True)
    model = TinyModel(TinyConfig(**blob["recipe"]["model"]))
    model.load_state_dict(blob["state"])
    return model.to(device).eval()


_WARM: dict[str, dict[str, torch.Tensor]] = {}


def _warm_checkpoint(config: WarmupConfig) -> Path | None:
    """The shipped or cached checkpoint whose recipe is ``config``, or None."""
    for path in (CHECKPOINT, CHECKPOINT_MULTI, cache_path(config)):
        if path.is_file():
            blob = torch.load(path, map_location="cpu", weights_only=True)
            if blob.get("recipe") == config.to_dict():
                return path
    return None


def has_warm_model(config: WarmupConfig) -> bool:
    """Whether :func:`load_warm` finds ``config``'s warm model without warming up (shipped or
    cached)."""
    if config.key() in _WARM:
        return True
    try:
        return _warm_checkpoint(config) is not None
    except Exception:  # noqa: BLE001 (an unreadable cache, the last place looked: rebuilt)
        return False


def seconds_per_step(config: WarmupConfig, steps: int = 3) -> float:
    """Measured seconds of one warm-up step of ``config`` on this CPU (one thread, as the
    warm-up runs there): the mean of ``steps`` steps after a first one that is not counted."""
    import time

    probe = replace(config, steps=1, target_accuracy=None)
    with deterministic(threads=1):
        warmup(probe, "cpu")  # first call: allocation, kernels chosen
        t0 = time.perf_counter()
        warmup(replace(probe, steps=steps), "cpu")
        return (time.perf_counter() - t0) / steps


def cache_path(config: WarmupConfig) -> Path:
    """Where a recipe's warm model is kept once built (the course's ships as CHECKPOINT)."""
    return CACHE_DIR / f"warm-{config.key()}.pt"


def load_warm(
    device: str | torch.device = "cpu", config: WarmupConfig | None = None, progress=None
) -> TinyModel:
    """The warm model (mid competence), a fresh copy on every call.

    The shipped checkpoint when its recipe matches ``config``; otherwise a
    cached rebuild (``~/.cache/reward-drills``), otherwise a rebuild: seconds
    on one CPU thread for the course's model (the same bits every time on one
    machine; another CPU's kernels lead the warm-up to other weights, which is
    why the default recipe's checkpoint ships); on ``device`` for a larger
    recipe (``LARGE_WARMUP``: minutes on a GPU). ``progress(n)`` is told of each warm-up step
    when it has to warm up.
    """
    config = config or WarmupConfig()
    device = resolve_device(str(device)) if str(device) == "auto" else torch.device(device)
    key = config.key()
    if key not in _WARM:
        found = _warm_checkpoint(config)
        model = load_checkpoint(found) if found is not None else None
        if model is None:
            if config in (WarmupConfig(), MULTI_WARMUP) or device.type == "cpu":
                with deterministic(threads=1):  # one thread: the same bits on this machine
                    model, _ = warmup(config, "cpu", progress=progress)
            else:
                with deterministic():
                    model, _ = warmup(config, device, progress=progress)
            with contextlib.suppress(OSError):
                save_checkpoint(model.cpu(), cache_path(config), config, {})
        _WARM[key] = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    model = TinyModel(config.model)
    model.load_state_dict(_WARM[key])
    return model.to(device).eval()
