"""Every interval and figure the tiny-model notebooks and docs quote comes from a shipped file.

The text of 05-07 and docs/tiny-model.md quotes paired differences as "mean [low, high]" (95 %
t intervals over seeds). Each must be one the shipped results hold (tiny_model/results/*.json:
every {mean, ci_low, ci_high} in them, and the paired run-means of each study, which the text
also quotes, e.g. 06's "averaged over the 16 evaluations"), at the digits shown; "0.152 [0.048,
0.256] fewer" quotes the negation of a stored −0.152 [−0.256, −0.048]. A figure made by an
older run, or by a rule the code no longer offers, fails here with where it is quoted.
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
from conftest import ROOT

from tiny_model.study import TrainStudy, paired_t_interval

RESULTS = sorted((ROOT / "tiny_model" / "results").glob("*.json"))
TEXTS = [
    ROOT / "solutions" / n / f"{n}.ipynb" for n in ("05_grpo_lld", "06_nthr", "07_beyond_nthr")
]
TEXTS += [ROOT / "docs" / "tiny-model.md"]
NUM = r"[−+-]?\d+\.\d+(?:e[−+-]?\d+)?"
INTERVAL = re.compile(rf"({NUM})\s*\[\s*({NUM}),\s*({NUM})\s*\]")


def _value(text: str) -> float:
    return float(text.replace("−", "-"))


def _decimals(text: str) -> int:
    body = text.replace("−", "-").lstrip("+-")
    if "e" in body:
        mantissa, exponent = body.split("e")
        return len(mantissa.split(".")[1]) - int(exponent)
    return len(body.split(".")[1])


def _stored(x):
    if isinstance(x, dict):
        if {"mean", "ci_low", "ci_high"} <= set(x):
            yield (x["mean"], x["ci_low"], x["ci_high"])
        for v in x.values():
            yield from _stored(v)
    elif isinstance(x, list):
        for v in x:
            yield from _stored(v)


def shipped_intervals() -> list[tuple[float, float, float]]:
    out = []
    for path in RESULTS:
        data = json.loads(path.read_text())
        out += list(_stored(data))
        for study in _studies(data):
            out += _run_mean_intervals(study)
    return out


def _run_mean_intervals(study: TrainStudy) -> list[tuple[float, float, float]]:
    out = []
    first = study.runs[study.methods[0]][study.seeds[0]]
    for metric in first:
        if len(first[metric]) < 2:
            continue
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            means = {
                m: np.array([float(np.nanmean(study.runs[m][s][metric][1:])) for s in study.seeds])
                for m in study.methods
            }
        for a in study.methods:
            for b in study.methods:
                if a != b and len(study.seeds) > 1:
                    p = paired_t_interval(means[a] - means[b])
                    out.append((p["mean"], p["ci_low"], p["ci_high"]))
    return out


def _parts(path, markdown_only: bool = False) -> list[tuple[str, str]]:
    """(where, text) of a notebook's cells (its markdown ones only, if asked) or of a page."""
    if path.suffix != ".ipynb":
        return [(str(path.relative_to(ROOT)), path.read_text())]
    cells = json.loads(path.read_text())["cells"]
    return [
        (f"{path.name} cell {i}", "".join(c["source"]))
        for i, c in enumerate(cells)
        if not markdown_only or c["cell_type"] == "markdown"
    ]


def quoted():
    for path in TEXTS:
        for where, text in _parts(path):
            for m in INTERVAL.finditer(text):
                yield where, m.group(0).replace("\n", " "), [m.group(k) for k in (1, 2, 3)]


def _rounds_to(v: float, shown: str) -> bool:
    """Is ``shown`` a rounding of ``v`` to the digits it shows (either way at a tie)?"""
    return abs(v - _value(shown)) <= 0.5 * 10 ** -_decimals(shown) * (1 + 1e-9)


def _matches(shown: list[str], stored: tuple[float, float, float]) -> bool:
    mean, low, high = stored
    for candidate in ((mean, low, high), (-mean, -high, -low)):  # "N [a, b] fewer"
        if all(_rounds_to(v, q) for q, v in zip(shown, candidate)):
            return True
    return False


def test_every_quoted_interval_is_one_the_shipped_results_hold():
    stored = shipped_intervals()
    found = list(quoted())
    assert len(found) >= 30, f"only {len(found)} intervals found: has the text's form changed?"
    missing = [f"{where}: {text}" for where, text, shown in found if not any(
        _matches(shown, s) for s in stored)]  # fmt: skip
    assert not missing, "quoted, but in no shipped result:\n" + "\n".join(missing)


def test_a_figure_no_file_holds_is_caught():
    """The check's power: an interval moved in its last digit is not matched."""
    stored = shipped_intervals()
    where, text, shown = next(quoted())
    moved = shown[:2] + [
        f"{_value(shown[2]) + 2 * 10 ** -_decimals(shown[2]):+.{_decimals(shown[2])}f}"
    ]
    assert any(_matches(shown, s) for s in stored), f"{where}: {text}"
    assert not any(_matches(moved, s) for s in stored), f"{moved} matched a stored interval"


