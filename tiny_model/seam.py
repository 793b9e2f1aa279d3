"""The seam: the graded functions of notebooks 05 and 06, passed into tiny_model.

tiny_model never implements ``group_advantages``, ``sequence_logprobs``,
``likelihood_change``, ``lld_rate`` (05) or ``prediction_errors``,
``token_scores``, ``nthr_weights``, ``eta_schedule`` (06). Every probe and
training entry point takes a :class:`Functions` and calls them through it, so
a learner's own functions drive the experiments, and the reference comes from
the one source of truth, the solution notebooks:

    >>> fns = Functions.from_solutions()                 # the reference (source notebooks)
    >>> fns = Functions.from_namespace(globals(), fallback=Functions.from_solutions())
    >>> fns = fns.replace(nthr_weights=my_nthr_weights)   # swap one function

Signatures (the contract of CURRICULUM.md; torch tensors in and out):

    group_advantages(rewards (n_groups, G), eps=1e-6) -> (n_groups, G)
    sequence_logprobs(logits (B, T, V), tokens (B, T), mask (B, T)) -> (B,)
    likelihood_change(logp_before (G,), logp_after (G,), correct (G,) bool) -> float
    lld_rate(changes (N,), eps=0.0) -> float
    prediction_errors(logits (T, V), tokens (T,)) -> (T, V)
    token_scores(h_a (Na, D), err_a (Na, V), h_b (Nb, D), err_b (Nb, V)) -> (Na,)
    nthr_weights(neg_scores (N,), pos_mean_scores (P,), beta=1.0, eta=0.0) -> (N,)
    eta_schedule(success_rate) -> 2 * |0.5 - success_rate|
    thr_weights(thr (T,), dominant (T,) bool, p) -> (T,)                 (07, optional)
    nll_on_correct(logp (B, T), mask (B, T) bool, correct (B,) bool) -> ()  (07, optional)
    smaug_floor(seq_logp (B,), ref_seq_logp (B,), correct (B,) bool) -> ()  (07, optional)
    thr_token_scores(h (T, D), err (T, V), token_adv (T,), correct (T,) bool) -> (T,)  (07, optional)
    clipped_surrogate(logp (B, T), logp_old (B, T), advantages (B, T), mask (B, T) bool,
                      eps_low, eps_high, mode) -> ()                       (07, optional)

The 07 functions are optional: where one is None, tiny_model uses its own reference
(tiny_model/reference.py, through :func:`reference`; the same formulas), so every 05/06 call
is unchanged. So do the loss's other graded pieces, 02's ``k3`` and 03's ``aggregate_loss``.
reference.py is the one module of tiny_model that implements graded maths; the course form
(``drills release --course``) leaves it out, and there :func:`reference` raises
:class:`ReferenceMissing`, naming the function a run needs. Training calls all five when set; the one-step probe calls the THR
pair (through grpo.token_weights) but not the three losses (probe.py uses its own, unclipped).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

FUNCTIONS_05 = ("group_advantages", "sequence_logprobs", "likelihood_change", "lld_rate")
FUNCTIONS_06 = ("prediction_errors", "token_scores", "nthr_weights", "eta_schedule")
FUNCTIONS_07 = (
    "thr_weights",
    "nll_on_correct",
    "smaug_floor",
    "thr_token_scores",
    "clipped_surrogate",
)


@dataclass(frozen=True)
class Functions:
    """The learner-facing functions tiny_model calls (05 required, 06 optional)."""

    group_advantages: Callable
    sequence_logprobs: Callable
    likelihood_change: Callable
    lld_rate: Callable
    prediction_errors: Callable | None = None
    token_scores: Callable | None = None
    nthr_weights: Callable | None = None
    eta_schedule: Callable | None = None
    thr_weights: Callable | None = None
    nll_on_correct: Callable | None = None
    smaug_floor: Callable | None = None
    thr_token_scores: Callable | None = None
    clipped_surrogate: Callable | None = None

    @classmethod
    def from_solutions(cls, root: Path | None = None, include_06: bool = True) -> Functions:
        """The reference implementations, executed from the source notebooks 05 (and 06)."""
        from autograder.notebooks import reference  # trusted: the course's own source notebooks

        ns05 = reference.namespace("05_grpo_lld", root)
        picked = {name: ns05[name] for name in FUNCTIONS_05}
        if include_06:
            ns06 = reference.namespace("06_nthr", root)
            picked.update({name: ns06[name] for name in FUNCTIONS_06})
        return cls(**picked)

    @classmethod
    def from_namespace(
        cls, namespace: Mapping[str, object], fallback: Functions | None = None
    ) -> Functions:
        """Pick the functions defined in ``namespace`` (e.g. a notebook's ``globals()``).

        Names missing from ``namespace`` come from ``fallback``; a required (05)
        name missing from both is an error.
        """
        picked: dict[str, Callable | None] = {}
        for name in FUNCTIONS_05 + FUNCTIONS_06 + FUNCTIONS_07:
            fn = namespace.get(name)
            if fn is None and fallback is not None:
                fn = getattr(fallback, name)
            if fn is not None and not callable(fn):
                raise TypeError(f"{name} in the namespace is not callable")
            picked[name] = fn
        missing = [name for name in FUNCTIONS_05 if picked[name] is None]
        if missing:
            raise ValueError(f"missing required functions: {', '.join(missing)}")
        return cls(**picked)

    def replace(self, **changes: Callable | None) -> Functions:
        """A copy with some functions swapped (``fns.replace(token_scores=mine)``)."""
        return dataclasses.replace(self, **changes)

    def require(self, *names: str) -> None:
        """Raise a ValueError naming the functions a method needs but this object lacks."""
        missing = [name for name in names if getattr(self, name) is None]
        if missing:
            raise ValueError(
                f"this needs {', '.join(missing)} (notebook 06): pass them in Functions(...)"
            )


GRADED_IN = {
    **dict.fromkeys(FUNCTIONS_05, "05_grpo_lld"),
    **dict.fromkeys(FUNCTIONS_06, "06_nthr"),
    **dict.fromkeys(FUNCTIONS_07, "07_beyond_nthr"),
}
REFERENCE_MODULE = "tiny_model.reference"
NOTEBOOK_OF = {
    **{name: assignment[:2] for name, assignment in GRADED_IN.items()},
    "grpo_loss": "07",  # the clipped surrogate, tiny_model's signature
    "k3": "02",
    "aggregate_loss": "03",
}


class ReferenceMissing(ValueError):
    """A run needs a graded function that neither its Functions nor this installation has."""

    def __init__(self, name: str):
        self.name = name
        nb = NOTEBOOK_OF.get(name, "?")
        super().__init__(
            f"this run needs `{name}` (notebook {nb}), and this installation has no reference "
            "for it (the course form ships none): pass your own in Functions(...)"
        )


def has_reference() -> bool:
    """Does this installation hold tiny_model's reference implementations (reference.py)?"""
    import importlib.util

    return importlib.util.find_spec(REFERENCE_MODULE) is not None


def reference(name: str) -> Callable:
    """tiny_model's own implementation of the graded function ``name`` (reference.py), for a
    run whose Functions leaves it unset; :class:`ReferenceMissing` where the installation has
    none (the course form)."""
    import importlib

    try:
        module = importlib.import_module(REFERENCE_MODULE)
    except ModuleNotFoundError as e:
        if e.name != REFERENCE_MODULE:
            raise
        raise ReferenceMissing(name) from None
    return getattr(module, name)


LIVE_07 = ("thr_token_scores", "thr_weights", "clipped_surrogate")  # 07's live run: thr_explore


def live_needs(assignment: str) -> dict[str, str]:
    """The graded functions (name -> the notebook that grades it) the live cells of
    ``assignment`` run the model on: 05's probe needs 05's four; 06's probe and training add
    06's four; 07's training adds 07's THR scores, THR weights and clipped surrogate. Where
    this installation has no reference (the course form), the loss is the learner's too: 07's
    ``clipped_surrogate`` (the probe's step at ratio 1, where clipping never binds, is the
    unclipped surrogate's)."""
    names = {
        "05_grpo_lld": FUNCTIONS_05,
        "06_nthr": FUNCTIONS_05 + FUNCTIONS_06,
        "07_beyond_nthr": FUNCTIONS_05 + FUNCTIONS_06 + LIVE_07,
    }.get(assignment)
    if names is None:
        raise ValueError(f"{assignment!r} has no live cells on the tiny model")
    if not has_reference() and "clipped_surrogate" not in names:
        names = names + ("clipped_surrogate",)
    return {n: GRADED_IN[n] for n in names}
