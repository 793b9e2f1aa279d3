"""Input generators shared by several case modules."""

from __future__ import annotations

import numpy as np


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
