"""Slip: the loop runs over samples[:-1] (a loop bound off by one) while the sum is still divided by m, so the last sampled outcome never contributes."""

import math
import numbers

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    """Both inputs as float64 arrays, checked; raise ValueError when they are not log probabilities."""
    a = np.asarray(logp, dtype=np.float64)
    b = np.asarray(ref_logp, dtype=np.float64)
    for name, x in (("logp", a), ("ref_logp", b)):
        if not np.isfinite(x).all():
            raise ValueError(f"{name} has NaN or infinite entries")
        if (x > 0).any():
            raise ValueError(f"{name} has entries above 0: not log probabilities")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError as e:
        raise ValueError(f"shapes {a.shape} and {b.shape} do not broadcast") from e
    return a, b


def k1(logp, ref_logp):
    """Schulman's k1: the sampled log ratio, elementwise."""
    a, b = _log_prob_arrays(logp, ref_logp)
    return a - b


def _check_distributions(policy, reference):
    """Raise ValueError unless policy and reference are distributions of equal length (zeros allowed)."""
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError("policy and reference have different lengths")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry outside [0, 1]: {x}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")


def monte_carlo_kl(samples, policy, reference, estimator):
    """Sample mean of estimator(log p_x, log q_x) over the sampled outcome indices."""
    _check_distributions(policy, reference)
    samples = list(samples)
    m, n = len(samples), len(policy)
    if m == 0:
        raise ValueError("empty sample")
    for x in samples:
        if isinstance(x, bool) or not isinstance(x, numbers.Integral) or not 0 <= x < n:
            raise ValueError(f"sample index {x!r} is not an integer in [0, {n})")
        if policy[x] == 0 or reference[x] == 0:
            raise ValueError(f"outcome {x} has probability 0")
    total = []
    for x in samples[:-1]:
        total.append(float(np.asarray(estimator(math.log(policy[x]), math.log(reference[x])))))
    return math.fsum(total) / m
