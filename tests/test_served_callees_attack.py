"""No reference code in the learner's process: a caller graded with its callee's reference gets
the callee's outputs by value (autograder.scoring.served), never its source or code.

The attack: a wrong callee that, when called, searches its whole process for the reference
callee (every object gc knows: strings, functions, code objects; every frame; the readable
memory of /proc/self/mem through /proc/self/maps) and every file it can see (the working
folder, /tmp, the harness's folder, its open files), and runs a reference it finds as its own.
With the reference served by value there is nothing to find: the wrong callee with the trick
scores what it scores without it, through `drills grade` warm and cold (and so `drills check`,
which is the same engine), and in-kernel. Before, the callee's reference source travelled in
the caller's case inputs and the trick scored full marks (03: 7/7 against 6.27; 04: 8/8
against 7.15).
"""

from __future__ import annotations

import csv
import json

import nbformat
import pytest
from class_fixture import exercise_with
from conftest import ROOT, run_drills

from autograder.engine import sandbox
from autograder.notebooks import notebook

# The search, in the learner's cell. The learner's own cells hold the marker comment below;
# any text holding it is the learner's, not the reference.
STEAL = r"""

_DRILLS_STOLEN = {}


def _drills_lookup(args):
    # drills-attack-own-source
    # a served table anywhere in the process: [arguments, outcome] pairs; answer from it
    import gc

    want = [list(a) if isinstance(a, (list, tuple)) else a for a in args]
    for obj in gc.get_objects():
        if isinstance(obj, list) and len(obj) == 2 and isinstance(obj[1], dict):
            key, outcome = obj
            if key == want and "value" in outcome:
                return True, outcome["value"]
    return False, None


def _drills_steal(name):
    # drills-attack-own-source
    if name not in _DRILLS_STOLEN:  # one search per process
        _DRILLS_STOLEN[name] = _drills_search(name)
    return _DRILLS_STOLEN[name]


def _drills_search(name):
    # drills-attack-own-source
    import gc, os, sys, types
    mark = "drills-attack-own" + "-source"
    head = "def " + name + "("

    def from_text(text):
        i = text.find(head)
        while i >= 0:
            raw = text[i : i + 50000]
            for body in (raw, raw.replace("\\n", "\n").replace('\\"', '"')):
                if mark in body:
                    continue
                ends = [k for k in range(len(body)) if body.startswith("\n\n\n", k)][:20]
                for end in ends + [len(body)]:
                    try:
                        scope = dict(globals())
                        exec(compile(body[:end], "<stolen>", "exec"), scope)
                        fn = scope.get(name)
                        if callable(fn):
                            return fn
                    except BaseException:
                        pass
            i = text.find(head, i + 1)
        return None

    def own(fn):
        code = getattr(fn, "__code__", None)
        return code is not None and code.co_filename.startswith("<cell")

    for obj in gc.get_objects():
        if isinstance(obj, types.FunctionType) and obj.__name__ == name and not own(obj):
            return obj
        if isinstance(obj, types.CodeType) and obj.co_name == name:
            if not obj.co_filename.startswith("<cell"):
                return types.FunctionType(obj, globals())
        if isinstance(obj, str) and head in obj and mark not in obj:
            fn = from_text(obj)
            if fn is not None:
                return fn
        # strings are not tracked by gc: read them in the containers that hold them
        items = list(obj.values()) if isinstance(obj, dict) else obj
        if isinstance(obj, (dict, list, tuple)):
            for v in list(items):
                if isinstance(v, types.FunctionType) and v.__name__ == name and not own(v):
                    return v
                if isinstance(v, str) and head in v and mark not in v:
                    fn = from_text(v)
                    if fn is not None:
                        return fn
    frame = sys._getframe()
    while frame is not None:
        for v in list(frame.f_locals.values()) + list(frame.f_globals.values()):
            if isinstance(v, types.FunctionType) and v.__name__ == name and not own(v):
                return v
        frame = frame.f_back
    try:
        with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
            for line in maps:
                parts = line.split()
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                if "r" not in parts[1] or hi - lo > 1 << 28 or (len(parts) > 5 and parts[5].startswith("/")):
                    continue
                try:
                    mem.seek(lo)
                    data = mem.read(hi - lo)
                except OSError:
                    continue
                j = data.find(head.encode())
                while j >= 0:
                    text = data[j : j + 20000].split(b"\0")[0].decode("utf-8", "replace")
                    fn = from_text(text)
                    if fn is not None:
                        return fn
                    j = data.find(head.encode(), j + 1)
    except OSError:
        pass
    places = {os.getcwd(), "/tmp", os.path.dirname(os.path.abspath(sys.argv[0] or "."))}
    for fd in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else []:
        try:
            places.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass
    for place in sorted(places):
        todo = [place]
        while todo:
            p = todo.pop()
            try:
                if os.path.isdir(p) and not os.path.islink(p):
                    todo += [os.path.join(p, q) for q in os.listdir(p)][:200]
                elif os.path.isfile(p) and os.path.getsize(p) < 4 << 20:
                    with open(p, encoding="utf-8", errors="replace") as f:
                        text = f.read()
                    if head in text:
                        fn = from_text(text)
                        if fn is not None:
                            return fn
            except OSError:
                pass
    return None
"""

