"""GRPO training runs: one method, one seed, from the warm model, on the training split.

Each step draws ``prompts_per_step`` training problems, samples G responses
for each at temperature 1 (on-policy: ``grpo.sample_responses`` and
``grpo.token_logprobs`` use the same softmax), verifies them, computes the
advantages and log likelihoods through the seam, weights the advantages per
token by the method (grpo.py), and takes ``inner_steps`` Adam steps on the
clipped surrogate (plus k3 KL to the warm model when ``kl_coef`` > 0).

At step 0, every ``eval_every`` steps and at the end, the held-out problems
(never trained on) are evaluated: sampled accuracy with ``eval_samples``
responses per problem, drawn with random numbers that depend only on the
seed (so at one seed every method is evaluated on the same draws: the
comparison is paired), and the mean ln π of their correct scratchpads.

Tuning (measured for issue 9, recorded in ``TrainConfig``'s defaults): Adam
at lr 5e-4 after a 50-step linear ramp, cosine decay to 0 over 800 steps. A
fresh Adam step of 1e-3 wrecks even the flatter warm model (every coordinate
moves by lr at once; the batch reward falls to 0.02 within 40 steps), a
constant 3e-4 learns but the held-out accuracy swings by ±0.1 between
evaluations, and 600 steps stop short of 0.9.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import torch

from tiny_model import grpo
from tiny_model.grpo import LOSS_AGG_MODES, METHODS, k3, token_logprobs
from tiny_model.model import TinyModel
from tiny_model.seam import Functions
from tiny_model.task import DEFAULT, SumTask, response_mask
from tiny_model.warm import sampled_accuracy

LR_SCHEDULES = ("cosine", "constant")
EVAL_SEED_OFFSET = 1_000_003  # held-out draws: their own stream, the same for every method


@dataclass
class TrainConfig:
    """A GRPO run from the warm model (one field, one knob)."""

    method: str = "grpo"
    """grpo, pos_only, nthr or random (see grpo.py)."""
    steps: int = 800
    """Optimizer iterations over fresh batches of training problems (the schedule's length)."""
    stop_after: int | None = None
    """Stop after this many steps, the schedule unchanged: the first part of a ``steps`` run."""
    prompts_per_step: int = 16
    """Groups per batch (problems drawn uniformly from the training split)."""
    group_size: int = 8
    """G: responses sampled per problem."""
    lr: float = 5e-4
    """Peak Adam learning rate."""
    lr_warmup: int = 50
    """Steps of linear ramp from 0 to lr (a fresh Adam's first steps move every coordinate by lr)."""
    lr_schedule: str = "cosine"
    """After the ramp: ``cosine`` decay to 0 at ``steps``, or ``constant``."""
    inner_steps: int = 1
    """mu: updates per batch; clipping binds only from the second one."""
    clip_eps: float | None = 0.2
    """PPO/GRPO ratio clipping; None disables it."""
    kl_coef: float = 0.0
    """Weight of the k3 KL to the frozen warm model (always logged)."""
    loss_agg: str = "seq-mean-token-mean"
    """One of LOSS_AGG_MODES (notebook 03)."""
    nthr_beta: float = 1.0
    """NTHR threshold tau = beta * min over correct responses of their mean score."""
    eta: float | None = None
    """Weight on selected negative tokens; None: eta_schedule(group success rate), as in the paper."""
    temperature: float = 1.0
    """Sampling temperature (1: on-policy for the loss's log likelihoods)."""
    eval_every: int = 50
    """Held-out evaluation every this many steps (and at step 0 and at the end)."""
    eval_samples: int = 4
    """Sampled responses per held-out problem at each evaluation."""
    seed: int = 0
    """Seeds problem draws, sampling, the random baseline and the held-out draws."""
    task: SumTask = field(default_factory=lambda: DEFAULT)
    """The task (its split gives the training and held-out problems)."""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> TrainConfig:
        d = dict(d)
        if isinstance(d.get("task"), dict):
            d["task"] = SumTask(**d["task"])
        return cls(**d)

    def check(self) -> None:
        """Raise ValueError for settings that cannot run."""
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r}; expected one of {METHODS}")
        if self.loss_agg not in LOSS_AGG_MODES:
            raise ValueError(f"unknown loss aggregation {self.loss_agg!r}")
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"unknown lr schedule {self.lr_schedule!r}; one of {LR_SCHEDULES}")
        if self.steps < 0 or self.eval_every < 1 or self.group_size < 2:
            raise ValueError("steps >= 0, eval_every >= 1 and group_size >= 2 are needed")
        if self.stop_after is not None and self.stop_after < 0:
            raise ValueError("stop_after must be >= 0 (or None)")

    def lr_factor(self, step: int) -> float:
        """The multiplier of lr at optimizer step ``step`` (0-based)."""
        ramp = min(1.0, (step + 1) / self.lr_warmup) if self.lr_warmup > 0 else 1.0
        if self.lr_schedule == "cosine" and self.steps > 0:
            return ramp * 0.5 * (1 + math.cos(math.pi * step / self.steps))
        return ramp


