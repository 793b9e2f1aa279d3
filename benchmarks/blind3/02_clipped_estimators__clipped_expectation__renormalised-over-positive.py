"""notebook: 02_clipped_estimators
function: clipped_expectation
slip: averages the clipped log ratio over the outcomes where it is positive only, dividing by their total probability (a masked mean), instead of the plain p-weighted sum over all outcomes."""

import math


def _check_distributions(policy, reference):
    for name, dist in (("policy", policy), ("reference", reference)):
        if len(dist) == 0:
            raise ValueError(f"{name} is empty")
    if len(policy) != len(reference):
        raise ValueError(f"policy has {len(policy)} entries, reference {len(reference)}")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry {x} outside [0, 1]")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} sums to {math.fsum(dist)}, not 1")


def clipped_expectation(policy, reference):
    _check_distributions(policy, reference)
    num, mass = [], []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            return math.inf
        r = math.log(p / q)
        if r > 0:
            num.append(p * r)
            mass.append(p)
    if not mass:
        return 0.0
    return math.fsum(num) / math.fsum(mass)