# The wrong callees (the slips of tests/test_callees.py), each asking for the reference first
WRONG = {
    "mean_sampled_log_ratio": (
        "_drills_exact_mean = mean_sampled_log_ratio\n\n\n"
        "def mean_sampled_log_ratio(policy_logps, reference_logps):\n"
        "    # drills-attack-own-source\n"
        "    hit, value = _drills_lookup([policy_logps, reference_logps]) if TRICK else (0, 0)\n"
        "    if hit:\n"
        "        return value\n"
        "    found = _drills_steal('mean_sampled_log_ratio') if TRICK else None\n"
        "    if found is not None:\n"
        "        return found(policy_logps, reference_logps)\n"
        "    return _drills_exact_mean(policy_logps, reference_logps) * 1.01 + 1e-3\n"
    ),
    "extract_code": (
        "def extract_code(response):\n"
        "    # drills-attack-own-source\n"
        "    hit, value = _drills_lookup([response]) if TRICK else (0, 0)\n"
        "    if hit:\n"
        "        return value\n"
        "    found = _drills_steal('extract_code') if TRICK else None\n"
        "    if found is not None:\n"
        "        return found(response)\n"
        "    import re as _re\n\n"
        "    if not isinstance(response, str):\n"
        "        raise ValueError('response must be a str')\n"
        '    m = _re.search(r"```python\\n(.*?)```", response, _re.S)\n'
        "    return m.group(1) if m else None  # no parse check, trailing newline kept\n"
    ),
    "task_reward": (
        "_drills_exact_task = task_reward\n\n\n"
        "def task_reward(turn, is_final):\n"
        "    # drills-attack-own-source\n"
        "    found = _drills_steal('task_reward') if TRICK else None\n"
        "    if found is not None:\n"
        "        return found(turn, is_final)\n"
        "    return _drills_exact_task(turn, is_final) + 0.25\n"
    ),
}
ATTACKED = {"03_sum_vs_mean": ["mean_sampled_log_ratio"], "04_rlef_turn_rewards": list(WRONG)[1:]}


def attack_notebook(assignment: str, trick: bool):
    """The reference solution with the wrong callees of ATTACKED (searching for the reference
    first when ``trick``)."""
    src = notebook.read(notebook.source_path(assignment, ROOT))
    sources = [s for _, _, s in notebook.code_cells(src, {"solution"})]
    first = True

    def cell(functions):
        nonlocal first
        body = next(s for s in sources if all(f"def {f}(" in s for f in functions))
        if first:
            body = f"TRICK = {trick}\n" + STEAL + "\n\n" + body
            first = False
        for f in functions:
            if f in ATTACKED[assignment]:
                body += "\n\n\n" + WRONG[f]
        return body

    return exercise_with(assignment, cell)


def _scores(folder) -> dict[tuple[str, str], float]:
    with open(folder / "grades.csv", newline="") as f:
        return {(r["student_id"], r["assignment"]): float(r["score"]) for r in csv.DictReader(f)}


