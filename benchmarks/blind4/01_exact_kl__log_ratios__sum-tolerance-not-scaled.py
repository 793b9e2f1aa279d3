"""notebook: 01_exact_kl
function: log_ratios
slip: the sum-to-1 check uses a fixed tolerance of 1e-9 instead of 1e-9 · len, so a long valid distribution whose float sum is off by more than 1e-9 is rejected."""

import math


def _check_distributions(policy, reference, allow_zeros):
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError("policy and reference have different lengths")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry that is not a probability: {x}")
        if abs(math.fsum(dist) - 1.0) > 1e-9:
            raise ValueError(f"{name} does not sum to 1")
        if not allow_zeros and any(x == 0 for x in dist):
            raise ValueError(f"{name} has a zero entry: the log ratio is undefined")


def log_ratios(policy, reference):
    _check_distributions(policy, reference, allow_zeros=False)
    return [math.log(p / q) for p, q in zip(policy, reference)]
