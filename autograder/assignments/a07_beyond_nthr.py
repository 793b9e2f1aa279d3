"""07_beyond_nthr: cases and known mistakes for clipped_surrogate, thr_weights, nll_on_correct
and smaug_floor.

Inputs are float32 torch tensors built from the case generator; tolerances are float32 ones.
Each mistake is one entry: its diagnosis and its wrong ``formula``, which runs after the
reference has validated the inputs (see spec.Mistake); the ``unchecked`` ones are the reference
without its checks. Sources are the pages opened for docs/notebook-07-plan.md (section 1).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from autograder.assignments.common import until
from autograder.cases.spec import (
    GRADIENT_SPLIT,
    NO_SOURCE,
    AssignmentSpec,
    Case,
    FunctionSpec,
    Mistake,
)

DAPO_PAGE = "inclusionai.github.io/AReaL/algorithms/dapo.html"


def _t(x, dtype=torch.float32) -> torch.Tensor:
    return torch.tensor(np.asarray(x), dtype=dtype)


def _b(x) -> torch.Tensor:
    return torch.tensor(np.asarray(x), dtype=torch.bool)


# -- clipped_surrogate -----------------------------------------------------------------------


def _aggregate(per_token, mask, mode):
    """Notebook 03's aggregation of a (B, T) per-token loss (the correct one)."""
    masked = torch.where(mask, per_token, torch.zeros_like(per_token))
    if mode == "token-mean":
        return masked.sum() / mask.sum()
    if mode == "seq-mean-token-sum":
        return masked.sum(dim=1).mean()
    return (masked.sum(dim=1) / mask.sum(dim=1)).mean()


def _multiplied(per_token, mask, mode):
    """Notebook 03's aggregation, masked by multiplying by the mask: right while the padded
    entries are finite, NaN where one is ±inf (inf · 0)."""
    masked = per_token * mask
    if mode == "token-mean":
        return masked.sum() / mask.sum()
    if mode == "seq-mean-token-sum":
        return masked.sum(dim=1).mean()
    return (masked.sum(dim=1) / mask.sum(dim=1)).mean()


def _cs(
    objective=None,
    ratio=None,
    aggregate=_aggregate,
    sign=-1.0,
    detach=("old", "adv"),
    mask_first=True,
):
    """A wrong clipped_surrogate: objective(r, A, low, high) per token, ratio(logp, logp_old);
    ``detach`` names the inputs it detaches ("new", "old", "adv"), as the reference detaches
    logp_old and the advantages; ``mask_first``: the padded log probabilities are set to 0
    before the ratio (as the reference does), so a padded ratio never overflows."""

    def right_objective(r, a, low, high):
        return torch.minimum(r * a, torch.clamp(r, 1 - low, 1 + high) * a)

    objective = objective or right_objective
    ratio = ratio or (lambda lp, old: torch.exp(lp - old))

    def wrong(logp, logp_old, advantages, mask, eps_low, eps_high, mode):
        logp = logp.detach() if "new" in detach else logp
        logp_old = logp_old.detach() if "old" in detach else logp_old
        advantages = advantages.detach() if "adv" in detach else advantages
        high = eps_low if eps_high is None else eps_high
        if mask_first:
            logp = torch.where(mask, logp, torch.zeros_like(logp))
            logp_old = torch.where(mask, logp_old, torch.zeros_like(logp_old))
        o = objective(ratio(logp, logp_old), advantages, eps_low, high)
        return aggregate(sign * o, mask, mode)

    return wrong


# Tokens a gradient case plants at the start of its first row, (ratio, advantage): one the
# upper bound of clip-higher frees (1.25 with eps_high 0.28 or 0.3) and a symmetric clip stops,
# one that only a lower bound of 1 − eps_high would free, one clipped below, one whose
# unclipped term is the minimum. Every draw then has the token each clip mistake acts on, so
# that a mistake fails the same gradient cases for every student.
# (ratio, advantage) at the start of a gradient case's first row; 0.81 with A < 0 lies between
# 1 − eps_low = 0.8 and exp(−eps_low) = 0.819: unclipped by the text's bound, clipped (no
# gradient) by a log ratio clipped at −eps_low
_PLANTED = ((1.25, 1.0), (0.78, -1.0), (0.75, -1.0), (1.5, -1.0), (0.81, -1.0))


def _cs_case(
    b: int,
    t: int,
    spread: float,
    low: float,
    high,
    mode: str,
    planted: bool = False,
    dual: bool = False,
):
    """A random batch, redrawn until its token mean and its mean of row means differ by 0.01 or
    more (rows of different lengths, so the modes differ), some valid token has A > 0 and a
    ratio above 1 + min(eps_low, eps_high), so the upper clip binds (and where eps_high differs
    from eps_low, one bound binds where the other does not), where eps_low > 0 some valid token
    has A < 0 and a ratio below exp(−eps_low) − 0.01 (the lower clip binds), and some valid
    token is outside the clip range on the side where the minimum takes r·A.

    ``planted``: the first row starts with the tokens of _PLANTED (gradient cases).

    ``dual``: some valid token has A < 0 and a ratio above 3, far enough that −3·A differs
    from the surrogate by 0.2 or more (a dual clip at c = 3 shows on every draw); without it,
    no valid token has A < 0 and a ratio above 3 (a dual clip changes nothing on any draw)."""

    def make(rng):
        logp_old = -rng.uniform(0.1, 3.0, size=(b, t))
        logp = logp_old + spread * rng.standard_normal((b, t))
        adv = rng.standard_normal((b, t))
        lengths = rng.integers(1, t + 1, size=b)
        lengths[0] = t  # one full row, the others uneven
        mask = np.arange(t)[None, :] < lengths[:, None]
        if planted:
            for k, (ratio, a) in enumerate(_PLANTED):
                logp[0, k], adv[0, k] = logp_old[0, k] + math.log(ratio), a
        return _t(logp), _t(logp_old), _t(adv), _b(mask), low, high, mode

    def binds(logp, logp_old, adv, mask, low, high, mode) -> bool:
        ratio = torch.exp(logp.double() - logp_old.double())
        top = 1 + min(low, low if high is None else high)
        objective = _cs()(logp, logp_old, adv, mask, low, high, "token-mean")
        per_row = _cs()(logp, logp_old, adv, mask, low, high, "seq-mean-token-mean")
        upper = 1 + (low if high is None else high)
        unclipped_smaller = ((adv > 0) & (ratio < 1 - low - 0.01)) | (
            (adv < 0) & (ratio > upper + 0.01)
        )
        # where eps_low > 0, the lower clip binds too: a valid token with A < 0 and a ratio
        # below exp(−eps_low) − 0.01, under both 1 − eps_low and exp(−eps_low) (a log ratio
        # clipped at −eps_low shows on every draw)
        lower = low == 0 or bool((mask & (adv < 0) & (ratio < math.exp(-low) - 0.01)).any())
        # and a valid token with A > 0 above 1 + eps_high: the text's upper clip binds there
        upper_binds = bool((mask & (adv > 0) & (ratio > upper + 0.01)).any())
        return (
            bool((mask & (adv > 0) & (ratio > top + 0.01)).any())
            and bool((mask & unclipped_smaller).any())  # the min takes r·A there
            and lower
            and upper_binds
            and abs(float(objective) - float(per_row)) >= 0.01  # rows of different lengths
        )

    def dual_clip_as_stated(logp, logp_old, adv, mask, low, high, mode) -> bool:
        ratio = torch.exp(logp.double() - logp_old.double())
        negative = mask & (adv < 0)
        if dual:
            return bool((negative & ((ratio - 3.0) * -adv.double() >= 0.2)).any())
        return not bool((negative & (ratio > 3.0)).any())

    return until(make, binds, dual_clip_as_stated)


