"""Slip: selects a token when |s-| > tau (the score's magnitude) instead of s- > tau, so strongly
negative scores, tokens whose push-down helps the correct responses, get softened too."""

import math

import torch


def nthr_weights(neg_scores, pos_mean_scores, beta=1.0, eta=0.0):
    """NTHR's advantage weights for the tokens of incorrect responses."""
    for x, name in ((neg_scores, "neg_scores"), (pos_mean_scores, "pos_mean_scores")):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")
        if not x.is_floating_point():
            raise ValueError(f"{name} must be a floating tensor")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or inf")
    if pos_mean_scores.dim() != 1 or pos_mean_scores.numel() == 0:
        raise ValueError("pos_mean_scores must be a non-empty 1-D tensor")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError("beta must be finite and >= 0")
    if not (0.0 <= eta <= 1.0):
        raise ValueError("eta must be in [0, 1]")
    tau = beta * pos_mean_scores.min()
    selected = neg_scores.abs() > tau
    return torch.where(selected, torch.full_like(neg_scores, eta), torch.ones_like(neg_scores))
