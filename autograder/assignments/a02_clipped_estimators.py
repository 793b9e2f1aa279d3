"""02_clipped_estimators: cases and known mistakes for the KL estimators k1, k2, k3, clipped_k1
and for clipped_expectation, estimator_moments, monte_carlo_kl.

Each mistake is one entry: its diagnosis and its wrong ``formula``, which runs after
the reference has validated the inputs (see spec.Mistake), so that it differs from
the reference in exactly the way its diagnosis names. Estimators passed as inputs
are ``Fn`` source texts, elementwise on numpy values like the notebook's own.
"""

from __future__ import annotations

import math

import numpy as np

from autograder.assignments import common as src
from autograder.assignments.common import cite, stabiliser_shows, until
from autograder.assignments.common import distribution_edge_cases as _distribution_edges
from autograder.assignments.common import distribution_pair as _pair
from autograder.assignments.common import invalid_distribution_cases as _invalid_distribution_cases
from autograder.assignments.common import random_distribution as _dist
from autograder.cases.spec import NO_SOURCE, AssignmentSpec, Case, Fn, FunctionSpec, Mistake

STORY = ([0.1, 0.9], [0.5, 0.5])  # policy, reference of notebook 01
STORY_LOGPS = (np.log(np.array(STORY[0])), np.log(np.array(STORY[1])))
NAN, INF = float("nan"), float("inf")

K1 = Fn("k1", "lambda logp, ref_logp: logp - ref_logp")
K2 = Fn("k2", "lambda logp, ref_logp: 0.5 * (logp - ref_logp) ** 2")
K3 = Fn("k3", "lambda logp, ref_logp: np.exp(ref_logp - logp) - 1 - (ref_logp - logp)")
CLIPPED = Fn("clipped_k1", "lambda logp, ref_logp: np.maximum(0.0, logp - ref_logp)")
ABS = Fn("abs_k1", "lambda logp, ref_logp: np.abs(logp - ref_logp)")
ESTIMATORS = (K1, K2, K3, CLIPPED)


# -- inputs ------------------------------------------------------------------------------------


def _logps(rng: np.random.Generator, shape) -> np.ndarray:
    """Log probabilities (<= 0) of the given shape; a few exact zeros (probability 1)."""
    a = -rng.exponential(1.5, size=shape)
    if a.size > 3:
        a.flat[rng.integers(a.size)] = 0.0
    return a


def _logp_pair(shape_a, shape_b, close: bool = False):
    """Random (logp, ref_logp); apart from ``close`` ones, redrawn until some ref_logp − logp
    is at least 3 (k3 above 10 there, where a clamp of the value shows), some is at most −1.5
    (both signs, and a log ratio above 1, where a clip of it at 1 shows) and none is beyond ±9.5 (a clamp of the log ratio at ±10 or ±20, as the field
    writes it, shows on the fixed large-gaps case, the same for everyone), so every draw holds
    the same situations."""

    def make(rng):
        a = _logps(rng, shape_a)
        if close:  # the reference near the policy: small log ratios, where k3 needs care
            b = np.minimum(0.0, a + rng.normal(0.0, 0.05, size=shape_b))
        else:
            b = _logps(rng, shape_b)
        return a, b

    if close:
        return make
    return until(make, lambda a, b: 3.0 <= np.max(b - a) <= 9.5 and -9.5 <= np.min(b - a) <= -1.5)


def _moments_make(n: int, estimator: Fn, zeros_p: int = 0):
    def make(rng):
        return (*_pair(n, zeros_p)(rng), estimator)

    return make


def _mc_make(n: int, m: int, estimator: Fn):
    """``m`` samples of a random policy; with two or more, redrawn until the sampled log ratios
    take both signs (at most −0.1 and at least 0.1) and the sampled outcomes' counts are not all
    equal, so averaging the distinct outcomes, or taking the estimator of the mean log
    probabilities, differs from the sample mean on every draw."""

    def make(rng):
        policy, reference = _dist(rng, n), _dist(rng, n)
        samples = rng.choice(n, size=m, p=np.array(policy) / sum(policy))
        return samples.astype(np.int64), policy, reference, estimator

    def mixed(samples, policy, reference, estimator) -> bool:
        r = [math.log(policy[x] / reference[x]) for x in samples]
        counts = np.unique(samples, return_counts=True)[1]
        return min(r) <= -0.1 and max(r) >= 0.1 and len(set(counts.tolist())) > 1

    return make if m < 2 else until(make, mixed)


# -- the per-sample estimators ---------------------------------------------------------------


