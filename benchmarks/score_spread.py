"""How much each catalogued mistake's and each field port's score moves with the draw.

    python benchmarks/score_spread.py [ASSIGNMENT ...] [FUNCTION ...] [--draws N]

Each name is an assignment id or a graded function's name; nothing means the whole course.
Every body is graded in this process (autograder/scoring/spread.py) on N draws (default 50),
each a new course secret and a new student id, and the table gives its lowest and highest
score, their difference and whether it lies within the band (1 % of the function's points).
The bodies: every catalogued mistake; the reference as the field writes it (every result
rounded to float32; + 1e-8 and + 1e-6 in every denominator: autograder.scoring.mutation's
field variants), which must keep full marks; and the field's own ways of writing a few
functions (OpenRLHF's log-ratio clamp at ±10 in k1, k2 and k3, TRL's fixed eps in
group_advantages), each behind the course's input checks. With ``--heldout``, every held-out
mistake too (benchmarks/heldout_mistakes.py, written without the catalogue): a generated case
on which one coincides with the reference would hide it from some students only. Ends with
the number of rows outside the band. The + 1e-6 variant of 01's functions and clipped_expectation is epsilon
smoothing (it changes the maths, see tests/test_field_maths.py) and loses points, the same on
every draw: their generated cases hold it on one side of the tolerance
(autograder.assignments.common.stabiliser_shows).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from autograder import assignments  # noqa: E402
from autograder.notebooks import notebook  # noqa: E402
from autograder.scoring import mutation, spread  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _field_variant(assignment: str, function: str, kind: str, eps: float = mutation.STABILISER):
    return lambda ns: mutation.field_variant(assignment, function, kind, ROOT, eps=eps)[0]


def _log_ratio_clamped(function: str, c: float):
    """OpenRLHF's compute_approx_kl: the log ratio clamped at ±c before the estimator."""
    estimators = {
        "k1": lambda d: d,
        "k2": lambda d: 0.5 * d * d,
        "k3": lambda d: np.exp(-d) - 1 + d,
    }

    def build(ns):
        ref = ns[function]

        def port(logp, ref_logp):
            ref(logp, ref_logp)  # the course's input checks
            d = np.clip(np.asarray(logp, float) - np.asarray(ref_logp, float), -c, c)
            return estimators[function](d)

        return port

    return build


def _fixed_eps(eps: float):
    """TRL's GRPO: (r − mean) / (std + 1e-4), whatever eps the caller passes."""

    def build(ns):
        ref = ns["group_advantages"]
        return lambda rewards, eps_arg=1e-6: ref(rewards, eps)

    return build


PORTS = {
    ("02_clipped_estimators", f): {"openrlhf-log-ratio-clamp-10": _log_ratio_clamped(f, 10.0)}
    for f in ("k1", "k2", "k3")
} | {("05_grpo_lld", "group_advantages"): {"trl-fixed-eps-1e-4": _fixed_eps(1e-4)}}


def heldout_bodies(assignment: str, function: str) -> dict:
    """The held-out mistakes (benchmarks/heldout_mistakes.py), each behind the course's checks."""
    import heldout_mistakes as heldout

    return {
        "held-out: " + h.what: (lambda ns, h=h: heldout.build(h, ns))
        for h in heldout.HELDOUT
        if (h.assignment, h.function) == (assignment, function)
    }


def bodies(assignment: str, function: str, with_heldout: bool = False) -> dict:
    out = dict(spread.catalogue(assignment, function))
    if with_heldout:
        out.update(heldout_bodies(assignment, function))
    out["field: float32"] = _field_variant(assignment, function, "float32")
    out["field: + 1e-8"] = _field_variant(assignment, function, "stabiliser")
    out["field: + 1e-6"] = _field_variant(assignment, function, "stabiliser", 1e-6)
    out.update(PORTS.get((assignment, function), {}))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="assignment ids and/or function names")
    ap.add_argument("--draws", type=int, default=50)
    ap.add_argument(
        "--heldout",
        action="store_true",
        help="also every held-out mistake (benchmarks/heldout_mistakes.py): no draw may hide one",
    )
    args = ap.parse_args(argv)
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        pass
    pairs = spread.draws(args.draws, prefix="benchmark")
    outside = rows = 0
    print(f"{'function':<34} {'body':<44} {'low':>6} {'high':>6} {'width':>6} {'band':>6}")
    for a in notebook.available_assignments(ROOT):
        for f in assignments.get(a).functions:
            if args.names and a not in args.names and f.name not in args.names:
                continue
            t0 = time.perf_counter()
            for s in spread.spreads(a, f.name, bodies(a, f.name, args.heldout), pairs, ROOT):
                rows += 1
                outside += not s.within_band
                flag = "" if s.within_band else "  OUTSIDE"
                print(
                    f"{a[:2] + ' ' + f.name:<34} {s.name[:44]:<44} {s.low:>6.2f} {s.high:>6.2f} "
                    f"{s.width:>6.2f} {spread.BAND * s.points:>6.2f}{flag}"
                )
            print(f"# {a} {f.name}: {time.perf_counter() - t0:.1f} s", flush=True)
    print(f"{rows} rows over {args.draws} draws, {outside} outside the band")
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())
