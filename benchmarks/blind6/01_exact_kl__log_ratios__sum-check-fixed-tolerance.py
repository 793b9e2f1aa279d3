"""notebook: 01_exact_kl
function: log_ratios
slip: checks the sum to 1 with math.isclose's default tolerance (about 1e-9 absolute) instead of 1e-9 · len, so valid longer distributions whose sum is off by a few 1e-9 are rejected."""

import math


def _check_distributions(policy, reference, allow_zeros):
    """Raise ValueError unless policy and reference are valid distributions of equal length."""
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError("the distributions have different lengths")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry outside [0, 1] or not finite: {x}")
        if not math.isclose(math.fsum(dist), 1.0):
            raise ValueError(f"{name} does not sum to 1")
        if not allow_zeros and any(x == 0 for x in dist):
            raise ValueError(f"{name} has a zero entry: the log ratio is undefined")


def log_ratios(policy, reference):
    _check_distributions(policy, reference, allow_zeros=False)
    return [math.log(p / q) for p, q in zip(policy, reference)]
