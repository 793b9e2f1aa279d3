"""GRPO on the tiny task: sampling groups, per-token advantage weights, the loss (runs: training.py).

Methods (all are GRPO with a per-token weight w on the advantage, A_{i,t} = A_i * w_{i,t}):

    grpo      w = 1 everywhere
    pos_only  w = 0 on every token of a response with negative advantage
    nthr      w = eta on the negative tokens NTHR selects (s- > tau), 1 elsewhere
    random    w = eta on as many negative tokens as NTHR selects in that group,
              drawn uniformly at random (the control for "how many" vs "which")
    thr_exploit / thr_explore (thr.py; the weights: the seam's or reference.py)
              w = 1 + p * sign(THR) on dominant tokens (|THR| = |A s| > tau; |s| > tau with
              thr_dominance="score") of every response, p = +thr_p (exploitation) or -thr_p
              (exploration); 1 elsewhere
    thr_only  w = 1 on the dominant tokens, 0 on the others (the low-|THR| tokens masked)
    nll, smaug (notebook 07) w = 1 (GRPO's weights); training adds VAPO's NLL on the correct
              responses or the SMAUG-style floor to the loss (reference.py)

Every method takes clip-higher: ``reference.grpo_loss(clip_eps=lower, clip_eps_high=upper)``.

The group advantages, sequence log likelihoods, likelihood changes and the
NTHR scores, threshold and eta all come from ``fns`` (the seam, see seam.py); so do notebook
07's THR scores, THR weights and clipped surrogate (``surrogate_loss``) when ``fns`` has them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from tiny_model.model import TinyModel
from tiny_model.seam import Functions, reference
from tiny_model.task import DEFAULT, SumTask, response_mask
from tiny_model.thr import NEW_METHODS, REGULARISED, THR_METHODS

METHODS = ("grpo", "pos_only", "nthr", "random")
"""The methods of notebooks 05-06 (the probe's and notebook 06's study's)."""
ALL_METHODS = METHODS + NEW_METHODS
"""Every method training takes (``python -m tiny_model train --methods all``)."""
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
    response_len: int = DEFAULT.response_len,
) -> torch.Tensor:
    """(N, P) prompts -> (N, G, R) sampled responses (always R tokens; the mask cuts at EOS).

    The same softmax(logits / temperature) that ``token_logprobs`` scores at
    temperature 1: on-policy at T = 1.
    """
    n, p = prompts.shape
    if not isinstance(model, TinyModel):  # another callable (idx -> logits, hidden): no cache
        seq = prompts.repeat_interleave(group_size, dim=0)  # (N*G, P)
        for _ in range(response_len):
            logits, _ = model(seq)  # (N*G, t, V)
            probs = torch.softmax(logits[:, -1, :] / temperature, dim=-1)  # (N*G, V)
            nxt = torch.multinomial(probs, 1, generator=generator)  # (N*G, 1)
            seq = torch.cat([seq, nxt], dim=1)  # (N*G, t+1)
        return seq[:, p:].view(n, group_size, response_len)  # (N, G, R)
    # each prompt once, its keys and values shared by its G responses; then one position per
    # token (the probabilities are the full forward's up to the last float32 bit, so a draw
    # changes only when its uniform number falls within that bit of a bin's edge)
    logits, _, past = model.forward_cached(prompts)  # (N, P, V)
    last = logits[:, -1, :].repeat_interleave(group_size, dim=0)  # (N*G, V)
    past = [
        (k.repeat_interleave(group_size, dim=0), v.repeat_interleave(group_size, dim=0))
        for k, v in past
    ]  # each (N*G, nh, P, hs)
    tokens = []
    for t in range(response_len):
        probs = torch.softmax(last / temperature, dim=-1)  # (N*G, V)
        nxt = torch.multinomial(probs, 1, generator=generator)  # (N*G, 1)
        tokens.append(nxt)
        if t + 1 < response_len:
            logits, _, past = model.forward_cached(nxt, past)  # (N*G, 1, V)
            last = logits[:, -1, :]  # (N*G, V)
    return torch.cat(tokens, dim=1).view(n, group_size, response_len)  # (N, G, R)


def sample_groups(
    model: TinyModel,
    problems: torch.Tensor,
    group_size: int,
    generator: torch.Generator,
    temperature: float = 1.0,
    *,
    task: SumTask = DEFAULT,
) -> Groups:
    """Sample and verify G responses for each problem (N, terms) of ``task``."""
    prompts = task.prompt_tokens(problems)  # (N, P)
    responses = sample_responses(
        model, prompts, group_size, generator, temperature, task.response_len
    )
    return Groups(
        problems=problems,
        responses=responses,
        mask=response_mask(responses),
        rewards=task.rewards(problems, responses),
    )