_LP = _t(np.log([[1.25, 0.75, 1.5]]))
_Z = torch.zeros(1, 3)
_A = _t([[1.0, -1.0, -1.0]])
_M = torch.ones(1, 3, dtype=torch.bool)
# two rows: row 1 has one valid token (ratio 1, A = 2) and a padded one (ratio e², A = 5);
# row 2: ratios 0.5 and 1.1, advantages 1 and 1
_LP2 = _t([[0.0, 2.0], [math.log(0.5), math.log(1.1)]])
_A2 = _t([[2.0, 5.0], [1.0, 1.0]])
_M2 = _b([[True, False], [True, True]])
_Z2 = torch.zeros(2, 2)
# padded positions far from the rest: logp − logp_old = 200 there, whose exp overflows float32
# (inf) and whose advantage is −1 (r·A = −inf); valid tokens: row 1 ratio 1, A = 1; row 2
# ratios 0.5 and 1 with advantages 1 and −1
_LPO = _t([[0.0, 0.0], [math.log(0.5), 0.0]])
_OLDO = _t([[0.0, -200.0], [0.0, 0.0]])
_AO = _t([[1.0, -1.0], [1.0, -1.0]])
_MO = _b([[True, False], [True, True]])
# long responses: ln π near −110, where exp underflows to 0 in float32; ratios e^{∓0.3}
_LPL = _t([[-110.3, -110.0], [-109.7, -110.0]])
_OLDL = _t([[-110.0, -110.3], [-110.0, -109.7]])
_AL = _t([[1.0, -1.0], [-1.0, 1.0]])

