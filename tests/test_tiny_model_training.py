"""Training that learns: the bug hunt, the split, the schedule, the shipped study.

The question was whether GRPO training's failure to learn (sampled accuracy stuck
near 0.45, the correct answers' likelihood falling, lr 1e-3 collapsing) was a
bug or tuning. The first four tests are the bug hunt: each would catch one
candidate bug (advantage sign, sampling vs scoring, masking, the KL term), and
none fires. The cause was the warm model (see test_tiny_model.py's
first-step-damage tests) and the learning-rate schedule. The rest check the
held-out split, the schedule, and that the shipped multi-seed study is what
the code produces and shows what the issue asks.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from tiny_model import experiment, grpo, reference, task, training
from tiny_model.seam import Functions
from tiny_model.study import (
    CROSS_CPU_FLIPS,
    CROSS_CPU_RTOL,
    LIVE_TOLERANCE,
    SHIPPED,
    compare_with_shipped,
    load_shipped,
    run_study,
    run_summary,
)
from tiny_model.training import TrainConfig


@pytest.fixture(scope="module")
def fns() -> Functions:
    return Functions.from_solutions()


@pytest.fixture(scope="module")
def shipped():
    return load_shipped()


def _flat(grads) -> torch.Tensor:
    return torch.cat([g.reshape(-1) for g in grads])


# ----------------------------------------------------------------------- the bug hunt


def test_grpo_update_points_up_the_expected_reward(fns):
    """Advantage sign / normalisation: does −∇(GRPO loss) align with ∇ E_x[P(correct | x)]?

    E_x P(correct | x) is computed exactly (one correct scratchpad per problem);
    the GRPO gradient comes from 200 problems x 8 on-policy samples. A flipped
    advantage sign would give the negative cosine.
    """
    with experiment.deterministic(threads=1):
        model = experiment.load_warm()
        params = list(model.parameters())
        problems = task.train_problems()
        target = task.correct_responses(problems).unsqueeze(1)  # (800, 1, 5)
        logits, _ = grpo.response_forward(model, problems, target)
        reward = grpo.token_logprobs(logits, target).sum(-1).exp().mean()  # E_x P(C|x)
        g_reward = _flat(torch.autograd.grad(reward, params))
        groups = grpo.sample_groups(model, problems[:200], 8, torch.Generator().manual_seed(0))
        adv = fns.group_advantages(groups.rewards)  # (200, 8)
        logits, _ = grpo.response_forward(model, groups.problems, groups.responses)
        logp = grpo.token_logprobs(logits, groups.responses).flatten(0, 1)  # (1600, 5)
        tok_adv = adv.unsqueeze(-1).expand(-1, -1, 5).flatten(0, 1)  # (1600, 5)
        loss, _ = reference.grpo_loss(logp, logp.detach(), tok_adv, groups.mask.flatten(0, 1))
        ascent = -_flat(torch.autograd.grad(loss, params))
    cos = float(torch.nn.functional.cosine_similarity(ascent, g_reward, dim=0))
    assert cos > 0.5, cos


def test_sampler_draws_from_the_distribution_the_loss_scores():
    """Sampling vs scoring: are sampled responses as frequent as exp(ln π) says (T = 1, positions)?"""
    model = experiment.load_warm()
    problem = torch.tensor([[7, 5, 6]])
    n = 4000
    with torch.no_grad():
        groups = grpo.sample_groups(model, problem, n, torch.Generator().manual_seed(0))
        responses, counts = torch.unique(groups.responses[0], dim=0, return_counts=True)
        top = counts.argsort(descending=True)[:5]
        logits, _ = grpo.response_forward(model, problem, responses[top].unsqueeze(0))
        mask = task.response_mask(responses[top])  # (5, 5)
        logp = (grpo.token_logprobs(logits, responses[top].unsqueeze(0))[0] * mask).sum(-1)
    p = logp.exp().double()  # (5,)
    freq = counts[top].double() / n
    se = (p * (1 - p) / n).sqrt()
    assert torch.all((freq - p).abs() < 4 * se + 1e-3), (freq, p)
    assert abs(float(groups.rewards.mean()) - float(p.max())) < 0.1  # the mode is the answer


def test_tokens_after_eos_get_no_gradient():
    """Masking: does a response cut by an early EOS push nothing at the positions after it?"""
    model = experiment.load_warm()
    problems = torch.tensor([[3, 4, 8]])
    responses = torch.tensor([[[0, task.EOS, 1, 5, task.EOS], [0, 7, 1, 5, task.EOS]]])  # (1, 2, 5)
    mask = task.response_mask(responses)  # (1, 2, 5)
    logits, _ = grpo.response_forward(model, problems, responses)
    logits.retain_grad()
    logp = grpo.token_logprobs(logits, responses).flatten(0, 1)  # (2, 5)
    adv = torch.tensor([[-1.0] * 5, [1.0] * 5])
    loss, _ = reference.grpo_loss(logp, logp.detach(), adv, mask.flatten(0, 1))
    loss.backward()
    grad = logits.grad[0]  # (2, 5, V)
    assert torch.all(grad[0, 2:] == 0) and torch.all(grad[0, :2].abs().sum(-1) > 0)
    assert torch.all(grad[1].abs().sum(-1) > 0)


def test_kl_term_pulls_nothing_at_the_reference_and_back_towards_it_elsewhere():
    """The KL term: zero gradient at π = ref; away from it, the gradient points back to ref."""
    ref = torch.tensor([[-1.0, -2.0]])
    for logp0, sign in ((ref.clone(), 0), (ref + 0.5, 1)):
        logp = logp0.clone().requires_grad_(True)
        mask = torch.ones(1, 2, dtype=torch.bool)
        loss, _ = reference.grpo_loss(
            logp, logp.detach(), torch.zeros(1, 2), mask, kl_coef=0.1, ref_logp=ref
        )
        loss.backward()
        if sign == 0:
            assert torch.all(logp.grad == 0)
        else:  # logp above ref: gradient descent lowers it
            assert torch.all(logp.grad > 0)


# ---------------------------------------------------------------- split and schedule


def test_training_samples_only_training_problems_and_evaluates_only_heldout(fns, monkeypatch):
    """Do training batches come from the 800 and evaluations from the 200 held-out problems?"""
    seen: dict[int, list] = {8: [], 4: []}
    real = grpo.sample_groups

    def spy(model, problems, group_size, *a, **k):
        seen[group_size].extend(problems.tolist())
        return real(model, problems, group_size, *a, **k)

    monkeypatch.setattr(training.grpo, "sample_groups", spy)
    with experiment.deterministic(threads=1):
        experiment.train(fns, "grpo", steps=3, seed=0, eval_every=2)
    train = {tuple(p) for p in task.train_problems().tolist()}
    held = {tuple(p) for p in task.heldout_problems().tolist()}
    assert seen[8] and {tuple(p) for p in seen[8]} <= train
    assert len(seen[4]) == 3 * 200 * 1 and {tuple(p) for p in seen[4]} == held  # steps 0, 2, 3


def test_learning_rate_ramps_up_then_decays_to_zero():
    """Does lr rise linearly over lr_warmup steps, then follow a cosine to 0 at the last step?"""
    c = TrainConfig(steps=100, lr_warmup=10)
    f = [c.lr_factor(s) for s in range(100)]
    assert f[0] == pytest.approx(0.1 * 0.5 * (1 + np.cos(0))) and f[9] < 1
    assert max(f) == pytest.approx(f[9]) and f[-1] < 0.01
    assert all(a >= b for a, b in zip(f[9:], f[10:]))
    assert TrainConfig(steps=100, lr_warmup=10, lr_schedule="constant").lr_factor(50) == 1.0
    with pytest.raises(ValueError, match="schedule"):
        TrainConfig(lr_schedule="linear").check()


# ---------------------------------------------------------------- the shipped study


# Discrete metrics count samples: heldout_accuracy 200 problems x 4 samples, reward_mean and
# zero_adv_frac 16 prompts x 8 samples per step, averaged over a window of steps.
_SAMPLES = {"heldout_accuracy": 800, "reward_mean": 128, "zero_adv_frac": 16, "selected_frac": 128}


def _slice(fns, shipped, stop_after: int) -> dict[str, list[float]]:
    """GRPO at seed 0 with the shipped study's settings, stopped after ``stop_after`` steps."""
    config = shipped.config
    settings = ("lr", "lr_warmup", "lr_schedule", "prompts_per_step")
    with experiment.deterministic(threads=1):
        result = experiment.train(
            fns,
            "grpo",
            steps=config.steps,
            seed=0,
            stop_after=stop_after,
            eval_every=stop_after,
            **{f: getattr(config, f) for f in settings},
        )
    return run_summary(result)


