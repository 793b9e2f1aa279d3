"""Input generators and cases shared by several case modules."""

from __future__ import annotations

import math

import numpy as np

from autograder.cases.spec import DEFAULT_ATOL, DEFAULT_RTOL, Case


def random_distribution(rng: np.random.Generator, n: int, zeros: int = 0) -> list[float]:
    """A Dirichlet(1, …, 1) distribution over ``n`` outcomes mixed 4:1 with the uniform one (so
    every nonzero probability is at least 0.2 / n), ``zeros`` of them set to 0."""
    p = 0.8 * rng.dirichlet(np.ones(n)) + 0.2 / n
    if zeros:
        p[rng.choice(n, size=zeros, replace=False)] = 0.0
        p = p / p.sum()
    return [float(x) for x in p]


# -- stratified generation ----------------------------------------------------------------------
# A generated case stands for one structural situation (a negative log ratio among the terms, a
# row of two or more tokens, a final turn that passed only the public tests ...). When a random
# draw can miss it, a mistake that shows only in that situation loses the case's points for some
# students and not for others: the same code would get different scores. ``until`` redraws from
# the same generator (so a seed still gives one draw) until every condition holds, so each
# draw holds the situations its case stands for.

REDRAWS = 10_000


def until(make, *conditions):
    """``make`` redrawn from the same generator until every ``condition(*args)`` holds."""

    def stratified(rng):
        for _ in range(REDRAWS):
            args = make(rng)
            if all(c(*args) for c in conditions):
                return args
        raise RuntimeError(f"no draw of {REDRAWS} met the case's conditions")  # a design error

    return stratified


def distribution_pair(n: int, zeros_p: int = 0, zeros_q: int = 0, *conditions):
    """``make`` for a generated case: (policy, reference), each over ``n`` outcomes, redrawn until
    ``conditions`` hold; always with an outcome where the log ratio is at most −0.1 and one where
    it is at least 0.1 (both signs, so a clamp or an absolute value shows on every draw) and some
    probability below 0.3 that differs by a factor of 1.5 from its twin (so smoothing shows)."""

    def make(rng):
        return random_distribution(rng, n, zeros_p), random_distribution(rng, n, zeros_q)

    return until(make, _both_signs, _small_and_apart, _not_tiny, *conditions)


def _not_tiny(p, q, *rest) -> bool:
    """No nonzero probability below 0.02 (with up to 10 outcomes, random_distribution never
    draws one): a 1e-8 stabiliser (as the field writes it) then moves a log ratio by at most
    5e-7, inside every tolerance, on every draw."""
    return all(x == 0 or x >= 0.02 for x in (*p, *q))


# The field's largest stabiliser, 1e-6 in a denominator, put inside a log ratio,
# log(p_i / (q_i + 1e-6)), moves it by about 1e-6 / q_i: beyond the stated tolerance where some
# probability is small, inside it where all are large. tests/test_field_maths.py grades it as the
# epsilon smoothing it is there; for its cost to be the same for every student, each generated
# case of a function with a log ratio holds one side, with a margin, on every draw:
# ``stabiliser_shows`` below. A 1e-8 stabiliser moves it 100 times less, and must stay inside.
FIELD_STABILISER = 1e-6
SMALL_STABILISER = 1e-8
STABILISER_MARGIN = 1.5


def _tolerance_ratio(value, p, q, eps: float, rtol: float, atol: float) -> float:
    """The largest |value(p, q, eps) − value(p, q, 0)| / (atol + rtol · |value(p, q, 0)|), element
    by element when ``value`` returns a list."""
    exact = np.atleast_1d(np.asarray(value(p, q, 0.0), float))
    moved = np.atleast_1d(np.asarray(value(p, q, eps), float))
    finite = np.isfinite(exact)
    if not finite.any():
        return 0.0
    gap = np.abs(moved[finite] - exact[finite])
    return float(np.max(gap / (atol + rtol * np.abs(exact[finite]))))


def stabiliser_shows(value, shows: bool, rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL):
    """A condition on a (policy, reference, ...) draw: ``value(p, q, eps)``, the function's result
    with ``eps`` added to the denominator of every log ratio, moves by more than
    STABILISER_MARGIN times the stated tolerance when eps = FIELD_STABILISER (``shows``), or by
    less than 1 / STABILISER_MARGIN of it (not); and by less than that with eps =
    SMALL_STABILISER either way. The field's + 1e-6 then fails (or passes) the case on every
    draw, and its + 1e-8 passes it on every draw."""

    def condition(p, q, *rest) -> bool:
        big = _tolerance_ratio(value, p, q, FIELD_STABILISER, rtol, atol)
        small = _tolerance_ratio(value, p, q, SMALL_STABILISER, rtol, atol)
        side = big > STABILISER_MARGIN if shows else big < 1 / STABILISER_MARGIN
        return side and small < 1 / STABILISER_MARGIN

    return condition