CLIPPED_SURROGATE = FunctionSpec(
    "clipped_surrogate",
    split=GRADIENT_SPLIT,
    with_gradient=("logp",),
    detached=("logp_old", "advantages"),
    anchors={
        # objectives min(1.25, 1.2) = 1.2, min(-0.75, -0.8) = -0.8, min(-1.5, -1.2) = -1.5
        "example": (1.1 / 3, "the notebook's worked example: −(1.2 − 0.8 − 1.5) / 3"),
        # min(1.25, 1.28) = 1.25, the others unchanged: −(1.25 − 0.8 − 1.5) / 3
        "clip-higher": (0.35, "the notebook's worked example with eps_high = 0.28: 1.05 / 3"),
        # row 1: −min(1·2, 1·2) = −2 over 1 token; row 2: −(min(0.5, 0.8) + min(1.1, 1.1)) = −1.6
        "two-rows-seq-mean": (-1.4, "by hand: (−2 + (−1.6) / 2) / 2"),
        "two-rows-token-mean": (-1.2, "by hand: (−2 − 1.6) / 3"),
        "two-rows-token-sum": (-1.8, "by hand: (−2 − 1.6) / 2"),
        # row 1: −min(1, 1) = −1; row 2: −min(0.5, 0.8) = −0.5 and −min(−1, −1) = +1
        "padding-overflow": (-0.5 / 3, "by hand: (−1 − 0.5 + 1) / 3; the padded token counts 0"),
    },
    cases=(
        Case(
            "example", (_LP, _Z, _A, _M), note="the worked example, symmetric bounds 0.2: 1.1 / 3"
        ),
        Case(
            "clip-higher",
            (_LP, _Z, _A, _M),
            {"eps_high": 0.28},
            note="the worked example with clip-higher (0.2, 0.28): 0.35",
        ),
        Case(
            "two-rows-seq-mean",
            (_LP2, _Z2, _A2, _M2),
            {"mode": "seq-mean-token-mean"},
            note="two rows, one padded token with a large ratio; GRPO's seq-mean-token-mean",
        ),
        Case(
            "two-rows-token-mean",
            (_LP2, _Z2, _A2, _M2),
            note="the same two rows, token-mean",
        ),
        Case(
            "two-rows-token-sum",
            (_LP2, _Z2, _A2, _M2),
            {"mode": "seq-mean-token-sum"},
            note="the same two rows, seq-mean-token-sum",
        ),
        Case(
            "long-responses",
            (_LPL, _OLDL, _AL, torch.ones(2, 2, dtype=torch.bool), 0.2, 0.28),
            note="log probabilities near −110: a ratio of probabilities is 0 / 0 in float32",
        ),
        *[
            Case(
                f"random-{mode}",
                make=_cs_case(6, 9, 0.4, 0.2, high, mode),
                note=f"random batch, {mode}, eps_high {high}",
            )
            for mode, high in (
                ("token-mean", 0.28),
                ("seq-mean-token-mean", None),
                ("seq-mean-token-sum", 0.3),
            )
        ],
        Case(
            "random-wide",
            make=_cs_case(4, 12, 1.0, 0.1, 0.5, "token-mean", dual=True),
            note="ratios far from 1, bounds 0.1 and 0.5; a negative-advantage token above ratio 3",
        ),
        Case(
            "eps-low-zero",
            make=_cs_case(5, 6, 0.5, 0.0, 0.28, "token-mean"),
            kind="edge",
            note="eps_low = 0: no clipping below 1",
            rule="eps_low = 0 is allowed",
        ),
        Case(
            "eps-high-zero",
            make=_cs_case(5, 6, 0.5, 0.2, 0.0, "seq-mean-token-mean"),
            kind="edge",
            note="eps_high = 0: no growth above ratio 1",
            rule="eps_high = 0 is allowed too",
        ),
        Case(
            "padding-overflow",
            (_LPO, _OLDO, _AO, _MO),
            kind="edge",
            note="a padded token with logp − logp_old = 200 (exp overflows float32) and A = −1: "
            "it counts 0, whatever it holds",
            rule="whatever a padded position holds",
        ),
        Case(
            "grad-padding-overflow",
            (_LPO, _OLDO, _AO, _MO),
            kind="gradient",
            note="the gradient there: finite, and 0 at the padded token (exp(200) must not "
            "reach it: 0 · inf is NaN)",
            rule="whatever a padded position holds",
        ),
        Case(
            "grad-example",
            (_LP, _Z, _A, _M),
            kind="gradient",
            note="the worked example's gradient: the first token is clipped (no gradient), "
            "the others are not; none into logp_old or advantages",
            rule="with gradient",
        ),
        Case(
            "grad-clip-higher",
            (_LP, _Z, _A, _M),
            {"eps_high": 0.28},
            kind="gradient",
            note="the same with clip-higher (0.2, 0.28): the first token's gradient comes back",
            rule="with gradient",
        ),
        Case(
            "grad-two-rows",
            (_LP2, _Z2, _A2, _M2),
            {"mode": "seq-mean-token-mean"},
            kind="gradient",
            note="the two rows' gradient: none into the padded token",
            rule="with gradient",
        ),
        *[
            Case(
                f"grad-random-{mode}",
                make=_cs_case(6, 9, spread, 0.2, high, mode, planted=True),
                kind="gradient",
                note=f"the gradient on a random batch, {mode}, eps_high {high}",
                rule="with gradient",
            )
            for mode, high, spread in (
                ("token-mean", 0.28, 0.3),
                ("seq-mean-token-mean", None, 0.2),
                ("seq-mean-token-sum", 0.3, 0.4),
            )
        ],
        Case(
            "list-logp",
            (
                [[0.0, 0.0]],
                torch.zeros(1, 2),
                torch.zeros(1, 2),
                torch.ones(1, 2, dtype=torch.bool),
            ),
            raises=ValueError,
            note="a nested list instead of a tensor raises ValueError",
            rule="an argument that is not a torch tensor",
        ),
        Case(
            "one-dim",
            (torch.zeros(3), torch.zeros(3), torch.zeros(3), torch.ones(3, dtype=torch.bool)),
            raises=ValueError,
            note="1-D tensors raise ValueError",
            rule="tensors that are not 2-D",
        ),
        Case(
            "shape-mismatch",
            (
                torch.zeros(2, 3),
                torch.zeros(2, 3),
                torch.zeros(2, 2),
                torch.ones(2, 3, dtype=torch.bool),
            ),
            raises=ValueError,
            note="advantages of another shape raise ValueError",
            rule="whose shapes differ",
        ),
        Case(
            "mask-shape",
            (
                torch.zeros(2, 3),
                torch.zeros(2, 3),
                torch.zeros(2, 3),
                torch.ones(2, 2, dtype=torch.bool),
            ),
            raises=ValueError,
            note="a mask of another shape raises ValueError",
            rule="whose shapes differ",
        ),
        Case(
            "int-logp-old",
            (
                torch.zeros(1, 2),
                torch.zeros(1, 2, dtype=torch.int64),
                torch.zeros(1, 2),
                torch.ones(1, 2, dtype=torch.bool),
            ),
            raises=ValueError,
            note="integer logp_old raises ValueError",
            rule="non-floating or non-finite logp, logp_old or advantages",
        ),
        Case(
            "nan-advantage",
            (
                torch.zeros(1, 2),
                torch.zeros(1, 2),
                _t([[float("nan"), 1.0]]),
                torch.ones(1, 2, dtype=torch.bool),
            ),
            raises=ValueError,
            note="a NaN advantage raises ValueError",
            rule="non-floating or non-finite logp, logp_old or advantages",
        ),
        Case(
            "float-mask",
            (torch.zeros(1, 2), torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2)),
            raises=ValueError,
            note="a float mask raises ValueError",
            rule="a mask that is not bool",
        ),
        Case(
            "empty-row",
            (
                torch.zeros(2, 2),
                torch.zeros(2, 2),
                torch.zeros(2, 2),
                _b([[True, True], [False, False]]),
            ),
            raises=ValueError,
            note="a row without a valid token raises ValueError",
            rule="a row of mask without a valid token",
        ),
        Case(
            "eps-low-one",
            (_LP, _Z, _A, _M, 1.0),
            raises=ValueError,
            note="eps_low = 1 raises ValueError",
            rule="eps_low that is not a number in [0, 1)",
        ),
        Case(
            "eps-low-negative",
            (_LP, _Z, _A, _M, -0.1, 0.28),
            raises=ValueError,
            note="a negative eps_low raises ValueError (eps_high given)",
            rule="eps_low that is not a number in [0, 1)",
        ),
        Case(
            "eps-low-string",
            (_LP, _Z, _A, _M, "0.2"),
            raises=ValueError,
            note="eps_low given as a string raises ValueError",
            rule="eps_low that is not a number in [0, 1)",
        ),
        Case(
            "eps-high-negative",
            (_LP, _Z, _A, _M, 0.2, -0.1),
            raises=ValueError,
            note="a negative eps_high raises ValueError",
            rule="an eps_high that is negative or NaN",
        ),
        Case(
            "eps-high-nan",
            (_LP, _Z, _A, _M, 0.2, float("nan")),
            raises=ValueError,
            note="eps_high = NaN raises ValueError",
            rule="an eps_high that is negative or NaN",
        ),
        Case(
            "unknown-mode",
            (_LP, _Z, _A, _M, 0.2, None, "seq-mean"),
            raises=ValueError,
            note="an unknown mode raises ValueError",
            rule="an unknown mode",
        ),
    ),
    mistakes=(
        Mistake(
            "max-not-min",
            "you took the maximum of the clipped and unclipped objectives; PPO takes the minimum, the pessimistic bound (a negative-advantage token at ratio 1.5 is penalised in full)",
            formula=_cs(
                objective=lambda r, a, lo, hi: torch.maximum(
                    r * a, torch.clamp(r, 1 - lo, 1 + hi) * a
                )
            ),
            source=f"{DAPO_PAGE}: J = E[min(r·Â, clip(r, 1 − ε_low, 1 + ε_high)·Â)]",
        ),
        Mistake(
            "nan-poisoning",
            "you masked the padding by multiplying by the mask: a padded token whose ratio overflows (exp(200) is inf in float32) gives inf · 0 = NaN; select the valid tokens with torch.where (and set the padded log probabilities to 0 before the exponential)",
            formula=_cs(aggregate=_multiplied, mask_first=False),
            source=NO_SOURCE,
        ),
        Mistake(
            "masked-after-exp",
            "you computed the ratio on the padded tokens too and dropped them only afterwards: the loss is right, but its gradient there is 0 · exp(200) = NaN, which reaches the model; set the padded log probabilities to 0 (torch.where) before the exponential",
            formula=_cs(mask_first=False),
            source=NO_SOURCE,
        ),
        Mistake(
            "clip-advantage",
            "you clipped the advantage; clip the ratio r to [1 − eps_low, 1 + eps_high] and multiply by the advantage",
            formula=_cs(
                objective=lambda r, a, lo, hi: torch.minimum(
                    r * a, r * torch.clamp(a, 1 - lo, 1 + hi)
                )
            ),
            source=f"{DAPO_PAGE}: the objective clips r, the token probability ratio",
        ),
        Mistake(
            "ratio-no-exp",
            "you used logp − logp_old as the ratio; the ratio is exp(logp − logp_old)",
            formula=_cs(ratio=lambda lp, old: lp - old),
            source=f"{DAPO_PAGE}: r is the probability ratio π_θ / π_old; arXiv 2505.18830 §2.1",
        ),
        Mistake(
            "ratio-of-probabilities",
            "you divided exp(logp) by exp(logp_old): both underflow to 0 for long responses (0 / 0); take exp(logp − logp_old)",
            formula=_cs(ratio=lambda lp, old: torch.exp(lp) / torch.exp(old)),
            source=NO_SOURCE,
        ),
        Mistake(
            "loss-sign",
            "you returned the objective; the loss to minimise is its negative",
            formula=_cs(sign=1.0),
            source=NO_SOURCE,
        ),
        Mistake(
            "no-clip",
            "you did not clip: min(r·A, clip(r, 1 − eps_low, 1 + eps_high)·A) bounds how far one update moves a token",
            formula=_cs(objective=lambda r, a, lo, hi: r * a),
            source=f"{DAPO_PAGE}: J = E[min(r·Â, clip(r, 1 − ε_low, 1 + ε_high)·Â)]",
        ),
        Mistake(
            "clipped-only",
            "you kept only the clipped term; take the minimum of r·A and clip(r)·A",
            formula=_cs(objective=lambda r, a, lo, hi: torch.clamp(r, 1 - lo, 1 + hi) * a),
            source=f"{DAPO_PAGE}: J = E[min(r·Â, clip(r, 1 − ε_low, 1 + ε_high)·Â)]",
        ),
        Mistake(
            "symmetric-bounds",
            "you ignored eps_high (symmetric bounds 1 ± eps_low); clip-higher clips to [1 − eps_low, 1 + eps_high]",
            formula=_cs(
                objective=lambda r, a, lo, hi: torch.minimum(
                    r * a, torch.clamp(r, 1 - lo, 1 + lo) * a
                )
            ),
            source=f"{DAPO_PAGE}: asymmetric clipping through decoupled lower and upper bounds",
        ),
        Mistake(
            "log-ratio-clipped",
            "you clipped the log ratio to [−eps_low, eps_high] before the exponential: the "
            "ratio's bounds are then exp(−eps_low) and exp(eps_high), not 1 − eps_low and 1 + "
            "eps_high; clip r itself",
            formula=_cs(
                objective=lambda r, a, lo, hi: torch.minimum(
                    r * a, torch.exp(torch.clamp(torch.log(r), -lo, hi)) * a
                )
            ),
            source=NO_SOURCE,
        ),
        Mistake(
            "bounds-swapped",
            "you swapped the bounds, clip(r, 1 − eps_high, 1 + eps_low); the lower bound is 1 − eps_low, the upper 1 + eps_high",
            formula=_cs(
                objective=lambda r, a, lo, hi: torch.minimum(
                    r * a, torch.clamp(r, 1 - hi, 1 + lo) * a
                )
            ),
            source=f"{DAPO_PAGE}: clip(r, 1 − ε_low, 1 + ε_high)",
        ),
        Mistake(
            "mask-ignored",
            "you aggregated over padded positions too; only the tokens where mask is True count",
            formula=_cs(aggregate=lambda o, mask, mode: _aggregate(o, torch.ones_like(mask), mode)),
            source="notebook 03: padded positions never count in any of the aggregations",
        ),
        Mistake(
            "mode-ignored",
            "you always used seq-mean-token-mean; aggregate with the mode asked (token-mean by default)",
            formula=_cs(aggregate=lambda o, mask, mode: _aggregate(o, mask, "seq-mean-token-mean")),
            source=f"notebook 03; {DAPO_PAGE}: DAPO's token-mean, 1 / Σ|oᵢ|",
        ),
        Mistake(
            "logp-detached",
            "no gradient reaches logp: you detached the new log probabilities (or rebuilt the loss from their numbers); the value is right but the loss trains nothing. Keep logp attached: only logp_old and the advantages are detached",
            formula=_cs(detach=("new", "old", "adv")),
            source=NO_SOURCE,
        ),
        Mistake(
            "logp-old-not-detached",
            "gradient flows into logp_old: detach it (logp_old.detach()); the old policy is the fixed point the ratio is measured from, not something this loss trains",
            formula=_cs(detach=("adv",)),
            source=NO_SOURCE,
        ),
        Mistake(
            "advantages-not-detached",
            "gradient flows into the advantages: detach them (advantages.detach()); a loss that trains its own advantages (or the critic that made them) through the policy loss is not PPO",
            formula=_cs(detach=("old",)),
            source=NO_SOURCE,
        ),
        Mistake(
            "clip-passes-gradient",
            "the gradient flows where the surrogate is clipped: you clipped with a straight-through trick (r + (clip(r) − r).detach()) or an equivalent, so the value is right but a clipped token still moves; the clip must stop the gradient there (clip the ratio itself, torch.clamp)",
            formula=_cs(
                objective=lambda r, a, lo, hi: torch.minimum(
                    r * a, (r + (torch.clamp(r, 1 - lo, 1 + hi) - r).detach()) * a
                )
            ),
            source=NO_SOURCE,
        ),
        Mistake(
            "clipped-term-detached",
            "the gradient is halved where the ratio is not clipped: you detached the clipped term, and where the two terms are equal torch.minimum splits the gradient between them; keep the clipped term attached (torch.clamp already stops the gradient outside the bounds)",
            formula=_cs(
                objective=lambda r, a, lo, hi: torch.minimum(
                    r * a, torch.clamp(r, 1 - lo, 1 + hi).detach() * a
                )
            ),
            source=NO_SOURCE,
        ),
        Mistake(
            "padding-counted",
            "you divided the token-mean sum by every position, padding included (mask.numel()); token-mean divides by the number of valid tokens, mask.sum()",
            formula=_cs(
                aggregate=lambda o, mask, mode: (
                    torch.where(mask, o, torch.zeros_like(o)).sum() / mask.numel()
                    if mode == "token-mean"
                    else _aggregate(o, mask, mode)
                )
            ),
            source="notebook 03: padded positions never count in any of the aggregations",
        ),
        Mistake(
            "advantage-negated",
            "you negated the advantages, min(r·(−A), clip(r)·(−A)): a token with a positive advantage must have its ratio pushed up, so keep A as given (the loss is −min(r·A, clip(r)·A))",
            formula=_cs(
                objective=lambda r, a, lo, hi: torch.minimum(
                    r * -a, torch.clamp(r, 1 - lo, 1 + hi) * -a
                )
            ),
            source=NO_SOURCE,
        ),
        Mistake(
            "dual-clip",
            "you added a dual clip, capping the loss of a negative-advantage token at −3·A: the surrogate here is the plain −min(r·A, clip(r, 1 − eps_low, 1 + eps_high)·A), with no third bound",
            formula=_cs(
                objective=lambda r, a, lo, hi: torch.where(
                    a < 0,
                    torch.maximum(
                        torch.minimum(r * a, torch.clamp(r, 1 - lo, 1 + hi) * a), 3.0 * a
                    ),
                    torch.minimum(r * a, torch.clamp(r, 1 - lo, 1 + hi) * a),
                )
            ),
            source=NO_SOURCE,
        ),
        Mistake(
            "no-validation",
            "invalid inputs (non-tensors, shapes, dtypes, NaN, a row without a valid token, bounds out of range, an unknown mode) must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
    ),
)


