"""notebook: 01_exact_kl
function: log_ratios
slip: returns the difference of the log-odds, log(p/(1-p)) - log(q/(1-q)), as if each probability were a sigmoid of a logit, instead of log(p_i/q_i)."""

import math


def _check_distributions(policy, reference, allow_zeros):
    for name, dist in (("policy", policy), ("reference", reference)):
        if len(dist) == 0:
            raise ValueError(f"{name} is empty")
    if len(policy) != len(reference):
        raise ValueError(f"policy has {len(policy)} entries, reference {len(reference)}")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry {x} outside [0, 1]")
            if not allow_zeros and x == 0:
                raise ValueError(f"{name} has a zero entry: the log ratio is undefined")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} sums to {math.fsum(dist)}, not 1")


def log_ratios(policy, reference):
    _check_distributions(policy, reference, allow_zeros=False)
    out = []
    for p, q in zip(policy, reference):
        # log-odds of each outcome; 1 - p is 0 only when p = 1
        lp = math.log(p) - math.log1p(-p) if p < 1 else math.log(p)
        lq = math.log(q) - math.log1p(-q) if q < 1 else math.log(q)
        out.append(lp - lq)
    return out
