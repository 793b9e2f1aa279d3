"""The live cells of 05-07 run the tiny model on the learner's own functions, after a check.

SelfCheck.live (autograder.selfcheck.live_functions) picks the functions a live cell needs
(tiny_model.seam.live_needs) and runs each of the learner's on its function's value cases of
the public draw; a stub, a function that is missing or one that gives another value stops the
live run, and the cell shows the shipped result instead, saying which function and why. The
course form's side (no solutions: another notebook's functions from the learner's own notebook,
the loss from their 07) is tested in test_course_form.py.
"""

from __future__ import annotations

import pytest

from autograder.notebooks import reference
from autograder.selfcheck import SelfCheck, live_functions
from tiny_model import seam
from tiny_model.seam import FUNCTIONS_05, FUNCTIONS_06, Functions, live_needs

A05 = "05_grpo_lld"


@pytest.fixture(scope="module")
def ns05() -> dict:
    return dict(reference.namespace(A05))


def test_the_reference_functions_pass_and_are_the_ones_used(ns05):
    """With notebook 05's own functions defined, the live run uses exactly those objects."""
    live = live_functions(A05, ns05, live_needs(A05))
    assert live.ok, live.problems
    assert {n: live.functions[n] for n in FUNCTIONS_05} == {n: ns05[n] for n in FUNCTIONS_05}
    fns = Functions(**live.functions)
    assert fns.group_advantages is ns05["group_advantages"]


def test_a_stub_a_missing_function_and_a_wrong_one_are_each_named_with_why(ns05):
    """Catches a gate that lets a stub or a wrong function drive the model (the learner would
    watch a traceback or a wrong run instead of the shipped result and the reason)."""

    def group_advantages(rewards, eps=1e-6):
        raise NotImplementedError

    def lld_rate(changes, eps=0.0):  # counts strict decreases only: 0.0 is LLD too
        return float((changes < eps).float().mean())

    ns = {**ns05, "group_advantages": group_advantages, "lld_rate": lld_rate}
    del ns["likelihood_change"]
    live = live_functions(A05, ns, live_needs(A05))
    assert not live.ok
    said = live.say("the shipped probe")
    assert "group_advantages (notebook 05): not written yet (it raises NotImplementedError)" in said
    assert "likelihood_change (notebook 05): not defined in this notebook" in said
    assert "lld_rate (notebook 05): fails its check: on value case" in said
    assert "sequence_logprobs" not in said  # the reference's own passes
    assert "shows the shipped probe instead" in said


def test_another_notebooks_functions_come_from_the_solutions_in_the_full_form():
    """06's live cells in the repository: 05's functions are the reference's (as before the
    gate), 06's the learner's."""
    ns06 = dict(reference.namespace("06_nthr"))
    live = live_functions("06_nthr", ns06, live_needs("06_nthr"))
    assert live.ok, live.problems
    assert all(live.sources[n] == "the reference of notebook 05" for n in FUNCTIONS_05)
    assert all(live.sources[n] == "yours, this notebook" for n in FUNCTIONS_06)


def test_without_the_reference_module_the_loss_is_the_learners_07(monkeypatch):
    """Where tiny_model/reference.py is absent (the course form) every live cell needs 07's
    clipped_surrogate: tiny_model then has no loss of its own."""
    assert "clipped_surrogate" not in live_needs(A05)  # the full form: reference.grpo_loss
    monkeypatch.setattr(seam, "has_reference", lambda: False)
    for a in (A05, "06_nthr", "07_beyond_nthr"):
        assert live_needs(a)["clipped_surrogate"] == "07_beyond_nthr"
    with pytest.raises(ValueError, match="no live cells"):
        live_needs("01_exact_kl")


def test_selfcheck_live_is_the_notebooks_entry(ns05):
    """SelfCheck.live, as the notebooks call it, gives live_functions' answer."""
    live = SelfCheck(A05).live(ns05, live_needs(A05))
    assert live.ok and set(live.functions) == set(FUNCTIONS_05)


def test_the_reference_missing_error_names_the_function_and_its_notebook():
    err = seam.ReferenceMissing("clipped_surrogate")
    assert "`clipped_surrogate` (notebook 07)" in str(err) and "Functions(" in str(err)


def test_the_shipped_probes_are_the_live_cells_runs():
    """probe_05.json and probe_06.json, what a live cell shows where the learner's functions
    cannot run: the settings of 05's and 06's live probes (5 seeds, 60 groups, their methods,
    05 with both update rules), each under 1 MB. Catches a shipped file left from other
    settings, which the learner would compare with their own run."""
    import json

    from tiny_model.pooled import SHIPPED_PROBES, shipped_probe_table

    d05 = json.loads(SHIPPED_PROBES[A05].read_text())
    d06 = json.loads(SHIPPED_PROBES["06_nthr"].read_text())
    for data, methods in ((d05["sgd"], ["grpo", "pos_only"]), (d05["adam"], ["grpo", "pos_only"]),
                          (d06, ["grpo", "nthr", "random"])):  # fmt: skip
        assert data["seeds"] == [0, 1, 2, 3, 4] and data["config"]["groups"] == 60
        assert data["config"]["methods"] == methods and data["n_groups"] == 300
    assert (d05["sgd"]["config"]["optimizer"], d05["adam"]["config"]["optimizer"]) == (
        "sgd",
        "adam",
    )
    assert d06["config"]["optimizer"] == "adam"
    assert all(p.stat().st_size < 1_000_000 for p in SHIPPED_PROBES.values())
    assert "pooled:" in shipped_probe_table("06_nthr") and "sgd" in shipped_probe_table(A05, "sgd")
