"""05_grpo_lld: cases and known mistakes for group_advantages, sequence_logprobs,
likelihood_change and lld_rate.

Inputs are float32 torch tensors built from the case generator, so tolerances
are float32 ones (about 1e-5 relative). Each mistake is one entry: its diagnosis
and its wrong ``formula``, which runs after the reference has validated the inputs
(see spec.Mistake), so that it differs only in its arithmetic; the ``unchecked``
ones are the reference with its input checks removed.
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


def _t(x, dtype=torch.float32) -> torch.Tensor:
    return torch.tensor(np.asarray(x), dtype=dtype)


# -- group_advantages ------------------------------------------------------------------------


def _binary_rewards(n_groups: int, g: int):
    def make(rng):
        return (_t(rng.integers(0, 2, size=(n_groups, g))),)

    return make


def _small_rewards(rng):
    """Groups whose std lies in [2e-3, 5e-3] on every draw: eps = 1e-6 inside or outside the
    square root then differs by 2 … 12 %, while a 1e-8 stabiliser added to std + eps (as the
    field writes it) moves an advantage by at most 5e-6 of itself, inside the tolerance."""

    def make(rng):
        return (_t(3e-3 * rng.standard_normal((4, 6))),)

    def spread(rewards) -> bool:
        std = rewards.double().std(dim=1)
        return bool(((std >= 2e-3) & (std <= 5e-3)).all())

    return until(make, spread)(rng)


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


def _batch_std(rewards, eps):
    """Centred within each group, scaled by the std of the whole batch."""
    r = rewards.float()
    return (r - r.mean(dim=1, keepdim=True)) / (r.std() + eps)


def _rloo(rewards, eps):
    """The leave-one-out baseline: each reward minus the mean of the other G - 1."""
    r = rewards.float()
    return r - (r.sum(dim=1, keepdim=True) - r) / (r.shape[1] - 1)


GROUP_ADVANTAGES = FunctionSpec(
    "group_advantages",
    anchors={
        # mean 0.5, Bessel std sqrt(4·0.25/3) = sqrt(1/3), eps 1e-6 outside the root
        "half-correct": (
            [[d / (math.sqrt(1 / 3) + 1e-6) for d in (0.5, -0.5, -0.5, 0.5)]],
            "by hand: ±0.5 / (sqrt(1/3) + 1e-6)",
        ),
        # std of (1, 0) with Bessel's correction: sqrt(0.5)
        "pair": ([[d / (math.sqrt(0.5) + 1e-6) for d in (0.5, -0.5)]], "by hand"),
        # row 2 (0, 1, 0.5): mean 0.5, std sqrt(0.5/2) = 0.5
        "equal-eps0": ([[0.0, 0.0, 0.0], [-1.0, 1.0, 0.0]], "by hand"),
    },
    cases=(
        Case("half-correct", (_t([[1, 0, 0, 1]]),), note="two of four correct: ±0.866025"),
        Case(
            "two-groups",
            (_t([[1, 0, 0, 0], [0, 1, 1, 1]]),),
            note="one correct of four, three of four",
        ),
        Case(
            "pair",
            (_t([[1.0, 0.0]]),),
            note="G = 2: std with Bessel's correction is 0.707107, advantages ±0.707107",
            kind="edge",
        ),
        Case(
            "equal-groups",
            (_t([[1, 1, 1, 1], [0, 0, 0, 0], [1, 0, 1, 0]]),),
            note="groups of equal rewards get zeros",
            kind="edge",
        ),
        Case(
            "equal-eps0",
            (_t([[0.5, 0.5, 0.5], [0.0, 1.0, 0.5]]), 0.0),
            note="eps = 0: a group of equal rewards still gets zeros, not NaN",
            kind="edge",
        ),
        Case(
            "equal-rounded",
            (_t([[0.85, 0.85, 0.85], [0.45, 0.45, 0.45], [0.1, 0.1, 0.1], [0.9, 0.1, 0.45]]),),
            note="equal rewards that float32 cannot hold exactly (0.85, 0.45, 0.1): the float32 "
            "mean of such a group can be a rounding error off (it is for 0.85), yet each such "
            "group still gets zeros",
            kind="edge",
        ),
        Case(
            "nearly-equal",
            (_t([[0.0, 0.005, 0.0, 0.005], [1.0, 0.0, 0.0, 0.0]]), 0.01),
            note="rewards 0.005 apart, less than eps = 0.01, are not equal: (r − mean) / (std "
            "+ eps), ±0.194, not zeros",
        ),
        Case(
            "eps-above-std",
            (_t([[1, 0, 0, 1], [0, 1, 1, 1]]),),
            {"eps": 1.0},
            note="eps = 1 is above each group's std: it is added to the std (±0.317 in the "
            "first group), not a floor under it",
        ),
        Case(
            "large-eps",
            (_t([[1, 0, 0, 1, 1, 0]]),),
            {"eps": 0.1},
            note="eps = 0.1 is added to the std, outside the square root",
        ),
        Case(
            "int-rewards",
            (torch.tensor([[1, 0, 1], [0, 0, 1]]),),
            note="integer rewards give float advantages",
        ),
        Case(
            "random-binary",
            make=_binary_rewards(6, 8),
            note="random 0/1 rewards, 6 groups of 8",
        ),
        Case(
            "random-binary-small",
            make=_binary_rewards(5, 3),
            note="random 0/1 rewards, 5 groups of 3",
        ),
        Case(
            "random-small-spread",
            make=_small_rewards,
            note="rewards with std about 1e-3 and the default eps",
        ),
        Case("random-eps", make=_rewards_with_eps, note="continuous rewards with a larger eps"),
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
            source="NVIDIA/TorchFort#38: a PPO advantage std was missing Bessel's correction and was fixed",
        ),
        Mistake(
            "eps-in-sqrt",
            "you put eps inside the square root, sqrt(var + eps); it is added to the std: (r - mean) / (std + eps)",
            formula=_adv(_eps_in_sqrt),
            source="keras-team/keras#8726: moves epsilon from the variance to the denominator, noting that sqrt(epsilon) is much larger than epsilon",
        ),
        Mistake(
            "no-zero-for-equal",
            "a group whose rewards are all equal must get zeros, whatever eps is: with eps = 0 you divided 0 by 0 (NaN), "
            "and for equal rewards that float32 cannot hold exactly (three 0.85s) the mean is a rounding error off, "
            "which dividing by std + eps (about 1e-6) blows up to about 0.06; test each group for equal rewards and give it zeros",
            formula=_adv(_bessel, zero_equal=False),
            source="NVIDIA-NeMo/RL#4161: fp32 rounding left a tiny std for identical non-dyadic rewards (0.35) and multiplied an advantage about 4000 times",
        ),
        Mistake(
            "eps-ignored",
            "you ignored the eps argument (a fixed stabiliser, or none): divide by std + eps with "
            "the eps you are given (see the large-eps and random-eps cases)",
            formula=lambda rewards, eps: _adv(_bessel)(rewards, 1e-6),
            source=NO_SOURCE,
        ),
        Mistake(
            "eps-1e-4",
            "you added a fixed 1e-4 to the std where the eps argument (default 1e-6) belongs: a "
            "different eps moves every advantage of a group whose std is small (std about 1e-3: by "
            "about 10 %); pass eps through",
            formula=lambda rewards, eps: _adv(_bessel)(rewards, 1e-4),
            source="huggingface/trl trl/trainer/grpo_trainer.py@d2b69d7: GRPOTrainer scales advantages by (std_grouped_rewards + 1e-4), a fixed constant",
        ),
        Mistake(
            "batch-normalized",
            "you standardized with the mean and std of the whole batch; GRPO standardizes within each group (row)",
            formula=_adv(_bessel, per_group=False),
            source="XU-YIJIE/grpo-flat#2: advantages were normalized over the whole batch and fixed to per-group statistics",
        ),
        # TRL's scale_rewards="batch" (huggingface/trl#3935) and verl's RF++-baseline are the same
        # computation on purpose; here the contract asks for the group's own std.
        Mistake(
            "batch-std",
            "you centred each group on its own mean but divided by the std of the whole batch; divide by the group's own std (dim 1) as well",
            formula=_batch_std,
            source="NVIDIA-NeMo/RL#1423: a review found a per-prompt std immediately overwritten by a global std",
        ),
        Mistake(
            "mean-only",
            "you only subtracted the group mean (that is Dr. GRPO's advantage); this function also divides by std + eps",
            formula=lambda rewards, eps: (
                rewards.float() - rewards.float().mean(dim=1, keepdim=True)
            ),
            source="thinking-machines-lab/tinker-cookbook#579: mean-centred advantages without the std, on purpose (Dr. GRPO)",
        ),
        Mistake(
            "rloo-baseline",
            "you subtracted the mean of the other G - 1 rewards (RLOO's leave-one-out baseline) and did not divide by the std; "
            "GRPO subtracts the mean of the whole group, then divides by its std + eps",
            formula=_rloo,
            source="volcengine/verl verl/trainer/ppo/core_algos.py@012be9d: an RLOO estimator is registered next to GRPO's",
        ),
        Mistake(
            "no-validation",
            "invalid inputs (not a 2-D tensor, G < 2, NaN rewards, negative eps) must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
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


def _mean_over_t(picked, m):
    return _masked_sum(picked, m) / m.shape[1]


def _causal_shift(logits, tokens, mask):
    """Logits and tokens shifted against each other, as for a raw causal LM's outputs."""
    lp = torch.log_softmax(logits[:, :-1], dim=-1)
    picked = lp.gather(-1, tokens[:, 1:].long().unsqueeze(-1)).squeeze(-1)  # (B, T - 1)
    return _masked_sum(picked, mask[:, 1:].bool())


