"""How many losses the feedback explains, on mistakes the catalogue was not written from.

    python benchmarks/heldout_mistakes.py [--list] [ASSIGNMENT ...]

A held-out set of wrong implementations of the graded functions of 01–07, each written as
a careful student would write it (its own code, not a catalogued mutant), with what
differs from the reference in words and the diagnosis ids that say so truly: a catalogued
mistake's id, or an error shape (``shape:sign``, ``shape:factor``, …). Each is graded in
this process (the in-kernel engine, the public default secret).

Among the mistakes that lose at least 10 % of their function's points it counts:

    explained      the first diagnosis is one of the true ones
    misdiagnosed   a diagnosis of the formula (a mistake or a shape; input checks aside)
                   that is not one of the true ones (the gradient line that names no
                   cause, "differs … as your values do", is neither)
    unexplained    no diagnosis of the formula (only the "Not recognised" line)

and prints one line per mistake, then the explained rate (target ≥ 80 %) and the number
of misdiagnoses (target 0). It also counts points, as the target of the feedback is stated:
of every point the mistakes lose, the share that a true diagnosis's cost line carries
(target ≥ 90 %), the share an untrue one carries (target 0), the share a line saying where the
failed checks fall carries ("Where your function goes wrong": true of the outcomes by
construction, counted apart because it names no cause), and what is left to "Not recognised"
or to a line that names no cause; per set and per notebook. ``--list`` prints
each one's feedback as well.

Each mistake runs the reference on the same inputs first, so that it raises where the
reference raises (its input checks are right) and differs only in the value, as a learner's
code that checks its inputs would.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from autograder.notebooks import reference  # noqa: E402
from autograder.scoring import evaluate, kernel  # noqa: E402

LOSS_THRESHOLD = 0.10  # a loss of at least this fraction of the function's points
TARGET = 0.80
POINTS_TARGET = 0.90  # the target: the share of the points lost a true line explains


@dataclass(frozen=True)
class HeldOut:
    assignment: str
    function: str
    what: str  # what differs from the reference, in words
    wrong: Callable  # (ns) -> the wrong computation, called after the reference's checks
    true: frozenset[str]  # diagnosis ids that say truly what differs
    # 1: the first set, from which twelve catalogued mistakes and two error shapes were
    # written (so it no longer measures them as held out); 2: written after those fixes and
    # used for none, the measure of how far the feedback generalises (its misdiagnoses led to
    # two general fixes: the gradient line, the loose match); 3: written after those and
    # graded once before any change (12 / 19 explained, 0 misdiagnosed); the count, clamp,
    # which-checks and which-entries lines came after, so its later figures are not held out
    batch: int = 1


def _h(a: str, f: str, what: str, true: tuple[str, ...] | str = (), batch: int = 1):
    def deco(wrong):
        ids = (true,) if isinstance(true, str) else true
        HELDOUT.append(HeldOut(a, f, what, wrong, frozenset(ids), batch))
        return wrong

    return deco


HELDOUT: list[HeldOut] = []


def build(h: HeldOut, ns: dict) -> Callable:
    """The learner's function: the reference's input checks, then the wrong computation."""
    ref = ns[h.function]
    wrong = h.wrong(ns)

    def learner(*args, **kwargs):
        ref(*args, **kwargs)  # raises where the reference raises
        return wrong(*args, **kwargs)

    learner.__name__ = h.function
    return learner


# -- 01_exact_kl -----------------------------------------------------------------------------

A1 = "01_exact_kl"


@_h(A1, "log_ratios", "abs of each log ratio", "shape:abs")
def _(ns):
    return lambda p, q: [abs(math.log(a / b)) for a, b in zip(p, q)]


@_h(A1, "log_ratios", "log q / p written as log q − log p", ("swapped", "shape:sign"))
def _(ns):
    return lambda p, q: [math.log(b) - math.log(a) for a, b in zip(p, q)]


@_h(A1, "log_ratios", "log10 through np.log10", ("log10", "shape:factor"))
def _(ns):
    return lambda p, q: list(np.log10(np.asarray(p) / np.asarray(q)))


@_h(A1, "forward_kl", "abs on each term p·|log p/q|", "abs-terms")
def _(ns):
    def f(p, q):
        if any(b == 0 and a > 0 for a, b in zip(p, q)):
            return math.inf
        return sum(a * abs(math.log(a / b)) for a, b in zip(p, q) if a > 0)

    return f


@_h(A1, "forward_kl", "the mean of the terms instead of their sum", "shape:factor")
def _(ns):
    def f(p, q):
        if any(b == 0 and a > 0 for a, b in zip(p, q)):
            return math.inf
        return sum(a * math.log(a / b) for a, b in zip(p, q) if a > 0) / len(p)

    return f


@_h(A1, "forward_kl", "log q/p: the negative of the KL", ("shape:sign",))
def _(ns):
    def f(p, q):
        if any(b == 0 and a > 0 for a, b in zip(p, q)):
            return math.inf
        return sum(a * math.log(b / a) for a, b in zip(p, q) if a > 0)

    return f


@_h(A1, "reverse_kl", "the forward KL, written with scipy's rel_entr order", "swapped")
def _(ns):
    fwd = ns["forward_kl"]
    return lambda p, q: fwd(p, q)


@_h(A1, "reverse_kl", "abs on each term", "abs-terms")
def _(ns):
    def f(p, q):
        if any(a == 0 and b > 0 for a, b in zip(p, q)):
            return math.inf
        return sum(b * abs(math.log(b / a)) for a, b in zip(p, q) if b > 0)

    return f


# -- 02_clipped_estimators -------------------------------------------------------------------

A2 = "02_clipped_estimators"


@_h(A2, "k1", "the mean of the log ratios, a number for an array", ("shape:wrong-shape",))
def _(ns):
    return lambda lp, lq: float(np.mean(np.asarray(lp, float) - np.asarray(lq, float)))


@_h(A2, "k1", "log q − log p", ("swapped", "shape:sign"))
def _(ns):
    return lambda lp, lq: np.asarray(lq, float) - np.asarray(lp, float)


@_h(A2, "clipped_k1", "min(0, r) instead of max(0, r)", ("clipped-wrong-side",))
def _(ns):
    return lambda lp, lq: np.minimum(0.0, np.asarray(lp, float) - np.asarray(lq, float))


@_h(A2, "k2", "(log ratio)² without the ½", ("no-half", "shape:factor"))
def _(ns):
    return lambda lp, lq: (np.asarray(lp, float) - np.asarray(lq, float)) ** 2


@_h(A2, "k2", "½ · |log ratio|: no square", ("shape:power",))
def _(ns):
    return lambda lp, lq: 0.5 * np.abs(np.asarray(lp, float) - np.asarray(lq, float))


@_h(A2, "k3", "exp(logp − ref) − 1 − (logp − ref): the ratio the other way", ("inverted-ratio",))
def _(ns):
    def f(lp, lq):
        d = np.asarray(lp, float) - np.asarray(lq, float)
        return np.exp(d) - 1 - d

    return f


@_h(A2, "k3", "exp(d) − 1 + d (a sign slip on the last term)", "last-term-sign")
def _(ns):
    def f(lp, lq):
        d = np.asarray(lq, float) - np.asarray(lp, float)
        return np.exp(d) - 1 + d

    return f


@_h(A2, "estimator_moments", "(variance, mean) in the wrong order", ("shape:permuted",))
def _(ns):
    ref = ns["estimator_moments"]

    def f(p, q, est):
        m, v = ref(p, q, est)
        return (v, m)

    return f


# the position that differs (the variance, not the mean) is what differs here (a structural line
# added after this set was written; labelled true when it was)
@_h(
    A2,
    "estimator_moments",
    "the variance as E[v²] (the mean not subtracted)",
    "shape:which-entries",
)
def _(ns):
    def f(p, q, est):
        vals = [(a, float(est(math.log(a), math.log(b)))) for a, b in zip(p, q) if a > 0]
        mean = sum(a * v for a, v in vals)
        return (mean, sum(a * v * v for a, v in vals))

    return f


@_h(A2, "monte_carlo_kl", "the sum over the samples, not their mean", ("shape:factor",))
def _(ns):
    def f(samples, p, q, est):
        return sum(float(est(math.log(p[x]), math.log(q[x]))) for x in samples)

    return f


# max(0, KL) is the KL: "you clipped the sum (or not at all)" is true of no clip at all
@_h(A2, "clipped_expectation", "the plain expectation: no clip at 0", "clipped-after-sum")
def _(ns):
    def f(p, q):
        if any(b == 0 and a > 0 for a, b in zip(p, q)):
            return math.inf
        return sum(a * math.log(a / b) for a, b in zip(p, q) if a > 0)

    return f


# -- 03_sum_vs_mean --------------------------------------------------------------------------

A3 = "03_sum_vs_mean"


@_h(A3, "mean_sampled_log_ratio", "the sum of the log ratios, not their mean", ("sum",))
def _(ns):
    return lambda a, b: sum(x - y for x, y in zip(a, b))


@_h(A3, "shaped_reward", "base + β·mean (the penalty added)", ("sign",))
def _(ns):
    m = ns["mean_sampled_log_ratio"]
    return lambda base, a, b, beta: base + beta * m(a, b)


@_h(A3, "shaped_reward", "β left out: base − mean", "beta-dropped")
def _(ns):
    m = ns["mean_sampled_log_ratio"]
    return lambda base, a, b, beta: base - m(a, b)


# values · mask is also the multiplication that lets NaN padding poison a row
@_h(
    A3,
    "masked_mean",
    "(values·mask).mean(axis=1): padding in the denominator",
    ("divide-by-T", "nan-poisoning"),
)
def _(ns):
    return lambda v, m: (np.asarray(v, float) * np.asarray(m, float)).mean(axis=1)


@_h(A3, "masked_mean", "the masked sum per row", ("sum-not-mean", "nan-poisoning", "shape:factor"))
def _(ns):
    return lambda v, m: (np.asarray(v, float) * np.asarray(m, float)).sum(axis=1)


# Σ / (B·T) is what dividing each row's sum by T and averaging the rows gives
@_h(
    A3,
    "aggregate_loss",
    "token-mean with every padded position counted",
    ("mean-over-padding", "divide-by-T"),
)
def _(ns):
    ref = ns["aggregate_loss"]

    def f(v, m, mode, max_len=None):
        if mode != "token-mean":
            return ref(v, m, mode, max_len)
        v, m = np.asarray(v, float), np.asarray(m, bool)
        return float(np.where(m, v, 0.0).sum() / m.size)

    return f


# -- 04_rlef_turn_rewards --------------------------------------------------------------------

A4 = "04_rlef_turn_rewards"


@_h(A4, "episode_return", "the mean of the shaped rewards", ("mean-over-turns", "shape:factor"))
def _(ns):
    return lambda rewards: sum(r.shaped_reward for r in rewards) / len(rewards)


# rebuilt from the components (with the sign flipped) instead of summing shaped_reward: the
# return moves when a turn's mean log ratio moves with its shaped reward kept (a relation
# line added after this mistake was written; labelled true because the code reads the
# components where the text sums the recorded shaped rewards)
@_h(
    A4,
    "episode_return",
    "the task rewards plus the KL term (sign)",
    ("relation:components-moved",),
)
def _(ns):
    return lambda rewards: sum(r.task_reward + r.beta * r.mean_log_ratio for r in rewards)


@_h(A4, "turn_rewards", "shaped reward r + β·m", ("sign-flipped",))
def _(ns):
    ref = ns["turn_rewards"]
    TR = ns["TurnReward"]

    def f(turns, beta=0.05, max_turns=3):
        out = ref(turns, beta, max_turns)
        return [
            TR(
                task_reward=x.task_reward,
                mean_log_ratio=x.mean_log_ratio,
                beta=x.beta,
                shaped_reward=x.task_reward + x.beta * x.mean_log_ratio,
            )
            for x in out
        ]

    return f


# -- 05_grpo_lld -----------------------------------------------------------------------------

A5 = "05_grpo_lld"


@_h(A5, "group_advantages", "mean − r: every advantage negated", ("shape:sign",))
def _(ns):
    ref = ns["group_advantages"]
    return lambda rewards, eps=1e-6: -ref(rewards, eps)


@_h(A5, "group_advantages", "std over the batch axis", ("batch-std",))
def _(ns):
    def f(rewards, eps=1e-6):
        r = rewards.float()
        adv = (r - r.mean(dim=1, keepdim=True)) / (r.std() + eps)
        equal = (r == r[:, :1]).all(dim=1, keepdim=True)
        return torch.where(equal, torch.zeros_like(adv), adv)

    return f


@_h(A5, "sequence_logprobs", "the mean over valid tokens", ("token-mean",))
def _(ns):
    def f(logits, tokens, mask):
        lp = torch.log_softmax(logits.float(), -1).gather(-1, tokens.long()[..., None])[..., 0]
        m = mask.bool()
        return torch.where(m, lp, 0.0).sum(1) / m.sum(1).clamp(min=1)

    return f


# a softmax over the batch axis: the gradient into a position's logits no longer sums to 0
# over the vocabulary, which the property line says (added after this mistake was graded;
# labelled true because the code breaks that property, measured on its outcomes)
@_h(
    A5,
    "sequence_logprobs",
    "log of softmax over the batch axis",
    # and the padding-refilled probe (added later, judged true: a padded position's logits
    # move the other rows' softmax at that position, so the result moves with them); and the
    # others-evened probe (added later still, true: normalised over the batch, a position's
    # result depends on more than the sampled token's probability under the vocabulary)
    ("property:log-softmax-gradient", "relation:padding-refilled", "relation:others-evened"),
)
def _(ns):
    def f(logits, tokens, mask):
        lp = torch.log_softmax(logits.float(), 0).gather(-1, tokens.long()[..., None])[..., 0]
        return torch.where(mask.bool(), lp, 0.0).sum(1)

    return f


@_h(A5, "likelihood_change", "before − after", ("sign-flipped", "shape:sign"))
def _(ns):
    ref = ns["likelihood_change"]
    return lambda before, after, correct: -ref(before, after, correct)


# a median does not move when the largest change rises: the relation line added after this
# mistake was written, labelled true because that is what a median does and a mean does not
@_h(
    A5,
    "likelihood_change",
    "the median change of the correct responses",
    ("relation:largest-raised",),
)
def _(ns):
    def f(before, after, correct):
        return float((after - before)[correct.bool()].median())

    return f


@_h(A5, "lld_rate", "the share of strict decreases (< eps)", ("strict",))
def _(ns):
    return lambda changes, eps=0.0: float((changes < eps).float().mean())


# -- 06_nthr ---------------------------------------------------------------------------------

A6 = "06_nthr"


@_h(A6, "prediction_errors", "softmax − one-hot", ("sign-flipped", "shape:sign"))
def _(ns):
    ref = ns["prediction_errors"]
    return lambda logits, tokens: -ref(logits, tokens)


# a row of sigmoids does not sum to 1, so one-hot − sigmoid does not sum to 0: a property line (added after this mistake was written and graded; labelled
# true because the code breaks that property, measured on its outcomes)
@_h(A6, "prediction_errors", "one-hot − sigmoid(logits)", "property:rows-sum-to-zero")
def _(ns):
    def f(logits, tokens):
        oh = torch.nn.functional.one_hot(tokens.long(), logits.shape[1]).to(logits.dtype)
        return oh - torch.sigmoid(logits)

    return f


@_h(A6, "token_scores", "the mean over b instead of the sum", ("mean-over-b", "shape:factor"))
def _(ns):
    return lambda ha, ea, hb, eb: ((ea @ eb.T) * (ha @ hb.T)).mean(dim=1)


@_h(
    A6,
    "token_scores",
    "α + similarity instead of their product",
    # judged after the probes were added: a sum is not doubled when h_b or err_a is, nor
    # negated when err_a is
    ("relation:h-b-doubled", "relation:err-a-doubled", "relation:err-a-negated"),
)
def _(ns):
    return lambda ha, ea, hb, eb: ((ea @ eb.T) + (ha @ hb.T)).sum(dim=1)


@_h(A6, "nthr_weights", "the threshold without β", ("beta-ignored",))
def _(ns):
    def f(neg, pos, beta=1.0, eta=0.0):
        sel = neg > pos.min()
        return torch.where(sel, torch.full_like(neg, eta), torch.ones_like(neg))

    return f


@_h(A6, "eta_schedule", "|1 − 2p|² (a square for the abs)", ("squared",))
def _(ns):
    ref = ns["eta_schedule"]

    def f(p):
        out = ref(p)
        return out * out

    return f


# -- 07_beyond_nthr --------------------------------------------------------------------------

A7 = "07_beyond_nthr"


def _surrogate(objective, denominator=None):
    """A clipped_surrogate with the learner's objective (-> per-token loss) and token-mean
    denominator; the other modes as the reference aggregates them. logp_old and the advantages
    are detached as the reference detaches them, so that each one differs only in its mistake."""

    def f(logp, logp_old, adv, mask, eps_low=0.2, eps_high=None, mode="token-mean"):
        high = eps_low if eps_high is None else eps_high
        logp_old, adv = logp_old.detach(), adv.detach()
        ratio = torch.exp(torch.where(mask, logp - logp_old, 0.0))  # padding: as the reference
        per_token = torch.where(mask, objective(ratio, adv, eps_low, high), 0.0)
        if mode == "token-mean":
            return per_token.sum() / (denominator or (lambda m: m.sum()))(mask)
        rows = per_token.sum(dim=1)
        if mode == "seq-mean-token-sum":
            return rows.mean()
        return (rows / mask.sum(dim=1)).mean()

    return f


def _ppo(r, a, lo, hi):
    return -torch.minimum(r * a, torch.clamp(r, 1 - lo, 1 + hi) * a)


@_h(A7, "clipped_surrogate", "token-mean over every position, padding included", "padding-counted")
def _(ns):
    return _surrogate(_ppo, denominator=lambda m: m.numel())


@_h(A7, "clipped_surrogate", "the advantages negated", "advantage-negated")
def _(ns):
    return _surrogate(lambda r, a, lo, hi: _ppo(r, -a, lo, hi))


@_h(A7, "clipped_surrogate", "verl's default dual clip (c = 3) on negative advantages", "dual-clip")
def _(ns):
    def objective(r, a, lo, hi):
        loss = _ppo(r, a, lo, hi)
        return torch.where(a < 0, torch.minimum(loss, -3.0 * a), loss)

    return _surrogate(objective)


@_h(A7, "thr_weights", "THR = 0 treated as positive", "zero-as-positive")
def _(ns):
    def f(thr, dominant, p):
        w = torch.where(thr >= 0, 1.0 + p, 1.0 - p) * torch.ones_like(thr)
        return torch.where(dominant, w, torch.ones_like(w))

    return f


@_h(
    A7,
    "nll_on_correct",
    "the NLL averaged over the batch axis (rows), not the tokens",
    "batch-mean",
)
def _(ns):
    def f(logp, mask, correct):
        keep = mask & correct[:, None]
        return -torch.where(keep, logp, 0.0).sum(dim=1).mean()

    return f


@_h(A7, "smaug_floor", "the floor on the incorrect responses", "incorrect-only")
def _(ns):
    def f(seq, ref, correct):
        wrong = ~correct
        gap = torch.relu(ref.detach() - seq)  # detached as the reference detaches it
        return torch.where(wrong, gap, 0.0).sum() / wrong.sum().clamp(min=1)

    return f


@_h(A7, "smaug_floor", "0 / 0 when no response is correct", "nan-when-none")
def _(ns):
    def f(seq, ref, correct):
        gap = torch.relu(ref.detach() - seq)  # detached as the reference detaches it
        return torch.where(correct, gap, 0.0).sum() / correct.sum()

    return f


@_h(
    A7,
    "nll_on_correct",
    "padding counted in the denominator",
    ("padding-in-denominator", "padding-counted"),
)
def _(ns):
    def f(logp, mask, correct):
        keep = mask & correct[:, None]
        return -torch.where(keep, logp, 0.0).sum() / (correct.sum() * mask.shape[1]).clamp(min=1)

    return f


# -- the second set: written after the fixes above, used for none of them --------------------


# log p / log q is positive where p < q: a property line (added after this mistake was written and graded; labelled
# true because the code breaks that property, measured on its outcomes)
@_h(
    A1,
    "log_ratios",
    "log(p) / log(q): a ratio of logs",
    ("property:log-ratio-sign", "shape:raised"),
    batch=2,
)
def _(ns):
    return lambda p, q: [math.log(a) / math.log(b) for a, b in zip(p, q)]


@_h(A1, "forward_kl", "Σ p·log q − Σ p·log p: the terms subtracted the wrong way", "shape:sign", 2)
def _(ns):
    def f(p, q):
        if any(b == 0 and a > 0 for a, b in zip(p, q)):
            return math.inf
        return sum(a * math.log(b) - a * math.log(a) for a, b in zip(p, q) if a > 0)

    return f


@_h(A1, "reverse_kl", "Σ q·log(q/p) / 2: a stray ½", "shape:factor", 2)
def _(ns):
    ref = ns["reverse_kl"]
    return lambda p, q: ref(p, q) / 2


# (d / 2)² is the catalogue's (0.5 · d)²: the same computation
@_h(A2, "k2", "(log ratio)² / 4: the ½ squared too", ("half-inside-square", "shape:factor"), 2)
def _(ns):
    return lambda lp, lq: ((np.asarray(lp, float) - np.asarray(lq, float)) / 2) ** 2


# max(0, ref − logp) is the catalogue's arguments swapped: the same computation
@_h(A2, "clipped_k1", "the clip at 0 applied to −r: max(0, ref − logp)", "swapped", batch=2)
def _(ns):
    return lambda lp, lq: np.maximum(0.0, np.asarray(lq, float) - np.asarray(lp, float))


# named "distinct-outcomes" (the distinct *sampled* outcomes): the same values where every
# outcome is sampled, but not what this code does, so counted as a misdiagnosis
# a mean over outcomes never sampled can leave the range of the sampled values: a property line (added after this mistake was written and graded; labelled
# true because the code breaks that property, measured on its outcomes)
@_h(
    A2,
    "monte_carlo_kl",
    "the estimator averaged over every outcome, not the samples",
    # and the rarest-twice probe (added later, true: the code never reads how often an
    # outcome was sampled, so more samples of one outcome leave it where it was)
    ("property:mean-of-samples", "shape:raised", "relation:rarest-twice"),
    2,
)
def _(ns):
    def f(samples, p, q, est):
        return sum(float(est(math.log(a), math.log(b))) for a, b in zip(p, q)) / len(p)

    return f


@_h(A3, "mean_sampled_log_ratio", "reference − policy", ("swapped", "shape:sign"), 2)
def _(ns):
    return lambda a, b: sum(y - x for x, y in zip(a, b)) / len(a)


# Σ / (T − 1) is no mean of the row's valid values: a property line (added after this mistake was written and graded; labelled
# true because the code breaks that property, measured on its outcomes)
@_h(
    A3,
    "masked_mean",
    "the sum of valid values over T − 1",
    # the padded-column probe judged true after it was added: T − 1 moves with the padding
    ("property:mean-within-row", "relation:padded-column"),
    batch=2,
)
def _(ns):
    def f(v, m):
        v, m = np.asarray(v, float), np.asarray(m, bool)
        return np.where(m, v, 0.0).sum(axis=1) / (v.shape[1] - 1)

    return f


@_h(A4, "episode_return", "the last turn's shaped reward only", ("last-only",), 2)
def _(ns):
    return lambda rewards: rewards[-1].shaped_reward


@_h(A5, "group_advantages", "r − mean, not divided by the std", ("mean-only",), 2)
def _(ns):
    def f(rewards, eps=1e-6):
        r = rewards.float()
        return r - r.mean(dim=1, keepdim=True)

    return f


@_h(A5, "likelihood_change", "the mean change of every response", ("all-responses",), 2)
def _(ns):
    return lambda before, after, correct: float((after - before).mean())


@_h(A5, "lld_rate", "the count of decreases, not their share", ("count", "shape:factor"), 2)
def _(ns):
    return lambda changes, eps=0.0: int((changes <= eps).sum())


@_h(A6, "token_scores", "α·sim summed over a (axis 0)", ("wrong-axis", "shape:wrong-axis"), 2)
def _(ns):
    return lambda ha, ea, hb, eb: ((ea @ eb.T) * (ha @ hb.T)).sum(dim=0)


@_h(A6, "eta_schedule", "1 − 2p without the abs", ("no-abs",), 2)
def _(ns):
    return lambda p: 2 * (0.5 - (p if isinstance(p, torch.Tensor) else float(p)))


# which argument the difference follows is what differs here: said as a place to look (a
# localisation, counted apart), not as a cause, since the argument a default hides need not be
# the one the slip is about
@_h(A7, "clipped_surrogate", "the clip bounds 1 ± eps_high", batch=2)
def _(ns):
    return _surrogate(lambda r, a, lo, hi: _ppo(r, a, hi, hi))


# the entries that differ are what differs here (a structural line added after this set was
# written; labelled true when it was, because it names exactly the entries the mistake changes)
@_h(
    A7,
    "thr_weights",
    "1 + p on every dominant token, whatever THR's sign",
    # the thr-negated probe judged true after it was added: negating THR changes nothing here
    ("shape:which-entries", "relation:thr-negated"),
    batch=2,
)
def _(ns):
    def f(thr, dominant, p):
        return torch.where(dominant, torch.full_like(thr, 1.0 + p), torch.ones_like(thr))

    return f


@_h(A7, "nll_on_correct", "the mean log likelihood of the correct tokens (no minus)", "nll-sign", 2)
def _(ns):
    def f(logp, mask, correct):
        keep = mask & correct[:, None]
        return torch.where(keep, logp, 0.0).sum() / keep.sum().clamp(min=1)

    return f


# the gradient of gap² is −2·gap / k, not −1 / k: a property line (added after this mistake was written and graded; labelled
# true because the code breaks that property, measured on its outcomes)
@_h(
    A7,
    "smaug_floor",
    "the gap squared",
    # the both-doubled probe (added later, judged true: a square is not doubled when both are)
    ("property:floor-gradient", "relation:both-doubled"),
    batch=2,
)
def _(ns):
    def f(seq, ref, correct):
        gap = torch.relu(ref.detach() - seq) ** 2  # ref detached as in the reference
        return torch.where(correct, gap, 0.0).sum() / correct.sum().clamp(min=1)

    return f


# -- the third set: written before any of them was graded, after the fixes for the first two --
# Each is written from the function's description alone; its true ids were then read off the
# catalogue's diagnoses (a catalogued id only where its words say what this code does) and the
# error shapes, still without grading it.


@_h(A1, "log_ratios", "the log ratios in reverse order of the outcomes", "shape:permuted", 3)
def _(ns):
    return lambda p, q: [math.log(a / b) for a, b in zip(p, q)][::-1]


@_h(
    A1,
    "forward_kl",
    "the terms with q_i = 0 skipped instead of math.inf",
    # skipping the q_i = 0 term leaves only negative terms where p puts its mass there: a
    # negative KL, which the Gibbs property line says (added after; measured on its outcomes)
    ("reference-zero-finite", "property:kl-gibbs"),
    3,
)
def _(ns):
    return lambda p, q: sum(a * math.log(a / b) for a, b in zip(p, q) if a > 0 and b > 0)


@_h(A1, "reverse_kl", "the mean of the terms q·log(q/p) over the outcomes", "shape:factor", 3)
def _(ns):
    def f(p, q):
        if any(a == 0 and b > 0 for a, b in zip(p, q)):
            return math.inf
        return sum(b * math.log(b / a) for a, b in zip(p, q) if b > 0) / len(p)

    return f


# the clamp at 1 is what differs here (a structural line added after this set's one grading;
# labelled true when it was)
@_h(A2, "clipped_k1", "the log ratio clipped to [0, 1], not only at 0", "shape:clamped", 3)
def _(ns):
    return lambda lp, lq: np.clip(np.asarray(lp, float) - np.asarray(lq, float), 0.0, 1.0)


@_h(
    A2,
    "estimator_moments",
    "the standard deviation returned for the variance",
    "std-not-variance",
    3,
)
def _(ns):
    ref = ns["estimator_moments"]

    def f(p, q, est):
        m, v = ref(p, q, est)
        return (m, math.sqrt(v))

    return f


@_h(
    A2,
    "monte_carlo_kl",
    "the first sample left out (samples[1:])",
    # judged after the probes were added: not a mean over every sample, so doubling moves it
    ("relation:samples-twice",),
    3,
)
def _(ns):
    def f(samples, p, q, est):
        xs = list(samples)[1:] or list(samples)
        return sum(float(est(math.log(p[x]), math.log(q[x]))) for x in xs) / len(xs)

    return f


# weighted by q the clipped terms can sum below the KL: a property line (added after this mistake was written and graded; labelled
# true because the code breaks that property, measured on its outcomes)
@_h(
    A2,
    "clipped_expectation",
    "the clipped log ratios weighted by the reference q_i",
    "property:at-least-the-kl",
    3,
)
def _(ns):
    def f(p, q):
        if any(b == 0 and a > 0 for a, b in zip(p, q)):
            return math.inf
        return sum(b * max(0.0, math.log(a / b)) for a, b in zip(p, q) if a > 0)

    return f


# a mean of exp(p) − exp(q) is no mean of the log ratios: a property line (added after this mistake was written and graded; labelled
# true because the code breaks that property, measured on its outcomes)
@_h(
    A3,
    "mean_sampled_log_ratio",
    "the mean difference of the probabilities exp(p) − exp(q)",
    # the both-doubled probe (added later, judged true: exp is not linear)
    ("property:mean-of-log-ratios", "relation:both-doubled"),
    3,
)
def _(ns):
    return lambda a, b: sum(math.exp(x) - math.exp(y) for x, y in zip(a, b)) / len(a)


@_h(
    A3,
    "shaped_reward",
    "base − β · the sum of the token log ratios (not their mean)",
    "sum-based",
    3,
)
def _(ns):
    return lambda base, a, b, beta: base - beta * sum(x - y for x, y in zip(a, b))


@_h(
    A3,
    "masked_mean",
    "the masked mean of each column (axis 0)",
    # a column's mean, where the shapes happen to agree, lies outside its row's values: the
    # property line on the checks left over (added after; measured on its outcomes)
    ("shape:wrong-axis", "shape:wrong-shape", "property:mean-within-row", "relation:padded-column"),
    3,
)
def _(ns):
    def f(v, m):
        v, m = np.asarray(v, float), np.asarray(m, bool)
        return np.where(m, v, 0.0).sum(axis=0) / np.maximum(m.sum(axis=0), 1)

    return f


@_h(A4, "episode_return", "the sum of the task rewards only (the KL term left out)", "task-only", 3)
def _(ns):
    return lambda rewards: sum(r.task_reward for r in rewards)


@_h(
    A5,
    "group_advantages",
    "the population std (unbiased=False)",
    ("population-std", "shape:factor"),
    3,
)
def _(ns):
    def f(rewards, eps=1e-6):
        r = rewards.float()
        adv = (r - r.mean(dim=1, keepdim=True)) / (r.std(dim=1, unbiased=False, keepdim=True) + eps)
        equal = (r == r[:, :1]).all(dim=1, keepdim=True)
        return torch.where(equal, torch.zeros_like(adv), adv)

    return f


# the catalogued line, and on the checks it does not own the relation line (added later): the
# result ignores the correct responses, so raising one of them leaves it where it was
@_h(
    A5,
    "likelihood_change",
    "the mean change of the incorrect responses",
    ("incorrect-responses", "relation:largest-raised"),
    3,
)
def _(ns):
    def f(before, after, correct):
        wrong = ~correct.bool()
        return float((after - before)[wrong].mean()) if wrong.any() else 0.0

    return f


@_h(A5, "lld_rate", "the share of increases (change > eps)", "increases", 3)
def _(ns):
    return lambda changes, eps=0.0: float((changes > eps).float().mean())


@_h(A6, "eta_schedule", "|0.5 − p| without the factor 2", ("no-factor-2", "shape:factor"), 3)
def _(ns):
    def f(p):
        return (0.5 - p).abs() if isinstance(p, torch.Tensor) else abs(0.5 - float(p))

    return f


# 1 − eta is neither eta nor 1 unless eta is 0, 0.5 or 1: a property line (added after this mistake was written and graded; labelled
# true because the code breaks that property, measured on its outcomes)
@_h(
    A6,
    "nthr_weights",
    "the selected tokens weighted 1 − eta, not eta",
    # and the eta-halfway-to-one probe (added later, judged true: 1 − eta moves the other way)
    ("property:eta-or-one", "relation:eta-halfway-to-one"),
    3,
)
def _(ns):
    def f(neg, pos, beta=1.0, eta=0.0):
        sel = neg > beta * pos.min()
        return torch.where(sel, torch.full_like(neg, 1.0 - eta), torch.ones_like(neg))

    return f


@_h(A6, "token_scores", "the error products only (no hidden-state similarity)", "hidden-dropped", 3)
def _(ns):
    return lambda ha, ea, hb, eb: (ea @ eb.T).sum(dim=1)


@_h(A7, "thr_token_scores", "THR without the advantage factor", "no-advantage", 3)
def _(ns):
    def f(h, err, adv, correct):
        sim = (err @ err[correct].T) * (h @ h[correct].T)
        return sim.sum(dim=1)

    return f


@_h(A7, "nll_on_correct", "the sum over the correct tokens, not their mean", "shape:factor", 3)
def _(ns):
    def f(logp, mask, correct):
        keep = mask & correct[:, None]
        return -torch.where(keep, logp, 0.0).sum()

    return f


@_h(
    A7,
    "smaug_floor",
    "the floor averaged over every response, not the correct ones",
    # its gradient is −1 / B, not −1 / (number of correct): the property line on the gradient
    # checks left over (added after; measured on its outcomes)
    ("shape:factor", "property:floor-gradient"),
    3,
)
def _(ns):
    def f(seq, ref, correct):
        gap = torch.relu(ref.detach() - seq)  # detached as the reference detaches it
        return torch.where(correct, gap, 0.0).sum() / len(seq)

    return f


# -- the fourth set: written after every fix of this round, graded once, left as it was ------
# Written from the descriptions; the true ids read off the catalogue's diagnoses and the error
# shapes before grading. Nothing was changed after its one grading.


@_h(A1, "forward_kl", "only the terms where p_i > q_i summed", "clamped", 4)
def _(ns):
    def f(p, q):
        if any(b == 0 and a > 0 for a, b in zip(p, q)):
            return math.inf
        return sum(a * math.log(a / b) for a, b in zip(p, q) if a > b)

    return f


@_h(A1, "reverse_kl", "log2 of each ratio, then divided by ln 2 to 'convert'", "shape:factor", 4)
def _(ns):
    def f(p, q):
        if any(a == 0 and b > 0 for a, b in zip(p, q)):
            return math.inf
        return sum(b * math.log2(b / a) for a, b in zip(p, q) if b > 0) / math.log(2)

    return f


@_h(
    A2,
    "k3",
    "r − log r with r = exp(ref − logp): the − 1 left out",
    ("no-minus-one", "shape:offset"),
    4,
)
def _(ns):
    def f(lp, lq):
        d = np.asarray(lq, float) - np.asarray(lp, float)
        return np.exp(d) - d

    return f


@_h(
    A2,
    "estimator_moments",
    "the variance as the plain mean of (v − mean)² over outcomes",
    "shape:which-entries",
    4,
)
def _(ns):
    def f(p, q, est):
        vals = [(a, float(est(math.log(a), math.log(b)))) for a, b in zip(p, q) if a > 0]
        mean = sum(a * v for a, v in vals)
        return (mean, sum((v - mean) ** 2 for _, v in vals) / len(vals))

    return f


# q_x · est / n shrinks the mean below the sampled values: a property line (added after this mistake was written and graded; labelled
# true because the code breaks that property, measured on its outcomes)
@_h(A2, "monte_carlo_kl", "each sample's value weighted by q_x", "property:mean-of-samples", 4)
def _(ns):
    def f(samples, p, q, est):
        xs = list(samples)
        return sum(q[x] * float(est(math.log(p[x]), math.log(q[x]))) for x in xs) / len(xs)

    return f


@_h(
    A3,
    "aggregate_loss",
    "seq-mean-token-sum-norm divided by T, not max_len",
    ("max-len-ignored", "shape:which-cases"),
    4,
)
def _(ns):
    ref = ns["aggregate_loss"]

    def f(v, m, mode, max_len=None):
        if mode != "seq-mean-token-sum-norm":
            return ref(v, m, mode, max_len)
        v, m = np.asarray(v, float), np.asarray(m, bool)
        return float((np.where(m, v, 0.0).sum(axis=1) / v.shape[1]).mean())

    return f


@_h(A3, "shaped_reward", "β squared: base − β² · mean", (), 4)
def _(ns):
    m = ns["mean_sampled_log_ratio"]
    return lambda base, a, b, beta: base - beta * beta * m(a, b)


@_h(A5, "sequence_logprobs", "the mask ignored: every position summed", "mask-ignored", 4)
def _(ns):
    def f(logits, tokens, mask):
        lp = torch.log_softmax(logits.float(), -1).gather(-1, tokens.long()[..., None])[..., 0]
        return lp.sum(1)

    return f


# dividing by the variance leaves a standard deviation near 1 / std, not 1: a property line (added after this mistake was written and graded; labelled
# true because the code breaks that property, measured on its outcomes)
@_h(
    A5, "group_advantages", "divided by the variance + eps, not the std", "property:standardized", 4
)
def _(ns):
    def f(rewards, eps=1e-6):
        r = rewards.float()
        adv = (r - r.mean(dim=1, keepdim=True)) / (r.var(dim=1, keepdim=True) + eps)
        equal = (r == r[:, :1]).all(dim=1, keepdim=True)
        return torch.where(equal, torch.zeros_like(adv), adv)

    return f


@_h(A6, "eta_schedule", "1 − |1 − 2p|", "inverted", 4)
def _(ns):
    def f(p):
        if isinstance(p, torch.Tensor):
            return 1 - (1 - 2 * p).abs()
        return 1 - abs(1 - 2 * float(p))

    return f


@_h(
    A6,
    "prediction_errors",
    "one-hot − softmax taken over the positions (dim 0)",
    "softmax-over-positions",
    4,
)
def _(ns):
    def f(logits, tokens):
        oh = torch.nn.functional.one_hot(tokens.long(), logits.shape[1]).to(logits.dtype)
        return oh - torch.softmax(logits, dim=0)

    return f


@_h(
    A7,
    "thr_token_scores",
    "THR summed against every token, not the correct ones",
    "against-all-tokens",
    4,
)
def _(ns):
    def f(h, err, adv, correct):
        return adv * ((err @ err.T) * (h @ h.T)).sum(dim=1)

    return f


@_h(
    A7,
    "nll_on_correct",
    "−mean of logp over every position of the correct rows",
    "padding-counted",
    4,
)
def _(ns):
    def f(logp, mask, correct):
        rows = logp[correct]
        return -rows.mean() if rows.numel() else logp.sum() * 0.0

    return f


# abs passes a gradient of +1/k into a response above the reference: a property line (added after this mistake was written and graded; labelled
# true because the code breaks that property, measured on its outcomes); abs is symmetric in
# the two log likelihoods, so the floor stays the same when they are swapped: the swap line,
# added later still, labelled true for the same reason
@_h(
    A7,
    "smaug_floor",
    "|ref − logp| on the correct responses: abs for the hinge",
    ("property:floor-gradient", "relation:swapped"),
    4,
)
def _(ns):
    def f(seq, ref, correct):
        gap = (ref.detach() - seq).abs()
        return torch.where(correct, gap, 0.0).sum() / correct.sum().clamp(min=1)

    return f


# exp(old − logp) falls as logp rises: the gradient has the other sign: a property line (added after this mistake was written and graded; labelled
# true because the code breaks that property, measured on its outcomes); the exchange line
# (added later still) names exactly this: logp and logp_old the wrong way round
@_h(
    A7,
    "clipped_surrogate",
    "the ratio inverted: exp(logp_old − logp)",
    ("property:surrogate-gradient-direction", "shape:exchanged"),
    4,
)
def _(ns):
    def f(logp, logp_old, adv, mask, eps_low=0.2, eps_high=None, mode="token-mean"):
        high = eps_low if eps_high is None else eps_high
        ratio = torch.exp(logp_old.detach() - logp)
        obj = -torch.minimum(
            ratio * adv.detach(), torch.clamp(ratio, 1 - eps_low, 1 + high) * adv.detach()
        )
        per_token = torch.where(mask, obj, 0.0)
        if mode == "token-mean":
            return per_token.sum() / mask.sum()
        rows = per_token.sum(dim=1)
        if mode == "seq-mean-token-sum":
            return rows.mean()
        return (rows / mask.sum(dim=1)).mean()

    return f


# -- the fifth set: functions ported from verl, graded once after this round's fixes ---------
# Each ports the formula of one function of verl/trainer/ppo/core_algos.py at commit
# 26b5d6b2bbf0202683e49d9999f9174179ab5af3 (its masked_mean from verl/utils/torch_functional.py:
# (values · mask).sum() / mask.sum()) into the course's signature, conventions and all (the
# library's clamps, its multiplication by the mask, no detach where its callers pass tensors
# without gradient). The true ids were written from reading each port against the notebook's
# text, before the set was graded; nothing was changed after its one grading.

VERL = "verl/trainer/ppo/core_algos.py@26b5d6b2"


# kl_penalty(..., "low_var_kl"): kl = clamp(ref − logp, ±20); clamp(exp(kl) − kl − 1, ±10)
@_h(
    A2,
    "k3",
    f"{VERL} kl_penalty low_var_kl: the log ratio clamped to ±20, k3 to ±10",
    ("value-clamped", "log-ratio-clamped", "shape:clamped"),
    5,
)
def _(ns):
    def f(lp, lq):
        kl = np.clip(np.asarray(lq, float) - np.asarray(lp, float), -20.0, 20.0)
        return np.clip(np.exp(kl) - kl - 1.0, -10.0, 10.0)

    return f


# agg_loss: every mode through values · mask; seq-mean-token-sum-norm = Σ_rows Σ_t / T
@_h(
    A3,
    "aggregate_loss",
    f"{VERL} agg_loss: masked by multiplying; sum-norm = row sums summed / T",
    (
        # shape:factor was left out of the ids written before the one grading, which counted
        # it misdiagnosed; it is true (Σ / T is the expected Σ / (B · max_len) times B ·
        # max_len / T, "a sum or a mean taken over the wrong count"), so it is added here
        "shape:factor",
        "nan-poisoning",
        "sum-norm-without-B",
        "max-len-ignored",
        "shape:which-cases",
        "property:aggregate-within-values",
    ),
    5,
)
def _(ns):
    def f(v, m, mode, max_len=None):
        v, m = np.asarray(v, float), np.asarray(m, float)
        if mode == "token-mean":
            return float((v * m).sum() / m.sum())
        if mode == "seq-mean-token-sum":
            return float((v * m).sum(axis=-1).mean())
        if mode == "seq-mean-token-mean":
            return float(((v * m).sum(axis=-1) / m.sum(axis=-1)).mean())
        return float((v * m).sum(axis=-1).sum() / m.shape[-1])

    return f


# compute_grpo_outcome_advantage: (r − mean) / (torch.std + epsilon), no rule for equal rewards
@_h(
    A5,
    "group_advantages",
    f"{VERL} compute_grpo_outcome_advantage: no zeros rule for an equal group",
    ("no-zero-for-equal",),
    5,
)
def _(ns):
    def f(rewards, eps=1e-6):
        r = rewards.float()
        return (r - r.mean(dim=1, keepdim=True)) / (r.std(dim=1, keepdim=True) + eps)

    return f


# compute_gpg_outcome_advantage: alpha · (r − mean) / f_norm, alpha = bsz / #nonzero rewards
@_h(
    A5,
    "group_advantages",
    f"{VERL} compute_gpg_outcome_advantage: (r − mean) · N / #nonzero, no std",
    ("mean-only", "property:standardized"),
    5,
)
def _(ns):
    def f(rewards, eps=1e-6):
        r = rewards.float()
        alpha = r.numel() / max(int(torch.count_nonzero(r)), 1)
        return alpha * (r - r.mean(dim=1, keepdim=True)) / 1.0

    return f


# compute_policy_loss: log ratio clamped to ±20, dual clip c = 3 on A < 0, agg_loss (values ·
# mask); its callers pass logp_old and advantages without gradient, so nothing is detached
@_h(
    A7,
    "clipped_surrogate",
    f"{VERL} compute_policy_loss: dual clip 3, ratio clamp ±20, mask multiplied, no detach",
    ("dual-clip", "advantages-not-detached", "logp-old-not-detached", "gradient", "nan-poisoning"),
    5,
)
def _(ns):
    def f(logp, logp_old, adv, mask, eps_low=0.2, eps_high=None, mode="token-mean"):
        high = eps_low if eps_high is None else eps_high
        ratio = torch.exp(torch.clamp(logp - logp_old, min=-20.0, max=20.0))
        loss1 = -adv * ratio
        loss2 = -adv * torch.clamp(ratio, 1 - eps_low, 1 + high)
        clip1 = torch.maximum(loss1, loss2)
        clip2 = torch.min(-adv * 3.0, clip1)
        losses = torch.where(adv < 0, clip2, clip1)
        m = mask.to(losses.dtype)
        if mode == "token-mean":
            return (losses * m).sum() / m.sum()
        rows = (losses * m).sum(dim=-1)
        if mode == "seq-mean-token-sum":
            return rows.mean()
        return (rows / m.sum(dim=-1)).mean()

    return f


# compute_rewards: token_level_scores − kl · kl_ratio with kl = logp − ref per token; the
# return of the shaped token rewards is the base reward minus beta · the SUM of the log ratios
@_h(
    A3,
    "shaped_reward",
    f"{VERL} compute_rewards: the per-token KL penalties summed over the response",
    ("sum-based",),
    5,
)
def _(ns):
    return lambda base, a, b, beta: base - sum(beta * (x - y) for x, y in zip(a, b))


# -- the measurement -------------------------------------------------------------------------


@dataclass
class Verdict:
    held: HeldOut
    score: float
    points: float
    first: str | None  # the first diagnosis of the formula
    wrong_ids: list[str]  # diagnoses of the formula that are not true
    feedback: str
    formula_ids: tuple[str, ...] = ()  # every diagnosis of the formula, in order
    true_points: float = 0.0  # the points lost that a true diagnosis's cost line carries
    untrue_points: float = 0.0  # ... that an untrue one carries
    unrecognised_points: float = 0.0  # ... that only "Not recognised" carries
    # ... that a line saying where the failed checks fall carries (a mode, an argument, an
    # edge rule: true of the outcomes by construction, tests/test_where_lines.py checks it;
    # it names no cause, so it is counted apart from the true causes)
    localised_points: float = 0.0

    @property
    def lost(self) -> float:
        return round(self.points - self.score, 2)

    @property
    def loses(self) -> bool:
        return self.points - self.score >= LOSS_THRESHOLD * self.points - 1e-9

    @property
    def explained(self) -> bool:
        return self.first is not None and self.first in self.held.true

    @property
    def verdict(self) -> str:
        if not self.loses:
            return "small loss"
        if self.wrong_ids:
            return "MISDIAGNOSED"
        return "explained" if self.explained else "unexplained"


def judge(h: HeldOut) -> Verdict:
    ns = reference.namespace(h.assignment, REPO)
    r = kernel.grade_function(h.assignment, h.function, build(h, ns), namespace=ns, root=REPO)
    # the gradient line that names no cause (the gradient differs where the values differ too)
    # says what differs and nothing about why: it can be neither true nor untrue of a cause
    formula = [
        d
        for d in r.diagnoses
        if d.kind not in ("validation", "where") and d.id != evaluate.GRADIENT_WITH_VALUES
    ]
    first = formula[0].id if formula else None
    wrong = [d.id for d in formula if d.id not in h.true]
    return Verdict(
        h,
        r.score,
        r.points,
        first,
        wrong,
        evaluate.feedback_text(r, max_cases=2),
        formula_ids=tuple(d.id for d in formula),
        true_points=round(sum(d.points for d in formula if d.id in h.true), 2),
        untrue_points=round(sum(d.points for d in formula if d.id not in h.true), 2),
        unrecognised_points=round(r.unexplained, 2),
        localised_points=round(sum(d.points for d in r.diagnoses if d.kind == "where"), 2),
    )


def points_summary(group: list[Verdict]) -> str:
    """The points figure: of every point the group's mistakes lose, the share a true
    diagnosis's cost line carries (target >= 90 %), the share an untrue one carries (target
    0), and the share left to "Not recognised" or to a line that names no cause (the gradient
    line "… as your values do", an input-check line)."""
    lost = sum(v.lost for v in group)
    true = sum(v.true_points for v in group)
    untrue = sum(v.untrue_points for v in group)
    unrec = sum(v.unrecognised_points for v in group)
    where = sum(v.localised_points for v in group)
    other = lost - true - untrue - unrec - where
    if lost <= 0:
        return "no points lost"
    return (
        f"points lost {lost:.2f}: a true cause {true:.2f} = {true / lost:.0%}, localised "
        f"{where:.2f}, together {(true + where) / lost:.0%} (target >= {POINTS_TARGET:.0%}); "
        f"untrue {untrue:.2f}, not recognised {unrec:.2f}, no cause named {abs(other):.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("assignments", nargs="*")
    ap.add_argument("--list", action="store_true", help="print each mistake's feedback too")
    args = ap.parse_args(argv)
    chosen = [h for h in HELDOUT if not args.assignments or h.assignment in args.assignments]
    verdicts = []
    for h in chosen:
        v = judge(h)
        verdicts.append(v)
        print(
            f"{v.verdict:13s} {h.assignment[:2]} {h.function:24s} {v.score:5.2f}/{v.points:g}  "
            f"{h.what}  -> {v.first or '-'}" + (f" (untrue: {v.wrong_ids})" if v.wrong_ids else "")
        )
        if args.list:
            print("    " + v.feedback.replace("\n", "\n    "))
    print()
    for label, group in (
        ("all", verdicts),
        ("first set (the fixes were written from it)", [v for v in verdicts if v.held.batch == 1]),
        (
            "second set (this round's fixes were read from it)",
            [v for v in verdicts if v.held.batch == 2],
        ),
        (
            "third set (first graded at 12 / 19 explained, 0 misdiagnosed)",
            [v for v in verdicts if v.held.batch == 3],
        ),
        (
            "fourth set (written after every fix, graded once)",
            [v for v in verdicts if v.held.batch == 4],
        ),
        (
            "fifth set (ported from verl; its one grading, after the property lines and before "
            "the lines for what is left over: 4 / 5 explained, 3.75 of 4.52 points = 83 %, one "
            "true shape:factor counted misdiagnosed by the ids written before)",
            [v for v in verdicts if v.held.batch == 5],
        ),
    ):
        big = [v for v in group if v.loses]
        explained = sum(v.explained and not v.wrong_ids for v in big)
        wrong = sum(bool(v.wrong_ids) for v in big)
        rate = explained / len(big) if big else 1.0
        print(
            f"{label}: {len(group)} mistakes, {len(big)} losing >= {LOSS_THRESHOLD:.0%}; "
            f"explained {explained} / {len(big)} = {rate:.0%} (target >= {TARGET:.0%}); "
            f"misdiagnosed {wrong} (target 0)"
        )
        alone = [
            v
            for v in group
            if v.unrecognised_points >= LOSS_THRESHOLD * v.points - 1e-9
            and not any(True for _ in v.formula_ids)
        ]
        print(f"    {points_summary(group)}")
        print(
            f"    losses of >= {LOSS_THRESHOLD:.0%} of a function's points told only "
            f'"Not recognised": {len(alone)} (target 0)'
        )
    print()
    print("per notebook (every set):")
    for nb in sorted({v.held.assignment for v in verdicts}):
        group = [v for v in verdicts if v.held.assignment == nb]
        big = [v for v in group if v.loses]
        explained = sum(v.explained and not v.wrong_ids for v in big)
        wrong = sum(bool(v.wrong_ids) for v in big)
        print(
            f"  {nb[:2]}: explained {explained} / {len(big)}, misdiagnosed {wrong}; "
            f"{points_summary(group)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
