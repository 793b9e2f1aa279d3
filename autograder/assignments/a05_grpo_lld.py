"""05_grpo_lld: cases and known mistakes for group_advantages, sequence_logprobs,
likelihood_change and lld_rate.

Inputs are float32 torch tensors built from the case generator, so tolerances
are float32 ones (about 1e-5 relative). Each mistake is one entry: its diagnosis
and its wrong ``formula``, which runs after the reference has validated the inputs
(see spec.Mistake), so that it differs only in its arithmetic; the ``unchecked``
ones are the reference with its input checks removed.
"""

from __future__ import annotations

import numpy as np
import torch

from autograder.spec import AssignmentSpec, Case, FunctionSpec, Mistake

F32 = {"rtol": 1e-5, "atol": 1e-6}


def _t(x, dtype=torch.float32) -> torch.Tensor:
    return torch.tensor(np.asarray(x), dtype=dtype)


# -- group_advantages ------------------------------------------------------------------------


def _binary_rewards(n_groups: int, g: int):
    def make(rng):
        return (_t(rng.integers(0, 2, size=(n_groups, g))),)

    return make


def _small_rewards(rng):
    # std about 1e-3: eps = 1e-6 inside or outside the square root then differs by ~40 %
    return (_t(1e-3 * rng.standard_normal((4, 6))),)


def _rewards_with_eps(rng):
    return _t(rng.uniform(-1, 1, size=(3, 5))), float(rng.choice([0.01, 0.1, 0.5]))


def _adv(std_fn, zero_equal: bool = True, per_group: bool = True):
    def formula(rewards, eps):
        r = rewards.float()
        if per_group:
            mean, std = r.mean(dim=1, keepdim=True), std_fn(r, eps, 1)
        else:
            mean, std = r.mean(), std_fn(r.reshape(-1), eps, 0)
        adv = (r - mean) / std
        if zero_equal:
            equal = (r == r[:, :1]).all(dim=1, keepdim=True)
            adv = torch.where(equal, torch.zeros_like(adv), adv)
        return adv

    return formula


def _bessel(r, eps, dim):
    return r.std(dim=dim, keepdim=dim > 0) + eps


def _population(r, eps, dim):
    return r.std(dim=dim, keepdim=dim > 0, unbiased=False) + eps


def _eps_in_sqrt(r, eps, dim):
    return torch.sqrt(r.var(dim=dim, keepdim=dim > 0) + eps)


