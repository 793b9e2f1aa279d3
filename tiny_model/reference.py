"""tiny_model's reference implementations of graded functions: the one module that holds them.

Every function here computes what a notebook grades (02's ``k3``, 03's ``aggregate_loss``,
07's clipped surrogate as :func:`grpo_loss`, ``thr_token_scores`` in tiny_model's form (from
the scores; 07's takes the tokens), ``thr_weights``, ``nll_on_correct``, ``smaug_floor``).
The rest of tiny_model holds none of that maths: it calls the seam's functions (seam.py) and,
where a :class:`~tiny_model.seam.Functions` leaves one unset, this module's, through
:func:`tiny_model.seam.reference`. The full repository's studies, benchmarks and shipped
results run on these. The course form (``drills release --course``) leaves this file out, so
a graded class's installation holds no answer key; there a run that needs one of these gets
the learner's own function or a clear error naming it.
"""

from __future__ import annotations

import torch

from tiny_model.grpo import LOSS_AGG_MODES, clip_fraction

# ------------------------------------------------------------------- losses (02, 03, 07)


def aggregate_loss(
    per_token: torch.Tensor, mask: torch.Tensor, mode: str, max_len: int | None = None
) -> torch.Tensor:
    """(B, T) per-token loss and mask -> scalar, in one of the four modes of notebook 03.

    ``max_len`` is Dr. GRPO's constant (default T, the longest response possible).
    """
    max_len = per_token.shape[1] if max_len is None else max_len
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
    clip_eps_high: float | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """The clipped GRPO surrogate with per-token advantages, plus optional k3 KL.

    logp, logp_old, ref_logp, token_advantages, mask: (B, T). ``clip_eps=None``
    drops clipping (the one-step probe: on-policy the ratio is 1 anyway).
    ``clip_eps_high`` (DAPO's clip-higher): the ratio is clipped to
    [1 - clip_eps, 1 + clip_eps_high]; None: symmetric, 1 + clip_eps.
    """
    ratio = torch.exp(logp - logp_old)  # (B, T) pi_theta / pi_old per token
    surrogate = ratio * token_advantages  # (B, T)
    high = clip_eps if clip_eps_high is None else clip_eps_high
    if clip_eps is not None:
        clipped = torch.clamp(ratio, 1 - clip_eps, 1 + high) * token_advantages  # (B, T)
        surrogate = torch.minimum(surrogate, clipped)  # (B, T)
    per_token = -surrogate  # (B, T)
    if kl_coef:
        if ref_logp is None:
            raise ValueError("kl_coef > 0 needs ref_logp")
        per_token = per_token + kl_coef * k3(logp, ref_logp)  # (B, T)
    loss = aggregate_loss(per_token, mask, loss_agg)
    clip_frac = clip_fraction(ratio, mask, clip_eps, clip_eps_high)
    return loss, {"loss": float(loss.detach()), "clip_frac": clip_frac}


# ----------------------------------------------------------------- beyond NTHR (07)


def thr_token_scores(scores: torch.Tensor, advantages: torch.Tensor) -> torch.Tensor:
    """THR of each token: its response's advantage times its score against the correct tokens.

    scores (T,) = sum over correct tokens of <e, e+><h, h+> (notebook 06's ``token_scores``);
    advantages (T,) = the advantage of each token's response -> (T,) THR.
    """
    if scores.shape != advantages.shape:
        raise ValueError(f"scores {tuple(scores.shape)} and advantages {tuple(advantages.shape)}")
    return advantages.to(scores.dtype) * scores


def thr_weights(thr: torch.Tensor, dominant: torch.Tensor, p: float) -> torch.Tensor:
    """Advantage weights from THR: 1 + p * sign(THR) on dominant tokens, 1 elsewhere.

    thr (T,), dominant (T,) bool; p > 0 exploitation (amplify THR > 0, weaken THR < 0), p < 0
    exploration (the reverse); |p| <= 1 keeps every weight >= 0 (a weight below 0 would flip the
    token's advantage). A token with THR = 0 keeps weight 1.
    """
    if not -1.0 <= p <= 1.0:
        raise ValueError(f"p must be in [-1, 1] (a weight below 0 flips the advantage), got {p}")
    w = 1.0 + p * torch.sign(thr).to(torch.float32)  # (T,)
    return torch.where(dominant, w, torch.ones_like(w))


def nll_on_correct(logp: torch.Tensor, mask: torch.Tensor, correct: torch.Tensor) -> torch.Tensor:
    """VAPO's positive-example LM loss: -(mean over the correct responses' valid tokens) of ln pi.

    logp (B, T) token log probabilities, mask (B, T) bool, correct (B,) bool -> scalar
    (0 with a zero gradient when no response is correct).
    """
    m = (mask & correct.unsqueeze(-1)).to(logp.dtype)  # (B, T)
    return -(logp * m).sum() / m.sum().clamp(min=1)


def smaug_floor(
    seq_logp: torch.Tensor, ref_seq_logp: torch.Tensor, correct: torch.Tensor
) -> torch.Tensor:
    """DPO-Positive's floor on the correct responses: mean of max(0, ln pi_ref(y+) - ln pi(y+)).

    seq_logp (B,) sequence log likelihoods under the policy, ref_seq_logp (B,) under the frozen
    reference, correct (B,) bool -> scalar (0 when none is correct). It pushes only on correct
    responses that fell below the reference: at the reference itself it is 0 with gradient 0.
    """
    gap = torch.relu(ref_seq_logp.detach() - seq_logp)  # (B,)
    c = correct.to(seq_logp.dtype)
    return (gap * c).sum() / c.sum().clamp(min=1)
