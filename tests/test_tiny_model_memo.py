"""tiny_model/memo.py: the probe cache reuses a result only for the same code, weights and settings.

The suite turns the cache on (conftest: TINY_MODEL_PROBE_CACHE) so that notebook 05's and 06's
pooled probes and test_tiny_model_probe.py's share their per-seed results. These tests catch a
key that ignores something the result depends on (a false hit would hand one function's probe
to another) and a key that differs where nothing does (the notebooks' cells against the
course's reference, which never hit).
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
import torch
from conftest import ROOT

from tiny_model import experiment, memo, pooled
from tiny_model.probe import ProbeConfig
from tiny_model.seam import FUNCTIONS_06, Functions

CONFIG = ProbeConfig(methods=("grpo", "nthr", "random"), groups=60, seed=0)


def _cells(assignment: str) -> dict:
    """The notebook's imports and function cells run as a kernel runs them: compiled in a
    namespace of their own, without the course code's `from __future__ import annotations`."""
    nb = json.loads((ROOT / "solutions" / assignment / f"{assignment}.ipynb").read_text())
    ns: dict = {"__name__": "__main__", "EXPLORE": False}
    for c in nb["cells"]:
        src = "".join(c["source"])
        if c["cell_type"] == "code" and (
            src.startswith("import") or src.lstrip().startswith("def ")
        ):
            exec(compile(src, f"<cell {assignment}>", "exec", dont_inherit=True), ns)  # noqa: S102
    return ns


@pytest.fixture(scope="module")
def ref() -> Functions:
    return Functions.from_solutions()


@pytest.fixture(scope="module")
def model():
    return experiment.load_warm()


def test_the_notebooks_cells_and_the_reference_get_one_key(ref, model):
    """Notebook 06's functions (05's from the course) and notebook 05's own: the same keys as the
    reference's, so their probes are shared."""
    ns06 = _cells("06_nthr")
    fns = ref.replace(**{n: ns06[n] for n in FUNCTIONS_06})
    assert memo.key(model, fns, CONFIG) == memo.key(model, ref, CONFIG) is not None
    ns05 = _cells("05_grpo_lld")
    only05 = Functions.from_solutions(include_06=False)
    assert memo.key(model, Functions.from_namespace(ns05), CONFIG) == memo.key(
        model, only05, CONFIG
    )


def test_a_different_function_helper_weight_or_setting_changes_the_key(ref, model):
    base = memo.key(model, ref, CONFIG)
    ns = _cells("06_nthr")
    # a mistake in one graded function (its code)
    src = "def eta_schedule(success_rate):\n    return 2 * (0.5 - success_rate)\n"
    exec(compile(src, "<mistake>", "exec", dont_inherit=True), ns)  # noqa: S102
    assert memo.key(model, ref.replace(eta_schedule=ns["eta_schedule"]), CONFIG) != base
    # the same code calling a changed helper
    ns2 = _cells("06_nthr")
    exec(compile("def _require_tensor(x, name, ndim):\n    return None\n", "<h>", "exec"), ns2)  # noqa: S102
    fns = ref.replace(**{n: ns2[n] for n in FUNCTIONS_06})
    assert memo.key(model, fns, CONFIG) != base
    # one weight moved by one float32 step
    moved = experiment.load_warm()
    with torch.no_grad():
        w = next(moved.parameters())
        w.view(-1)[0] = torch.nextafter(w.view(-1)[0], torch.tensor(float("inf")))
    assert memo.key(moved, ref, CONFIG) != base
    # another seed, another method list, another step size
    for changed in (dict(seed=1), dict(methods=("grpo", "nthr")), dict(lr=2e-5)):
        assert memo.key(model, ref, ProbeConfig(**{**CONFIG.to_dict(), **changed})) != base


def test_a_probe_from_another_version_of_tiny_model_gets_another_key(ref, model, monkeypatch):
    """The probe's own code is part of what a result depends on: is a result cached by
    another version of tiny_model (another source digest) never handed to this one?"""
    base = memo.key(model, ref, CONFIG)
    assert memo.source_digest() == memo.source_digest()  # read once, stable
    monkeypatch.setattr(memo, "_SOURCE_DIGEST", ["0" * 64])
    assert memo.key(model, ref, CONFIG) != base


def test_a_function_holding_an_object_it_cannot_describe_is_not_cached(ref, model):
    """A global tensor (or any object) in what a function loads: no key, the probe is computed."""
    ns = {"torch": torch, "SCALE": torch.tensor(2.0)}
    exec("def eta_schedule(p):\n    return SCALE * abs(0.5 - p)\n", ns)  # noqa: S102
    assert memo.key(model, ref.replace(eta_schedule=ns["eta_schedule"]), CONFIG) is None


