"""Mutation score of the hidden cases, per graded function.

    python benchmarks/mutation_score.py [ASSIGNMENT ...] [FUNCTION ...] [--survivors]

Each name is an assignment id or a graded function's name: `05_grpo_lld lld_rate` runs that
one function, `05_grpo_lld` all of 05, nothing all of the course.

Every graded function's reference solution (its solution cell in solutions/) is
mutated one node at a time (autograder/scoring/mutation.py lists the operators); each
mutant runs on the function's cases with the public default secret and a second
secret. A mutant is killed when any outcome differs from the reference's.
Equivalent mutants are listed, with a reason, in
autograder/assignments/equivalent_mutants.json. Prints, per function: mutants,
killed, equivalent (listed), survived, mutation score = killed / (mutants −
equivalent), seconds; with --survivors, the id of every surviving mutant and what to do
about it (a survivor in a helper names the functions that share it). A mutant whose code does
not compile (an operator's bug) is counted under "broken", not as killed.

Then, for each function with gradient cases, its gradient mutants (a detach removed or added,
a straight-through clip, another convention at a kink: each leaves every value as it was) and
how many of them the gradient cases kill while every value, edge and invalid case passes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autograder import assignments  # noqa: E402
from autograder.scoring import mutation  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="assignment ids and/or function names")
    ap.add_argument("--survivors", action="store_true", help="print surviving mutants' ids")
    args = ap.parse_args(argv)
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        pass
    t0 = time.perf_counter()
    header = f"{'assignment':<22} {'function':<24} {'mutants':>7} {'killed':>6} {'equiv':>5} {'surv':>4} {'broke':>5} {'score':>7} {'s':>6}"
    print(header)
    print("-" * len(header))
    totals = [0, 0, 0, 0, 0]
    gradient_functions = []
    bad = 0
    everything = list(mutation.all_functions())
    known = {a for a, _ in everything} | {f for _, f in everything}
    unknown = [n for n in args.names if n not in known]
    if unknown:
        ap.error(f"no assignment or graded function named {', '.join(unknown)}")
    wanted_a = {n for n in args.names if n in {a for a, _ in everything}}
    wanted_f = {n for n in args.names if n in {f for _, f in everything}}
    for a, f in everything:
        if (wanted_a and a not in wanted_a) or (wanted_f and f not in wanted_f):
            continue
        r = mutation.run(a, f)
        totals[0] += r.mutants
        totals[1] += r.killed
        totals[2] += len(r.equivalent)
        totals[3] += len(r.survived)
        totals[4] += len(r.broken)
        bad += len(r.survived) + len(r.stale) + len(r.broken)
        print(
            f"{a:<22} {f:<24} {r.mutants:>7} {r.killed:>6} {len(r.equivalent):>5} "
            f"{len(r.survived):>4} {len(r.broken):>5} {r.score:>7.1%} {r.seconds:>6.2f}"
        )
        if any(c.kind == "gradient" for c in assignments.get(a).function(f).cases):
            gradient_functions.append((a, f))
        if args.survivors:
            for m in r.survived:
                print(f"    survived: {mutation.survivor_advice(a, f, m)}")
            for m in r.stale:
                print(f"    stale equivalent entry: {m}")
            for m in r.broken:
                print(f"    broken: {m}")
    live = totals[0] - totals[2]
    print("-" * len(header))
    live -= totals[4]
    print(
        f"{'all':<22} {'':<24} {totals[0]:>7} {totals[1]:>6} {totals[2]:>5} {totals[3]:>4} "
        f"{totals[4]:>5} {(totals[1] / live if live else 1):>7.1%} "
        f"{time.perf_counter() - t0:>6.2f}"
    )
    if gradient_functions:
        print()
        print(f"{'gradient mutants':<47} {'mutants':>7} {'killed by gradient cases alone':>31}")
    for a, f in gradient_functions:
        kills = mutation.gradient_kills(a, f)
        alone = [m for m, kinds in kills.items() if kinds == {"gradient"}]
        bad += len(kills) - len(alone)
        print(f"{a:<22} {f:<24} {len(kills):>7} {len(alone):>31}")
        for m, kinds in kills.items():
            if kinds != {"gradient"}:
                print(f"    {m}: {'fails ' + ', '.join(sorted(kinds)) if kinds else 'survives'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
