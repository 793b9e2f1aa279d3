"""Inputs changed in one way the text states: what the result must then do.

A probe takes one value or edge case's inputs and changes them in one way whose effect on the
result the function's text states, or its formula gives at once: the two distributions swapped
(a KL is not symmetric; a log ratio changes sign), the padding refilled (padded positions never
count), the batch repeated (a mean over rows or tokens does not move), a constant added to a
group's rewards (standardised advantages do not move), the hidden states doubled (an inner
product doubles). The grader runs the learner's function on the changed inputs too, after
every graded check and only when a check failed, and says which of these relations the
learner's results break (:mod:`autograder.scoring.relations`). A probe is never a check: it
has no points, and no score depends on it.

Each probe is ``Probe(id, change, says, relation, apply)``:

    change    the change, in words ("`policy` and `reference` are swapped")
    says      what the text states the result then does
    relation  "same" | "negated" | "differs" | "scaled:K" | "scaled:entries" | "shift:C" |
              "mirror:C" | "affine:A:B" | "reversed": the result on the changed inputs is the
              same, its negative, different, K times it (entry by entry, by the factors the
              change returns), it plus C, 2·C minus it, A times it plus B, or its entries in
              reverse order (a 1-D result whose rows were reversed: each row on its own)
    apply     ``apply(args, kwargs) -> (args, kwargs) | (args, kwargs, extra) | None``: the
              changed inputs (fresh objects: the case's own are never modified), and for
              "scaled:entries" ``{"factors": [...]}``, one per entry of the result; None where
              the change says nothing (two equal distributions swapped, an input with no
              padding to refill)

``tests/test_probes.py`` checks that the reference obeys every relation on every case a probe
applies to (the relation is the text's, not an accident of the cases).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from autograder.cases.spec import Obj
from autograder.notebooks.notebook import ASSIGNMENTS

RELATIONS = (
    "same",
    "negated",
    "differs",
    "scaled",
    "shift",
    "mirror",
    "affine",
    "reversed",
    "not-above",  # the changed result is at most the base one
    "affine-offset",  # K times the base result plus an offset the probe computes
    "identify",  # no relation: the learner's result is compared with the formula's on the change
)


@dataclass(frozen=True)
class Probe:
    id: str
    change: str
    says: str
    relation: str
    apply: Callable[[tuple, dict], tuple[tuple, dict] | None]
    # the kinds of case a probe changes (never an invalid one: that raises; never a gradient
    # one: its outcome is a gradient)
    kinds: tuple[str, ...] = ("value", "edge")
    # the change exchanges two inputs (doing it twice gives the inputs back): a learner whose
    # result on the exchanged inputs is the expected result of the original ones has the two
    # the wrong way round (relations.exchanged)
    exchange: bool = False

    def __post_init__(self) -> None:
        if self.relation.split(":")[0] not in RELATIONS:
            raise ValueError(f"probe {self.id}: unknown relation {self.relation!r}")


# -- helpers: an input changed, returned in the container it came in -----------------------------


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


def _as_array(x: Any) -> np.ndarray | None:
    """``x`` as a float64 array (None for what is not numbers, e.g. a string or a record)."""
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return None
    try:
        if _is_torch(x):
            if x.requires_grad:
                x = x.detach()
            return x.double().numpy().copy()
        return np.array(x, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _like(orig: Any, values: np.ndarray) -> Any:
    """``values`` in the container and dtype ``orig`` has (list, numpy array, torch tensor,
    plain number)."""
    if _is_torch(orig):
        import torch

        return torch.tensor(values, dtype=orig.dtype)
    if isinstance(orig, np.ndarray):
        return values.astype(orig.dtype) if orig.dtype.kind in "fc" else values
    if isinstance(orig, (list, tuple)):
        return values.tolist()
    if isinstance(orig, (int, float, np.floating)):
        return float(values)
    return values


def _float_input(x: Any) -> bool:
    """A number or an array of floats (not a mask, not an integer index array)."""
    if _is_torch(x):
        return x.dtype.is_floating_point
    if isinstance(x, np.ndarray):
        return x.dtype.kind == "f"
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, float, np.floating)):
        return True
    if isinstance(x, (list, tuple)):
        a = _as_array(x)
        return a is not None and a.dtype.kind == "f"
    return False


def _bool_mask(x: Any) -> np.ndarray | None:
    """A mask (bool, or 0/1 numbers) as a bool array, else None."""
    a = _as_array(x)
    if a is None or a.size == 0 or not np.all((a == 0) | (a == 1)):
        return None
    return a.astype(bool)


def _reversed_rows(idx: tuple[int, ...]) -> Callable:
    """The arguments at ``idx`` with their rows (first axis) in reverse order, together."""

    def apply(args, kwargs):
        if len(args) <= max(idx):
            return None
        out = list(args)
        changed = False
        for i in idx:
            a = _as_array(args[i])
            if a is None or a.ndim < 1 or a.shape[0] < 2:
                return None
            changed = changed or not np.array_equal(a, a[::-1])
            out[i] = _like(args[i], a[::-1].copy())
        return (tuple(out), dict(kwargs)) if changed else None

    return apply


def _arg(args: tuple, kwargs: dict, pos: int, name: str, default: Any) -> Any:
    """The argument ``name``: given by keyword, at position ``pos``, or left to ``default``."""
    return kwargs.get(name, args[pos] if len(args) > pos else default)


def _with_arg(args: tuple, kwargs: dict, pos: int, name: str, value: Any) -> tuple[tuple, dict]:
    """The arguments with ``name`` set to ``value``, where it was given (by position if it was
    passed by position, else by keyword)."""
    out_args, out_kwargs = list(args), dict(kwargs)
    if len(args) > pos:
        out_args[pos] = value
    else:
        out_kwargs[name] = value
    return tuple(out_args), out_kwargs


def _a_number(x: Any) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, float))


def _repeat_rows(x: Any) -> Any:
    """``x`` with its rows (its first axis) given twice."""
    if _is_torch(x):
        import torch

        return torch.cat([x.detach().clone(), x.detach().clone()])
    if isinstance(x, np.ndarray):
        return np.concatenate([x, x])
    return list(x) + list(x)


# -- the changes ---------------------------------------------------------------------------------


def _swap(i: int, j: int) -> Callable:
    def apply(args, kwargs):
        if len(args) <= max(i, j):
            return None
        a, b = _as_array(args[i]), _as_array(args[j])
        if a is None or b is None or (a.shape == b.shape and np.array_equal(a, b)):
            return None
        out = list(args)
        out[i], out[j] = args[j], args[i]
        return tuple(out), dict(kwargs)

    return apply


def _outcomes_changed(n: int, f: Callable[[np.ndarray], np.ndarray], least: int) -> Callable:
    """The first ``n`` arguments (1-D, one entry per outcome, ``least`` entries at least) each
    mapped by ``f``; None where that changes none of them."""

    def apply(args, kwargs):
        arrays = [_as_array(a) for a in args[:n]]
        if len(args) < n or any(a is None or a.ndim != 1 or a.size < least for a in arrays):
            return None
        new = [f(a) for a in arrays]
        if all(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(arrays, new)):
            return None
        out = [_like(o, b) for o, b in zip(args[:n], new)]
        return tuple(out) + tuple(args[n:]), dict(kwargs)

    return apply


def _reversed_outcomes(n: int) -> Callable:
    """The first ``n`` arguments (1-D, one entry per outcome) in reverse order."""
    return _outcomes_changed(n, lambda a: a[::-1].copy(), least=2)


def _zero_outcome(n: int) -> Callable:
    """One more outcome, of probability 0 under each of the first ``n`` distributions."""
    return _outcomes_changed(n, lambda a: np.append(a, 0.0), least=1)


def _each(idx: tuple[int, ...], f: Callable[[np.ndarray], np.ndarray], nonzero: bool) -> Callable:
    """The arguments at ``idx`` (floats, finite) each mapped by ``f``; with ``nonzero``, None
    where one is all zeros (a scale would change nothing)."""

    def apply(args, kwargs):
        if len(args) <= max(idx) or not all(_float_input(args[i]) for i in idx):
            return None
        out = list(args)
        for i in idx:
            a = _as_array(args[i])
            if a is None or not np.all(np.isfinite(a)) or (nonzero and not np.any(a)):
                return None
            out[i] = _like(args[i], f(a))
        return tuple(out), dict(kwargs)

    return apply


def _shift(idx: tuple[int, ...], c: float) -> Callable:
    """The arguments at ``idx`` (floats) each plus ``c``."""
    return _each(idx, lambda a: a + c, nonzero=False)


def _scale(idx: tuple[int, ...], k: float) -> Callable:
    """The arguments at ``idx`` (floats, not all zero) each times ``k``."""
    return _each(idx, lambda a: a * k, nonzero=True)


def _mapped(i: int, f: Callable[[np.ndarray], np.ndarray | None]) -> Callable:
    def apply(args, kwargs):
        if len(args) <= i or not _float_input(args[i]):
            return None
        a = _as_array(args[i])
        if a is None:
            return None
        b = f(a)
        if b is None or np.array_equal(a, b):
            return None
        out = list(args)
        out[i] = _like(args[i], b)
        return tuple(out), dict(kwargs)

    return apply


def _repeated(n: int | None = None, idx: tuple[int, ...] | None = None) -> Callable:
    """The arguments at ``idx`` (default: every array argument among the first ``n``) with
    their rows given twice: the same batch, twice over."""

    def apply(args, kwargs):
        which = idx if idx is not None else tuple(range(min(n or len(args), len(args))))
        out = list(args)
        done = False
        for i in which:
            a = _as_array(args[i]) if i < len(args) else None
            if a is None or a.ndim < 1 or a.size == 0:
                if idx is not None:
                    return None
                continue
            out[i] = _repeat_rows(args[i])
            done = True
        return (tuple(out), dict(kwargs)) if done else None

    return apply


def _refilled(values: tuple[int, ...], mask: int, fill: float = 7.5) -> Callable:
    """The entries of the arguments at ``values`` where the mask (argument ``mask``) is False
    set to ``fill``: the padding holds something else."""

    def apply(args, kwargs):
        if len(args) <= max(*values, mask):
            return None
        m = _bool_mask(args[mask])
        if m is None or m.all():
            return None
        out = list(args)
        for i in values:
            a = _as_array(args[i])
            if a is None or a.shape[: m.ndim] != m.shape or not _float_input(args[i]):
                return None
            b = a.copy()
            b[~m] = fill
            out[i] = _like(args[i], b)
        return tuple(out), dict(kwargs)

    return apply


def _pad_column(values: int, mask: int, fill: float = 7.5) -> Callable:
    """One more position at the end of every row of a 2-D ``values``, padded (mask False,
    value ``fill``: _pad_position); a ``max_len`` that the longer rows would exceed says no."""
    pad = _pad_position((values,), mask, fill)

    def apply(args, kwargs):
        a = _as_array(args[values]) if len(args) > values else None
        if a is None or a.ndim != 2:
            return None
        max_len = _arg(args, kwargs, 3, "max_len", None)
        if max_len is not None and (
            isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < a.shape[1] + 1
        ):
            return None
        return pad(args, kwargs)

    return apply


def _pad_position(per_token: tuple[int, ...], mask: int, fill: float = -3.25) -> Callable:
    """One more padded position at the end of every row: each argument at ``per_token``
    (shape (B, T, ...)) gets a position holding ``fill`` (an integer argument: 0), and the
    mask (B, T) a False (0) there."""

    def apply(args, kwargs):
        if len(args) <= max(*per_token, mask):
            return None
        m = _bool_mask(args[mask])
        if m is None or m.ndim != 2:
            return None
        out = list(args)
        for i in (*per_token, mask):
            x = args[i]
            a = _as_array(x)
            if a is None or a.ndim < 2 or a.shape[:2] != m.shape:
                return None
            pad_shape = (a.shape[0], 1, *a.shape[2:])
            if i == mask:
                pad = np.zeros(pad_shape)
            elif _float_input(x):
                pad = np.full(pad_shape, fill)
            else:
                pad = np.zeros(pad_shape)
            b = np.concatenate([a, pad], axis=1)
            if _is_torch(x):
                import torch

                out[i] = torch.tensor(b, dtype=x.dtype)
            elif isinstance(x, np.ndarray):
                out[i] = b.astype(x.dtype)
            else:
                out[i] = b.astype(int).tolist() if i == mask else b.tolist()
        return tuple(out), dict(kwargs)

    return apply


def _rows_refilled(values: tuple[int, ...], correct: int, fill: float = -3.25) -> Callable:
    """The rows of the arguments at ``values`` whose response is not correct (argument
    ``correct`` False) set to ``fill``."""

    def apply(args, kwargs):
        if len(args) <= max(*values, correct):
            return None
        c = _bool_mask(args[correct])
        if c is None or c.ndim != 1 or c.all():
            return None
        out = list(args)
        for i in values:
            a = _as_array(args[i])
            if a is None or a.shape[:1] != c.shape or not _float_input(args[i]):
                return None
            b = a.copy()
            b[~c] = fill
            out[i] = _like(args[i], b)
        return tuple(out), dict(kwargs)

    return apply


def _doubled(idx: tuple[int, ...], pid: str, change: str, says: str) -> Probe:
    """The arguments at ``idx`` doubled: a result linear in them doubles too."""
    return Probe(pid, change, says, "scaled:2", _scale(idx, 2.0))


def _when_eps_zero(apply: Callable, eps_at: int = 1) -> Callable:
    """``apply`` only where eps (argument ``eps_at`` or keyword) is 0 or left to its default 0."""

    def only(args, kwargs):
        eps = _arg(args, kwargs, eps_at, "eps", 0.0)
        if not _a_number(eps) or eps != 0:
            return None
        return apply(args, kwargs)

    return only


def _rows_scaled_where_not(values: int, mask: int, k: float) -> Callable:
    """The rows of argument ``values`` where the bool argument ``mask`` is False times ``k``;
    the result must then be ``k`` times itself on those entries and the same elsewhere
    (relation "scaled:entries": the factors travel with the probe)."""

    def apply(args, kwargs):
        if len(args) <= max(values, mask):
            return None
        a, m = _as_array(args[values]), _bool_mask(args[mask])
        if a is None or m is None or m.ndim != 1 or a.shape[:1] != m.shape or m.all():
            return None
        b = a.copy()
        b[~m] *= k
        if np.array_equal(a, b):
            return None
        out = list(args)
        out[values] = _like(args[values], b)
        return tuple(out), dict(kwargs), {"factors": np.where(m, 1.0, k).tolist()}

    return apply


def _first_row_scaled(i: int, k: float) -> Callable:
    """The first row of argument ``i`` (2-D, two rows or more) times ``k``; a result whose
    entry r depends on row r of that argument linearly (and on no other row of it) is ``k``
    times itself at entry 0 and the same elsewhere (relation "scaled:entries")."""

    def apply(args, kwargs):
        if len(args) <= i or not _float_input(args[i]):
            return None
        a = _as_array(args[i])
        if a is None or a.ndim != 2 or a.shape[0] < 2 or not np.any(a[0]):
            return None
        b = a.copy()
        b[0] *= k
        out = list(args)
        out[i] = _like(args[i], b)
        factors = [k] + [1.0] * (a.shape[0] - 1)
        return tuple(out), dict(kwargs), {"factors": factors}

    return apply


def _last_valid_masked(mask: int) -> Callable:
    """The mask (argument ``mask``, 2-D, bool or 0/1) with the last valid position of every
    row that has two or more masked out, in the mask's own container and dtype; everything
    else as it was. A result that reads the mask changes; one that ignores it does not."""

    def apply(args, kwargs):
        if len(args) <= mask:
            return None
        m = _bool_mask(args[mask])
        if m is None or m.ndim != 2:
            return None
        new = m.copy()
        for row in new:
            on = np.flatnonzero(row)
            if on.size >= 2:
                row[on[-1]] = False
        if np.array_equal(new, m):
            return None
        out = list(args)
        out[mask] = _mask_like(args[mask], new)
        return tuple(out), dict(kwargs)

    return apply


def _mask_like(orig: Any, new: np.ndarray) -> Any:
    """A bool mask ``new`` in the container and dtype of the mask ``orig`` (bool, 0/1 ints or
    floats; a list keeps its entries' type)."""
    if _is_torch(orig):
        import torch

        return torch.tensor(new.tolist(), dtype=orig.dtype)
    if isinstance(orig, np.ndarray):
        return new.astype(orig.dtype)
    first = np.asarray(orig).ravel()[:1]
    kind = type(first[0].item()) if first.size else bool
    return [[kind(bool(x)) for x in row] for row in new]


def _largest_correct_change_raised(by: float) -> Callable:
    """likelihood_change(logp_before, logp_after, correct) with the largest change among the
    correct responses raised by ``by`` (two correct responses at least): a mean over them
    moves, a median or a minimum does not."""

    def apply(args, kwargs):
        if len(args) < 3:
            return None
        before, after, correct = _as_array(args[0]), _as_array(args[1]), _bool_mask(args[2])
        if before is None or after is None or correct is None:
            return None
        if before.ndim != 1 or before.shape != after.shape or after.shape != correct.shape:
            return None
        if correct.sum() < 2 or not np.all(np.isfinite(after)):
            return None
        change = np.where(correct, after - before, -np.inf)
        new = after.copy()
        new[int(np.argmax(change))] += by
        out = list(args)
        out[1] = _like(args[1], new)
        return tuple(out), dict(kwargs)

    return apply


def _clip_off() -> Callable:
    """clipped_surrogate with the clip switched off: eps_low just below 1 and eps_high 1e9
    (both allowed), so that no ratio the cases hold is clipped."""

    def apply(args, kwargs):
        args2, kwargs2 = _with_arg(args, kwargs, 4, "eps_low", 0.999999)
        return _with_arg(args2, kwargs2, 5, "eps_high", 1e9)

    return apply


def _mask_inverted(mask: int) -> Callable:
    """The mask (argument ``mask``, 2-D) inverted, where every row keeps a valid position."""

    def apply(args, kwargs):
        if len(args) <= mask:
            return None
        m = _bool_mask(args[mask])
        if m is None or m.ndim != 2 or not np.all((~m).any(axis=1)):
            return None
        out = list(args)
        out[mask] = _mask_like(args[mask], ~m)
        return tuple(out), dict(kwargs)

    return apply


def _identify(pid: str, change: str, apply: Callable) -> Probe:
    """A change that a common slip makes to an input: where the learner's result is the
    formula's on the changed inputs (relations.exchanged), the feedback says so."""
    return Probe(pid, change, "", "identify", apply)


def _others_evened() -> Callable:
    """sequence_logprobs(logits, tokens, mask) with each position's logits replaced by the
    log probabilities of a distribution that keeps the sampled token's probability and spreads
    the rest evenly over the other tokens: log_softmax at the sampled token is unchanged."""

    def apply(args, kwargs):
        if len(args) < 2 or not _float_input(args[0]):
            return None
        logits, tokens = _as_array(args[0]), _as_array(args[1])
        if logits is None or tokens is None or logits.ndim != 3 or logits.shape[:2] != tokens.shape:
            return None
        v = logits.shape[2]
        if v < 3 or not np.all(np.isfinite(logits)):
            return None
        tok = tokens.astype(int)
        if np.any(tok < 0) or np.any(tok >= v):
            return None
        shifted = logits - logits.max(axis=2, keepdims=True)
        lp = shifted - np.log(np.exp(shifted).sum(axis=2, keepdims=True))
        own = np.take_along_axis(lp, tok[..., None], axis=2)
        rest = 1.0 - np.exp(own)
        if np.any(rest <= 1e-9):
            return None
        new = np.broadcast_to(np.log(rest / (v - 1)), logits.shape).copy()
        np.put_along_axis(new, tok[..., None], own, axis=2)
        if np.allclose(new, lp):
            return None
        out = list(args)
        out[0] = _like(args[0], new)
        return tuple(out), dict(kwargs)

    return apply


def _rarest_samples_twice() -> Callable:
    """monte_carlo_kl's samples (argument 0, outcome indices) with every sample of the least
    sampled outcome given once more (two outcomes sampled at least): the mean of the estimates
    moves towards that outcome's, a median of a clear majority does not."""

    def apply(args, kwargs):
        if not args:
            return None
        a = _as_array(args[0])
        if a is None or a.ndim != 1 or a.size < 2 or not np.all(a == np.round(a)):
            return None
        values, counts = np.unique(a.astype(int), return_counts=True)
        if values.size < 2:
            return None
        rare = values[int(np.argmin(counts))]
        extra = [int(rare)] * int(counts.min())
        orig = args[0]
        if _is_torch(orig):
            import torch

            new = torch.cat([orig, torch.tensor(extra, dtype=orig.dtype)])
        elif isinstance(orig, np.ndarray):
            new = np.concatenate([orig, np.asarray(extra, dtype=orig.dtype)])
        elif isinstance(orig, (list, tuple)):
            new = type(orig)(list(orig) + extra)
        else:
            return None
        return (new, *args[1:]), dict(kwargs)

    return apply


def _row_largest_raised(values: int, mask: int, by: float) -> Callable:
    """The largest valid value of every row of argument ``values`` (2-D floats, mask argument
    ``mask``) raised by ``by``, in rows of two valid values or more: a sum or a mean over the
    valid values moves, a median or a minimum does not."""

    def apply(args, kwargs):
        if len(args) <= max(values, mask) or not _float_input(args[values]):
            return None
        a, m = _as_array(args[values]), _bool_mask(args[mask])
        if a is None or m is None or a.ndim != 2 or a.shape != m.shape:
            return None
        if not np.all(np.isfinite(np.where(m, a, 0.0))):
            return None
        b = a.copy()
        done = False
        for r in range(a.shape[0]):
            on = np.flatnonzero(m[r])
            if on.size >= 2:
                b[r, on[int(np.argmax(a[r, on]))]] += by
                done = True
        if not done:
            return None
        out = list(args)
        out[values] = _like(args[values], b)
        return tuple(out), dict(kwargs)

    return apply


def _where_eps_small(apply: Callable) -> Callable:
    """``apply`` only where every group of rewards (argument 0, 2-D) is either all equal or
    spread far more than eps (argument 1 or keyword, default 1e-6): there eps moves nothing."""

    def only(args, kwargs):
        r = _as_array(args[0]) if args else None
        eps = _arg(args, kwargs, 1, "eps", 1e-6)
        if r is None or r.ndim != 2 or not _a_number(eps):
            return None
        std = r.std(axis=1)
        if np.any((std > 0) & (std < 1e4 * max(float(eps), 1e-12))):
            return None
        return apply(args, kwargs)

    return only


def _penalty_doubled() -> Callable:
    """shaped_reward(base_reward, policy_logprobs, ref_logprobs, ...) with both lists doubled:
    the mean log ratio doubles, so the result is 2 · result − base_reward (the offset travels
    with the probe)."""

    def apply(args, kwargs):
        if len(args) < 3 or not _a_number(args[0]):
            return None
        changed = _scale((1, 2), 2.0)(args, kwargs)
        if changed is None:
            return None
        return (*changed, {"factors": [-float(args[0])]})

    return apply


def _valid_values_probes(what: str, result: str) -> tuple[Probe, ...]:
    """The probes of a function of (values, mask, ...) that sums or averages each row's valid
    values (``what`` says so; ``result``: what moves): the largest valid value of each row
    raised, the mask inverted (a slip's change), one more position masked out."""
    return (
        Probe(
            "largest-raised",
            "the largest valid value of every row is raised by 3",
            f"{what}: raising the largest of a row moves {result}",
            "differs",
            _row_largest_raised(0, 1, 3.0),
        ),
        _identify(
            "mask-inverted", "the mask is inverted (valid and padded swapped)", _mask_inverted(1)
        ),
        _mask_read(1, f"{what}: one fewer marked position changes {result}"),
    )


def _mask_read(mask: int, says: str) -> Probe:
    return Probe(
        "last-valid-masked",
        "the last valid position of every response is masked out (its values kept)",
        says,
        "differs",
        _last_valid_masked(mask),
    )


def _row_shifts(i: int) -> Callable:
    """Argument ``i`` (2-D) with a different constant added to each row (0, 1, 2, …)."""

    def apply(args, kwargs):
        if len(args) <= i or not _float_input(args[i]):
            return None
        a = _as_array(args[i])
        if a is None or a.ndim != 2 or a.shape[0] < 2 or not np.all(np.isfinite(a)):
            return None
        out = list(args)
        out[i] = _like(args[i], a + np.arange(a.shape[0], dtype=float)[:, None])
        return tuple(out), dict(kwargs)

    return apply


def _eta_halfway_to_one(args, kwargs):
    """nthr_weights' eta moved halfway towards 1 (a weight of 1 stays 1)."""
    eta = _arg(args, kwargs, 3, "eta", 0.0)
    if not _a_number(eta) or not 0 <= eta < 1:
        return None
    return _with_arg(args, kwargs, 3, "eta", (eta + 1) / 2)


def _text_changed(how: str) -> Callable:
    """extract_code's response with a line of prose before it, or a second Python block after
    it."""

    def apply(args, kwargs):
        if not args or not isinstance(args[0], str):
            return None
        text = args[0]
        if how == "block-after" and not any(
            line.rstrip() == "```python" for line in text.splitlines()
        ):
            return None  # with no Python block before it, the new block would be the first
        if how == "prose-before":
            new = "Here is my answer.\n\n" + text
        else:
            new = text + "\n\nAnd another try:\n```python\nprobe_value = 1\n```\n"
        return (new, *args[1:]), dict(kwargs)

    return apply


def _max_len_changed(args, kwargs):
    """``max_len`` moved (or given where it was not) in a mode that does not read it."""
    mode = _arg(args, kwargs, 2, "mode", None)
    if not isinstance(mode, str) or mode == "seq-mean-token-sum-norm":
        return None
    a = _as_array(args[0]) if args else None
    if a is None or a.ndim != 2:
        return None
    given = _arg(args, kwargs, 3, "max_len", None)
    if given is not None and (isinstance(given, bool) or not isinstance(given, int)):
        return None
    new_len = (given if given is not None else a.shape[1]) + 5
    out_args, out_kwargs = list(args[:3]), dict(kwargs)
    out_kwargs["max_len"] = new_len
    return tuple(out_args), out_kwargs


# a TurnReward's fields, in name order: the order scoring.relations reads a record's values in
_RECORD_FIELDS = ("beta", "mean_log_ratio", "shaped_reward", "task_reward")


def _record_factors(**changed: float | None) -> list[float | None]:
    """One record's factors for "scaled:entries", field by field in name order: 1 (the field
    stays) unless ``changed`` names it (a factor, or None: the relation says nothing of it)."""
    return [changed.get(f, 1.0) for f in _RECORD_FIELDS]


def _turns_changed(how: str) -> Callable:
    """turn_rewards(turns, beta, max_turns) with the first turn's log probabilities doubled
    (``how`` = "first-logps": its mean log ratio doubles, every other record stays) or beta
    doubled ("beta": every beta doubles, every task reward and mean log ratio stays); the
    factors name, record by record, each field in name order (None: the shaped reward, which
    the relation leaves to the other line)."""

    def apply(args, kwargs):
        if not args or not isinstance(args[0], (list, tuple)) or not args[0]:
            return None
        turns = list(args[0])
        if not all(isinstance(t, Obj) and t.type_name == "Turn" for t in turns):
            return None
        n = len(turns)
        if how == "first-logps":
            first = turns[0].fields
            p, q = _as_array(first["policy_logps"]), _as_array(first["reference_logps"])
            if p is None or q is None or np.array_equal(p, q):
                return None
            changed = dict(first)
            changed["policy_logps"] = _like(first["policy_logps"], 2 * p)
            changed["reference_logps"] = _like(first["reference_logps"], 2 * q)
            new_turns = [Obj("Turn", changed), *turns[1:]]
            factors = _record_factors(mean_log_ratio=2.0, shaped_reward=None)
            factors += _record_factors() * (n - 1)
            return (new_turns, *args[1:]), dict(kwargs), {"factors": factors}
        beta = _arg(args, kwargs, 1, "beta", 0.05)
        if not _a_number(beta) or beta <= 0:
            return None
        factors = _record_factors(beta=2.0, shaped_reward=None) * n
        return (*_with_arg(args, kwargs, 1, "beta", 2 * beta), {"factors": factors})

    return apply


def _turn_rewards_changed(how: str) -> Callable:
    def apply(args, kwargs):
        if not args or not isinstance(args[0], (list, tuple)) or not args[0]:
            return None
        rewards = list(args[0])
        if not all(isinstance(r, Obj) and r.type_name == "TurnReward" for r in rewards):
            return None
        if how == "reversed":
            if len(rewards) < 2:
                return None
            new = rewards[::-1]
        elif how == "components":  # each turn's mean log ratio moved, its shaped reward kept
            new = [
                Obj.of(
                    "TurnReward",
                    **{
                        **r.fields,
                        "mean_log_ratio": float(r.fields.get("mean_log_ratio", 0.0)) + 0.5,
                    },
                )
                for r in rewards
            ]
        else:  # one more turn whose shaped reward is 0
            beta = rewards[-1].fields.get("beta", 0.05)
            new = rewards + [
                Obj.of(
                    "TurnReward", task_reward=0.0, mean_log_ratio=0.0, beta=beta, shaped_reward=0.0
                )
            ]
        return (new, *args[1:]), dict(kwargs)

    return apply


# -- what the texts state ------------------------------------------------------------------------

_KL_ASYMMETRIC = "a KL is not symmetric: with the two distributions swapped it changes"
_OUTCOME_ORDER = "the outcomes' order does not matter"
_ZERO_OUTCOME = "an outcome neither distribution can give adds nothing"
_DIFFERENCE_ONLY = "the estimator depends on logp − ref_logp alone"

A1, A2, A3, A4, A5, A6, A7 = ASSIGNMENTS  # the notebooks, in order


def _kl_probes() -> tuple[Probe, ...]:
    return (
        Probe(
            "swapped",
            "`policy` and `reference` are swapped",
            _KL_ASYMMETRIC,
            "differs",
            _swap(0, 1),
            exchange=True,
        ),
        Probe(
            "reordered",
            "the outcomes are listed in reverse order",
            _OUTCOME_ORDER,
            "same",
            _reversed_outcomes(2),
        ),
        Probe(
            "zero-outcome",
            "one more outcome, of probability 0 under both, is added",
            _ZERO_OUTCOME,
            "same",
            _zero_outcome(2),
        ),
    )


def _unless_a_is_b(apply: Callable) -> Callable:
    """``apply`` only where set a and set b differ (token_scores(h, err, h, err) scores a set
    against itself: a change to one side alone would also make the two sets differ, and a
    slip about that case, self-pairs dropped, would read as a broken relation)."""

    def only(args, kwargs):
        if len(args) >= 4:
            pairs = [
                (_as_array(args[0]), _as_array(args[2])),
                (_as_array(args[1]), _as_array(args[3])),
            ]
            if all(
                a is not None and b is not None and a.shape == b.shape and np.array_equal(a, b)
                for a, b in pairs
            ):
                return None
        return apply(args, kwargs)

    return only


def _a_not_b(probe: Probe) -> Probe:
    """``probe`` applied only where set a and set b differ (see _unless_a_is_b)."""
    return replace(probe, apply=_unless_a_is_b(probe.apply))


def _rows_reversed(idx: tuple[int, ...], what: str, says: str) -> Probe:
    """The arguments at ``idx`` with their rows in reverse order: a result computed row by row
    comes out reversed."""
    return Probe(
        "rows-reversed", f"{what} are given in reverse order", says, "reversed", _reversed_rows(idx)
    )


def _shifted_logps() -> Probe:
    return Probe(
        "both-shifted",
        "0.5 is subtracted from both `logp` and `ref_logp`",
        _DIFFERENCE_ONLY,
        "same",
        _shift((0, 1), -0.5),
    )


PROBES: dict[tuple[str, str], tuple[Probe, ...]] = {
    (A1, "log_ratios"): (
        Probe(
            "swapped",
            "`policy` and `reference` are swapped",
            "log(q_i / p_i) = −log(p_i / q_i): swapping the two negates every log ratio",
            "negated",
            _swap(0, 1),
            exchange=True,
        ),
    ),
    (A1, "forward_kl"): _kl_probes(),
    (A1, "reverse_kl"): _kl_probes(),
    (A2, "k1"): (
        _shifted_logps(),
        Probe(
            "swapped",
            "`logp` and `ref_logp` are swapped",
            "k1 = logp − ref_logp changes sign when the two are swapped",
            "negated",
            _swap(0, 1),
            exchange=True,
        ),
    ),
    (A2, "k2"): (
        _shifted_logps(),
        Probe(
            "swapped",
            "`logp` and `ref_logp` are swapped",
            "k2 = ½ (logp − ref_logp)² is the same with the two swapped",
            "same",
            _swap(0, 1),
            exchange=True,
        ),
    ),
    (A2, "k3"): (
        _shifted_logps(),
        Probe(
            "swapped",
            "`logp` and `ref_logp` are swapped",
            "k3 is not symmetric: exp(d) − 1 − d changes when d = ref_logp − logp changes sign",
            "differs",
            _swap(0, 1),
            exchange=True,
        ),
    ),
    (A2, "clipped_k1"): (
        _shifted_logps(),
        Probe(
            "swapped",
            "`logp` and `ref_logp` are swapped",
            "max(0, logp − ref_logp) keeps only one sign of the difference: swapping the two "
            "changes it",
            "differs",
            _swap(0, 1),
            exchange=True,
        ),
    ),
    (A2, "clipped_expectation"): _kl_probes()[1:],
    (A2, "estimator_moments"): _kl_probes()[1:],
    (A2, "monte_carlo_kl"): (
        Probe(
            "rarest-twice",
            "every sample of the least sampled outcome is given once more",
            "the estimate is the mean over the samples: more samples of one outcome move it "
            "towards that outcome's estimate",
            "differs",
            _rarest_samples_twice(),
        ),
        Probe(
            "samples-twice",
            "every sample is given twice",
            "the estimate is a mean over the samples: the same samples twice over give the "
            "same mean",
            "same",
            _repeated(idx=(0,)),
        ),
    ),
    (A3, "mean_sampled_log_ratio"): (
        _doubled(
            (0, 1),
            "both-doubled",
            "both lists are doubled",
            "the mean of p_t − q_t doubles when every log probability does",
        ),
        Probe(
            "swapped",
            "the two lists are swapped",
            "swapping the lists negates the ratio",
            "negated",
            _swap(0, 1),
            exchange=True,
        ),
        Probe(
            "repeated",
            "both lists are given twice over",
            "a mean over the tokens: the same tokens twice over give the same mean",
            "same",
            _repeated(idx=(0, 1)),
        ),
    ),
    (A3, "shaped_reward"): (
        Probe(
            "base-plus-one",
            "1 is added to `base_reward`",
            "the penalty beta · mean_sampled_log_ratio does not depend on base_reward: the "
            "shaped reward moves by exactly as much",
            "shift:1",
            _shift((0,), 1.0),
        ),
        Probe(
            "repeated",
            "both lists are given twice over",
            "the penalty uses the mean log ratio: the same tokens twice over give the same "
            "shaped reward",
            "same",
            _repeated(idx=(1, 2)),
        ),
        Probe(
            "both-doubled",
            "both lists of log probabilities are doubled",
            "the penalty is beta times the mean of p_t − q_t, which doubles when every log "
            "probability does: the shaped reward becomes 2 · shaped − base_reward",
            "affine-offset:2",
            _penalty_doubled(),
        ),
    ),
    (A3, "masked_mean"): (
        *_valid_values_probes("each row's mean is over its valid values", "it"),
        _rows_reversed(
            (0, 1),
            "the rows (of `values` and `mask` together)",
            "each entry is its own row's masked mean: reversing the rows reverses the result",
        ),
        _doubled(
            (0,),
            "values-doubled",
            "every value is doubled",
            "a mean of a row's valid values: doubling every value doubles it",
        ),
        Probe(
            "padding-refilled",
            "the padded entries are set to 7.5",
            "padded entries never count, whatever they hold",
            "same",
            _refilled((0,), 1),
        ),
        Probe(
            "padded-column",
            "one more padded position is added at the end of every row",
            "padded entries never count, so more padding changes nothing",
            "same",
            _pad_column(0, 1),
        ),
    ),
    (A3, "aggregate_loss"): (
        *_valid_values_probes("every mode sums or averages the valid values", "the loss"),
        Probe(
            "max-len-moved",
            "`max_len` is changed (the mode does not read it)",
            "max_len is read by 'seq-mean-token-sum-norm' only: every other mode ignores it",
            "same",
            _max_len_changed,
        ),
        _doubled(
            (0,),
            "loss-doubled",
            "every per-token loss is doubled",
            "every mode is a sum of per-token losses over a count that does not depend on "
            "them: doubling every loss doubles it",
        ),
        Probe(
            "padding-refilled",
            "the padded entries are set to 7.5",
            "padded entries never count, whatever they hold",
            "same",
            _refilled((0,), 1),
        ),
        Probe(
            "batch-twice",
            "the batch is given twice over (every row twice)",
            "every mode is a mean over rows or over tokens: the same rows twice over give the "
            "same loss",
            "same",
            _repeated(idx=(0, 1)),
        ),
    ),
    (A4, "extract_code"): (
        Probe(
            "prose-before",
            "a line of prose is put before the response",
            "the code is the body of the first ```python block: text before it changes nothing",
            "same",
            _text_changed("prose-before"),
        ),
        Probe(
            "block-after",
            "a second ```python block is put after the response",
            "the code is the body of the first ```python block: a later block changes nothing",
            "same",
            _text_changed("block-after"),
        ),
    ),
    (A4, "turn_rewards"): (
        Probe(
            "first-turn-logps-doubled",
            "the first turn's log probabilities (policy and reference) are doubled",
            "each turn's reference term is the mean log ratio of that turn's own tokens: "
            "doubling the first turn's log probabilities doubles its mean_log_ratio and "
            "leaves every other record as it was",
            "scaled:entries",
            _turns_changed("first-logps"),
        ),
        Probe(
            "beta-doubled",
            "beta is doubled",
            "each record keeps beta as passed in, and its task reward and mean log ratio do "
            "not depend on beta",
            "scaled:entries",
            _turns_changed("beta"),
        ),
    ),
    (A4, "episode_return"): (
        Probe(
            "reordered",
            "the turns' rewards are given in reverse order",
            "the return is the sum of the shaped rewards, each once: their order does not matter",
            "same",
            _turn_rewards_changed("reversed"),
        ),
        Probe(
            "zero-turn",
            "one more turn, whose shaped reward is 0, is added",
            "the return is the sum of the shaped rewards: a turn that adds 0 changes nothing",
            "same",
            _turn_rewards_changed("zero"),
        ),
        Probe(
            "components-moved",
            "each turn's `mean_log_ratio` is raised by 0.5, its `shaped_reward` kept",
            "the return is the sum of the shaped rewards as the turns recorded them: a turn's "
            "other fields (its mean log ratio) do not enter it again",
            "same",
            _turn_rewards_changed("components"),
        ),
    ),
    (A5, "group_advantages"): (
        Probe(
            "rewards-doubled",
            "every reward is doubled",
            "a group's advantages are its rewards standardized, minus their mean over their std: "
            "doubling every reward changes nothing (eps aside)",
            "same",
            _where_eps_small(_scale((0,), 2.0)),
        ),
        Probe(
            "rewards-shifted",
            "0.25 is added to every reward",
            "a group's advantages are its rewards minus their mean, over their std: adding "
            "the same number to every reward changes nothing",
            "same",
            _shift((0,), 0.25),
        ),
    ),
    (A5, "sequence_logprobs"): (
        Probe(
            "others-evened",
            "at every position, the probability the sampled token leaves is spread evenly over "
            "the other tokens (the sampled token's probability kept)",
            "each position contributes log softmax(logits)[token], the sampled token's log "
            "probability alone: how the rest is spread over the other tokens changes nothing",
            "same",
            _others_evened(),
        ),
        _mask_read(
            2,
            "each response's log likelihood sums the positions its mask marks: "
            "one fewer marked position changes it",
        ),
        Probe(
            "padded-position",
            "one more padded position is added at the end of every response",
            "padded positions never count, so more padding changes nothing",
            "same",
            _pad_position((0, 1), 2),
        ),
        _rows_reversed(
            (0, 1, 2),
            "the responses (rows of `logits`, `tokens` and `mask` together)",
            "each response's log likelihood is its own row's masked sum: reversing the rows "
            "reverses the result",
        ),
        Probe(
            "padding-refilled",
            "the logits at padded positions are set to 7.5",
            "padded positions never count, whatever their logits",
            "same",
            _refilled((0,), 2),
        ),
        Probe(
            "logits-shifted",
            "3 is added to every logit",
            "log_softmax is unchanged when the same number is added to a position's logits",
            "same",
            _shift((0,), 3.0),
        ),
    ),
    (A5, "likelihood_change"): (
        Probe(
            "largest-raised",
            "the correct response whose likelihood rose most has its `logp_after` raised by 3",
            "the result is the mean change over the correct responses: raising one of them moves "
            "the mean",
            "differs",
            _largest_correct_change_raised(3.0),
        ),
        _doubled(
            (0, 1),
            "both-doubled",
            "every log likelihood, before and after, is doubled",
            "a mean of changes after − before doubles when both do",
        ),
        Probe(
            "both-shifted",
            "0.5 is subtracted from every log likelihood, before and after",
            "the result is a mean of changes after − before: moving both by the same number "
            "changes nothing",
            "same",
            _shift((0, 1), -0.5),
        ),
        Probe(
            "group-twice",
            "every response is given twice",
            "a mean over the correct responses: the same responses twice over give the same mean",
            "same",
            _repeated(idx=(0, 1, 2)),
        ),
        Probe(
            "incorrect-changed",
            "the incorrect responses' log likelihoods are set to −3.25",
            "only the correct responses count",
            "same",
            _rows_refilled((0, 1), 2),
        ),
    ),
    (A5, "lld_rate"): (
        Probe(
            "reordered",
            "the changes are given in reverse order",
            "the LLD rate is a share of the groups: their order does not matter",
            "same",
            _reversed_outcomes(1),
        ),
        Probe(
            "changes-doubled",
            "every change is doubled (with eps = 0)",
            "with eps = 0 only each change's sign counts: doubling every change moves no "
            "group across 0",
            "same",
            _when_eps_zero(_scale((0,), 2.0)),
        ),
        Probe(
            "changes-twice",
            "every change is given twice",
            "the LLD rate is a share of the groups: the same groups twice over give the same share",
            "same",
            _repeated(idx=(0,)),
        ),
    ),
    (A6, "prediction_errors"): (
        Probe(
            "rows-shifted",
            "a different number is added to each row's logits (0, 1, 2, …)",
            "each row's softmax is over the vocabulary: a number added to one row's logits "
            "changes nothing",
            "same",
            _row_shifts(0),
        ),
        Probe(
            "logits-shifted",
            "5 is added to every logit",
            "softmax is unchanged when the same number is added to a row's logits",
            "same",
            _shift((0,), 5.0),
        ),
    ),
    (A6, "token_scores"): (
        Probe(
            "first-h-a-doubled",
            "the hidden state of the first token of a (the first row of `h_a`) is doubled",
            "each token of a is scored on its own: Σ over b of ⟨err_a, err_b⟩ · ⟨h_a, h_b⟩ "
            "uses that token's own h_a once, so its score doubles and the others stay",
            "scaled:entries",
            _unless_a_is_b(_first_row_scaled(0, 2.0)),
        ),
        Probe(
            "err-a-negated",
            "`err_a` is negated",
            "each score is a sum of ⟨err_a, err_b⟩ · ⟨h_a, h_b⟩, linear in err_a: negating it "
            "negates every score",
            "negated",
            _unless_a_is_b(_scale((1,), -1.0)),
        ),
        _a_not_b(
            _rows_reversed(
                (0, 1),
                "the rows of a (`h_a` and `err_a` together)",
                "each row of a is scored on its own against all rows of b: reversing a's rows "
                "reverses the scores",
            )
        ),
        Probe(
            "b-reordered",
            "the rows of b are given in reverse order",
            "each score is a sum over the rows of b: their order does not matter",
            "same",
            _unless_a_is_b(_reversed_rows((2, 3))),
        ),
        _a_not_b(
            _doubled(
                (1,),
                "err-a-doubled",
                "`err_a` is doubled",
                "each score is a sum of ⟨err_a, err_b⟩ · ⟨h_a, h_b⟩: doubling err_a doubles it",
            )
        ),
        Probe(
            "b-twice",
            "every row of b is given twice",
            "each score is a sum over the rows of b: each row twice doubles it",
            "scaled:2",
            _unless_a_is_b(_repeated(idx=(2, 3))),
        ),
        Probe(
            "h-b-doubled",
            "`h_b` is doubled",
            "each score is a sum of ⟨err_a, err_b⟩ · ⟨h_a, h_b⟩: doubling h_b doubles it",
            "scaled:2",
            _unless_a_is_b(_scale((2,), 2.0)),
        ),
    ),
    (A6, "nthr_weights"): (
        _identify(
            "abs-scores",
            "each entry of `neg_scores` is replaced by its absolute value",
            _mapped(0, np.abs),
        ),
        _rows_reversed(
            (0,),
            "the negative tokens' scores",
            "each negative token's weight depends on its own score and the threshold: "
            "reversing the scores reverses the weights",
        ),
        Probe(
            "eta-halfway-to-one",
            "eta is moved halfway towards 1",
            "a selected token's weight is eta and every other weight is 1: moving eta halfway "
            "to 1 moves each weight halfway to 1",
            "affine:0.5:0.5",
            _eta_halfway_to_one,
        ),
        Probe(
            "scores-doubled",
            "`neg_scores` and `pos_mean_scores` are both doubled",
            "the threshold β · min(pos_mean_scores) scales with the scores, so doubling both "
            "selects the same tokens",
            "same",
            _scale((0, 1), 2.0),
        ),
    ),
    (A6, "eta_schedule"): (
        Probe(
            "halfway-to-half",
            "p is moved halfway towards 0.5",
            "η = 2 · |0.5 − p| is proportional to p's distance from 0.5: halving that distance "
            "halves η",
            "scaled:0.5",
            _mapped(0, lambda a: (a + 0.5) / 2),
        ),
        Probe(
            "one-minus-p",
            "p is replaced by 1 − p",
            "η = 2 · |0.5 − p| is the same for p and 1 − p",
            "same",
            _mapped(0, lambda a: 1.0 - a),
        ),
    ),
    (A7, "clipped_surrogate"): (
        Probe(
            "clip-off",
            "the clip is switched off (eps_low = 0.999999, eps_high = 1e9)",
            "o_t = min(r·A, clip(r)·A) is never above r·A: the clipped loss is at least the "
            "loss with the clip switched off",
            "not-above",
            _clip_off(),
        ),
        _mask_read(
            3,
            "the loss sums or averages the positions the mask marks: "
            "one fewer marked position changes it",
        ),
        Probe(
            "swapped",
            "`logp_new` and `logp_old` are swapped",
            "the ratio is π_new / π_old = exp(logp_new − logp_old): swapping the two inverts it",
            "differs",
            _swap(0, 1),
            exchange=True,
        ),
        Probe(
            "padded-position",
            "one more padded position is added at the end of every response",
            "padded positions never count, so more padding changes nothing",
            "same",
            _pad_position((0, 1, 2), 3),
        ),
        _doubled(
            (2,),
            "advantages-doubled",
            "every advantage is doubled",
            "min(r·A, clip(r)·A) is linear in A for A of either sign: doubling every "
            "advantage doubles the loss",
        ),
        Probe(
            "padding-refilled",
            "the padded positions of `logp` and `logp_old` are set to 7.5",
            "padded positions never count, whatever they hold",
            "same",
            _refilled((0, 1), 3),
        ),
        Probe(
            "batch-twice",
            "the batch is given twice over (every row twice)",
            "every mode is a mean over rows or over tokens: the same rows twice over give the "
            "same loss",
            "same",
            _repeated(idx=(0, 1, 2, 3)),
        ),
        Probe(
            "both-shifted",
            "0.5 is subtracted from both `logp` and `logp_old`",
            "the ratio exp(logp − logp_old) depends on their difference alone",
            "same",
            _shift((0, 1), -0.5),
        ),
    ),
    (A7, "thr_token_scores"): (
        _rows_reversed(
            (0, 1, 2, 3),
            "the tokens (`h`, `err`, `token_adv` and `correct` together)",
            "each token's THR is its own advantage times its sum over the correct tokens: "
            "reversing the tokens reverses the THRs",
        ),
        _doubled(
            (2,),
            "advantages-doubled",
            "`token_adv` is doubled",
            "THR_t = A_t · Σ over correct u of ⟨err_t, err_u⟩⟨h_t, h_u⟩ holds the token's own "
            "advantage once: doubling every advantage doubles it",
        ),
        Probe(
            "incorrect-advantages-doubled",
            "the advantages of the incorrect tokens are doubled",
            "THR_t holds the scored token's own advantage A_t: doubling an incorrect token's "
            "advantage doubles its own THR and leaves every correct token's as it was",
            "scaled:entries",
            _rows_scaled_where_not(2, 3, 2.0),
        ),
        Probe(
            "incorrect-h-doubled",
            "the hidden states of the incorrect tokens are doubled",
            "THR_t sums over the correct tokens u only: doubling an incorrect token's hidden "
            "state doubles its own THR and leaves every correct token's as it was",
            "scaled:entries",
            _rows_scaled_where_not(0, 3, 2.0),
        ),
        Probe(
            "h-doubled",
            "`h` is doubled",
            "THR_t sums ⟨err_t, err_u⟩ · ⟨h_t, h_u⟩: doubling every hidden state multiplies it "
            "by 4",
            "scaled:4",
            _scale((0,), 2.0),
        ),
    ),
    (A7, "thr_weights"): (
        _rows_reversed(
            (0, 1),
            "the tokens (`thr` and `dominant` together)",
            "each token's weight depends on its own THR and flag: reversing the tokens "
            "reverses the weights",
        ),
        Probe(
            "thr-negated",
            "`thr` is negated",
            "a dominant token's weight is 1 + p · sign(THR): negating THR turns 1 + p into "
            "1 − p and back, so the weights go to 2 minus themselves",
            "mirror:1",
            _scale((0,), -1.0),
        ),
        Probe(
            "thr-doubled",
            "`thr` is doubled",
            "only THR's sign counts: doubling it changes no weight",
            "same",
            _scale((0,), 2.0),
        ),
    ),
    (A7, "nll_on_correct"): (
        _mask_read(
            1,
            "the loss is a mean of −logp over the positions the mask marks (of the correct "
            "responses): one fewer marked position changes it",
        ),
        Probe(
            "padded-position",
            "one more padded position is added at the end of every response",
            "padded positions never count, so more padding changes nothing",
            "same",
            _pad_position((0,), 1),
        ),
        _doubled(
            (0,),
            "logp-doubled",
            "`logp` is doubled",
            "a mean of −logp over the correct tokens doubles when logp does",
        ),
        Probe(
            "padding-refilled",
            "the padded positions of `logp` are set to −3.25",
            "padded positions never count, whatever they hold",
            "same",
            _refilled((0,), 1, fill=-3.25),
        ),
        Probe(
            "batch-twice",
            "the batch is given twice over (every row twice)",
            "the loss is a mean over the correct responses' tokens: the same rows twice over "
            "give the same loss",
            "same",
            _repeated(idx=(0, 1, 2)),
        ),
        Probe(
            "incorrect-changed",
            "the incorrect responses' log probabilities are set to −3.25",
            "only the correct responses count",
            "same",
            _rows_refilled((0,), 2),
        ),
    ),
    (A7, "smaug_floor"): (
        Probe(
            "swapped",
            "`seq_logp` and `ref_seq_logp` are swapped",
            "the floor max(0, ref − logp) counts only the responses below the reference: "
            "swapping the two changes it",
            "differs",
            _swap(0, 1),
            exchange=True,
        ),
        _doubled(
            (0, 1),
            "both-doubled",
            "`seq_logp` and `ref_seq_logp` are both doubled",
            "the mean of max(0, ref − logp) over the correct responses doubles when both "
            "log likelihoods do",
        ),
        Probe(
            "batch-twice",
            "the batch is given twice over",
            "the floor is a mean over the correct responses: the same responses twice over "
            "give the same floor",
            "same",
            _repeated(idx=(0, 1, 2)),
        ),
        Probe(
            "incorrect-changed",
            "the incorrect responses' log likelihoods are set to −3.25",
            "only the correct responses count",
            "same",
            _rows_refilled((0,), 2),
        ),
    ),
}


def probes_of(assignment: str, function: str) -> tuple[Probe, ...]:
    return PROBES.get((assignment, function), ())
