"""03_sum_vs_mean: cases and known mistakes for mean_sampled_log_ratio, shaped_reward,
masked_mean and aggregate_loss.

Batched cases use masks whose valid lengths differ from the padded length T and
garbage at padded positions, so that a sum divided by T, a mean over valid
tokens and a mean over padding all give different numbers. Each mistake is one
entry: its diagnosis and its wrong ``formula``, which runs after the reference has
validated the inputs (see spec.Mistake); the ``unchecked`` ones are the reference
with some of its input checks removed.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from autograder.assignments.common import until
from autograder.cases.spec import NO_SOURCE, AssignmentSpec, Case, FunctionSpec, Mistake

NAN, INF = float("nan"), float("inf")

# Sources of the known mistakes, named where more than one mistake cites them.
VERL_CORE = "volcengine/verl verl/trainer/ppo/core_algos.py@012be9d"
TRL_2562 = "huggingface/trl#2562: RLOO's sequence-level KL penalty sums the per-token KL over the tokens before the coefficient"
TRL_2854 = "huggingface/trl#2854: a user reads GRPO's per-token KL exp(ref - logp) - (ref - logp) - 1 as the log ratio; the answer: it is Schulman's k3"
ALPACA_67 = "tatsu-lab/alpaca_farm#67: AlpacaFarm's PPO KL term is torch.clamp(logprobs - ref_logprobs, min=0.0); a user proposes the swapped ref_logprobs - logprobs and the maintainer explains the direction"
OPENRLHF_KL_COEF = "OpenRLHF/OpenRLHF openrlhf/models/utils.py@02a2605: compute_reward silently replaces a kl_coef <= 0 by 0 instead of rejecting it"
ROLL_444 = "alibaba/ROLL#444: token-mean divided by the number of valid tokens but summed the whole, unmasked loss matrix"
SKYRL_462 = "NovaSky-AI/SkyRL#462: the average token loss included padded tokens"
CURRENT, REF = [-1.0, -3.0], [-2.0, -4.0]  # the source's two-token response
MODES = ("seq-mean-token-mean", "token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm")
SMTM, TM, SMTS, NORM = MODES

# The notebook's hand example: row 1 full, row 2 with 2 of 4 tokens valid (9.0 is padding garbage).
HAND_VALUES = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 9.0, 9.0]])
HAND_MASK = np.array([[1, 1, 1, 1], [1, 1, 0, 0]])


# -- inputs ------------------------------------------------------------------------------------


def _token_logps(rng: np.random.Generator, n: int) -> list[float]:
    return [float(-x) for x in rng.exponential(2.0, size=n)]


def _negative_token(p, q) -> bool:
    """Some token's log ratio p_t − q_t is at most −0.5: a clamp at 0 or an absolute value shows."""
    return min(a - b for a, b in zip(p, q)) <= -0.5


def _response(n: int):
    """Random (policy, reference) token log probabilities, redrawn until _negative_token."""

    def make(rng):
        return _token_logps(rng, n), _token_logps(rng, n)

    return until(make, _negative_token)


def _shaped(n: int):
    """Random shaped_reward arguments, redrawn until _negative_token; beta in [0.1, 1]."""

    def make(rng):
        base = float(rng.choice([1.0, -1.0, -0.2]))
        beta = float(rng.uniform(0.1, 1.0))
        return base, _token_logps(rng, n), _token_logps(rng, n), beta

    return until(make, lambda base, p, q, beta: _negative_token(p, q))


def _batch(
    rng: np.random.Generator,
    b: int,
    t: int,
    *,
    same_length: bool = False,
    left: bool = False,
    bool_mask: bool = False,
):
    """(values, mask) of shape (b, t): valid lengths in [2, t - 2] (so they differ from T, and
    from T − 1, where a sum divided by T − 1 would equal the mean for some students only; a
    row's sum differs from its mean on every draw; one valid token is a case of its own), one row
    of full length when b > 2, garbage (large, nonzero) at padded positions."""
    if same_length:
        lengths = np.full(b, rng.integers(2, t - 1))
    else:
        lengths = rng.integers(2, t - 1, size=b)
        if b > 2:
            lengths[rng.integers(b)] = t
    values = rng.normal(0.5, 1.0, size=(b, t))
    mask = np.zeros((b, t), dtype=np.int64)
    for i, n in enumerate(lengths):
        if left:
            mask[i, t - n :] = 1
        else:
            mask[i, :n] = 1
    values = np.where(mask == 1, values, rng.uniform(20.0, 50.0, size=(b, t)))
    return values, (mask.astype(bool) if bool_mask else mask)


def _batch_make(b: int, t: int, *extra, **kw):
    def make(rng):
        return (*_batch(rng, b, t, **kw), *extra)

    return make


def _norm_make(b: int, t: int, extra_len: int):
    """A Dr. GRPO case; max_len = T + extra_len is passed positionally."""

    def make(rng):
        return (*_batch(rng, b, t), NORM, t + extra_len)

    return make


# -- mean_sampled_log_ratio ------------------------------------------------------------------


