"""The one-step LLD probe (Deng et al., arXiv 2505.18830, Eq. 2).

For each prompt x, from the same parameters θ: sample G responses, skip the
group if they are all right or all wrong, take one update θ -> θ' on that
group's loss alone, and record the mean over the group's correct responses of
``ln pi_θ'(y+|x) - ln pi_θ(y+|x)`` (sequence log likelihood). Every method sees
the same groups, so the changes are paired by group.

The update is a choice (``ProbeConfig.optimizer``):

``adam`` (default)
    Adam's first bias-corrected step, θ' = θ - lr * g / (|g| + ε): every
    coordinate moves by about lr in the direction of its gradient's sign. This
    is the update real GRPO training takes, and the one under which the paper's
    observations show: positive-only beats GRPO, GRPO shows LLD, NTHR beats
    GRPO and a random selection of as many tokens.
``sgd``
    A plain gradient step θ' = θ - lr * g, near gradient flow. The control: on
    on-policy samples at temperature 1 with response-independent weights,
    E[∇ln π(y) | wrong] = -∇P(C) / P(W), so on average the negative responses'
    gradient *raises* the correct responses' likelihood (see
    ``first_order_gap``) and positive-only trails GRPO.

Large steps of either kind swamp the effect: even positive-only then lowers
correct likelihoods on some groups.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch.func import functional_call

from tiny_model import grpo
from tiny_model.grpo import Groups, TokenWeights
from tiny_model.model import TinyModel
from tiny_model.seam import Functions, has_reference, reference
from tiny_model.task import DEFAULT, SumTask
from tiny_model.thr import NEW_METHODS, REGULARISED, THR_METHODS

PAIRS = (("pos_only", "grpo"), ("nthr", "grpo"), ("nthr", "random")) + tuple(
    (m, "grpo") for m in NEW_METHODS
)
OPTIMIZERS = ("adam", "sgd")


@dataclass
class ProbeConfig:
    """Settings of the one-step probe (paper settings where the paper has one)."""

    methods: tuple[str, ...] = grpo.METHODS
    """Methods to probe, each on the same groups."""
    groups: int = 60
    """Mixed groups to probe (all-correct / all-wrong groups are skipped, not counted)."""
    group_size: int = 8
    """G: responses per prompt."""
    lr: float = 1e-5
    """Step size of the one update θ -> θ' (small: the change is first order in lr)."""
    optimizer: str = "adam"
    """``adam``: Adam's first step -lr·g/(|g|+adam_eps); ``sgd``: the plain step -lr·g."""
    adam_eps: float = 1e-8
    """Adam's ε (torch's default)."""
    loss_agg: str = "seq-mean-token-mean"
    """Loss aggregation of the update (GRPO's original)."""
    beta: float = 1.0
    """NTHR threshold factor (paper: 1)."""
    eta: float = 0.0
    """Weight on selected negative tokens in the probe (paper: 0)."""
    random_draws: int = 8
    """Draws of the random baseline per group; its change is their mean (less noise, same mean)."""
    temperature: float = 1.0
    """Sampling temperature of the responses."""
    seed: int = 0
    """Seeds the problem order, the sampling, the random baseline and the bootstrap."""
    bootstrap: int = 2000
    """Bootstrap resamples for the paired intervals."""
    task: SumTask = field(default_factory=lambda: DEFAULT)
    """The task; groups are drawn from its training problems."""
    thr_p: float = 0.5
    """|p| of thr_exploit / thr_explore (notebook 07)."""
    nll_coef: float = 0.1
    """Weight of the NLL on correct responses (method nll)."""
    smaug_coef: float = 1.0
    """Weight of the SMAUG-style floor (method smaug; its gradient is 0 at θ = the reference)."""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class ProbeResult:
    """Per-group changes of every method on the same groups, and their summary."""

    config: ProbeConfig
    groups: Groups  # the probed (mixed) groups, on the CPU
    advantages: torch.Tensor  # (n, G)
    changes: dict[str, np.ndarray]  # method -> (n,) Eq. 2 change per group
    selected: dict[str, np.ndarray]  # method -> (n,) modified negative tokens / negative tokens
    weights: dict[str, torch.Tensor]  # method -> (n, G, 5) per-token weights
    nthr_scores: torch.Tensor | None  # (n, G, 5) s- on negative tokens, nan elsewhere
    nthr_tau: torch.Tensor | None  # (n,) threshold per group
    lld: dict[str, float]  # method -> LLD rate (fns.lld_rate, eps 0)
    paired: dict[str, dict[str, float]] = field(default_factory=dict)
    problems_drawn: int = 0  # problems sampled to find the mixed groups

    def summary(self) -> dict[str, dict[str, float]]:
        """method -> mean_change, median_change, lld_rate, selected_fraction."""
        return summarize(self.changes, self.selected, self.lld)

    def table(self) -> str:
        """The summary and the paired differences as aligned text."""
        n = len(next(iter(self.changes.values())))
        head = (
            f"one-step probe: {n} mixed groups of {self.config.group_size}, "
            f"{self.config.optimizer} lr={self.config.lr:g}, seed={self.config.seed}"
        )
        return "\n".join([head, *summary_rows(self.summary(), self.paired)])

    def __str__(self) -> str:
        return self.table()

    def to_dict(self) -> dict:
        """Plain JSON-able metrics (per-group changes included)."""
        return {
            "config": {**self.config.to_dict(), "methods": list(self.config.methods)},
            "n_groups": len(next(iter(self.changes.values()))),
            "problems_drawn": self.problems_drawn,
            "summary": self.summary(),
            "paired": self.paired,
            "per_group": {
                "problems": self.groups.problems.tolist(),
                "n_correct": self.groups.correct.sum(dim=1).tolist(),
                "changes": {m: c.tolist() for m, c in self.changes.items()},
                "selected": {m: s.tolist() for m, s in self.selected.items()},
            },
        }