@dataclass
class TrainResult:
    config: TrainConfig
    history: dict[str, list[float]] = field(default_factory=dict)
    model: TinyModel | None = None

    def to_dict(self) -> dict:
        return {"config": self.config.to_dict(), "history": self.history}


LOGGED = (
    "reward_mean",  # mean reward of the sampled batch
    "zero_adv_frac",  # fraction of groups whose advantages are all 0 (all right / all wrong)
    "kl_ref",  # mean k3 KL(pi || ref) per sampled token, before the update
    "correct_logp_change",  # mean over mixed groups of the Eq. 2 change of this step's update
    "selected_frac",  # negative tokens whose weight the method changed / negative tokens
    "response_len",  # mean tokens up to and including EOS
    "clip_frac",  # fraction of tokens with |ratio - 1| > clip_eps (last inner step)
    "loss",
    "lr",  # the learning rate of this step
)
EVALUATED = (
    "eval_step",  # steps taken before the evaluation (0 = the warm model)
    "heldout_accuracy",  # sampled accuracy on the held-out problems
    "heldout_answer_logp",  # mean ln pi(correct scratchpad | x) on the held-out problems
)


def answer_logprob(
    fns: Functions, model: TinyModel, problems: torch.Tensor, task: SumTask = DEFAULT
) -> float:
    """Mean sequence log likelihood of the correct scratchpads of ``problems`` (N, terms)."""
    target = task.correct_responses(problems).unsqueeze(1)  # (N, 1, R)
    with torch.no_grad():
        logits, _ = grpo.response_forward(model, problems, target, task=task)  # (N, 1, R, V)
    mask = response_mask(target)  # (N, 1, R)
    return float(grpo.sequence_logprobs(fns, logits, target, mask).mean())


def train(
    fns: Functions,
    model: TinyModel,
    config: TrainConfig,
    *,
    progress: Callable[[int], object] | None = None,
) -> TrainResult:
    """Run ``config.steps`` GRPO steps on ``model`` in place (a frozen copy is the KL reference)."""
    with grpo.single_thread():
        return _train(fns, model, config, progress)


