"""The outcome cache: computed once, recomputed whenever what it depends on changes, never trusted
when damaged, and safe when several checks write it at once."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_drills

from autograder import assignments
from autograder.assignments import MODULES
from autograder.cases import seeds
from autograder.notebooks import notebook, reference
from autograder.scoring import cache, evaluate, memo

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "fixtures" / "corpus"
A = "01_exact_kl"
SECRET = "cache-test-secret-5d1e"


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """An empty cache folder, no in-memory caches, and a count of reference computations."""
    monkeypatch.setenv("DRILLS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DRILLS_CACHE", raising=False)
    counts = {"reference": 0}
    real_namespace = reference.namespace

    def counting_namespace(assignment, root=None):
        counts["reference"] += 1
        return real_namespace(assignment, root)

    monkeypatch.setattr(reference, "namespace", counting_namespace)

    def forget():
        """A new process: nothing in memory, only what is on disk."""
        memo._EXPECTED.clear()
        memo._MUTANTS.clear()
        reference._CACHE.clear()
        counts["reference"] = 0

    forget()
    yield counts, forget, tmp_path / "cache"
    forget()


def _outcomes(secret=SECRET, student=None, root=None):
    return memo.assignment_outcomes(A, secret, student, root)


def _entries(folder: Path, kind: str) -> list[Path]:
    return sorted((folder / f"v{cache.FORMAT}" / kind).glob("*.json"))


def test_second_preparation_reads_the_cache_and_runs_no_reference(fresh):
    """Prepared twice (as two checks would): is the reference run only the first time, with
    the same inputs, expected outcomes and case outlines both times?"""
    counts, forget, folder = fresh
    first = _outcomes()
    assert counts["reference"] > 0
    forget()
    second = _outcomes()
    assert counts["reference"] == 0
    assert (second.inputs, second.expected, second.points) == (
        first.inputs,
        first.expected,
        first.points,
    )
    for name, spec in first.specs.items():
        got = second.specs[name]
        assert [(c.id, c.hidden, c.weight, c.rtol, c.atol, c.note) for c in got.cases] == [
            (c.id, c.hidden, c.weight, c.rtol, c.atol, c.note) for c in spec.cases
        ]
        assert [(m.id, m.diagnosis) for m in got.mistakes] == [
            (m.id, m.diagnosis) for m in spec.mistakes
        ]
    assert len(_entries(folder, "assignment")) == 1


@pytest.mark.parametrize("change", ["secret", "student", "numpy version", "torch version"])
def test_a_changed_secret_student_or_library_version_is_computed_afresh(fresh, monkeypatch, change):
    """Does any one key part changing give a fresh computation (and a second entry)?"""
    counts, forget, folder = fresh
    _outcomes()
    forget()
    secret, student = SECRET, None
    if change == "secret":
        secret = SECRET + "-other"
    elif change == "student":
        student = "alice"
    else:
        lib = change.split()[0]
        versions = dict(cache.library_versions(), **{lib: "0.0.0-other"})
        monkeypatch.setattr(cache, "library_versions", lambda: dict(versions))
    _outcomes(secret, student)
    assert counts["reference"] > 0, change
    assert len(_entries(folder, "assignment")) == 2


def test_a_changed_source_notebook_gives_its_new_expected_values(fresh, tmp_path):
    """Edit the reference solution in the source notebook: are the expected outcomes the new
    solution's, not the cached ones?"""
    counts, forget, _ = fresh
    root = tmp_path / "course"
    shutil.copytree(REPO / "solutions" / A, root / "solutions" / A)
    before = _outcomes(root=root).expected["forward_kl"]
    forget()
    path = notebook.source_path(A, root)
    nb = json.loads(path.read_text())
    for c in nb["cells"]:
        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "forward_kl":
            src = "".join(c["source"])
            assert "return math.fsum(terms)" in src
            c["source"] = src.replace("return math.fsum(terms)", "return 2 * math.fsum(terms)")
    path.write_text(json.dumps(nb))
    after = _outcomes(root=root).expected["forward_kl"]
    assert counts["reference"] > 0
    doubled = [
        b["value"] * 2
        for b in before
        if isinstance(b.get("value"), float) and b["value"] not in (0.0,)
    ]
    assert doubled and doubled == [
        a["value"]
        for a, b in zip(after, before)
        if isinstance(b.get("value"), float) and b["value"]
    ]


