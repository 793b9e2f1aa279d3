"""The multi-answer task (``--config multi``), THR's dominance on |A·s| and thr_only.

Cheap by design: task arithmetic on small tensors, the shipped checkpoint's recipe, one
group's weights, the diversity counts on hand-made draws and a 2-step CLI run.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from tiny_model import grpo, training
from tiny_model.__main__ import main
from tiny_model.seam import Functions
from tiny_model.task import DEFAULT, EOS, MULTI, SumTask
from tiny_model.warm import CHECKPOINT_MULTI, MULTI_WARMUP, WarmupConfig, load_warm


def _resp(task: SumTask, text: str) -> torch.Tensor:
    """'07 15.' -> its 5 token ids."""
    ids = [int(ch) for ch in text.replace(" ", "").rstrip(".")] + [EOS]
    return torch.tensor(ids)


@pytest.fixture(scope="module")
def fns():
    return Functions.from_solutions()


# ------------------------------------------------------------------------------ the task


def test_multi_task_accepts_every_pairs_partial_sum_and_only_with_the_right_total():
    """3+4+8 accepts 07 15., 11 15. and 12 15.; a wrong total or an unpaired partial sum is 0.
    Catches a verifier that still wants a+b only, or one that stops checking the total."""
    p = torch.tensor([[3, 4, 8]])
    good = torch.stack([_resp(MULTI, t) for t in ("07 15.", "11 15.", "12 15.")]).unsqueeze(0)
    bad = torch.stack([_resp(MULTI, t) for t in ("07 14.", "15 15.", "08 15.")]).unsqueeze(0)
    assert MULTI.rewards(p, good).tolist() == [[1.0, 1.0, 1.0]]
    assert MULTI.rewards(p, bad).tolist() == [[0.0, 0.0, 0.0]]
    # the course's task keeps its one answer
    assert DEFAULT.rewards(p, good).tolist() == [[1.0, 0.0, 0.0]]


def test_multi_task_counts_a_repeated_pair_sum_once():
    """3+3+5: a+c = b+c = 8, so two distinct answers, not three; over all 1000 problems 2.71
    distinct answers on average. Catches diversity metrics that count one path twice."""
    paths, distinct = MULTI.correct_paths(torch.tensor([[3, 3, 5], [1, 2, 3]]))
    assert distinct.tolist() == [[True, True, False], [True, True, True]]
    assert MULTI.format_response(paths[0, 1]) == "08 11."
    _, d = MULTI.correct_paths(MULTI.all_problems())
    assert float(d.sum(dim=1).float().mean()) == pytest.approx(2.71)
    with pytest.raises(ValueError, match="3 terms"):
        SumTask(terms=4, any_pair=True)


def test_course_recipe_and_config_dicts_do_not_gain_the_multi_flag():
    """Adding any_pair must not change the course's recipe (its key picks the shipped warm.pt)
    nor the course task's dict in studies. Catches a silent rebuild of the course's warm model."""
    assert "any_pair" not in WarmupConfig().to_dict()["task"]
    assert "any_pair" not in training.TrainConfig().to_dict()["task"]
    assert MULTI_WARMUP.to_dict()["task"]["any_pair"] is True
    assert training.TrainConfig.from_dict(training.TrainConfig().to_dict()) == (
        training.TrainConfig()
    )


def test_shipped_multi_checkpoint_is_small_and_is_the_recipes_warm_model():
    """warm_multi.pt < 1 MB, recorded with MULTI_WARMUP's recipe, and about 30 % of sampled
    answers right (the warm-up's target; it stopped at the first check >= 0.30). Catches a file
    rebuilt with another recipe, which load_warm would silently replace with a rebuild."""
    assert CHECKPOINT_MULTI.stat().st_size < 1_000_000
    blob = torch.load(CHECKPOINT_MULTI, weights_only=True)
    assert blob["recipe"] == MULTI_WARMUP.to_dict()
    assert 0.25 <= blob["info"]["sampled_accuracy"] <= 0.40
    a = load_warm("cpu", MULTI_WARMUP).state_dict()
    assert all(torch.equal(a[k], blob["state"][k]) for k in a)


# -------------------------------------------------------------------------------- metrics


def test_diversity_counts_distinct_right_answers_and_the_commonest_ones_share():
    """Draws 07 15. x2, 11 15. x1, a wrong one: 2 distinct, top share 2/3; a problem with no
    right draw counts 0 distinct and stays out of the share. Catches a share over all draws."""
    p = torch.tensor([[3, 4, 8], [1, 1, 1]])
    first = [_resp(MULTI, t) for t in ("07 15.", "07 15.", "11 15.", "07 14.")]
    second = [_resp(MULTI, t) for t in ("03 03.", "01 02.", "09 09.", "02 04.")]
    draws = torch.stack([torch.stack(first), torch.stack(second)])  # (2, 4, 5)
    d = training.diversity(p, draws, MULTI)
    assert d["heldout_distinct_correct"] == pytest.approx((2 + 0) / 2)
    assert d["heldout_top_path_share"] == pytest.approx(2 / 3)


def test_multi_answer_logp_is_the_log_of_the_summed_probability_of_the_distinct_answers(fns):
    """ln π(correct) on the multi task is logsumexp over the distinct correct answers (3+3+5's
    repeated one once). Catches the canonical a+b path alone, or a repeated path counted twice."""
    model = load_warm("cpu", MULTI_WARMUP)
    p = torch.tensor([[3, 3, 5], [3, 4, 8]])
    paths, distinct = MULTI.correct_paths(p)
    with torch.no_grad():
        logits, _ = grpo.response_forward(model, p, paths, task=MULTI)
    seq = grpo.grouped_logprobs(fns, logits, paths, torch.ones_like(paths, dtype=torch.bool))
    want = [float(torch.logsumexp(seq[0, :2], 0)), float(torch.logsumexp(seq[1], 0))]
    got = training.answer_logprob(fns, model, p, MULTI)
    assert got == pytest.approx(sum(want) / 2, rel=1e-6)
    # the course's task: its one answer's ln π, bit for bit (logsumexp of one value)
    course = load_warm()
    target = DEFAULT.correct_responses(p).unsqueeze(1)  # (2, 1, 5)
    with torch.no_grad():
        logits, _ = grpo.response_forward(course, p, target)
    one = grpo.grouped_logprobs(fns, logits, target, torch.ones_like(target, dtype=torch.bool))
    assert training.answer_logprob(fns, course, p, DEFAULT) == float(one.mean())


# --------------------------------------------------------------------- THR's dominance


def _one_batch(fns, seed=0):
    model = load_warm("cpu", MULTI_WARMUP)
    gen = torch.Generator().manual_seed(seed)
    problems = MULTI.split()[0][:12]
    groups = grpo.sample_groups(model, problems, 8, gen, task=MULTI)
    adv = torch.as_tensor(fns.group_advantages(groups.rewards))
    with torch.no_grad():
        logits, hidden = grpo.response_forward(model, problems, groups.responses, task=MULTI)
    return groups, adv, logits, hidden


def test_thr_dominance_is_on_the_absolute_thr_and_thr_only_masks_the_rest(fns):
    """thr_exploit's reweighted tokens are those with |THR| = |A·s| > tau (THR is what the
    weights' `scores` hold); thr_only gives exactly those weight 1 and every other token of a
    mixed group 0. Catches dominance still taken on |s|, and a thr_only that keeps the rest."""
    groups, adv, logits, hidden = _one_batch(fns)
    up = grpo.token_weights("thr_exploit", fns, groups, adv, logits, hidden, thr_p=0.5)
    only = grpo.token_weights("thr_only", fns, groups, adv, logits, hidden)
    score = grpo.token_weights(
        "thr_exploit", fns, groups, adv, logits, hidden, thr_p=0.5, thr_dominance="score"
    )
    mixed = groups.mixed
    assert int(mixed.sum()) >= 3
    checked = 0
    for i in mixed.nonzero().flatten().tolist():
        valid = groups.mask[i]
        thr, tau = up.scores[i][valid], float(up.tau[i])
        dominant = thr.abs() > tau
        w = up.weights[i][valid]
        assert torch.equal(w != 1, dominant & (thr != 0))
        assert torch.equal(only.weights[i][valid], dominant.float())
        checked += int(dominant.sum())
    assert checked > 0
    assert not torch.equal(up.weights, score.weights)  # the two readings differ on this batch


def test_train_cli_runs_the_multi_config_with_pass_at_k_and_the_diversity_metrics(tmp_path):
    """`train --config multi` logs Pass@K up to its draws and the two diversity metrics, and
    thr_only runs (1 step, 2 seeds, a paired interval against GRPO; 16 draws, not the study's
    64, to stay cheap). Catches the multi config losing its metrics."""
    argv = ["train", "--config", "multi", "--methods", "grpo,thr_only", "--seeds", "0-1"]
    argv += ["--steps", "1", "--eval-every", "1", "--pass-samples", "16", "--out", str(tmp_path)]
    assert main(argv) == 0
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    run = metrics["runs"]["thr_only"]["0"]
    assert "heldout_pass@32" not in run
    for key in ("heldout_pass@16", *training.DIVERSITY):
        assert len(run[key]) == 2, key
    assert 1.0 <= run["heldout_distinct_correct"][0] <= 3.0
    assert metrics["config"]["task"]["any_pair"] is True
    assert metrics["paired"]["thr_only-grpo"]["heldout_top_path_share"]["n"] == 2


def test_merged_per_seed_studies_are_the_study_one_process_makes(fns):
    """benchmarks/multi_study.py builds the shipped study from one process per seed: the merge
    must equal run_study over all seeds (1 step, 8 draws, to stay cheap). Catches a shared
    state between seeds (a draw or a cached model) that would make the split study differ."""
    from tiny_model.study import merge_studies, run_study

    settings = dict(steps=1, eval_every=1, pass_samples=8, warm=MULTI_WARMUP)
    whole = run_study(fns, ("grpo", "thr_only"), (0, 1), **settings)
    parts = [run_study(fns, ("grpo", "thr_only"), (s,), **settings) for s in (1, 0)]
    merged = merge_studies(parts)
    assert json.dumps(merged.to_dict(), sort_keys=True) == json.dumps(
        whole.to_dict(), sort_keys=True
    )
    with pytest.raises(ValueError, match="two studies"):
        merge_studies([parts[0], parts[0]])


# ------------------------------------------------------------------ another CPU's kernels
_MULTI_SLICE = """
import json, torch
import tests.test_tiny_model_multi as t
print(json.dumps({"capability": torch.backends.cpu.get_cpu_capability(), "summary": t._slice()}))
"""


def _slice(method: str = "thr_explore", steps: int = 5) -> dict[str, list[float]]:
    """A short slice of the multi-answer study's schedule (seed 0, 8 Pass@K draws)."""
    from tiny_model.study import run_summary
    from tiny_model.training import TrainConfig, train

    fns = Functions.from_solutions()
    config = TrainConfig(
        method=method, seed=0, steps=150, stop_after=steps, eval_every=steps, pass_samples=8,
        task=MULTI,
    )  # fmt: skip
    from tiny_model.harness import deterministic

    with deterministic(threads=1):
        return run_summary(train(fns, load_warm("cpu", MULTI_WARMUP).train(), config))


def test_thr_explore_slice_under_default_kernels_stays_within_its_measured_band():
    """thr_explore is the method that did not reproduce across CPUs (a token near the dominance
    threshold flips with the last bit). Rerun its first steps on the multi-answer task under
    ATEN_CPU_CAPABILITY=default in a fresh process: do its continuous metrics stay within
    CROSS_CPU_RTOL (its 10-step slice moved at most 1.8e-5 relative across default, avx2 and
    avx512 kernels, benchmarks/cross_kernel_spread.py --parts methods), and its sample counts
    within CROSS_CPU_FLIPS draws? Catches a band set narrower than the kernels move, and a THR
    computation that depends on more than rounding (it would move far more)."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    from tiny_model.study import CROSS_CPU_FLIPS, CROSS_CPU_RTOL

    if torch.backends.cpu.get_cpu_capability().lower() == "default":
        pytest.skip("torch runs its default kernels here: no second capability to compare")
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "default"}
    proc = subprocess.run(
        [sys.executable, "-c", _MULTI_SLICE], cwd=ROOT, env=env, text=True, capture_output=True,
        timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, f"the slice under default kernels failed:\n{proc.stderr[-3000:]}"
    other = json.loads(proc.stdout.strip().splitlines()[-1])
    assert other["capability"].lower() == "default"
    here = _slice()
    rtol = CROSS_CPU_RTOL
    counts = {"heldout_accuracy": 800, "reward_mean": 128 * 5, "zero_adv_frac": 16 * 5}
    bad = []
    for key, per in counts.items():
        for a, b in zip(other["summary"][key], here[key]):
            if not (np.isnan(a) and np.isnan(b)) and abs(a - b) * per > CROSS_CPU_FLIPS + 1e-9:
                bad.append(f"{key}: {a!r} against {b!r}")
    for key in ("kl_ref", "correct_logp_change", "correct_logp", "heldout_answer_logp"):
        for a, b in zip(other["summary"][key], here[key]):
            if not (np.isnan(a) and np.isnan(b)) and abs(a - b) > rtol * abs(b):
                bad.append(f"{key}: {a!r} against {b!r} (band {rtol:g} relative)")
    assert not bad, "\n".join(bad)


# ------------------------------------------------------------------- the shipped study
def test_shipped_multi_study_is_small_and_holds_ten_seeds_of_every_method_it_reports():
    """train_multi.json: < 1 MB, 5 methods x 10 seeds on the multi-answer task with dominance on
    |THR|, and GRPO narrowing onto fewer right answers than the warm model (what notebook 07
    discusses). Catches a file regenerated with other settings than the notebook describes."""
    from tiny_model.study import SHIPPED_MULTI, load_shipped

    assert SHIPPED_MULTI.stat().st_size < 1_000_000
    study = load_shipped(SHIPPED_MULTI)
    assert study.methods == ("grpo", "pos_only", "thr_exploit", "thr_explore", "thr_only")
    assert study.seeds == tuple(range(10))
    c = study.config
    assert c.task == MULTI and c.thr_dominance == "thr" and c.stop_after == 40
    assert c.pass_samples == 32 and c.inner_steps == 1
    grpo_distinct = study.final("heldout_distinct_correct")["grpo"].mean()
    assert grpo_distinct < study.start("heldout_distinct_correct")


def test_live_run_band_tells_a_kernel_change_from_another_method():
    """Notebook 07's live run (thr_explore, seed 0, step 40) compares within LIVE_TOLERANCE_07:
    the largest move measured under other kernels (+0.0075 accuracy, +0.0107 nats) agrees, and
    plain GRPO at the same seed (what weights that change nothing would give) differs. Catches a
    band so wide it cannot see a wrong method, or so narrow that another CPU fails it."""
    from tiny_model.study import (
        LIVE_TOLERANCE_07,
        SHIPPED_MULTI,
        compare_with_shipped,
        load_shipped,
    )

    study = load_shipped(SHIPPED_MULTI)
    shipped, grpo_run = study.runs["thr_explore"][0], study.runs["grpo"][0]
    moved = {k: list(v) for k, v in shipped.items()}
    moved["heldout_accuracy"][-1] += 0.0075
    moved["heldout_answer_logp"][-1] += 0.0107
    kw = dict(baseline=grpo_run, name="thr_explore", tolerance=LIVE_TOLERANCE_07)
    agrees, text = compare_with_shipped(moved, shipped, **kw)
    assert agrees, text
    agrees, text = compare_with_shipped(grpo_run, shipped, **kw)
    assert not agrees and "Differs" in text


# ------------------------------------------- the shipped study's bands across CPU kernels
QUOTED = (
    "heldout_accuracy",
    "heldout_answer_logp",
    "heldout_greedy_accuracy",
    "heldout_pass@1",
    "heldout_pass@4",
    "heldout_pass@16",
    "heldout_pass@32",
    "heldout_distinct_correct",
    "heldout_top_path_share",
)
"""The figures docs/tiny-model.md and notebook 07 quote from the multi-answer study."""


@pytest.fixture(scope="module")
def multi_bands():
    from tiny_model.study import SHIPPED_MULTI, load_bands, load_shipped

    return load_shipped(SHIPPED_MULTI), load_bands()


def test_every_method_of_the_shipped_multi_study_has_a_band_for_every_quoted_figure(multi_bands):
    """train_multi_bands.json gives every method of train_multi.json (each run, the mean over
    seeds, the paired difference with GRPO) and the warm model a band for every held-out figure,
    each at least BAND_MARGIN times what the reruns moved and at least its floor, measured from
    reruns of all ten seeds under two kernel settings. Catches a method added to the study without
    a band (compare_study would then refuse it), a band narrower than the move it was measured
    from, and bands measured on fewer seeds than the study quotes."""
    from tiny_model.study import MULTI_BANDS, _floor, band_metrics, missing_bands

    shipped, bands = multi_bands
    assert MULTI_BANDS.stat().st_size < 1_000_000
    assert missing_bands(shipped, bands) == []
    assert set(QUOTED) <= set(band_metrics(shipped)) == set(bands["metrics"])
    assert len(bands["reruns"]) >= 2
    for name, rec in bands["reruns"].items():
        assert tuple(rec["seeds"]) == shipped.seeds, f"{name} reran seeds {rec['seeds']}"
    for part in ("runs", "means", "paired"):
        for m, figs in bands["measured"][part].items():
            for k, v in figs.items():
                band = bands[part][m][k]
                assert band >= bands["margin"] * v - 1e-15 and band >= _floor(k, shipped), (
                    f"{part} {m} {k}: band {band} against measured {v}"
                )


def test_recorded_reruns_agree_and_a_figure_moved_past_its_band_is_named(multi_bands):
    """The reruns the bands were measured from agree with the shipped study under compare_study
    (every method, every figure, runs, means and paired intervals). Then, for each method in
    turn, one seed's final figure moved by 1.5 times its band must make the comparison fail and
    name that method; a band file lacking a method must be refused, not skipped. Catches a
    comparison that leaves a method or a figure out, and bands the recorded reruns break."""
    import copy

    from tiny_model.study import compare_study, recorded_rerun

    shipped, bands = multi_bands
    for name in bands["reruns"]:
        agrees, text = compare_study(recorded_rerun(bands, name, shipped), shipped, bands)
        assert agrees, f"{name}:\n{text}"
    rerun = recorded_rerun(bands, next(iter(bands["reruns"])), shipped)
    for m in shipped.methods:
        for k in ("heldout_greedy_accuracy", "heldout_answer_logp"):
            moved = copy.deepcopy(rerun)
            moved.runs[m][shipped.seeds[0]][k][-1] += 1.5 * bands["runs"][m][k]
            agrees, text = compare_study(moved, shipped, bands)
            assert not agrees and f"{m} " in text.split("Differs")[-1], text
    for m in shipped.methods:
        cut = copy.deepcopy(bands)
        del cut["runs"][m]
        with pytest.raises(ValueError, match=m):
            compare_study(rerun, shipped, cut)


def test_notebook_07s_rerun_table_shows_every_method_and_the_conclusion_a_band_could_flip(
    multi_bands,
):
    """Notebook 07 prints bands_table under the study: a row per method (and the warm model),
    at most 88 characters a line, and every interval that excludes 0 by less than its band
    or includes it by less (fragile_conclusions), which its text discusses. Catches a table
    that drops a method or hides a conclusion a rerun on another CPU could flip."""
    from tiny_model.study import bands_table, fragile_conclusions

    shipped, bands = multi_bands
    text = bands_table(shipped, bands)
    assert max(len(line) for line in text.splitlines()) <= 88, text
    rows = {line.split()[0] for line in text.splitlines() if line[:1].isalpha()}
    assert set(shipped.methods) | {"warm"} <= rows, text
    for f in fragile_conclusions(shipped, bands):
        assert f in text
    assert any("pos_only - grpo Pass@1" in f for f in fragile_conclusions(shipped, bands)), (
        "notebook 07 and docs/tiny-model.md discuss pos_only's Pass@1 as a conclusion a rerun "
        "may flip: update them if the bands no longer say so"
    )


def test_compare_study_refuses_a_rerun_with_other_settings(multi_bands):
    """A rerun made with other settings (here 50 steps instead of 40) is not the shipped study's
    and must be refused with the setting named, not compared figure by figure. Catches a check
    that passes a study of another length because its numbers happen to be close."""
    import dataclasses

    from tiny_model.study import compare_study

    shipped, bands = multi_bands
    other = dataclasses.replace(shipped, config=dataclasses.replace(shipped.config, stop_after=50))
    with pytest.raises(ValueError, match="stop_after"):
        compare_study(other, shipped, bands)


def test_live_run_band_covers_what_thr_explore_moved_at_every_seed(multi_bands):
    """Notebook 07's live run (thr_explore, seed 0) is compared within LIVE_TOLERANCE_07. The
    reruns of all ten seeds under other kernels measure how far thr_explore's held-out accuracy
    and ln π(correct) move: the live band must hold the largest of them. Catches a live band
    that another seed (or another CPU behaving like one) would already break."""
    from tiny_model.study import LIVE_TOLERANCE_07

    _, bands = multi_bands
    moved = bands["measured"]["runs"]["thr_explore"]
    (tol,) = LIVE_TOLERANCE_07.values()
    for k, band in tol.items():
        assert moved[k] <= band, f"{k}: thr_explore moved {moved[k]} across kernels, band {band}"


def test_compare_shipped_flag_refuses_the_course_task_and_a_shorter_run(tmp_path, capsys):
    """--compare-shipped compares with the multi-answer study: with the course task it is an
    error at once, before any training; a multi-answer run with other settings (1 step of the
    150-step schedule, not 40) ends with exit status 2 and the setting named, not with a
    verdict. Catches a flag that compares the wrong study, or passes a run of another length."""
    with pytest.raises(SystemExit):
        main(["train", "--config", "course", "--compare-shipped", "--steps", "1"])
    argv = ["train", "--config", "multi", "--methods", "grpo", "--seeds", "0", "--steps", "150"]
    argv += ["--stop-after", "1", "--eval-every", "1", "--pass-samples", "8"]
    assert main(argv + ["--out", str(tmp_path), "--compare-shipped"]) == 2
    err = capsys.readouterr().err
    assert "cannot compare" in err and "stop_after" in err, err