def _per_sample_cases() -> tuple[Case, ...]:
    return (
        Case(
            "story",
            STORY_LOGPS,
            note="the story's two samples: log(0.1) and log(0.9) against log(0.5)",
        ),
        Case("scalars", (-1.2, -0.3), note="plain floats give a 0-d result"),
        Case(
            "nested-lists",
            ([[-0.5, -1.0], [-2.0, -0.1]], [[-1.0, -1.0], [-0.5, -3.0]]),
            note="nested lists are converted by numpy",
        ),
        Case(
            "equal",
            (np.array([-0.7, -2.5, -0.01]), np.array([-0.7, -2.5, -0.01])),
            note="equal log probabilities give 0",
            kind="edge",
        ),
        Case(
            "zero-logp",
            (0.0, -2.0),
            note="log probability 0 (probability 1) is allowed",
            kind="edge",
        ),
        Case(
            "broadcast-row",
            (np.array([[-1.0, -2.0, -0.5], [-0.1, -3.0, -1.5]]), np.array([-0.5, -0.5, -2.0])),
            note="a (2, 3) array broadcasts with a (3,) array",
        ),
        Case(
            "random-vector",
            make=_logp_pair((7,), (7,)),
            note="random log probabilities, shape (7,)",
        ),
        Case(
            "random-matrix",
            make=_logp_pair((3, 5), (3, 5)),
            note="random log probabilities, shape (3, 5)",
        ),
        Case(
            "random-outer",
            make=_logp_pair((4, 1), (1, 6)),
            note="shapes (4, 1) and (1, 6) broadcast to (4, 6)",
        ),
        Case(
            "random-3d",
            make=_logp_pair((2, 3, 4), (4,)),
            note="shapes (2, 3, 4) and (4,) broadcast",
        ),
        Case(
            "random-scalar-vs-array",
            make=_logp_pair((), (5,)),
            note="a scalar against a (5,) array",
        ),
        Case(
            "random-close",
            make=_logp_pair((6, 4), (6, 4), close=True),
            note="reference close to the policy (small log ratios)",
        ),
        Case(
            "large-gaps",
            (
                np.array([-50.0, -0.1, -15.0, -1.0, -25.0]),
                np.array([-1.0, -48.0, -0.5, -13.0, -0.2]),
            ),
            note="log ratios of −49, 47.9, −14.5, 12 and −24.8: valid, and beyond the ±10, ±20 and "
            "±40 clamps that libraries put on them",
        ),
        Case(
            "long-responses",
            (np.array([-800.0, -745.5]), np.array([-801.0, -745.0])),
            note="log probabilities of long responses, hundreds below 0: exp of each "
            "underflows to 0, their difference (−1 and 0.5) does not",
        ),
        Case(
            "ratio-underflows",
            (np.array([0.0, -1.0]), np.array([-800.0, -1.5])),
            note="a reference 800 nats below the policy: the ratio exp(ref_logp − logp) "
            "underflows to 0, but the log ratio itself (−800) is an ordinary number, used as it is",
        ),
        Case(
            "nan-logp",
            (np.array([-1.0, NAN]), np.array([-1.0, -1.0])),
            raises=ValueError,
            note="NaN raises ValueError",
        ),
        Case(
            "inf-ref",
            (np.array([-1.0, -2.0]), np.array([-1.0, -INF])),
            raises=ValueError,
            note="-inf (probability 0) raises ValueError",
        ),
        Case(
            "positive-logp",
            (np.array([0.3, -1.0]), np.array([-1.0, -1.0])),
            raises=ValueError,
            note="a log probability above 0 raises ValueError",
        ),
        Case(
            "positive-ref",
            (-1.0, 0.5),
            raises=ValueError,
            note="a reference log probability above 0 raises ValueError",
        ),
        Case(
            "no-broadcast",
            (np.array([-1.0, -2.0, -3.0]), np.array([-1.0, -2.0])),
            raises=ValueError,
            note="shapes (3,) and (2,) don't broadcast: ValueError",
        ),
    )


def _k3_of(log_r):
    """k3 = r − 1 − log r from log r = ref_logp − logp."""
    return np.exp(log_r) - 1.0 - log_r


def _k3_ratio_exponentiated(lp, lq):
    r = np.exp(lq - lp)  # the probability ratio itself, exponentiated below (rocket-learn#12)
    return np.exp(r) - 1.0 - r


def _arrays(formula):
    """A per-sample formula of float64 arrays, as the reference converts its inputs."""

    def on_arrays(logp, ref_logp):
        lp, lq = np.asarray(logp, dtype=np.float64), np.asarray(ref_logp, dtype=np.float64)
        return np.asarray(formula(lp, lq), dtype=np.float64)

    return on_arrays


NO_VALIDATION = "invalid log probabilities (NaN, ±inf, entries above 0) must raise ValueError"
NO_VALIDATION_SOURCE = cite(src.TRL_6693, src.PYTORCH_RL_4255)
ABS_SOURCE = cite(src.VERL_CORE_ALGOS, src.TRL_1161)
CLAMP_BOUND = 40.0  # the log-ratio clamp asked for in databricks/compose-rl#44

# Only the check of finite entries left out: NaN and ±inf go through (or are zeroed by hand).
NONFINITE_ACCEPTED = Mistake(
    "nonfinite-accepted",
    "you let NaN and ±inf log probabilities through (into the result, or replaced by 0): a log probability is finite, so raise ValueError for them",
    unchecked=("finite",),
    source=cite(src.PYTORCH_RL_4255, src.TRL_6693),
)