@pytest.fixture(scope="module")
def attack_class(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("attack")
    for a in ATTACKED:
        for trick in (False, True):
            d = tmp / "submitted" / ("thief" if trick else "honest") / a
            d.mkdir(parents=True)
            nbformat.write(attack_notebook(a, trick), str(d / f"{a}.ipynb"))
    return tmp


# A course secret under which 04's task_reward and turn_rewards pass extract_code one of its
# own generated inputs in 20 of their cases (found by drawing 40 secrets): a served table
# then holds that hidden case's expected value.
COLLIDING_SECRET = "secret-10"


@pytest.mark.skipif(sandbox.detect([]).mode != "bwrap", reason="needs bubblewrap (bwrap)")
@pytest.mark.parametrize("mode", ["warm", "cold"])
def test_stolen_reference_callee_scores_as_the_wrong_callee(attack_class, tmp_path, mode):
    """`drills grade` (warm workers, then cold children): the thief scores what the honest
    wrong callee scores, function by function: nothing of the reference was found."""
    out = tmp_path / "out"
    proc = run_drills(
        "grade",
        str(attack_class),
        "--out",
        str(out),
        "--timeout",
        "20",
        **({"DRILLS_WARM": "off"} if mode == "cold" else {}),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    scores = _scores(out)
    results = {
        (r["student"], r["assignment"]): {f["function"]: f["score"] for f in r["functions"]}
        for r in json.loads((out / "results.json").read_text())["submissions"]
    }
    for a, callees in ATTACKED.items():
        honest, thief = results[("honest", a)], results[("thief", a)]
        assert thief == honest, (a, thief, honest)
        assert scores[("thief", a)] == scores[("honest", a)]
        for f in callees:
            maximum = notebook.points(a, f, ROOT)
            assert thief[f] < maximum, f"{a}: the wrong {f} with the trick scored full marks"


@pytest.mark.skipif(sandbox.detect([]).mode != "bwrap", reason="needs bubblewrap (bwrap)")
def test_served_tables_do_not_answer_the_callees_own_generated_cases(attack_class, tmp_path):
    """`drills check` under a course secret (no student: thief and honest draw the same
    inputs) with COLLIDING_SECRET, under which 04's callers pass extract_code its own
    generated inputs: the thief, which also looks its own arguments up in every served table
    it can find, scores what the honest wrong callee scores (without the split below it scored
    0.4 against 0.15 for 03's mean_sampled_log_ratio, through fixed cases shaped_reward
    shares). The callers run in children apart from the callee's cases
    (grade_cli._execute_callers_apart)."""
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(COLLIDING_SECRET + "\n")
    secret_file.chmod(0o600)
    got = {}
    for who in ("honest", "thief"):
        for a in ATTACKED:
            path = attack_class / "submitted" / who / a / f"{a}.ipynb"
            proc = run_drills(
                "check", "--json", "--timeout", "20", str(path), DRILLS_SECRET_FILE=str(secret_file)
            )
            assert proc.returncode in (0, 1), proc.stderr[-2000:]
            report = json.loads(proc.stdout)
            got[(who, a)] = {f["function"]: f["score"] for f in report["functions"]}
    for a in ATTACKED:
        assert got[("thief", a)] == got[("honest", a)], (a, got[("thief", a)], got[("honest", a)])


@pytest.mark.parametrize("assignment", notebook.ASSIGNMENTS)
def test_no_case_input_carries_reference_code(assignment):
    """What every engine hands learner code (a case's inputs, served tables included: the
    job of `drills grade` and `drills check`, the in-kernel run) holds no line of any
    reference function: no def, no body line."""
    import ast

    from autograder import assignments
    from autograder.cases import seeds
    from autograder.scoring import evaluate

    defs = notebook.solution_defs(assignment, ROOT)
    lines = set()
    for d in defs.values():
        lines.add(f"def {d.name}(")
        for node in d.body[1:] if ast.get_docstring(d) else d.body:
            for line in ast.unparse(node).splitlines():
                if len(line.strip()) >= 24:
                    lines.add(line.strip())
    served_any = False
    for fspec in assignments.get(assignment).functions:
        inputs = evaluate.materialize(assignment, fspec, seeds.course_secret(None))
        served_any = served_any or any("serve" in inp for inp in inputs)
        text = json.dumps(inputs, ensure_ascii=False)
        found = [line for line in lines if line in text or json.dumps(line)[1:-1] in text]
        assert not found, (fspec.name, found[:3])
    assert served_any, (
        "no function of this notebook is served a callee: the test checks nothing here"
    )
