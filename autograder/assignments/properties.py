"""What a reference must satisfy beyond its anchors: properties its description states.

Expected values are the reference's own outputs, and anchors check it only on the inputs they
name. The properties here check it on *every* value and edge case's inputs (fixed and generated):
an invariance, a limit, an identity, a relation between modes, or a comparison with a second,
independently written implementation. ``tests/test_reference.py`` runs them (and the
docstring's examples, and the defaults the description states); a failure there says "the
reference may be wrong", because nothing but the reference is under test.

Each property is ``(what it states, check)``; ``check(call, args, kwargs)`` receives the
reference as ``call`` (a function of the same arguments) and one case's decoded inputs, and
returns None when the property holds, else what it saw. A check that does not apply to the
inputs (another mode, a case that raises) returns None.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Check = Callable[[Callable[..., Any], tuple, dict], "str | None"]


def _close(a: float, b: float, rtol: float = 1e-9, atol: float = 1e-12) -> bool:
    return abs(a - b) <= atol + rtol * abs(b)


def _raises(call, *args, **kwargs) -> BaseException | None:
    try:
        call(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - a property compares raising with returning
        return e
    return None


# -- 01_exact_kl: Gibbs' inequality --------------------------------------------------------------


def _kl_nonnegative(call, args, kwargs):
    v = call(*args, **kwargs)
    if np.isfinite(v) and v < -1e-6:  # inputs summing to 1 within 1e-6 may go that far below
        return f"KL = {v!r} < 0 (Gibbs' inequality: KL ≥ 0)"
    return None


def _kl_zero_on_equal(call, args, kwargs):
    p = args[0]
    v = call(p, p)
    if not _close(float(v), 0.0):
        return f"KL(p ‖ p) = {v!r}, not 0"
    return None


# -- 02_clipped_estimators: signs of the estimators, k1's definition --------------------------


def _nonnegative_each(call, args, kwargs):
    v = np.asarray(call(*args, **kwargs), dtype=float)
    if np.any(v < -1e-12):
        return f"a negative value {v.min()!r} (the estimator is ≥ 0 for every sample)"
    return None


def _k1_is_the_difference(call, args, kwargs):
    lp, lq = (np.asarray(a, dtype=float) for a in args[:2])
    v = np.asarray(call(*args, **kwargs), dtype=float)
    if v.shape != np.broadcast(lp, lq).shape or not np.allclose(v, lp - lq, rtol=1e-9, atol=1e-12):
        return "k1 differs from logp − ref_logp"
    return None


# -- 03_sum_vs_mean: padding invariance, the relation between modes, a second implementation ---


def _with_padding(values, mask, fill: float = 123.25):
    v, m = np.array(values, dtype=float), np.asarray(mask).astype(bool)
    return np.where(m, v, fill), mask


def _padding_ignored(call, args, kwargs):
    if _raises(call, *args, **kwargs):
        return None
    v, m = _with_padding(args[0], args[1])
    before, after = call(*args, **kwargs), call(v, m, *args[2:], **kwargs)
    if not np.allclose(np.asarray(after, float), np.asarray(before, float), rtol=1e-9):
        return f"changing padded entries moved the result from {before!r} to {after!r}"
    return None


def aggregate_loss_by_loops(per_token_loss, mask, mode, max_len=None) -> float:
    """The four aggregations of notebook 03 written with plain loops over rows and tokens,
    independently of the reference's array code (valid inputs only)."""
    rows, total, count = [], 0.0, 0
    for loss_row, mask_row in zip(per_token_loss, mask):
        kept = [float(x) for x, keep in zip(loss_row, mask_row) if keep]
        rows.append((sum(kept), len(kept)))
        total += sum(kept)
        count += len(kept)
    if mode == "seq-mean-token-mean":
        return sum(s / n for s, n in rows) / len(rows)
    if mode == "token-mean":
        return total / count
    if mode == "seq-mean-token-sum":
        return sum(s for s, _ in rows) / len(rows)
    return total / (len(rows) * max_len)


def _aggregate_as_loops(call, args, kwargs):
    got = _raises(call, *args, **kwargs)
    if got is not None:
        return None  # the invalid cases are the rules' business (tests/test_rules.py)
    want = aggregate_loss_by_loops(*args, **kwargs)
    v = call(*args, **kwargs)
    if not _close(float(v), want, rtol=1e-9, atol=1e-12):
        return f"the reference gives {v!r}, a loop over rows and tokens {want!r}"
    return None