K1_SPEC = FunctionSpec(
    "k1",
    anchors={
        "scalars": (-0.9, "by hand: -1.2 - (-0.3)"),
        "nested-lists": ([[0.5, 0.0], [-1.5, 2.9]], "by hand: elementwise differences"),
        "large-gaps": ([-49.0, 47.9, -14.5, 12.0, -24.8], "by hand: the note's log ratios"),
    },
    cases=_per_sample_cases(),
    mistakes=(
        Mistake(
            "clipped-inside",
            "you clipped inside k1 (max(0, logp − ref_logp)): that is clipped_k1, a different estimator with a larger mean; k1 is the plain log ratio and may be negative",
            formula=_arrays(lambda lp, lq: np.maximum(0.0, lp - lq)),
            source=src.ALPACA_FARM_67,
        ),
        Mistake(
            "swapped",
            "you computed ref_logp − logp: the arguments are swapped (k1 = logp − ref_logp)",
            formula=_arrays(lambda lp, lq: lq - lp),
            source=cite(src.ALPACA_FARM_67, src.SCHULMAN_BLOG),
        ),
        Mistake(
            "abs",
            "you took the absolute value |logp − ref_logp| (the 'abs' KL penalty of some libraries): k1 keeps the sign of the log ratio; a negative sample is no error, it averages out",
            formula=_arrays(lambda lp, lq: np.abs(lp - lq)),
            source=ABS_SOURCE,
        ),
        Mistake(
            "log-ratio-clamped",
            "you clamped the log ratio to [−40, 40] for stability: k1 returns logp − ref_logp unchanged, however large (see the large-gaps case)",
            formula=_arrays(lambda lp, lq: np.clip(lp - lq, -CLAMP_BOUND, CLAMP_BOUND)),
            source=src.COMPOSE_RL_44,
            bound=CLAMP_BOUND,
            bound_of="value",
        ),
        NONFINITE_ACCEPTED,
        Mistake("no-validation", NO_VALIDATION, unchecked=True, source=NO_VALIDATION_SOURCE),
    ),
)

K2_SPEC = FunctionSpec(
    "k2",
    anchors={
        "scalars": (0.405, "by hand: 0.5 · 0.9²"),
        # 0.5·0.5², 0, 0.5·1.5², 0.5·2.9²
        "nested-lists": ([[0.125, 0.0], [1.125, 4.205]], "by hand"),
    },
    cases=_per_sample_cases(),
    mistakes=(
        Mistake(
            "no-half",
            "you left out the ½: k2 = 0.5 · (logp − ref_logp)², the quadratic approximation of the KL",
            formula=_arrays(lambda lp, lq: (lp - lq) ** 2),
            source=cite(src.PRIME_RL_1697, src.GRAIL_42),
        ),
        Mistake(
            "half-inside-square",
            "you squared half the log ratio, (0.5 · (logp − ref_logp))², a quarter of the square: k2 is half of the square, 0.5 · (logp − ref_logp)²",
            formula=_arrays(lambda lp, lq: (0.5 * (lp - lq)) ** 2),
            source=NO_SOURCE,
        ),
        Mistake(
            "abs",
            "you took the absolute log ratio |logp − ref_logp| (the 'abs' KL penalty of some libraries); k2 is half its square, 0.5 · (logp − ref_logp)²",
            formula=_arrays(lambda lp, lq: np.abs(lp - lq)),
            source=ABS_SOURCE,
        ),
        Mistake(
            "log-ratio-clamped",
            "you clamped the log ratio to [−40, 40] before squaring: k2 squares logp − ref_logp unchanged, however large (see the large-gaps case)",
            formula=_arrays(lambda lp, lq: 0.5 * np.clip(lp - lq, -CLAMP_BOUND, CLAMP_BOUND) ** 2),
            source=src.COMPOSE_RL_44,
            bound=CLAMP_BOUND,
            bound_of="half-square",
        ),
        NONFINITE_ACCEPTED,
        Mistake("no-validation", NO_VALIDATION, unchecked=True, source=NO_VALIDATION_SOURCE),
    ),
)