def verdict(p: dict[str, float]) -> str:
    """'> 0', '< 0' or 'includes 0' for an interval {'ci_low', 'ci_high'}."""
    if p["ci_low"] > 0:
        return "> 0"
    if p["ci_high"] < 0:
        return "< 0"
    return "includes 0"


def summary_rows(
    summary: dict[str, dict[str, float]], paired: dict[str, dict[str, float]], indent: str = ""
) -> list[str]:
    """Aligned rows: one per method (mean and median change, LLD rate, selected), one per pair."""
    lines = [
        f"{indent}{'method':<10}{'mean Δ':>12}{'median Δ':>12}{'LLD rate':>10}{'selected':>10}"
    ]
    for m, s in summary.items():
        lines.append(
            f"{indent}{m:<10}{s['mean_change']:>12.3e}{s['median_change']:>12.3e}"
            f"{s['lld_rate']:>10.3f}{s['selected_fraction']:>10.3f}"
        )
    for name, p in paired.items():
        lines.append(
            f"{indent}paired {name:<14} mean {p['mean']:+.3e}  95% CI "
            f"[{p['ci_low']:+.3e}, {p['ci_high']:+.3e}]  {verdict(p)}"
        )
    return lines


def summarize(
    changes: dict[str, np.ndarray], selected: dict[str, np.ndarray], lld: dict[str, float]
) -> dict[str, dict[str, float]]:
    """method -> mean_change, median_change, lld_rate, selected_fraction (one seed or pooled)."""
    return {
        m: {
            "mean_change": float(np.mean(c)),
            "median_change": float(np.median(c)),
            "lld_rate": lld[m],
            "selected_fraction": float(np.mean(selected[m])),
        }
        for m, c in changes.items()
    }


def lld_rates(fns: Functions, changes: dict[str, np.ndarray]) -> dict[str, float]:
    """method -> the learner's lld_rate of its per-group changes (eps 0)."""
    return {
        m: float(fns.lld_rate(torch.tensor(c, dtype=torch.float64), eps=0.0))
        for m, c in changes.items()
    }


def bootstrap_mean_ci(
    values: np.ndarray, seed: int = 0, resamples: int = 2000, level: float = 0.95
) -> dict[str, float]:
    """Mean of ``values`` and its percentile bootstrap interval (seeded, deterministic)."""
    values = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(values), size=(resamples, len(values)))  # (R, n)
    means = values[idx].mean(axis=1)  # (R,)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return {"mean": float(values.mean()), "ci_low": float(lo), "ci_high": float(hi)}