def masked_mean_by_loops(values, mask) -> list[float]:
    """Each row's mean over its valid tokens, with plain loops (valid inputs only)."""
    out = []
    for row, keep in zip(values, mask):
        kept = [float(x) for x, k in zip(row, keep) if k]
        out.append(sum(kept) / len(kept))
    return out


def _masked_mean_as_loops(call, args, kwargs):
    if _raises(call, *args, **kwargs):
        return None
    want = masked_mean_by_loops(*args, **kwargs)
    got = np.asarray(call(*args, **kwargs), dtype=float)
    if got.shape != (len(want),) or not np.allclose(got, want, rtol=1e-9, atol=1e-12):
        return f"the reference gives {got.tolist()!r}, a loop over rows and tokens {want!r}"
    return None


def _sum_norm_at_max_len_t(call, args, kwargs):
    """max_len may be any int ≥ T: at max_len = T the "seq-mean-token-sum-norm" loss is the
    "seq-mean-token-sum" loss divided by T."""
    values, mask = args[0], args[1]
    if _raises(call, values, mask, "seq-mean-token-sum"):
        return None
    width = np.shape(values)[1]
    err = _raises(call, values, mask, "seq-mean-token-sum-norm", max_len=width)
    if err is not None:
        return (
            f"max_len = T = {width} raises {type(err).__name__}: {err} (the docstring allows "
            "max_len ≥ T)"
        )
    got = call(values, mask, "seq-mean-token-sum-norm", max_len=width)
    want = call(values, mask, "seq-mean-token-sum") / width
    if not _close(float(got), float(want)):
        return f"at max_len = T: {got!r}, but seq-mean-token-sum / T = {want!r}"
    return None


# -- 05_grpo_lld: the sequence log likelihood through torch's cross-entropy ------------------


def _sequence_logprobs_as_cross_entropy(call, args, kwargs):
    """Σ_t mask · log_softmax(logits)[token] = −Σ_t mask · cross_entropy(logits, token)."""
    import torch
    import torch.nn.functional as F

    if _raises(call, *args, **kwargs):
        return None
    logits, tokens, mask = args[:3]
    b, t, v = logits.shape
    nll = F.cross_entropy(
        logits.detach().double().reshape(b * t, v), tokens.reshape(b * t).long(), reduction="none"
    ).reshape(b, t)
    want = -(nll * mask.double()).sum(dim=1)
    got = call(*args, **kwargs).detach().double()
    if got.shape != want.shape or not torch.allclose(got, want, rtol=1e-4, atol=1e-5):
        return f"the reference gives {got.tolist()!r}, torch's cross-entropy {want.tolist()!r}"
    return None


PROPERTIES: dict[tuple[str, str], list[tuple[str, Check]]] = {
    ("01_exact_kl", "forward_kl"): [
        ("KL ≥ 0 (Gibbs)", _kl_nonnegative),
        ("KL(p ‖ p) = 0", _kl_zero_on_equal),
    ],
    ("01_exact_kl", "reverse_kl"): [
        ("KL ≥ 0 (Gibbs)", _kl_nonnegative),
        ("KL(p ‖ p) = 0", _kl_zero_on_equal),
    ],
    ("02_clipped_estimators", "k1"): [("k1 = logp − ref_logp", _k1_is_the_difference)],
    ("02_clipped_estimators", "clipped_k1"): [("clipped k1 ≥ 0", _nonnegative_each)],
    ("02_clipped_estimators", "k2"): [("k2 ≥ 0", _nonnegative_each)],
    ("02_clipped_estimators", "k3"): [("k3 ≥ 0 (r − 1 ≥ log r)", _nonnegative_each)],
    ("03_sum_vs_mean", "masked_mean"): [
        ("padded entries do not count", _padding_ignored),
        ("a loop over rows and tokens gives the same values", _masked_mean_as_loops),
    ],
    ("03_sum_vs_mean", "aggregate_loss"): [
        ("padded entries do not count", _padding_ignored),
        ("a loop over rows and tokens gives the same value", _aggregate_as_loops),
        ("at max_len = T, sum-norm = seq-mean-token-sum / T", _sum_norm_at_max_len_t),
    ],
    ("05_grpo_lld", "sequence_logprobs"): [
        ("−Σ mask · cross-entropy, as torch computes it", _sequence_logprobs_as_cross_entropy)
    ],
}
