"""notebook: 01_exact_kl
function: forward_kl
slip: skips every term where either probability is 0 (a symmetric 'zero guard'), so q_i = 0 < p_i drops out and gives a finite number instead of math.inf."""

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
                raise ValueError(f"{name} has a zero entry")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} sums to {math.fsum(dist)}, not 1")


def forward_kl(policy, reference):
    _check_distributions(policy, reference, allow_zeros=True)
    return math.fsum(p * math.log(p / q) for p, q in zip(policy, reference) if p > 0 and q > 0)
