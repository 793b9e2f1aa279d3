"""Slip: a distribution whose entries do not sum to 1 is silently renormalised (divided by its sum,
as a softmax-style pipeline would) instead of raising ValueError as the text asks; valid inputs are
unaffected."""

import math


def _check_distributions(policy, reference, allow_zeros):
    """Raise ValueError unless policy and reference are valid (except the sum, which is not checked)."""
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError(f"lengths differ: {len(policy)} vs {len(reference)}")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry outside [0, 1] or not finite: {x}")
        if not allow_zeros and any(x == 0 for x in dist):
            raise ValueError(f"{name} has a zero entry: the log ratio is undefined")


def log_ratios(policy, reference):
    """Per-outcome log ratios log(p_i / q_i) (natural log)."""
    _check_distributions(policy, reference, allow_zeros=False)
    sp, sq = math.fsum(policy), math.fsum(reference)
    p = [x / sp for x in policy]
    q = [x / sq for x in reference]
    return [math.log(a / b) for a, b in zip(p, q)]
