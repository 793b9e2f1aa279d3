"""Cases and known mistakes, one module per assignment (``aNN_<name>.py`` with a ``SPEC``)."""

from __future__ import annotations

import importlib

from autograder.spec import AssignmentSpec

MODULES = {
    "01_exact_kl": "a01_exact_kl",
    "02_clipped_estimators": "a02_clipped_estimators",
    "03_sum_vs_mean": "a03_sum_vs_mean",
    "04_rlef_turn_rewards": "a04_rlef_turn_rewards",
    "05_grpo_lld": "a05_grpo_lld",
    "06_nthr": "a06_nthr",
}


def get(assignment: str) -> AssignmentSpec:
    if assignment not in MODULES:
        raise KeyError(f"unknown assignment {assignment!r}; known: {', '.join(MODULES)}")
    module = importlib.import_module(f"autograder.assignments.{MODULES[assignment]}")
    return module.SPEC
