"""How the one-step probe's pooled observations hold group by group.

    python benchmarks/probe_per_group.py [--seeds 0-4]

`python -m tiny_model probe --optimizer adam --seeds 0-4` reports pooled means and paired
intervals: the paper's observations hold *on average* over the 300 probed groups. This script
runs the same probe (the reference functions, Adam's first step, the same seeds and groups)
and counts, group by group, how often each observation fails: the groups where NTHR raises the
correct responses less than GRPO or than the random baseline, where positive-only raises them
less than GRPO, the median ratio of positive-only's change to GRPO's, and the groups that show
lazy likelihood displacement (a change ≤ 0). docs/tiny-model.md quotes these counts.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from tiny_model.experiment import deterministic, load_warm  # noqa: E402
from tiny_model.pooled import parse_seeds  # noqa: E402
from tiny_model.probe import ProbeConfig, run_probe  # noqa: E402
from tiny_model.seam import Functions  # noqa: E402


def per_group(seeds: list[int]) -> dict[str, np.ndarray]:
    """method -> the change of ln π(correct) on every probed group, seeds in order."""
    fns = Functions.from_solutions()
    model = load_warm(torch.device("cpu"), None)
    config = ProbeConfig(optimizer="adam")
    out: dict[str, list[np.ndarray]] = {}
    with deterministic():
        for seed in seeds:
            result = run_probe(model, fns, dataclasses.replace(config, seed=seed))
            for method, changes in result.changes.items():
                out.setdefault(method, []).append(np.asarray(changes))
    return {m: np.concatenate(v) for m, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0-4")
    args = ap.parse_args(argv)
    ch = per_group(parse_seeds(args.seeds))
    g = ch["grpo"]
    print(f"{len(g)} probed groups (Adam's first step, seeds {args.seeds})")
    print(f"nthr below grpo:      {int((ch['nthr'] < g).sum())} groups")
    print(f"nthr below random:    {int((ch['nthr'] < ch['random']).sum())} groups")
    print(f"pos_only below grpo:  {int((ch['pos_only'] < g).sum())} groups")
    print(f"pos_only / grpo:      median ratio {float(np.median(ch['pos_only'] / g)):.3f}")
    print(
        f"LLD (change <= 0):    grpo {int((g <= 0).sum())} groups, "
        f"pos_only {int((ch['pos_only'] <= 0).sum())}, nthr {int((ch['nthr'] <= 0).sum())}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
