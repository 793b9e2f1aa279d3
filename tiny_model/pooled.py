"""The one-step probe over several seeds: pooled changes, paired intervals, per-seed rows.

One seed gives 60 mixed groups, too few to tell a paired difference of a
tenth of the changes' spread from 0. ``run_probe_seeds`` runs the probe once
per seed (other problems, other samples, the same θ), pools the per-group
changes, and bootstraps the paired differences *stratified by seed* (each
resample draws each seed's groups from that seed's groups), so the pooled
interval and the per-seed ones can be read side by side:

    >>> pooled = run_probe_seeds(load_warm(), fns, seeds=range(5), optimizer="adam")
    >>> print(pooled.table())
    >>> pooled.paired["pos_only-grpo"]   # {'mean', 'ci_low', 'ci_high'}
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tiny_model import memo
from tiny_model.model import TinyModel
from tiny_model.probe import (
    PAIRS,
    ProbeConfig,
    ProbeResult,
    lld_rates,
    run_probe,
    summarize,
    summary_rows,
    verdict,
)
from tiny_model.seam import Functions


def parse_seeds(text: str) -> tuple[int, ...]:
    """``'0-4'`` -> (0, 1, 2, 3, 4); ``'0,2,7'`` -> (0, 2, 7); ``'3'`` -> (3,). Raises ValueError."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise ValueError(f"seeds like 0-4 or 0,2,7; got {text!r}") from None
        if b < a or a < 0:
            raise ValueError(f"seeds like 0-4 or 0,2,7; got {text!r}")
        seeds.extend(range(a, b + 1))
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds like 0-4 or 0,2,7 (each once); got {text!r}")
    return tuple(seeds)


def stratified_bootstrap_ci(
    strata: Sequence[np.ndarray], seed: int = 0, resamples: int = 2000, level: float = 0.95
) -> dict[str, float]:
    """Mean of the pooled values and a percentile bootstrap interval resampling within each stratum.

    strata: one 1-D array per seed (lengths n_s). Each resample draws n_s values
    with replacement from stratum s, for every s, and takes the mean of all
    of them: the seeds' weights stay fixed, the groups inside them vary.
    """
    arrays = [np.asarray(a, dtype=np.float64) for a in strata]
    if not arrays or any(a.ndim != 1 or a.size == 0 for a in arrays):
        raise ValueError("every stratum must be a non-empty 1-D array")
    rng = np.random.default_rng(seed)
    total = np.zeros(resamples)  # (R,)
    for a in arrays:
        idx = rng.integers(0, a.size, size=(resamples, a.size))  # (R, n_s)
        total += a[idx].sum(axis=1)
    means = total / sum(a.size for a in arrays)  # (R,)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return {"mean": float(np.concatenate(arrays).mean()), "ci_low": float(lo), "ci_high": float(hi)}


@dataclass
class PooledProbe:
    """The probe of every seed, and their pooled summary."""

    config: ProbeConfig  # the shared settings (its ``seed`` is the first seed's)
    results: list[ProbeResult]  # one per seed, in the order of ``seeds``
    lld: dict[str, float]  # method -> LLD rate over all groups (fns.lld_rate, eps 0)
    paired: dict[str, dict[str, float]]  # "a-b" -> pooled mean and stratified 95% CI

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(r.config.seed for r in self.results)

    @property
    def changes(self) -> dict[str, np.ndarray]:
        """method -> (total groups,) the per-group changes of all seeds, concatenated."""
        return {m: np.concatenate([r.changes[m] for r in self.results]) for m in self.methods}

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(self.results[0].changes)

    def summary(self) -> dict[str, dict[str, float]]:
        """method -> mean_change, median_change, lld_rate, selected_fraction (all groups)."""
        selected = {m: np.concatenate([r.selected[m] for r in self.results]) for m in self.methods}
        return summarize(self.changes, selected, self.lld)

    def table(self) -> str:
        """Pooled rows, pooled paired intervals, then one row per seed."""
        c = self.config
        n = len(next(iter(self.changes.values())))
        per = ", ".join(str(len(r.changes[self.methods[0]])) for r in self.results)
        lines = [
            f"one-step probe, {c.optimizer} lr={c.lr:g}, G={c.group_size}: "
            f"{len(self.results)} seeds ({_seed_text(self.seeds)}), {n} mixed groups ({per})",
            "pooled:",
            *summary_rows(self.summary(), self.paired, indent="  "),
        ]
        lines.append("per seed: mean Δ (LLD rate) per method; paired mean [95% CI]")
        for r in self.results:
            s = r.summary()
            cells = "  ".join(
                f"{m} {s[m]['mean_change']:+.2e} ({s[m]['lld_rate']:.2f})" for m in self.methods
            )
            lines.append(f"  seed {r.config.seed}: {cells}")
            for name, p in r.paired.items():
                lines.append(
                    f"           {name:<14} {p['mean']:+.2e} [{p['ci_low']:+.2e}, "
                    f"{p['ci_high']:+.2e}]  {verdict(p)}"
                )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def to_dict(self) -> dict:
        """JSON-able: the shared config, the pooled summary and paired CIs, every seed's metrics."""
        config = {**self.config.to_dict(), "methods": list(self.config.methods)}
        config.pop("seed")
        return {
            "config": config,
            "seeds": list(self.seeds),
            "n_groups": len(next(iter(self.changes.values()))),
            "summary": self.summary(),
            "paired": self.paired,
            "per_seed": [r.to_dict() for r in self.results],
        }


