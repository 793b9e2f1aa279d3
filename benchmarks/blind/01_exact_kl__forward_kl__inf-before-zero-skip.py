"""
notebook: 01_exact_kl
function: forward_kl
slip: the q_i = 0 test runs before the p_i = 0 skip, so an outcome where both p_i and q_i are 0 returns math.inf instead of contributing 0.
"""

import math


def _check(dist, name):
    if len(dist) == 0:
        raise ValueError(f"{name} is empty")
    for x in dist:
        if not math.isfinite(x):
            raise ValueError(f"{name} has a non-finite entry")
        if x < 0 or x > 1:
            raise ValueError(f"{name} has an entry outside [0, 1]")
    if abs(math.fsum(dist) - 1) > 1e-9 * len(dist):
        raise ValueError(f"{name} does not sum to 1")


def forward_kl(policy, reference):
    """KL(policy || reference) = sum over p_i > 0 of p_i * log(p_i / q_i)."""
    _check(policy, "policy")
    _check(reference, "reference")
    if len(policy) != len(reference):
        raise ValueError("lengths differ")
    total = []
    for p, q in zip(policy, reference):
        if q == 0:
            return math.inf  # reference has no mass here
        if p == 0:
            continue  # 0 * log 0 = 0
        total.append(p * math.log(p / q))
    return math.fsum(total)