def collect_mixed_groups(
    model: TinyModel,
    n_groups: int,
    group_size: int,
    generator: torch.Generator,
    order_generator: torch.Generator,
    temperature: float = 1.0,
    chunk: int = 32,
    task: SumTask = DEFAULT,
) -> tuple[Groups, int]:
    """Sample groups for training problems in a seeded random order until ``n_groups`` are mixed.

    Returns the mixed groups (at most ``n_groups``; fewer only if all the
    training problems were used) and how many problems were drawn.
    """
    device = next(model.parameters()).device
    pool = task.split()[0]  # (n_train, terms)
    order = torch.randperm(pool.shape[0], generator=order_generator)  # (n_train,)
    problems = pool[order]  # (n_train, terms)
    kept: list[Groups] = []
    found, drawn = 0, 0
    while found < n_groups and drawn < problems.shape[0]:
        batch = problems[drawn : drawn + chunk].to(device)  # (chunk, terms)
        drawn += batch.shape[0]
        g = grpo.sample_groups(model, batch, group_size, generator, temperature, task=task)
        g = g.select(g.mixed.nonzero().flatten()[: n_groups - found])
        kept.append(g)
        found += g.problems.shape[0]
    groups = Groups(
        *(
            torch.cat(parts)
            for parts in zip(*((g.problems, g.responses, g.mask, g.rewards) for g in kept))
        )
    )
    return groups, drawn


def update(grad: torch.Tensor, config: ProbeConfig) -> torch.Tensor:
    """The step θ - θ' of the probe's optimizer for one parameter tensor (same shape as grad).

    sgd: lr·g. adam: lr·g/(|g| + ε), which is Adam's first step: with fresh
    moments m = (1-β1)g and v = (1-β2)g², bias correction gives m̂ = g and
    v̂ = g², so the step lr·m̂/(√v̂ + ε) does not depend on β1, β2.
    """
    if config.optimizer == "sgd":
        return config.lr * grad
    if config.optimizer == "adam":
        return config.lr * grad / (grad.abs() + config.adam_eps)
    raise ValueError(f"unknown optimizer {config.optimizer!r}; expected one of {OPTIMIZERS}")


def _stepped(p: torch.Tensor, grads: torch.Tensor, config: ProbeConfig) -> torch.Tensor:
    """p (*shape) and K gradients (K, *shape) -> (K, *shape): p - update(g) for each g, with
    the same float32 operations as ``update`` in fewer passes over memory."""
    step = torch.mul(grads, config.lr)  # (K, *shape) lr·g
    if config.optimizer == "adam":
        step.div_(grads.abs().add_(config.adam_eps))  # lr·g / (|g| + ε)
    elif config.optimizer != "sgd":
        raise ValueError(f"unknown optimizer {config.optimizer!r}; expected one of {OPTIMIZERS}")
    return torch.sub(p, step)


def regulariser_at_theta(
    method: str,
    config: ProbeConfig,
    logp: torch.Tensor,
    mask: torch.Tensor,
    correct: torch.Tensor,
    fns: Functions | None = None,
) -> torch.Tensor:
    """nll's or smaug's extra loss for the probe's one step from θ (the reference is θ itself).

    logp (G, R) with gradient, mask (G, R), correct (G,)."""
    if method == "nll":
        return config.nll_coef * _graded(fns, "nll_on_correct")(logp, mask, correct)
    seq = (logp * mask.to(logp.dtype)).sum(dim=-1)  # (G,)
    return config.smaug_coef * _graded(fns, "smaug_floor")(seq, seq.detach(), correct)


def _graded(fns: Functions | None, name: str) -> Callable:
    """tiny_model's reference for ``name`` where the installation has one (every result the
    full form ships), else the seam's (the course form: the learner's own)."""
    if has_reference() or fns is None or getattr(fns, name) is None:
        return reference(name)
    return getattr(fns, name)


