"""Slip: divides the sum over the m samples by m - 1 (Bessel's correction carried over from a
variance) instead of m, so the sample mean is inflated by m / (m - 1).
"""

import math

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    """Both inputs as float64 arrays, checked; raise ValueError when they are not log probabilities."""
    lp = np.asarray(logp, dtype=np.float64)
    lq = np.asarray(ref_logp, dtype=np.float64)
    for name, a in (("logp", lp), ("ref_logp", lq)):
        if not np.isfinite(a).all():
            raise ValueError(f"{name} has a NaN or infinite entry")
        if (a > 0).any():
            raise ValueError(f"{name} has an entry above 0: not a log probability")
    np.broadcast_shapes(lp.shape, lq.shape)
    return lp, lq


def k1(logp, ref_logp):
    """Schulman's k1: the sampled log ratio log pi(x) - log pi_ref(x), elementwise."""
    lp, lq = _log_prob_arrays(logp, ref_logp)
    return lp - lq


def _check_distributions(policy, reference):
    """Raise ValueError unless policy and reference are distributions of equal length (zeros allowed)."""
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError(f"lengths differ: {len(policy)} vs {len(reference)}")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry outside [0, 1] or not finite: {x}")
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
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
            raise ValueError(f"sample {x!r} is not an integer index")
        if not 0 <= x < n:
            raise ValueError(f"sample {x} is outside [0, {n})")
        p, q = policy[x], reference[x]
        if p == 0 or q == 0:
            raise ValueError(f"sampled outcome {x} has p_x = 0 or q_x = 0")
        values.append(float(np.asarray(estimator(math.log(p), math.log(q)))))
    m = len(values)
    return math.fsum(values) / max(m - 1, 1)