K3_SPEC = FunctionSpec(
    "k3",
    anchors={
        # r = exp(ref_logp - logp) = exp(-2): r - 1 - log r = exp(-2) - 1 + 2
        "zero-logp": (math.exp(-2) + 1, "by hand: 1 + e⁻²"),
        "scalars": (math.exp(0.9) - 1.9, "by hand: r = e^0.9, r - 1 - 0.9"),
        # r = 0.5/0.1 = 5 and r = 0.5/0.9 = 5/9: r - 1 - log r
        "story": ([4 - math.log(5), 5 / 9 - 1 - math.log(5 / 9)], "by hand: r = 5 and 5/9"),
    },
    cases=_per_sample_cases(),
    mistakes=(
        Mistake(
            "inverted-ratio",
            "you inverted the ratio: exp(logp − ref_logp) − 1 − (logp − ref_logp) is the form for samples from the reference; with x ~ π, k3 = exp(ref_logp − logp) − 1 − (ref_logp − logp)",
            formula=_arrays(lambda lp, lq: np.exp(lp - lq) - 1.0 - (lp - lq)),
            source=cite(src.COLOSSALAI_3696, src.MLX_EXAMPLES_1233),
        ),
        Mistake(
            "no-minus-one",
            "you left out the − 1: k3 = r − 1 − log r with r = π_ref / π; without it every value is off by 1",
            formula=_arrays(lambda lp, lq: np.exp(lq - lp) - (lq - lp)),
            source=NO_SOURCE,
        ),
        Mistake(
            "ratio-exponentiated",
            "you exponentiated the probability ratio, exp(r) − 1 − r with r = π_ref / π: k3 = r − 1 − log r, i.e. exp(ref_logp − logp) − 1 − (ref_logp − logp)",
            formula=_arrays(_k3_ratio_exponentiated),
            source=src.ROCKET_LEARN_12,
        ),
        Mistake(
            "last-term-sign",
            "you added the log ratio where k3 subtracts it, exp(d) − 1 + d with d = ref_logp − logp: k3 = exp(d) − 1 − d, which is ≥ 0 for every d",
            formula=_arrays(lambda lp, lq: np.exp(lq - lp) - 1.0 + (lq - lp)),
            source=NO_SOURCE,
        ),
        # value-clamped first: where both clamps fit the outputs, one constant is the simpler reading
        Mistake(
            "value-clamped",
            "you clamped k3 to at most 10 (as verl's low_var_kl does, after clamping the log ratio to ±20): k3 is unbounded above, return it unclamped",
            formula=_arrays(lambda lp, lq: np.clip(_k3_of(np.clip(lq - lp, -20.0, 20.0)), -10, 10)),
            source=cite(src.VERL_CORE_ALGOS, src.TUNIX_1560),
            bound=10.0,
            bound_of="value",
        ),
        Mistake(
            "log-ratio-clamped",
            "you clamped the log ratio ref_logp − logp (to [−20, 20]) before the exponential: k3 uses the exact log ratio, however large; a clamp changes the value where it is active (see the large-gaps case)",
            formula=_arrays(lambda lp, lq: _k3_of(np.clip(lq - lp, -20.0, 20.0))),
            source=cite(src.SLIME_2198, src.OPENRLHF_1160, src.VERL_751),
            bound=20.0,
            bound_of="k3-log-ratio",
        ),
        NONFINITE_ACCEPTED,
        Mistake("no-validation", NO_VALIDATION, unchecked=True, source=NO_VALIDATION_SOURCE),
    ),
)

CLIPPED_K1_SPEC = FunctionSpec(
    "clipped_k1",
    anchors={
        "scalars": (0.0, "by hand: max(0, -0.9)"),
        "nested-lists": ([[0.5, 0.0], [0.0, 2.9]], "by hand: max(0, ·) of k1's differences"),
        "large-gaps": ([0.0, 47.9, 0.0, 12.0, 0.0], "by hand: the note's positive log ratios"),
    },
    cases=_per_sample_cases(),
    mistakes=(
        # indirect: TRL's per-token penalty is the unclipped k1, and it goes negative
        Mistake(
            "not-clipped",
            "you returned the log ratio without clipping: clipped_k1 = max(0, logp − ref_logp)",
            formula=_arrays(lambda lp, lq: lp - lq),
            source=src.TRL_463,
        ),
        Mistake(
            "clipped-wrong-side",
            "you kept the negative part (min instead of max): clipped_k1 = max(0, logp − ref_logp)",
            formula=_arrays(lambda lp, lq: np.minimum(0.0, lp - lq)),
            source=NO_SOURCE,
        ),
        Mistake(
            "swapped",
            "you clipped ref_logp − logp: the arguments are swapped; clipped_k1 = max(0, logp − ref_logp)",
            formula=_arrays(lambda lp, lq: np.maximum(0.0, lq - lp)),
            source=src.ALPACA_FARM_67,
        ),
        Mistake(
            "abs",
            "you took the absolute value |logp − ref_logp|: clipping sets the negative log ratios to 0, it does not flip their sign; clipped_k1 = max(0, logp − ref_logp)",
            formula=_arrays(lambda lp, lq: np.abs(lp - lq)),
            source=ABS_SOURCE,
        ),
        NONFINITE_ACCEPTED,
        Mistake("no-validation", NO_VALIDATION, unchecked=True, source=NO_VALIDATION_SOURCE),
    ),
)


# -- clipped_expectation ---------------------------------------------------------------------


def _ce_sum(term):
    """Σ term(p_i, q_i) over p_i > 0, math.inf when some q_i = 0 < p_i, as the reference sums."""

    def formula(p, q):
        terms = []
        for a, b in zip(p, q):
            if a == 0:
                continue
            if b == 0:
                return math.inf
            terms.append(term(a, b))
        return math.fsum(terms)

    return formula


def _ce_stabilised(p, q, eps):
    """The clipped expectation with eps added to the denominator of each log ratio (the field's
    + 1e-6 and + 1e-8; see common.stabiliser_shows)."""
    return _ce_sum(lambda a, b: a * max(0.0, math.log(a / (b + eps))))(p, q)


def _ce_pair(n, shows, zeros_p=0):
    """A pair whose every draw puts the field's + 1e-6 on the ``shows`` side of the tolerance
    (the side most draws of its size fall on)."""
    return _pair(n, zeros_p, 0, stabiliser_shows(_ce_stabilised, shows))


