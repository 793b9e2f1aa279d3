"""Slip: weights the squared deviations of the variance by the reference probabilities q_x instead
of the policy probabilities p_x (the mean is weighted correctly).
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


def estimator_moments(policy, reference, estimator):
    """Exact (mean, population variance) of estimator(log p_x, log q_x) for x ~ policy."""
    _check_distributions(policy, reference)
    values, probs, refs = [], [], []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            raise ValueError("q_x = 0 < p_x: the estimator is undefined there")
        values.append(float(np.asarray(estimator(math.log(p), math.log(q)))))
        probs.append(p)
        refs.append(q)
    mean = math.fsum(p * f for p, f in zip(probs, values))
    variance = math.fsum(q * (f - mean) ** 2 for q, f in zip(refs, values))
    return mean, variance