def exact_kl(p, q) -> float | None:
    """Σ p_i log(p_i / q_i) (None where some q_i = 0 < p_i): 01's forward_kl, for the stated
    property "the clipped expectation is at least the KL" (autograder.scoring.stated). It is an
    answer key, so it lives here, in a module the course form leaves out."""
    if any(b == 0 and a > 0 for a, b in zip(p, q)):
        return None
    return math.fsum(a * math.log(a / b) for a, b in zip(p, q) if a > 0)


def _log_ratios(p, q) -> list[float]:
    return [float(np.log(a / b)) for a, b in zip(p, q) if a > 0 and b > 0]


def _both_signs(p, q, *rest) -> bool:
    r = _log_ratios(p, q)
    return min(r, default=0.0) <= -0.1 and max(r, default=0.0) >= 0.1


def _small_and_apart(p, q, *rest) -> bool:
    return any(
        0 < min(a, b) < 0.3 and max(a, b) >= 1.5 * min(a, b)
        for a, b in zip(p, q)
        if a > 0 and b > 0
    )


# The distribution checks of notebooks 01 and 02: a (policy, reference) pair placed between
# ``before`` and ``after`` (the other arguments of the function), ids prefixed by ``id_prefix``.


def distribution_edge_cases(
    before: tuple = (), after: tuple = (), id_prefix: str = "", zeros: bool = True
) -> list[Case]:
    """Valid pairs at the edges of the checks: one outcome, a deterministic pair (when zeros are
    allowed), a sum off by less than the tolerance 1e-9 · n."""
    edges = [
        ("one-outcome", ([1.0], [1.0]), "a single outcome with probability 1"),
        ("deterministic-equal", ([1.0, 0.0], [1.0, 0.0]), "the same deterministic distribution"),
        (
            "within-tolerance",
            ([0.25, 0.25, 0.25, 0.25 + 2.5e-9], [0.25] * 4),
            "a sum off by 2.5e-9 with 4 outcomes is within 1e-9 · 4: valid",
        ),
    ]
    return [
        Case(id_prefix + cid, (*before, *args, *after), note=note, kind="edge")
        for cid, args, note in edges
        if zeros or cid != "deterministic-equal"
    ]


def invalid_distribution_cases(
    before: tuple = (), after: tuple = (), id_prefix: str = "", zeros_invalid: bool = False
) -> list[Case]:
    """Pairs that are not two distributions of the same length (and, with ``zeros_invalid``,
    pairs holding a zero): each raises ValueError."""
    bad = [
        ("empty", ([], []), "empty distributions raise ValueError"),
        ("unequal-lengths", ([0.5, 0.5], [0.2, 0.3, 0.5]), "unequal lengths raise ValueError"),
        ("negative-entry", ([1.2, -0.2], [0.5, 0.5]), "a negative probability raises ValueError"),
        ("entry-above-one", ([0.5, 0.5], [1.5, -0.5]), "a probability above 1 raises ValueError"),
        ("nan-entry", ([float("nan"), 0.5], [0.5, 0.5]), "NaN raises ValueError"),
        ("not-normalized", ([0.3, 0.3], [0.5, 0.5]), "a policy not summing to 1 raises ValueError"),
        (
            "reference-not-normalized",
            ([0.5, 0.5], [0.6, 0.6]),
            "a reference not summing to 1 raises ValueError",
        ),
        (
            "negative-pair",
            ([-0.2, 0.6, 0.6], [-0.1, 0.55, 0.55]),
            "negative entries raise ValueError even where their ratio is positive",
        ),
        (
            "negative-reference-unused",
            ([0.0, 0.5, 0.5], [-0.2, 0.6, 0.6]),
            "a negative reference entry raises ValueError even where p_i = 0",
        ),
        (
            "negative-policy-unused",
            ([-0.2, 0.6, 0.6], [0.0, 0.5, 0.5]),
            "a negative policy entry raises ValueError even where q_i = 0",
        ),
        (
            "outside-tolerance",
            ([0.25, 0.25, 0.25, 0.25 + 6e-9], [0.25] * 4),
            "a sum off by 6e-9 with 4 outcomes (more than 1e-9 · 4) raises ValueError",
        ),
    ]
    if zeros_invalid:
        bad += [
            ("zero-in-policy", ([0.0, 1.0], [0.5, 0.5]), "p_i = 0: the log ratio is undefined"),
            ("zero-in-reference", ([0.5, 0.5], [1.0, 0.0]), "q_i = 0: the log ratio is undefined"),
        ]
    return [
        Case(id_prefix + cid, (*before, *args, *after), raises=ValueError, note=note)
        for cid, args, note in bad
    ]