def test_07s_probe_figures_are_the_shipped_probes():
    """07 quotes the one-step probe of six methods (GRPO's change per step, each fix's paired
    difference and its share of GRPO's change) from `python -m tiny_model probe --methods
    grpo,nthr,thr_exploit,thr_explore,nll,smaug --seeds 0-4`, shipped as
    tiny_model/results/probe_07.json: does every figure of that sentence agree with the file?"""
    probe = json.loads((ROOT / "tiny_model" / "results" / "probe_07.json").read_text())
    nb = json.loads((ROOT / "solutions" / "07_beyond_nthr" / "07_beyond_nthr.ipynb").read_text())
    text = " ".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    text = " ".join(text.split())
    grpo = re.search(rf"GRPO raises the correct responses by ({NUM}) nats per step", text)
    assert grpo, "07 no longer quotes GRPO's probe change in the form this test reads"
    base = probe["summary"]["grpo"]["mean_change"]
    assert _matches([grpo.group(1)] * 3, (base, base, base)), (grpo.group(1), base)
    labels = {"NTHR adds": "nthr", "thr_exploit": "thr_exploit", "the NLL": "nll",
              "thr_explore takes away": "thr_explore"}  # fmt: skip
    for label, method in labels.items():
        m = re.search(rf"{re.escape(label)} ({NUM}) \(({NUM}) %", text)
        assert m, f"07 no longer quotes {label} … (… %)"
        diff = probe["paired"][f"{method}-grpo"]["mean"]
        assert _matches([m.group(1)] * 3, (diff, diff, diff)), (label, m.group(1), diff)
        share = abs(diff) / base * 100
        assert _matches([m.group(2)] * 3, (share, share, share)), (label, m.group(2), share)


# Figures of three or more decimals in the same texts that are not results: arXiv ids, and a
# constant of the maths (05's common-mistakes table: a population std gives ±1 where the
# sample std gives ±1/√2 for rewards (0, 1)).
NOT_RESULTS = {"0.707107"}
PLAIN = re.compile(r"(?<![\w.\[−+-])(\d+\.\d{3,})(?![\d\]])")
ARXIV = re.compile(r"arXiv[\s:]+\d{4}\.\d{4,5}")


def shipped_figures() -> np.ndarray:
    """Every number the shipped results hold, their intervals, and the studies' means over
    seeds at every evaluation (the "0.410 → 0.559" of a table)."""

    def numbers(x):
        if isinstance(x, dict):
            for v in x.values():
                yield from numbers(v)
        elif isinstance(x, list):
            for v in x:
                yield from numbers(v)
        elif isinstance(x, (int, float)) and not isinstance(x, bool):
            yield float(x)

    out = [v for t in shipped_intervals() for v in t]
    for path in RESULTS:
        data = json.loads(path.read_text())
        out += list(numbers(data))
        for study in _studies(data):
            for metric in study.runs[study.methods[0]][study.seeds[0]]:
                for m in study.methods:
                    rows = [study.runs[m][s][metric] for s in study.seeds]
                    if len({len(r) for r in rows}) == 1 and rows[0]:
                        with np.errstate(all="ignore"), warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            out += list(np.nanmean(np.asarray(rows, dtype=float), axis=0))
    return np.asarray(out, dtype=float)


def _studies(data: dict) -> list[TrainStudy]:
    """The studies a shipped file holds: itself, or (07's 300-step files) its "study" and its
    "arms"."""
    out = []
    for d in [data, data.get("study"), *data.get("arms", {}).values()]:
        try:
            out.append(TrainStudy.from_dict(d))
        except (AttributeError, KeyError, TypeError, ValueError):
            continue
    return out


def test_every_quoted_figure_of_three_decimals_is_in_the_shipped_results():
    """Accuracies, shares and counts quoted as 0.559 or 2.388 (not in an interval): each must
    be a rounding of a number the shipped results hold (or their means over seeds)."""
    pool = shipped_figures()
    pool = np.concatenate([pool, -pool])
    missing, found = [], 0
    for path in TEXTS:
        for where, text in _parts(path, markdown_only=True):
            text = ARXIV.sub("", INTERVAL.sub("", text))
            for m in PLAIN.finditer(text):
                shown = m.group(1)
                if shown in NOT_RESULTS:
                    continue
                found += 1
                tol = 0.5 * 10 ** -_decimals(shown) * (1 + 1e-9)
                if not (np.abs(pool - _value(shown)) <= tol).any():
                    missing.append(f"{where}: {shown} in …{text[max(0, m.start() - 60) : m.end()]}")
    assert found >= 50, f"only {found} figures found: has the text's form changed?"
    assert not missing, "quoted, but in no shipped result:\n" + "\n".join(missing)


