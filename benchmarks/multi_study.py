"""Build notebook 07's shipped multi-answer studies from runs made one seed per process.

    python benchmarks/multi_study.py --commands --long --root runs/s300   # the 300-step study
    python benchmarks/multi_study.py --long --run --root runs/s300        # run them, timed
    python benchmarks/multi_study.py --long --merge runs/s300 --cpu runs/s300/cpu.txt
    python benchmarks/multi_study.py --long --merge runs/more --cpu runs/more/cpu.txt --onto-shipped
    python benchmarks/multi_study.py --long --kernels default=runs/xk300/default avx2=runs/xk300/avx2
    python benchmarks/multi_study.py --long --check runs/xk300/default

The 300-step study (``--long``): one command per seed and arm (``LONG_ARMS``), seed by seed, so
a study cut short keeps whole seeds; ``--long --merge`` merges the seeds every arm finished into
tiny_model/results/train_multi_300.json (the main arm, and the CPU time from ``--cpu``: one line
per command, ``OUT TIME wall user sys`` as ``/usr/bin/time -f "TIME %e %U %S"`` writes it,
prefixed with the command's --out folder; ``--long --run`` runs the commands one at a time,
skipping those whose metrics.json exists, and appends such lines to ROOT/cpu.txt) and
train_multi_300_arms.json (the other arms and
their paired intervals with the main arm's GRPO), and prints the table and what the weights
reweighted. ``--onto-shipped`` merges DIR's seeds with the shipped files' (more seeds for the
shipped study: same settings, no seed in both; the CPU time of both is added). Other CPU kernels:
``--long --run --root DIR`` under ``ATEN_CPU_CAPABILITY=default`` (or ``avx2``) at some seeds, then
``--long --kernels NAME=DIR ...`` writes tiny_model/results/train_multi_300_kernels.json: how far
each run moved, against the study's spread over seeds, and how many of the reruns' paired
differences with GRPO lie outside the shipped 95 % prediction intervals for one more seed (over
300 steps a run under other kernels does not stay near the shipped one, so the study is checked as
a new seed would be, not within a band of its digits); ``--long --check DIR`` checks one such
rerun (exit status 1 when more lie outside than chance explains). The 40-step study:

    python benchmarks/multi_study.py --commands           # print the commands, one per seed
    python benchmarks/multi_study.py --merge runs/main    # merge runs/main/s*/metrics.json
    python benchmarks/multi_study.py --check runs/xk/default   # a rerun against the shipped study
    python benchmarks/multi_study.py --bands default=runs/xk/default avx2=runs/xk/avx2

One process does the same (``python -m tiny_model train --config multi ... --seeds 0-9
--write-shipped multi``): seeds are independent (each seed's runs start from the warm model
with their own draws), so merging per-seed studies gives that study's numbers
(tests/test_tiny_model_multi.py checks it on a short run). Splitting them lets a busy machine
run seeds side by side. ``--merge`` writes tiny_model/results/train_multi.json and prints its
table.

Other CPU kernels: rerun the per-seed commands under ``ATEN_CPU_CAPABILITY=default`` (or ``avx2``)
with ``--out runs/xk/default/sN``; ``--check`` merges such a folder and compares every method's
every figure with the shipped study within its band (``study.compare_study``; exit status 1 when a
figure lies outside), and ``--bands`` measures the bands from such folders (one per kernel
setting) and writes tiny_model/results/train_multi_bands.json, printing the largest difference
per method and the shipped conclusions a rerun could flip within its band.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tiny_model.harness import write_json  # noqa: E402
from tiny_model.pooled import parse_seeds  # noqa: E402
from tiny_model.study import (  # noqa: E402
    MULTI_BANDS,
    SHIPPED_LONG,
    SHIPPED_LONG_ARMS,
    SHIPPED_LONG_KERNELS,
    SHIPPED_MULTI,
    TrainStudy,
    compare_study,
    fragile_conclusions,
    load_long,
    load_shipped,
    long_compare,
    long_kernels,
    long_kernels_table,
    long_paired,
    long_table,
    measure_bands,
    merge_studies,
    multi_table,
    reweighting_table,
)

METHODS = "grpo,pos_only,thr_exploit,thr_explore,thr_only"
SETTINGS = "--config multi --steps 150 --stop-after 40 --eval-every 40 --pass-samples 32"
"""The study's settings: the first 40 steps of a 150-step schedule (Adam, lr ramping to 5e-4 over
50 steps, then a cosine), held-out evaluation at steps 0 and 40 with 32 draws per problem (what
fitted the CPU time at hand: 10 seeds x 5 methods took about 10 CPU-minutes)."""


LONG_SETTINGS = "--config multi --steps 300 --eval-every 50 --pass-samples 64"
"""The long study's settings: a whole 300-step schedule (Adam, lr ramping to 5e-4 over 50 steps,
then a cosine to 0), held-out evaluation every 50 steps with 64 draws per problem."""
LONG_ARMS = {
    "main": ("grpo,pos_only,thr_exploit,thr_explore,thr_only,nll,smaug,nthr", ""),
    "mu2": ("grpo", "--inner-steps 2"),
    "mu2_high": ("grpo", "--inner-steps 2 --clip-eps-high 0.28"),
    "p0.1": ("thr_exploit,thr_explore", "--thr-p 0.1"),
    "mask": ("thr_exploit,thr_explore", "--thr-mask"),
}
"""The long study's arms: name -> (methods, flags). ``main`` at |p| = 0.5; the others change one
setting: two updates per batch with the symmetric clip and with clip-higher (0.2 / 0.28, the
bounds notebook 07 teaches), THR at |p| = 0.1, and the "mask plus sign" reading of the THR
reviews (``--thr-mask``). Each arm's runs at a seed start from the same warm model with the same
draws as the main arm's, so every arm pairs with the main arm's GRPO by seed."""


def long_commands(seeds: Sequence[int], root: str = "runs/s300") -> list[str]:
    """One command per seed and arm, seed by seed (a study cut short keeps whole seeds)."""
    out = []
    for s in seeds:
        for arm, (methods, flags) in LONG_ARMS.items():
            extra = f" {flags}" if flags else ""
            out.append(
                f"python -m tiny_model train {LONG_SETTINGS}{extra} --methods {methods} "
                f"--seeds {s} --out {root}/{arm}/s{s}"
            )
    return out


def merge_long(
    root: Path, seeds: set[int] | None = None, min_seeds: int = 2
) -> dict[str, TrainStudy]:
    """Each arm merged over the seeds every arm finished (``seeds``: only those; at least
    ``min_seeds`` of them: a study needs 2 for its intervals, a rerun to compare 1)."""
    done = None
    for arm in LONG_ARMS:
        have = {int(p.parent.name[1:]) for p in (root / arm).glob("s*/metrics.json")}
        done = have if done is None else done & have
    keep = sorted(done if seeds is None else done & seeds)
    if len(keep) < min_seeds:
        raise SystemExit(f"{root}: fewer than {min_seeds} seeds that every arm finished ({keep})")
    return {
        arm: merge_studies([_load(root / arm / f"s{s}" / "metrics.json") for s in keep])
        for arm in LONG_ARMS
    }


def _load(path: Path) -> TrainStudy:
    return TrainStudy.from_dict(json.loads(path.read_text()))


def _merged(folder: Path) -> TrainStudy:
    parts = sorted(folder.glob("s*/metrics.json"))
    if not parts:
        raise SystemExit(f"no {folder}/s*/metrics.json")
    return merge_studies([_load(p) for p in parts])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commands", action="store_true", help="print the per-seed commands")
    ap.add_argument("--merge", type=Path, metavar="DIR", help="merge DIR/s*/metrics.json")
    ap.add_argument("--check", type=Path, metavar="DIR", help="DIR/s*/metrics.json vs shipped")
    ap.add_argument(
        "--bands", nargs="+", metavar="NAME=DIR", help="measure the bands from reruns, write them"
    )
    ap.add_argument("--seeds", default="0-9")
    ap.add_argument(
        "--long",
        action="store_true",
        help="the 300-step study: --commands prints its per-seed, per-arm commands (--out under "
        "--root) and --merge DIR merges DIR/<arm>/s*/metrics.json into its two shipped files",
    )
    ap.add_argument("--root", default="runs/s300", help="with --long --commands: where runs go")
    ap.add_argument(
        "--run",
        action="store_true",
        help="with --long: run the commands one at a time (those not done yet), timing each",
    )
    ap.add_argument(
        "--cpu",
        type=Path,
        metavar="FILE",
        help="with --long --merge: lines 'OUT TIME wall user sys' (GNU time -f 'TIME %%e %%U "
        "%%S' per command), the CPU time recorded in the shipped file",
    )
    ap.add_argument(
        "--kernels",
        nargs="+",
        metavar="NAME=DIR",
        help="with --long: the 300-step study's reruns under other CPU kernels, measured and written",
    )
    ap.add_argument(
        "--onto-shipped",
        action="store_true",
        help="with --long --merge: add DIR's seeds to the shipped study's (none in both)",
    )
    args = ap.parse_args(argv)
    try:
        seeds = parse_seeds(args.seeds)
    except ValueError as e:
        ap.error(str(e))
    if args.commands and args.long:
        print("\n".join(long_commands(seeds, args.root)))
        print(f"python benchmarks/multi_study.py --long --merge {args.root}")
    elif args.commands:
        for s in seeds:
            print(
                f"python -m tiny_model train {SETTINGS} --methods {METHODS} --seeds {s} "
                f"--out runs/main/s{s}"
            )
        print("python benchmarks/multi_study.py --merge runs/main")
    if args.run and args.long:
        _run_long(long_commands(seeds, args.root), Path(args.root) / "cpu.txt")
    if args.onto_shipped and not (args.merge and args.long):
        ap.error("--onto-shipped goes with --long --merge DIR")
    if args.long and args.kernels:
        folders = _named_folders(ap, "--kernels", args.kernels)
        reruns = {name: merge_long(folder, min_seeds=1) for name, folder in folders.items()}
        shipped = load_long()
        kernels = long_kernels(shipped, reruns)
        kernels["cpu"] = {
            name: _cpu(folders[name] / "cpu.txt", folders[name], r["main"].seeds)
            for name, r in reruns.items()
            if (folders[name] / "cpu.txt").is_file()
        }
        write_json(SHIPPED_LONG_KERNELS, kernels)
        print(f"{SHIPPED_LONG_KERNELS}: from " + ", ".join(f"{n} (seeds {','.join(map(str, r['main'].seeds))})" for n, r in reruns.items()))  # fmt: skip
        print(long_kernels_table(shipped, kernels))
        return 0
    if args.long and args.check:
        agrees, text = long_compare(merge_long(args.check, min_seeds=1), load_long())
        print(text)
        return 0 if agrees else 1
    if args.merge and args.long:
        _merge_long(args.merge, args.cpu, onto_shipped=args.onto_shipped)
    elif args.merge:
        parts = sorted(args.merge.glob("s*/metrics.json"))
        if not parts:
            ap.error(f"no {args.merge}/s*/metrics.json")
        study = merge_studies([_load(p) for p in parts])
        write_json(SHIPPED_MULTI, study.to_dict())
        print(f"{SHIPPED_MULTI}: {len(study.seeds)} seeds")
        print(multi_table(study))
    if args.bands:
        shipped = load_shipped(SHIPPED_MULTI)
        reruns = {name: _merged(f) for name, f in _named_folders(ap, "--bands", args.bands).items()}
        bands = measure_bands(shipped, reruns)
        write_json(MULTI_BANDS, bands)
        print(f"{MULTI_BANDS}: from " + ", ".join(f"{n} (seeds {','.join(map(str, r.seeds))})" for n, r in reruns.items()))  # fmt: skip
        _print_measured(bands)
        fragile = fragile_conclusions(shipped, bands)
        print("shipped paired intervals a rerun within the bands could flip:")
        print("\n".join(f"  {f}" for f in fragile) if fragile else "  none")
    if args.check:
        agrees, text = compare_study(_merged(args.check))
        print(text)
        return 0 if agrees else 1
    return 0


def _named_folders(ap: argparse.ArgumentParser, flag: str, items: list[str]) -> dict[str, Path]:
    """NAME=DIR arguments (``--bands``, ``--kernels``) as name -> folder; a malformed one stops
    the command with the flag's usage."""
    out = {}
    for item in items:
        name, _, folder = item.partition("=")
        if not folder:
            ap.error(f"{flag} takes NAME=DIR; got {item!r}")
        out[name] = Path(folder)
    return out


