"""Notebook 07's 300-step study: the entropy over right paths, what THR's weights reweight (by
THR's sign, majority vs minority right paths), the reviews' mask-plus-sign reading, and the
pairing of every arm with the main arm's GRPO.

Cheap by design: hand-made draws and groups, one sampled batch's weights, synthetic studies.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import torch

from tiny_model import grpo, training
from tiny_model.grpo import Groups
from tiny_model.seam import Functions
from tiny_model.study import TrainStudy, long_paired, run_means
from tiny_model.task import EOS, MULTI, response_mask
from tiny_model.training import TrainConfig
from tiny_model.warm import MULTI_WARMUP, load_warm


def _resp(text: str) -> torch.Tensor:
    ids = [int(ch) for ch in text.replace(" ", "").rstrip(".")] + [EOS]
    return torch.tensor(ids)


@pytest.fixture(scope="module")
def fns():
    return Functions.from_solutions()


def test_path_entropy_is_over_the_right_draws_only():
    """3+4+8: right draws 07 15. x2 and 11 15. x2 (and a wrong one): entropy ln 2; 1+1+1: one
    right path only: 0. Catches an entropy taken over all draws (the wrong one would add to it)
    or over the three paths whether drawn or not."""
    p = torch.tensor([[3, 4, 8], [1, 1, 1]])
    first = [_resp(t) for t in ("07 15.", "07 15.", "11 15.", "11 15.", "07 14.")]
    second = [_resp(t) for t in ("02 03.", "02 03.", "09 09.", "02 03.", "02 03.")]
    draws = torch.stack([torch.stack(first), torch.stack(second)])  # (2, 5, 5)
    d = training.diversity(p, draws, MULTI)
    assert d["heldout_path_entropy"] == pytest.approx((math.log(2) + 0.0) / 2)


def _groups(texts: list[list[str]], problems: list[list[int]]) -> Groups:
    responses = torch.stack([torch.stack([_resp(t) for t in row]) for row in texts])
    p = torch.tensor(problems)
    return Groups(p, responses, response_mask(responses), MULTI.rewards(p, responses))


def test_majority_is_the_groups_commonest_right_answer_and_ties_are_all_majority():
    """Group 0: 07 15. x2, 11 15. x1, a wrong one -> the two 07 15. are majority, 11 15. minority;
    group 1: 07 15. and 11 15. once each -> both majority (tied). Catches a minority taken over
    all responses (the wrong one) or a tie broken arbitrarily."""
    g = _groups(
        [["07 15.", "11 15.", "07 15.", "07 14."], ["07 15.", "11 15.", "07 14.", "07 13."]],
        [[3, 4, 8], [3, 4, 8]],
    )
    major, minor = grpo.majority_paths(g)
    assert major.tolist() == [[True, False, True, False], [True, True, False, False]]
    assert minor.tolist() == [[False, True, False, False], [False, False, False, False]]


def test_reweighting_stats_count_by_thr_sign_and_by_path():
    """Weights 1.5 on a majority token, 0.5 on a minority one and on a wrong response's token
    (mixed group only): each share is the hand count. Catches shares over the wrong responses'
    tokens, or over an all-right group whose advantages are 0."""
    g = _groups(
        [["07 15.", "11 15.", "07 15.", "07 14."], ["07 15.", "07 15.", "07 15.", "07 15."]],
        [[3, 4, 8], [3, 4, 8]],
    )
    w = torch.ones(g.mask.shape)
    w[0, 0, 0], w[0, 1, 0], w[0, 3, 0] = 1.5, 0.5, 0.5
    w[1, 0, 0] = 3.0  # an all-right group: not counted
    thr = torch.full(g.mask.shape, -1.0)
    thr[0, 0, 0] = 2.0
    s = grpo.reweighting_stats(g, w, thr)
    assert s["reweighted_frac"] == pytest.approx(3 / 20)  # 4 responses x 5 tokens
    assert s["reweighted_thr_pos"] == pytest.approx(1 / 3)
    assert s["amplified_majority"] == pytest.approx(1 / 10)  # 2 majority responses x 5 tokens
    assert s["weakened_minority"] == pytest.approx(1 / 5)
    assert s["amplified_minority"] == 0.0 and s["weakened_majority"] == 0.0
    assert np.isnan(grpo.reweighting_stats(g, w)["reweighted_thr_pos"])


def test_mask_plus_sign_masks_exactly_the_tokens_that_are_not_dominant(fns):
    """--thr-mask: the dominant tokens keep 1 + p sign(THR), every other valid token of a mixed
    group gets 0 (the reviews' reading); without it they keep 1. Catches the mask applied to the
    dominant tokens, or not at all; and the setting accepted with a method it cannot apply to."""
    model = load_warm("cpu", MULTI_WARMUP)
    problems = MULTI.split()[0][:12]
    groups = grpo.sample_groups(model, problems, 8, torch.Generator().manual_seed(0), task=MULTI)
    adv = torch.as_tensor(fns.group_advantages(groups.rewards))
    with torch.no_grad():
        logits, hidden = grpo.response_forward(model, problems, groups.responses, task=MULTI)
    kw = dict(thr_p=0.5)
    plain = grpo.token_weights("thr_explore", fns, groups, adv, logits, hidden, **kw)
    masked = grpo.token_weights(
        "thr_explore", fns, groups, adv, logits, hidden, thr_mask=True, **kw
    )
    checked = 0
    for i in groups.mixed.nonzero().flatten().tolist():
        valid = groups.mask[i]
        dominant = plain.scores[i][valid].abs() > float(plain.tau[i])
        want = torch.where(dominant, plain.weights[i][valid], torch.zeros(()))
        assert torch.equal(masked.weights[i][valid], want)
        checked += int((~dominant).sum())
    assert checked > 0
    with pytest.raises(ValueError, match="thr_mask"):
        TrainConfig(method="grpo", thr_mask=True).check()


def _study(values: dict[str, list[float]], **config) -> TrainStudy:
    """A study whose every run's final greedy accuracy is the value given (per seed)."""
    seeds = tuple(range(len(next(iter(values.values())))))
    runs = {
        m: {s: {"eval_step": [0.0, 300.0], "heldout_greedy_accuracy": [0.4, v[s]]} for s in seeds}
        for m, v in values.items()
    }
    cfg = TrainConfig(method=next(iter(values)), seed=0, task=MULTI, **config)
    return TrainStudy(config=cfg, methods=tuple(values), seeds=seeds, runs=runs)


def test_every_arm_pairs_with_the_main_arms_grpo_by_seed():
    """An arm's run at seed s minus the main arm's GRPO at seed s: the differences 0.1, 0.2,
    0.3 give mean 0.2. Catches arms paired with their own first method, or by position after a
    seed is missing."""
    main = _study({"grpo": [0.5, 0.6, 0.7], "pos_only": [0.5, 0.6, 0.7]})
    arm = _study({"grpo": [0.6, 0.8, 1.0]}, inner_steps=2)
    got = long_paired({"main": main, "mu2": arm}, ["heldout_greedy_accuracy"])
    assert set(got) == {"pos_only", "grpo, 2 updates"}
    assert got["grpo, 2 updates"]["heldout_greedy_accuracy"]["mean"] == pytest.approx(0.2)
    assert got["pos_only"]["heldout_greedy_accuracy"]["mean"] == pytest.approx(0.0)


def test_run_means_weight_each_window_by_its_steps():
    """Windows of 50 and 100 steps with means 1 and 4: the run's mean is (50 + 400) / 150 = 3,
    not 2.5; a nan window (no mixed group) is left out. Catches an unweighted mean."""
    study = _study({"grpo": [0.5, 0.5]})
    for s in study.seeds:
        study.runs["grpo"][s] = {
            "eval_step": [0.0, 50.0, 150.0, 200.0],
            "x": [np.nan, 1.0, 4.0, np.nan],
        }
    assert run_means(study, "grpo", "x").tolist() == [3.0, 3.0]


# ---------------------------------------------------------------------- the shipped files
def test_shipped_long_study_has_every_arm_at_the_same_seeds_with_its_one_setting_changed():
    """train_multi_300.json and its arms file: < 1 MB each, 300 steps evaluated every 50 with 64
    draws, every arm at the main arm's seeds, each arm differing from the main arm in the one
    setting its name says, and the CPU time of the runs recorded. Catches a file rebuilt with
    other settings than notebook 07 describes, or an arm merged from other seeds."""
    from tiny_model.study import SHIPPED_LONG, SHIPPED_LONG_ARMS, load_long

    assert SHIPPED_LONG.stat().st_size < 1_000_000
    assert SHIPPED_LONG_ARMS.stat().st_size < 1_000_000
    arms = load_long()
    main = arms["main"]
    assert main.methods == (
        "grpo", "pos_only", "thr_exploit", "thr_explore", "thr_only", "nll", "smaug", "nthr"
    )  # fmt: skip
    assert len(main.seeds) >= 3 and main.seeds == tuple(range(len(main.seeds)))
    c = main.config
    assert (c.steps, c.stop_after, c.eval_every, c.pass_samples) == (300, None, 50, 64)
    assert c.task == MULTI and c.thr_p == 0.5 and c.inner_steps == 1 and not c.thr_mask
    base = {k: v for k, v in c.to_dict().items() if k not in ("method", "seed")}
    changed = {
        "mu2": {"inner_steps": 2},
        "mu2_high": {"inner_steps": 2, "clip_eps_high": 0.28},
        "p0.1": {"thr_p": 0.1},
        "mask": {"thr_mask": True},
    }
    assert set(arms) == {"main", *changed}
    for name, diff in changed.items():
        assert arms[name].seeds == main.seeds, name
        theirs = {
            k: v for k, v in arms[name].config.to_dict().items() if k not in ("method", "seed")
        }
        assert {k: v for k, v in theirs.items() if base[k] != v} == diff, name
    cpu = json.loads(SHIPPED_LONG.read_text())["cpu"]
    assert set(cpu["arms"]) == set(arms)
    assert all(a["commands"] == len(main.seeds) for a in cpu["arms"].values())
    assert cpu["cpu_s"] > 0


def test_shipped_arms_intervals_are_those_the_runs_give():
    """The arms file's "paired" block (what the text's intervals are checked against) is what
    long_paired computes from the shipped runs. Catches a block left from an earlier merge."""
    from tiny_model.study import SHIPPED_LONG_ARMS, load_long

    stored = json.loads(SHIPPED_LONG_ARMS.read_text())["paired"]
    assert json.loads(json.dumps(long_paired(load_long()))) == stored


def test_run_long_times_each_command_once_and_merge_reads_the_times(tmp_path):
    """benchmarks/multi_study.py --long --run: a command whose metrics.json exists is skipped,
    each one run appends 'OUT TIME wall user sys' to the times file, and the merge's CPU reader
    sums them per arm (a 1-step run with 8 draws, to stay cheap). Catches a rerun of finished
    seeds (the study is resumable) and CPU time counted from the wrong process."""
    from conftest import benchmark_module

    ms = benchmark_module("multi_study")
    out = tmp_path / "main" / "s0"
    cmd = (
        "python -m tiny_model train --config multi --steps 1 --eval-every 1 --pass-samples 8 "
        f"--methods grpo --seeds 0 --out {out}"
    )
    times = tmp_path / "cpu.txt"
    ms._run_long([cmd], times)
    ms._run_long([cmd], times)  # done: skipped
    lines = times.read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{out} TIME ")
    wall, user, system = (float(x) for x in lines[0].split()[2:])
    assert user + system > 0.5 and wall > 0  # the child's CPU: a training process, not 0
    cost = ms._cpu(times, tmp_path, (0,))
    assert cost["arms"]["main"]["commands"] == 1
    assert cost["cpu_s"] == pytest.approx(user + system)


# ---------------------------------------------------------------- the cross-kernel bands
def _moved(arms: dict, seeds: tuple, delta: dict) -> dict:
    """The arms at ``seeds`` with every held-out figure of each row moved by delta[label]."""
    from tiny_model.study import long_rows, subset

    out = {a: TrainStudy.from_dict(json.loads(json.dumps(subset(st, seeds).to_dict()))) for a, st in arms.items()}  # fmt: skip
    for label, st, m in long_rows(out):
        for s in st.seeds:
            run = st.runs[m][s]
            for k in [k for k in run if k.startswith("heldout_")]:
                run[k] = [x + delta.get(label, 0.0) for x in run[k]]
    return out


def test_kernel_moves_are_each_rows_largest_over_the_settings_at_any_step_and_at_the_end():
    """Two reruns: one moves thr_explore by 0.004 at every evaluation, the other GRPO by 0.02 at
    seed 1 only. Each row keeps its own largest move over both settings; a row that did not move
    records 0 (not a floor, not another row's move). Catches moves pooled over rows or the
    smaller of two settings kept."""
    from tiny_model.study import load_long, long_kernels

    arms = load_long()
    k = long_kernels(
        arms,
        {
            "a": _moved(arms, (0, 1), {"thr_explore": 0.004}),
            "b": _moved(arms, (1,), {"grpo": 0.02}),
        },
    )
    g = "heldout_greedy_accuracy"
    assert k["moved"]["thr_explore"][g] == pytest.approx(0.004)
    assert k["moved_end"]["grpo"][g] == pytest.approx(0.02)
    assert k["moved"]["nll"][g] == 0.0
    assert k["reruns"]["a"]["seeds"] == [0, 1] and k["reruns"]["b"]["seeds"] == [1]
    sd = np.std([arms["main"].runs["nll"][s][g][-1] for s in arms["main"].seeds], ddof=1)
    assert k["spread"]["nll"][g] == pytest.approx(sd)


def test_a_rerun_of_shipped_seeds_agrees_and_one_row_far_off_is_caught():
    """The shipped runs themselves, taken as a rerun, agree (bit for bit, and no more outside
    the shipped prediction intervals than chance explains); moving one row (thr_explore) by 0.5 puts its 12 paired differences outside: too
    few of the 156 to exceed the overall count chance allows, but the row's own count does, so
    the rerun differs and the row is named. Catches a check that only counts overall."""
    from tiny_model.study import load_long, long_compare

    arms = load_long()
    agrees, text = long_compare(_moved(arms, (0, 1), {}), arms)
    assert agrees and "bit for bit" in text
    agrees, text = long_compare(_moved(arms, (0, 1), {"thr_explore": 0.5}), arms)
    assert not agrees
    assert "rows with more outside than chance explains: thr_explore" in text
    other = _moved(arms, (0,), {})
    other["main"].config = dataclasses.replace(other["main"].config, lr=1e-3)
    with pytest.raises(ValueError, match="settings differ"):
        long_compare(other, arms)


def test_prediction_interval_covers_a_new_draw_95_percent_of_the_time():
    """Draw 10 differences and one more from the same normal, 4,000 times: the 95 % prediction
    interval holds the new one about 95 % of the time (a confidence interval for the mean, the
    wrong tool, holds it about 60 % of the time). And binomial_upper is the 99 % quantile.
    Catches the interval's sqrt(1 + 1/n) or its t quantile left out."""
    from tiny_model.study import binomial_upper, prediction_interval

    rng = np.random.default_rng(3)
    hit = 0
    for _ in range(4000):
        d = rng.normal(size=11)
        lo, hi = prediction_interval(d[:10])
        hit += lo <= d[10] <= hi
    assert 0.935 <= hit / 4000 <= 0.965, hit / 4000
    assert binomial_upper(156) == 15  # P(X <= 15) >= 0.99 > P(X <= 14) for Binomial(156, 0.05)
    assert binomial_upper(12, q=0.999) == 4


def test_onto_shipped_refuses_a_seed_already_shipped(tmp_path):
    """--long --merge DIR --onto-shipped with a seed the shipped study holds stops with the
    reason and leaves the shipped files as they were. Catches a merge that overwrites shipped
    seeds with reruns."""
    from conftest import benchmark_module

    from tiny_model.study import SHIPPED_LONG, SHIPPED_LONG_ARMS, load_long

    ms = benchmark_module("multi_study")
    arms = load_long()
    for a, st in _moved(arms, (0,), {}).items():
        (tmp_path / a / "s0").mkdir(parents=True)
        (tmp_path / a / "s0" / "metrics.json").write_text(json.dumps(st.to_dict()))
        with (tmp_path / "cpu.txt").open("a") as f:
            f.write(f"{tmp_path / a / 's0'} TIME 1 1 0\n")
    before = SHIPPED_LONG.read_bytes(), SHIPPED_LONG_ARMS.read_bytes()
    with pytest.raises(SystemExit, match="appear in two studies"):
        ms._merge_long(tmp_path, tmp_path / "cpu.txt", onto_shipped=True)
    assert (SHIPPED_LONG.read_bytes(), SHIPPED_LONG_ARMS.read_bytes()) == before


def test_shipped_kernel_record_covers_every_row_and_its_verdict_is_its_own_numbers():
    """train_multi_300_kernels.json: every row of the shipped study has its moves and spread;
    each setting's "outside" list is exactly the recorded paired differences that lie outside the
    shipped prediction intervals, recomputed here from the shipped runs. Catches a record left
    from before the study gained seeds (its intervals would be other ones) or an edited verdict."""
    from tiny_model.study import (
        LONG_COLUMNS,
        SHIPPED_LONG_KERNELS,
        load_long,
        load_long_kernels,
        long_rows,
        prediction_interval,
    )

    assert SHIPPED_LONG_KERNELS.stat().st_size < 1_000_000
    arms = load_long()
    kern = load_long_kernels()
    labels = [label for label, _, _ in long_rows(arms)]
    assert sorted(kern["moved"]) == sorted(labels) == sorted(kern["spread"])
    assert set(kern["reruns"]) == {"default", "avx2"}
    main = arms["main"]
    for name, rec in kern["reruns"].items():
        outside = []
        for label, figs in rec["paired_end"].items():
            st, m = next((st, m) for lab, st, m in long_rows(arms) if lab == label)
            for k, per_seed in figs.items():
                d = [st.runs[m][s][k][-1] - main.runs["grpo"][s][k][-1] for s in main.seeds]
                lo, hi = prediction_interval(d)
                outside += [[label, k, int(s), v] for s, v in per_seed.items() if not lo <= v <= hi]
        assert len(rec["paired_end"]) == len(labels) - 1
        assert all(len(f) == len(LONG_COLUMNS) for f in rec["paired_end"].values())
        assert sorted(o[:4] for o in kern["agreement"][name]["outside"]) == sorted(outside), name