def response_forward(
    model: TinyModel,
    problems: torch.Tensor,
    responses: torch.Tensor,
    *,
    task: SumTask = DEFAULT,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits and hidden states at the positions that predict the response tokens.

    problems (N, terms), responses (N, G, R) -> logits (N, G, R, V), hidden (N, G, R, C):
    entry t is computed from the prompt and the response's tokens before t.
    """
    n, g, r = responses.shape
    prompts = task.prompt_tokens(problems).repeat_interleave(g, dim=0)  # (N*G, P)
    seq = torch.cat([prompts, responses.reshape(n * g, r)], dim=1)  # (N*G, P+R)
    logits, hidden = model(seq[:, :-1])  # (N*G, P+R-1, V), (N*G, P+R-1, C)
    start = task.prompt_len - 1  # the last prompt position predicts response token 0
    logits = logits[:, start:, :].reshape(n, g, r, -1)  # (N, G, R, V)
    hidden = hidden[:, start:, :].reshape(n, g, r, -1)  # (N, G, R, C)
    return logits, hidden


def token_logprobs(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """logits (..., T, V), tokens (..., T) -> (..., T) log pi(token)."""
    logp = torch.log_softmax(logits, dim=-1)  # (..., T, V)
    return logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)  # (..., T)


def grouped_logprobs(
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
    thr_p: float = 0.5,
    thr_dominance: str = "thr",
    thr_mask: bool = False,
    selection: dict[int, tuple] | None = None,
) -> TokenWeights:
    """Per-token weights of ``method`` (see the module docstring).

    advantages (N, G); logits (N, G, 5, V) and hidden (N, G, 5, C) at θ (only
    for nthr/random/thr_*); eta a float or (N,) per group; ``generator`` (CPU) draws
    the random baseline's tokens; ``thr_p`` the THR methods' |p|; ``thr_mask``: thr_exploit and
    thr_explore also mask the tokens that are not dominant (see ``thr_token_weights``).

    ``selection``: a dict to keep each group's NTHR scores and selection in, for nthr and
    random (the probe's eight random draws and its nthr score a group once: the same
    numbers, the seam's functions called once per group). Pass the same dict only with the
    same groups, advantages, logits, hidden states and ``beta``.
    """
    if method not in ALL_METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {ALL_METHODS}")
    mask = groups.mask  # (N, G, 5)
    negative = mask & (advantages < 0).unsqueeze(-1)  # (N, G, 5)
    weights = torch.ones(mask.shape, dtype=torch.float32, device=mask.device)  # (N, G, 5)
    modified = torch.zeros_like(mask)  # (N, G, 5)
    if method == "grpo" or method in REGULARISED:  # nll, smaug: the loss changes, not w
        return TokenWeights(weights, negative, modified)
    if method in THR_METHODS:
        p = {"thr_exploit": thr_p, "thr_explore": -thr_p}.get(method)  # None: thr_only
        return thr_token_weights(
            fns,
            groups,
            advantages,
            logits,
            hidden,
            beta=beta,
            p=p,
            dominance=thr_dominance,
            mask_rest=thr_mask,
        )
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
        if selection is not None and i in selection:
            neg_tok, neg_scores, s, tau_i, selected = selection[i]
        else:
            neg_tok, neg_scores, pos_mean, s = nthr_group_scores(
                fns, logits[i], hidden[i], groups.responses[i], mask[i], adv
            )
            tau_i = beta * float(pos_mean.min())
            # selection: the seam's weights with eta = 0 mark the selected tokens
            selected = (
                torch.as_tensor(fns.nthr_weights(neg_scores, pos_mean, beta=beta, eta=0.0)) != 1
            )
            if selection is not None:
                selection[i] = (neg_tok, neg_scores, s, tau_i, selected)
        scores[i] = s.to(scores.dtype)
        tau[i] = tau_i
        k = int(selected.sum())
        if method == "random":
            pick = torch.randperm(neg_scores.numel(), generator=generator)[:k]  # (k,)
            selected = torch.zeros_like(selected)
            selected[pick.to(selected.device)] = True
        w = torch.ones_like(neg_scores, dtype=torch.float32).masked_fill(selected, float(etas[i]))
        weights[i][neg_tok] = w  # (Nn,) into (G, 5)
        modified[i][neg_tok] = selected
    return TokenWeights(weights, negative, modified, scores, tau)


def thr_token_weights(
    fns: Functions,
    groups: Groups,
    advantages: torch.Tensor,
    logits: torch.Tensor | None,
    hidden: torch.Tensor | None,
    *,
    beta: float = 1.0,
    p: float | None = 0.5,
    dominance: str = "thr",
    mask_rest: bool = False,
) -> TokenWeights:
    """THR weights (reference.py, or the seam's) on every valid token of the mixed groups; 1 elsewhere.

    A token is dominant when |THR| > tau (``dominance="thr"``; the paper's "tokens with high
    absolute THR", our threshold) or |s| > tau (``"score"``, the first reading), s its score
    against all correct tokens (the seam's ``token_scores``; a correct response's own tokens
    included, as NTHR's anchor scores are), THR = A s and tau NTHR's threshold beta * min over
    correct responses of their mean score. ``p`` None: thr_only (weight 1 on dominant tokens,
    0 on the others). ``mask_rest`` (with p set): the "mask plus sign" reading of the THR
    paper's reviews, which describe the method as masking the low-influence tokens and
    reweighting the rest by sign: weight 1 + p sign(THR) on the dominant tokens, 0 on the others
    (without it, the others keep weight 1, this course's first reading). ``modified`` marks the negative tokens whose weight changed
    (``selected_frac``); ``scores`` holds THR. THR comes from the seam's ``thr_token_scores``
    and the weights from its ``thr_weights`` (notebook 07) when set, from reference.py otherwise.
    """
    if dominance not in ("thr", "score"):
        raise ValueError(f"dominance must be 'thr' or 'score', got {dominance!r}")
    if logits is None or hidden is None:
        raise ValueError("the THR methods need the logits and hidden states at θ")
    fns.require("prediction_errors", "token_scores")
    mask = groups.mask  # (N, G, R)
    n, g, r = mask.shape
    negative = mask & (advantages < 0).unsqueeze(-1)  # (N, G, R)
    weights = torch.ones(mask.shape, dtype=torch.float32, device=mask.device)
    modified = torch.zeros_like(mask)
    thr_all = torch.full(mask.shape, float("nan"), device=mask.device)  # (N, G, R)
    tau = torch.full((n,), float("nan"))
    for i in range(n):
        adv = advantages[i]  # (G,)
        if not (bool((adv > 0).any()) and bool((adv < 0).any())):
            continue
        _, _, pos_mean, _ = nthr_group_scores(
            fns, logits[i], hidden[i], groups.responses[i], mask[i], adv
        )
        v = logits.shape[-1]
        err = torch.as_tensor(
            fns.prediction_errors(logits[i].reshape(g * r, v), groups.responses[i].reshape(g * r))
        ).reshape(g, r, v)  # (G, R, V)
        valid = mask[i]  # (G, R)
        pos_tok = valid & (adv > 0).unsqueeze(1)  # (G, R)
        s = torch.as_tensor(
            fns.token_scores(hidden[i][valid], err[valid], hidden[i][pos_tok], err[pos_tok])
        )  # (Nv,)
        tok_adv = adv.unsqueeze(1).expand(g, r)[valid]  # (Nv,)
        if fns.thr_token_scores is not None:  # notebook 07's, from the tokens themselves
            thr = torch.as_tensor(
                fns.thr_token_scores(hidden[i][valid], err[valid], tok_adv, pos_tok[valid])
            )  # (Nv,)
        else:
            thr = reference("thr_token_scores")(s, tok_adv)  # (Nv,)
        tau[i] = beta * float(pos_mean.min())
        dominant = (thr if dominance == "thr" else s).abs() > tau[i]  # (Nv,)
        if p is None:  # thr_only: the low-|THR| tokens masked
            w = dominant.to(torch.float32)
        else:
            w = torch.as_tensor(
                (fns.thr_weights or reference("thr_weights"))(thr, dominant, p)
            )  # (Nv,)
            if mask_rest:  # the reviews' reading: the tokens that are not dominant masked
                w = w * dominant.to(w.dtype)
        weights[i][valid] = w.to(weights.dtype)
        thr_all[i][valid] = thr.to(thr_all.dtype)
        modified[i][valid] = (w != 1) & (tok_adv < 0)
    return TokenWeights(weights, negative, modified, thr_all, tau)


REWEIGHTING = (
    "reweighted_frac",
    "reweighted_thr_pos",
    "amplified_majority",
    "amplified_minority",
    "weakened_majority",
    "weakened_minority",
)
"""What a method's weights did to one batch (training logs each per step; mixed groups only):
the share of valid tokens whose weight is not 1; of those, the share with THR > 0 (THR methods;
nan for the others); and the share of the correct responses' tokens with weight > 1 (amplified)
or < 1 (weakened) on a group's majority path (its commonest correct response; every one tied for
commonest counts) and on its minority paths (its other correct responses). nan where a share
has no tokens to count."""


def majority_paths(groups: Groups) -> tuple[torch.Tensor, torch.Tensor]:
    """(N, G) bool each: correct responses on their group's commonest correct response (ties:
    every path tied for commonest) and correct responses on another correct response."""
    same = (groups.responses.unsqueeze(2) == groups.responses.unsqueeze(1)).all(dim=-1)  # (N,G,G)
    ok = groups.correct  # (N, G)
    count = (same & ok.unsqueeze(1)).sum(dim=2) * ok  # (N, G): copies of each correct response
    top = count.max(dim=1, keepdim=True).values  # (N, 1)
    majority = ok & (count == top)
    return majority, ok & ~majority


def reweighting_stats(
    groups: Groups, weights: torch.Tensor, thr: torch.Tensor | None = None
) -> dict[str, float]:
    """REWEIGHTING's figures for one batch: weights (N, G, R), thr (N, G, R) or None."""
    valid = groups.mask & groups.mixed.view(-1, 1, 1)  # (N, G, R)
    changed = valid & (weights != 1)
    majority, minority = majority_paths(groups)  # (N, G) each

    def share(part: torch.Tensor, whole: torch.Tensor) -> float:
        n = int(whole.sum())
        return float((part & whole).sum()) / n if n else float("nan")

    on_major = valid & majority.unsqueeze(-1)
    on_minor = valid & minority.unsqueeze(-1)
    return {
        "reweighted_frac": share(changed, valid),
        "reweighted_thr_pos": share(thr > 0, changed) if thr is not None else float("nan"),
        "amplified_majority": share(weights > 1, on_major),
        "amplified_minority": share(weights > 1, on_minor),
        "weakened_majority": share(weights < 1, on_major),
        "weakened_minority": share(weights < 1, on_minor),
    }


# ------------------------------------------------------------------------------ loss


@torch.no_grad()
def clip_fraction(
    ratio: torch.Tensor, mask: torch.Tensor, clip_eps: float | None, clip_eps_high: float | None
) -> float:
    """The fraction of valid tokens whose ratio (B, T) lies outside the clip range (0 unclipped)."""
    valid = mask.sum().clamp(min=1)
    if clip_eps is None:
        return 0.0
    if clip_eps_high is None:
        return float((((ratio - 1).abs() > clip_eps) & mask).sum() / valid)
    outside = (ratio < 1 - clip_eps) | (ratio > 1 + clip_eps_high)  # (B, T)
    return float((outside & mask).sum() / valid)


SEAM_AGG_MODES = LOSS_AGG_MODES[:3]
"""The aggregations notebook 07's ``clipped_surrogate`` takes (Dr. GRPO's needs a constant)."""


def surrogate_loss(
    fns: Functions,
    logp: torch.Tensor,
    logp_old: torch.Tensor,
    token_advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    clip_eps: float | None = 0.2,
    kl_coef: float = 0.0,
    ref_logp: torch.Tensor | None = None,
    loss_agg: str = "seq-mean-token-mean",
    clip_eps_high: float | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Training's loss: the seam's ``clipped_surrogate`` (notebook 07) when ``fns`` has one,
    else reference.grpo_loss (the same arguments, the same stats).

    Through the seam the k3 KL, when ``kl_coef`` > 0, is aggregated on its own and added (the
    same loss up to float rounding); with ``kl_coef`` = 0 (the default) the loss is the
    learner's function's value, bit for bit what reference.grpo_loss gives for the reference. The
    learner's function always clips and knows three modes: ``clip_eps=None`` or Dr. GRPO's
    mode is a ValueError, not a silent switch to the built-in loss.
    """
    if fns.clipped_surrogate is None:
        return reference("grpo_loss")(
            logp,
            logp_old,
            token_advantages,
            mask,
            clip_eps=clip_eps,
            kl_coef=kl_coef,
            ref_logp=ref_logp,
            loss_agg=loss_agg,
            clip_eps_high=clip_eps_high,
        )
    if clip_eps is None or loss_agg not in SEAM_AGG_MODES:
        raise ValueError(
            "the seam's clipped_surrogate (notebook 07) needs clip_eps set and loss_agg in "
            f"{SEAM_AGG_MODES}, got clip_eps={clip_eps}, loss_agg={loss_agg!r}"
        )
    loss = torch.as_tensor(
        fns.clipped_surrogate(
            logp, logp_old, token_advantages, mask, clip_eps, clip_eps_high, loss_agg
        )
    )
    if kl_coef:
        if ref_logp is None:
            raise ValueError("kl_coef > 0 needs ref_logp")
        kl = reference("k3")(logp, ref_logp)
        loss = loss + kl_coef * reference("aggregate_loss")(kl, mask, loss_agg)
    ratio = torch.exp(logp.detach() - logp_old)  # (B, T), for the stats only
    clip_frac = clip_fraction(ratio, mask, clip_eps, clip_eps_high)
    return loss, {"loss": float(loss.detach()), "clip_frac": clip_frac}