def _mask_shifted(logits, tokens, mask):
    """The mask one position off its tokens: mask[t] applied to the token at t + 1."""
    picked = _picked(_log_softmax, lambda p, m: p)(logits, tokens, mask)  # (B, T)
    return _masked_sum(picked[:, 1:], mask[:, :-1].bool())


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
    split=GRADIENT_SPLIT,
    with_gradient=("logits",),
    anchors={
        "uniform": ([2 * math.log(1 / 4)], "by hand: 2·log(1/4) = -2.772589"),
        # row 1: log_softmax of (0, 200, 0) at 0 and of (3, -1, 0.5) at 2; row 2: the same
        # logits, the favourite (200) picked at the first position
        "unlikely-token": (
            [
                -200
                - math.log(1 + 2 * math.exp(-200))
                + 0.5
                - math.log(math.exp(3) + math.exp(-1) + math.exp(0.5)),
                -math.log(1 + 2 * math.exp(-200))
                + 0.5
                - math.log(math.exp(3) + math.exp(-1) + math.exp(0.5)),
            ],
            "by hand",
        ),
    },
    cases=(
        Case(
            "uniform",
            _UNIFORM,
            note="uniform logits, two unmasked tokens: 2·log(1/4) = -2.772589",
        ),
        Case("small", _SMALL, note="two hand-written responses, lengths 3 and 2 (float mask)"),
        Case(
            "bool-mask",
            (_SMALL[0], _SMALL[1], _SMALL[2].bool()),
            note="the same with a bool mask",
        ),
        Case(
            "random-prefix",
            make=_logits_case(4, 6, 7),
            note="random logits, responses followed by padding",
        ),
        Case(
            "random-prompt-masked",
            make=_logits_case(3, 7, 5, prefix_mask=False),
            note="random logits, prompt positions masked out",
        ),
        Case(
            "random-int-mask",
            make=_logits_case(5, 5, 11, scale=4.0, int_mask=True),
            note="random peaked logits, 0/1 integer mask",
        ),
        Case(
            "empty-mask-row",
            (_SMALL[0], _SMALL[1], _t([[1, 1, 1], [0, 0, 0]])),
            note="a row whose mask is all 0 (no response token) has log likelihood 0",
            kind="edge",
        ),
        Case(
            "unlikely-token",
            # the second row picks the favourite itself: log(softmax) is right there, while a
            # softmax written as exp(z) / sum(exp(z)) overflows (inf / inf): the two mistakes
            # that give -inf on the first row are told apart
            (
                _t([[[0.0, 200.0, 0.0], [3.0, -1.0, 0.5]]] * 2),
                torch.tensor([[0, 2], [1, 2]]),
                _t([[1, 1], [1, 1]]),
            ),
            note="a token 200 below the favourite: its log probability is about -200, "
            "where softmax rounds the probability to 0 in float32 (and, in a second row, the "
            "favourite itself, where exp(200) overflows float32)",
            kind="edge",
        ),
        Case(
            "grad-small",
            _SMALL,
            kind="gradient",
            note="the gradient of the two hand-written responses: one-hot minus softmax at "
            "each response token, 0 at the padding",
            rule="with gradient",
        ),
        Case(
            "grad-random-prefix",
            make=_logits_case(4, 6, 7),
            kind="gradient",
            note="the gradient on random logits, responses followed by padding",
            rule="with gradient",
        ),
        Case(
            "grad-random-prompt-masked",
            make=_logits_case(3, 7, 5, prefix_mask=False),
            kind="gradient",
            note="the gradient on random logits, prompt positions masked out",
            rule="with gradient",
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
            source="huggingface/trl#789: TRL's DPO log-prob helper returns either the sum or the average of the token log-probs",
        ),
        Mistake(
            "mean-over-T",
            "you divided the masked sum by T, the padded length; the sequence log likelihood is the masked sum itself, with no division",
            formula=_picked(_log_softmax, _mean_over_t),
            source="jingyaogong/minimind#298: a DPO loss averaged token log-probs with .mean(dim=1), dividing by the padded length",
        ),
        Mistake(
            "mask-ignored",
            "you summed over all positions and ignored the mask: padding and prompt positions must not count",
            formula=_picked(_log_softmax, _unmasked_sum),
            source="Goekdeniz-Guelmez/mlx-lm-lora#88: right padding had been counted in get_logps' target mask",
        ),
        Mistake(
            "mask-shifted",
            "your mask is one position off its tokens; weight the log probability of tokens[b, t] by mask[b, t], at the same t",
            formula=_mask_shifted,
            source="Goekdeniz-Guelmez/mlx-lm-lora#80: the mask was applied at input-token positions instead of target-token positions",
        ),
        Mistake(
            "causal-shift",
            "you shifted logits and tokens by one as for a causal LM's raw outputs; here logits[b, t] already predicts tokens[b, t]: do not shift",
            formula=_causal_shift,
            source="AI-Hypercomputer/maxtext#2103: an off-by-one alignment between logits and tokens made real tokens look extremely unlikely",
        ),
        Mistake(
            "raw-logits",
            "you gathered the raw logits; take log_softmax over the vocabulary first",
            formula=_picked(lambda x: x, _masked_sum),
            source="flowersteam/lamorel#37: a scoring function used the logits without log_softmax",
        ),
        Mistake(
            "softmax-over-positions",
            "you normalized over the positions (dim 1); log_softmax goes over the vocabulary (the last dim)",
            formula=_picked(lambda x: torch.log_softmax(x, dim=1), _masked_sum),
            source="ctallec/world-models#10: a softmax taken over the batch dimension, confirmed and fixed",
        ),
        Mistake(
            "log-of-softmax",
            "you took torch.log(torch.softmax(...)); for a very unlikely token softmax rounds the probability to 0 and the log "
            "gives -inf: use torch.log_softmax, which stays finite",
            formula=_picked(lambda x: torch.log(torch.softmax(x, dim=-1)), _masked_sum),
            source="PyTorch docs, torch.nn.functional.log_softmax: doing log and softmax separately is slower and numerically unstable",
        ),
        Mistake(
            "softmax-without-max-shift",
            "you computed the probabilities as exp(z) / sum(exp(z)) and took their log: exp "
            "overflows float32 for large logits (exp(200) is inf, so a likely token gets inf / inf, "
            "NaN, and an unlikely one 0, whose log is -inf); use torch.log_softmax, which "
            "subtracts each row's max first",
            formula=_picked(
                lambda x: torch.log(torch.exp(x) / torch.exp(x).sum(-1, keepdim=True)),
                _masked_sum,
            ),
            source="pyg-team/pytorch_geometric#53: a softmax computed by exp without subtracting the row max gave NaN, fixed by subtracting it",
        ),
        Mistake(
            "nll-sign",
            "you returned the negative log likelihood (what cross_entropy gives); the sequence log likelihood is its negative, ≤ 0",
            formula=lambda logits, tokens, mask: (
                -_picked(_log_softmax, _masked_sum)(logits, tokens, mask)
            ),
            source="PRIME-RL/PRIME#44: a cross-entropy formula written without its minus sign, acknowledged and fixed",
        ),
        Mistake(
            "logits-detached",
            "no gradient reaches logits: you detached them (or computed from their numbers: .item(), .tolist(), numpy, torch.tensor(...)); the values are right, but the GRPO loss built on them trains nothing. Keep the computation in torch, on the logits themselves",
            formula=lambda logits, tokens, mask: _picked(_log_softmax, _masked_sum)(
                logits.detach(), tokens, mask
            ),
            source=NO_SOURCE,
        ),
        Mistake(
            "no-validation",
            "invalid inputs (wrong shapes, float tokens, token ids outside [0, V), a mask that is not 0/1, NaN logits) must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
    ),
)