GROUP_ADVANTAGES = FunctionSpec(
    "group_advantages",
    cases=(
        Case("half-correct", (_t([[1, 0, 0, 1]]),), note="two of four correct: ±0.866025", **F32),
        Case(
            "two-groups",
            (_t([[1, 0, 0, 0], [0, 1, 1, 1]]),),
            note="one correct of four, three of four",
            **F32,
        ),
        Case(
            "pair",
            (_t([[1.0, 0.0]]),),
            note="G = 2: std with Bessel's correction is 0.707107, advantages ±0.707107",
            kind="edge",
            **F32,
        ),
        Case(
            "equal-groups",
            (_t([[1, 1, 1, 1], [0, 0, 0, 0], [1, 0, 1, 0]]),),
            note="groups of equal rewards get zeros",
            kind="edge",
            **F32,
        ),
        Case(
            "equal-eps0",
            (_t([[0.5, 0.5, 0.5], [0.0, 1.0, 0.5]]), 0.0),
            note="eps = 0: a group of equal rewards still gets zeros, not NaN",
            kind="edge",
            **F32,
        ),
        Case(
            "large-eps",
            (_t([[1, 0, 0, 1, 1, 0]]),),
            {"eps": 0.1},
            note="eps = 0.1 is added to the std, outside the square root",
            **F32,
        ),
        Case(
            "int-rewards",
            (torch.tensor([[1, 0, 1], [0, 0, 1]]),),
            note="integer rewards give float advantages",
            **F32,
        ),
        Case(
            "random-binary",
            make=_binary_rewards(6, 8),
            note="random 0/1 rewards, 6 groups of 8",
            **F32,
        ),
        Case(
            "random-binary-small",
            make=_binary_rewards(5, 3),
            note="random 0/1 rewards, 5 groups of 3",
            **F32,
        ),
        Case(
            "random-small-spread",
            make=_small_rewards,
            note="rewards with std about 1e-3 and the default eps",
            **F32,
        ),
        Case(
            "random-eps", make=_rewards_with_eps, note="continuous rewards with a larger eps", **F32
        ),
        Case(
            "one-dim",
            (_t([1, 0, 1]),),
            raises=ValueError,
            note="a 1-D tensor raises ValueError (groups are rows of a 2-D tensor)",
        ),
        Case(
            "single-response",
            (_t([[1.0], [0.0]]),),
            raises=ValueError,
            note="G = 1 raises ValueError (the std divides by G - 1)",
        ),
        Case(
            "nan-reward",
            (_t([[1.0, float("nan"), 0.0]]),),
            raises=ValueError,
            note="a NaN reward raises ValueError",
        ),
        Case(
            "negative-eps",
            (_t([[1, 0, 1]]), -1e-3),
            raises=ValueError,
            note="a negative eps raises ValueError",
        ),
        Case(
            "list-input",
            ([[1.0, 0.0, 1.0]],),
            raises=ValueError,
            note="a list instead of a tensor raises ValueError",
        ),
    ),
    mistakes=(
        Mistake(
            "population-std",
            "you used the population std (dividing by G); GRPO here uses torch.std's default, Bessel's correction (G - 1)",
            formula=_adv(_population),
        ),
        Mistake(
            "eps-in-sqrt",
            "you put eps inside the square root, sqrt(var + eps); it is added to the std: (r - mean) / (std + eps)",
            formula=_adv(_eps_in_sqrt),
        ),
        Mistake(
            "no-zero-for-equal",
            "a group whose rewards are all equal must get zeros; with eps = 0 you divided 0 by 0 (NaN)",
            formula=_adv(_bessel, zero_equal=False),
        ),
        Mistake(
            "batch-normalized",
            "you standardized with the mean and std of the whole batch; GRPO standardizes within each group (row)",
            formula=_adv(_bessel, per_group=False),
        ),
        Mistake(
            "mean-only",
            "you only subtracted the group mean (that is Dr. GRPO's advantage); this function also divides by std + eps",
            formula=lambda rewards, eps: (
                rewards.float() - rewards.float().mean(dim=1, keepdim=True)
            ),
        ),
        Mistake(
            "no-validation",
            "invalid inputs (not a 2-D tensor, G < 2, NaN rewards, negative eps) must raise ValueError",
            unchecked=True,
        ),
    ),
)


# -- sequence_logprobs -----------------------------------------------------------------------


def _logits_case(
    b: int, t: int, v: int, scale: float = 2.0, prefix_mask: bool = True, int_mask: bool = False
):
    def make(rng):
        logits = _t(scale * rng.standard_normal((b, t, v)))
        tokens = torch.tensor(rng.integers(0, v, size=(b, t)), dtype=torch.int64)
        lengths = rng.integers(2, t + 1, size=b)
        pos = np.arange(t)[None, :]
        if prefix_mask:
            m = pos < lengths[:, None]  # response then padding
        else:
            start = rng.integers(1, 3, size=b)  # prompt positions masked out, then the response
            m = (pos >= start[:, None]) & (pos < np.maximum(lengths, start + 2)[:, None])
        mask = torch.tensor(m.astype(np.int64)) if int_mask else torch.tensor(m)
        return logits, tokens, mask

    return make


def _picked(log_probs, reduce):
    """A formula: ``reduce`` over the per-position values that ``log_probs`` gives the tokens."""

    def formula(logits, tokens, mask):
        picked = log_probs(logits).gather(-1, tokens.long().unsqueeze(-1)).squeeze(-1)  # (B, T)
        return reduce(picked, mask.bool())

    return formula


def _log_softmax(logits):
    return torch.log_softmax(logits, dim=-1)


def _masked_sum(picked, m):
    return torch.where(m, picked, torch.zeros_like(picked)).sum(dim=1)


def _masked_mean(picked, m):
    return _masked_sum(picked, m) / m.sum(dim=1).clamp(min=1)


def _unmasked_sum(picked, m):
    return picked.sum(dim=1)


_UNIFORM = (torch.zeros(1, 3, 4), torch.tensor([[1, 2, 3]]), torch.tensor([[1, 1, 0]]))
_SMALL = (
    _t(
        [
            [[2.0, 0.0, -1.0], [0.5, 0.5, 0.0], [1.0, -2.0, 3.0]],
            [[0.0, 1.0, 0.0], [-1.0, 2.0, 0.5], [0.0, 0.0, 0.0]],
        ]
    ),
    torch.tensor([[0, 2, 2], [1, 1, 0]]),
    _t([[1, 1, 1], [1, 1, 0]]),
)