def _beyond_cross_cpu_tolerance(got, want, window: int) -> list[str]:
    """The metrics of two run summaries that differ by more than another CPU's kernels explain."""
    bad = []
    for key in want:
        for a, b in zip(got[key], want[key]):
            if np.isnan(a) and np.isnan(b):
                continue
            per = _SAMPLES.get(key)
            if per is None:  # continuous: a relative tolerance
                ok = abs(a - b) <= CROSS_CPU_RTOL * abs(b)
            else:  # a count of samples: a few draws may land in another bin
                unit = 1 / per / (1 if key == "heldout_accuracy" else window)
                ok = abs(a - b) <= CROSS_CPU_FLIPS * unit + 1e-12
            if not ok:
                bad.append(f"{key}: {a!r} against {b!r}")
    return bad


def test_training_slice_agrees_with_the_shipped_study_within_what_another_cpu_moves(fns, shipped):
    """Do the first 50 steps of GRPO at seed 0, rerun now, land on the shipped file's first window?

    The shipped file was built on another machine: CPU kernels round differently, so the
    continuous metrics may differ by CROSS_CPU_RTOL and the sample counts by CROSS_CPU_FLIPS
    draws (measured by benchmarks/cross_kernel_spread.py). A change to the training code moves
    them by far more.
    """
    k = shipped.config.eval_every
    got = _slice(fns, shipped, k)
    want = {key: values[:2] for key, values in shipped.runs["grpo"][0].items()}
    # the shipped file predates notebook 07's metrics (greedy accuracy, Pass@K, correct_logp):
    # every metric it holds must be reproduced; the new ones are checked in test_tiny_model_beyond
    assert want.keys() <= got.keys(), sorted(want.keys() - got.keys())
    assert not _beyond_cross_cpu_tolerance(got, want, window=k)
    assert got["heldout_accuracy"][1] > got["heldout_accuracy"][0]  # learning from step one


