"""Beyond NTHR (notebook 07): THR weights both ways, the NLL and SMAUG-style regularisers, clip-higher.

These are tiny_model's own versions of functions notebook 07 grades (07's take tokens and
validate their inputs; docs/notebook-07-plan.md). Training calls the seam's (seam.py) 07
functions when they are set and these otherwise; every other graded quantity (advantages,
sequence log likelihoods, the NTHR token scores and threshold) comes through the seam from
notebooks 05 and 06. The clipped surrogate's own version is grpo.grpo_loss.

THR (token hidden reward; Deng et al., arXiv 2510.03669) is a token's first-order influence on
the likelihood of the group's correct responses under a GRPO step. A step on token (j, k) with
advantage A_j moves ln pi(y_i+) by about lr * A_j * sum_{k'} <e_jk, e_ik'> <h_jk, h_ik'> (the
NTHR derivation of arXiv 2505.18830, with notebook 06's ``token_scores``), so

    THR_jk = A_j * s_jk,   s_jk = sum over the correct responses' tokens (i, k') of
                                  <e_jk, e_ik'> <h_jk, h_ik'>.

THR > 0: the token's update raises the correct responses (exploitation); THR < 0: it lowers
them (on an incorrect response, the LLD tokens NTHR selects), which keeps mass for alternatives
(exploration). The reweighting multiplies the advantage of the dominant tokens (|THR| > tau, tau
NTHR's threshold) by 1 + p * sign(THR): p > 0 exploits (amplify positive THR, weaken negative),
p < 0 explores (the reverse); thr_only keeps the dominant tokens and masks the others. The
threshold, the weights and the value of p are our reconstruction from the paper's abstract and
reviews: its method section could not be opened (tiny_model/__init__.py, simplification 8).
"""

from __future__ import annotations

import torch

THR_METHODS = ("thr_exploit", "thr_explore", "thr_only")
REGULARISED = ("nll", "smaug")
NEW_METHODS = THR_METHODS + REGULARISED


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