SEQUENCE_LOGPROBS = FunctionSpec(
    "sequence_logprobs",
    cases=(
        Case(
            "uniform",
            _UNIFORM,
            note="uniform logits, two unmasked tokens: 2·log(1/4) = -2.772589",
            **F32,
        ),
        Case(
            "small", _SMALL, note="two hand-written responses, lengths 3 and 2 (float mask)", **F32
        ),
        Case(
            "bool-mask",
            (_SMALL[0], _SMALL[1], _SMALL[2].bool()),
            note="the same with a bool mask",
            **F32,
        ),
        Case(
            "random-prefix",
            make=_logits_case(4, 6, 7),
            note="random logits, responses followed by padding",
            **F32,
        ),
        Case(
            "random-prompt-masked",
            make=_logits_case(3, 7, 5, prefix_mask=False),
            note="random logits, prompt positions masked out",
            **F32,
        ),
        Case(
            "random-int-mask",
            make=_logits_case(5, 5, 11, scale=4.0, int_mask=True),
            note="random peaked logits, 0/1 integer mask",
            **F32,
        ),
        Case(
            "empty-mask-row",
            (_SMALL[0], _SMALL[1], _t([[1, 1, 1], [0, 0, 0]])),
            note="a row whose mask is all 0 (no response token) has log likelihood 0",
            kind="edge",
            **F32,
        ),
        Case(
            "two-dim-logits",
            (torch.zeros(3, 4), torch.tensor([[1, 2, 3]]), torch.tensor([[1, 1, 1]])),
            raises=ValueError,
            note="logits that are not (B, T, V) raise ValueError",
        ),
        Case(
            "tokens-shape",
            (torch.zeros(1, 3, 4), torch.tensor([[1, 2]]), torch.tensor([[1, 1, 1]])),
            raises=ValueError,
            note="tokens of the wrong shape raise ValueError",
        ),
        Case(
            "mask-shape",
            (torch.zeros(1, 3, 4), torch.tensor([[1, 2, 3]]), torch.tensor([[1, 1]])),
            raises=ValueError,
            note="a mask of the wrong shape raises ValueError",
        ),
        Case(
            "token-too-large",
            (torch.zeros(1, 3, 4), torch.tensor([[1, 4, 3]]), torch.tensor([[1, 1, 1]])),
            raises=ValueError,
            note="a token id >= V raises ValueError",
        ),
        Case(
            "negative-token",
            (torch.zeros(1, 3, 4), torch.tensor([[1, -1, 3]]), torch.tensor([[1, 1, 0]])),
            raises=ValueError,
            note="a negative token id raises ValueError",
        ),
        Case(
            "float-tokens",
            (torch.zeros(1, 3, 4), _t([[1, 2, 3]]), torch.tensor([[1, 1, 1]])),
            raises=ValueError,
            note="float tokens raise ValueError",
        ),
        Case(
            "mask-not-binary",
            (torch.zeros(1, 3, 4), torch.tensor([[1, 2, 3]]), torch.tensor([[1, 2, 0]])),
            raises=ValueError,
            note="a mask value other than 0/1 raises ValueError",
        ),
        Case(
            "nan-logits",
            (torch.full((1, 2, 3), float("nan")), torch.tensor([[0, 1]]), torch.tensor([[1, 1]])),
            raises=ValueError,
            note="NaN logits raise ValueError",
        ),
        Case(
            "int-logits",
            (
                torch.zeros(1, 3, 4, dtype=torch.int64),
                torch.tensor([[1, 2, 3]]),
                torch.tensor([[1, 1, 1]]),
            ),
            raises=ValueError,
            note="integer logits raise ValueError",
        ),
        Case(
            "list-logits",
            ([[[0.0, 1.0], [1.0, 0.0]]], torch.tensor([[0, 1]]), torch.tensor([[1, 1]])),
            raises=ValueError,
            note="a nested list instead of a tensor raises ValueError",
        ),
    ),
    mistakes=(
        Mistake(
            "token-mean",
            "you averaged the log probabilities over the response's tokens; the sequence log likelihood is their masked sum",
            formula=_picked(_log_softmax, _masked_mean),
        ),
        Mistake(
            "mask-ignored",
            "you summed over all positions and ignored the mask: padding and prompt positions must not count",
            formula=_picked(_log_softmax, _unmasked_sum),
        ),
        Mistake(
            "raw-logits",
            "you gathered the raw logits; take log_softmax over the vocabulary first",
            formula=_picked(lambda x: x, _masked_sum),
        ),
        Mistake(
            "softmax-over-positions",
            "you normalized over the positions (dim 1); log_softmax goes over the vocabulary (the last dim)",
            formula=_picked(lambda x: torch.log_softmax(x, dim=1), _masked_sum),
        ),
        Mistake(
            "no-validation",
            "invalid inputs (wrong shapes, float tokens, token ids outside [0, V), a mask that is not 0/1, NaN logits) must raise ValueError",
            unchecked=True,
        ),
    ),
)