def step_loss(
    fns: Functions, logp: torch.Tensor, tok_adv: torch.Tensor, mask: torch.Tensor, loss_agg: str
) -> torch.Tensor:
    """The probe's loss for one step from θ: the unclipped surrogate of the per-token
    advantages ``tok_adv`` (G, R) on ``logp`` (G, R, with gradient), aggregated by ``loss_agg``.
    tiny_model's reference where the installation has one; else (the course form) the seam's
    ``clipped_surrogate`` (notebook 07) with ``logp_old`` = ``logp``: at ratio 1 clipping never
    binds, so its value and gradient are the unclipped surrogate's."""
    if has_reference() or fns.clipped_surrogate is None:
        loss, _ = reference("grpo_loss")(
            logp, logp.detach(), tok_adv, mask, clip_eps=None, loss_agg=loss_agg
        )
        return loss
    return torch.as_tensor(
        fns.clipped_surrogate(logp, logp.detach(), tok_adv, mask, 0.2, None, loss_agg)
    )


def one_step_changes_loop(
    model: TinyModel,
    fns: Functions,
    group: Groups,
    methods: Sequence[str],
    config: ProbeConfig,
    generator: torch.Generator,
) -> tuple[dict[str, float], dict[str, TokenWeights], torch.Tensor]:
    """Eq. 2 for one group (N = 1) and each method, all from the same θ, one draw at a time.

    The plain form of :func:`one_step_changes` (a backward pass through the model and a
    forward pass with the stepped parameters per method and per random draw), kept as the
    reference the batched form is tested against and timed against
    (benchmarks/probe_speed.py).
    """
    params = {k: p for k, p in model.named_parameters()}
    task = config.task
    logits, hidden = grpo.response_forward(model, group.problems, group.responses, task=task)
    logp_tok = grpo.token_logprobs(logits, group.responses).flatten(0, 1)  # (G, 5)
    before = grpo.grouped_logprobs(fns, logits.detach(), group.responses, group.mask)[0]  # (G,)
    adv = torch.as_tensor(fns.group_advantages(group.rewards)).to(logits.device)  # (1, G)
    mask = group.mask.flatten(0, 1)  # (G, 5)
    changes: dict[str, float] = {}
    weights: dict[str, TokenWeights] = {}
    for m in methods:
        draws = []
        for _ in range(config.random_draws if m == "random" else 1):
            tw = grpo.token_weights(
                m,
                fns,
                group,
                adv,
                logits.detach(),
                hidden.detach(),
                beta=config.beta,
                eta=config.eta,
                generator=generator,
                thr_p=config.thr_p,
            )
            tok_adv = (adv.unsqueeze(-1) * tw.weights).flatten(0, 1)  # (G, 5)
            loss = step_loss(fns, logp_tok, tok_adv, mask, config.loss_agg)
            if m in REGULARISED:
                loss = loss + regulariser_at_theta(m, config, logp_tok, mask, group.correct[0], fns)
            grads = torch.autograd.grad(loss, list(params.values()), retain_graph=True)
            stepped = {
                k: p.detach() - update(g, config) for (k, p), g in zip(params.items(), grads)
            }

            def moved(
                idx: torch.Tensor, stepped: dict = stepped
            ) -> tuple[torch.Tensor, torch.Tensor]:
                return functional_call(model, stepped, (idx,))

            with torch.no_grad():
                logits_after, _ = grpo.response_forward(
                    moved, group.problems, group.responses, task=task
                )
                after = grpo.grouped_logprobs(fns, logits_after, group.responses, group.mask)[0]
            draws.append(float(fns.likelihood_change(before, after, group.correct[0])))
        changes[m] = sum(draws) / len(draws)
        weights[m] = tw  # the last draw
    return changes, weights, adv[0].detach()


class _Cached(torch.nn.Module):
    """A module whose forward is the model's ``forward_cached`` (what functional_call calls)."""

    def __init__(self, model: TinyModel):
        super().__init__()
        self.model = model

    def forward(
        self, idx: torch.Tensor, past: list | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, list]:
        return self.model.forward_cached(idx, past)