def test_a_cached_seed_comes_back_equal_and_is_not_computed_again(
    ref, model, tmp_path, monkeypatch
):
    """With the cache on, the second run_probe_seeds loads what the first stored (run_probe is not
    called) and gives the same pooled result; with it off, nothing is stored."""
    monkeypatch.setenv(memo.ENV, str(tmp_path / "cache"))
    small = dict(methods=("grpo", "pos_only"), groups=2, optimizer="sgd")
    only05 = Functions.from_solutions(include_06=False)
    with experiment.deterministic(threads=1):
        first = pooled.run_probe_seeds(model, only05, (0, 1), **small)
    assert len(list((tmp_path / "cache").glob("*.pt"))) == 2

    def computed(*args, **kwargs):
        raise AssertionError("run_probe was called for a cached seed")

    monkeypatch.setattr(pooled, "run_probe", computed)
    seen = []
    again = pooled.run_probe_seeds(model, only05, (0, 1), progress=seen.append, **small)
    assert sum(seen) == 4  # the progress bar still advances by the groups
    for m in small["methods"]:
        assert np.array_equal(first.changes[m], again.changes[m])
    assert first.paired == again.paired
    monkeypatch.undo()  # run_probe back; the cache off
    monkeypatch.delenv(memo.ENV, raising=False)
    assert memo.folder() is None
    with experiment.deterministic(threads=1):
        pooled.run_probe_seeds(model, only05, (2,), **small)
    assert len(list((tmp_path / "cache").glob("*.pt"))) == 2  # seed 2 was not stored


class _Planted:
    """A pickle that runs code when unpickled: it creates the file it names."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("planted", ["a pickle that runs code", "garbage", "a link"])
def test_a_planted_or_broken_entry_runs_nothing_and_is_computed_again(
    tmp_path, monkeypatch, planted
):
    """An entry file that unpickles into a command (a folder another user could write), garbage
    (which raised UnpicklingError) or a link to a file elsewhere: does load run nothing, return
    no result, and the probe get computed and stored whole?"""
    where = tmp_path / "cache"
    where.mkdir(mode=0o700)
    monkeypatch.setenv(memo.ENV, str(where))
    k = "0" * 64
    marker = tmp_path / "planted-code-ran"
    entry = where / f"{k}.pt"
    if planted == "a pickle that runs code":
        torch.save({"result": _Planted(str(marker))}, entry)
    elif planted == "garbage":
        entry.write_bytes(b"\x80\x04garbage that is no pickle")
    else:
        real = tmp_path / "elsewhere.pt"
        torch.save({"$tensor": torch.zeros(1)}, real)
        entry.symlink_to(real)
    assert memo.load(k) is None
    assert not marker.exists(), "loading a cache entry ran the code it held"
    memo.store(k, {"changes": np.arange(3.0)})
    assert np.array_equal(memo.load(k)["changes"], np.arange(3.0))


def test_a_probe_cache_folder_other_users_can_write_is_not_used(tmp_path, monkeypatch, capsys):
    """TINY_MODEL_PROBE_CACHE naming a folder others can write: is nothing stored or loaded
    there, with a line saying why?"""
    where = tmp_path / "shared"
    where.mkdir()
    where.chmod(0o777)
    monkeypatch.setenv(memo.ENV, str(where))
    memo.store("1" * 64, {"x": 1})
    assert not any(where.iterdir())
    assert memo.load("1" * 64) is None
    assert "can be written by other users" in capsys.readouterr().err


def test_a_probe_result_comes_back_from_its_data_only_form_equal(ref, model):
    """The data-only form (tensors, numpy arrays, the course's dataclasses): does a real
    ProbeResult come back with the same config, arrays, tensors and dtypes?"""
    from tiny_model.probe import run_probe

    config = ProbeConfig(methods=("grpo", "pos_only"), groups=2, optimizer="sgd")
    with experiment.deterministic(threads=1):
        r = run_probe(model, Functions.from_solutions(include_06=False), config)
    buf = io.BytesIO()
    torch.save(memo._encode(r), buf)
    back = memo._decode(torch.load(io.BytesIO(buf.getvalue()), weights_only=True))
    assert type(back) is type(r) and back.config == r.config
    for m in config.methods:
        assert back.changes[m].dtype == r.changes[m].dtype
        assert np.array_equal(back.changes[m], r.changes[m])
        assert torch.equal(back.weights[m], r.weights[m])
    assert torch.equal(back.groups.responses, r.groups.responses)
    assert back.lld == r.lld and back.paired == r.paired
