"""Slip: gives selected tokens weight 1 - eta (eta read as the amount removed) instead of weight eta, so with the probe's eta = 0 nothing is down-weighted at all."""

import math

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")  # noqa: TRY004 (the contract asks for ValueError)
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_float(x, name):
    """Raise ValueError unless x is a floating tensor without NaN or inf."""
    if not isinstance(x, torch.Tensor) or not torch.is_floating_point(x):
        raise ValueError(f"{name} must be a floating tensor")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def nthr_weights(neg_scores, pos_mean_scores, beta=1.0, eta=0.0):
    """NTHR's advantage weights for the tokens of incorrect responses."""
    _require_float(neg_scores, "neg_scores")
    _require_tensor(pos_mean_scores, "pos_mean_scores", 1)
    _require_float(pos_mean_scores, "pos_mean_scores")
    if pos_mean_scores.numel() == 0:
        raise ValueError("pos_mean_scores is empty")
    if (
        isinstance(beta, bool)
        or not isinstance(beta, (int, float))
        or not math.isfinite(beta)
        or beta < 0
    ):
        raise ValueError("beta must be a finite number >= 0")
    if isinstance(eta, bool) or not isinstance(eta, (int, float)) or not 0 <= eta <= 1:
        raise ValueError("eta must be in [0, 1]")
    tau = beta * pos_mean_scores.min()
    selected = neg_scores > tau
    w = torch.ones_like(neg_scores)
    return torch.where(selected, torch.full_like(neg_scores, 1.0 - eta), w)