def test_a_changed_case_module_or_its_imports_gives_a_fresh_computation(
    fresh, tmp_path, monkeypatch
):
    """Edit a01's case module, or common.py which it imports: recomputed? Edit a03: still cached?"""
    counts, forget, _ = fresh
    pkg = tmp_path / "autograder"
    shutil.copytree(cache.PACKAGE, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "PACKAGE", pkg)
    _outcomes()
    for edited, recomputed in (
        ("assignments/a03_sum_vs_mean.py", False),
        ("assignments/a01_exact_kl.py", True),
        ("assignments/common.py", True),
        ("cases/spec.py", True),
        ("cases/codec.py", True),
    ):
        forget()
        with (pkg / edited).open("a") as f:
            f.write("\n# edited\n")
        _outcomes()
        assert (counts["reference"] > 0) == recomputed, edited


@pytest.mark.parametrize("damage", ["truncated", "value edited", "another key's entry", "not json"])
def test_a_damaged_entry_is_ignored_and_rebuilt(fresh, damage):
    """Every entry truncated, edited, replaced by another key's entry or garbage: never
    trusted, computed again and written back whole?"""
    counts, forget, folder = fresh
    good = _outcomes()
    entries = [p for kind in ("assignment", "reference") for p in _entries(folder, kind)]
    others = {}
    if damage == "another key's entry":
        forget()
        _outcomes(student="bob")  # bob's generated inputs differ: other entries of each kind
        for p in entries:
            kind = p.parent.name
            others[p] = next(q for q in _entries(folder, kind) if q not in entries)
    for p in entries:
        text = p.read_text()
        if damage == "truncated":
            p.write_text(text[: len(text) // 2])
        elif damage == "value edited":
            body = json.loads(text)
            value = body["value"]
            (value["expected"]["forward_kl"] if "expected" in value else value)[0] = {"value": 1.0}
            p.write_text(json.dumps(body))
        elif damage == "another key's entry":
            shutil.copy(others[p], p)
        else:
            p.write_text("\x00garbage")
    forget()
    again = _outcomes()
    assert counts["reference"] > 0, damage
    assert again.expected == good.expected
    for p in entries:
        body = json.loads(p.read_text())
        assert cache.load(body["kind"], body["key"]) == body["value"]
        assert body["key"].get("student", "") == ""
    forget()
    _outcomes()
    assert counts["reference"] == 0


def test_an_entry_edited_in_place_without_its_key_is_not_trusted(fresh):
    """The HMAC covers the value's bytes as written: one digit of an expected value changed
    where it stands (same length, same layout, the entry still valid JSON) is refused, and so
    is the same entry with a field moved after the value or with the value written as
    another writer would lay it out."""
    _, forget, folder = fresh
    good = _outcomes()
    for how in ("digit changed in place", "value not last", "value re-spaced"):
        for p in _entries(folder, "assignment"):
            text = p.read_bytes()
            body = json.loads(text)
            if how == "digit changed in place":
                at = text.index(b'"expected"')
                digit = next(i for i in range(at, len(text)) if text[i : i + 1] in b"123456789")
                new = b"1" if text[digit : digit + 1] != b"1" else b"2"
                p.write_bytes(text[:digit] + new + text[digit + 1 :])
                assert json.loads(p.read_bytes())["mac"] == body["mac"]
            elif how == "value not last":
                moved = {k: body[k] for k in ("format", "kind", "key", "value", "mac")}
                p.write_text(json.dumps(moved, separators=(",", ":")))
            else:
                p.write_text(json.dumps(body))
            assert cache.load("assignment", body["key"]) is None, f"{how}: trusted"
        forget()
        again = _outcomes()
        assert again.expected == good.expected, how
        for p in _entries(folder, "assignment"):  # written back whole, and trusted again
            body = json.loads(p.read_bytes())
            assert cache.load("assignment", body["key"]) == body["value"], how


def test_mistake_outcomes_are_computed_only_for_a_failed_function_and_cached(fresh):
    """A correct function needs no mutant runs; a failing one computes them once, then reads them."""
    counts, forget, folder = fresh
    out = _outcomes()
    ns = reference.namespace(A)
    for name in out.names:
        got, times = evaluate.run_cases(ns[name], out.inputs[name], ns)
        evaluate.score(
            A,
            out.specs[name],
            1.0,
            out.inputs[name],
            out.expected[name],
            got,
            times,
            out.mutants[name],
        )
    assert _entries(folder, "mistakes") == []
    wrong = lambda policy, reference: 0.0  # noqa: E731
    got, times = evaluate.run_cases(wrong, out.inputs["forward_kl"], ns)
    args = (A, out.specs["forward_kl"], 3.0, out.inputs["forward_kl"], out.expected["forward_kl"])
    first = evaluate.score(*args, got, times, out.mutants["forward_kl"])
    # one entry for its fixed cases' part, one for its generated cases' (memo._parts)
    assert len(_entries(folder, "mistakes")) == 2
    forget()
    again = _outcomes()
    second = evaluate.score(*args, got, times, again.mutants["forward_kl"])
    assert (first.score, first.mistake) == (second.score, second.mistake)
    assert counts["reference"] == 0


def test_cache_files_never_hold_the_secret(fresh):
    """The secret is a key part only as a digest: is it absent from every file?"""
    _, _, folder = fresh
    _outcomes()
    files = list(folder.rglob("*.json"))
    assert files
    for p in files:
        assert SECRET not in p.read_text()


def test_caching_can_be_turned_off(fresh, monkeypatch):
    """DRILLS_CACHE=off: nothing written, everything computed."""
    counts, forget, folder = fresh
    monkeypatch.setenv("DRILLS_CACHE", "off")
    _outcomes()
    forget()
    _outcomes()
    assert counts["reference"] > 0
    assert not folder.exists()


_HAMMER = """
import sys
from autograder.scoring import cache
key = {"n": 1}
value = {"payload": list(range(int(sys.argv[2])))}
for i in range(int(sys.argv[1])):
    cache.store("hammer", key, value)
    got = cache.load("hammer", key)
    assert got is None or got == value, got
"""


def test_concurrent_writers_never_leave_a_broken_entry(tmp_path):
    """Four processes writing and reading one entry 300 times each: does every read give the
    whole value or nothing, and is one whole entry (and no temporary file) left?"""
    env = dict(os.environ, DRILLS_CACHE_DIR=str(tmp_path / "c"))
    procs = [
        subprocess.Popen([sys.executable, "-c", _HAMMER, "300", "20000"], env=env) for _ in range(4)
    ]
    assert [p.wait(timeout=300) for p in procs] == [0, 0, 0, 0]
    files = list((tmp_path / "c").rglob("*"))
    assert [f.name for f in files if f.is_file() and f.name.startswith(".tmp")] == []
    assert cache.load("hammer", {"n": 1}, root=tmp_path / "c") == {"payload": list(range(20000))}


def test_two_concurrent_checks_share_one_cold_cache(tmp_path):
    """Two `drills check` at once on an empty cache: both full marks, and a third check then
    finds whole entries (it runs no reference: the entries it reads are valid)?"""
    env = dict(os.environ, DRILLS_CACHE_DIR=str(tmp_path / "c"))
    env.pop("DRILLS_SECRET", None)
    cmd = [
        sys.executable,
        "-m",
        "autograder.cli",
        "check",
        str(CORPUS / "solution.ipynb"),
        "--json",
    ]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [json.loads(o)["score"] for o in outs] == [7.0, 7.0]
    for p in (tmp_path / "c").rglob("*.json"):
        entry = json.loads(p.read_text())
        assert cache.load(entry["kind"], entry["key"], root=tmp_path / "c") is not None, p
    probe = (
        "import json, sys\n"
        "from autograder.notebooks import reference\n"
        "def boom(*a, **k): raise SystemExit('the reference ran: the cache was not used')\n"
        "reference.namespace = boom\n"
        "from autograder import cli\n"
        "sys.exit(cli.main(['check', sys.argv[1], '--json']))\n"
    )
    third = subprocess.run(
        [sys.executable, "-c", probe, str(CORPUS / "solution.ipynb")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert third.returncode == 0, third.stderr[-2000:]
    assert json.loads(third.stdout)["score"] == 7.0


def _plain_fields(obj) -> dict:
    """Every field of a spec dataclass except callables, case inputs and anchors (test-only),
    recursively."""
    import dataclasses

    out = {}
    for f in dataclasses.fields(obj):
        if (type(obj).__name__, f.name) in cache._INPUT_FIELDS | cache._TEST_ONLY_FIELDS:
            continue
        v = getattr(obj, f.name)
        if isinstance(v, tuple) and v and dataclasses.is_dataclass(v[0]):
            out[f.name] = [_plain_fields(x) for x in v]
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            out[f.name] = _plain_fields(v)
        elif callable(v) and not isinstance(v, type):
            out[f.name] = "callable"
        else:
            out[f.name] = v
    return out


@pytest.mark.parametrize("assignment", sorted(MODULES))
def test_spec_outlines_keep_every_field_scoring_can_read(assignment):
    """A cached outline stands in for the case module when scoring: does it keep every field of
    every function, case and mistake (ids, weights, tolerances, notes, kinds, ...), generated
    cases still generated?"""
    from autograder import assignments

    for f in assignments.get(assignment).functions:
        back = cache.spec_from_outline(json.loads(json.dumps(cache.spec_outline(f))))
        assert _plain_fields(back) == _plain_fields(f), f.name
        assert [c.hidden for c in back.cases] == [c.hidden for c in f.cases]


def test_prune_keeps_the_newest_entries_under_the_limit_and_drops_other_formats(
    tmp_path, monkeypatch
):
    """Per-student entries of a big class: past the size limit, do the oldest entries go (down
    to 3/4 of it), the newest stay, and entries of an older cache format vanish?"""
    # store() prunes by itself every PRUNE_EVERY stores of the process: one of the ten below
    # could be that store (it depends on what ran before in this process) and would remove
    # v0 before the prune counted here. Count from zero.
    monkeypatch.setattr(cache, "_STORES", [0])
    root = tmp_path / "c"
    (root / "v0" / "assignment").mkdir(parents=True)
    (root / "v0" / "assignment" / "old.json").write_text("{}")
    for i in range(10):
        assert cache.store("assignment", {"i": i}, {"payload": "x" * 1000}, root=root)
        p = cache._entry_path(root, "assignment", {"i": i})
        os.utime(p, (1_000_000 + i, 1_000_000 + i))  # written in order i = 0, 1, ...
    size = sum(p.stat().st_size for p in (root / f"v{cache.FORMAT}").rglob("*.json"))
    removed = cache.prune(root, limit=size // 2)
    assert not (root / "v0").exists()
    kept = [i for i in range(10) if cache.load("assignment", {"i": i}, root=root) is not None]
    assert kept == list(range(10 - len(kept), 10)) and 0 < len(kept) <= 4, kept
    assert removed == 1 + 10 - len(kept)
    assert cache.prune(root, limit=size) == 0


def test_a_remembered_digest_still_sees_a_same_size_edit(tmp_path):
    """In-process digests are remembered (one hash per run, not one per submission): is a
    later edit that keeps the file's size still seen, whether the file was old (remembered,
    then its new mtime differs) or just written (too recent to be remembered, so re-read)?
    Catches a memo keyed on the path alone, or trusting a timestamp within its granularity."""
    f = tmp_path / "source.ipynb"
    f.write_text('{"a": 1}')
    fresh_digest = cache.file_digest(f)
    f.write_text('{"a": 2}')  # same size, within milliseconds: same coarse mtime possible
    assert cache.file_digest(f) != fresh_digest
    assert ("file", f) not in cache._DIGESTS  # too recent to be remembered
    old = f.stat().st_mtime - 3600
    os.utime(f, (old, old))
    remembered = cache.file_digest(f)
    assert cache._DIGESTS[("file", f)][2] == remembered
    f.write_text('{"a": 3}')  # an edit gives the file a new mtime
    assert cache.file_digest(f) == cache._sha(b'{"a": 3}') != remembered


def test_drills_warm_fills_what_a_first_check_of_a_blank_notebook_needs(fresh, monkeypatch):
    """`drills warm` (started by the Check my work button): after it, are the expected and
    every function's known-mistake outcomes read from disk, with no reference or mistake
    run? Catches a warm-up that caches other keys (secret, student) than the check uses."""
    counts, forget, folder = fresh
    monkeypatch.delenv("DRILLS_SECRET", raising=False)  # as run_drills: the public default

    p = run_drills("warm", A, DRILLS_CACHE_DIR=str(folder))
    assert p.returncode == 0, p.stderr
    assert f"{A}: outcomes of 3 functions cached" in p.stdout
    forget()
    out = memo.assignment_outcomes(A, seeds.course_secret(None), None)
    for name in out.names:
        assert sorted(out.mutants[name]) == sorted(
            m.id for m in assignments.get(A).function(name).mistakes
        )
    assert counts["reference"] == 0  # nothing computed: all of it came from the cache
    # an entry per part of each function: its fixed cases and its generated ones (memo._parts)
    parts = sum(len({c.hidden for c in out.specs[name].cases}) for name in out.names)
    assert len(_entries(folder, "mistakes")) == parts
    bad = run_drills("warm", "99_nope", DRILLS_CACHE_DIR=str(folder))
    assert bad.returncode == 2 and "unknown assignment" in bad.stderr


# -- a cold and a warm cache give the same feedback --------------------------------------------


def _without_timings(x):
    """results.jsonl's objects less what a clock measured."""
    if isinstance(x, dict):
        return {k: _without_timings(v) for k, v in x.items() if k != "seconds"}
    if isinstance(x, list):
        return [_without_timings(v) for v in x]
    return x


def test_feedback_and_results_are_the_same_with_a_cold_or_a_warm_outcome_cache(fresh, tmp_path):
    """Inputs, expected values and known mistakes' outcomes read back from the outcome cache
    once rendered an object's fields in another order (sorted by the JSON round trip: a Turn
    of 04 read `Turn(policy_logps=…` warm and `Turn(response=…` cold). Graded with the cache
    cold, then warm in a new process: are the feedback pages and results the same bytes?"""
    import class_fixture

    from autograder.course.grade_cli import Grader, grade_course

    _, forget, folder = fresh
    a = "04_rlef_turn_rewards"
    subs = class_fixture.write_class(
        tmp_path / "class", [("ann", a, "unrecognised"), ("bob", a, "mistakes-1")]
    )
    pages, results = [], []
    for run in ("cold", "warm"):
        forget()  # a new process: only the disk cache is left
        out = tmp_path / run
        grade_course([subs], out, Grader(hidden=[out.resolve()]))
        pages.append(  # the footer says when each run graded: the rest must be the same bytes
            {
                p.name: re.sub(
                    rb'<footer class="run">.*?</footer>', b"", p.read_bytes(), flags=re.S
                )
                for p in sorted((out / "feedback").rglob("*.html"))
            }
        )
        lines = (out / "results.jsonl").read_text().splitlines()
        results.append([_without_timings(json.loads(x)) for x in lines])
        if run == "cold":
            assert _entries(folder, "assignment"), "the cold run should have filled the cache"
    assert b"Turn(response=" in b"".join(pages[0].values()), "no object input was shown"
    assert pages[0] == pages[1]
    assert results[0] == results[1]


def test_a_bool_mask_input_reads_back_from_the_cache_as_it_was_encoded(fresh):
    """05's likelihood_change takes a bool mask: encoded `{"$tensor", "shape", "dtype"}`, read
    back from the cache it was `{"$tensor", "dtype", "shape"}` and rendered differently on the
    feedback page. Are the cached inputs, and their rendering, those of a cold computation?"""
    _, forget, _ = fresh
    a = "05_grpo_lld"
    cold = memo.assignment_outcomes(a, SECRET)
    forget()
    warm = memo.assignment_outcomes(a, SECRET)
    assert warm.specs is not None and json.dumps(warm.inputs) == json.dumps(cold.inputs)
    shown = [evaluate._render_inputs(c) for c in cold.inputs["likelihood_change"]]
    assert any("'$tensor'" in s or "True" in s for s in shown)
    assert [evaluate._render_inputs(c) for c in warm.inputs["likelihood_change"]] == shown


def _forge_with_a_plain_checksum(p: Path) -> None:
    """What an attacker who can write the folder does: change the expected outcomes and put
    beside them a checksum of the kind anyone can recompute (the old format's sha256)."""
    import hashlib

    body = json.loads(p.read_text())
    value = body["value"]
    if "expected" in value:
        for name in value["expected"]:
            value["expected"][name] = [{"value": 123.0} for _ in value["expected"][name]]
    plain = cache._canonical([body["kind"], body["key"], value])
    body["checksum"] = body["mac"] = hashlib.sha256(plain).hexdigest()
    p.write_text(json.dumps(body))


def test_a_forged_entry_with_a_recomputed_checksum_is_not_trusted(fresh):
    """Entries rewritten with other expected outcomes and a checksum recomputed from them (what
    turned a correct notebook's 7.0 into 4.45 in a shared cache folder): is each one refused and
    the reference's outcomes computed again?"""
    counts, forget, folder = fresh
    good = _outcomes()
    for p in _entries(folder, "assignment") + _entries(folder, "reference"):
        _forge_with_a_plain_checksum(p)
    forget()
    again = _outcomes()
    assert counts["reference"] > 0, "a forged entry was read as a cached outcome"
    assert again.expected == good.expected


def test_a_cache_folder_other_users_can_write_is_refused(tmp_path, capsys):
    """A DRILLS_CACHE_DIR others can write (a shared /tmp folder): is nothing stored in it or read
    from it, with a line saying why, while a private one works?"""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert cache.store("assignment", {"i": 1}, {"v": 1}, root=shared) is False
    assert cache.load("assignment", {"i": 1}, root=shared) is None
    assert not any(shared.iterdir())
    assert "can be written by other users" in capsys.readouterr().err
    private = tmp_path / "private"
    assert cache.store("assignment", {"i": 1}, {"v": 1}, root=private)
    assert cache.load("assignment", {"i": 1}, root=private) == {"v": 1}
    assert (private / cache.KEY_FILE).stat().st_mode & 0o777 == 0o600
    private.chmod(0o757)  # made writable by others later: no longer trusted
    assert cache.load("assignment", {"i": 1}, root=private) is None


@pytest.mark.parametrize("key_damage", ["readable by others", "a link", "another key"])
def test_a_key_that_is_not_private_or_not_the_writers_is_refused(tmp_path, key_damage):
    """The folder's key readable by others, replaced by a link, or swapped for another: is no
    entry written under the old key trusted?"""
    root = tmp_path / "c"
    assert cache.store("assignment", {"i": 1}, {"v": 1}, root=root)
    key = root / cache.KEY_FILE
    if key_damage == "readable by others":
        key.chmod(0o644)
    elif key_damage == "a link":
        elsewhere = tmp_path / "elsewhere"
        elsewhere.write_bytes(key.read_bytes())
        elsewhere.chmod(0o600)
        key.unlink()
        key.symlink_to(elsewhere)
    else:
        key.unlink()
        assert cache.store("assignment", {"i": 2}, {"v": 2}, root=root)  # a new key
    assert cache.load("assignment", {"i": 1}, root=root) is None


def test_a_students_outline_that_differs_is_not_given_the_spec_built_for_another():
    """The specs of cached entries are built once and shared by every student whose outline is
    equal: does an outline that differs (another tolerance) get a spec of its own, and an equal
    one the same spec again?"""
    from autograder.scoring import memo

    a = "01_exact_kl"
    f = assignments.get(a).function("forward_kl")
    outline = json.loads(json.dumps(cache.spec_outline(f)))
    first = memo._spec(a, f.name, outline)
    assert memo._spec(a, f.name, json.loads(json.dumps(outline))) is first
    other = json.loads(json.dumps(outline))
    other["fields"]["cases"]["$tuple"][0]["fields"]["rtol"] = 0.125
    second = memo._spec(a, f.name, other)
    assert second is not first
    assert second.cases[0].rtol == 0.125 and first.cases[0].rtol == f.cases[0].rtol
    assert [c.rtol for c in second.cases[1:]] == [c.rtol for c in f.cases[1:]]


def test_the_inputs_digests_read_from_an_entry_are_those_of_its_inputs(fresh):
    """The mistakes' cache keys stand on each function's part digests (fixed cases, generated
    cases), kept in the assignment entry so a warm read does not encode the inputs again: are
    they, cold and warm, the digests of the inputs that entry holds (a stale one would read
    another input's mistake outcomes)?"""
    _, forget, _ = fresh
    cold = _outcomes(student="carol")
    forget()
    warm = _outcomes(student="carol")
    for out in (cold, warm):
        for name in out.names:
            hidden = [c.hidden for c in out.specs[name].cases]
            assert out.mutants[name].digests == memo.part_digests(out.inputs[name], hidden), name
            assert len(out.mutants[name].digests) == 2, name  # 01 has fixed and generated cases


@pytest.mark.parametrize("a", ["01_exact_kl", "05_grpo_lld"])
def test_outcomes_computed_a_part_at_a_time_are_those_of_one_run_over_every_case(fresh, a):
    """The reference's and every mistake's outcomes on the fixed cases are computed once for a
    class and those on a student's generated cases per student, then put back in case order.
    Are they exactly what one run over all the cases in order gives, for two students (a
    reference or mutant that kept state between calls, or a case put back in the wrong place,
    would differ)?"""
    spec = assignments.get(a)
    for student in ("dora", "emil"):
        out = memo.assignment_outcomes(a, SECRET, student)
        for f in spec.functions:
            inputs = out.inputs[f.name]
            assert out.expected[f.name] == evaluate.reference_run(a, f.name, inputs), f.name
            whole = evaluate.mistakes_run(a, f, inputs)
            assert dict(out.mutants[f.name]) == whole, f.name


def test_a_second_student_computes_only_the_outcomes_of_their_own_generated_cases(fresh):
    """Two students of one class: does the second one's preparation add outcome-cache entries
    for the generated cases only (one reference entry per function that has generated cases),
    reusing the fixed cases' entries the first one wrote?"""
    _, _, folder = fresh
    first = _outcomes(student="fay")
    after_first = set(_entries(folder, "reference"))
    second = _outcomes(student="gil")
    added = set(_entries(folder, "reference")) - after_first
    with_generated = [n for n in second.names if any(c.hidden for c in second.specs[n].cases)]
    assert len(added) == len(with_generated), (len(added), with_generated)
    assert first.inputs != second.inputs  # their generated cases differ
