"""
notebook: 01_exact_kl
function: log_ratios
slip: returns log(p_i) / log(q_i), the ratio of the two logs, instead of log(p_i / q_i) = log p_i - log q_i.
"""

import math


def _check_distributions(policy, reference, allow_zeros):
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("empty distribution")
    if len(policy) != len(reference):
        raise ValueError("policy and reference have different lengths")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry outside [0, 1] or not finite: {x}")
            if not allow_zeros and x == 0:
                raise ValueError(f"{name} has a zero probability: the log ratio is undefined")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")


def log_ratios(policy, reference):
    _check_distributions(policy, reference, allow_zeros=False)
    out = []
    for p, q in zip(policy, reference):
        # log ratio of the two probabilities
        out.append(math.log(p) / math.log(q))
    return out