def _sum(p, q):
    return math.fsum(a - b for a, b in zip(p, q))


def _mean_of(per_token):
    """The mean over tokens of ``per_token(p_t, q_t)`` instead of p_t - q_t."""
    return lambda p, q: math.fsum(per_token(a, b) for a, b in zip(p, q)) / len(p)


def _k3(p: float, q: float) -> float:
    return math.exp(q - p) - 1 - (q - p)


def _arithmetic(p, q):
    return math.log(math.fsum(math.exp(a) for a in p) / len(p)) - math.log(
        math.fsum(math.exp(b) for b in q) / len(q)
    )


def _list_cases(before: tuple = (), after: tuple = ()) -> list[Case]:
    bad = [
        ("empty", ([], []), "an empty response raises ValueError"),
        ("unequal-lengths", ([-1.0, -2.0], [-1.0]), "unequal lengths raise ValueError"),
        ("nan-entry", ([-1.0, NAN], [-1.0, -1.0]), "NaN raises ValueError"),
        ("neg-inf-entry", ([-1.0, -2.0], [-INF, -1.0]), "−inf (probability 0) raises ValueError"),
        (
            "positive-entry",
            ([-1.0, 0.5], [-1.0, -1.0]),
            "a log probability above 0 raises ValueError",
        ),
        (
            "positive-reference",
            ([-1.0], [0.1]),
            "a reference log probability above 0 raises ValueError",
        ),
    ]
    return [
        Case(cid, (*before, *args, *after), raises=ValueError, note=note) for cid, args, note in bad
    ]


MEAN_SAMPLED_LOG_RATIO = FunctionSpec(
    "mean_sampled_log_ratio",
    anchors={
        "source-one-token": (
            -2.0,
            "the source's check: mean_sampled_log_ratio([-4.0], [-2.0]) == -2.0",
        ),
        "story": (1.0, "by hand: ((-1 + 2) + (-3 + 4)) / 2"),
        # (0.3 - 4.0 + 0.1 - 0.5) / 4 = -4.1 / 4
        "uneven-tokens": (-1.025, "by hand"),
    },
    cases=(
        Case(
            "source-one-token",
            ([-4.0], [-2.0]),
            note="the source's check: mean_sampled_log_ratio([-4.0], [-2.0]) == -2.0",
        ),
        Case("story", (CURRENT, REF), note="[-1, -3] vs [-2, -4]: 1.0"),
        Case(
            "story-repeated",
            (CURRENT * 8, REF * 8),
            note="the same tokens repeated 8 times: still 1.0",
        ),
        Case("swapped", (REF, CURRENT), note="swapping the lists negates the ratio: -1.0"),
        Case(
            "equal",
            ([-0.3, -2.0, -0.01], [-0.3, -2.0, -0.01]),
            note="equal inputs give 0",
            kind="edge",
        ),
        Case(
            "zero-logp",
            ([0.0, -1.5, 0.0], [-0.5, 0.0, 0.0]),
            note="log probabilities of exactly 0 (probability 1) are allowed",
            kind="edge",
        ),
        Case(
            "long-unlikely",
            ([-5.0] * 800, [-6.0] * 800),
            note="a long, unlikely response (800 tokens at log probability -5 against -6): 1.0; "
            "a product of its token probabilities, exp(-4000), is 0 in floating point",
            kind="edge",
        ),
        Case(
            "tuples",
            ((-0.5, -1.5, 0.0), (-1.0, -0.25, -0.75)),
            note="tuples, and a log probability of exactly 0",
        ),
        Case(
            "uneven-tokens",
            ([-0.1, -5.0, -0.2, -3.0], [-0.4, -1.0, -0.3, -2.5]),
            note="tokens with different log ratios",
        ),
        *[
            Case(f"random-{n}", make=_response(n), note=f"a random response of {n} tokens")
            for n in (1, 3, 7, 20, 64)
        ],
        *_list_cases(),
    ),
    mistakes=(
        Mistake(
            "sum",
            "you summed the token log ratios; the contract is their mean (divide by the number of tokens), so the penalty does not grow with length",
            formula=_sum,
            source=TRL_2562,
        ),
        Mistake(
            "swapped",
            "you computed reference − policy: the arguments are swapped (policy_logps first)",
            formula=lambda p, q: _sum(q, p) / len(p),
            source=ALPACA_67,
        ),
        Mistake(
            "arithmetic-mean",
            "you took the log of the arithmetic mean of the token probabilities; RLEF uses the geometric mean, i.e. the mean of the token log ratios",
            formula=_arithmetic,
            source=f"{VERL_CORE} (indirect: it shows the right form, not this slip): GSPO's sequence ratio is exp of the mean token log ratio, the geometric mean of the token ratios",
        ),
        Mistake(
            "no-validation",
            "invalid inputs (empty, unequal lengths, entries not finite or above 0) must raise ValueError",
            unchecked=True,
            source="huggingface/trl#6693: a maintainer asks to raise on a NaN token log probability rather than neutralise it",
        ),
        Mistake(
            "k3-per-token",
            "you averaged the per-token k3 estimator exp(q − p) − 1 − (q − p) (GRPO's KL term); this function averages the plain log ratios p − q",
            formula=_mean_of(_k3),
            source=TRL_2854,
        ),
        Mistake(
            "exp-of-mean",
            "you returned exp of the mean log ratio (the ratio of the geometric-mean probabilities); return its log, the mean of p − q itself",
            formula=lambda p, q: math.exp(_sum(p, q) / len(p)),
            source=f"{VERL_CORE}: GSPO exponentiates the mean token log ratio to get a sequence-level probability ratio",
        ),
        Mistake(
            "clamped-per-token",
            "you clamped each token's log ratio at 0 (max(0, p − q)); a token whose policy log probability is below the reference's counts with its negative log ratio: average p − q as it is",
            formula=_mean_of(lambda a, b: max(0.0, a - b)),
            source=ALPACA_67,
        ),
    ),
)


