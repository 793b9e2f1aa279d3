"""Diagnosis from the properties a function's text states, measured on the learner's outputs.

When no catalogued mistake and no error shape explains a function's failed checks, the
feedback can still say, in the text's own terms, what the learner's code gets wrong: "each row
of your prediction errors should sum to 0 and does not on 3 checks", "a mean lies between the
smallest and largest value it averages", "the gradient of the loss pushes `logp` down where
the advantage is positive". Each property here is one the function's notebook states (or the
formula it gives implies at once: a mean, a log of a ratio), and each check reads only what
the grading run already has: one case's inputs and the learner's outcome on it (its value, or
on a gradient case the gradient it returned). Nothing is run again.

A check returns True only when the property is *measured* broken on that case, by a margin
well beyond the function's tolerance (a float32 rounding or a stabiliser never breaks one);
None when it does not apply (the case raised, another mode, inputs it says nothing about).
The reference satisfies every property on every case (``tests/test_stated_properties.py``),
so a passing check never breaks one, and a line names a property only for the failed checks
that break it. The line says how many checks break it and names only the checks the notebook
shows: nothing of a generated input or of an expected value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from autograder.cases.codec import GRADIENT, decode

# broken means beyond this (relative to the scale of the values compared, or absolute)
RTOL = 1e-3
ATOL = 1e-4


@dataclass(frozen=True)
class Stated:
    """A property a function's text states: ``check(args, kwargs, value)`` is True where the
    learner's outcome breaks it (``value`` is the result, or on a gradient case the dict of
    gradients by input name), None where it does not apply."""

    name: str  # the diagnosis id is "property:<name>"
    text: str  # the property, as the notebook states it
    check: Callable[[list, dict, Any], bool | None]
    gradient: bool = False  # read on gradient cases (else on value and edge cases)

    @property
    def id(self) -> str:
        return "property:" + self.name


def _arr(x: Any) -> np.ndarray | None:
    try:
        if hasattr(x, "detach"):
            x = x.detach().cpu().double().numpy()
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        return None
    return a


def _num(x: Any) -> float | None:
    a = _arr(x)
    if a is None or a.size != 1:
        return None
    return float(a.reshape(()))


def _off(got: float, want: float, scale: float = 1.0) -> bool:
    """Is ``got`` clearly not ``want`` (by more than the margin, at the values' scale)?"""
    if not math.isfinite(got):
        return True
    return abs(got - want) > ATOL + RTOL * max(abs(want), scale)


def _outside(v: float, lo: float, hi: float) -> bool:
    scale = max(abs(lo), abs(hi), 1e-12)
    margin = ATOL + RTOL * scale
    return not math.isfinite(v) or v < lo - margin or v > hi + margin


# -- 01 ------------------------------------------------------------------------------------------


def _log_ratio_signs(args, kwargs, value):
    p, q, v = _arr(args[0]), _arr(args[1]), _arr(value)
    if p is None or q is None or v is None or v.shape != p.shape or p.shape != q.shape:
        return None
    if np.any(p <= 0) or np.any(q <= 0):
        return None
    want = np.sign(p - q)
    got = np.where(np.abs(v) <= ATOL, 0.0, np.sign(v))
    # judged where the log ratio is clearly away from 0 (a sign to read), or p_i = q_i exactly
    clear = np.abs(np.log(p) - np.log(q)) > 10 * ATOL
    return bool(np.any((got != want) & (clear | (p == q))))


def _kl_gibbs(args, kwargs, value):
    v = _num(value)
    if v is None or math.isnan(v):
        return None if v is None else True
    if v == math.inf:
        return None  # a support rule, not this property
    if v < -1e-6:
        return True
    p, q = _arr(args[0]), _arr(args[1])
    if p is not None and q is not None and p.shape == q.shape and np.array_equal(p, q):
        return abs(v) > ATOL
    return False


# -- 02 ------------------------------------------------------------------------------------------


def _nonnegative_zero_at_equal(args, kwargs, value):
    lp, lq, v = _arr(args[0]), _arr(args[1]), _arr(value)
    if lp is None or lq is None or v is None:
        return None
    try:
        d = np.broadcast_to(lp - lq, v.shape)
    except ValueError:
        return None
    if np.any(np.isnan(v)) or np.any(v < -ATOL):
        return True
    return bool(np.any((d == 0) & (np.abs(v) > ATOL)))


def _at_least_the_kl(args, kwargs, value):
    try:  # 01's answer: in a module the course form leaves out, which measures nothing here
        from autograder.assignments.common import exact_kl
    except ImportError:
        return None
    v = _num(value)
    p, q = args[0], args[1]
    if v is None or v == math.inf:
        return None
    try:
        kl = exact_kl([float(a) for a in p], [float(b) for b in q])
    except (TypeError, ValueError):
        return None
    if kl is None:
        return None
    return math.isnan(v) or v < kl - (ATOL + RTOL * abs(kl))


def _mean_of_sampled_estimates(args, kwargs, value):
    v = _num(value)
    if v is None or len(args) < 4 or not callable(args[3]):
        return None
    samples, p, q, est = args[:4]
    try:
        vals = [float(est(math.log(p[int(x)]), math.log(q[int(x)]))) for x in samples]
    except Exception:  # noqa: BLE001 (inputs the property says nothing about)
        return None
    if not vals or not all(math.isfinite(x) for x in vals):
        return None
    return _outside(v, min(vals), max(vals))


def _variance_nonnegative(args, kwargs, value):
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        return None
    var = _num(value[1])
    return None if var is None else (math.isnan(var) or var < -ATOL)


def _log_ratio_sampled(args, kwargs, value):
    """k1 = logp − ref_logp, elementwise (broadcast): 0 where they are equal, the sign of
    their difference elsewhere."""
    lp, lq, v = _arr(args[0]), _arr(args[1]), _arr(value)
    if lp is None or lq is None or v is None:
        return None
    try:
        d = np.broadcast_to(lp - lq, v.shape)
    except ValueError:
        return None
    if np.any(np.isnan(v)):
        return True
    got = np.where(np.abs(v) <= ATOL, 0.0, np.sign(v))
    clear = np.abs(d) > 10 * ATOL
    return bool(np.any((got != np.sign(d)) & (clear | (d == 0))))


# -- 03 ------------------------------------------------------------------------------------------


def _mean_of_token_ratios(args, kwargs, value):
    v = _num(value)
    a, b = _arr(args[0]), _arr(args[1])
    if v is None or a is None or b is None or a.shape != b.shape or a.size == 0:
        return None
    d = a - b
    return _outside(v, float(d.min()), float(d.max()))


def _row_means_within_rows(args, kwargs, value):
    vals, mask, v = _arr(args[0]), _arr(args[1]), _arr(value)
    if vals is None or mask is None or v is None or vals.ndim != 2 or mask.shape != vals.shape:
        return None
    if v.shape != (vals.shape[0],):
        return None
    for row, keep, got in zip(vals, mask.astype(bool), v):
        kept = row[keep]
        if kept.size == 0 or not np.all(np.isfinite(kept)):
            return None
        if _outside(float(got), float(kept.min()), float(kept.max())):
            return True
    return False


def _aggregate_within_values(args, kwargs, value):
    """token-mean and seq-mean-token-mean are means (weighted) of the valid values; every mode
    is finite when the valid values are, whatever the padding holds."""
    v = _num(value)
    vals, mask = _arr(args[0]), _arr(args[1])
    mode = args[2] if len(args) > 2 else kwargs.get("mode")
    if v is None or vals is None or mask is None or vals.shape != mask.shape or vals.ndim != 2:
        return None
    keep = mask.astype(bool)
    kept = vals[keep]
    if kept.size == 0 or not np.all(np.isfinite(kept)):
        return None
    if not math.isfinite(v):
        return True
    if mode in ("token-mean", "seq-mean-token-mean"):
        return _outside(v, float(kept.min()), float(kept.max()))
    return False


def _base_when_no_drift(args, kwargs, value):
    v = _num(value)
    if v is None or len(args) < 4:
        return None
    base, a, b, beta = args[:4]
    try:
        same = list(map(float, a)) == list(map(float, b))
        beta = float(beta)
        base = float(base)
    except (TypeError, ValueError):
        return None
    if beta == 0 or same:
        return _off(v, base)
    return None


# -- 04 ------------------------------------------------------------------------------------------

TASK_REWARDS = (1.0, -1.0, -0.2, 0.0)


def _fields(x):
    """An outcome's record fields, when it is a record (decoded as a dataclass or an Obj)."""
    if hasattr(x, "__dataclass_fields__"):
        return {f: getattr(x, f) for f in x.__dataclass_fields__}
    fields = getattr(x, "fields", None)
    return dict(fields) if isinstance(fields, dict) else None


def _task_reward_values(args, kwargs, value):
    v = _num(value)
    if v is None:
        return None
    return not any(abs(v - r) <= ATOL for r in TASK_REWARDS)


def _records_keep_components(args, kwargs, value):
    """Each TurnReward keeps its components: shaped_reward = task_reward − beta ·
    mean_log_ratio of the same record, beta is the beta passed in, and task_reward is +1, −1,
    −0.2 or 0."""
    if not isinstance(value, (list, tuple)) or not value:
        return None
    beta = args[1] if len(args) > 1 else kwargs.get("beta", 0.05)
    try:
        beta = float(beta)
    except (TypeError, ValueError):
        return None
    for rec in value:
        f = _fields(rec)
        if f is None or not {"task_reward", "mean_log_ratio", "beta", "shaped_reward"} <= set(f):
            return None
        try:
            t, m, b, r = (
                float(f[k]) for k in ("task_reward", "mean_log_ratio", "beta", "shaped_reward")
            )
        except (TypeError, ValueError):
            return None
        if not all(math.isfinite(x) for x in (t, m, b, r)):
            return True
        if _off(b, beta) or _off(r, t - b * m, abs(t) + abs(b * m)):
            return True
        if not any(abs(t - x) <= ATOL for x in TASK_REWARDS):
            return True
    return False


# -- 05 ------------------------------------------------------------------------------------------


def _standardized(args, kwargs, value):
    r, v = _arr(args[0]), _arr(value)
    eps = args[1] if len(args) > 1 else kwargs.get("eps", 1e-6)
    if r is None or v is None or r.ndim != 2 or v.shape != r.shape or r.shape[1] < 2:
        return None
    try:
        eps = float(eps)
    except (TypeError, ValueError):
        return None
    for row, adv in zip(r, v):
        if not np.all(np.isfinite(adv)):
            return True
        if np.all(row == row[0]):
            if np.any(np.abs(adv) > ATOL):
                return True
            continue
        std = float(np.std(row, ddof=1))
        if _off(float(adv.sum()), 0.0, float(np.abs(adv).max())):
            return True
        if _off(float(np.std(adv, ddof=1)), std / (std + eps)):
            return True
    return False


def _share(args, kwargs, value):
    v = _num(value)
    if v is None:
        return None
    return math.isnan(v) or v < -ATOL or v > 1 + ATOL


def _log_probability(args, kwargs, value):
    v = _arr(value)
    if v is None:
        return None
    return bool(np.any(np.isnan(v)) or np.any(v > ATOL))


def _mean_of_correct_changes(args, kwargs, value):
    v = _num(value)
    before, after, correct = (_arr(x) for x in args[:3])
    if v is None or before is None or after is None or correct is None:
        return None
    if before.shape != after.shape or correct.shape != before.shape:
        return None
    ch = (after - before)[correct.astype(bool)]
    if ch.size == 0:
        return None
    return _outside(v, float(ch.min()), float(ch.max()))


# -- 06 ------------------------------------------------------------------------------------------


def _rows_sum_to_zero(args, kwargs, value):
    v = _arr(value)
    if v is None or v.ndim != 2:
        return None
    if not np.all(np.isfinite(v)):
        return True
    return bool(np.any(np.abs(v.sum(axis=1)) > ATOL + RTOL * np.abs(v).sum(axis=1)))


def _eta_or_one(args, kwargs, value):
    v = _arr(value)
    eta = args[3] if len(args) > 3 else kwargs.get("eta", 0.0)
    try:
        eta = float(eta)
    except (TypeError, ValueError):
        return None
    if v is None or v.size == 0:
        return None
    ok = (np.abs(v - eta) <= ATOL) | (np.abs(v - 1.0) <= ATOL)
    return bool(not np.all(ok))


def _schedule_range(args, kwargs, value):
    v = _arr(value)
    p = _arr(args[0]) if args else None
    if v is None or p is None or v.shape != p.shape:
        return None
    if np.any(np.isnan(v)) or np.any(v < -ATOL) or np.any(v > 1 + ATOL):
        return True
    return bool(
        np.any((p == 0.5) & (np.abs(v) > ATOL))
        or np.any(((p == 0) | (p == 1)) & (np.abs(v - 1) > ATOL))
    )


# -- 07 ------------------------------------------------------------------------------------------


def _thr_zero_where_no_advantage(args, kwargs, value):
    v, adv = _arr(value), _arr(args[2]) if len(args) > 2 else None
    if v is None or adv is None or v.shape != adv.shape:
        return None
    zero = adv == 0
    if not zero.any():
        return None
    return bool(np.any(np.isnan(v[zero])) or np.any(np.abs(v[zero]) > ATOL))


def _thr_weight_values(args, kwargs, value):
    """1 + p · sign(THR) on dominant tokens, 1 elsewhere: every weight is 1, 1 + p or 1 − p,
    and 1 on every token that is not dominant."""
    v, dom = _arr(value), _arr(args[1]) if len(args) > 1 else None
    p = args[2] if len(args) > 2 else kwargs.get("p")
    if v is None or dom is None or v.shape != dom.shape or isinstance(p, bool):
        return None
    try:
        p = float(p)
    except (TypeError, ValueError):
        return None
    if np.any(np.isnan(v)):
        return True
    keep = dom.astype(bool)
    if np.any(np.abs(v[~keep] - 1.0) > ATOL):
        return True
    ok = (np.abs(v - 1.0) <= ATOL) | (np.abs(v - (1 + p)) <= ATOL) | (np.abs(v - (1 - p)) <= ATOL)
    return bool(not np.all(ok))


def _nonnegative_scalar(args, kwargs, value):
    v = _num(value)
    return None if v is None else (math.isnan(v) or v < -ATOL)


def _floor_zero_above(args, kwargs, value):
    v = _num(value)
    seq, ref, correct = (_arr(x) for x in args[:3])
    if v is None or seq is None or ref is None or correct is None:
        return None
    if math.isnan(v) or v < -ATOL:
        return True
    keep = correct.astype(bool)
    if keep.any() and np.all(seq[keep] >= ref[keep]):
        return abs(v) > ATOL
    return False


def _grad(value, name):
    g = value.get(name) if isinstance(value, dict) else None
    return None if g is None or g == GRADIENT or isinstance(g, str) else _arr(g)


def _floor_gradient(args, kwargs, value):
    """The floor's gradient into seq_logp: −1/k (k correct responses) on a correct response
    below its reference, 0 on one at or above it and on an incorrect one."""
    g = _grad(value, "seq_logp")
    seq, ref, correct = (_arr(x) for x in args[:3])
    if g is None or seq is None or ref is None or correct is None or g.shape != seq.shape:
        return None
    keep = correct.astype(bool)
    k = int(keep.sum())
    if k == 0:
        return None
    want = np.where(keep & (seq < ref), -1.0 / k, 0.0)
    return bool(np.any(np.abs(g - want) > ATOL + RTOL / k))


def _surrogate_gradient(args, kwargs, value):
    """Minimising the loss raises logp where the advantage is positive and lowers it where it
    is negative: the gradient into logp is ≤ 0 where A > 0 and ≥ 0 where A < 0 (0 where the
    clip stops it), and 0 at every padded position."""
    g = _grad(value, "logp")
    if g is None or len(args) < 4:
        return None
    adv, mask = _arr(args[2]), _arr(args[3])
    if adv is None or mask is None or g.shape != adv.shape or mask.shape != adv.shape:
        return None
    if not np.all(np.isfinite(g)):
        return True
    keep = mask.astype(bool)
    scale = ATOL * max(1.0, float(np.abs(g).max()) * 1e-3)
    wrong_sign = keep & (g * np.sign(adv) > scale)
    into_padding = ~keep & (np.abs(g) > scale)
    return bool(np.any(wrong_sign) or np.any(into_padding))


def _log_softmax_gradient(args, kwargs, value):
    """Σ_t mask · log_softmax(logits)[token]: its gradient into one position's logits is
    one_hot − softmax (times the position's weight), which sums to 0 over the vocabulary, and
    is 0 at a masked position."""
    g = _grad(value, "logits")
    if g is None or len(args) < 3:
        return None
    mask = _arr(args[2])
    if mask is None or g.ndim != 3 or mask.shape != g.shape[:2]:
        return None
    if not np.all(np.isfinite(g)):
        return True
    scale = ATOL * max(1.0, float(np.abs(g).max()))
    # a row's sum is read at a reduced precision's size (bfloat16 keeps 8 bits: its rounding
    # leaves row sums of a few 1e-3, the form still right); a softmax over another axis, or a
    # one-hot alone, is off by tenths or more
    rows = np.abs(g.sum(axis=-1)) > 2e-2 * max(1.0, float(np.abs(g).max()))
    padded = (mask == 0) & (np.abs(g).max(axis=-1) > scale)
    return bool(np.any(rows) or np.any(padded))


_NONNEG_EST = (
    "the estimator is ≥ 0 for every sample and 0 where logp = ref_logp",
    _nonnegative_zero_at_equal,
)
_GIBBS = (
    "a KL is ≥ 0 (Gibbs' inequality) and is 0 when the two distributions are equal",
    _kl_gibbs,
)

STATED: dict[tuple[str, str], tuple[Stated, ...]] = {
    ("01_exact_kl", "log_ratios"): (
        Stated(
            "log-ratio-sign",
            "log(p_i / q_i) is 0 where p_i = q_i, positive where p_i > q_i and negative where "
            "p_i < q_i",
            _log_ratio_signs,
        ),
    ),
    ("01_exact_kl", "forward_kl"): (Stated("kl-gibbs", *_GIBBS),),
    ("01_exact_kl", "reverse_kl"): (Stated("kl-gibbs", *_GIBBS),),
    ("02_clipped_estimators", "k1"): (
        Stated(
            "k1-sign",
            "k1 is the log ratio log π(x) − log π_ref(x): 0 where logp = ref_logp, positive "
            "where logp is above ref_logp and negative where it is below",
            _log_ratio_sampled,
        ),
    ),
    ("02_clipped_estimators", "clipped_k1"): (Stated("estimator-nonnegative", *_NONNEG_EST),),
    ("02_clipped_estimators", "k2"): (Stated("estimator-nonnegative", *_NONNEG_EST),),
    ("02_clipped_estimators", "k3"): (Stated("estimator-nonnegative", *_NONNEG_EST),),
    ("02_clipped_estimators", "clipped_expectation"): (
        Stated(
            "at-least-the-kl",
            "clipping each log ratio at 0 only raises it, so the clipped expectation is at "
            "least the exact KL Σ p_i log(p_i / q_i)",
            _at_least_the_kl,
        ),
    ),
    ("02_clipped_estimators", "monte_carlo_kl"): (
        Stated(
            "mean-of-samples",
            "the estimate is the mean of estimator(log p_x, log q_x) over the samples, so it "
            "lies between the smallest and the largest of those values",
            _mean_of_sampled_estimates,
        ),
    ),
    ("02_clipped_estimators", "estimator_moments"): (
        Stated("variance-nonnegative", "a variance is ≥ 0", _variance_nonnegative),
    ),
    ("03_sum_vs_mean", "mean_sampled_log_ratio"): (
        Stated(
            "mean-of-log-ratios",
            "the result is the mean of the token log ratios p_t − q_t, so it lies between the "
            "smallest and the largest of them",
            _mean_of_token_ratios,
        ),
    ),
    ("03_sum_vs_mean", "shaped_reward"): (
        Stated(
            "base-without-drift",
            "the shaped reward is base_reward itself when beta = 0 or when the policy's and "
            "the reference's log probabilities are equal (no penalty without drift)",
            _base_when_no_drift,
        ),
    ),
    ("03_sum_vs_mean", "masked_mean"): (
        Stated(
            "mean-within-row",
            "each entry is the mean of its row's valid values, so it lies between the smallest "
            "and the largest of them, whatever the padding holds",
            _row_means_within_rows,
        ),
    ),
    ("03_sum_vs_mean", "aggregate_loss"): (
        Stated(
            "aggregate-within-values",
            "padded positions never count: the loss is finite when the valid values are, "
            "whatever the padding holds, and token-mean and seq-mean-token-mean are means of "
            "the valid values, between the smallest and the largest of them",
            _aggregate_within_values,
        ),
    ),
    ("04_rlef_turn_rewards", "task_reward"): (
        Stated(
            "task-reward-values",
            "a turn's task reward r_t is one of +1, −1, −0.2 and 0",
            _task_reward_values,
        ),
    ),
    ("04_rlef_turn_rewards", "turn_rewards"): (
        Stated(
            "record-components",
            "each TurnReward keeps its components: shaped_reward = task_reward − beta · "
            "mean_log_ratio of the same record, beta is the beta passed in, and task_reward is "
            "+1, −1, −0.2 or 0",
            _records_keep_components,
        ),
    ),
    ("05_grpo_lld", "group_advantages"): (
        Stated(
            "standardized",
            "each group's advantages are its rewards standardized: they sum to 0 and have "
            "standard deviation std / (std + eps), 1 but for eps (zeros when the rewards are "
            "equal)",
            _standardized,
        ),
    ),
    ("05_grpo_lld", "sequence_logprobs"): (
        Stated(
            "log-probability",
            "a sequence's log likelihood is a log probability: ≤ 0",
            _log_probability,
        ),
        Stated(
            "log-softmax-gradient",
            "each position contributes log softmax(logits)[token], a softmax over the "
            "vocabulary: its gradient into that position's logits is one_hot − softmax, which "
            "sums to 0 over the vocabulary, and a masked position gets no gradient",
            _log_softmax_gradient,
            gradient=True,
        ),
    ),
    ("05_grpo_lld", "likelihood_change"): (
        Stated(
            "mean-of-correct",
            "the result is the mean change of the correct responses, so it lies between the "
            "smallest and the largest of their changes",
            _mean_of_correct_changes,
        ),
    ),
    ("05_grpo_lld", "lld_rate"): (
        Stated("share", "the LLD rate is a share of responses: between 0 and 1", _share),
    ),
    ("06_nthr", "prediction_errors"): (
        Stated(
            "rows-sum-to-zero",
            "each row is one_hot − softmax, and sums to 0",
            _rows_sum_to_zero,
        ),
    ),
    ("06_nthr", "nthr_weights"): (
        Stated(
            "eta-or-one",
            "the weights hold eta where a token is selected and 1 elsewhere: every weight is "
            "eta or 1",
            _eta_or_one,
        ),
    ),
    ("06_nthr", "eta_schedule"): (
        Stated(
            "schedule-range",
            "η = |1 − 2p| is 1 at p = 0 and p = 1, 0 at p = 0.5, and lies in [0, 1] between",
            _schedule_range,
        ),
    ),
    ("07_beyond_nthr", "thr_token_scores"): (
        Stated(
            "thr-zero-without-advantage",
            "THR_t = A_t · Σ over correct tokens u of ⟨err_t, err_u⟩⟨h_t, h_u⟩ is 0 where the "
            "token's advantage A_t is 0",
            _thr_zero_where_no_advantage,
        ),
    ),
    ("07_beyond_nthr", "thr_weights"): (
        Stated(
            "thr-weight-values",
            "the weights are 1 + p · sign(THR) on dominant tokens and 1 elsewhere: every weight "
            "is 1, 1 + p or 1 − p, and 1 on every token that is not dominant",
            _thr_weight_values,
        ),
    ),
    ("07_beyond_nthr", "nll_on_correct"): (
        Stated("nll-nonnegative", "a negative log likelihood is ≥ 0", _nonnegative_scalar),
    ),
    ("07_beyond_nthr", "smaug_floor"): (
        Stated(
            "floor-zero-above",
            "the floor is ≥ 0, and 0 when every correct response is at or above the reference",
            _floor_zero_above,
        ),
        Stated(
            "floor-gradient",
            "a correct response at or above the reference adds 0 and no gradient; one below it "
            "adds its gap max(0, ref − logp), so the floor's gradient into it is −1 / (number "
            "of correct responses)",
            _floor_gradient,
            gradient=True,
        ),
    ),
    ("07_beyond_nthr", "clipped_surrogate"): (
        Stated(
            "surrogate-gradient-direction",
            "minimising the loss raises logp where the advantage is positive and lowers it "
            "where it is negative (the gradient into logp is ≤ 0 where A > 0, ≥ 0 where A < 0), "
            "and no gradient reaches a padded position",
            _surrogate_gradient,
            gradient=True,
        ),
    ),
}


class _Rec:
    """A record of a type the notebook defines, decoded without the notebook: its fields."""

    def __init__(self, name: str, fields: dict) -> None:
        self.name, self.fields = name, fields


class _AnyRecord(dict):
    """A decoding namespace in which every record type is :class:`_Rec` (a property reads
    fields; it needs no methods of the notebook's classes)."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str)

    def __getitem__(self, name: str):
        return lambda **fields: _Rec(name, fields)


_RECORDS = _AnyRecord()


def broken_on(
    assignment: str, function: str, idx: list[int], inputs: list[dict], got: list[dict], kinds
) -> list[tuple[Stated, set[int]]]:
    """Each stated property of the function with the cases of ``idx`` whose learner outcome
    breaks it (``kinds[i]``: case i's kind), in the order the properties are listed."""
    out = []
    for prop in STATED.get((assignment, function), ()):
        hit = set()
        for i in idx:
            if (kinds[i] == "gradient") != prop.gradient or "value" not in got[i]:
                continue
            try:
                args = decode(inputs[i]["args"], _RECORDS)
                kwargs = decode(inputs[i]["kwargs"], _RECORDS)
                value = decode(got[i]["value"], _RECORDS)
                with np.errstate(all="ignore"):
                    if prop.check(list(args), dict(kwargs), value):
                        hit.add(i)
            except Exception:  # noqa: BLE001 (a check that cannot read the outcome says nothing)
                continue
        if hit:
            out.append((prop, hit))
    return out


def property_text(prop: Stated, hit: set[int], failed: int, shown: list[str]) -> str:
    """The feedback line: the property, how many of the failed checks break it, and which of
    those the notebook shows (by id; a generated check is only counted)."""
    n = len(hit)
    where = f" (among them {', '.join(shown)})" if shown else ""
    return f"{prop.text}; your function breaks it on {n} of the {failed} failed checks{where}"
