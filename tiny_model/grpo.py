"""GRPO on the tiny task: sampling groups, per-token advantage weights, the loss, training.

Methods (all are GRPO with a per-token weight w on the advantage, A_{i,t} = A_i * w_{i,t}):

    grpo      w = 1 everywhere
    pos_only  w = 0 on every token of a response with negative advantage
    nthr      w = eta on the negative tokens NTHR selects (s- > tau), 1 elsewhere
    random    w = eta on as many negative tokens as NTHR selects in that group,
              drawn uniformly at random (the control for "how many" vs "which")

The group advantages, sequence log likelihoods, likelihood changes and the
NTHR scores, threshold and eta all come from ``fns`` (the seam, see seam.py).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field

import torch

from tiny_model import task
from tiny_model.model import TinyModel
from tiny_model.seam import Functions

METHODS = ("grpo", "pos_only", "nthr", "random")
LOSS_AGG_MODES = (
    "seq-mean-token-mean",
    "token-mean",
    "seq-mean-token-sum",
    "seq-mean-token-sum-norm",
)


# --------------------------------------------------------------------------- sampling


@contextlib.contextmanager
def single_thread() -> Iterator[None]:
    """One CPU thread inside the block (restored after).

    The model is so small that threads only add overhead (on a busy 2-core
    machine, 2 threads made the probe 25x slower), and one thread makes CPU
    results independent of the machine's core count.
    """
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(old)


@dataclass
class Groups:
    """G sampled responses for each of N problems, verified."""

    problems: torch.Tensor  # (N, 3) digits
    responses: torch.Tensor  # (N, G, 5) token ids
    mask: torch.Tensor  # (N, G, 5) bool: tokens up to and including the first EOS
    rewards: torch.Tensor  # (N, G) float 0/1

    @property
    def group_size(self) -> int:
        return self.responses.shape[1]

    @property
    def correct(self) -> torch.Tensor:
        return self.rewards > 0.5  # (N, G) bool

    @property
    def mixed(self) -> torch.Tensor:
        """(N,) bool: groups with at least one correct and one wrong response."""
        n_correct = self.correct.sum(dim=1)  # (N,)
        return (n_correct > 0) & (n_correct < self.group_size)

    def select(self, index: torch.Tensor | slice) -> Groups:
        return Groups(
            self.problems[index], self.responses[index], self.mask[index], self.rewards[index]
        )

    def to(self, device: torch.device | str) -> Groups:
        return Groups(
            *(t.to(device) for t in (self.problems, self.responses, self.mask, self.rewards))
        )


@torch.no_grad()
def sample_responses(
    model: TinyModel,
    prompts: torch.Tensor,
    group_size: int,
    generator: torch.Generator,
    temperature: float = 1.0,
) -> torch.Tensor:
    """(N, 7) prompts -> (N, G, 5) sampled responses (always 5 tokens; the mask cuts at EOS)."""
    n = prompts.shape[0]
    seq = prompts.repeat_interleave(group_size, dim=0)  # (N*G, 7)
    for _ in range(task.RESPONSE_LEN):
        logits, _ = model(seq)  # (N*G, t, V)
        probs = torch.softmax(logits[:, -1, :] / temperature, dim=-1)  # (N*G, V)
        nxt = torch.multinomial(probs, 1, generator=generator)  # (N*G, 1)
        seq = torch.cat([seq, nxt], dim=1)  # (N*G, t+1)
    return seq[:, task.PROMPT_LEN :].view(n, group_size, task.RESPONSE_LEN)  # (N, G, 5)


def sample_groups(
    model: TinyModel,
    problems: torch.Tensor,
    group_size: int,
    generator: torch.Generator,
    temperature: float = 1.0,
) -> Groups:
    """Sample and verify G responses for each problem."""
    prompts = task.prompt_tokens(problems)  # (N, 7)
    responses = sample_responses(model, prompts, group_size, generator, temperature)
    return Groups(
        problems=problems,
        responses=responses,
        mask=task.response_mask(responses),
        rewards=task.rewards(problems, responses),
    )


def response_forward(
    model: TinyModel, problems: torch.Tensor, responses: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits and hidden states at the positions that predict the response tokens.

    problems (N, 3), responses (N, G, 5) -> logits (N, G, 5, V), hidden (N, G, 5, C):
    entry t is computed from the prompt and the response's tokens before t.
    """
    n, g, r = responses.shape
    prompts = task.prompt_tokens(problems).repeat_interleave(g, dim=0)  # (N*G, 7)
    seq = torch.cat([prompts, responses.reshape(n * g, r)], dim=1)  # (N*G, 12)
    logits, hidden = model(seq[:, :-1])  # (N*G, 11, V), (N*G, 11, C)
    start = task.PROMPT_LEN - 1  # position 6 predicts response token 0
    logits = logits[:, start:, :].reshape(n, g, r, -1)  # (N, G, 5, V)
    hidden = hidden[:, start:, :].reshape(n, g, r, -1)  # (N, G, 5, C)
    return logits, hidden