# -- likelihood_change -----------------------------------------------------------------------


def _group(g: int):
    def make(rng):
        before = -rng.uniform(2.0, 20.0, size=g)
        after = before + 0.3 * rng.standard_normal(g)
        correct = rng.permutation(np.arange(g) < rng.integers(1, g))  # 1 .. g-1 correct
        return _t(before), _t(after), torch.tensor(correct)

    return make


def _change(formula):
    """A formula of (before, after, correct as bool), returned as a float."""
    return lambda before, after, correct: float(formula(before, after, correct.bool()))


LIKELIHOOD_CHANGE = FunctionSpec(
    "likelihood_change",
    cases=(
        Case(
            "example",
            (_t([-3.0, -5.0, -4.0]), _t([-2.5, -6.0, -4.25]), torch.tensor([True, False, True])),
            note="two correct responses: (0.5 - 0.25) / 2 = 0.125",
            rtol=1e-4,
            atol=1e-5,
        ),
        Case(
            "one-correct",
            (
                _t([-6.0, -7.5, -3.0, -4.0]),
                _t([-6.5, -7.0, -2.0, -4.5]),
                torch.tensor([False, True, False, False]),
            ),
            note="one correct response out of four",
            rtol=1e-4,
            atol=1e-5,
            kind="edge",
        ),
        Case(
            "all-correct",
            (_t([-2.0, -3.5, -1.0]), _t([-2.5, -3.0, -0.25]), torch.tensor([True, True, True])),
            note="every response correct: the mean change of all of them",
            rtol=1e-4,
            atol=1e-5,
            kind="edge",
        ),
        Case(
            "displaced",
            (
                _t([-2.0, -3.0, -2.5, -8.0]),
                _t([-2.25, -3.5, -1.0, -8.5]),
                torch.tensor([1, 1, 0, 0]),
            ),
            note="correct responses lose likelihood (LLD); 0/1 integer mask",
            rtol=1e-4,
            atol=1e-5,
        ),
        Case("random-8", make=_group(8), note="a random group of 8", rtol=1e-4, atol=1e-5),
        Case("random-16", make=_group(16), note="a random group of 16", rtol=1e-4, atol=1e-5),
        Case(
            "none-correct",
            (_t([-3.0, -5.0]), _t([-2.5, -6.0]), torch.tensor([False, False])),
            raises=ValueError,
            note="no correct response raises ValueError (the group is skipped)",
        ),
        Case(
            "shape-mismatch",
            (_t([-3.0, -5.0]), _t([-2.5, -6.0, -1.0]), torch.tensor([True, False])),
            raises=ValueError,
            note="tensors of different lengths raise ValueError",
        ),
        Case(
            "two-dim",
            (_t([[-3.0, -5.0]]), _t([[-2.5, -6.0]]), torch.tensor([[True, False]])),
            raises=ValueError,
            note="2-D tensors raise ValueError",
        ),
        Case(
            "correct-not-binary",
            (_t([-3.0, -5.0]), _t([-2.5, -6.0]), torch.tensor([2, 0])),
            raises=ValueError,
            note="a correct flag other than 0/1 raises ValueError",
        ),
        Case(
            "nan-logp",
            (_t([float("nan"), -5.0]), _t([-2.5, -6.0]), torch.tensor([True, False])),
            raises=ValueError,
            note="a NaN log likelihood raises ValueError",
        ),
        Case(
            "list-input",
            ([-3.0, -5.0], _t([-2.5, -6.0]), torch.tensor([True, False])),
            raises=ValueError,
            note="a list instead of a tensor raises ValueError",
        ),
    ),
    mistakes=(
        Mistake(
            "all-responses",
            "you averaged the change over all responses; Eq. 2 averages over the correct ones only",
            formula=_change(lambda b, a, c: (a - b).mean()),
        ),
        Mistake(
            "sign-flipped",
            "you computed before − after; the change is ln π_θ′(y⁺) − ln π_θ(y⁺) (after − before)",
            formula=_change(lambda b, a, c: (b - a)[c].mean()),
        ),
        Mistake(
            "summed",
            "you summed the changes of the correct responses; take their mean",
            formula=_change(lambda b, a, c: (a - b)[c].sum()),
        ),
        Mistake(
            "incorrect-responses",
            "you averaged over the incorrect responses; LLD is about the correct ones",
            formula=_change(lambda b, a, c: (a - b)[~c].mean()),
        ),
        Mistake(
            "nan-when-none-correct",
            "with no correct response you returned NaN; raise ValueError so the caller skips the group",
            unchecked=("no correct response",),
        ),
        Mistake(
            "no-validation",
            "invalid inputs (no correct response, tensors that are not 1-D or of different lengths, correct not 0/1, NaN log likelihoods) must raise ValueError",
            unchecked=True,
        ),
    ),
)


