"""Slip: the variance is taken around the exact KL (the mean of k1) instead of around the
estimator's own mean, so a biased estimator gets its mean squared error (variance + bias²) as
its variance.
"""

import math

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
    np.broadcast_shapes(a.shape, b.shape)  # raises ValueError when the shapes do not broadcast
    return a, b


def _check_distributions(policy, reference):
    """Raise ValueError unless policy and reference are distributions of equal length (zeros allowed)."""
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError(f"lengths differ: {len(policy)} vs {len(reference)}")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry outside [0, 1] or not finite: {x!r}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")


def k1(logp, ref_logp):
    """Schulman's k1: the sampled log ratio log π(x) − log π_ref(x), elementwise."""
    a, b = _log_prob_arrays(logp, ref_logp)
    return a - b


def estimator_moments(policy, reference, estimator):
    """Exact (mean, population variance) of estimator(log p_x, log q_x) for x ~ policy."""
    _check_distributions(policy, reference)
    support = []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            raise ValueError("q_x = 0 < p_x: the estimator is undefined there")
        support.append((p, q))
    values = [float(np.asarray(estimator(math.log(p), math.log(q)))) for p, q in support]
    mean = math.fsum(p * f for (p, _), f in zip(support, values))
    kl = math.fsum(p * math.log(p / q) for p, q in support)
    variance = math.fsum(p * (f - kl) ** 2 for (p, _), f in zip(support, values))
    return mean, variance
