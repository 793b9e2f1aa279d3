"""Time notebook 06's and 07's tiny_model cells, this tree against a git revision's tiny_model.

    python benchmarks/live_cells_speed.py [--against REV] [--parts probe05,probe06,live06,live07]
                                          [--seeds 5] [--repeats 1]

The parts are the work of the notebooks' slow cells, with the reference functions:

  probe05  05's probe cell: run_probe_seeds(..., methods=("grpo", "pos_only"), groups=60) with
           each optimizer (sgd, adam) over ``--seeds`` seeds, with the 05 functions only
  probe06  06's probe cell: run_probe_seeds(..., methods=("grpo", "nthr", "random"), groups=60)
           over ``--seeds`` seeds (the notebook: 5)
  live06   06's live run: NTHR, seed 0, 100 of 800 steps, evaluated every 25 steps
  live07   07's live run: thr_explore, seed 0, the multi-answer study's settings, 8 Pass@K draws

Each part runs in a fresh process, once with this tree's tiny_model and once with the one at
``--against`` (default: where this branch left main; ``git archive`` into a temporary folder,
first on PYTHONPATH; the rest of the tree, autograder and the solutions notebooks, is this
one's), alternating old and new ``--repeats`` times so that a change in the machine's load
hits both. It prints wall and CPU seconds (the process's own CPU time: on a loaded machine
the steadier figure), their ratio, and whether the numbers agree: the training histories bit
for bit, the probe's per-group changes by their largest relative difference and the pooled
paired intervals. Set ATEN_CPU_CAPABILITY (default, avx2, ...) to compare under other kernels.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("probe05", "probe06", "live06", "live07")

WORK = r"""
import json, sys, time
import numpy as np
import tiny_model
from tiny_model import Functions, load_shipped, load_warm, run_probe_seeds, train

part, seeds, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
fns = Functions.from_solutions(include_06=part != "probe05")
res = {"module": tiny_model.__file__}
t0, c0 = time.perf_counter(), time.process_time()
if part == "probe05":
    res["changes"], res["paired"] = {}, {}
    for rule in ("sgd", "adam"):
        pooled = run_probe_seeds(
            load_warm(), fns, seeds=range(seeds), methods=("grpo", "pos_only"), groups=60,
            optimizer=rule,
        )
        res["changes"].update({f"{rule} {m}": c.tolist() for m, c in pooled.changes.items()})
        res["paired"].update({f"{rule} {k}": p for k, p in pooled.paired.items()})
elif part == "probe06":
    pooled = run_probe_seeds(
        load_warm(), fns, seeds=range(seeds), methods=("grpo", "nthr", "random"), groups=60
    )
    res["changes"] = {m: c.tolist() for m, c in pooled.changes.items()}
    res["paired"] = pooled.paired
elif part == "live06":
    study = load_shipped()
    keys = ("steps", "lr", "lr_warmup", "lr_schedule", "prompts_per_step")
    settings = {f: getattr(study.config, f) for f in keys}
    res["history"] = train(fns, "nthr", seed=0, stop_after=100, eval_every=25, **settings).history
else:
    from tiny_model.study import SHIPPED_MULTI
    from tiny_model.warm import MULTI_WARMUP

    study = load_shipped(SHIPPED_MULTI)
    config = {**study.config.to_dict(), "pass_samples": 8}
    config = {k: v for k, v in config.items() if k not in ("method", "seed", "task")}
    model = load_warm("cpu", MULTI_WARMUP).train()
    res["history"] = train(
        fns, "thr_explore", seed=0, model=model, task=study.config.task, **config
    ).history
res["wall_s"], res["cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
with open(out, "w") as f:
    json.dump(res, f, allow_nan=True)
"""


def run_part(part: str, seeds: int, pythonpath: str | None, tmp: Path) -> dict:
    out = tmp / f"{part}-{os.getpid()}-{len(list(tmp.iterdir()))}.json"
    env = dict(os.environ)
    env.pop("TINY_MODEL_PROBE_CACHE", None)  # time the work, not the cache
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, env.get("PYTHONPATH")]))
    # run from the temporary folder: `python -c` puts the working directory first on sys.path
    subprocess.run(
        [sys.executable, "-c", WORK, part, str(seeds), str(out)], cwd=tmp, env=env, check=True
    )
    return json.loads(out.read_text())


def agreement(part: str, old: dict, new: dict) -> str:
    if part.startswith("probe"):
        worst = 0.0
        for m, a in old["changes"].items():
            for x, y in zip(a, new["changes"][m]):
                worst = max(worst, abs(x - y) / max(abs(x), 1e-12))
        pairs = "; ".join(
            f"{k} mean {old['paired'][k]['mean']:+.4e} -> {new['paired'][k]['mean']:+.4e}, "
            f"CI [{old['paired'][k]['ci_low']:+.4e}, {old['paired'][k]['ci_high']:+.4e}] -> "
            f"[{new['paired'][k]['ci_low']:+.4e}, {new['paired'][k]['ci_high']:+.4e}]"
            for k in old["paired"]
        )
        return f"per-group changes: largest relative difference {worst:.1e}; {pairs}"
    a, b = old["history"], new["history"]
    same = a.keys() == b.keys() and all(
        len(a[k]) == len(b[k])
        and all(x == y or (x != x and y != y) for x, y in zip(a[k], b[k]))  # nan == nan
        for k in a
    )
    return "histories bit for bit identical" if same else "histories DIFFER"


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--against",
        default=None,
        help="git revision of the old tiny_model (default: where this branch left main)",
    )
    p.add_argument("--parts", default=",".join(PARTS))
    p.add_argument("--seeds", type=int, default=5, help="the probes' seeds (the notebooks: 5)")
    p.add_argument("--repeats", type=int, default=1)
    args = p.parse_args()
    parts = [x for x in args.parts.split(",") if x]
    unknown = set(parts) - set(PARTS)
    if unknown:
        p.error(f"unknown parts {sorted(unknown)}; choose from {PARTS}")
    if args.against is None:
        args.against = subprocess.run(
            ["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="live-cells-") as d:
        tmp = Path(d)
        old_tree = tmp / "old"
        old_tree.mkdir()
        archive = subprocess.run(
            ["git", "archive", args.against, "tiny_model"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old_tree)], input=archive, check=True)
        runs = tmp / "runs"
        runs.mkdir()
        rev = subprocess.run(
            ["git", "rev-parse", "--short", args.against], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        print(f"this tree vs {args.against} ({rev}); best of {args.repeats} per side")
        print(
            f"{'part':<9}{'old wall':>10}{'new wall':>10}{'ratio':>8}{'old cpu':>10}{'new cpu':>10}{'ratio':>8}"
        )
        for part in parts:
            olds, news = [], []
            for _ in range(args.repeats):
                olds.append(run_part(part, args.seeds, str(old_tree), runs))
                news.append(run_part(part, args.seeds, str(ROOT), runs))
            assert olds[0]["module"].startswith(str(old_tree)), olds[0]["module"]
            assert not news[0]["module"].startswith(str(old_tree)), news[0]["module"]
            ow, nw = min(r["wall_s"] for r in olds), min(r["wall_s"] for r in news)
            oc, nc = min(r["cpu_s"] for r in olds), min(r["cpu_s"] for r in news)
            print(
                f"{part:<9}{ow:>10.2f}{nw:>10.2f}{ow / nw:>7.2f}x{oc:>10.2f}{nc:>10.2f}{oc / nc:>7.2f}x"
            )
            print(f"  {agreement(part, olds[0], news[0])}")


if __name__ == "__main__":
    main()
