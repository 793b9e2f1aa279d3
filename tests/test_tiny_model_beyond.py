"""Notebook 07's methods in tiny_model: THR both ways, the NLL and SMAUG-style regularisers, clip-higher,
greedy accuracy and Pass@K. Each test names the mistake it would catch."""

from __future__ import annotations

import json
import math

import pytest
import torch

from tiny_model import experiment, grpo, reference, thr, training
from tiny_model.__main__ import main
from tiny_model.seam import Functions


@pytest.fixture(autouse=True)
def one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def fns() -> Functions:
    return Functions.from_solutions()


# ------------------------------------------------------------------------------ THR


def test_thr_weights_amplify_positive_and_weaken_negative_when_exploiting_and_the_reverse():
    """Exploitation (p > 0): 1 + p on THR > 0, 1 - p on THR < 0; exploration mirrors it; a
    non-dominant token or THR = 0 keeps 1. Catches a swapped sign of p, weights on every token
    instead of the dominant ones, and sign(THR) replaced by sign(advantage)."""
    score = torch.tensor([2.0, 2.0, -3.0, 0.5, 0.0])
    adv = torch.tensor([1.0, -1.0, -1.0, 1.0, 1.0])  # THR = 2, -2, 3, 0.5, 0
    t = reference.thr_token_scores(score, adv)
    assert t.tolist() == [2.0, -2.0, 3.0, 0.5, 0.0]
    dominant = score.abs() > 1.0
    exploit = reference.thr_weights(t, dominant, 0.5)
    explore = reference.thr_weights(t, dominant, -0.5)
    assert exploit.tolist() == [1.5, 0.5, 1.5, 1.0, 1.0]
    assert explore.tolist() == [0.5, 1.5, 0.5, 1.0, 1.0]
    with pytest.raises(ValueError, match="p must be"):
        reference.thr_weights(t, dominant, 1.5)  # weight -0.5 would flip an advantage's sign


def _groups(fns, seed=3):
    from tiny_model.probe import collect_mixed_groups

    model = experiment.load_warm()
    groups, _ = collect_mixed_groups(
        model, 4, 8, torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
    )
    adv = fns.group_advantages(groups.rewards)
    with torch.no_grad():
        logits, hidden = grpo.response_forward(model, groups.problems, groups.responses)
    return groups, adv, logits, hidden


def test_thr_methods_mirror_each_other_and_agree_with_nthr_on_negative_tokens(fns):
    """On the same groups, thr_explore's weights are thr_exploit's mirrored around 1; on incorrect
    responses exploitation weakens exactly the tokens with |A|·s > tau (dominance on |THR|), and,
    with dominance on |s| (the first reading), exactly NTHR's selected tokens (s > tau > 0 means
    THR < 0). Catches THR scored against the wrong set of tokens and a threshold other than
    NTHR's."""
    groups, adv, logits, hidden = _groups(fns)
    up = grpo.token_weights("thr_exploit", fns, groups, adv, logits, hidden, thr_p=0.5)
    down = grpo.token_weights("thr_explore", fns, groups, adv, logits, hidden, thr_p=0.5)
    by_s = grpo.token_weights(
        "thr_exploit", fns, groups, adv, logits, hidden, thr_p=0.5, thr_dominance="score"
    )
    nthr = grpo.token_weights("nthr", fns, groups, adv, logits, hidden)
    valid = groups.mask
    assert torch.allclose((up.weights - 1)[valid], -(down.weights - 1)[valid])
    assert torch.all(up.weights[~valid] == 1)
    assert torch.all(nthr.tau > 0)
    assert torch.equal((by_s.weights < 1) & nthr.negative, nthr.modified)
    a = adv.abs().unsqueeze(-1).expand_as(nthr.scores)  # (N, G, R) |A| of each token's response
    by_thr = nthr.negative & (a * nthr.scores > nthr.tau.view(-1, 1, 1))
    assert torch.equal((up.weights < 1) & nthr.negative, by_thr)
    assert bool((up.weights > 1).any())  # some tokens are amplified as well


# ------------------------------------------------------------------------ regularisers