def group_logits(
    forward_cached: Callable[..., tuple], prompt: torch.Tensor, responses: torch.Tensor
) -> torch.Tensor:
    """Logits at the positions that predict the G responses' tokens of one prompt.

    prompt (1, P), responses (G, R) -> (G, R, V): the prompt's positions computed once and
    shared by the G responses (``TinyModel.forward_cached``), the response positions one per
    token; ``grpo.response_forward`` computes the same logits with the prompt repeated G times
    (up to float32 rounding, at 7 + 4G positions instead of 11G)."""
    g = responses.shape[0]
    prompt_logits, _, past = forward_cached(prompt)  # (1, P, V)
    past = [(k.expand(g, -1, -1, -1), v.expand(g, -1, -1, -1)) for k, v in past]
    rest, _, _ = forward_cached(responses[:, :-1], past)  # (G, R - 1, V)
    return torch.cat([prompt_logits[:, -1:, :].expand(g, -1, -1), rest], dim=1)  # (G, R, V)


def one_step_changes(
    model: TinyModel,
    fns: Functions,
    group: Groups,
    methods: Sequence[str],
    config: ProbeConfig,
    generator: torch.Generator,
) -> tuple[dict[str, float], dict[str, TokenWeights], torch.Tensor]:
    """Eq. 2 for one group (N = 1) and each method, all from the same θ.

    Every method's loss depends on θ only through the per-token log likelihoods ``logp_tok``
    (G, 5), so its gradient is J^T c, J the Jacobian of ``logp_tok`` and c = ∂loss/∂logp_tok
    (G, 5), that method's cotangent (exact for every loss, the regularised ones included: the
    chain rule, not linearity). The cotangents come from autograd on the small loss graph,
    one per method and random draw; then one batched backward through the model gives all
    the gradients and one batched forward (``torch.func.vmap``) all the stepped models' log
    likelihoods, both with the prompt's positions computed once for the group
    (:func:`group_logits`). The scores' inputs come from the full forward, as in training.
    The same numbers as :func:`one_step_changes_loop` up to float32 rounding (batched kernels
    sum in another order; measured: at most 2.6e-6 nats per change), and a method's change
    does not depend on which methods ran beside it. Measured on one quiet core, per seed of
    60 groups: 1.8 s against the plain form's 2.8 s for grpo, nthr and random (10 gradients a
    group), but 0.78 s against 0.61 s for grpo and pos_only (2 gradients: the batching's
    fixed cost is not made up).
    """
    task = config.task
    cached = _Cached(model)
    params = dict(cached.named_parameters())  # the model's, named model.*
    prompt = task.prompt_tokens(group.problems)  # (1, P)
    responses = group.responses[0]  # (G, 5)
    logits = hidden = None  # the inputs of the scores, for the methods that score tokens:
    if any(m in ("nthr", "random") or m in THR_METHODS for m in methods):
        with torch.no_grad():  # the full forward, as in training
            logits, hidden = grpo.response_forward(
                model, group.problems, group.responses, task=task
            )
    at_theta = group_logits(cached, prompt, responses)  # (G, 5, V)
    logp_tok = grpo.token_logprobs(at_theta, responses)  # (G, 5)
    adv = torch.as_tensor(fns.group_advantages(group.rewards)).to(responses.device)  # (1, G)
    mask = group.mask.flatten(0, 1)  # (G, 5)
    leaf = logp_tok.detach().requires_grad_(True)  # (G, 5): the loss graph starts here
    selection: dict[int, tuple] = {}  # NTHR scores and selection, computed once for the group
    plan: list[str] = []  # the method of each cotangent, in order
    cotangents: list[torch.Tensor] = []
    weights: dict[str, TokenWeights] = {}
    for m in methods:
        for _ in range(config.random_draws if m == "random" else 1):
            tw = grpo.token_weights(
                m,
                fns,
                group,
                adv,
                logits,
                hidden,
                beta=config.beta,
                eta=config.eta,
                generator=generator,
                thr_p=config.thr_p,
                selection=selection,
            )
            tok_adv = (adv.unsqueeze(-1) * tw.weights).flatten(0, 1)  # (G, 5)
            with torch.enable_grad():
                loss = step_loss(fns, leaf, tok_adv, mask, config.loss_agg)
                if m in REGULARISED:
                    loss = loss + regulariser_at_theta(m, config, leaf, mask, group.correct[0], fns)
                (c,) = torch.autograd.grad(loss, leaf)  # (G, 5)
            cotangents.append(c)
            plan.append(m)
            weights[m] = tw  # the last draw
    grads = torch.autograd.grad(
        logp_tok, list(params.values()), torch.stack(cotangents), is_grads_batched=True
    )  # each (K, *shape)
    stepped = {k: _stepped(p.detach(), g, config) for (k, p), g in zip(params.items(), grads)}

    def seq_logits(p: dict[str, torch.Tensor]) -> torch.Tensor:
        return group_logits(lambda *args: functional_call(cached, p, args), prompt, responses)

    with torch.no_grad():
        logits_after = torch.func.vmap(seq_logits)(stepped)  # (K, G, 5, V)
        k, g, r, v = logits_after.shape
        after = grpo.grouped_logprobs(
            fns,
            logits_after.reshape(1, k * g, r, v),
            group.responses.expand(k, g, r).reshape(1, k * g, r),
            group.mask.expand(k, g, r).reshape(1, k * g, r),
        ).reshape(k, g)  # (K, G)
        before = grpo.grouped_logprobs(
            fns, at_theta.detach().unsqueeze(0), group.responses, group.mask
        )[0]  # (G,)
    draws: dict[str, list[float]] = {m: [] for m in methods}
    for m, a in zip(plan, after):
        draws[m].append(float(fns.likelihood_change(before, a, group.correct[0])))
    changes = {m: sum(d) / len(d) for m, d in draws.items()}
    return changes, weights, adv[0].detach()


