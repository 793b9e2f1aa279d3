"""
notebook: 07_beyond_nthr
function: thr_weights
slip: uses a smooth sign, 1 + p * tanh(THR), on dominant tokens instead of 1 + p * sign(THR), so the weight depends on THR's size and only approaches 1 +/- p for large |THR|.
"""

import math

import torch


def thr_weights(thr, dominant, p):
    if not isinstance(thr, torch.Tensor) or not isinstance(dominant, torch.Tensor):
        raise ValueError("thr and dominant must be torch tensors")
    if thr.dim() != 1 or dominant.dim() != 1:
        raise ValueError("thr and dominant must be 1-D")
    if thr.shape[0] != dominant.shape[0]:
        raise ValueError("thr and dominant differ in length")
    if not thr.is_floating_point() or not torch.isfinite(thr).all():
        raise ValueError("thr must be a finite floating tensor")
    if dominant.dtype != torch.bool:
        raise ValueError("dominant must be bool")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or math.isnan(p) or not -1 <= p <= 1:
        raise ValueError("p must be a number in [-1, 1]")
    # tanh as a differentiable sign: keeps THR = 0 at weight 1
    w = 1.0 + p * torch.tanh(thr)
    return torch.where(dominant, w, torch.ones_like(thr))