def _seed_text(seeds: Sequence[int]) -> str:
    if len(seeds) > 2 and list(seeds) == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(str(s) for s in seeds)


def _probe_seed(
    model: TinyModel, fns: Functions, config: ProbeConfig, progress: Callable[[int], object] | None
) -> ProbeResult:
    """run_probe for one seed, through tiny_model.memo's cache when TINY_MODEL_PROBE_CACHE is set."""
    k = memo.key(model, fns, config) if memo.folder() is not None else None
    hit = memo.load(k)
    if isinstance(hit, ProbeResult) and hit.config == config:
        if progress is not None:
            progress(len(hit.changes[config.methods[0]]))
        return hit
    result = run_probe(model, fns, config, progress=progress)
    memo.store(k, result)
    return result


def run_probe_seeds(
    model: TinyModel,
    fns: Functions,
    seeds: Iterable[int] = range(5),
    config: ProbeConfig | None = None,
    *,
    progress: Callable[[int], object] | None = None,
    **overrides: object,
) -> PooledProbe:
    """``run_probe`` once per seed (same θ, same settings), pooled.

    ``overrides`` set ProbeConfig fields as in run_probe. The bootstrap of the
    pooled pairs is seeded by the first seed.
    """
    seeds = tuple(int(s) for s in seeds)
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"need at least one seed, each once; got {seeds}")
    base = config or ProbeConfig()
    if overrides:
        base = dataclasses.replace(base, **overrides)
    results = [_probe_seed(model, fns, dataclasses.replace(base, seed=s), progress) for s in seeds]
    base = dataclasses.replace(base, seed=seeds[0])
    methods = tuple(results[0].changes)
    pooled = {m: np.concatenate([r.changes[m] for r in results]) for m in methods}
    lld = lld_rates(fns, pooled)
    paired = {}
    for a, b in PAIRS:
        if a in methods and b in methods:
            paired[f"{a}-{b}"] = stratified_bootstrap_ci(
                [r.changes[a] - r.changes[b] for r in results],
                seed=seeds[0],
                resamples=base.bootstrap,
            )
    return PooledProbe(config=base, results=results, lld=lld, paired=paired)


SHIPPED_PROBES = {
    "05_grpo_lld": Path(__file__).resolve().parent / "results" / "probe_05.json",
    "06_nthr": Path(__file__).resolve().parent / "results" / "probe_06.json",
}
"""The pooled probes notebooks 05 (``{"sgd": ..., "adam": ...}``) and 06 run live, as
PooledProbe.to_dict() wrote them from the reference functions at the notebooks' settings
(``python -m tiny_model.pooled --write-shipped``): what a live cell shows where the learner's
functions cannot run yet."""


def shipped_probe_table(assignment: str, rule: str | None = None) -> str:
    """The pooled rows of ``assignment``'s shipped probe (05: of update rule ``rule``)."""
    data = json.loads(SHIPPED_PROBES[assignment].read_text(encoding="utf-8"))
    if rule is not None:
        data = data[rule]
    c = data["config"]
    return "\n".join(
        [
            f"shipped one-step probe, {c['optimizer']} lr={c['lr']:g}, G={c['group_size']}: "
            f"{len(data['seeds'])} seeds ({_seed_text(data['seeds'])}), "
            f"{data['n_groups']} mixed groups, the reference functions",
            "pooled:",
            *summary_rows(data["summary"], data["paired"], indent="  "),
        ]
    )


def write_shipped() -> None:
    """Run notebook 05's and 06's probes with the reference functions and write SHIPPED_PROBES."""
    from tiny_model.seam import Functions
    from tiny_model.warm import load_warm

    fns = Functions.from_solutions()
    model = load_warm()
    d05 = {
        rule: run_probe_seeds(
            model, fns, seeds=range(5), methods=("grpo", "pos_only"), groups=60, optimizer=rule
        ).to_dict()
        for rule in ("sgd", "adam")
    }
    d06 = run_probe_seeds(
        model, fns, seeds=range(5), methods=("grpo", "nthr", "random"), groups=60
    ).to_dict()
    for assignment, data in (("05_grpo_lld", d05), ("06_nthr", d06)):
        SHIPPED_PROBES[assignment].write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["--write-shipped"]:
        sys.exit("usage: python -m tiny_model.pooled --write-shipped")
    write_shipped()