def run_probe(
    model: TinyModel,
    fns: Functions,
    config: ProbeConfig | None = None,
    *,
    progress: Callable[[int], object] | None = None,
    **overrides: object,
) -> ProbeResult:
    """Run the one-step probe of every method in ``config.methods`` on the same mixed groups.

    ``overrides`` set ProbeConfig fields (``run_probe(model, fns, groups=40, lr=0.01)``).
    The model is not changed. Runs on one CPU thread (see grpo.single_thread).
    """
    with grpo.single_thread():
        return _run_probe(model, fns, config, progress, overrides)


def _run_probe(
    model: TinyModel,
    fns: Functions,
    config: ProbeConfig | None,
    progress: Callable[[int], object] | None,
    overrides: dict,
    step: Callable[..., tuple] | None = None,
) -> ProbeResult:
    """run_probe's body; ``step`` is the per-group function (one_step_changes by default,
    one_step_changes_loop for the reference path the benchmark and the tests compare with)."""
    step = step or one_step_changes
    config = config or ProbeConfig()
    if overrides:
        config = dataclasses.replace(config, **overrides)
    if config.optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {config.optimizer!r}; expected one of {OPTIMIZERS}")
    methods = tuple(config.methods)
    for m in methods:
        if m not in grpo.ALL_METHODS:
            raise ValueError(f"unknown method {m!r}; expected one of {grpo.ALL_METHODS}")
    if any(m in THR_METHODS for m in methods):
        fns.require("prediction_errors", "token_scores")
    if any(m in ("nthr", "random") for m in methods):
        fns.require("prediction_errors", "token_scores", "nthr_weights")
    device = next(model.parameters()).device
    gen = torch.Generator(device=device).manual_seed(config.seed)
    cpu_gen = torch.Generator().manual_seed(config.seed)
    was_training = model.training
    model.eval()
    groups, drawn = collect_mixed_groups(
        model, config.groups, config.group_size, gen, cpu_gen, config.temperature, task=config.task
    )
    n = groups.problems.shape[0]
    changes = {m: np.zeros(n) for m in methods}
    selected = {m: np.zeros(n) for m in methods}
    weights = {m: [] for m in methods}
    advs, scores, taus = [], [], []
    for i in range(n):
        group = groups.select(slice(i, i + 1))
        ch, tws, adv = step(model, fns, group, methods, config, cpu_gen)
        advs.append(adv.cpu())
        for m in methods:
            changes[m][i] = ch[m]
            selected[m][i] = tws[m].modified_fraction
            weights[m].append(tws[m].weights[0].cpu())
        if "nthr" in tws:
            scores.append(tws["nthr"].scores[0].cpu())
            taus.append(tws["nthr"].tau.cpu())
        if progress is not None:
            progress(1)
    model.train(was_training)
    lld = lld_rates(fns, changes)
    paired = {}
    for a, b in PAIRS:
        if a in methods and b in methods:
            paired[f"{a}-{b}"] = bootstrap_mean_ci(
                changes[a] - changes[b], seed=config.seed, resamples=config.bootstrap
            )
    return ProbeResult(
        config=config,
        groups=groups.to("cpu"),
        advantages=torch.stack(advs) if advs else torch.zeros(0, config.group_size),
        changes=changes,
        selected=selected,
        weights={m: torch.stack(w) for m, w in weights.items() if w},
        nthr_scores=torch.stack(scores) if scores else None,
        nthr_tau=torch.cat(taus) if taus else None,
        lld=lld,
        paired=paired,
        problems_drawn=drawn,
    )


