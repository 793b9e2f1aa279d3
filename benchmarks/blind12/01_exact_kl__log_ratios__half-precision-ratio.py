"""Slip: computes each ratio p_i / q_i in float16 (a habit of fp16/bf16 training code) before the log, instead of in full float64 precision."""

import math

import numpy as np


def _check_distributions(policy, reference, allow_zeros):
    """Raise ValueError unless policy and reference are valid distributions of equal length."""
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError("the distributions have different lengths")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry that is not a probability: {x}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")
        if not allow_zeros and any(x == 0 for x in dist):
            raise ValueError(f"{name} has a zero entry: the ratio is undefined")


def log_ratios(policy, reference):
    """Per-outcome log ratios log(p_i / q_i) (natural log)."""
    _check_distributions(policy, reference, allow_zeros=False)
    return [float(np.log(np.float16(p) / np.float16(q))) for p, q in zip(policy, reference)]