def test_nll_counts_only_the_correct_responses_valid_tokens_and_raises_them():
    """Catches the NLL taken over every response, over padding, or with the wrong sign."""
    logp = torch.tensor([[-1.0, -2.0, -9.0], [-4.0, -4.0, -4.0]], requires_grad=True)
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]], dtype=torch.bool)
    correct = torch.tensor([True, False])
    loss = reference.nll_on_correct(logp, mask, correct)
    assert float(loss.detach()) == pytest.approx(1.5)
    loss.backward()
    assert torch.all(logp.grad[0, :2] < 0) and torch.all(logp.grad[0, 2:] == 0)
    assert torch.all(logp.grad[1] == 0)  # descent raises the correct tokens' log probabilities
    assert float(reference.nll_on_correct(logp.detach(), mask, torch.tensor([False, False]))) == 0.0


def test_smaug_floor_is_zero_at_the_reference_and_pushes_only_what_fell_below_it():
    """max(0, ln pi_ref - ln pi) on correct responses. Catches the floor reversed (max(0, ln pi -
    ln pi_ref) pushes correct responses down), no max (a plain NLL-like pull), or wrong responses
    included."""
    seq = torch.tensor([-1.0, -3.0, -5.0], requires_grad=True)
    ref = torch.tensor([-1.0, -2.0, -1.0])
    correct = torch.tensor([True, True, False])
    loss = reference.smaug_floor(seq, ref, correct)
    assert float(loss.detach()) == pytest.approx((0.0 + 1.0) / 2)
    loss.backward()
    assert seq.grad.tolist() == [0.0, -0.5, 0.0]


# ------------------------------------------------------------------------- clip-higher


def test_clip_higher_lets_a_positive_token_grow_past_one_plus_eps_low():
    """A positive-advantage token at ratio 1.25 is clipped with symmetric eps 0.2, not with an
    upper bound of 0.28; a negative-advantage token at 0.75 is clipped by the lower bound either
    way. Catches the bounds swapped, or clip-higher ignored."""
    logp_old = torch.zeros(1, 2)
    logp = torch.tensor([[math.log(1.25), math.log(0.75)]], requires_grad=True)
    adv = torch.tensor([[1.0, -1.0]])
    mask = torch.ones(1, 2, dtype=torch.bool)
    sym, stats = reference.grpo_loss(logp, logp_old, adv, mask, clip_eps=0.2)
    (g_sym,) = torch.autograd.grad(sym, logp)
    hi, stats_hi = reference.grpo_loss(logp, logp_old, adv, mask, clip_eps=0.2, clip_eps_high=0.28)
    (g_hi,) = torch.autograd.grad(hi, logp)
    assert g_sym[0, 0] == 0 and g_hi[0, 0] != 0
    assert g_sym[0, 1] == 0 and g_hi[0, 1] == 0
    assert stats["clip_frac"] == 1.0 and stats_hi["clip_frac"] == 0.5


# ---------------------------------------------------------------------------- Pass@K


def test_pass_at_k_is_the_unbiased_estimator():
    """1 - C(n-c, k)/C(n, k). Catches Pass@K computed as c/n, or as 1 - (1 - c/n)^k."""
    c = torch.tensor([0, 1, 8, 3])
    assert training.pass_at_k(c, 8, 1) == pytest.approx((0 + 1 / 8 + 1 + 3 / 8) / 4)
    want = [1 - math.comb(8 - ci, 4) / math.comb(8, 4) for ci in (0, 1, 8, 3)]
    assert training.pass_at_k(c, 8, 4) == pytest.approx(sum(want) / 4)
    assert training.pass_at_k(c, 8, 8) == pytest.approx(3 / 4)
    with pytest.raises(ValueError):
        training.pass_at_k(c, 8, 9)


# ------------------------------------------------------------------------ the study CLI


