"""Slip: the variance is taken around the exact KL (the k1 mean) instead of around the estimator's own mean, so biased estimators (k2, clipped k1) get a variance that includes their squared bias."""

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


def estimator_moments(policy, reference, estimator):
    """Exact (mean, population variance) of estimator(log p_x, log q_x) for x ~ policy."""
    _check_distributions(policy, reference)
    probs, values, kl_terms = [], [], []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            raise ValueError("q_x = 0 < p_x: the log ratio is undefined")
        probs.append(p)
        values.append(float(np.asarray(estimator(math.log(p), math.log(q)))))
        kl_terms.append(p * (math.log(p) - math.log(q)))
    mean = math.fsum(p * v for p, v in zip(probs, values))
    centre = math.fsum(kl_terms)
    var = math.fsum(p * (v - centre) ** 2 for p, v in zip(probs, values))
    return mean, var
