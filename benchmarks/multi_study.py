"""Build notebook 07's shipped multi-answer study from runs made one seed per process.

    python benchmarks/multi_study.py --commands           # print the commands, one per seed
    python benchmarks/multi_study.py --merge runs/main    # merge runs/main/s*/metrics.json
    python benchmarks/multi_study.py --side runs          # runs/{clip_*,sweep_*}/metrics.json

One process does the same (``python -m tiny_model train --config multi ... --seeds 0-9
--write-shipped multi``): seeds are independent (each seed's runs start from the warm model
with their own draws), so merging per-seed studies gives that study's numbers
(tests/test_tiny_model_multi.py checks it on a short run). Splitting them lets a busy machine
run seeds side by side. ``--merge`` writes tiny_model/results/train_multi.json, ``--side``
tiny_model/results/train_multi_side.json (THR's |p| swept; 2 updates per batch with and
without clip-higher), and each prints its table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tiny_model.harness import write_json  # noqa: E402
from tiny_model.study import (  # noqa: E402
    SHIPPED_MULTI,
    SHIPPED_MULTI_SIDE,
    TrainStudy,
    load_shipped,
    load_side,
    merge_studies,
    multi_table,
    side_table,
)

METHODS = "grpo,pos_only,thr_exploit,thr_explore,thr_only"
SETTINGS = "--config multi --steps 150 --stop-after 40 --eval-every 40 --pass-samples 32"
"""The study's settings: the first 40 steps of a 150-step schedule (Adam, lr ramping to 5e-4 over
50 steps, then a cosine), held-out evaluation at steps 0 and 40 with 32 draws per problem (what
fitted the CPU time at hand: 10 seeds x 5 methods took about 10 CPU-minutes)."""


def _load(path: Path) -> TrainStudy:
    return TrainStudy.from_dict(json.loads(path.read_text()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commands", action="store_true", help="print the per-seed commands")
    ap.add_argument("--merge", type=Path, metavar="DIR", help="merge DIR/s*/metrics.json")
    ap.add_argument("--side", type=Path, metavar="DIR", help="DIR/{clip,sweep}_*/metrics.json")
    ap.add_argument("--seeds", default="0-9")
    args = ap.parse_args(argv)
    if args.commands:
        lo, hi = (int(x) for x in args.seeds.split("-"))
        for s in range(lo, hi + 1):
            print(
                f"python -m tiny_model train {SETTINGS} --methods {METHODS} --seeds {s} "
                f"--out runs/main/s{s}"
            )
        print("python benchmarks/multi_study.py --merge runs/main")
    if args.merge:
        parts = sorted(args.merge.glob("s*/metrics.json"))
        if not parts:
            ap.error(f"no {args.merge}/s*/metrics.json")
        study = merge_studies([_load(p) for p in parts])
        write_json(SHIPPED_MULTI, study.to_dict())
        print(f"{SHIPPED_MULTI}: {len(study.seeds)} seeds")
        print(multi_table(study))
    if args.side:
        side: dict[str, dict[str, dict]] = {"sweep": {}, "clip": {}}
        for d in sorted(args.side.glob("sweep_*")):
            if (d / "metrics.json").is_file():
                side["sweep"][d.name.removeprefix("sweep_")] = json.loads(
                    (d / "metrics.json").read_text()
                )
        for name in ("sym", "high"):
            f = args.side / f"clip_{name}" / "metrics.json"
            if f.is_file():
                side["clip"][name] = json.loads(f.read_text())
        write_json(SHIPPED_MULTI_SIDE, side)
        print(side_table(load_shipped(SHIPPED_MULTI), load_side()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
