"""notebook: 03_sum_vs_mean
function: shaped_reward
library: OpenRLHF/OpenRLHF@3c3be6234e0c openrlhf/models/utils.py (compute_reward, with compute_approx_kl k1)
slip: the library puts -beta * k1 on every token and the base reward on the last one, so the response's return (gamma = 1) is base_reward - beta * SUM of the token log ratios (each clamped to [-10, 10] in float32), not beta times their mean: the penalty grows with the length."""

import math

import numpy as np


def mean_sampled_log_ratio(policy_logps, reference_logps):
    """Mean over the tokens of one response of log pi(y_t) - log pi_ref(y_t) (the text's version)."""
    p, q = list(policy_logps), list(reference_logps)
    if not p or not q:
        raise ValueError("empty token list")
    if len(p) != len(q):
        raise ValueError(f"lengths differ: {len(p)} policy tokens, {len(q)} reference tokens")
    for name, xs in (("policy_logps", p), ("reference_logps", q)):
        for x in xs:
            if not math.isfinite(x):
                raise ValueError(f"{name} holds a non-finite entry {x!r}")
            if x > 0:
                raise ValueError(f"{name} holds {x!r} > 0: not a log probability")
    return math.fsum(a - b for a, b in zip(p, q)) / len(p)


def shaped_reward(base_reward, policy_logps, reference_logps, beta):
    """The return of one response under OpenRLHF's per-token KL reward (k1, gamma = 1)."""
    if not math.isfinite(base_reward):
        raise ValueError(f"base_reward must be finite, got {base_reward!r}")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError(f"beta must be finite and >= 0, got {beta!r}")
    mean_sampled_log_ratio(policy_logps, reference_logps)  # the text's input checks
    # compute_approx_kl, k1: float32 log ratio per token, clamped to [-10, 10]
    lp = np.asarray(policy_logps, dtype=np.float64).astype(np.float32)
    lr = np.asarray(reference_logps, dtype=np.float64).astype(np.float32)
    kl = np.clip(lp - lr, np.float32(-10.0), np.float32(10.0))
    # compute_reward: -beta * kl on every token, the base reward (cast to kl's float32) added at
    # the last valid token
    per_token = np.float32(-beta) * kl
    per_token[-1] += np.float32(base_reward)
    # get_cumulative_returns with gamma = 1: accumulate from the last token back to the first;
    # the return at the first token is what the response is credited with
    ret = np.float32(0.0)
    for value in per_token[::-1]:
        ret = np.float32(value + ret)
    return float(ret)