_SLICE_IN_A_SUBPROCESS = """
import json, torch
from tiny_model.seam import Functions
from tiny_model.study import load_shipped
import tests.test_tiny_model_training as t
summary = t._slice(Functions.from_solutions(), load_shipped(), {steps})
print(json.dumps({{"capability": torch.backends.cpu.get_cpu_capability(), "summary": summary}}))
"""
_SHORT = 5  # steps of the slice run under each capability


@pytest.fixture(scope="module")
def capability_slices(fns, shipped):
    """The short slice in this process, and in fresh processes under this CPU's own capability
    and under ``default`` (run side by side): capability -> (reported capability, summary)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    own = torch.backends.cpu.get_cpu_capability().lower()
    procs = {}
    for cap in dict.fromkeys((own, "default")):
        env = {**os.environ, "ATEN_CPU_CAPABILITY": cap}
        code = _SLICE_IN_A_SUBPROCESS.format(steps=_SHORT)
        procs[cap] = subprocess.Popen(
            [sys.executable, "-c", code], cwd=root, env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
    here = _slice(fns, shipped, _SHORT)
    out = {}
    for cap, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=900)
        assert proc.returncode == 0, (
            f"the slice under ATEN_CPU_CAPABILITY={cap} failed:\n{stderr[-3000:]}"
        )
        d = json.loads(stdout.strip().splitlines()[-1])
        out[cap] = (d["capability"].lower(), d["summary"])
    return own, here, out


def test_training_repeats_bit_for_bit_in_a_fresh_process_on_this_machine(capability_slices):
    """Same command, same CPU kernels, another process: are the metrics the same bits?"""
    own, here, out = capability_slices
    reported, summary = out[own]
    assert reported == own
    assert json.dumps(summary, sort_keys=True) == json.dumps(here, sort_keys=True)


def test_another_cpu_capability_moves_the_slice_less_than_the_shipped_tolerance(capability_slices):
    """Keeps CROSS_CPU_RTOL honest: rerun under ATEN_CPU_CAPABILITY=default (the kernels another
    CPU may use), do the metrics stay within the tolerance the shipped comparison grants?"""
    own, here, out = capability_slices
    if own == "default":
        pytest.skip(
            "torch runs its default kernels here (this CPU, or ATEN_CPU_CAPABILITY=default is "
            "set): no second capability to compare"
        )
    reported, summary = out["default"]
    assert reported == "default", f"ATEN_CPU_CAPABILITY=default was not honoured: {reported}"
    assert not _beyond_cross_cpu_tolerance(summary, here, window=_SHORT)


def _live_like(run, **nudges) -> dict[str, list[float]]:
    """A copy of a shipped run as notebook 06's live run would hold it, some values nudged."""
    live = {k: list(v) for k, v in run.items()}
    for key, (index, by) in nudges.items():
        live[key][index] += by
    return live


