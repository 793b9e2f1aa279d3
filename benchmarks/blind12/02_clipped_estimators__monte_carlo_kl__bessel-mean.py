"""Slip: divides the sum of the per-sample estimates by m - 1 (a Bessel correction carried over from variances) instead of by the number of samples m."""

import math

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    """Both inputs as float64 arrays, checked; raise ValueError when they are not log probabilities."""
    a = np.asarray(logp, dtype=np.float64)
    b = np.asarray(ref_logp, dtype=np.float64)
    for name, x in (("logp", a), ("ref_logp", b)):
        if not np.isfinite(x).all():
            raise ValueError(f"{name} has a NaN or infinite entry")
        if (x > 0).any():
            raise ValueError(f"{name} has an entry above 0: not a log probability")
    np.broadcast_shapes(a.shape, b.shape)
    return a, b


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


def k1(logp, ref_logp):
    """Schulman's k1: logp - ref_logp, elementwise."""
    lp, lq = _log_prob_arrays(logp, ref_logp)
    return lp - lq


def k3(logp, ref_logp):
    """Schulman's k3: r - 1 - log r with r = pi_ref(x) / pi(x), elementwise."""
    lp, lq = _log_prob_arrays(logp, ref_logp)
    d = lq - lp
    return np.exp(d) - 1.0 - d


def monte_carlo_kl(samples, policy, reference, estimator):
    """Sample mean of estimator(log p_x, log q_x) over the sampled outcome indices."""
    _check_distributions(policy, reference)
    samples = list(samples)
    if not samples:
        raise ValueError("empty sample")
    n = len(policy)
    values = []
    for x in samples:
        if (
            isinstance(x, (bool, np.bool_))
            or not isinstance(x, (int, np.integer))
            or not 0 <= x < n
        ):
            raise ValueError(f"sample index {x!r} is not an integer in [0, {n})")
        p, q = policy[x], reference[x]
        if p == 0 or q == 0:
            raise ValueError(f"sampled outcome {x} has p_x = 0 or q_x = 0")
        values.append(float(np.asarray(estimator(math.log(p), math.log(q)))))
    return math.fsum(values) / max(len(values) - 1, 1)
