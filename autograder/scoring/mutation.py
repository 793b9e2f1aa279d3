"""Mutation testing of the hidden cases, and the reference with its input checks removed.

The mutants of a graded function are generated from its solution cell in the
source notebook (the one reference): the function's ``def`` and the private
helpers (``_name``) it calls, read with ``ast``. Each mutant changes one node:

    binop        + ↔ −, * ↔ /, ** → *, // → /, @ → *  (also in ``x += ...``)
    drop-term    a + b → a or b, a − b → a or b, a * b → a or b, a / b → a
    compare      < ↔ <=, > ↔ >=, < ↔ >, == ↔ !=, in ↔ not in, is ↔ is not
    boolop       and ↔ or;  not x → x;  −x → x
    constant     a number c → c + 1 and c − 1 (defaults of arguments included); True ↔ False
    swap-args    f(a, b, ...) → f(b, a, ...) (not for max, min and other symmetric calls)
    reduction    sum ↔ mean, max ↔ min, amax ↔ amin, argmax ↔ argmin
    drop-keyword f(x, dim=1) → f(x): the reduction axis, keepdim, dtype ... dropped
    unclip       max(0, x) → x and → 0; clamp / clip → x; where(c, a, b) → a and → b
    raise        raise ... → pass (the input check removed)
    gradient     x.detach() → x (gradient flows where it must not); torch.exp(x) and
                 torch.log_softmax(x, ...) → their .detach() (no gradient where it must flow);
                 an input the case module marks "with gradient" (FunctionSpec.with_gradient),
                 as an operand or a torch call's argument in the graded def → its .detach();
                 torch.clamp(x, ...) → x + (torch.clamp(x, ...) − x).detach() (the clipped
                 value, with the gradient flowing where it is clipped); torch.relu(x) →
                 torch.clamp(x, min=0.0) and torch.maximum(x, torch.zeros_like(x)) (a gradient
                 of 1 and of 0.5 at the kink). Each leaves every value as it was: only a
                 gradient case can kill it.
    if           if c: → if not c:
    loop         continue ↔ break

A mutant is killed when any case outcome differs from the reference's (same
tolerance as grading), on the inputs of the public default secret or of a second
secret. Equivalent mutants (no input can tell them from the reference) are
listed with a reason in ``autograder/assignments/equivalent_mutants.json``,
keyed by a mutant id that names the function, the operator and the unparsed
node before and after, so that edits elsewhere do not move it; an entry is matched with its
string literals read as '…' (``mutant_key``), so rewording a message on the mutated line
keeps it too.

The same machinery with every ``raise ValueError`` removed (the learner who got the
formula right and skipped the input checks) is ``autograder.notebooks.source.without_checks``.
"""

from __future__ import annotations

import ast
import copy
import json
import re
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from autograder.notebooks import notebook
from autograder.notebooks.source import compile_variant, name_of, targets

EQUIVALENT_FILE = Path(__file__).parents[1] / "assignments" / "equivalent_mutants.json"
OTHER_SECRET = "mutation testing: a second secret"
TIME_LIMIT = 2.0  # seconds per mutant over all its cases

SYMMETRIC = {"max", "min", "maximum", "minimum", "isclose", "allclose", "hypot", "logaddexp"}
CLIPS = {"max", "min", "maximum", "minimum", "fmax", "fmin"}
REDUCTIONS = {
    "sum": "mean",
    "mean": "sum",
    "max": "min",
    "min": "max",
    "amax": "amin",
    "amin": "amax",
    "argmax": "argmin",
    "argmin": "argmax",
}
BINOPS = {
    ast.Add: [ast.Sub],
    ast.Sub: [ast.Add],
    ast.Mult: [ast.Div],
    ast.Div: [ast.Mult],
    ast.Pow: [ast.Mult],
    ast.FloorDiv: [ast.Div],
    ast.MatMult: [ast.Mult],
}
COMPARES = {
    ast.Lt: [ast.LtE, ast.Gt],
    ast.LtE: [ast.Lt],
    ast.Gt: [ast.GtE, ast.Lt],
    ast.GtE: [ast.Gt],
    ast.Eq: [ast.NotEq],
    ast.NotEq: [ast.Eq],
    ast.In: [ast.NotIn],
    ast.NotIn: [ast.In],
    ast.Is: [ast.IsNot],
    ast.IsNot: [ast.Is],
}