# -- thr_token_scores ------------------------------------------------------------------------


def _errors(rng, n: int, v: int) -> torch.Tensor:
    """Realistic prediction errors: one-hot(sampled token) − softmax(random logits)."""
    logits = 1.5 * rng.standard_normal((n, v))
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    tokens = np.array([rng.choice(v, p=row) for row in p])
    return _t(np.eye(v)[tokens] - p)


def _thr_case(t: int, d: int, v: int, zero_adv: bool = False):
    """A random group with two or more correct tokens (so a mean over them differs from the
    sum on every draw) and at least one incorrect token."""

    def make(rng):
        correct = rng.random(t) < 0.5
        correct[0], correct[-1] = True, False  # both kinds present
        adv = np.where(correct, rng.uniform(0.2, 2.0, t), -rng.uniform(0.2, 2.0, t))
        if zero_adv:
            adv[:] = 0.0
        return _t(rng.standard_normal((t, d))), _errors(rng, t, v), _t(adv), _b(correct)

    return until(make, lambda h, err, adv, correct: int(correct.sum()) >= 2)


def _thr(formula):
    """A formula of (α = err @ err.T, ⟨h, h⟩ = h @ h.T, both (T, T), advantages, correct)."""
    return lambda h, err, token_adv, correct: formula(err @ err.T, h @ h.T, token_adv, correct)