# -- likelihood_change -----------------------------------------------------------------------


def _group(g: int, as_int: bool = False):
    """A random group of ``g``; ``as_int``: ``correct`` as a 0/1 integer tensor whose first
    entry is 0 and which is not symmetric, so indexing with it (entries 0 and 1 picked by
    position) gives another mean than masking."""

    def make(rng):
        before = -rng.uniform(2.0, 20.0, size=g)
        after = before + 0.3 * rng.standard_normal(g)
        correct = rng.permutation(np.arange(g) < rng.integers(2, g))  # 2 .. g-1 correct
        if as_int:
            correct[0], correct[-1] = False, True  # x[0] is what x[mask == 0] picks
            return _t(before), _t(after), torch.tensor(correct.astype(np.int64))
        return _t(before), _t(after), torch.tensor(correct)

    # two or more correct responses on every draw, so a sum differs from a mean (one correct
    # response is the one-correct case)
    return until(make, lambda before, after, correct: int(correct.sum()) >= 2)


def _change(formula):
    """A formula of (before, after, correct as bool), returned as a float."""
    return lambda before, after, correct: float(formula(before, after, correct.bool()))


LIKELIHOOD_CHANGE = FunctionSpec(
    "likelihood_change",
    anchors={
        "example": (0.125, "by hand: ((-2.5 + 3) + (-4.25 + 4)) / 2"),
        "one-correct": (0.5, "by hand: -7 + 7.5"),
        # changes 0.5, -0.5 and 0.75 of the three correct responses
        "all-correct": (0.25, "by hand: 0.75 / 3"),
        "displaced": (-0.375, "by hand: (-0.25 - 0.5) / 2"),
    },
    rtol=1e-4,  # a difference of two float32 sums of log probabilities
    atol=1e-5,
    cases=(
        Case(
            "example",
            (_t([-3.0, -5.0, -4.0]), _t([-2.5, -6.0, -4.25]), torch.tensor([True, False, True])),
            note="two correct responses: ((-2.5 + 3) + (-4.25 + 4)) / 2 = 0.125",
        ),
        Case(
            "one-correct",
            (
                _t([-6.0, -7.5, -3.0, -4.0]),
                _t([-6.5, -7.0, -2.0, -4.5]),
                torch.tensor([False, True, False, False]),
            ),
            note="one correct response out of four",
            kind="edge",
        ),
        Case(
            "all-correct",
            (_t([-2.0, -3.5, -1.0]), _t([-2.5, -3.0, -0.25]), torch.tensor([True, True, True])),
            note="every response correct: the mean change of all of them",
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
        ),
        Case(
            "int-mask-uneven",
            (_t([-3.0, -5.0, -4.0]), _t([-2.5, -6.0, -4.25]), torch.tensor([1, 0, 1])),
            note="a 0/1 integer mask (1, 0, 1): a mask, not indices; responses 1 and 3 change by 0.125 on average",
        ),
        Case("random-8", make=_group(8), note="a random group of 8"),
        Case(
            "random-int-mask",
            make=_group(9, as_int=True),
            note="a random group of 9 with a 0/1 integer mask",
        ),
        Case("random-16", make=_group(16), note="a random group of 16"),
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
            source="arXiv 2505.18830 (Deng et al.) §3: the probe evaluates the average change in the log-likelihood of the correct responses",
        ),
        Mistake(
            "diluted-mean",
            "you summed the correct responses' changes but divided by G, the size of the whole group; divide by the number of correct responses",
            formula=_change(
                lambda b, a, c: torch.where(c, a - b, torch.zeros_like(a)).sum() / c.numel()
            ),
            source=NO_SOURCE,
        ),
        Mistake(
            "sign-flipped",
            "you computed before − after; the change is ln π_θ′(y⁺) − ln π_θ(y⁺) (after − before)",
            formula=_change(lambda b, a, c: (b - a)[c].mean()),
            source="arXiv 2505.18830 (Deng et al.) §3: the change from θ to θ′, one update later, of the correct responses' log-likelihood",
        ),
        Mistake(
            "summed",
            "you summed the changes of the correct responses; take their mean",
            formula=_change(lambda b, a, c: (a - b)[c].sum()),
            source="arXiv 2505.18830 (Deng et al.) §3: the average change over the correct responses",
        ),
        Mistake(
            "index-not-mask",
            "you indexed with the integer 0/1 `correct` (x[torch.tensor([1, 0, 1])] picks entries 1, 0 and 1 by position); make it a mask first: correct.bool()",
            formula=lambda before, after, correct: float((after - before)[correct].mean()),
            source="reward-drills, a learner's submission to notebook 05: a learner's (after - before)[correct] with an integer 0/1 correct gave -0.5 instead of 0.125 on (1, 0, 1)",
        ),
        Mistake(
            "incorrect-responses",
            "you averaged over the incorrect responses; LLD is about the correct ones",
            formula=_change(lambda b, a, c: (a - b)[~c].mean()),
            source="arXiv 2505.18830 (Deng et al.) §3-4: lazy likelihood displacement concerns the correct responses y⁺",
        ),
        Mistake(
            "probability-change",
            "you compared probabilities, exp(after) − exp(before); Eq. 2 compares log likelihoods: ln π_θ′(y⁺) − ln π_θ(y⁺)",
            formula=_change(lambda b, a, c: (a.exp() - b.exp())[c].mean()),
            source="arXiv 2505.18830 (Deng et al.) §3: the change in the log-likelihood of the correct responses",
        ),
        Mistake(
            "nan-when-none-correct",
            "with no correct response you returned NaN; raise ValueError so the caller skips the group",
            unchecked=("no correct response",),
            source="arXiv 2505.18830 (Deng et al.) §3: groups whose responses are all correct or all incorrect are filtered out",
        ),
        Mistake(
            "no-validation",
            "invalid inputs (no correct response, tensors that are not 1-D or of different lengths, correct not 0/1, NaN log likelihoods) must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
    ),
)


