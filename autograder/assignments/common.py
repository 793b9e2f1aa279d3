"""Input generators and cases shared by several case modules."""

from __future__ import annotations

import numpy as np

from autograder.spec import Case


def random_distribution(rng: np.random.Generator, n: int, zeros: int = 0) -> list[float]:
    """A Dirichlet(1, …, 1) distribution over ``n`` outcomes, ``zeros`` of them set to 0."""
    p = rng.dirichlet(np.ones(n))
    if zeros:
        p[rng.choice(n, size=zeros, replace=False)] = 0.0
        p = p / p.sum()
    return [float(x) for x in p]


def distribution_pair(n: int, zeros_p: int = 0, zeros_q: int = 0):
    """``make`` for a generated case: (policy, reference), each over ``n`` outcomes."""

    def make(rng):
        return random_distribution(rng, n, zeros_p), random_distribution(rng, n, zeros_q)

    return make


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