# -- shaped_reward ---------------------------------------------------------------------------


def _penalised(per_token):
    """shaped_reward with the mean of ``per_token(p_t, q_t)`` as the penalty."""
    mean = _mean_of(per_token)
    return lambda r, p, q, b: r - b * mean(p, q)


SHAPED_REWARD = FunctionSpec(
    "shaped_reward",
    anchors={
        "source-one-token": (
            1.0,
            "the source's check: shaped_reward(0.0, [-4.0], [-2.0], 0.5) == 1.0",
        ),
        "story": (-0.5, "by hand: 0 - 0.5 · 1"),
        # log ratios 0.2, -0.4, 0.05, 1.1: mean 0.2375; 1 - 0.05 · 0.2375
        "rlef": (0.988125, "by hand"),
    },
    cases=(
        Case(
            "source-one-token",
            (0.0, [-4.0], [-2.0], 0.5),
            note="the source's check: shaped_reward(0.0, [-4.0], [-2.0], 0.5) == 1.0",
        ),
        Case(
            "story", (0, CURRENT, REF, 0.5), note="current [-1, -3], ref [-2, -4], beta 0.5: -0.5"
        ),
        Case(
            "story-repeated",
            (0, CURRENT * 8, REF * 8, 0.5),
            note="both lists repeated 8 times: still -0.5 (a sum would give -8.0)",
        ),
        Case(
            "equal-inputs",
            (1.0, CURRENT, CURRENT, 0.5),
            note="equal inputs: no penalty, the base reward",
            kind="edge",
        ),
        Case(
            "beta-zero",
            (-0.2, CURRENT, REF, 0.0),
            note="beta = 0 returns the base reward",
            kind="edge",
        ),
        Case("swapped", (0, REF, CURRENT, 0.5), note="swapping the lists negates the ratio: +0.5"),
        Case(
            "large-base",
            (10.0, CURRENT, REF, 0.5),
            note="a base reward of 10 is used as given (no clip): 9.5",
        ),
        Case(
            "rlef",
            (1.0, [-0.2, -1.3, -0.05, -2.0], [-0.4, -0.9, -0.1, -3.1], 0.05),
            note="RLEF's beta = 0.05 with a passing response",
        ),
        *[
            Case(
                f"random-{n}",
                make=_shaped(n),
                note=f"a random response of {n} tokens, random base reward and beta",
            )
            for n in (1, 5, 16, 50)
        ],
        Case(
            "base-nan",
            (NAN, CURRENT, REF, 0.5),
            raises=ValueError,
            note="base_reward NaN raises ValueError",
        ),
        Case(
            "base-inf",
            (INF, CURRENT, REF, 0.5),
            raises=ValueError,
            note="base_reward inf raises ValueError",
        ),
        Case(
            "beta-negative",
            (1.0, CURRENT, REF, -0.1),
            raises=ValueError,
            note="a negative beta raises ValueError",
        ),
        Case(
            "beta-nan",
            (1.0, CURRENT, REF, NAN),
            raises=ValueError,
            note="beta NaN raises ValueError",
        ),
        Case(
            "beta-inf",
            (1.0, CURRENT, REF, INF),
            raises=ValueError,
            note="beta inf raises ValueError",
        ),
        *_list_cases(before=(1.0,), after=(0.5,)),
    ),
    mistakes=(
        Mistake(
            "sum-based",
            "you used the sum of the token log ratios: the penalty then grows with length (-8.0 instead of -0.5 for the 16-token response); use the mean",
            formula=lambda r, p, q, b: r - b * _sum(p, q),
            source=TRL_2562,
        ),
        Mistake(
            "sign",
            "you added the penalty (or swapped the token lists): shaped reward = base_reward − beta · mean(policy − reference)",
            formula=lambda r, p, q, b: r + b * _sum(p, q) / len(p),
            source="huggingface/trl#463: the per-token kl = logprob - ref_logprob is subtracted from the rewards, and can turn negative",
        ),
        Mistake(
            "beta-dropped",
            "you subtracted the mean log ratio without its coefficient: shaped reward = base_reward − beta · mean(policy − reference)",
            formula=lambda r, p, q, b: r - _sum(p, q) / len(p),
            source=NO_SOURCE,
        ),
        Mistake(
            "beta-unchecked",
            "beta must be finite and >= 0: a negative or non-finite beta raises ValueError",
            unchecked=("beta",),
            source=OPENRLHF_KL_COEF,
        ),
        Mistake(
            "base-unchecked",
            "a base_reward that is not finite (NaN, ±inf) raises ValueError",
            unchecked=("base_reward",),
            source="modelscope/ms-swift#8123: a None/NaN reward propagates through the normalisation and silently ruins training",
        ),
        Mistake(
            "clipped-penalty",
            "you clamped each token's log ratio at 0 before averaging; a negative mean log ratio lowers the penalty and raises the reward (shaped_reward(0.0, [-4.0], [-2.0], 0.5) is 1.0): use p − q as it is",
            formula=_penalised(lambda a, b: max(0.0, a - b)),
            source=ALPACA_67,
        ),
        Mistake(
            "k3-penalty",
            "you penalised with the k3 estimator exp(q − p) − 1 − (q − p) (GRPO's KL term); RLEF's reference term is the mean token log ratio p − q",
            formula=_penalised(_k3),
            source=TRL_2854,
        ),
        Mistake(
            "abs-penalty",
            "you penalised the absolute token log ratios |p − q|; the penalty keeps their sign: base_reward − beta · mean(p − q)",
            formula=_penalised(lambda a, b: abs(a - b)),
            source='huggingface/trl#1161: PPOTrainer\'s kl_penalty="abs" penalises |logprob - ref_logprob|; the maintainer calls it safer when the KL turns negative',
        ),
        Mistake(
            "squared-penalty",
            "you penalised the squared token log ratios (p − q)²; the penalty is the mean log ratio itself, with its sign",
            formula=_penalised(lambda a, b: (a - b) ** 2),
            source="one-covenant/grail#42: a review flags a GRPO KL penalty written as the mean squared log ratio, log_ratio.pow(2).mean()",
        ),
    ),
)