def _ce_unclipped(p, q):
    return max(0.0, _ce_sum(lambda a, b: a * math.log(a / b))(p, q))


def _ce_unweighted(p, q):
    return _ce_sum(lambda a, b: max(0.0, math.log(a / b)))(p, q) / len(p)


def _ce_positive_mass(p, q):
    """The clipped terms over the probability of the outcomes where the log ratio is positive:
    a mean over those outcomes, where the expectation divides by nothing."""
    total = _ce_sum(lambda a, b: a * max(0.0, math.log(a / b)))(p, q)
    mass = math.fsum(a for a, b in zip(p, q) if a > 0 and b > 0 and a > b)
    if math.isinf(total) or mass == 0:
        return total
    return total / mass


def _ce_nan_zero_terms(p, q):
    pa, qa = np.asarray(p, float), np.asarray(q, float)
    return float(np.sum(pa * np.maximum(0.0, np.log(pa / qa))))


CLIPPED_EXPECTATION = FunctionSpec(
    "clipped_expectation",
    anchors={
        "story": (0.529008, "CURRICULUM 02: the clipped expectation of the 01 pair, 0.529008"),
        # 0.25·max(0, log(1/3)) + 0.75·log 3
        "tuples": (0.75 * math.log(3), "by hand: 0.75·log 3"),
        "reference-zero": (math.inf, "by hand: 0.5·log(0.5/0) is infinite"),
    },
    cases=(
        Case("story", STORY, note="the story's pair: 0.529008 (the exact KL is 0.368064)"),
        Case("three-outcomes", ([0.2, 0.3, 0.5], [0.4, 0.4, 0.2]), note="three outcomes"),
        Case("skewed", ([0.7, 0.2, 0.1], [0.1, 0.3, 0.6]), note="both distributions skewed"),
        Case(
            "equal",
            ([0.25, 0.25, 0.5], [0.25, 0.25, 0.5]),
            note="equal distributions give 0",
            kind="edge",
        ),
        Case("tuples", ((0.25, 0.75), (0.75, 0.25)), note="tuples are sequences too"),
        Case(
            "policy-zero",
            ([0.0, 0.4, 0.6], [0.2, 0.3, 0.5]),
            note="a term with p_i = 0 contributes 0",
            kind="edge",
        ),
        Case(
            "reference-zero",
            ([0.5, 0.5], [1.0, 0.0]),
            note="q_i = 0 < p_i: infinite (math.inf)",
            kind="edge",
        ),
        *[
            Case(
                f"random-{n}",
                make=_ce_pair(n, shows),
                note=f"random distributions over {n} outcomes",
            )
            for n, shows in {2: False, 3: False, 5: False, 8: True}.items()
        ],
        Case(
            "random-policy-zeros",
            make=_ce_pair(6, False, zeros_p=2),
            note="random pair where the policy has zeros",
            kind="edge",
        ),
        *_distribution_edges(),
        *_invalid_distribution_cases(),
    ),
    mistakes=(
        Mistake(
            "clipped-after-sum",
            "you clipped the sum (or not at all): max(0, KL) is just the KL (0.368064 for the story); clip each log ratio before weighting (0.529008)",
            formula=_ce_unclipped,
            source=NO_SOURCE,
        ),
        Mistake(
            "positive-mass-normalised",
            "you divided by the probability of the outcomes where log(p_i / q_i) > 0, a mean over those outcomes; the clipped expectation is the plain sum Σ p_i · max(0, log(p_i / q_i)) over every outcome (0.529008 for the story, not 0.587787)",
            formula=_ce_positive_mass,
            source=NO_SOURCE,
        ),
        # indirect: the thread shows the confusion between the sampled log ratio and the weighted sum
        Mistake(
            "unweighted",
            "you took the unweighted average of the clipped log ratios; weight each by the policy's p_i",
            formula=_ce_unweighted,
            source=src.MWP_REFT_40,
        ),
        Mistake(
            "swapped",
            "you clipped log(q_i / p_i): the arguments are swapped; the clipped log ratio is max(0, log(p_i / q_i)), weighted by p_i",
            formula=_ce_sum(lambda a, b: a * max(0.0, math.log(b / a))),
            source=src.ALPACA_FARM_67,
        ),
        Mistake(
            "abs",
            "you weighted the absolute log ratios |log(p_i / q_i)|: clipping sets the negative log ratios to 0, it does not flip their sign",
            formula=_ce_sum(lambda a, b: a * abs(math.log(a / b))),
            source=ABS_SOURCE,
        ),
        Mistake(
            "log2",
            "you used log base 2; use the natural log",
            formula=_ce_sum(lambda a, b: a * max(0.0, math.log2(a / b))),
            source=cite(src.FIELDTRIP_686, src.KANSA_71, src.SCIPY_ENTROPY),
        ),
        Mistake(
            "zero-term-nan",
            "a term with p_i = 0 gave NaN (here 0 · log(0 / 0), where q_i = 0 too); terms with p_i = 0 contribute exactly 0: skip them",
            formula=_ce_nan_zero_terms,
            source=cite(src.THE_ALGORITHMS_12233, src.TORCHMETRICS_1029),
        ),
        Mistake(
            "no-validation",
            "invalid inputs (empty, unequal lengths, entries outside [0, 1], not summing to 1) must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
    ),
)


# -- estimator_moments and monte_carlo_kl: the same two slips in calling the estimator -------

SWAPPED_ESTIMATOR_ARGUMENTS = "you called estimator(log q_x, log p_x): the arguments are swapped (the policy's log probability comes first)"
PROBS_NOT_LOGPROBS = "you passed the probabilities p_x, q_x to the estimator; it takes log probabilities: estimator(log p_x, log q_x)"


# -- estimator_moments -----------------------------------------------------------------------


def _enumerate(policy, reference, estimator, swap=False, log=math.log, skip_zeros=True):
    """(weights, values) over the outcomes with p > 0, as the reference enumerates them."""
    weights, values = [], []
    for p, q in zip(policy, reference):
        if p == 0 and skip_zeros:
            continue
        a, b = log(p), log(q)
        weights.append(p)
        values.append(float(np.asarray(estimator(b, a) if swap else estimator(a, b))))
    return weights, values


def _moments(formula, **enumerate_options):
    """A formula of (weights, values) over the enumerated outcomes."""
    return lambda policy, reference, estimator: formula(
        *_enumerate(policy, reference, estimator, **enumerate_options)
    )


def _population(w, v):
    mean = math.fsum(a * b for a, b in zip(w, v))
    return mean, math.fsum(a * (b - mean) ** 2 for a, b in zip(w, v))


def _ddof1(w, v):
    mean, var = _population(w, v)
    n = len(v)
    return mean, (var * n / (n - 1) if n > 1 else math.nan)


def _unweighted_moments(w, v):
    arr = np.asarray(v, dtype=float)
    return float(arr.mean()), float(arr.var())


def _std(w, v):
    mean, var = _population(w, v)
    return mean, math.sqrt(var)


def _np_cov(w, v):
    mean, _ = _population(w, v)
    return mean, float(np.cov(np.asarray(v), aweights=np.asarray(w)))


ESTIMATOR_MOMENTS = FunctionSpec(
    "estimator_moments",
    anchors={
        # mean: Σ p·k1 = the KL; variance: 0.1·log(5)² + 0.9·log(1.8)² - mean²
        "story-k1": (
            [0.368064, 0.1 * math.log(5) ** 2 + 0.9 * math.log(1.8) ** 2 - 0.368064**2],
            "CURRICULUM 01 (mean = exact KL 0.368064); variance by hand",
        ),
        # values 0 (p = 0.1) and log 1.8 (p = 0.9): mean 0.9·log 1.8, variance 0.9·0.1·log(1.8)²
        "story-clipped": (
            [0.529008, 0.09 * math.log(1.8) ** 2],
            "CURRICULUM 02 (mean 0.529008); variance by hand",
        ),
        "deterministic-policy": ([math.log(2), 0.0], "by hand: k1 = log(1/0.5) with p = 1"),
    },
    cases=(
        Case(
            "story-k1",
            (*STORY, K1),
            note="k1 on the story's pair: mean 0.368064 (the KL), variance 0.434502",
        ),
        Case("story-k2", (*STORY, K2), note="k2 on the story's pair: mean 0.284986 (biased)"),
        Case(
            "story-k3",
            (*STORY, K3),
            note="k3 on the story's pair: mean 0.368064 (the KL), variance 0.4545",
        ),
        Case(
            "story-clipped",
            (*STORY, CLIPPED),
            note="the clipped estimator on the story's pair: mean 0.529008",
        ),
        Case(
            "three-outcomes-k3",
            ([0.2, 0.3, 0.5], [0.4, 0.4, 0.2], K3),
            note="k3 over three outcomes",
        ),
        Case(
            "abs-estimator",
            ([0.7, 0.2, 0.1], [0.1, 0.3, 0.6], ABS),
            note="any function of (logp, ref_logp) works, e.g. |logp − ref_logp|",
        ),
        Case(
            "deterministic-policy",
            ([1.0, 0.0], [0.5, 0.5], K1),
            note="one outcome with p = 1: mean log 2, variance 0",
            kind="edge",
        ),
        Case(
            "policy-zero-k3",
            ([0.0, 0.5, 0.5], [0.2, 0.4, 0.4], K3),
            note="outcomes with p_x = 0 are skipped (k3 then misses the reference's mass there)",
            kind="edge",
        ),
        *[
            Case(
                f"random-{n}-{e.name}",
                make=_moments_make(n, e),
                note=f"random distributions over {n} outcomes, estimator {e.name}",
            )
            for n, e in ((2, K1), (3, K3), (4, K2), (5, CLIPPED), (8, K3), (6, K1))
        ],
        Case(
            "random-policy-zeros",
            make=_moments_make(6, K3, zeros_p=2),
            note="random pair where the policy has zeros",
            kind="edge",
        ),
        Case(
            "reference-zero",
            ([0.5, 0.5], [1.0, 0.0], K1),
            raises=ValueError,
            note="q_x = 0 < p_x: log q_x = −inf, ValueError",
        ),
        *_distribution_edges(after=(K1,)),
        *_invalid_distribution_cases(after=(K1,)),
    ),
    mistakes=(
        Mistake(
            "ddof1",
            "you used the sample variance (dividing by n − 1, ddof=1); enumerating every outcome gives the population variance Σ p_x (f(x) − mean)²",
            formula=_moments(_ddof1),
            source=cite(src.PYTORCH_42803, src.PYTORCH_50010),
        ),
        Mistake(
            "unweighted",
            "you averaged over the outcomes without weights; x ~ policy, so weight each outcome by p_x (mean and variance)",
            formula=_moments(_unweighted_moments),
            source=NO_SOURCE,
        ),
        Mistake(
            "std-not-variance",
            "you returned the standard deviation; the second value is the variance Σ p_x (f(x) − mean)²",
            formula=_moments(_std),
            source=src.STATSBASE_694,
        ),
        Mistake(
            "swapped",
            SWAPPED_ESTIMATOR_ARGUMENTS,
            formula=_moments(_population, swap=True),
            source=cite(src.ALPACA_FARM_67, src.SCHULMAN_BLOG),
        ),
        Mistake(
            "np-cov-aweights",
            "you took the variance from np.cov(values, aweights=p), which corrects for bias by default (it divides by 1 − Σ p_x²): compute Σ p_x (f(x) − mean)² directly, or pass ddof=0",
            formula=_moments(_np_cov),
            source=src.NUMPY_COV,
        ),
        Mistake(
            "zero-prob-not-skipped",
            "you evaluated the estimator at outcomes with p_x = 0, where log p_x is undefined (an error, or NaN with numpy): skip those outcomes, they carry no weight",
            formula=_moments(_population, skip_zeros=False),
            source=cite(src.THE_ALGORITHMS_12233, src.TORCHMETRICS_1029),
        ),
        Mistake(
            "probs-not-logprobs",
            PROBS_NOT_LOGPROBS,
            formula=_moments(_population, log=float),
            source=cite(src.PYTORCH_43348, src.LIGHTLY_1341),
        ),
        Mistake(
            "no-validation",
            "invalid distributions (empty, unequal lengths, entries outside [0, 1], not summing to 1, q_x = 0 < p_x) must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
    ),
)


# -- monte_carlo_kl --------------------------------------------------------------------------


def _value(estimator, policy, reference, x, swap=False, log=math.log):
    a, b = log(policy[x]), log(reference[x])
    return float(np.asarray(estimator(b, a) if swap else estimator(a, b)))


def _mc_distinct(samples, policy, reference, estimator):
    xs = sorted(set(samples))
    return math.fsum(_value(estimator, policy, reference, x) for x in xs) / len(xs)


def _mc_weighted(samples, policy, reference, estimator):
    return math.fsum(policy[x] * _value(estimator, policy, reference, x) for x in samples) / len(
        samples
    )


def _mc_swapped(samples, policy, reference, estimator):
    return math.fsum(_value(estimator, policy, reference, x, swap=True) for x in samples) / len(
        samples
    )


def _mc_probabilities(samples, policy, reference, estimator):
    return math.fsum(_value(estimator, policy, reference, x, log=float) for x in samples) / len(
        samples
    )


def _mc_estimator_of_means(samples, policy, reference, estimator):
    mean_logp = math.fsum(math.log(policy[x]) for x in samples) / len(samples)
    mean_ref_logp = math.fsum(math.log(reference[x]) for x in samples) / len(samples)
    return float(np.asarray(estimator(mean_logp, mean_ref_logp)))


STORY_SAMPLE = [0] + [1] * 9  # the policy's frequencies exactly

MONTE_CARLO_KL = FunctionSpec(
    "monte_carlo_kl",
    anchors={
        # one log(0.1/0.5) and nine log(0.9/0.5), averaged: the exact KL
        "story-frequencies-k1": (0.368064, "CURRICULUM 01: exact forward KL 0.368064"),
        "one-sample-k3": (4 - math.log(5), "by hand: r = 0.5/0.1 = 5, r - 1 - log r"),
        "reference-one": (math.log(0.5), "by hand: log(0.5/1)"),
    },
    cases=(
        Case(
            "story-frequencies-k1",
            (STORY_SAMPLE, *STORY, K1),
            note="a sample with the policy's frequencies: k1 gives 0.368064",
        ),
        Case(
            "story-frequencies-k3",
            (STORY_SAMPLE, *STORY, K3),
            note="the same sample with k3: 0.368064",
        ),
        Case(
            "one-unlucky-sample",
            ([0], *STORY, K1),
            note="one sample of the first outcome: k1 = −1.609438",
            kind="edge",
        ),
        Case(
            "one-sample-k3",
            ([0], *STORY, K3),
            note="one sample of the first outcome: k3 = 2.390562",
            kind="edge",
        ),
        Case(
            "unsampled-zero",
            ([1, 1, 2], [0.0, 0.5, 0.5], [0.2, 0.4, 0.4], K1),
            note="an outcome with p_x = 0 that is never sampled is fine",
            kind="edge",
        ),
        Case(
            "unsampled-reference-zero",
            ([0, 1, 0], [0.5, 0.3, 0.2], [0.5, 0.5, 0.0], K1),
            note="q_x = 0 on an outcome never sampled is fine: only sampled outcomes count",
            kind="edge",
        ),
        Case(
            "tuple-sample",
            ((1, 2, 2, 0, 2), [0.2, 0.3, 0.5], [0.4, 0.4, 0.2], K2),
            note="a tuple of indices, k2",
        ),
        Case(
            "numpy-sample",
            (np.array([2, 2, 1, 2], dtype=np.int64), [0.1, 0.2, 0.7], [0.3, 0.3, 0.4], CLIPPED),
            note="a numpy integer array, clipped_k1",
        ),
        *[
            Case(
                f"random-{n}-{m}-{e.name}",
                make=_mc_make(n, m, e),
                note=f"{m} samples from a random policy over {n} outcomes, estimator {e.name}",
            )
            for n, m, e in (
                (2, 16, K1),
                (3, 50, K3),
                (5, 200, K2),
                (4, 7, CLIPPED),
                (8, 500, K3),
                (6, 1, K1),
            )
        ],
        Case(
            "empty", ([], *STORY, K1), raises=ValueError, note="an empty sample raises ValueError"
        ),
        Case(
            "index-too-large",
            ([0, 2], *STORY, K1),
            raises=ValueError,
            note="index 2 with 2 outcomes raises ValueError",
        ),
        Case(
            "negative-index",
            ([1, -1], *STORY, K1),
            raises=ValueError,
            note="index −1 is not an outcome: ValueError",
        ),
        Case(
            "sampled-zero-probability",
            ([0, 1], [0.0, 1.0], [0.5, 0.5], K1),
            raises=ValueError,
            note="a sampled outcome with p_x = 0 raises ValueError",
        ),
        Case(
            "deterministic-policy",
            ([0, 0], [1.0, 0.0], [0.5, 0.5], K1),
            note="a policy with p = 1 on the sampled outcome: k1 = log 2",
            kind="edge",
        ),
        Case(
            "sampled-reference-zero",
            ([1, 0], [0.5, 0.5], [0.0, 1.0], K3),
            raises=ValueError,
            note="a sampled outcome with q_x = 0 raises ValueError (log q_x = −inf)",
        ),
        Case(
            "reference-one",
            ([0, 0], [0.5, 0.5], [1.0, 0.0], K1),
            note="q = 1 on the sampled outcome: k1 = log 0.5",
            kind="edge",
        ),
        Case(
            "float-index",
            ([0, 1.0], *STORY, K1),
            raises=ValueError,
            note="an index that is a float (1.0) raises ValueError",
        ),
        Case(
            "none-index",
            ([0, None], *STORY, K1),
            raises=ValueError,
            note="an index that is None raises ValueError",
        ),
        *_distribution_edges(before=([0],), after=(K1,), id_prefix="distribution-"),
        *_invalid_distribution_cases(before=([1],), after=(K1,), id_prefix="distribution-"),
    ),
    mistakes=(
        Mistake(
            "distinct-outcomes",
            "you averaged over the distinct sampled outcomes; every sample counts, repeats included: that is how sampling weights the outcomes",
            formula=_mc_distinct,
            source=NO_SOURCE,
        ),
        Mistake(
            "weighted-twice",
            "you multiplied each sample's value by p_x; the samples are already drawn from the policy, so the plain mean is the estimate",
            formula=_mc_weighted,
            source=src.MWP_REFT_40,
        ),
        Mistake(
            "swapped",
            SWAPPED_ESTIMATOR_ARGUMENTS,
            formula=_mc_swapped,
            source=cite(src.ALPACA_FARM_67, src.SCHULMAN_BLOG),
        ),
        # indirect: both show that a non-linear estimator of an aggregate differs from the
        # aggregate of the per-sample estimates
        Mistake(
            "estimator-of-means",
            "you applied the estimator once, to the averaged log probabilities; apply it to each sample and average the values (the two agree only for k1, which is linear)",
            formula=_mc_estimator_of_means,
            source=cite(src.TRL_3556, src.HANDS_ON_RL_75),
        ),
        Mistake(
            "probs-not-logprobs",
            PROBS_NOT_LOGPROBS,
            formula=_mc_probabilities,
            source=cite(src.PYTORCH_43348, src.LIGHTLY_1341),
        ),
        Mistake(
            "no-validation",
            "an empty sample, indices outside [0, n) (negative ones too) and invalid distributions must raise ValueError",
            unchecked=True,
            source=cite(src.TRL_3248, src.NEMO_AUTOMODEL_3796),
        ),
    ),
)

SPEC = AssignmentSpec(
    "02_clipped_estimators",
    (
        K1_SPEC,
        CLIPPED_K1_SPEC,
        CLIPPED_EXPECTATION,
        K2_SPEC,
        K3_SPEC,
        ESTIMATOR_MOMENTS,
        MONTE_CARLO_KL,
    ),
)