def _long_figures():
    """07's 300-step study: (the sentence's pattern, the values its numbers quote), computed from
    the shipped files. Each pattern's numbers are the figures in the order they appear."""
    from tiny_model.study import LONG_COLUMNS, SHIPPED_LONG, load_long, long_rows, run_means

    arms = load_long()
    main = arms["main"]

    def end(arm: str, m: str, k: str) -> float:
        return float(np.mean([arms[arm].runs[m][s][k][-1] for s in arms[arm].seeds]))

    def pct(arm: str, m: str, k: str) -> float:
        return 100 * float(np.nanmean(run_means(arms[arm], m, k)))

    cpu = json.loads(SHIPPED_LONG.read_text())["cpu"]
    g, share, ent = "heldout_greedy_accuracy", "heldout_top_path_share", "heldout_path_entropy"
    from tiny_model.study import load_long_kernels

    kern = load_long_kernels()
    agree = kern["agreement"]
    return [
        (rf"\(({NUM}) and ({NUM}) CPU-minutes; `python benchmarks/multi_study.py --long --kernels",
         [kern["cpu"]["default"]["cpu_s"] / 60, kern["cpu"]["avx2"]["cpu_s"] / 60]),
        (rf"thr_explore's greedy accuracy moved by ({NUM}) and GRPO's with two updates per batch "
         rf"by ({NUM})", [kern["moved"]["thr_explore"][g], kern["moved"]["grpo, 2 updates"][g]]),
        (rf"GRPO ({NUM}) against a standard deviation of ({NUM}) over the (\d+) seeds, "
         rf"thr_explore ({NUM}) against ({NUM})",
         [kern["moved_end"]["grpo"][g], kern["spread"]["grpo"][g], float(len(main.seeds)),
          kern["moved_end"]["thr_explore"][g], kern["spread"]["thr_explore"][g]]),
        (r"of its (\d+) paired differences with GRPO at step 300 \((\d+) rows, (\d+) figures, "
         r"(\d+) seeds\), (\d+) under `default` and (\d+) under `avx2` lie outside",
         [float(agree["default"]["checks"]), float(len(long_rows(arms)) - 1),
          float(len(LONG_COLUMNS)), float(len(kern["reruns"]["default"]["seeds"])),
          float(len(agree["default"]["outside"])), float(len(agree["avx2"]["outside"]))]),
        (r"where chance explains up to (\d+), and no row has more",
         [float(agree["default"]["chance_up_to"])]
         if not agree["default"]["rows_too_far"] and not agree["avx2"]["rows_too_far"]
         and agree["default"]["chance_up_to"] == agree["avx2"]["chance_up_to"] else [float("nan")]),
        (rf"GRPO's greedy accuracy rises from ({NUM}) to ({NUM})",
         [main.start(g), end("main", "grpo", g)]),
        (rf"top-path share from ({NUM}) to ({NUM})", [main.start(share), end("main", "grpo", share)]),
        (rf"entropy over right answers from ({NUM}) to ({NUM}) nats",
         [main.start(ent), end("main", "grpo", ent)]),
        (rf"({NUM}) % of the tokens thr_explore reweights have THR > 0",
         [pct("main", "thr_explore", "reweighted_thr_pos")]),
        (rf"thr_exploit amplifies ({NUM}) % of the minority answers' tokens and ({NUM}) % of the "
         "majority answer's", [pct("main", "thr_exploit", "amplified_minority"),
                               pct("main", "thr_exploit", "amplified_majority")]),
        (rf"thr_explore weakens ({NUM}) % of the minority answers' tokens and ({NUM}) % of the "
         "majority answer's", [pct("main", "thr_explore", "weakened_minority"),
                               pct("main", "thr_explore", "weakened_majority")]),
        (rf"the clip binds on ({NUM}) % of the tokens with bounds \[0.8, 1.2\] and ({NUM}) % with "
         r"clip-higher's \[0.8, 1.28\]", [pct("mu2", "grpo", "clip_frac"),
                                          pct("mu2_high", "grpo", "clip_frac")]),
        (rf"({NUM}) CPU-minutes for the (\d+) runs", [cpu["cpu_s"] / 60, float(sum(
            len(arms[a].methods) * len(arms[a].seeds) for a in arms))]),
    ]  # fmt: skip


def test_07s_long_study_figures_are_the_shipped_file():
    """The plain figures 07 and docs/tiny-model.md quote from the 300-step study (GRPO's start
    and end, what THR reweights, how often the clip binds, the CPU cost) are the shipped files'
    at the digits shown, and 07 quotes each. Catches a number left from a run with fewer seeds."""
    nb = json.loads((ROOT / "solutions" / "07_beyond_nthr" / "07_beyond_nthr.ipynb").read_text())
    texts = {
        "07": " ".join(" ".join("".join(c["source"]) for c in nb["cells"]).split()),
        "docs": " ".join((ROOT / "docs" / "tiny-model.md").read_text().split()),
    }
    bad = []
    for pattern, values in _long_figures():
        hits = {name: list(re.finditer(pattern, text)) for name, text in texts.items()}
        if not hits["07"]:
            bad.append(f"07 no longer quotes: {pattern}")
        for name, found in hits.items():
            for m in found:
                for shown, v in zip(m.groups(), values):
                    if not _rounds_to(v, shown if "." in shown else shown + ".0"):
                        bad.append(f"{name}: {m.group(0)!r}: {shown} is not {v:.6g}")
    assert not bad, "\n".join(bad)