def linearity_check(
    model: TinyModel, fns: Functions, lrs: Sequence[float], **overrides: object
) -> dict[float, dict[str, float]]:
    """Mean change / lr per method for several step sizes: flat near gradient flow."""
    out = {}
    for lr in lrs:
        res = run_probe(model, fns, lr=lr, bootstrap=10, **overrides)
        out[lr] = {m: float(np.mean(c)) / lr for m, c in res.changes.items()}
    return out


# ------------------------------------------------------------------------- display


def shared_with_correct(groups: Groups, task: SumTask = DEFAULT) -> torch.Tensor:
    """(N, G, R) bool: valid tokens equal to the correct scratchpad's token at that position."""
    target = task.correct_responses(groups.problems).unsqueeze(1)  # (N, 1, R)
    return (groups.responses == target) & groups.mask  # (N, G, R)


def _marks(row: torch.Tensor, mask: torch.Tensor, yes: str, width: int) -> str:
    chars = [(yes if bool(v) else "·") if bool(m) else " " for v, m in zip(row, mask)]
    return (
        " ".join("".join(chars[i : i + width]) for i in range(0, len(chars) - 1, width))
        + (chars[-1])
    )


def show_group(result: ProbeResult, i: int, method: str = "nthr") -> str:
    """Group ``i`` of a probe as text: each response, its reward and advantage, and per token
    ``=`` where it equals the correct scratchpad's token and ``^`` where ``method`` changed
    its weight (for nthr: the tokens NTHR selects), with the NTHR scores when available."""
    task = result.config.task
    g = result.groups.select(slice(i, i + 1))
    shared = shared_with_correct(g, task)[0]  # (G, R)
    adv = result.advantages[i]  # (G,)
    w = result.weights.get(method)
    correct = task.format_response(task.correct_responses(g.problems)[0])
    lines = [f"{task.format_prompt(g.problems[0])}  correct: {correct}"]
    for m in result.changes:
        lines[0] += f"  Δ[{m}]={result.changes[m][i]:+.2e}"
    lines.append(f"  {'response':<8} ok {'A':>6}  {'same':<6} {method:<8} NTHR scores s-")
    for j in range(g.group_size):
        resp, mask = g.responses[0, j], g.mask[0, j]
        changed = (w[i, j] != 1) & mask if w is not None else torch.zeros_like(mask)
        scores = ""
        if result.nthr_scores is not None and adv[j] < 0:
            s = result.nthr_scores[i, j]
            scores = " ".join(f"{float(v):+.2f}" for v, m in zip(s, mask) if bool(m))
        lines.append(
            f"  {task.format_response(resp):<8} {'✓' if g.correct[0, j] else '✗'} {float(adv[j]):+6.2f}"
            f"  {_marks(shared[j], mask, '=', task.width):<6} "
            f"{_marks(changed, mask, '^', task.width):<8} {scores}"
        )
    if result.nthr_tau is not None:
        lines.append(f"  NTHR threshold τ = {float(result.nthr_tau[i]):+.3f} (selected: s- > τ)")
    return "\n".join(lines)