# -- lld_rate --------------------------------------------------------------------------------


def _changes(n: int):
    def make(rng):
        # multiples of 1/8: exact in float32, with ties at 0 and at eps
        return _t(rng.integers(-6, 7, size=n) / 8), float(rng.choice([0.0, 0.125, -0.25]))

    return make


LLD_RATE = FunctionSpec(
    "lld_rate",
    cases=(
        Case(
            "example",
            (_t([-0.2, 0.0, 0.1, 0.3]),),
            note="a change of exactly 0 counts (≤ 0): 0.5",
            **F32,
        ),
        Case(
            "tie-at-eps",
            (_t([-0.5, 0.25, 0.25, 1.0]),),
            {"eps": 0.25},
            note="changes equal to eps count: 0.75",
            kind="edge",
            **F32,
        ),
        Case("none", (_t([0.1, 0.2, 0.4]),), note="all increases: 0", kind="edge", **F32),
        Case(
            "negative-eps",
            (_t([-0.25, -0.0625, 0.5]), -0.125),
            note="eps = -0.125: only clear decreases count",
            **F32,
        ),
        Case(
            "float64",
            (torch.tensor([-1.0, 0.0, 2.0, 3.0, -0.5], dtype=torch.float64),),
            note="float64 changes",
            **F32,
        ),
        Case("random-40", make=_changes(40), note="40 random changes with ties", **F32),
        Case("random-7", make=_changes(7), note="7 random changes with ties", **F32),
        Case("empty", (torch.zeros(0),), raises=ValueError, note="no changes raise ValueError"),
        Case(
            "two-dim",
            (torch.zeros(2, 2),),
            raises=ValueError,
            note="a 2-D tensor raises ValueError",
        ),
        Case(
            "nan-change",
            (_t([0.1, float("nan")]),),
            raises=ValueError,
            note="a NaN change raises ValueError",
        ),
        Case(
            "list-input",
            ([0.1, -0.2],),
            raises=ValueError,
            note="a list instead of a tensor raises ValueError",
        ),
        Case(
            "nan-eps",
            (_t([0.1, -0.2]), float("nan")),
            raises=ValueError,
            note="eps = NaN raises ValueError",
        ),
    ),
    mistakes=(
        Mistake(
            "strict",
            "you counted changes < eps; Def. 4.1 counts change ≤ eps, so a change of exactly eps (0 by default) is LLD",
            formula=lambda c, e: int((c < e).sum()) / c.numel(),
        ),
        Mistake(
            "increases",
            "you counted the changes above eps (likelihood going up); LLD is the fraction with change ≤ eps",
            formula=lambda c, e: int((c > e).sum()) / c.numel(),
        ),
        Mistake(
            "count",
            "you returned how many changes are ≤ eps; return the fraction (divide by the number of groups)",
            formula=lambda c, e: int((c <= e).sum()),
        ),
        Mistake(
            "eps-ignored",
            "you compared with 0 whatever eps is; use the eps argument",
            formula=lambda c, e: int((c <= 0).sum()) / c.numel(),
        ),
        Mistake(
            "no-validation",
            "invalid inputs (empty, not 1-D, NaN changes, NaN eps) must raise ValueError",
            unchecked=True,
        ),
    ),
)

SPEC = AssignmentSpec(
    "05_grpo_lld", (GROUP_ADVANTAGES, SEQUENCE_LOGPROBS, LIKELIHOOD_CHANGE, LLD_RATE)
)