# -- the code under mutation -------------------------------------------------------------------


# -- the mutation operators --------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    id: str  # "<def>: <operator>: <before> -> <after>" (+ " #k" for the k-th identical text)
    site: int  # position in the enumeration of this function's mutants


def _is_docstring(node: ast.stmt, parent_body: list[ast.stmt]) -> bool:
    return (
        parent_body
        and node is parent_body[0]
        and isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


class _Sites(ast.NodeTransformer):
    """Walks a def in a fixed order; offers each mutation, applies the one numbered ``pick``."""

    def __init__(self, pick: int | None = None):
        self.pick = pick
        self.differentiable: tuple[str, ...] = ()  # the inputs "with gradient" of the def visited
        self.count = 0
        self.offered: list[tuple[str, str, str]] = []  # (operator, before, after)
        self.applied: tuple[str, str, str] | None = None
        self.parents: list[ast.AST] = []

    def visit(self, node):
        self.parents.append(node)
        try:
            return super().visit(node)
        finally:
            self.parents.pop()

    def _context(self) -> str:
        """The text " in <enclosing expression>", for small nodes whose own text is ambiguous."""
        for parent in reversed(self.parents[:-1]):
            if isinstance(parent, (ast.expr, ast.keyword, ast.arguments)):
                return f" in {ast.unparse(parent)}"
            if isinstance(parent, ast.stmt):
                break
        return ""

    def _offer(self, op: str, node: ast.AST, alternatives: Iterable[ast.AST]) -> ast.AST | None:
        for alt in alternatives:
            ast.copy_location(alt, node)
            if self.pick is None:
                self.offered.append((op, ast.unparse(node), ast.unparse(alt)))
            elif self.count == self.pick:  # text only for the one applied, not every site
                self.applied = (op, ast.unparse(node), ast.unparse(alt))
                self.count += 1
                return alt
            self.count += 1
        return None

    # what is never mutated: messages, annotations, docstrings
    def visit_JoinedStr(self, node):
        return node

    def visit_FunctionDef(self, node):
        self.parents.append(node.args)  # a default reads "constant in x, eps=1e-06: ..."
        node.args.defaults = [self.visit(d) for d in node.args.defaults]
        node.args.kw_defaults = [self.visit(d) if d else d for d in node.args.kw_defaults]
        self.parents.pop()
        node.body = self._body(node.body)
        return node

    def _body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out = []
        for stmt in body:
            if _is_docstring(stmt, body):
                out.append(stmt)
                continue
            new = self.visit(stmt)
            out.append(new)
        return out

    def generic_visit(self, node):
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                if value and isinstance(value[0], ast.stmt):
                    setattr(node, name, self._body(value))
                else:
                    setattr(
                        node, name, [self.visit(v) if isinstance(v, ast.AST) else v for v in value]
                    )
            elif isinstance(value, ast.AST):
                setattr(node, name, self.visit(value))
        return node

    # statements
    def visit_Raise(self, node):
        got = self._offer("raise", node, [ast.Pass()])
        return got if got is not None else node  # the message is not mutated

    def visit_If(self, node):
        got = self._offer("if", node.test, [ast.UnaryOp(ast.Not(), copy.deepcopy(node.test))])
        if got is not None:
            node.test = got
            return node
        return self.generic_visit(node)

    def visit_Continue(self, node):
        got = self._offer("loop", node, [ast.Break()])
        return got if got is not None else node

    def visit_Break(self, node):
        got = self._offer("loop", node, [ast.Continue()])
        return got if got is not None else node

    def visit_AugAssign(self, node):
        alts = [
            ast.AugAssign(copy.deepcopy(node.target), op(), copy.deepcopy(node.value))
            for op in BINOPS.get(type(node.op), [])
        ]
        got = self._offer("binop", node, alts)
        return got if got is not None else self.generic_visit(node)

    # expressions
    def visit_BinOp(self, node):
        alts: list[ast.AST] = [
            ast.BinOp(copy.deepcopy(node.left), op(), copy.deepcopy(node.right))
            for op in BINOPS.get(type(node.op), [])
        ]
        got = self._offer("binop", node, alts)
        if got is not None:
            return got
        drops: list[ast.AST] = []
        if isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            drops = [copy.deepcopy(node.left), copy.deepcopy(node.right)]
        elif isinstance(node.op, ast.Div):
            drops = [copy.deepcopy(node.left)]
        got = self._offer("drop-term", node, drops)
        return got if got is not None else self.generic_visit(node)

    def visit_Compare(self, node):
        for k, op in enumerate(node.ops):
            alts = []
            for new in COMPARES.get(type(op), []):
                ops = list(node.ops)
                ops[k] = new()
                alts.append(
                    ast.Compare(copy.deepcopy(node.left), ops, copy.deepcopy(node.comparators))
                )
            got = self._offer("compare", node, alts)
            if got is not None:
                return got
        return self.generic_visit(node)

    def visit_BoolOp(self, node):
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        got = self._offer("boolop", node, [ast.BoolOp(other, copy.deepcopy(node.values))])
        return got if got is not None else self.generic_visit(node)

    def visit_UnaryOp(self, node):
        if isinstance(node.op, (ast.Not, ast.USub)) and not isinstance(node.operand, ast.Constant):
            got = self._offer("boolop", node, [copy.deepcopy(node.operand)])
            if got is not None:
                return got
        return self.generic_visit(node)

    def visit_Constant(self, node):
        v = node.value
        op = "constant" + self._context()
        if isinstance(v, bool):
            got = self._offer(op, node, [ast.Constant(not v)])
        elif isinstance(v, (int, float)):
            got = self._offer(op, node, [ast.Constant(v + 1), ast.Constant(v - 1)])
        else:
            got = None
        return got if got is not None else node

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.differentiable and self._computes():
            detached = ast.Call(
                ast.Attribute(ast.Name(node.id, ast.Load()), "detach", ast.Load()), [], []
            )
            got = self._offer("gradient", node, [detached])
            if got is not None:
                return got
        return node

    def _computes(self) -> bool:
        """Is the node visited an operand of arithmetic or an argument of a torch call (where
        its value enters the result), rather than something an input check reads?"""
        parent = self.parents[-2] if len(self.parents) > 1 else None
        if isinstance(parent, ast.BinOp):
            return True
        return (
            isinstance(parent, ast.Call)
            and isinstance(parent.func, ast.Attribute)
            and name_of(parent.func.value) == "torch"
            and any(a is self.parents[-1] for a in parent.args)
        )

    def visit_Call(self, node):
        name = name_of(node.func)
        if name in ("ValueError", "TypeError"):
            return node
        alts: list[tuple[str, list[ast.AST]]] = []
        if name in REDUCTIONS:
            func = copy.deepcopy(node.func)
            if isinstance(func, ast.Name):
                func.id = REDUCTIONS[name]
            else:
                func.attr = REDUCTIONS[name]
            alts.append(
                (
                    "reduction",
                    [ast.Call(func, copy.deepcopy(node.args), copy.deepcopy(node.keywords))],
                )
            )
        if (
            len(node.args) >= 2
            and name not in SYMMETRIC
            and not any(isinstance(a, ast.Starred) for a in node.args[:2])
        ):
            args = copy.deepcopy(node.args)
            args[0], args[1] = args[1], args[0]
            alts.append(
                (
                    "swap-args",
                    [ast.Call(copy.deepcopy(node.func), args, copy.deepcopy(node.keywords))],
                )
            )
        for k, kw in enumerate(node.keywords):
            if kw.arg is not None:
                kws = copy.deepcopy(node.keywords)
                del kws[k]
                alts.append(
                    (
                        "drop-keyword",
                        [ast.Call(copy.deepcopy(node.func), copy.deepcopy(node.args), kws)],
                    )
                )
        if name in CLIPS and len(node.args) == 2:
            alts.append(("unclip", [copy.deepcopy(a) for a in node.args]))
        if name in ("clamp", "clip", "clamp_min", "clamp_max"):
            on_object = isinstance(node.func, ast.Attribute) and name_of(node.func.value) not in (
                "np",
                "numpy",
                "torch",
            )
            inner = node.func.value if on_object else (node.args[0] if node.args else None)
            if inner is not None:
                alts.append(("unclip", [copy.deepcopy(inner)]))
        if name == "where" and len(node.args) == 3:
            alts.append(("unclip", [copy.deepcopy(node.args[1]), copy.deepcopy(node.args[2])]))
        alts += _gradient_alternatives(node, name)
        for op, options in alts:
            got = self._offer(op, node, options)
            if got is not None:
                return got
        return self.generic_visit(node)


def _gradient_alternatives(node: ast.Call, name: str) -> list[tuple[str, list[ast.AST]]]:
    """The "gradient" operator: a detach removed, one added, a kink's convention changed."""
    on_torch = isinstance(node.func, ast.Attribute) and name_of(node.func.value) == "torch"
    if name == "detach" and isinstance(node.func, ast.Attribute) and not node.args:
        return [("gradient", [copy.deepcopy(node.func.value)])]
    if on_torch and name in ("exp", "log_softmax"):
        detached = ast.Attribute(copy.deepcopy(node), "detach", ast.Load())
        return [("gradient", [ast.Call(detached, [], [])])]
    if on_torch and name in ("clamp", "clip") and node.args:
        # the straight-through clip: the clipped value, the unclipped gradient
        x = node.args[0]
        gap = ast.BinOp(copy.deepcopy(node), ast.Sub(), copy.deepcopy(x))
        detached = ast.Call(ast.Attribute(gap, "detach", ast.Load()), [], [])
        return [("gradient", [ast.BinOp(copy.deepcopy(x), ast.Add(), detached)])]
    if on_torch and name == "relu" and len(node.args) == 1:
        x = node.args[0]
        return [
            (
                "gradient",
                [
                    ast.Call(
                        _torch("clamp"),
                        [copy.deepcopy(x)],
                        [ast.keyword("min", ast.Constant(0.0))],
                    ),
                    ast.Call(
                        _torch("maximum"),
                        [copy.deepcopy(x), ast.Call(_torch("zeros_like"), [copy.deepcopy(x)], [])],
                        [],
                    ),
                ],
            )
        ]
    return []


def _torch(attr: str) -> ast.Attribute:
    return ast.Attribute(ast.Name("torch", ast.Load()), attr, ast.Load())


def mutants(assignment: str, function: str, root: Path | None = None) -> list[Mutant]:
    """Every mutant of ``function`` (and of its private helpers), with stable ids."""
    out, seen = [], {}
    site = 0
    differentiable = _with_gradient(assignment, function)
    for d in targets(assignment, function, root):
        sites = _Sites(None)
        sites.differentiable = differentiable if d.name == function else ()
        sites.visit(copy.deepcopy(d))
        for op, before, after in sites.offered:
            text = f"{d.name}: {op}: {before} -> {after}"
            seen[text] = seen.get(text, 0) + 1
            out.append(Mutant(text if seen[text] == 1 else f"{text} #{seen[text]}", site))
            site += 1
    return out


def _with_gradient(assignment: str, function: str) -> tuple[str, ...]:
    """The inputs of ``function`` its case module marks "with gradient" (none when it has no
    case module entry, as for a notebook under construction)."""
    from autograder import assignments

    try:
        return tuple(assignments.get(assignment).function(function).with_gradient)
    except LookupError:
        return ()


def build_mutant(
    assignment: str, function: str, mutant: Mutant, root: Path | None = None
) -> tuple[Callable, dict]:
    """The mutated function and the namespace it runs in (a copy of the reference's)."""
    defs = targets(assignment, function, root)
    sites = _Sites(mutant.site)
    differentiable = _with_gradient(assignment, function)
    out = []
    for d in defs:
        sites.differentiable = differentiable if d.name == function else ()
        out.append(sites.visit(copy.deepcopy(d)))
    if sites.applied is None:
        raise KeyError(f"no mutant {mutant.site} in {function}")
    return compile_variant(assignment, function, out, root)


# -- correct maths as the field writes it ------------------------------------------------------
# The reference rewritten the way RL libraries write the same formula: in float32 arithmetic, or
# with a small stabiliser added to every denominator. Grading must give these full marks (the
# stated tolerance is wide enough for them), while every catalogued mistake stays outside it.

FIELD_VARIANTS = ("float32", "stabiliser")
STABILISER = 1e-8
_F32 = "_drills_float32"
_CHECKERS = ("_check", "_require")  # input-check helpers: validation stays float64


def _float32(x):
    """``x`` rounded to float32 and back: floats, numpy float arrays and scalars, torch float
    tensors; anything else (ints, bools, strings, objects) unchanged."""
    import numpy as np

    if isinstance(x, bool) or isinstance(x, int) and not isinstance(x, np.integer):
        return x
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "f":
            return x.astype(np.float32).astype(x.dtype)
        return x
    if isinstance(x, np.floating):
        return type(x)(np.float32(x))
    if isinstance(x, float):
        return float(np.float32(x))
    try:
        import torch
    except ImportError:  # pragma: no cover
        return x
    if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dtype != torch.float32:
        return x.to(torch.float32).to(x.dtype)
    return x


class _OutsideInputChecks(ast.NodeTransformer):
    """A rewrite that leaves input checks alone: an ``if``'s test and every ``raise``."""

    def visit_If(self, node):
        node.body = [self.visit(s) for s in node.body]
        node.orelse = [self.visit(s) for s in node.orelse]
        return node

    def visit_Raise(self, node):
        return node


class _RoundEveryResult(_OutsideInputChecks):
    """Wrap every arithmetic result and call result in a float32 rounding, except inside input
    checks (``if`` tests and ``raise``): float32 arithmetic, float64 validation."""

    SKIP = {"isinstance", "len", "range", "zip", "enumerate", "ValueError", "TypeError", _F32}

    def _wrap(self, node):
        return ast.copy_location(ast.Call(ast.Name(_F32, ast.Load()), [node], []), node)

    def visit_JoinedStr(self, node):
        return node

    def visit_BinOp(self, node):
        return self._wrap(self.generic_visit(node))

    def visit_Call(self, node):
        node = self.generic_visit(node)
        return node if name_of(node.func) in self.SKIP else self._wrap(node)


class _StabiliseDenominators(_OutsideInputChecks):
    """``a / b`` → ``a / (b + eps)`` everywhere but in input checks."""

    def __init__(self, eps: float):
        self.eps = eps

    def visit_BinOp(self, node):
        node = self.generic_visit(node)
        if isinstance(node.op, ast.Div):
            node.right = ast.BinOp(node.right, ast.Add(), ast.Constant(self.eps))
        return node


def field_variant(
    assignment: str, function: str, kind: str, root: Path | None = None, eps: float = STABILISER
) -> tuple[Callable, dict]:
    """The reference ``function`` as the field writes it (``kind`` one of FIELD_VARIANTS) and the
    namespace it runs in. Its helpers are rewritten the same way."""
    if kind == "float32":
        tx: ast.NodeTransformer = _RoundEveryResult()
    elif kind == "stabiliser":
        tx = _StabiliseDenominators(eps)
    else:
        raise ValueError(f"kind must be one of {FIELD_VARIANTS}, not {kind!r}")
    defs = [
        d if d.name.startswith(_CHECKERS) else tx.visit(copy.deepcopy(d))
        for d in targets(assignment, function, root)
    ]
    from autograder.notebooks import reference

    module = ast.fix_missing_locations(ast.Module(body=defs, type_ignores=[]))
    code = compile(module, f"<{kind} variant of {assignment}:{function}>", "exec")
    ns = dict(reference.namespace(assignment, root))
    ns[_F32] = _float32
    exec(code, ns)  # noqa: S102 (trusted: our own source notebook, rewritten)
    return ns[function], ns


# -- running the mutants -----------------------------------------------------------------------


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so that outcome_of does not catch it."""


@dataclass
class FunctionReport:
    assignment: str
    function: str
    mutants: int = 0
    killed: int = 0
    equivalent: list[str] = field(default_factory=list)  # listed and surviving
    survived: list[str] = field(default_factory=list)  # not listed and surviving
    stale: list[str] = field(default_factory=list)  # listed but killed, or no such mutant
    # generated mutants that do not compile: they prove nothing about the cases (an operator's
    # bug), so they are reported, not counted as killed
    broken: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def score(self) -> float:
        """Killed / (mutants − equivalent − broken)."""
        live = self.mutants - len(self.equivalent) - len(self.broken)
        return self.killed / live if live else 1.0


_STRING = re.compile(r"""(?<!\w)(?:[rbfuRBFU]{1,2})?(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""")


def mutant_key(mutant_id: str) -> str:
    """What an equivalent-mutant entry is matched by: the id with every string literal (a
    message, an f-string) read as '…' and runs of spaces as one. Rewording an error message or
    re-quoting a string on the mutated line then keeps the entry; changing the code it
    mutates does not (that is another mutant)."""
    return re.sub(r"\s+", " ", _STRING.sub("'…'", mutant_id)).strip()


def match_listed(ids: list[str], listed: Iterable[str]) -> dict[str, str]:
    """{mutant id: the listed entry it matches}: an entry matches the mutant of the same id, or
    else the one mutant whose :func:`mutant_key` is the entry's (none when several share it:
    two raises that differ only in their message stay told apart by their exact ids)."""
    out = {i: i for i in listed if i in set(ids)}
    keys: dict[str, list[str]] = {}
    for i in ids:
        keys.setdefault(mutant_key(i), []).append(i)
    for entry in listed:
        if entry in out:
            continue
        same = [i for i in keys.get(mutant_key(entry), []) if i not in out]
        if len(same) == 1:
            out[same[0]] = entry
    return out


def equivalent_mutants() -> dict[str, dict[str, str]]:
    """{"<assignment>/<function>": {mutant id: reason}} from the reviewed file."""
    if not EQUIVALENT_FILE.is_file():
        return {}
    return json.loads(EQUIVALENT_FILE.read_text(encoding="utf-8"))


def _case_sets(assignment: str, fspec, root: Path | None) -> list[tuple[list[dict], list[dict]]]:
    from autograder.cases import seeds
    from autograder.scoring import evaluate, memo

    out = []
    for secret in (seeds.PUBLIC_DEFAULT_SECRET, OTHER_SECRET):
        inputs = evaluate.materialize(assignment, fspec, secret)
        out.append((inputs, memo.reference_outcomes(assignment, fspec, inputs, root)))
    return out


def killed(fn: Callable, ns: dict, fspec, case_sets, limit: float = TIME_LIMIT) -> bool:
    """Does any case outcome of ``fn`` differ from the reference's? (a timeout kills too)"""
    from autograder.cases.codec import outcome_of
    from autograder.cases.compare import same_outcome
    from autograder.scoring.evaluate import silenced

    def alarm(signum, frame):
        raise _Timeout()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        with silenced():
            for inputs, expected in case_sets:
                for case, inp, exp in zip(fspec.cases, inputs, expected):
                    got = outcome_of(fn, inp["args"], inp["kwargs"], ns, inp.get("grad"))
                    if not same_outcome(exp, got, case.rtol, case.atol):
                        return True
        return False
    except _Timeout:
        return True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run(
    assignment: str, function: str, root: Path | None = None, only: Iterable[int] | None = None
) -> FunctionReport:
    """Run the mutants of one function (all, or those whose positions are in ``only``)."""
    from autograder import assignments

    t0 = time.perf_counter()
    fspec = assignments.get(assignment).function(function)
    case_sets = _case_sets(assignment, fspec, root)
    listed_ids = equivalent_mutants().get(f"{assignment}/{function}", {})
    report = FunctionReport(assignment, function)
    all_mutants = mutants(assignment, function, root)
    matched = match_listed([m.id for m in all_mutants], listed_ids)
    listed = set(matched)
    chosen = set(only) if only is not None else None
    for m in all_mutants:
        if chosen is not None and m.site not in chosen:
            continue
        report.mutants += 1
        try:
            fn, ns = build_mutant(assignment, function, m, root)
        except Exception as e:  # noqa: BLE001 (an operator that wrote code that does not compile)
            report.broken.append(f"{m.id} ({type(e).__name__}: {e})")
            continue
        if killed(fn, ns, fspec, case_sets):
            report.killed += 1
            if m.id in listed:
                report.stale.append(matched[m.id])
        elif m.id in listed:
            report.equivalent.append(m.id)
        else:
            report.survived.append(m.id)
    if chosen is None:
        report.stale += [i for i in listed_ids if i not in matched.values()]
    report.seconds = time.perf_counter() - t0
    return report


def gradient_kills(assignment: str, function: str, root: Path | None = None) -> dict[str, set[str]]:
    """{gradient mutant id: the kinds of case (value, edge, invalid, gradient) on which it differs
    from the reference}, with the public default secret. Every gradient mutant leaves the values
    as they were, so the answer should be {"gradient"} for each: an empty set is a survivor."""
    from autograder import assignments
    from autograder.cases.codec import outcome_of
    from autograder.cases.compare import same_outcome
    from autograder.cases.seeds import PUBLIC_DEFAULT_SECRET
    from autograder.scoring import evaluate, memo

    fspec = assignments.get(assignment).function(function)
    inputs = evaluate.materialize(assignment, fspec, PUBLIC_DEFAULT_SECRET)
    expected = memo.reference_outcomes(assignment, fspec, inputs, root)
    out = {}
    with evaluate.silenced():
        for m in mutants(assignment, function, root):
            if ": gradient: " not in m.id:
                continue
            fn, ns = build_mutant(assignment, function, m, root)
            out[m.id] = {
                case.kind
                for case, inp, exp in zip(fspec.cases, inputs, expected)
                if not same_outcome(
                    exp,
                    outcome_of(fn, inp["args"], inp["kwargs"], ns, inp.get("grad")),
                    case.rtol,
                    case.atol,
                )
            }
    return out


def helper_users(assignment: str, helper: str, root: Path | None = None) -> list[str]:
    """The graded functions of ``assignment`` whose mutants include the helper ``helper``."""
    from autograder import assignments

    return [
        f.name
        for f in assignments.get(assignment).functions
        if any(d.name == helper for d in targets(assignment, f.name, root))
    ]


def survivor_advice(assignment: str, function: str, mutant_id: str, root=None) -> str:
    """A surviving mutant's id and what to do about it, naming the functions that share the
    helper it lives in (a helper is mutated once per graded function that calls it)."""
    where = mutant_id.split(": ", 1)[0]
    if where == function or not where.startswith("_"):
        return (
            f"{mutant_id}\n      add a case of {function} on which this change alters the "
            "outcome, or list the mutant with why no input can tell it apart"
        )
    users = helper_users(assignment, where, root)
    shared = f"a helper shared by {', '.join(users)}" if len(users) > 1 else "a helper"
    return (
        f"{mutant_id}\n      survivor in {where}, {shared}: a case of {function} must kill it "
        f"(an input of {function} that reaches this line of {where} and changes the outcome); "
        f"if {function} cannot reach it, list it as equivalent under {assignment}/{function} "
        "with that reason"
    )


def all_functions(root: Path | None = None) -> Iterator[tuple[str, str]]:
    from autograder import assignments

    for a in notebook.available_assignments(root):
        for f in assignments.get(a).functions:
            yield a, f.name
