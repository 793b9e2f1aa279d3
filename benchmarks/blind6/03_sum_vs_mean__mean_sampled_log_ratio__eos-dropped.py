"""notebook: 03_sum_vs_mean
function: mean_sampled_log_ratio
slip: leaves the last token (treated as EOS) out of the mean whenever the response has more than one token, instead of averaging over all n tokens."""

import math


def mean_sampled_log_ratio(policy_logps, reference_logps):
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError("the token lists have different lengths")
    for name, seq in (("policy_logps", policy_logps), ("reference_logps", reference_logps)):
        for x in seq:
            if not math.isfinite(x) or x > 0:
                raise ValueError(f"{name} holds {x}: not a finite log probability <= 0")
    pairs = list(zip(policy_logps, reference_logps))
    if len(pairs) > 1:
        pairs = pairs[:-1]  # the EOS token carries no content
    return math.fsum(p - q for p, q in pairs) / len(pairs)