def _run_long(commands: list[str], times: Path) -> None:
    """Run each command whose --out folder has no metrics.json yet, one at a time; append its
    folder, wall seconds and the CPU seconds it used (user, sys) to ``times``."""
    import resource
    import shlex
    import subprocess
    import time

    times.parent.mkdir(parents=True, exist_ok=True)
    for cmd in commands:
        out = cmd.rsplit("--out ", 1)[1]
        if (Path(out) / "metrics.json").is_file():
            continue
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        argv = shlex.split(cmd)
        subprocess.run([sys.executable, *argv[1:]], check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
        with times.open("a") as f:
            f.write(f"{out} TIME {wall:.2f} {user:.2f} {system:.2f}\n")
        print(f"{out}: {wall:.0f} s wall, {user + system:.0f} CPU-s", flush=True)


def _cpu(path: Path | None, root: Path, seeds: tuple[int, ...]) -> dict:
    """CPU seconds (user + sys) and wall seconds per arm, from GNU time's lines per command."""
    if path is None:
        return {}
    arms: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        out, tag, wall, user, system = line.split()
        where = Path(out)
        if tag != "TIME" or where.parent.parent != root or int(where.name[1:]) not in seeds:
            continue
        a = arms.setdefault(where.parent.name, {"commands": 0, "cpu_s": 0.0, "wall_s": 0.0})
        a["commands"] += 1
        a["cpu_s"] += float(user) + float(system)
        a["wall_s"] += float(wall)
    total = sum(a["cpu_s"] for a in arms.values())
    return {"arms": arms, "cpu_s": total, "wall_s": sum(a["wall_s"] for a in arms.values())}


def _merge_long(root: Path, cpu: Path | None, onto_shipped: bool = False) -> None:
    arms = merge_long(root, min_seeds=1 if onto_shipped else 2)
    cost = _cpu(cpu, root, arms["main"].seeds)
    if onto_shipped:
        shipped = load_long()
        if missing := [a for a in shipped if a not in arms]:
            raise SystemExit(f"{root}: arm(s) {missing} missing")
        try:
            arms = {a: merge_studies([shipped[a], arms[a]]) for a in shipped}
        except ValueError as e:
            raise SystemExit(f"{root} cannot be added to the shipped study: {e}") from e
        cost = _add_cost(json.loads(SHIPPED_LONG.read_text())["cpu"], cost)
    main = arms["main"]
    write_json(SHIPPED_LONG, {"study": main.to_dict(), "cpu": cost})
    others = {name: st.to_dict() for name, st in arms.items() if name != "main"}
    write_json(SHIPPED_LONG_ARMS, {"arms": others, "paired": long_paired(arms)})
    print(f"{SHIPPED_LONG}, {SHIPPED_LONG_ARMS}: seeds {','.join(map(str, main.seeds))}")
    if cost:
        print(
            f"CPU time: {cost['cpu_s'] / 60:.1f} CPU-minutes (user + sys) for "
            f"{sum(a['commands'] for a in cost['arms'].values())} commands, "
            f"{cost['wall_s'] / 60:.1f} minutes wall, one at a time"
        )
    arms = load_long()
    print(long_table(arms))
    print(reweighting_table(arms))


def _add_cost(a: dict, b: dict) -> dict:
    """Two CPU-time records (``_cpu``) added arm by arm; a missing record is an error, not 0."""
    if not a or not b:
        raise SystemExit("--onto-shipped needs the CPU time of both (--cpu FILE, and the shipped)")
    arms = {}
    for name in sorted(set(a["arms"]) | set(b["arms"])):
        x = a["arms"].get(name, {"commands": 0, "cpu_s": 0.0, "wall_s": 0.0})
        y = b["arms"].get(name, {"commands": 0, "cpu_s": 0.0, "wall_s": 0.0})
        arms[name] = {k: x[k] + y[k] for k in ("commands", "cpu_s", "wall_s")}
    return {
        "arms": arms,
        "cpu_s": sum(v["cpu_s"] for v in arms.values()),
        "wall_s": sum(v["wall_s"] for v in arms.values()),
    }


def _print_measured(bands: dict) -> None:
    """The largest difference measured per method and part, with its metric."""
    for part in ("runs", "means", "paired"):
        print(
            f"largest |rerun - shipped| ({part}), band = {bands['margin']:g} x that or the floor:"
        )
        for m, figs in bands["measured"][part].items():
            k = max(figs, key=figs.get)
            cells = ", ".join(f"{key.removeprefix('heldout_')} {v:.4g}" for key, v in figs.items())
            print(f"  {m:<12} largest {k.removeprefix('heldout_')} {figs[k]:.4g}; {cells}")


if __name__ == "__main__":
    sys.exit(main())