# -- masked_mean -----------------------------------------------------------------------------


def _batch_errors(mode: tuple = ()) -> list[Case]:
    """Invalid batches; ``mode`` (and nothing else) follows the two arrays."""
    v = HAND_VALUES
    bad = [
        (
            "empty-row",
            (v, np.array([[1, 1, 1, 1], [0, 0, 0, 0]])),
            "a row with no valid token raises ValueError",
        ),
        (
            "empty-row-bool",
            (v, np.array([[False] * 4, [True, True, False, False]])),
            "a row with no valid token (bool mask) raises ValueError",
        ),
        (
            "mask-shape",
            (v, np.array([[1, 1, 1], [1, 1, 0]])),
            "a mask of another shape raises ValueError",
        ),
        (
            "mask-broadcastable",
            (v, np.array([[1, 1, 0, 0]])),
            "a (1, T) mask is not a (B, T) mask: ValueError",
        ),
        (
            "values-1d",
            (np.array([1.0, 2.0, 3.0]), np.array([1, 1, 0])),
            "1-D values (not (B, T)) raise ValueError",
        ),
        ("mask-not-binary", (v, 2 * HAND_MASK), "mask entries other than 0/1 raise ValueError"),
        (
            "values-3d",
            (np.ones((2, 2, 2)), np.ones((2, 2, 2), dtype=np.int64)),
            "3-D values (not (B, T)) raise ValueError",
        ),
        (
            "no-rows",
            (np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)),
            "a batch of 0 rows raises ValueError",
        ),
    ]
    return [Case(cid, (*args, *mode), raises=ValueError, note=note) for cid, args, note in bad]


