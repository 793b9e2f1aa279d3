"""
notebook: 01_exact_kl
function: forward_kl
slip: returns the cross-entropy -sum_i p_i log q_i instead of the KL sum_i p_i log(p_i/q_i) (the policy's own entropy term -sum p_i log p_i is not subtracted).
"""

import math


def _validate(dist, name):
    if len(dist) == 0:
        raise ValueError(f"{name} is empty")
    for x in dist:
        if not math.isfinite(x) or x < 0.0 or x > 1.0:
            raise ValueError(f"{name}: entry {x} is not a probability")
    if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
        raise ValueError(f"{name} does not sum to 1")


def forward_kl(policy, reference):
    _validate(policy, "policy")
    _validate(reference, "reference")
    if len(policy) != len(reference):
        raise ValueError("policy and reference differ in length")
    total = []
    for p, q in zip(policy, reference):
        if p == 0.0:
            continue  # 0 * log 0 = 0
        if q == 0.0:
            return math.inf
        total.append(-p * math.log(q))
    return math.fsum(total)
