"""06_nthr: cases and known mistakes for prediction_errors, token_scores,
nthr_weights and eta_schedule.

Inputs are float32 torch tensors built from the case generator; tolerances
are float32 ones. Each mistake is one entry: its diagnosis and its wrong
``formula``, which runs after the reference has validated the inputs (see
spec.Mistake); the ``unchecked`` ones are the reference without its checks.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from autograder.assignments.common import until
from autograder.cases.spec import NO_SOURCE, AssignmentSpec, Case, FunctionSpec, Mistake


def _t(x, dtype=torch.float32) -> torch.Tensor:
    return torch.tensor(np.asarray(x), dtype=dtype)


def _errors(rng, n: int, v: int) -> torch.Tensor:
    """Realistic prediction errors: one-hot(sampled token) − softmax(random logits)."""
    logits = 1.5 * rng.standard_normal((n, v))
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    tokens = np.array([rng.choice(v, p=row) for row in p])
    return _t(np.eye(v)[tokens] - p)


# -- prediction_errors -----------------------------------------------------------------------


def _pe_case(t: int, v: int, scale: float):
    def make(rng):
        return _t(scale * rng.standard_normal((t, v))), torch.tensor(
            rng.integers(0, v, size=t), dtype=torch.int64
        )

    return make


def _pe(formula):
    """A formula of (one-hot vectors of the tokens, logits)."""

    def wrong(logits, tokens):
        onehot = torch.nn.functional.one_hot(tokens.long(), logits.shape[-1]).to(logits.dtype)
        return formula(onehot, logits)

    return wrong


_Z1 = math.exp(2) + 1 + math.exp(-1)  # softmax denominators of the two-positions anchor
_Z2 = 2 + math.exp(3)

PREDICTION_ERRORS = FunctionSpec(
    "prediction_errors",
    anchors={
        "uniform": ([[-0.25, -0.25, 0.75, -0.25]], "by hand: one-hot minus softmax, 1/4 each"),
        # row 1: softmax of (2, 0, -1), target 0; row 2: softmax of (0, 3, 0), target 2
        "two-positions": (
            [
                [1 - math.exp(2) / _Z1, -1 / _Z1, -math.exp(-1) / _Z1],
                [-1 / _Z2, -math.exp(3) / _Z2, 1 - 1 / _Z2],
            ],
            "by hand, Z1 = e² + 1 + e⁻¹, Z2 = 2 + e³",
        ),
    },
    cases=(
        Case(
            "uniform",
            (torch.zeros(1, 4), torch.tensor([2])),
            note="uniform logits: [-0.25, -0.25, 0.75, -0.25]",
        ),
        Case(
            "two-positions",
            (_t([[2.0, 0.0, -1.0], [0.0, 3.0, 0.0]]), torch.tensor([0, 2])),
            note="a likely and an unlikely token",
        ),
        Case("random", make=_pe_case(6, 7, 2.0), note="random logits, 6 positions, 7 tokens"),
        Case(
            "random-peaked",
            make=_pe_case(4, 5, 8.0),
            note="peaked random logits",
            kind="edge",
        ),
        Case("random-one", make=_pe_case(1, 3, 1.0), note="one position", kind="edge"),
        Case(
            "large-logits",
            (_t([[100.0, 0.0, -50.0], [1000.0, 999.0, 0.0]]), torch.tensor([1, 0])),
            note="large finite logits (exp overflows float32 above about 88): softmax stays finite",
            kind="edge",
        ),
        Case(
            "one-dim-logits",
            (torch.zeros(4), torch.tensor([1])),
            raises=ValueError,
            note="logits that are not (T, V) raise ValueError",
        ),
        Case(
            "length-mismatch",
            (torch.zeros(2, 4), torch.tensor([1, 2, 3])),
            raises=ValueError,
            note="T rows of logits but a different number of tokens raises ValueError",
        ),
        Case(
            "token-too-large",
            (torch.zeros(2, 4), torch.tensor([1, 4])),
            raises=ValueError,
            note="a token id >= V raises ValueError",
        ),
        Case(
            "negative-token",
            (torch.zeros(2, 4), torch.tensor([-1, 0])),
            raises=ValueError,
            note="a negative token id raises ValueError",
        ),
        Case(
            "float-tokens",
            (torch.zeros(2, 4), _t([1, 2])),
            raises=ValueError,
            note="float tokens raise ValueError",
        ),
        Case(
            "nan-logits",
            (_t([[0.0, float("nan")]]), torch.tensor([0])),
            raises=ValueError,
            note="NaN logits raise ValueError",
        ),
        Case(
            "int-logits",
            (torch.zeros(2, 4, dtype=torch.int64), torch.tensor([1, 2])),
            raises=ValueError,
            note="integer logits raise ValueError",
        ),
        Case(
            "two-dim-tokens",
            (torch.zeros(2, 4), torch.tensor([[1], [2]])),
            raises=ValueError,
            note="tokens of shape (T, 1) instead of (T,) raise ValueError",
        ),
        Case(
            "list-logits",
            ([[0.0, 1.0, 0.5]], torch.tensor([0])),
            raises=ValueError,
            note="a nested list instead of a tensor raises ValueError",
        ),
    ),
    mistakes=(
        Mistake(
            "sign-flipped",
            "you computed softmax − one-hot; the prediction error is one-hot − softmax (the gradient of ln π(y_t) with respect to the logits)",
            formula=_pe(lambda e, z: torch.softmax(z, -1) - e),
            source="stats.stackexchange.com/questions/560391: the cross-entropy loss's gradient with respect to the logits is softmax − one-hot, the opposite sign",
        ),
        Mistake(
            "no-one-hot",
            "you returned −softmax without the one-hot vector of the token: the error is e_y − π(·)",
            formula=_pe(lambda e, z: -torch.softmax(z, -1)),
            source="arXiv 2505.18830 (Deng et al.) §7.2: α is an inner product of prediction errors e_y − π(·)",
        ),
        Mistake(
            "log-softmax",
            "you subtracted log_softmax; the error subtracts the probabilities (softmax)",
            formula=_pe(lambda e, z: e - torch.log_softmax(z, -1)),
            source="arXiv 2505.18830 (Deng et al.) §7.2: the prediction error e_y − π(·) subtracts the probabilities π",
        ),
        Mistake(
            "one-hot-only",
            "you returned the one-hot vectors only; subtract the softmax probabilities",
            formula=_pe(lambda e, z: e.clone()),
            source="arXiv 2505.18830 (Deng et al.) §7.2: the prediction error e_y − π(·) includes the model's probabilities",
        ),
        Mistake(
            "softmax-over-positions",
            "you took the softmax over the positions (dim 0); each position has its own distribution over the vocabulary: softmax over dim -1",
            formula=_pe(lambda e, z: e - torch.softmax(z, 0)),
            source="fxia22/pointnet.pytorch#27: log_softmax applied along the batch instead of the class channels, fixed",
        ),
        Mistake(
            "softmax-without-max-shift",
            "you computed softmax as exp(z) / sum(exp(z)): exp overflows for large logits (inf / inf is NaN); subtract each row's max first, or use torch.softmax",
            formula=_pe(lambda e, z: e - torch.exp(z) / torch.exp(z).sum(-1, keepdim=True)),
            source="pyg-team/pytorch_geometric#53: a softmax computed by exp without subtracting the row max gave NaN, fixed by subtracting it",
        ),
        Mistake(
            "causal-shift",
            "you shifted tokens against logits as for a causal LM's raw outputs (T − 1 rows); here row t of logits already predicts tokens[t]: do not shift",
            formula=_pe(lambda e, z: e[1:] - torch.softmax(z[:-1], -1)),
            source="huggingface/trl#1172: causal-LM code shifts logits against labels because the model predicts the next token",
        ),
        Mistake(
            "no-validation",
            "invalid inputs (wrong dimensions or lengths, float tokens, token ids outside [0, V), NaN logits) must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
    ),
)


# -- token_scores ----------------------------------------------------------------------------


def _ts_case(na: int, nb: int, d: int, v: int):
    def make(rng):
        return (
            _t(rng.standard_normal((na, d))),
            _errors(rng, na, v),
            _t(rng.standard_normal((nb, d))),
            _errors(rng, nb, v),
        )

    return make


def _ts(formula):
    """A formula of (α = err_a @ err_b.T, ⟨h_a, h_b⟩ = h_a @ h_b.T), both (Na, Nb)."""
    return lambda h_a, err_a, h_b, err_b: formula(err_a @ err_b.T, h_a @ h_b.T)


def _cosine_scores(h_a, err_a, h_b, err_b):
    """Eq. 7 with the cosine similarity of the hidden states instead of their inner product."""
    unit = torch.nn.functional.normalize
    return ((err_a @ err_b.T) * (unit(h_a, dim=1) @ unit(h_b, dim=1).T)).sum(dim=1)


def _self_pairs_dropped(h_a, err_a, h_b, err_b):
    """Eq. 7 with each token's pair with itself left out when set a and set b are the same
    tokens (an "other tokens only" reading); the same as Eq. 7 for two different sets."""
    pairs = (err_a @ err_b.T) * (h_a @ h_b.T)
    if h_a.shape == h_b.shape and torch.equal(h_a, h_b) and torch.equal(err_a, err_b):
        pairs = pairs - torch.diag_embed(torch.diagonal(pairs))
    return pairs.sum(dim=1)


_H = _t([[1.0, 0.0], [0.0, 2.0]])
_E = _t([[0.5, -0.5], [-0.5, 0.5]])
_HA = _t([[1.0, 2.0], [-1.0, 0.5]])
_EA = _t([[0.6, -0.4, -0.2], [-0.1, -0.3, 0.4]])
_HB = _t([[0.5, 1.0], [2.0, -1.0], [0.0, 1.5]])
_EB = _t([[0.7, -0.5, -0.2], [-0.2, 0.9, -0.7], [0.3, 0.3, -0.6]])

TOKEN_SCORES = FunctionSpec(
    "token_scores",
    anchors={
        "example": ([0.5, 2.0], "the docstring's example"),
        # row 1: α = (0.66, -0.34, 0.18), ⟨h, h⟩ = (2.5, 0, 3): 1.65 + 0 + 0.54
        # row 2: α = (0, -0.53, -0.36), ⟨h, h⟩ = (-1.5, -2.5, 0.75): 0 + 1.325 - 0.27
        "two-by-three": ([2.19, 1.055], "by hand, Σ_j α_ij·⟨h_a,i, h_b,j⟩"),
    },
    rtol=1e-4,  # sums of Na x Nb float32 products: summation order matters
    atol=1e-4,
    cases=(
        Case("example", (_H, _E, _H, _E), note="the docstring's example: [0.5, 2.0]"),
        Case("two-by-three", (_HA, _EA, _HB, _EB), note="2 tokens scored against 3"),
        Case("random", make=_ts_case(5, 7, 8, 6), note="5 tokens against 7, D = 8, V = 6"),
        Case("random-square", make=_ts_case(6, 6, 4, 5), note="6 tokens against 6"),
        Case(
            "random-single",
            make=_ts_case(1, 9, 16, 12),
            note="one token against 9",
            kind="edge",
        ),
        Case(
            "random-large",
            make=_ts_case(40, 60, 32, 20),
            note="40 tokens against 60, D = 32",
        ),
        Case(
            "one-dim",
            (_t([1.0, 0.0]), _E, _H, _E),
            raises=ValueError,
            note="a 1-D h_a raises ValueError",
        ),
        Case(
            "rows-a",
            (_H, _EA[:1], _H, _E),
            raises=ValueError,
            note="h_a and err_a with different row counts raise ValueError",
        ),
        Case(
            "rows-b",
            (_HA, _EA, _HB, _EB[:2]),
            raises=ValueError,
            note="h_b and err_b with different row counts raise ValueError",
        ),
        Case(
            "hidden-size",
            (_HA, _EA, torch.ones(3, 3), _EB),
            raises=ValueError,
            note="different hidden sizes raise ValueError",
        ),
        Case(
            "vocab-size",
            (_HA, _EA, _HB, torch.zeros(3, 4)),
            raises=ValueError,
            note="different vocabulary sizes raise ValueError",
        ),
        Case(
            "empty-b",
            (_HA, _EA, torch.zeros(0, 2), torch.zeros(0, 3)),
            raises=ValueError,
            note="an empty set b raises ValueError",
        ),
        Case(
            "empty-a",
            (torch.zeros(0, 2), torch.zeros(0, 3), _HB, _EB),
            raises=ValueError,
            note="an empty set a raises ValueError",
        ),
        Case(
            "list-input",
            ([[1.0, 2.0]], _EA[:1], _HB, _EB),
            raises=ValueError,
            note="a list instead of a tensor raises ValueError",
        ),
        Case(
            "int-tensor",
            (torch.tensor([[1, 0]]), _EA[:1], _HB, _EB),
            raises=ValueError,
            note="an integer tensor raises ValueError",
        ),
        Case(
            "nan-entry",
            (_HA, _t([[float("nan"), 0.0, 0.0], [0.0, 0.0, 0.0]]), _HB, _EB),
            raises=ValueError,
            note="NaN entries raise ValueError",
        ),
    ),
    mistakes=(
        Mistake(
            "alpha-dropped",
            "you summed the hidden-state similarities ⟨h_a, h_b⟩ only; each one is weighted by α = ⟨err_a, err_b⟩",
            formula=_ts(lambda al, s: s.sum(dim=1)),
            source="arXiv 2505.18830 (Deng et al.) §4.1, Cor. 4.5: a negative token's effect grows with α · ⟨h⁺, h⁻⟩, not with the similarity alone",
        ),
        Mistake(
            "hidden-dropped",
            "you summed α = ⟨err_a, err_b⟩ only; each α multiplies the hidden-state similarity ⟨h_a, h_b⟩",
            formula=_ts(lambda al, s: al.sum(dim=1)),
            source="arXiv 2505.18830 (Deng et al.) §4.1, Cor. 4.5: the score is α · ⟨h⁺, h⁻⟩, the prediction-error similarity times the hidden-state similarity",
        ),
        Mistake(
            "wrong-axis",
            "you summed over set a's tokens (dim 0); each token of a is summed against all tokens of b (dim 1), giving Na scores",
            formula=_ts(lambda al, s: (al * s).sum(dim=0)),
            source="arXiv 2505.18830 (Deng et al.) §5: one score per token of an incorrect response, against all tokens of the correct responses",
        ),
        Mistake(
            "product-of-sums",
            "you multiplied Σ α by Σ ⟨h_a, h_b⟩; the score sums the products α · ⟨h_a, h_b⟩ pair by pair",
            formula=_ts(lambda al, s: al.sum(dim=1) * s.sum(dim=1)),
            source="arXiv 2505.18830 (Deng et al.) §7.4: the sums may be taken first only inside the matrix inner product of Σ e hᵀ, not of α and ⟨h, h⟩ separately",
        ),
        Mistake(
            "mean-over-b",
            "you averaged over set b's tokens; Eq. 7 sums over them",
            formula=_ts(lambda al, s: (al * s).mean(dim=1)),
            source="arXiv 2505.18830 (Deng et al.) §5: the score sums over all tokens of all correct responses",
        ),
        Mistake(
            "self-pairs-dropped",
            "scoring a set against itself, you left each token's pair with itself out of the sum; "
            "Eq. 7 sums over every token of b, the token itself included (its own term "
            "|err|² · |h|² is the largest)",
            formula=_self_pairs_dropped,
            source=NO_SOURCE,
        ),
        Mistake(
            "cosine-hidden",
            "you normalized the hidden states (cosine similarity); the score uses the raw inner products ⟨h_a, h_b⟩, whose size matters",
            formula=_cosine_scores,
            source=NO_SOURCE,
        ),
        Mistake(
            "no-validation",
            "invalid inputs (not 2-D, mismatched rows, hidden or vocabulary sizes, an empty set, integer tensors, NaN) must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
    ),
)


# -- nthr_weights ----------------------------------------------------------------------------


def _nw_case(shape, n_pos: int):
    """Random scores, β in {0.5, 1.5, 2} and η in {0.125, 0.25, 0.375} (η = 0 and β = 0 are cases
    of their own; never 0.5, where η = 1 − η and a function that weights the selected tokens
    1 − η would equal the reference for some students only); redrawn until some score lies above τ = β · min(pos_mean_scores), some not, and, for
    each other threshold a learner might take (β · max, β · mean, 0, min without β), some score
    lies between it and τ: every draw tells each of them from τ."""

    def make(rng):
        neg = _t(np.round(rng.standard_normal(shape) + 0.5, 3))
        pos = _t(np.round(rng.standard_normal(n_pos) * 0.5 + 0.8, 3))
        return (
            neg,
            pos,
            float(rng.choice([0.5, 1.5, 2.0])),
            float(rng.choice([0.125, 0.25, 0.375])),
        )

    def tells_thresholds_apart(neg, pos, beta, eta) -> bool:
        tau = beta * float(pos.min())
        others = (beta * float(pos.max()), beta * float(pos.mean()), 0.0, float(pos.min()))
        above = neg > tau
        return (
            bool(above.any())
            and not bool(above.all())
            and all(bool(((neg > t) != above).any()) for t in others)
        )

    return until(make, tells_thresholds_apart)


def _nw(tau_fn, pick, swap=False):
    """A formula: τ = tau_fn(pos_mean_scores, β); ``pick(s, τ)`` selects; η there, 1 elsewhere."""

    def formula(neg_scores, pos_mean_scores, beta, eta):
        selected = pick(neg_scores, tau_fn(pos_mean_scores, beta))
        eta_t, one = torch.full_like(neg_scores, eta), torch.ones_like(neg_scores)
        return torch.where(selected, one, eta_t) if swap else torch.where(selected, eta_t, one)

    return formula


def _above(s, tau):
    return s > tau


def _min_tau(p, b):
    return b * p.min()


NTHR_WEIGHTS = FunctionSpec(
    "nthr_weights",
    anchors={
        "example": ([1.0, 0.25, 1.0], "by hand: τ = 1·min(2, 1) = 1, only 3.0 > τ gets η"),
        "tie": ([1.0, 1.0, 0.5], "by hand: τ = 0.75, only 1.0 > τ (strictly)"),
        "negative-threshold": ([1.0, 0.125, 0.125], "by hand: τ = 1.5·(-1) = -1.5"),
    },
    cases=(
        Case(
            "example",
            (_t([0.5, 3.0, 1.0]), _t([2.0, 1.0])),
            {"eta": 0.25},
            note="τ = min(2, 1) = 1: only 3.0 is selected",
        ),
        Case(
            "probe-default",
            (_t([-0.5, 1.5, 0.75, 2.5]), _t([1.0, 0.5, 2.0])),
            note="defaults β = 1, η = 0 (the LLD probe): selected tokens get 0",
        ),
        Case(
            "tie",
            (_t([0.5, 0.75, 1.0]), _t([0.75, 1.25])),
            {"eta": 0.5},
            note="a score equal to τ is not selected (s > τ, strictly)",
            kind="edge",
        ),
        Case(
            "beta-half",
            (_t([0.25, 0.75, 1.5, 3.0]), _t([2.0, 1.0, 4.0])),
            {"beta": 0.5, "eta": 0.0},
            note="β = 0.5 halves the threshold: τ = 0.5",
        ),
        Case(
            "two-dim",
            (_t([[0.1, 2.0, -1.0], [1.5, 0.3, 0.9]]), _t([0.2, 0.8])),
            {"beta": 2.0, "eta": 0.5},
            note="neg_scores of shape (2, 3); β = 2",
        ),
        Case(
            "negative-threshold",
            (_t([-2.0, -0.5, 0.25]), _t([-1.0, 0.5])),
            {"beta": 1.5, "eta": 0.125},
            note="a negative min: τ = 1.5 · (-1) = -1.5",
            kind="edge",
        ),
        Case(
            "eta-one",
            (_t([0.5, 3.0, 1.0]), _t([2.0, 1.0])),
            {"eta": 1.0},
            note="η = 1 is allowed: every weight is 1 (NTHR switched off)",
            kind="edge",
        ),
        Case(
            "beta-zero",
            (_t([-0.5, 0.0, 0.25, 2.0]), _t([3.0, 1.0])),
            {"beta": 0.0, "eta": 0.25},
            note="β = 0: τ = 0, every positive score is selected",
            kind="edge",
        ),
        Case("random", make=_nw_case((12,), 3), note="random scores, β and η"),
        Case("random-2d", make=_nw_case((4, 5), 4), note="random (4, 5) scores, β and η"),
        Case(
            "empty-pos",
            (_t([0.5]), torch.zeros(0)),
            raises=ValueError,
            note="no correct response (empty pos_mean_scores) raises ValueError",
        ),
        Case(
            "pos-2d",
            (_t([0.5]), torch.ones(2, 2)),
            raises=ValueError,
            note="pos_mean_scores that are not 1-D raise ValueError",
        ),
        Case(
            "nan-score",
            (_t([float("nan"), 0.5]), _t([1.0])),
            raises=ValueError,
            note="a NaN score raises ValueError",
        ),
        Case(
            "eta-above-one",
            (_t([0.5]), _t([1.0])),
            {"eta": 1.5},
            raises=ValueError,
            note="η = 1.5 raises ValueError",
        ),
        Case(
            "eta-negative",
            (_t([0.5]), _t([1.0])),
            {"eta": -0.1},
            raises=ValueError,
            note="η = -0.1 raises ValueError",
        ),
        Case(
            "beta-negative",
            (_t([0.5]), _t([1.0])),
            {"beta": -1.0},
            raises=ValueError,
            note="β = -1 raises ValueError",
        ),
        Case(
            "list-input",
            ([0.5, 2.0], _t([1.0])),
            raises=ValueError,
            note="a list instead of a tensor raises ValueError",
        ),
        Case(
            "pos-list",
            (_t([0.5, 2.0]), [1.0, 0.5]),
            raises=ValueError,
            note="pos_mean_scores as a list raises ValueError",
        ),
        Case(
            "int-scores",
            (torch.tensor([0, 3, 1]), _t([1.0])),
            {"eta": 0.25},
            raises=ValueError,
            note="integer scores raise ValueError",
        ),
    ),
    mistakes=(
        Mistake(
            "max-threshold",
            "you set τ from the max of the correct responses' mean scores; Algorithm 1 uses the min",
            formula=_nw(lambda p, b: b * p.max(), _above),
            source="arXiv 2505.18830 (Deng et al.) §5.2, Algorithm 1: τ = β · min of the correct responses' mean scores",
        ),
        Mistake(
            "mean-threshold",
            "you set τ from the mean of the correct responses' mean scores; Algorithm 1 uses the min",
            formula=_nw(lambda p, b: b * p.mean(), _above),
            source="arXiv 2505.18830 (Deng et al.) §5.2, Algorithm 1: τ = β · min of the correct responses' mean scores",
        ),
        Mistake(
            "zero-threshold",
            "you selected the scores above 0; the threshold is τ = β · min(pos_mean_scores), which is 0 only when β = 0",
            formula=_nw(lambda p, b: 0.0, _above),
            source="arXiv 2505.18830 (Deng et al.) §5.1 vs Algorithm 1: a token harms the correct responses when s⁻ ≥ 0, but NTHR selects s⁻ > β · min s̄⁺",
        ),
        Mistake(
            "beta-ignored",
            "you left out β: τ = β · min(pos_mean_scores)",
            formula=_nw(lambda p, b: p.min(), _above),
            source="arXiv 2505.18830 (Deng et al.) §7.6, Table 4: β scales the threshold τ (ablation over β)",
        ),
        Mistake(
            "ge",
            "you selected scores ≥ τ; a token is selected only when s > τ (strictly)",
            formula=_nw(_min_tau, lambda s, t: s >= t),
            source="arXiv 2505.18830 (Deng et al.) Algorithm 1: a token is selected when its score exceeds τ",
        ),
        Mistake(
            "below",
            "you selected the tokens below τ; NTHR softens the tokens ABOVE τ, those most aligned with correct responses",
            formula=_nw(_min_tau, lambda s, t: s < t),
            source="arXiv 2505.18830 (Deng et al.) §5.2, Algorithm 1: the tokens with scores above τ are softened",
        ),
        Mistake(
            "eta-on-unselected",
            "you gave η to the unselected tokens and 1 to the selected ones; it is the other way round",
            formula=_nw(_min_tau, _above, swap=True),
            source="arXiv 2505.18830 (Deng et al.) Algorithm 1: the selected tokens' advantages are scaled by η, the others are kept",
        ),
        Mistake(
            "eta-everywhere",
            "you gave η to every token; only the tokens with s > τ get η, the others keep weight 1 (η on all tokens did worse than GRPO in the paper's ablation)",
            formula=lambda neg_scores, pos_mean_scores, beta, eta: torch.full_like(neg_scores, eta),
            source="arXiv 2505.18830 (Deng et al.) §7.6, Table 4: β = −∞ applies η to all incorrect tokens and does worse than GRPO",
        ),
        Mistake(
            "eta-hardcoded-zero",
            "you gave the selected tokens weight 0 whatever eta is (the one-step probe's setting); give them the eta argument",
            formula=lambda s, p, beta, eta: _nw(_min_tau, _above)(s, p, beta, 0.0),
            source="arXiv 2505.18830 (Deng et al.) §5.3 vs §7.3: η = 0 in the one-step probe, η = 2·|0.5 − p| in training",
        ),
        Mistake(
            "no-validation",
            "invalid inputs (empty or non-1-D pos_mean_scores, NaN scores, η outside [0, 1], negative β, lists) must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
    ),
)


# -- eta_schedule ----------------------------------------------------------------------------


def _rates(rng):
    return (_t(rng.integers(0, 9, size=10) / 8),)  # success rates of groups of 8


def _eta(formula):
    """A formula of (p, abs), on a tensor as on a float, as the reference returns."""

    def wrong(success_rate):
        if isinstance(success_rate, torch.Tensor):
            return formula(success_rate, torch.abs)
        return float(formula(float(success_rate), abs))

    return wrong


ETA_SCHEDULE = FunctionSpec(
    "eta_schedule",
    anchors={
        "quarter": (0.5, "CURRICULUM 06: 2·|0.5 - 0.25|"),
        "balanced": (0.0, "CURRICULUM 06: 2·|0.5 - 0.5|"),
        "tensor": ([1.0, 0.5, 0.0, 0.25, 1.0], "CURRICULUM 06: 2·|0.5 - p| for each p"),
    },
    cases=(
        Case("quarter", (0.25,), note="p = 0.25: η = 0.5"),
        Case("three-quarters", (0.75,), note="p = 0.75: η = 0.5"),
        Case("all-correct", (1.0,), note="p = 1: η = 1", kind="edge"),
        Case("all-wrong", (0.0,), note="p = 0: η = 1", kind="edge"),
        Case("balanced", (0.5,), note="p = 0.5: η = 0", kind="edge"),
        Case("tensor", (_t([0.0, 0.25, 0.5, 0.625, 1.0]),), note="a tensor of success rates"),
        Case("tensor-2d", (_t([[0.125, 0.875], [0.5, 0.375]]),), note="a (2, 2) tensor"),
        Case("random", make=_rates, note="random success rates of groups of 8"),
        Case("above-one", (1.5,), raises=ValueError, note="p = 1.5 raises ValueError"),
        Case("negative", (-0.1,), raises=ValueError, note="p = -0.1 raises ValueError"),
        Case("nan", (float("nan"),), raises=ValueError, note="p = NaN raises ValueError"),
        Case(
            "tensor-out-of-range",
            (_t([0.5, 1.25]),),
            raises=ValueError,
            note="a tensor with a rate above 1 raises ValueError",
        ),
        Case(
            "int-tensor",
            (torch.tensor([0, 1]),),
            raises=ValueError,
            note="an integer tensor raises ValueError",
        ),
        Case(
            "tensor-negative",
            (_t([0.5, -0.25]),),
            raises=ValueError,
            note="a tensor with a negative rate raises ValueError",
        ),
        Case(
            "tensor-nan",
            (_t([0.5, float("nan")]),),
            raises=ValueError,
            note="a tensor holding NaN raises ValueError",
        ),
    ),
    mistakes=(
        Mistake(
            "no-abs",
            "you left out the absolute value: 2·(0.5 − p) is negative when most of the group is right; η = 2·|0.5 − p|",
            formula=_eta(lambda p, ab: 2 * (0.5 - p)),
            source="arXiv 2505.18830 (Deng et al.) §7.3: η = 2 × |0.5 − p|, p the success rate",
        ),
        Mistake(
            "no-factor-2",
            "you left out the factor 2: |0.5 − p| only reaches 0.5; η = 2·|0.5 − p| reaches 1 for all-right or all-wrong groups",
            formula=_eta(lambda p, ab: ab(0.5 - p)),
            source="arXiv 2505.18830 (Deng et al.) §7.3: η = 2 × |0.5 − p|, p the success rate",
        ),
        Mistake(
            "inverted",
            "you computed 1 − 2·|0.5 − p|: η must be small for balanced groups (p near 0.5), where LLD is strongest, and 1 for lopsided ones",
            formula=_eta(lambda p, ab: 1 - 2 * ab(0.5 - p)),
            source="arXiv 2505.18830 (Deng et al.) §7.3: the schedule penalizes questions with success rates near 0.5 less",
        ),
        Mistake(
            "eta-p",
            "you used η = p, one of the paper's ablation variants; this notebook's schedule (the paper's training setting) is η = 2·|0.5 − p|",
            formula=_eta(lambda p, ab: p * 1.0),
            source="arXiv 2505.18830 (Deng et al.) §7.6, Table 5: η = p, η = 1 − p and η = 2·|0.5 − p| compared; 2·|0.5 − p| is adopted",
        ),
        Mistake(
            "eta-one-minus-p",
            "you used η = 1 − p, one of the paper's ablation variants; this notebook's schedule (the paper's training setting) is η = 2·|0.5 − p|",
            formula=_eta(lambda p, ab: 1 - p),
            source="arXiv 2505.18830 (Deng et al.) §7.6, Table 5: η = p, η = 1 − p and η = 2·|0.5 − p| compared; 2·|0.5 − p| is adopted",
        ),
        Mistake(
            "squared",
            "you squared the distance, 4·(0.5 − p)²; η is linear in it: 2·|0.5 − p| (0.5 at p = 0.25, not 0.25)",
            formula=_eta(lambda p, ab: 4 * (0.5 - p) ** 2),
            source=NO_SOURCE,
        ),
        Mistake(
            "no-validation",
            "success rates outside [0, 1], NaN, or integer tensors must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
    ),
)

SPEC = AssignmentSpec("06_nthr", (PREDICTION_ERRORS, TOKEN_SCORES, NTHR_WEIGHTS, ETA_SCHEDULE))