_TH = _t([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
_TE = _t([[0.5, -0.5]] * 3)
_TA = _t([1.0, 1.0, -1.0])
_TC = _b([True, True, False])
_TH2 = _t([[2.0, 0.0], [1.0, 1.0]])
_TE2 = _t([[0.6, -0.6], [-0.2, 0.2]])

THR_TOKEN_SCORES_SPEC = FunctionSpec(
    "thr_token_scores",
    anchors={
        # every α is 0.5; ⟨h, h⟩ against the correct tokens: (1, 0), (0, 1), (1, 1)
        "example": ([0.5, 0.5, -1.0], "the notebook's worked example: ±0.5·Σ⟨h, h⟩"),
        # α = 0.72 and −0.24 against the correct token, ⟨h, h⟩ = 4 and 2: 0.5·2.88, −2·(−0.48)
        "incorrect-helps": ([1.44, 0.96], "by hand: 0.5·0.72·4 and −2·(−0.24)·2"),
    },
    rtol=1e-4,  # sums of T x Nc float32 products: summation order matters
    atol=1e-4,
    cases=(
        Case("example", (_TH, _TE, _TA, _TC), note="the worked example: [0.5, 0.5, -1.0]"),
        Case(
            "incorrect-helps",
            (_TH2, _TE2, _t([0.5, -2.0]), _b([True, False])),
            note="an incorrect token whose push down raises the correct one: THR > 0",
        ),
        *[
            Case(
                f"random-{t}",
                make=_thr_case(t, d, v),
                note=f"random group, {t} tokens, D = {d}, V = {v}",
            )
            for t, d, v in ((6, 4, 5), (12, 8, 6), (30, 16, 10))
        ],
        Case(
            "zero-advantages",
            make=_thr_case(8, 4, 5, zero_adv=True),
            kind="edge",
            note="every advantage 0: THR 0",
            rule="a token whose advantage is 0 has THR 0",
        ),
        Case(
            "list-h",
            ([[1.0, 0.0]], _t([[0.5, -0.5]]), _t([1.0]), _b([True])),
            raises=ValueError,
            note="a nested list instead of a tensor raises ValueError",
            rule="an argument that is not a torch tensor",
        ),
        Case(
            "one-dim-err",
            (_TH, _t([0.5, -0.5, 0.5]), _TA, _TC),
            raises=ValueError,
            note="1-D err raises ValueError",
            rule="h or err not 2-D",
        ),
        Case(
            "two-dim-adv",
            (_TH, _TE, _TA[:, None], _TC),
            raises=ValueError,
            note="token_adv of shape (T, 1) raises ValueError",
            rule="token_adv or correct not 1-D",
        ),
        Case(
            "err-length",
            (_TH, _TE[:2], _TA, _TC),
            raises=ValueError,
            note="err with T − 1 rows raises ValueError",
            rule="lengths that differ from T",
        ),
        Case(
            "adv-length",
            (_TH, _TE, _TA[:2], _TC),
            raises=ValueError,
            note="token_adv of length T − 1 raises ValueError",
            rule="lengths that differ from T",
        ),
        Case(
            "correct-length",
            (_TH, _TE, _TA, _TC[:2]),
            raises=ValueError,
            note="correct of length T − 1 raises ValueError",
            rule="lengths that differ from T",
        ),
        Case(
            "int-h",
            (_TH.long(), _TE, _TA, _TC),
            raises=ValueError,
            note="integer h raises ValueError",
            rule="h, err or token_adv not floating or not finite",
        ),
        Case(
            "nan-adv",
            (_TH, _TE, _t([1.0, float("nan"), -1.0]), _TC),
            raises=ValueError,
            note="a NaN advantage raises ValueError",
            rule="h, err or token_adv not floating or not finite",
        ),
        Case(
            "float-correct",
            (_TH, _TE, _TA, _t([1.0, 1.0, 0.0])),
            raises=ValueError,
            note="a float correct raises ValueError",
            rule="correct not bool",
        ),
        Case(
            "no-correct",
            (_TH, _TE, _TA, _b([False, False, False])),
            raises=ValueError,
            note="no correct token raises ValueError",
            rule="no correct token (THR is undefined)",
        ),
    ),
    mistakes=(
        Mistake(
            "no-advantage",
            "you returned the score without the advantage; THR is the advantage times the score (the sign of the token's update)",
            formula=_thr(lambda al, hh, a, c: (al * hh)[:, c].sum(dim=1)),
            source="arXiv 2505.18830 (Deng et al.) §2.2 and Corollary 4.5: a token's effect on the correct responses scales with its advantage",
        ),
        Mistake(
            "against-all-tokens",
            "you scored against every token; THR is the influence on the correct responses: sum over the correct tokens only",
            formula=_thr(lambda al, hh, a, c: a * (al * hh).sum(dim=1)),
            source="arXiv 2510.03669 (THR), abstract: a token's influence on the likelihood of correct responses",
        ),
        Mistake(
            "against-incorrect",
            "you scored against the incorrect tokens; sum over the correct tokens (correct[u] True)",
            formula=_thr(lambda al, hh, a, c: a * (al * hh)[:, ~c].sum(dim=1)),
            source="arXiv 2510.03669 (THR), abstract: a token's influence on the likelihood of correct responses",
        ),
        Mistake(
            "own-dropped",
            "you left each token's own term out; a correct token is scored against every correct token, its own included",
            formula=_thr(
                lambda al, hh, a, c: a * ((al * hh) * (1 - torch.eye(len(a))))[:, c].sum(dim=1)
            ),
            source="notebook 06: the course's anchor scores include the token's own response",
        ),
        Mistake(
            "hidden-only",
            "you dropped the prediction errors; the score multiplies ⟨err_t, err_u⟩ and ⟨h_t, h_u⟩",
            formula=_thr(lambda al, hh, a, c: a * hh[:, c].sum(dim=1)),
            source="arXiv 2505.18830 (Deng et al.) Corollary 4.5: prediction-error similarity times hidden-state similarity",
        ),
        Mistake(
            "errors-only",
            "you dropped the hidden-state similarity; the score multiplies ⟨err_t, err_u⟩ and ⟨h_t, h_u⟩",
            formula=_thr(lambda al, hh, a, c: a * al[:, c].sum(dim=1)),
            source="arXiv 2505.18830 (Deng et al.) Corollary 4.5: prediction-error similarity times hidden-state similarity",
        ),
        Mistake(
            "mean-not-sum",
            "you averaged over the correct tokens; THR sums them (the scale matters against the threshold τ)",
            formula=_thr(lambda al, hh, a, c: a * (al * hh)[:, c].mean(dim=1)),
            source=NO_SOURCE,
        ),
        Mistake(
            "no-validation",
            "invalid inputs (non-tensors, dimensions, lengths, dtypes, NaN, no correct token) must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
    ),
)


# -- thr_weights -----------------------------------------------------------------------------


def _tw_case(t: int, p: float, zeros: bool = False):
    """Random THR and dominance, redrawn until some dominant token has THR > 0, some THR < 0
    (and, with ``zeros``, some THR = 0), and some token with THR ≠ 0 is not dominant: every
    draw holds a token amplified, one damped, one left alone."""

    def make(rng):
        thr = rng.standard_normal(t)
        if zeros:
            thr[rng.random(t) < 0.3] = 0.0
        dominant = rng.random(t) < 0.6
        return _t(thr), _b(dominant), p

    def each_kind(thr, dominant, p) -> bool:
        kinds = [thr > 0, thr < 0] + ([thr == 0] if zeros else [])
        return all(bool((dominant & k).any()) for k in kinds) and bool(
            (~dominant & (thr != 0)).any()
        )

    return until(make, each_kind)


def _tw(formula):
    """A formula of (thr, dominant, p) on valid inputs."""
    return lambda thr, dominant, p: formula(thr, dominant, p)


_WT = _t([2.0, -0.5, 0.0, 3.0])
_WD = _b([True, True, True, False])

THR_WEIGHTS_SPEC = FunctionSpec(
    "thr_weights",
    anchors={
        # 1 + 0.5·(+1), 1 + 0.5·(−1), 1 + 0.5·0, not dominant
        "exploit": ([1.5, 0.5, 1.0, 1.0], "the notebook's worked example, p = 0.5"),
        "explore": ([0.5, 1.5, 1.0, 1.0], "the notebook's worked example, p = −0.5"),
        # p = 1: 1 + 1 = 2 on the positive dominant token, 1 − 1 = 0 on the negative one
        "p-one": ([2.0, 0.0, 1.0, 1.0], "by hand: 1 ± 1"),
    },
    cases=(
        Case("exploit", (_WT, _WD, 0.5), note="the worked example, exploitation p = 0.5"),
        Case("explore", (_WT, _WD, -0.5), note="the worked example, exploration p = −0.5"),
        *[
            Case(f"random-{t}-{p}", make=_tw_case(t, p), note=f"random THR, {t} tokens, p = {p}")
            for t, p in ((10, 0.5), (10, -0.5), (25, 0.3), (25, -0.8))
        ],
        Case(
            "p-one",
            (_WT, _WD, 1.0),
            kind="edge",
            note="p = 1: weight 0 on the negative-THR token",
            rule="p = ±1 is allowed",
        ),
        Case(
            "p-int-one",
            (_WT, _WD, 1),
            kind="edge",
            note="p = 1 as a Python int (the text: a Python int or float)",
            rule="p = ±1 is allowed",
        ),
        Case(
            "p-minus-one",
            make=_tw_case(12, -1.0),
            kind="edge",
            note="p = −1",
            rule="p = ±1 is allowed",
        ),
        Case(
            "zero-thr",
            make=_tw_case(12, 0.7, zeros=True),
            kind="edge",
            note="some THR exactly 0",
            rule="a token with THR = 0 keeps weight 1",
        ),
        Case(
            "p-zero",
            make=_tw_case(12, 0.0),
            kind="edge",
            note="p = 0: weight 1 everywhere",
            rule="p = 0 gives weight 1 everywhere",
        ),
        Case(
            "list-thr",
            ([2.0, -0.5], _b([True, True]), 0.5),
            raises=ValueError,
            note="a list instead of a tensor raises ValueError",
            rule="thr or dominant that are not 1-D torch tensors",
        ),
        Case(
            "two-dim-thr",
            (_WT[None, :], _WD, 0.5),
            raises=ValueError,
            note="thr of shape (1, T) raises ValueError",
            rule="thr or dominant that are not 1-D torch tensors",
        ),
        Case(
            "two-dim-dominant",
            (_WT, _WD[:, None], 0.5),
            raises=ValueError,
            note="dominant of shape (T, 1) raises ValueError",
            rule="thr or dominant that are not 1-D torch tensors",
        ),
        Case(
            "length-mismatch",
            (_WT, _WD[:3], 0.5),
            raises=ValueError,
            note="dominant shorter than thr raises ValueError",
            rule="of different lengths",
        ),
        Case(
            "int-thr",
            (_WT.long(), _WD, 0.5),
            raises=ValueError,
            note="integer thr raises ValueError",
            rule="thr not floating or not finite",
        ),
        Case(
            "inf-thr",
            (_t([1.0, float("inf"), 0.0, 1.0]), _WD, 0.5),
            raises=ValueError,
            note="an infinite THR raises ValueError",
            rule="thr not floating or not finite",
        ),
        Case(
            "float-dominant",
            (_WT, _t([1.0, 1.0, 1.0, 0.0]), 0.5),
            raises=ValueError,
            note="a float dominant raises ValueError",
            rule="dominant not bool",
        ),
        Case(
            "p-above-one",
            (_WT, _WD, 1.5),
            raises=ValueError,
            note="p = 1.5 raises ValueError",
            rule="a p that is not a number in [−1, 1]",
        ),
        Case(
            "p-below-minus-one",
            (_WT, _WD, -1.5),
            raises=ValueError,
            note="p = −1.5 raises ValueError",
            rule="a p that is not a number in [−1, 1]",
        ),
        Case(
            "p-nan",
            (_WT, _WD, float("nan")),
            raises=ValueError,
            note="p = NaN raises ValueError",
            rule="a p that is not a number in [−1, 1]",
        ),
        Case(
            "p-bool",
            (_WT, _WD, True),
            raises=ValueError,
            note="p = True raises ValueError",
            rule="a p that is not a number in [−1, 1]",
        ),
        Case(
            "p-tensor",
            (_WT, _WD, torch.tensor(0.5)),
            raises=ValueError,
            note="p as a tensor raises ValueError",
            rule="a p that is not a number in [−1, 1]",
        ),
    ),
    mistakes=(
        Mistake(
            "p-sign-swapped",
            "you used 1 − p·sign(THR); exploitation (p > 0) amplifies the tokens with positive THR: 1 + p·sign(THR)",
            formula=_tw(
                lambda thr, d, p: torch.where(d, 1.0 - p * torch.sign(thr), torch.ones_like(thr))
            ),
            source="arXiv 2510.03669 (THR), abstract: amplifying tokens with positive THR and weakening negative ones improves greedy accuracy",
        ),
        Mistake(
            "dominance-ignored",
            "you reweighted every token; only the dominant tokens get 1 + p·sign(THR), the others keep 1",
            formula=_tw(lambda thr, d, p: 1.0 + p * torch.sign(thr)),
            source="OpenReview reviews of arXiv 2510.03669: the method reweights the dominant (high-influence) tokens",
        ),
        Mistake(
            "dominance-inverted",
            "you reweighted the tokens that are not dominant; reweight where dominant is True",
            formula=_tw(
                lambda thr, d, p: torch.where(~d, 1.0 + p * torch.sign(thr), torch.ones_like(thr))
            ),
            source="OpenReview reviews of arXiv 2510.03669: the method reweights the dominant (high-influence) tokens",
        ),
        Mistake(
            "magnitude",
            "you used 1 + p·THR; the weight uses the sign of THR only, so it stays in [1 − |p|, 1 + |p|]",
            formula=_tw(lambda thr, d, p: torch.where(d, 1.0 + p * thr, torch.ones_like(thr))),
            source=NO_SOURCE,
        ),
        Mistake(
            "no-amplification",
            "you only weakened the tokens against the direction (as NTHR does); 1 + p·sign(THR) also amplifies the others",
            formula=_tw(
                lambda thr, d, p: torch.where(
                    d & (p * torch.sign(thr) < 0), 1.0 + p * torch.sign(thr), torch.ones_like(thr)
                )
            ),
            source="arXiv 2510.03669 (THR), abstract: not only downweighting selected negative gradients but amplifying positive ones",
        ),
        Mistake(
            "zero-as-positive",
            "you treated THR = 0 as positive (1 + p where THR ≥ 0): sign(0) = 0, so a dominant token with THR = 0 keeps weight 1",
            formula=_tw(
                lambda thr, d, p: torch.where(
                    d,
                    torch.where(
                        thr >= 0, torch.full_like(thr, 1.0 + p), torch.full_like(thr, 1.0 - p)
                    ),
                    torch.ones_like(thr),
                )
            ),
            source=NO_SOURCE,
        ),
        Mistake(
            "no-validation",
            "invalid inputs (non-tensors, dimensions, lengths, dtypes, NaN/inf, p outside [−1, 1] or not a number) must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
    ),
)


# -- nll_on_correct --------------------------------------------------------------------------


def _nll_case(
    b: int, t: int, none_correct: bool = False, one_token: bool = False, uneven: bool = False
):
    """``uneven``: the first two responses are correct, of lengths t and 1 (so that a mean of
    per-response means differs from the token mean in every draw)."""

    def make(rng):
        logp = -rng.uniform(0.05, 4.0, size=(b, t))
        lengths = rng.integers(1, t + 1, size=b)
        if uneven:
            lengths[0], lengths[1] = t, 1
        mask = np.arange(t)[None, :] < lengths[:, None]
        correct = rng.random(b) < 0.5
        correct[0], correct[-1] = True, False
        if uneven:
            correct[1] = True
        if one_token:  # exactly one valid token among the correct responses
            correct[:] = False
            correct[0] = True
            mask[0] = False
            mask[0, 0] = True
        if none_correct:
            correct[:] = False
        return _t(logp), _b(mask), _b(correct)

    if one_token or none_correct:
        return make

    def lengths_differ(logp, mask, correct) -> bool:
        """Two or more correct responses, of different lengths: one token mean over all their
        tokens differs from the mean of each response's token mean on every draw."""
        return len(set(mask.sum(dim=1)[correct].tolist())) >= 2

    def count_apart(logp, mask, correct) -> bool:
        """The correct responses' valid tokens number neither B (a mean over the rows of the
        batch would then equal the token mean) nor every position of the correct rows (a
        denominator with padding would then be right): both mistakes show on every draw."""
        n = int((mask & correct[:, None]).sum())
        return n != mask.shape[0] and n != int(correct.sum()) * mask.shape[1]

    return until(make, lengths_differ, count_apart)


def _nll(formula):
    """A formula of (logp, mask, correct) on valid inputs."""
    return lambda logp, mask, correct: formula(logp, mask, correct)


def _masked_mean(x, keep):
    return torch.where(keep, x, torch.zeros_like(x)).sum() / keep.sum().clamp(min=1)


_NL = _t([[-1.0, -2.0, -9.0], [-3.0, -9.0, -9.0], [-0.5, -0.5, -0.5]])
_NM = _b([[True, True, False], [True, False, False], [True, True, True]])
_NC = _b([True, True, False])

NLL_ON_CORRECT_SPEC = FunctionSpec(
    "nll_on_correct",
    split=GRADIENT_SPLIT,
    with_gradient=("logp",),
    anchors={
        # valid correct tokens −1, −2, −3: −(−6) / 3
        "example": (2.0, "the notebook's worked example: 6 / 3"),
        # only the third response correct: −(3 · −0.5) / 3
        "third-correct": (0.5, "by hand: 1.5 / 3"),
        "none-correct": (0.0, "the stated rule: 0 when no response is correct"),
    },
    cases=(
        Case("example", (_NL, _NM, _NC), note="the worked example: 2"),
        Case(
            "third-correct",
            (_NL, _NM, _b([False, False, True])),
            note="only the full-length response correct: 0.5",
        ),
        *[
            Case(
                f"random-{b}x{t}",
                make=_nll_case(b, t),
                note=f"random batch, {b} responses of up to {t} tokens",
            )
            for b, t in ((4, 6), (8, 10), (16, 5))
        ],
        Case(
            "random-one-token",
            make=_nll_case(5, 6, one_token=True),
            note="one valid token among the correct responses",
        ),
        Case(
            "none-correct",
            (_NL, _NM, _b([False, False, False])),
            kind="edge",
            note="no correct response: 0",
            rule="When no response is correct, return 0",
        ),
        Case(
            "grad-example",
            (_NL, _NM, _NC),
            kind="gradient",
            note="the worked example's gradient: −1/3 on each valid correct token, 0 elsewhere",
            rule="with gradient",
        ),
        Case(
            "grad-none-correct",
            (_NL, _NM, _b([False, False, False])),
            kind="gradient",
            note="no correct response: a zero gradient (no NaN)",
            rule="with gradient",
        ),
        *[
            Case(
                f"grad-random-{b}x{t}",
                make=_nll_case(b, t, uneven=True),
                kind="gradient",
                note=f"the gradient on a random batch, {b} responses of up to {t} tokens",
                rule="with gradient",
            )
            for b, t in ((4, 6), (16, 5))
        ],
        Case(
            "list-logp",
            ([[-1.0]], _b([[True]]), _b([True])),
            raises=ValueError,
            note="a nested list instead of a tensor raises ValueError",
            rule="an argument that is not a torch tensor",
        ),
        Case(
            "one-dim-logp",
            (_NL[0], _NM[0], _b([True])),
            raises=ValueError,
            note="1-D logp raises ValueError",
            rule="logp or mask not 2-D",
        ),
        Case(
            "mask-shape",
            (_NL, _NM[:, :2], _NC),
            raises=ValueError,
            note="a mask of another shape raises ValueError",
            rule="of different shapes",
        ),
        Case(
            "two-dim-correct",
            (_NL, _NM, _NC[:, None]),
            raises=ValueError,
            note="correct of shape (B, 1) raises ValueError",
            rule="correct not 1-D",
        ),
        Case(
            "correct-length",
            (_NL, _NM, _NC[:2]),
            raises=ValueError,
            note="correct of length B − 1 raises ValueError",
            rule="of a length other than B",
        ),
        Case(
            "int-logp",
            (_NL.long(), _NM, _NC),
            raises=ValueError,
            note="integer logp raises ValueError",
            rule="logp not floating or not finite",
        ),
        Case(
            "inf-logp",
            (_t([[-1.0, float("-inf")]]), _b([[True, False]]), _b([True])),
            raises=ValueError,
            note="a −inf log probability (even in padding) raises ValueError",
            rule="logp not floating or not finite",
        ),
        Case(
            "int-mask",
            (_NL, _NM.long(), _NC),
            raises=ValueError,
            note="an integer mask raises ValueError",
            rule="mask or correct not bool",
        ),
        Case(
            "float-correct",
            (_NL, _NM, _t([1.0, 1.0, 0.0])),
            raises=ValueError,
            note="a float correct raises ValueError",
            rule="mask or correct not bool",
        ),
    ),
    mistakes=(
        Mistake(
            "all-responses",
            "you averaged over every response's tokens; the NLL is on the correct responses only",
            formula=_nll(lambda lp, m, c: -_masked_mean(lp, m)),
            source="VAPO (xavierzhang2002.github.io/agentic-rl-analysis, 1.7-vapo): L_NLL sums over T, the correct samples",
        ),
        Mistake(
            "nll-sign",
            "you returned the mean log likelihood; the NLL is its negative (a loss that, minimised, raises ln π)",
            formula=_nll(lambda lp, m, c: _masked_mean(lp, m & c[:, None])),
            source="VAPO (xavierzhang2002.github.io/agentic-rl-analysis, 1.7-vapo): L_NLL = −1/Σ|oᵢ| · ΣΣ ln π",
        ),
        Mistake(
            "padding-counted",
            "you counted the padded positions of the correct responses; only the tokens where mask is True count",
            formula=_nll(lambda lp, m, c: -_masked_mean(lp, c[:, None].expand_as(m))),
            source="VAPO (xavierzhang2002.github.io/agentic-rl-analysis, 1.7-vapo): the sum runs over t ≤ |oᵢ|",
        ),
        Mistake(
            "seq-mean",
            "you took the mean over correct responses of each one's token mean; VAPO's NLL is one token mean over all their tokens (1 / Σ|oᵢ|)",
            formula=_nll(
                lambda lp, m, c: (
                    -(
                        torch.where(m, lp, torch.zeros_like(lp)).sum(dim=1)
                        / m.sum(dim=1).clamp(min=1)
                    )[c].sum()
                    / c.sum().clamp(min=1)
                )
            ),
            source="VAPO (xavierzhang2002.github.io/agentic-rl-analysis, 1.7-vapo): L_NLL = −1/Σ|oᵢ| · ΣΣ ln π",
        ),
        Mistake(
            "batch-mean",
            "you averaged over the rows of the batch (each row's sum, then the mean over B): the NLL is one token mean, the sum over the correct responses' valid tokens divided by their number",
            formula=_nll(
                lambda lp, m, c: (
                    -torch.where(m & c[:, None], lp, torch.zeros_like(lp)).sum(dim=1).mean()
                )
            ),
            source=NO_SOURCE,
        ),
        Mistake(
            "padding-in-denominator",
            "you divided by every position of the correct rows, padding included: the denominator is the number of their valid tokens, (mask & correct[:, None]).sum()",
            formula=_nll(
                lambda lp, m, c: (
                    -torch.where(m & c[:, None], lp, torch.zeros_like(lp)).sum()
                    / (c.sum() * m.shape[1]).clamp(min=1)
                )
            ),
            source=NO_SOURCE,
        ),
        Mistake(
            "nan-when-none",
            "you divided by the number of correct tokens without guarding 0: no correct response gives 0 / 0; return 0",
            formula=_nll(
                lambda lp, m, c: (
                    -torch.where(m & c[:, None], lp, torch.zeros_like(lp)).sum()
                    / (m & c[:, None]).sum()
                )
            ),
            source=NO_SOURCE,
        ),
        Mistake(
            "no-validation",
            "invalid inputs (non-tensors, dimensions, shapes, lengths, dtypes, NaN/inf) must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
    ),
)


# -- smaug_floor -----------------------------------------------------------------------------


def _sm_case(b: int, none_correct: bool = False, at_ref: bool = False, below: bool = False):
    """``below``: the first response (correct) lies at least 0.5 below the reference and the
    second (correct) 0.5 above, so that every draw has a correct response on which the floor
    acts and one on which it does not (gradient cases)."""

    def make(rng):
        ref = -rng.uniform(1.0, 8.0, size=b)
        seq = ref + rng.standard_normal(b)  # half above the reference, half below
        if below:  # and the second (correct too) at least 0.5 above it
            seq[0] = ref[0] - 0.5 - abs(seq[0] - ref[0])
            seq[1] = ref[1] + 0.5 + abs(seq[1] - ref[1])
        if at_ref:
            seq = ref.copy()
        correct = rng.random(b) < 0.6
        correct[0], correct[-1] = True, False
        if below:
            correct[1] = True
        if none_correct:
            correct[:] = False
        return _t(seq), _t(ref), _b(correct)

    if none_correct or at_ref:
        return make

    def both_sides(seq, ref, correct) -> bool:
        """Two or more correct responses, one 0.1 or more above the reference and one 0.1 or
        more below: the hinge and the mean over the correct responses show on every draw."""
        gap = (seq - ref)[correct]
        return len(gap) >= 2 and bool((gap >= 0.1).any()) and bool((gap <= -0.1).any())

    return until(make, both_sides)


def _sm(formula, detach_ref: bool = True):
    """A formula of (seq_logp, ref_seq_logp, correct) on valid inputs, ref_seq_logp detached
    (as the reference detaches it) unless ``detach_ref`` is False."""
    return lambda seq_logp, ref_seq_logp, correct: formula(
        seq_logp, ref_seq_logp.detach() if detach_ref else ref_seq_logp, correct
    )


def _mean_over(x, keep):
    return torch.where(keep, x, torch.zeros_like(x)).sum() / keep.sum().clamp(min=1)


_SS = _t([-3.0, -1.5, -5.0, -2.0])
_SR = _t([-2.0, -2.0, -2.0, -2.0])
_SC = _b([True, True, False, True])

SMAUG_FLOOR_SPEC = FunctionSpec(
    "smaug_floor",
    split=GRADIENT_SPLIT,
    with_gradient=("seq_logp",),
    detached=("ref_seq_logp",),
    anchors={
        # gaps max(0, 1), max(0, −0.5), max(0, 0) over the three correct responses
        "example": (1 / 3, "the notebook's worked example: (1 + 0 + 0) / 3"),
        # all four: max(0, 1), 0, max(0, 3), 0
        "all-correct": (1.0, "by hand: (1 + 0 + 3 + 0) / 4"),
        "none-correct": (0.0, "the stated rule: 0 when no response is correct"),
        "one-correct": (3.0, "by hand: max(0, −2 − (−5)) / 1"),
    },
    cases=(
        Case("example", (_SS, _SR, _SC), note="the worked example: 1 / 3"),
        Case("all-correct", (_SS, _SR, _b([True] * 4)), note="every response correct: 1"),
        Case(
            "one-correct",
            (_SS, _SR, _b([False, False, True, False])),
            note="one correct response, 3 nats below the reference: 3",
        ),
        *[
            Case(f"random-{b}", make=_sm_case(b), note=f"random batch of {b} responses")
            for b in (6, 16, 40)
        ],
        Case(
            "none-correct",
            (_SS, _SR, _b([False] * 4)),
            kind="edge",
            note="no correct response: 0",
            rule="When no response is correct, return 0",
        ),
        Case(
            "at-reference",
            make=_sm_case(10, at_ref=True),
            kind="edge",
            note="every response at the reference: 0",
            rule="at the reference itself the floor is 0",
        ),
        Case(
            "grad-example",
            (_SS, _SR, _SC),
            kind="gradient",
            note="the worked example's gradient: −1/3 on the response below the reference, 0 on "
            "the one above, 0 on the one exactly at it (the kink), none into ref_seq_logp",
            rule="with gradient",
        ),
        Case(
            "grad-at-reference",
            make=_sm_case(10, at_ref=True),
            kind="gradient",
            note="every response exactly at the reference: no gradient at the kink",
            rule="max(0, x) passes no gradient at x = 0",
        ),
        *[
            Case(
                f"grad-random-{b}",
                make=_sm_case(b, below=True),
                kind="gradient",
                note=f"the gradient on a random batch of {b} responses",
                rule="with gradient",
            )
            for b in (6, 16)
        ],
        Case(
            "list-seq",
            ([-1.0, -2.0], _t([-1.0, -2.0]), _b([True, True])),
            raises=ValueError,
            note="a list instead of a tensor raises ValueError",
            rule="an argument that is not a 1-D torch tensor",
        ),
        Case(
            "two-dim-ref",
            (_SS, _SR[:, None], _SC),
            raises=ValueError,
            note="ref_seq_logp of shape (B, 1) raises ValueError",
            rule="an argument that is not a 1-D torch tensor",
        ),
        Case(
            "two-dim-correct",
            (_SS, _SR, _SC[:, None]),
            raises=ValueError,
            note="correct of shape (B, 1) raises ValueError",
            rule="an argument that is not a 1-D torch tensor",
        ),
        Case(
            "ref-length",
            (_SS, _SR[:3], _SC),
            raises=ValueError,
            note="ref_seq_logp of length B − 1 raises ValueError",
            rule="lengths that differ",
        ),
        Case(
            "correct-length",
            (_SS, _SR, _SC[:3]),
            raises=ValueError,
            note="correct of length B − 1 raises ValueError",
            rule="lengths that differ",
        ),
        Case(
            "int-seq",
            (_SS.long(), _SR, _SC),
            raises=ValueError,
            note="integer seq_logp raises ValueError",
            rule="seq_logp or ref_seq_logp not floating or not finite",
        ),
        Case(
            "nan-ref",
            (_SS, _t([-2.0, float("nan"), -2.0, -2.0]), _SC),
            raises=ValueError,
            note="a NaN reference log likelihood raises ValueError",
            rule="seq_logp or ref_seq_logp not floating or not finite",
        ),
        Case(
            "float-correct",
            (_SS, _SR, _t([1.0, 1.0, 0.0, 1.0])),
            raises=ValueError,
            note="a float correct raises ValueError",
            rule="correct not bool",
        ),
    ),
    mistakes=(
        Mistake(
            "reversed",
            "you used max(0, ln π_θ − ln π_ref): that penalises correct responses that rose above the reference; the floor is max(0, ln π_ref − ln π_θ)",
            formula=_sm(lambda s, r, c: _mean_over(torch.relu(s - r), c)),
            source="DPO-Positive (arXiv 2402.13228, guide.repleteai.com DPOP page): penalise reducing the preferred completion's probability below the reference's",
        ),
        Mistake(
            "no-hinge",
            "you dropped the max(0, ·): the plain difference also pulls on responses already above the reference",
            formula=_sm(lambda s, r, c: _mean_over(r - s, c)),
            source="DPO-Positive (arXiv 2402.13228, guide.repleteai.com DPOP page): a penalty only below the reference's probability",
        ),
        Mistake(
            "min-not-max",
            "you used min(0, ln π_ref − ln π_θ); the floor is max(0, ln π_ref − ln π_θ), never negative",
            formula=_sm(lambda s, r, c: _mean_over(torch.clamp(r - s, max=0.0), c)),
            source=NO_SOURCE,
        ),
        Mistake(
            "incorrect-included",
            "you averaged over every response; the floor is on the correct responses only",
            formula=_sm(lambda s, r, c: torch.relu(r - s).mean()),
            source="arXiv 2402.13228 (DPO-Positive), guide.repleteai.com DPOP page: the term is on the preferred completion only",
        ),
        Mistake(
            "sum-not-mean",
            "you summed over the correct responses; take their mean",
            formula=_sm(
                lambda s, r, c: torch.where(c, torch.relu(r - s), torch.zeros_like(s)).sum()
            ),
            source=NO_SOURCE,
        ),
        Mistake(
            "ref-not-detached",
            "gradient flows into ref_seq_logp: detach it (ref_seq_logp.detach()); the reference model is frozen, and a floor that trains it pulls the reference down to the policy",
            formula=_sm(lambda s, r, c: _mean_over(torch.relu(r - s), c), detach_ref=False),
            source=NO_SOURCE,
        ),
        Mistake(
            "kink-gradient",
            "the gradient at the kink: a correct response exactly at the reference gets a gradient from your floor (torch.clamp(gap, min=0) passes 1 at gap = 0, torch.maximum 0.5); max(0, x) passes no gradient at x = 0, as torch.relu does, so at the reference the floor adds nothing to GRPO",
            formula=_sm(lambda s, r, c: _mean_over(torch.clamp(r - s, min=0.0), c)),
            source=NO_SOURCE,
        ),
        Mistake(
            "incorrect-only",
            "you applied the floor to the incorrect responses; it keeps the correct responses' likelihood from falling below the reference, so average over the correct ones",
            formula=_sm(lambda s, r, c: _mean_over(torch.relu(r - s), ~c)),
            source=NO_SOURCE,
        ),
        Mistake(
            "nan-when-none",
            "you divided by the number of correct responses without guarding 0: no correct response gives 0 / 0; return 0",
            formula=_sm(
                lambda s, r, c: (
                    torch.where(c, torch.relu(r - s), torch.zeros_like(s)).sum() / c.sum()
                )
            ),
            source=NO_SOURCE,
        ),
        Mistake(
            "no-validation",
            "invalid inputs (non-tensors, dimensions, lengths, dtypes, NaN/inf) must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
    ),
)

SPEC = AssignmentSpec(
    "07_beyond_nthr",
    (
        CLIPPED_SURROGATE,
        THR_TOKEN_SCORES_SPEC,
        THR_WEIGHTS_SPEC,
        NLL_ON_CORRECT_SPEC,
        SMAUG_FLOOR_SPEC,
    ),
)