def _train(
    fns: Functions,
    model: TinyModel,
    config: TrainConfig,
    progress: Callable[[int], object] | None,
) -> TrainResult:
    config.check()
    if config.method in ("nthr", "random"):
        fns.require("prediction_errors", "token_scores", "nthr_weights")
        if config.eta is None:
            fns.require("eta_schedule")
    task = config.task
    device = next(model.parameters()).device
    ref = copy.deepcopy(model).eval().requires_grad_(False)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, config.lr_factor)
    gen = torch.Generator(device=device).manual_seed(config.seed)
    cpu_gen = torch.Generator().manual_seed(config.seed + 1)
    train_problems, held = (p.to(device) for p in task.split())  # (n_train, terms), (n_held, terms)
    history: dict[str, list[float]] = {k: [] for k in LOGGED + EVALUATED}

    def evaluate(step: int) -> None:
        was = model.training
        model.eval()
        history["eval_step"].append(float(step))
        history["heldout_accuracy"].append(
            sampled_accuracy(
                model,
                seed=config.seed + EVAL_SEED_OFFSET,
                samples=config.eval_samples,
                problems=held,
                task=task,
            )
        )
        history["heldout_answer_logp"].append(answer_logprob(fns, model, held, task))
        model.train(was)

    evaluate(0)
    last = config.steps if config.stop_after is None else min(config.stop_after, config.steps)
    for step in range(last):
        idx = torch.randint(
            0, train_problems.shape[0], (config.prompts_per_step,), generator=cpu_gen
        )
        batch = train_problems[idx.to(device)]  # (N, terms)
        groups = grpo.sample_groups(
            model, batch, config.group_size, gen, config.temperature, task=task
        )
        adv = torch.as_tensor(fns.group_advantages(groups.rewards)).to(device)  # (N, G)
        with torch.no_grad():
            logits_old, hidden_old = grpo.response_forward(
                model, groups.problems, groups.responses, task=task
            )
            logp_old = token_logprobs(logits_old, groups.responses)  # (N, G, R)
            ref_logits, _ = grpo.response_forward(ref, groups.problems, groups.responses, task=task)
            ref_logp = token_logprobs(ref_logits, groups.responses)  # (N, G, R)
            seq_before = grpo.sequence_logprobs(fns, logits_old, groups.responses, groups.mask)
        if config.method in ("nthr", "random") and config.eta is None:
            eta = torch.tensor(
                [float(fns.eta_schedule(float(p))) for p in groups.rewards.mean(dim=1)]
            )  # (N,) per-group eta = 2|0.5 - p|
        else:
            eta = 0.0 if config.eta is None else config.eta
        tw = grpo.token_weights(
            config.method,
            fns,
            groups,
            adv,
            logits_old,
            hidden_old,
            beta=config.nthr_beta,
            eta=eta,
            generator=cpu_gen,
        )
        tok_adv = (adv.unsqueeze(-1) * tw.weights).flatten(0, 1)  # (N*G, R)
        mask = groups.mask.flatten(0, 1)  # (N*G, R)
        lr_now = opt.param_groups[0]["lr"]
        for _ in range(config.inner_steps):
            logits, _ = grpo.response_forward(model, groups.problems, groups.responses, task=task)
            logp = token_logprobs(logits, groups.responses).flatten(0, 1)  # (N*G, R)
            loss, stats = grpo.grpo_loss(
                logp,
                logp_old.flatten(0, 1),
                tok_adv,
                mask,
                clip_eps=config.clip_eps,
                kl_coef=config.kl_coef,
                ref_logp=ref_logp.flatten(0, 1),
                loss_agg=config.loss_agg,
            )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        sched.step()
        with torch.no_grad():
            logits_new, _ = grpo.response_forward(
                model, groups.problems, groups.responses, task=task
            )
            seq_after = grpo.sequence_logprobs(fns, logits_new, groups.responses, groups.mask)
        mixed = groups.mixed.nonzero().flatten().tolist()
        changes = [
            float(fns.likelihood_change(seq_before[i], seq_after[i], groups.correct[i]))
            for i in mixed
        ]
        m = groups.mask.float()
        kl = float((k3(logp_old, ref_logp) * m).sum() / m.sum())
        history["reward_mean"].append(float(groups.rewards.mean()))
        history["zero_adv_frac"].append(float((adv == 0).all(dim=1).float().mean()))
        history["kl_ref"].append(kl)
        history["correct_logp_change"].append(
            math.fsum(changes) / len(changes) if changes else float("nan")
        )
        history["selected_frac"].append(tw.modified_fraction)
        history["response_len"].append(float(m.sum(dim=-1).mean()))
        history["clip_frac"].append(stats["clip_frac"])
        history["loss"].append(stats["loss"])
        history["lr"].append(lr_now)
        if (step + 1) % config.eval_every == 0 or step + 1 == last:
            evaluate(step + 1)
        if progress is not None:
            progress(1)
    return TrainResult(config=config, history=history, model=model)