# -- lld_rate --------------------------------------------------------------------------------


def _changes(n: int):
    """``n`` changes, multiples of 1/8 (exact in float32), and eps 0.125 or -0.25 (eps = 0 is the
    default of the fixed cases); redrawn until some change equals eps (a tie), some lies
    between 0 and eps (so comparing with 0 differs), some is a clear decrease below −|eps| (so
    counting only |change| ≤ eps differs), and the fraction at most eps is not 1/2 (so counting
    the changes above eps differs)."""

    def make(rng):
        return _t(rng.integers(-6, 7, size=n) / 8), float(rng.choice([0.125, -0.25]))

    def stratified(changes, eps) -> bool:
        c = changes.double()
        lo, hi = min(0.0, eps), max(0.0, eps)
        between = (c > lo) & (c <= hi)  # counted by one of c <= 0 and c <= eps only
        return (
            bool((c == eps).any())
            and bool(between.any())
            and 2 * int((c <= eps).sum()) != c.numel()
            and bool((c < -abs(eps)).any())  # a clear decrease, beyond eps of 0
        )

    return until(make, stratified)


LLD_RATE = FunctionSpec(
    "lld_rate",
    anchors={
        "example": (0.5, "by hand: -0.2 and 0 of 4 are ≤ 0"),
        "tie-at-eps": (0.75, "by hand: 3 of 4 are ≤ 0.25"),
        "negative-eps": (1 / 3, "by hand: only -0.25 of 3 is ≤ -0.125"),
    },
    cases=(
        Case(
            "example",
            (_t([-0.2, 0.0, 0.1, 0.3]),),
            note="a change of exactly 0 counts (≤ 0): 0.5",
        ),
        Case(
            "tie-at-eps",
            (_t([-0.5, 0.25, 0.25, 1.0]),),
            {"eps": 0.25},
            note="changes equal to eps count: 0.75",
            kind="edge",
        ),
        Case("none", (_t([0.1, 0.2, 0.4]),), note="all increases: 0", kind="edge"),
        Case(
            "negative-eps",
            (_t([-0.25, -0.0625, 0.5]), -0.125),
            note="eps = -0.125: only clear decreases count",
        ),
        Case(
            "float64",
            (torch.tensor([-1.0, 0.0, 2.0, 3.0, -0.5], dtype=torch.float64),),
            note="float64 changes",
        ),
        Case("random-40", make=_changes(40), note="40 random changes with ties"),
        Case("random-7", make=_changes(7), note="7 random changes with ties"),
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
            source="arXiv 2505.18830 (Deng et al.) §4, Def. 4.1: LLD is a likelihood that decreases or increases only marginally, up to a small ε ≥ 0 (the inequality is not legible in the copy read; ≤ is the curriculum's reading)",
        ),
        Mistake(
            "increases",
            "you counted the changes above eps (likelihood going up); LLD is the fraction with change ≤ eps",
            formula=lambda c, e: int((c > e).sum()) / c.numel(),
            source="arXiv 2505.18830 (Deng et al.) abstract, §4: under LLD the likelihood of correct responses only marginally increases or even decreases",
        ),
        Mistake(
            "abs-band",
            "you counted only the changes within eps of 0 (|change| ≤ eps); a clear decrease is LLD too: count every change ≤ eps",
            formula=lambda c, e: int((c.abs() <= e).sum()) / c.numel(),
            source="arXiv 2505.18830 (Deng et al.) abstract: the likelihood of correct responses marginally increases or even decreases",
        ),
        Mistake(
            "count",
            "you returned how many changes are ≤ eps; return the fraction (divide by the number of groups)",
            formula=lambda c, e: int((c <= e).sum()),
            source=NO_SOURCE,
        ),
        Mistake(
            "percent",
            "you returned a percentage (× 100); the rate is a fraction in [0, 1]",
            formula=lambda c, e: 100 * int((c <= e).sum()) / c.numel(),
            source="broadinstitute/picard#546: metrics named as percents are documented to be fractions",
        ),
        Mistake(
            "eps-ignored",
            "you compared with 0 whatever eps is; use the eps argument",
            formula=lambda c, e: int((c <= 0).sum()) / c.numel(),
            exact=True,  # a share compared with 0 is that share on every input, or it is not
            source="arXiv 2505.18830 (Deng et al.) Def. 4.1: the threshold ε is a parameter of the definition",
        ),
        Mistake(
            "no-validation",
            "invalid inputs (empty, not 1-D, NaN changes, NaN eps) must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
    ),
)

SPEC = AssignmentSpec(
    "05_grpo_lld", (GROUP_ADVANTAGES, SEQUENCE_LOGPROBS, LIKELIHOOD_CHANGE, LLD_RATE)
)
