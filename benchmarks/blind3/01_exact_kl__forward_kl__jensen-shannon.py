"""notebook: 01_exact_kl
function: forward_kl
slip: reads the naming clash as "the direction is ambiguous" and returns the Jensen-Shannon divergence (each side's KL to the mixture m = (p+q)/2, averaged) instead of sum p_i log(p_i/q_i)."""

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
    mix = [(p + q) / 2 for p, q in zip(policy, reference)]
    kl_pm = math.fsum(p * math.log(p / m) for p, m in zip(policy, mix) if p > 0)
    kl_qm = math.fsum(q * math.log(q / m) for q, m in zip(reference, mix) if q > 0)
    return 0.5 * (kl_pm + kl_qm)