# -- documented sources of the known mistakes of 01 and 02 ------------------------------------
# Each is "<where it is>: <what it shows>", written from the page as opened. A mistake's
# ``source`` joins the ones that document it (``cite``). A mistake with none is spec.NO_SOURCE.

ALPACA_FARM_67 = (
    "tatsu-lab/alpaca_farm#67: AlpacaFarm's PPO takes clamp(logprobs − ref_logprobs, min=0) as its "
    "per-token KL, and a user proposes the swapped clamp(ref_logprobs − logprobs, min=0) and the "
    "maintainer explains the direction"
)
SCHULMAN_BLOG = (
    "joschu.net/blog/kl-approx.html (J. Schulman, Approximating KL Divergence): k1 = −log r, "
    "k2 = ½(log r)², k3 = (r − 1) − log r with r = p/q for samples of q, the letters the other way "
    "round from this course's"
)
XIHUAI_KL_ESTIMATORS = (
    "xihuai18.github.io/reinforcement-learning/2025/12/01/kl-estimators-en.html: RLHF calls "
    "KL(actor ‖ reference) the reverse KL, the opposite of this course's naming"
)
PYTORCH_57459 = (
    "pytorch/pytorch#57459: F.kl_div(input, target) computes KL(target ‖ input), the reverse of the "
    "order users read into its arguments"
)
ACER_6 = (
    "Kaixhin/ACER#6: the two arguments of a KL were in the wrong order relative to the paper, "
    "which the author confirms and fixes"
)
MWP_REFT_40 = (
    "lqtrung1998/mwp_ReFT#40: a user mixes up the sampled log ratio with the weighted sum "
    "Σ p(x) log(p(x)/q(x)), and the reply explains that sampling from p already weights by p"
)
FIELDTRIP_686 = (
    "fieldtrip/fieldtrip#686: a KL-based index computed with log(P) and log2(Q) mixed: the base of "
    "the log changes the value"
)
KANSA_71 = (
    "davehull/Kansa#71: an entropy switched from the natural log to log2, bits instead of nats"
)
SCIPY_ENTROPY = (
    "docs.scipy.org scipy.stats.entropy (1.8.1): entropy(pk, qk) = Σ pk log(pk/qk) in base e unless "
    "base= is given, and it silently renormalises pk and qk"
)
SCIPY_REL_ENTR = (
    "docs.scipy.org scipy.special.rel_entr: x · log(x/y) is 0 at x = 0 and +∞ at x > 0 = y"
)
THE_ALGORITHMS_12233 = (
    "TheAlgorithms/Python#12233: a KL function returns NaN when an entry of y_true is 0 "
    "(0 · log 0 = 0 · −inf), and the fix masks the zero entries"
)
TORCHMETRICS_1029 = (
    "Lightning-AI/torchmetrics#1029: KLDivergence gives NaN with zero probabilities, and the report asks "
    "that p_i = 0 terms be skipped and that q_i = 0 < p_i give inf, not NaN"
)
DISTRIBUTIONS_JL_793 = (
    "JuliaStats/Distributions.jl#793: kldivergence of two Categoricals returns NaN when P(x) = 0"
)
CAUSALML_167 = (
    "uber/causalml#167: a KL that clamps q to [1e-6, 1 − 1e-6] still returns NaN for p = 0 or 1 "
    "(numpy's log does not handle 0 · log 0)"
)
QUCUMBER_67 = (
    "PIQuIL/QuCumber#67: proposes fixing KL NaNs by adding an epsilon to p and q inside the log"
)
XPSI_331 = "xpsi-group/xpsi#331: keeps prior probabilities away from 0 to avoid infinite KL values"
LEAN_POOL_28 = (
    "Vilin97/lean-pool#28: review: a KL definition where q = 0 < p silently gives a finite value "
    "instead of +∞"
)
PYTORCH_43348 = (
    "pytorch/pytorch#43348: probabilities passed to kl_div, which expects log probabilities, give a "
    "wrong value"
)
LIGHTLY_1341 = (
    "lightly-ai/lightly#1341: a loss fixed by converting probabilities to log space before the KL"
)
VERL_CORE_ALGOS = (
    "volcengine/verl verl/trainer/ppo/core_algos.py@012be9d9: kl_penalty offers 'abs' "
    "|logp − ref_logp| beside k1, 'mse'/k2 = ½(logp − ref_logp)², and low_var_kl (k3) with the log "
    "ratio clamped to [−20, 20] and the value to [−10, 10]"
)
TRL_1161 = (
    "huggingface/trl#1161: PPOTrainer's kl_penalty='abs' takes |logp − ref_logp|, and the maintainer "
    "calls it safer when the sampled KL turns negative"
)
TRL_463 = (
    "huggingface/trl#463: TRL's per-token KL penalty is the unclipped logprob − ref_logprob, "
    "subtracted from the reward, and it goes negative"
)
TRL_6693 = (
    "huggingface/trl#6693: a maintainer argues that a NaN token log probability should raise rather "
    "than be neutralised"
)
PYTORCH_RL_4255 = (
    "pytorch/rl#4255: review: TorchRL's KL transform silently maps infinite log ratios to 0"
)
COMPOSE_RL_44 = (
    "databricks/compose-rl#44: adding Schulman's estimators, the review asks to clamp the log ratios "
    "to ±40"
)
OPENRLHF_1160 = "OpenRLHF/OpenRLHF#1160: clamps the k3 log ratio to [−10, 10] before exp"
VERL_751 = (
    "verl-project/verl#751: NaN KL traced to exp in low_var_kl, worked around by clamping the log "
    "ratio to [−5, 5]"
)
SLIME_2198 = (
    "THUDM/slime#2198: clamps the log ratios to ±20 before exp in the low-variance KL estimator"
)
TUNIX_1560 = (
    "google/tunix#1560: adds an optional symmetric clamp clip(kl, −c, c) of the per-token KL value"
)
ROCKET_LEARN_12 = (
    "Rolv-Arild/rocket-learn#12: fixes a KL estimator written (e^ratio − 1) − ratio, the probability "
    "ratio exponentiated, to (ratio − 1) − ln(ratio)"
)
COLOSSALAI_3696 = (
    "hpcaitech/ColossalAI#3696: compute_approx_kl builds the k3 ratio in the wrong direction for "
    "samples drawn from the actor"
)
MLX_EXAMPLES_1233 = (
    "ml-explore/mlx-examples#1233: a GRPO trainer writes Schulman's approximator as "
    "exp(logp − ref_logp) − 1 − (logp − ref_logp), the inverted ratio"
)
PRIME_RL_1697 = "PrimeIntellect-ai/prime-rl#1697: a 'k2' KL term written τ · (log ratio)², the 0.5 factor removed"
GRAIL_42 = (
    "one-covenant/grail#42: a review flags a GRPO KL penalty computed as the mean squared log ratio, "
    "with no ½"
)
PYTORCH_42803 = (
    "pytorch/pytorch#42803: torch.var (Bessel-corrected by default) and np.var (ddof=0) disagree"
)
PYTORCH_50010 = "pytorch/pytorch#50010: torch's default unbiased=True is numpy's ddof=1"
STATSBASE_694 = (
    "JuliaStats/StatsBase.jl#694: the docs of mean_and_var said 'standard deviation' for the "
    "variance it returns"
)
NUMPY_COV = (
    "numpy.org numpy.cov: normalises by N − 1 by default, also with aweights (ddof=0 gives the "
    "weighted population variance)"
)
TRL_3248 = (
    "huggingface/trl#3248: a batch whose completions are all truncated divides 0 by 0 and gives NaN"
)
NEMO_AUTOMODEL_3796 = (
    "NVIDIA-NeMo/Automodel#3796: losses divide by a zero token count and return NaN for a fully "
    "masked batch"
)
TRL_3556 = (
    "huggingface/trl#3556: asks whether k3 belongs on each token or on the whole sequence: a "
    "non-linear estimator of an aggregate is not the aggregate of the estimator"
)
HANDS_ON_RL_75 = (
    "walkinglabs/hands-on-modern-rl#75: a course's GRPO code applied k3 to response-level log "
    "probabilities, and the fix takes k3 per token, then averages"
)


def cite(*sources: str) -> str:
    """A mistake's ``source``: the documented sources that show it, joined by "; "."""
    if any("; " in s for s in sources):
        raise ValueError("a source must not hold '; ', which separates sources")
    return "; ".join(sources)
