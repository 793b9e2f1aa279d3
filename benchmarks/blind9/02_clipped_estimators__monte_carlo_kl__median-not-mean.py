"""Slip: reduces the per-sample estimates with the median instead of the mean over the samples."""

import math

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    """Both inputs as float64 arrays, checked; raise ValueError when they are not log probabilities."""
    a = np.asarray(logp, dtype=np.float64)
    b = np.asarray(ref_logp, dtype=np.float64)
    for name, x in (("logp", a), ("ref_logp", b)):
        if not np.isfinite(x).all():
            raise ValueError(f"{name} has a non-finite entry")
        if (x > 0).any():
            raise ValueError(f"{name} has an entry above 0: not a log probability")
    np.broadcast_shapes(a.shape, b.shape)
    return a, b


def k1(logp, ref_logp):
    """Schulman's k1: log pi(x) - log pi_ref(x), elementwise."""
    a, b = _log_prob_arrays(logp, ref_logp)
    return a - b


def _check_distributions(policy, reference):
    """Raise ValueError unless policy and reference are distributions of equal length (zeros allowed)."""
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


def monte_carlo_kl(samples, policy, reference, estimator):
    """Sample mean of estimator(log p_x, log q_x) over the sampled outcome indices."""
    _check_distributions(policy, reference)
    samples = list(samples)
    if len(samples) == 0:
        raise ValueError("empty sample")
    n = len(policy)
    values = []
    for x in samples:
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not 0 <= x < n:
            raise ValueError(f"sample {x!r} is not an outcome index in [0, {n})")
        p, q = policy[x], reference[x]
        if p == 0 or q == 0:
            raise ValueError(f"sampled outcome {x} has p_x = 0 or q_x = 0")
        values.append(float(np.asarray(estimator(math.log(p), math.log(q)))))
    return float(np.median(values))