def test_live_run_off_in_the_last_float32_bit_is_told_it_matches_the_shipped_run(shipped):
    """The reference functions on another CPU differ from the shipped run in
    the last float32 bit (and a draw may land in another bin by step 100). Does notebook 06's
    comparison say they agree, with the differences in numbers, instead of "no"?"""
    nthr = shipped.runs["nthr"][0]
    i50, i100 = nthr["eval_step"].index(50), nthr["eval_step"].index(100)
    ulp = float(np.spacing(np.float32(nthr["heldout_answer_logp"][i50])))
    live = _live_like(
        nthr,
        heldout_answer_logp=(i50, ulp),
        heldout_accuracy=(i100, 1 / 800),  # one of the 800 held-out draws
    )
    agrees, text = compare_with_shipped(live, nthr, baseline=shipped.runs["grpo"][0])
    assert agrees, text
    assert "Agrees" in text and "step  50" in text and "step 100" in text
    assert "+1.2e-03" in text  # the accuracy difference at step 100, in numbers


def test_live_run_of_other_functions_is_told_it_differs_and_by_how_much(shipped):
    """Plain GRPO in place of NTHR (what NTHR weights that change nothing would give): does the
    comparison say it differs, by how many times the CPU band, and show the scale?"""
    nthr, grpo_run = shipped.runs["nthr"][0], shipped.runs["grpo"][0]
    agrees, text = compare_with_shipped(grpo_run, nthr, baseline=grpo_run)
    assert not agrees
    assert "Differs" in text and "-5.3e-02" in text  # accuracy at step 50, GRPO against NTHR
    # the step-50 band alone tells them apart: rounding moves far less than a real difference
    d50 = abs(grpo_run["heldout_accuracy"][1] - nthr["heldout_accuracy"][1])
    assert LIVE_TOLERANCE[50]["heldout_accuracy"] * 5 < d50
    with pytest.raises(ValueError, match="share no evaluation"):
        compare_with_shipped({"eval_step": [0.0, 25.0]}, nthr)


def test_notebook_06_states_the_live_runs_tolerance_bands():
    """Does notebook 06's text give the bands compare_with_shipped uses (no stale numbers)?"""
    from conftest import ROOT

    nb = json.loads((ROOT / "solutions" / "06_nthr" / "06_nthr.ipynb").read_text())
    text = " ".join("".join(c["source"]) for c in nb["cells"] if c.get("id") == "md-live-run")
    text = " ".join(text.split())
    for step, bands in LIVE_TOLERANCE.items():
        assert f"step {step}" in text, step
        for value in bands.values():
            assert f"±{value:g}" in text, (step, value)