def _rows(values, mask):
    v = np.asarray(values, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    return v, m, np.where(m, v, 0.0).sum(axis=1), m.sum(axis=1)


def _by_rows(formula):
    """A formula of (values, mask, masked row sums, valid tokens per row)."""
    return lambda values, mask: formula(*_rows(values, mask))


def _mask_as_index(values, mask) -> np.ndarray:
    """Each row's mean of ``values[b][mask[b]]``: right for bool masks, positions 0/1 for int masks."""
    v, m = np.asarray(values, dtype=np.float64), np.asarray(mask)
    return np.array([v[b][m[b]].mean() for b in range(v.shape[0])])


MASKED_MEAN = FunctionSpec(
    "masked_mean",
    anchors={
        "hand": ([2.5, 5.5], "the notebook's example: (1+2+3+4)/4 and (5+6)/2"),
        "one-row": ([1.0], "by hand: (0.5 - 1.5 + 4) / 3"),
        "non-finite-padding": ([1.0, 3.0], "by hand: 1 and (2 + 4) / 2"),
    },
    cases=(
        Case(
            "hand",
            (HAND_VALUES, HAND_MASK),
            note="the notebook's example: [2.5, 5.5] (9.0 is padding)",
        ),
        Case("hand-bool", (HAND_VALUES, HAND_MASK.astype(bool)), note="the same with a bool mask"),
        Case(
            "hand-float-mask",
            (HAND_VALUES, HAND_MASK.astype(np.float64)),
            note="a 0.0/1.0 float mask",
        ),
        Case(
            "one-row",
            (np.array([[0.5, -1.5, 4.0, 10.0, 10.0]]), np.array([[1, 1, 1, 0, 0]])),
            note="one row, 3 of 5 tokens valid",
        ),
        Case(
            "nested-lists",
            ([[2.0, 4.0, -1.0], [3.0, 0.0, 0.0]], [[1, 1, 0], [1, 0, 0]]),
            note="nested lists are converted by numpy",
        ),
        Case(
            "valid-zeros",
            (np.array([[0.0, 2.0, 9.0], [-1.0, 0.0, 0.0]]), np.array([[1, 1, 0], [1, 1, 1]])),
            note="a valid value of exactly 0 counts like any other: [1.0, −1/3]",
        ),
        Case(
            "random-right-padded",
            make=_batch_make(4, 9),
            note="random (4, 9) batch, right padding, garbage in the padding",
        ),
        Case(
            "random-left-padded",
            make=_batch_make(5, 7, left=True),
            note="random (5, 7) batch, left padding",
        ),
        Case(
            "random-same-length",
            make=_batch_make(3, 10, same_length=True),
            note="all rows with the same valid length L < T",
        ),
        Case(
            "random-bool",
            make=_batch_make(6, 12, bool_mask=True),
            note="random (6, 12) batch with a bool mask",
        ),
        Case("random-single-row", make=_batch_make(1, 16), note="a single row, shorter than T"),
        Case(
            "one-valid-token",
            (np.array([[3.0, 7.0, 7.0], [7.0, -2.0, 7.0]]), np.array([[1, 0, 0], [0, 1, 0]])),
            note="rows with a single valid token: their mean is that token",
            kind="edge",
        ),
        Case(
            "no-padding",
            (np.array([[1.0, 2.0], [4.0, -4.0]]), np.array([[1, 1], [1, 1]])),
            note="every token valid: the plain row means",
            kind="edge",
        ),
        Case(
            "non-finite-padding",
            (np.array([[1.0, NAN, INF], [-INF, 2.0, 4.0]]), np.array([[1, 0, 0], [0, 1, 1]])),
            note="NaN and ±inf at padded positions are ignored (padding may hold anything): [1.0, 3.0]",
            kind="edge",
        ),
        *_batch_errors(),
    ),
    mistakes=(
        Mistake(
            "sum-not-mean",
            "you returned each row's masked sum; the contract is the mean over its valid tokens",
            formula=_by_rows(lambda v, m, s, c: s),
            source="NousResearch/atropos#236: a fix clamped each row's mask count, and the review notes the masked sum was no longer divided by it",
        ),
        Mistake(
            "mean-over-padding",
            "you averaged over every position, padding included (values.mean(axis=1)); average only over the valid tokens",
            formula=_by_rows(lambda v, m, s, c: v.mean(axis=1)),
            source=SKYRL_462,
        ),
        Mistake(
            "divide-by-T",
            "you divided the masked sum by T, the padded length; divide by the number of valid tokens of the row",
            formula=_by_rows(lambda v, m, s, c: s / v.shape[1]),
            source="d2l-ai/d2l-en#2076 (a textbook's errata): MaskedSoftmaxCELoss takes .mean(dim=1) of the masked loss, so the padding counts in the denominator",
        ),
        Mistake(
            "empty-row-accepted",
            "a row with no valid token has no mean: raise ValueError instead of returning a value for it (0 / 0 gives NaN)",
            unchecked=("no valid token",),
            source="huggingface/trl#3248: a batch whose completions are all truncated divided 0 by 0 and gave NaN",
        ),
        Mistake(
            "no-shape-check",
            "values must be (B, T), the mask exactly the same shape, with 0/1 entries: raise ValueError otherwise",
            unchecked=("shape", "0/1"),
            source="huggingface/lerobot#3377: a mask whose shape differs from the loss's gives a wrong valid count in the denominator",
        ),
        Mistake(
            "unmasked-numerator",
            "you divided by the number of valid tokens but summed the padding too: mask the numerator (np.where(mask, values, 0.0).sum(axis=1))",
            formula=_by_rows(lambda v, m, s, c: v.sum(axis=1) / c),
            source=ROLL_444,
        ),
        Mistake(
            "global-mean",
            "you pooled every row into one mean over all valid tokens; compute one mean per row (sum over axis 1, divide by that row's count)",
            formula=_by_rows(lambda v, m, s, c: np.full(v.shape[0], s.sum() / c.sum())),
            source="scipy/scipy#12106: stats.tmean ignored its axis argument and returned one global mean instead of one mean per row",
        ),
        Mistake(
            "int-mask-as-index",
            "you indexed with the mask: an integer 0/1 mask picks positions 0 and 1 instead of the valid tokens; convert it with mask.astype(bool), or use np.where(mask, values, 0.0)",
            formula=lambda values, mask: _mask_as_index(values, mask),
            source="QData/TextAttack#68: indexing with an integer 0/1 array selected elements 0 and 1 instead of masking",
        ),
        Mistake(
            "nan-poisoning",
            "you masked by multiplying (values * mask): 0 · NaN and 0 · inf are NaN, so non-finite padding poisons the row; select the valid entries with np.where(mask, values, 0.0)",
            formula=_by_rows(lambda v, m, s, c: (v * m).sum(axis=1) / c),
            source="ecmwf/WeatherGenerator#2717: masking by multiplication let a NaN at an excluded position poison the whole loss",
        ),
    ),
)


# -- aggregate_loss --------------------------------------------------------------------------


def _formula(mode: str, v, m, sums, counts, max_len):
    batch, width = v.shape
    if mode == SMTM:
        return float(np.mean(sums / counts))
    if mode == TM:
        return float(sums.sum() / counts.sum())
    if mode == SMTS:
        return float(sums.mean())
    if max_len is None:
        raise ValueError("max_len")
    return float(sums.sum() / (batch * max_len))


def _unmasked_numerator(per_token_loss, mask, mode, max_len):
    """Every mode computed from row sums that include the padding."""
    v, m, _, counts = _rows(per_token_loss, mask)
    return _formula(mode, v, m, v.sum(axis=1), counts, max_len)


def _swap(a: str, b: str):
    """Modes a and b computed with each other's formula."""

    def formula(per_token_loss, mask, mode, max_len):
        use = {a: b, b: a}.get(mode, mode)
        return _formula(use, *_rows(per_token_loss, mask), max_len)

    return formula


def _override(modes: tuple, formula):
    """``modes`` computed by ``formula(v, m, sums, counts, max_len)``; the others as the reference."""

    def wrong(per_token_loss, mask, mode, max_len, ns):
        if mode in modes:
            return float(formula(*_rows(per_token_loss, mask), max_len))
        return ns["aggregate_loss"](per_token_loss, mask, mode, max_len)

    return wrong


def _multiplied_mask(per_token_loss, mask, mode, max_len):
    """Every mode with its row sums taken as (per_token_loss * mask): right while the padding
    is finite, NaN as soon as it holds NaN or ±inf."""
    v, m, _, counts = _rows(per_token_loss, mask)
    with np.errstate(invalid="ignore", over="ignore"):
        sums = (v * m).sum(axis=1)
    return _formula(mode, v, m, sums, counts, max_len)


def _mode_falls_back(ns):
    """aggregate_loss that treats an unknown mode as token-mean instead of raising."""
    reference = ns["aggregate_loss"]
    return lambda loss, mask, mode, max_len=None: reference(
        loss, mask, mode if mode in MODES else TM, max_len
    )


WHAT = {
    SMTM: "seq-mean-token-mean is the mean over rows of each row's mean over its valid tokens",
    TM: "token-mean is the masked sum over the batch divided by the number of valid tokens",
    SMTS: "seq-mean-token-sum is the mean over rows of each row's masked sum",
    NORM: "seq-mean-token-sum-norm is the masked sum divided by B · max_len",
}


# Where each confusion of two modes is documented.
SWAP_SOURCES = {
    (
        SMTM,
        TM,
    ): "huggingface/trl#2995: TRL's GRPO loss divided by the batch's number of valid tokens (token-mean) where the original GRPO averages per sequence",
    (
        SMTM,
        SMTS,
    ): "huggingface/trl#4988: LUSPO sums each sequence's token losses and averages over sequences, dropping grpo's per-sequence length normaliser",
    (
        SMTM,
        NORM,
    ): "volcengine/verl#2435: proposes a constant max response length instead of each row's length in the masked mean",
    (TM, SMTS): NO_SOURCE,
    (
        TM,
        NORM,
    ): "huggingface/trl#3231: proposes replacing the batch's valid-token normaliser by a constant, the maximum possible tokens in a batch",
    (
        SMTS,
        NORM,
    ): 'verl-project/verl#5366: its new error for seq-mean-token-sum-norm without a loss scale steers users to "seq-mean-token-sum", the same sums without the constant',
}


def _mode_cases(mode: str, tag: str) -> list[Case]:
    kw = {"max_len": 16} if mode == NORM else {}
    cases = [
        Case(
            f"{tag}-hand",
            (HAND_VALUES, HAND_MASK, mode),
            dict(kw),
            note=f"the notebook's example, {mode}",
        ),
        Case(
            f"{tag}-random",
            make=_batch_make(4, 9, mode, 12) if mode == NORM else _batch_make(4, 9, mode),
            note=f"random (4, 9) batch with rows of different lengths, {mode}",
        ),
        Case(
            f"{tag}-random-bool",
            make=_batch_make(6, 5, mode, 5, bool_mask=True)
            if mode == NORM
            else _batch_make(6, 5, mode, bool_mask=True),
            note=f"random (6, 5) batch with a bool mask, {mode}",
        ),
        Case(
            f"{tag}-random-same-length",
            make=_batch_make(3, 11, mode, 11, same_length=True)
            if mode == NORM
            else _batch_make(3, 11, mode, same_length=True),
            note=f"all rows with the same valid length L < T, {mode}",
        ),
    ]
    if mode != NORM:
        cases.append(
            Case(
                f"{tag}-max-len-ignored",
                make=_batch_make(5, 8, mode, 32, left=True),
                note=f"max_len is ignored by {mode} (left padding)",
            )
        )
    else:
        cases.append(
            Case(
                f"{tag}-random-long-budget",
                make=_norm_make(5, 8, 24),
                note="max_len well above T (left padding does not matter)",
            )
        )
    return cases


AGGREGATE_LOSS = FunctionSpec(
    "aggregate_loss",
    anchors={
        "grpo-hand": (4.0, "the notebook's example: mean of the row means 2.5 and 5.5"),
        "dapo-hand": (3.5, "the notebook's example: 21 / 6 valid tokens"),
        "seq-sum-hand": (10.5, "the notebook's example: mean of the row sums 10 and 11"),
        "dr-grpo-hand": (21 / 32, "the notebook's example: (10 + 11) / (2 · 16)"),
    },
    cases=(
        *_mode_cases(SMTM, "grpo"),
        *_mode_cases(TM, "dapo"),
        *_mode_cases(SMTS, "seq-sum"),
        *_mode_cases(NORM, "dr-grpo"),
        *[
            Case(
                f"{tag}-one-row",
                (np.array([[2.0, -1.0, 9.0, 9.0]]), np.array([[1, 1, 0, 0]]), mode),
                {"max_len": 5} if mode == NORM else {},
                note=f"a batch of one row, {mode}",
                kind="edge",
            )
            for tag, mode in (("grpo", SMTM), ("dapo", TM), ("seq-sum", SMTS), ("dr-grpo", NORM))
        ],
        Case(
            "dr-grpo-max-len-equals-T",
            (HAND_VALUES, HAND_MASK, NORM, 4),
            note="max_len = T is allowed",
            kind="edge",
        ),
        Case(
            "dapo-short-max-len-ignored",
            (HAND_VALUES, HAND_MASK, TM, 2),
            note="max_len = 2 below T is ignored by token-mean (only seq-mean-token-sum-norm "
            "reads it): 3.5",
        ),
        *[
            Case(
                f"{tag}-no-padding",
                (
                    np.array([[1.0, 2.0, 6.0], [3.0, -1.0, 0.5]]),
                    np.ones((2, 3), dtype=np.int64),
                    mode,
                ),
                {"max_len": 3} if mode == NORM else {},
                note=f"every token valid, {mode}",
                kind="edge",
            )
            for tag, mode in (("grpo", SMTM), ("dapo", TM), ("seq-sum", SMTS), ("dr-grpo", NORM))
        ],
        *[
            Case(
                f"{tag}-non-finite-padding",
                (
                    np.array([[1.0, NAN, INF, 3.0], [-INF, 2.0, 4.0, 1e308]]),
                    np.array([[1, 0, 0, 1], [0, 1, 1, 0]]),
                    mode,
                ),
                {"max_len": 6} if mode == NORM else {},
                note=f"NaN, ±inf and 1e308 at padded positions are ignored (padding may hold anything), {mode}",
                kind="edge",
            )
            for tag, mode in (("grpo", SMTM), ("dapo", TM), ("seq-sum", SMTS), ("dr-grpo", NORM))
        ],
        Case(
            "unknown-mode",
            (HAND_VALUES, HAND_MASK, "mean"),
            raises=ValueError,
            note="an unknown mode raises ValueError",
        ),
        Case(
            "unknown-mode-with-max-len",
            (HAND_VALUES, HAND_MASK, "sum", 8),
            raises=ValueError,
            note="an unknown mode raises ValueError even when max_len is given",
        ),
        Case(
            "unknown-mode-typo",
            (HAND_VALUES, HAND_MASK, "token_mean"),
            raises=ValueError,
            note='"token_mean" (underscore) is not a mode: ValueError',
        ),
        Case(
            "dr-grpo-no-max-len",
            (HAND_VALUES, HAND_MASK, NORM),
            raises=ValueError,
            note="seq-mean-token-sum-norm without max_len raises ValueError",
        ),
        Case(
            "dr-grpo-max-len-short",
            (HAND_VALUES, HAND_MASK, NORM, 3),
            raises=ValueError,
            note="max_len smaller than T raises ValueError",
        ),
        Case(
            "dr-grpo-max-len-below-T",
            (
                np.array([[1.0, 2.0, 3.0, 9.0, 9.0], [4.0, 5.0, 9.0, 9.0, 9.0]]),
                np.array([[1, 1, 1, 0, 0], [1, 1, 0, 0, 0]]),
                NORM,
                4,
            ),
            raises=ValueError,
            note="max_len 4 below T = 5 raises ValueError, though no row holds more than 3 "
            "valid tokens (T is the padded length)",
        ),
        *[
            Case(
                f"empty-row-{tag}",
                (HAND_VALUES, np.array([[1, 1, 0, 0], [0, 0, 0, 0]]), mode, 8),
                raises=ValueError,
                note=f"a row with no valid token raises ValueError ({mode})",
            )
            for tag, mode in (("grpo", SMTM), ("dapo", TM), ("seq-sum", SMTS), ("dr-grpo", NORM))
        ],
        Case(
            "mask-shape",
            (HAND_VALUES, np.array([[1, 1, 0, 0]]), TM),
            raises=ValueError,
            note="a (1, T) mask is not a (B, T) mask: ValueError",
        ),
        Case(
            "mask-not-binary",
            (HAND_VALUES, 2 * HAND_MASK, TM),
            raises=ValueError,
            note="mask entries other than 0/1 raise ValueError",
        ),
        Case(
            "values-3d",
            (np.ones((2, 2, 2)), np.ones((2, 2, 2), dtype=np.int64), TM),
            raises=ValueError,
            note="3-D values (not (B, T)) raise ValueError",
        ),
        Case(
            "no-rows",
            (np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64), SMTS),
            raises=ValueError,
            note="a batch of 0 rows raises ValueError",
        ),
    ),
    mistakes=(
        *[
            Mistake(
                f"swapped-{a}-{b}",
                f'you confused "{a}" and "{b}": each was computed with the other\'s formula ({WHAT[a]}; {WHAT[b]})',
                formula=_swap(a, b),
                source=SWAP_SOURCES[a, b],
            )
            for a, b in itertools.combinations(MODES, 2)
        ],
        Mistake(
            "mean-over-padding",
            "you averaged over every position, padding included; the mean modes average over the valid tokens only",
            formula=_override((SMTM, TM), lambda v, m, s, c, L: v.mean()),
            source=SKYRL_462,
        ),
        Mistake(
            "divide-by-T",
            "you divided masked sums by T, the padded length; the mean modes divide by the number of valid tokens (of each row, or of the batch)",
            formula=_override((SMTM, TM), lambda v, m, s, c, L: s.sum() / v.size),
            source="PrimeIntellect-ai/prime-rl#674: the padded tokens were counted in the loss scale",
        ),
        Mistake(
            "max-len-missing-accepted",
            "seq-mean-token-sum-norm needs max_len: raise ValueError when it is missing (do not fall back to T)",
            unchecked=("needs max_len",),
            source="verl-project/verl#5366: replaces the fallback loss_scale_factor = loss_mask.shape[-1] (the padded length) by a ValueError",
        ),
        Mistake(
            "max-len-short-accepted",
            "max_len smaller than T must raise ValueError: the batch has tokens beyond the budget",
            unchecked=("smaller than the padded length",),
            source=NO_SOURCE,
        ),
        Mistake(
            "unknown-mode-accepted",
            "an unknown mode must raise ValueError, not fall back to a default",
            build=_mode_falls_back,
            validation=True,
            source="huggingface/trl#4935: the SDPO trainer's final else: computes a token-mean loss for any loss type it does not know",
        ),
        Mistake(
            "empty-row-accepted",
            "a row with no valid token must raise ValueError in every mode",
            unchecked=("no valid token",),
            source="verl-project/verl#3986: an agg_loss that adds 1e-8 to each row's count and leaves fully masked rows out of the row mean instead of rejecting them",
        ),
        Mistake(
            "no-validation",
            "invalid inputs (an unknown mode, max_len missing or below T, masks of another shape or not 0/1, rows without a valid token) must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
        Mistake(
            "unmasked-numerator",
            "you divided by the valid counts but summed the padding too: mask the per-token loss before every sum (np.where(mask, per_token_loss, 0.0))",
            formula=_unmasked_numerator,
            source=ROLL_444,
        ),
        Mistake(
            "sum-norm-without-B",
            "in seq-mean-token-sum-norm you divided the masked sum by max_len only; Dr. GRPO divides by B · max_len (a mean over rows of sums over a fixed budget)",
            formula=_override((NORM,), lambda v, m, s, c, L: s.sum() / L),
            source="verl-project/verl#3741: seq-mean-token-sum-norm summed the row sums over the batch and divided by loss_mask.shape[-1] only, not by the number of rows",
        ),
        Mistake(
            "nan-poisoning",
            "you masked by multiplying (per_token_loss * mask): 0 · NaN and 0 · inf are NaN, so non-finite padding poisons the loss; select the valid entries with np.where(mask, per_token_loss, 0.0)",
            formula=_multiplied_mask,
            source="ecmwf/WeatherGenerator#2717: masking by multiplication let a NaN at an excluded position poison the whole loss",
        ),
        Mistake(
            "max-len-ignored",
            "in seq-mean-token-sum-norm you divided by B · T, the padded length of this batch; the constant is the max_len argument (B · max_len), so that padding does not change the loss",
            formula=_override((NORM,), lambda v, m, s, c, L: s.sum() / v.size),
            source="verl-project/verl#4360: replaces the hard-coded divisor of seq-mean-token-sum-norm, the padded length, by a configurable loss_scale_factor",
        ),
    ),
)

SPEC = AssignmentSpec(
    "03_sum_vs_mean", (MEAN_SAMPLED_LOG_RATIO, SHAPED_REWARD, MASKED_MEAN, AGGREGATE_LOSS)
)