def test_train_cli_all_runs_every_method_and_pairs_each_new_one_with_grpo(tmp_path, capsys):
    """`train --methods all` includes notebook 07's methods and reports greedy accuracy, Pass@K and
    the online metrics with a paired interval against GRPO (2 seeds x 1 step, to run fast)."""
    argv = ["train", "--device", "cpu", "--seeds", "0-1", "--steps", "1", "--eval-every", "1"]
    assert main([*argv, "--methods", "all", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert tuple(metrics["methods"]) == grpo.ALL_METHODS
    for m in thr.NEW_METHODS:
        pair = metrics["paired"][f"{m}-grpo"]
        for metric in ("heldout_greedy_accuracy", "heldout_pass@8", "correct_logp_change"):
            assert pair[metric]["n"] == 2, (m, metric)
        assert f"{m}-grpo" in out
    for label in ("greedy acc.", "Pass@8", "online Eq. 2"):
        assert label in out
    run = metrics["runs"]["thr_exploit"]["0"]
    assert run["selected_frac"][1] > 0 and 0 <= run["heldout_pass@8"][1] <= 1


def test_write_shipped_06_refuses_methods_notebook_06_does_not_load(capsys):
    """Catches `--write-shipped` overwriting notebook 06's 4-method file with an 8-method study."""
    with pytest.raises(SystemExit):
        main(["train", "--methods", "all", "--steps", "1", "--write-shipped"])
    assert "06" in capsys.readouterr().err


# ------------------------------------------------------------------- the shipped study


def test_shipped_07_study_is_small_holds_every_method_and_continues_the_06_study():
    """train_07.json: 8 methods x 5 seeds, < 300 kB, held-out accuracy far from 1; its 05-06 runs
    are the first 50 steps of notebook 06's shipped runs (same held-out accuracy at step 50).
    Catches a regenerated file whose regime or code drifted from what docs/notebook-07-plan.md
    reports."""
    from tiny_model.study import SHIPPED, SHIPPED_07, load_shipped

    s07, s06 = load_shipped(SHIPPED_07), load_shipped(SHIPPED)
    assert SHIPPED_07.stat().st_size < 300_000
    # made before thr_only existed, and with dominance on |s| (recorded as the config's default)
    assert s07.methods == tuple(m for m in grpo.ALL_METHODS if m != "thr_only")
    assert s07.seeds == (0, 1, 2, 3, 4) and s07.config.thr_dominance == "score"
    assert s07.config.stop_after == 50 and s07.config.steps == s06.config.steps
    assert all(v.mean() < 0.7 for v in s07.final().values())  # far from 1
    for m in grpo.METHODS:
        for seed in s06.seeds:
            assert s06.runs[m][seed]["eval_step"][1] == 50
            assert (
                s07.runs[m][seed]["heldout_accuracy"][-1]
                == s06.runs[m][seed]["heldout_accuracy"][1]
            )


def test_benchmark_table_prints_the_07_study_paired_with_grpo(capsys):
    """benchmarks/tiny_model_table.py --study-only prints each new method's intervals against
    GRPO on greedy accuracy, Pass@K and online Eq. 2."""
    from conftest import benchmark_module

    mod = benchmark_module("tiny_model_table")
    assert mod.main(["--study-only"]) == 0
    out = capsys.readouterr().out
    for m in thr.NEW_METHODS:
        if m != "thr_only":  # the course study predates thr_only (notebook 07's multi study has it)
            assert f"{m}-grpo" in out
    for label in ("greedy acc.", "Pass@4", "online Eq. 2", "online ln π(y+)"):
        assert label in out


def test_probe_takes_the_new_methods_and_the_smaug_floor_is_grpo_at_the_reference(fns):
    """The one-step probe starts at θ = π_ref, where max(0, ln π_ref − ln π) is 0 with zero
    gradient: smaug's Eq. 2 change equals GRPO's bit for bit. Catches a floor with the wrong
    sign or without the hinge (either moves the step), and the probe refusing notebook 07's
    methods."""
    from tiny_model.probe import run_probe

    res = run_probe(
        experiment.load_warm(),
        fns,
        methods=("grpo", "smaug", "nll", "thr_exploit", "thr_explore"),
        groups=4,
    )
    assert (res.changes["smaug"] == res.changes["grpo"]).all()
    assert not (res.changes["nll"] == res.changes["grpo"]).all()
    assert (res.changes["thr_explore"] < res.changes["thr_exploit"]).mean() >= 0.75
    assert "thr_exploit-grpo" in res.paired and "smaug-grpo" in res.paired