def test_shipped_study_compares_four_methods_over_five_seeds(shipped):
    """Is the shipped study 4 methods x 5 seeds, small, with every run evaluated at the same steps?"""
    assert set(shipped.methods) == {"grpo", "pos_only", "nthr", "random"}
    assert shipped.seeds == (0, 1, 2, 3, 4)
    assert SHIPPED.stat().st_size < 300_000
    steps = shipped.runs["grpo"][0]["eval_step"]
    assert steps[0] == 0 and steps[-1] == shipped.config.steps
    for m in shipped.methods:
        for s in shipped.seeds:
            assert shipped.runs[m][s]["eval_step"] == steps
    d = json.loads(SHIPPED.read_text())
    assert "nthr-grpo" in d["paired"]


def test_shipped_grpo_reaches_090_heldout_accuracy_from_a_mid_competence_start(shipped):
    """Does GRPO lift held-out sampled accuracy from about 0.4 to at least 0.9 at the end?"""
    start = shipped.start()
    final = shipped.final()["grpo"]
    assert start < 0.5, start
    assert final.mean() >= 0.9, final
    assert final.min() >= 0.85, final
    # the correct responses' likelihood rises too
    assert shipped.final("heldout_answer_logp")["grpo"].mean() > shipped.start(
        "heldout_answer_logp"
    )


def test_shipped_study_reports_the_paired_nthr_minus_grpo_result(shipped):
    """Is NTHR − GRPO (final accuracy and ln π(correct)) given as a paired interval over seeds?"""
    text = shipped.table()
    for metric in ("heldout_accuracy", "heldout_answer_logp"):
        p = shipped.paired("nthr", "grpo", metric)
        assert p["n"] == 5 and p["ci_low"] <= p["mean"] <= p["ci_high"]
    assert "nthr-grpo" in text and "accuracy" in text and "ln π(correct)" in text


@pytest.mark.parametrize("methods, seeds", [(["grpo"], [0, 0]), (["grpo", "grpo"], [0])])
def test_run_study_refuses_a_repeated_seed_or_method(fns, methods, seeds):
    """A seed or method given twice would train twice, keep the last run and report a paired
    interval over copies of one run: refused by run_study itself, not only by the CLI."""
    with pytest.raises(ValueError, match="each method and seed once"):
        run_study(fns, methods, seeds)


def test_a_shared_step0_evaluation_is_the_one_the_run_would_make(fns):
    """run_study evaluates each seed's warm model once and hands that step-0 evaluation to the
    seed's other methods: is a run given it identical, bit for bit, to one that evaluates
    itself, and is a history without a step-0 evaluation refused? Catches a shared evaluation
    that depended on the method (or on a draw the method's run consumed first)."""
    # a held-out set of 20 problems and few draws: the test is about equality, not accuracy
    settings = dict(steps=1, eval_every=1, eval_samples=2, pass_samples=8, prompts_per_step=4)
    settings["task"] = task.SumTask(n_heldout=20)
    from tiny_model.warm import load_warm

    def run(method, step0=None):
        with experiment.deterministic(threads=1):
            model = load_warm().train()
            return training.train(
                fns, model, TrainConfig(method=method, seed=3, **settings), step0=step0
            )

    first = run("grpo")
    step0 = training.step0_evaluation(first.history)
    for method in ("nthr", "thr_exploit"):
        # compared as JSON: a share with nothing to count is nan, and nan != nan
        shared, own = run(method, step0).history, run(method).history
        assert json.dumps(shared, sort_keys=True) == json.dumps(own, sort_keys=True), method
    with pytest.raises(ValueError, match="step 0"):
        training.step0_evaluation({"eval_step": [50.0]})
    with pytest.raises(ValueError, match="eval_step 0"):
        run("grpo", {**step0, "eval_step": 50.0})