def token_logprobs(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """logits (..., T, V), tokens (..., T) -> (..., T) log pi(token)."""
    logp = torch.log_softmax(logits, dim=-1)  # (..., T, V)
    return logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)  # (..., T)


def sequence_logprobs(
    fns: Functions, logits: torch.Tensor, responses: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """Through the seam: (N, G, 5, V), (N, G, 5), (N, G, 5) -> (N, G) sequence log likelihoods."""
    n, g, r, v = logits.shape
    flat = fns.sequence_logprobs(
        logits.reshape(n * g, r, v), responses.reshape(n * g, r), mask.reshape(n * g, r)
    )  # (N*G,)
    return torch.as_tensor(flat).reshape(n, g)  # (N, G)


# ------------------------------------------------------------------ per-token weights


@dataclass
class TokenWeights:
    """Per-token advantage weights of one method on a batch of groups."""

    weights: torch.Tensor  # (N, G, 5) float: w in A_{i,t} = A_i * w_{i,t}
    negative: torch.Tensor  # (N, G, 5) bool: valid tokens of responses with A < 0
    modified: torch.Tensor  # (N, G, 5) bool: negative tokens whose weight the method changed
    scores: torch.Tensor | None = None  # (N, G, 5) NTHR s- on negative tokens, nan elsewhere
    tau: torch.Tensor | None = None  # (N,) NTHR threshold per group, nan where unscored

    @property
    def modified_fraction(self) -> float:
        """Modified negative tokens / negative tokens (0 when there are none)."""
        n_neg = int(self.negative.sum())
        return float(self.modified.sum()) / n_neg if n_neg else 0.0

    def group_modified_fraction(self) -> torch.Tensor:
        """(N,) the same fraction per group."""
        n_neg = self.negative.flatten(1).sum(dim=1).clamp(min=1)  # (N,)
        return self.modified.flatten(1).sum(dim=1) / n_neg


def nthr_group_scores(
    fns: Functions,
    logits: torch.Tensor,
    hidden: torch.Tensor,
    responses: torch.Tensor,
    mask: torch.Tensor,
    advantages: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """NTHR scores of one group, through the seam.

    logits (G, 5, V), hidden (G, 5, C), responses (G, 5), mask (G, 5), advantages (G,)
    -> (neg_tok (G, 5) bool, neg_scores (Nn,), pos_mean_scores (P,), scores (G, 5) nan-filled).
    Negative tokens are scored against all tokens of the positive responses;
    each positive response's mean score is taken against all positive tokens,
    its own included (CURRICULUM 06).
    """
    fns.require("prediction_errors", "token_scores")
    g, r, v = logits.shape
    err = fns.prediction_errors(logits.reshape(g * r, v), responses.reshape(g * r))  # (G*5, V)
    err = torch.as_tensor(err).reshape(g, r, v)  # (G, 5, V)
    pos_tok = mask & (advantages > 0).unsqueeze(1)  # (G, 5)
    neg_tok = mask & (advantages < 0).unsqueeze(1)  # (G, 5)
    h_pos, e_pos = hidden[pos_tok], err[pos_tok]  # (Np, C), (Np, V)
    neg_scores = torch.as_tensor(fns.token_scores(hidden[neg_tok], err[neg_tok], h_pos, e_pos))
    pos_scores = torch.as_tensor(fns.token_scores(h_pos, e_pos, h_pos, e_pos))  # (Np,)
    owner = torch.arange(g, device=mask.device).unsqueeze(1).expand(g, r)[pos_tok]  # (Np,)
    sums = torch.zeros(g, dtype=pos_scores.dtype, device=mask.device).index_add_(
        0, owner, pos_scores
    )  # (G,)
    counts = pos_tok.sum(dim=1)  # (G,)
    is_pos = advantages > 0  # (G,)
    pos_mean = sums[is_pos] / counts[is_pos]  # (P,)
    scores = torch.full((g, r), float("nan"), dtype=neg_scores.dtype, device=mask.device)
    scores[neg_tok] = neg_scores  # (G, 5)
    return neg_tok, neg_scores, pos_mean, scores


def token_weights(
    method: str,
    fns: Functions,
    groups: Groups,
    advantages: torch.Tensor,
    logits: torch.Tensor | None = None,
    hidden: torch.Tensor | None = None,
    *,
    beta: float = 1.0,
    eta: float | torch.Tensor = 0.0,
    generator: torch.Generator | None = None,
) -> TokenWeights:
    """Per-token weights of ``method`` (see the module docstring).

    advantages (N, G); logits (N, G, 5, V) and hidden (N, G, 5, C) at θ (only
    for nthr/random); eta a float or (N,) per group; ``generator`` (CPU) draws
    the random baseline's tokens.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {METHODS}")
    mask = groups.mask  # (N, G, 5)
    negative = mask & (advantages < 0).unsqueeze(-1)  # (N, G, 5)
    weights = torch.ones(mask.shape, dtype=torch.float32, device=mask.device)  # (N, G, 5)
    modified = torch.zeros_like(mask)  # (N, G, 5)
    if method == "grpo":
        return TokenWeights(weights, negative, modified)
    if method == "pos_only":
        return TokenWeights(weights.masked_fill(negative, 0.0), negative, negative.clone())
    if logits is None or hidden is None:
        raise ValueError(f"method {method!r} needs the logits and hidden states at θ")
    fns.require("prediction_errors", "token_scores", "nthr_weights")
    n = mask.shape[0]
    etas = torch.as_tensor(eta, dtype=torch.float32).expand(n)  # (N,)
    scores = torch.full(mask.shape, float("nan"), device=mask.device)  # (N, G, 5)
    tau = torch.full((n,), float("nan"))  # (N,)
    for i in range(n):
        adv = advantages[i]  # (G,)
        if not (bool((adv > 0).any()) and bool((adv < 0).any())):
            continue  # nothing to score in a group without both signs
        neg_tok, neg_scores, pos_mean, s = nthr_group_scores(
            fns, logits[i], hidden[i], groups.responses[i], mask[i], adv
        )
        scores[i] = s.to(scores.dtype)
        tau[i] = beta * float(pos_mean.min())
        # selection: the seam's weights with eta = 0 mark the selected tokens
        selected = torch.as_tensor(fns.nthr_weights(neg_scores, pos_mean, beta=beta, eta=0.0)) != 1
        k = int(selected.sum())
        if method == "random":
            pick = torch.randperm(neg_scores.numel(), generator=generator)[:k]  # (k,)
            selected = torch.zeros_like(selected)
            selected[pick.to(selected.device)] = True
        w = torch.ones_like(neg_scores, dtype=torch.float32).masked_fill(selected, float(etas[i]))
        weights[i][neg_tok] = w  # (Nn,) into (G, 5)
        modified[i][neg_tok] = selected
    return TokenWeights(weights, negative, modified, scores, tau)


# ------------------------------------------------------------------------------ loss


def aggregate_loss(
    per_token: torch.Tensor, mask: torch.Tensor, mode: str, max_len: int = task.RESPONSE_LEN
) -> torch.Tensor:
    """(B, T) per-token loss and mask -> scalar, in one of the four modes of notebook 03."""
    m = mask.to(per_token.dtype)  # (B, T)
    masked = per_token * m  # (B, T)
    if mode == "seq-mean-token-mean":  # original GRPO
        return (masked.sum(dim=1) / m.sum(dim=1).clamp(min=1)).mean()
    if mode == "token-mean":  # DAPO
        return masked.sum() / m.sum().clamp(min=1)
    if mode == "seq-mean-token-sum":
        return masked.sum(dim=1).mean()
    if mode == "seq-mean-token-sum-norm":  # Dr. GRPO
        return masked.sum() / (per_token.shape[0] * max_len)
    raise ValueError(f"unknown loss aggregation {mode!r}; expected one of {LOSS_AGG_MODES}")


def k3(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimate of KL(pi || ref) on tokens sampled from pi: e^{-x} + x - 1, x = logp - ref."""
    log_ratio = ref_logp - logp  # (B, T)
    return torch.exp(log_ratio) - log_ratio - 1.0  # (B, T)


def grpo_loss(
    logp: torch.Tensor,
    logp_old: torch.Tensor,
    token_advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    clip_eps: float | None = 0.2,
    kl_coef: float = 0.0,
    ref_logp: torch.Tensor | None = None,
    loss_agg: str = "seq-mean-token-mean",
) -> tuple[torch.Tensor, dict[str, float]]:
    """The clipped GRPO surrogate with per-token advantages, plus optional k3 KL.

    logp, logp_old, ref_logp, token_advantages, mask: (B, T). ``clip_eps=None``
    drops clipping (the one-step probe: on-policy the ratio is 1 anyway).
    """
    ratio = torch.exp(logp - logp_old)  # (B, T) pi_theta / pi_old per token
    surrogate = ratio * token_advantages  # (B, T)
    if clip_eps is not None:
        clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * token_advantages  # (B, T)
        surrogate = torch.minimum(surrogate, clipped)  # (B, T)
    per_token = -surrogate  # (B, T)
    if kl_coef:
        if ref_logp is None:
            raise ValueError("kl_coef > 0 needs ref_logp")
        per_token = per_token + kl_coef * k3(logp, ref_logp)  # (B, T)
    loss = aggregate_loss(per_token, mask, loss_agg)
    with torch.no_grad():
        valid = mask.sum().clamp(min=1)
        clip_frac = 0.0
        if clip_eps is not None:
            clip_frac = float((((ratio - 1).abs() > clip_eps) & mask).sum() / valid)
    return loss, {"loss": float(loss.detach()), "clip_frac": clip_frac}


# -------------------------------------------------------------------------- training


@dataclass
class TrainConfig:
    """A short GRPO run from the warm model (one field, one knob)."""

    method: str = "grpo"
    """grpo, pos_only, nthr or random (see the module docstring)."""
    steps: int = 100
    """Optimizer iterations over fresh batches."""
    prompts_per_step: int = 16
    """Groups per batch (problems drawn uniformly from all 1000)."""
    group_size: int = 8
    """G: responses sampled per problem."""
    lr: float = 3e-4
    """Adam learning rate (1e-3 wrecks the warm model within a few steps)."""
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
    """Sampling temperature."""
    eval_problems: int = 128
    """Problems (a fixed seeded subset) on which answer_logp is tracked each step."""
    seed: int = 0
    """Seeds problem draws, sampling and the random baseline."""

    def to_dict(self) -> dict:
        return asdict(self)


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
    "answer_logp",  # mean ln pi(correct scratchpad | x) on the fixed eval problems, after the step
    "clip_frac",  # fraction of tokens with |ratio - 1| > clip_eps (last inner step)
    "loss",
)


def answer_logprob(fns: Functions, model: TinyModel, problems: torch.Tensor) -> float:
    """Mean sequence log likelihood of the correct scratchpads of ``problems`` (N, 3)."""
    target = task.correct_responses(problems).unsqueeze(1)  # (N, 1, 5)
    with torch.no_grad():
        logits, _ = response_forward(model, problems, target)  # (N, 1, 5, V)
    mask = task.response_mask(target)  # (N, 1, 5)
    return float(sequence_logprobs(fns, logits, target, mask).mean())


def train(
    fns: Functions,
    model: TinyModel,
    config: TrainConfig,
    *,
    progress: Callable[[int], object] | None = None,
) -> TrainResult:
    """Run ``config.steps`` GRPO steps on ``model`` in place (a frozen copy is the KL reference)."""
    with single_thread():
        return _train(fns, model, config, progress)


def _train(
    fns: Functions,
    model: TinyModel,
    config: TrainConfig,
    progress: Callable[[int], object] | None,
) -> TrainResult:
    import copy

    if config.loss_agg not in LOSS_AGG_MODES:
        raise ValueError(f"unknown loss aggregation {config.loss_agg!r}")
    if config.method not in METHODS:
        raise ValueError(f"unknown method {config.method!r}; expected one of {METHODS}")
    if config.method in ("nthr", "random"):
        fns.require("prediction_errors", "token_scores", "nthr_weights")
        if config.eta is None:
            fns.require("eta_schedule")
    device = next(model.parameters()).device
    ref = copy.deepcopy(model).eval().requires_grad_(False)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    gen = torch.Generator(device=device).manual_seed(config.seed)
    cpu_gen = torch.Generator().manual_seed(config.seed + 1)
    all_problems = task.all_problems().to(device)  # (1000, 3)
    eval_idx = torch.randperm(task.N_PROBLEMS, generator=torch.Generator().manual_seed(config.seed))
    eval_problems = all_problems[eval_idx[: config.eval_problems].to(device)]  # (E, 3)
    history: dict[str, list[float]] = {k: [] for k in LOGGED}
    history["answer_logp_start"] = [answer_logprob(fns, model, eval_problems)]
    for _step in range(config.steps):
        idx = torch.randint(0, task.N_PROBLEMS, (config.prompts_per_step,), generator=cpu_gen)
        groups = sample_groups(
            model, all_problems[idx.to(device)], config.group_size, gen, config.temperature
        )
        adv = torch.as_tensor(fns.group_advantages(groups.rewards)).to(device)  # (N, G)
        with torch.no_grad():
            logits_old, hidden_old = response_forward(model, groups.problems, groups.responses)
            logp_old = token_logprobs(logits_old, groups.responses)  # (N, G, 5)
            ref_logits, _ = response_forward(ref, groups.problems, groups.responses)
            ref_logp = token_logprobs(ref_logits, groups.responses)  # (N, G, 5)
            seq_before = sequence_logprobs(fns, logits_old, groups.responses, groups.mask)
        if config.method in ("nthr", "random") and config.eta is None:
            eta = torch.tensor(
                [float(fns.eta_schedule(float(p))) for p in groups.rewards.mean(dim=1)]
            )  # (N,) per-group eta = 2|0.5 - p|
        else:
            eta = 0.0 if config.eta is None else config.eta
        tw = token_weights(
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
        tok_adv = (adv.unsqueeze(-1) * tw.weights).flatten(0, 1)  # (N*G, 5)
        mask = groups.mask.flatten(0, 1)  # (N*G, 5)
        for _ in range(config.inner_steps):
            logits, _ = response_forward(model, groups.problems, groups.responses)
            logp = token_logprobs(logits, groups.responses).flatten(0, 1)  # (N*G, 5)
            loss, stats = grpo_loss(
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
        with torch.no_grad():
            logits_new, _ = response_forward(model, groups.problems, groups.responses)
            seq_after = sequence_logprobs(fns, logits_new, groups.responses, groups.mask)
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
        history["answer_logp"].append(answer_logprob(fns, model, eval_problems))
        history["clip_frac"].append(stats["clip_frac"])
        history["loss"].append(stats["loss"])
        if progress is not None:
            progress(1)
    return TrainResult(config=config, history=history, model=model)
