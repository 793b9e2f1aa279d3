"""tiny_model: the model, the task, the GRPO/NTHR weights, the warm model, determinism, the CLI.

The probe's observations live in test_tiny_model_probe.py, training in
test_tiny_model_training.py, the larger (GPU) configuration in
test_tiny_model_large.py.
"""

from __future__ import annotations

import json

import pytest
import torch

from tiny_model import experiment, grpo, reference, task
from tiny_model.__main__ import main
from tiny_model.model import TinyConfig, TinyModel
from tiny_model.probe import run_probe
from tiny_model.seam import Functions
from tiny_model.task import SumTask


@pytest.fixture(autouse=True)
def one_thread():
    """Fixed thread count: results on this machine do not depend on its number of cores."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def fns() -> Functions:
    return Functions.from_solutions()


# ----------------------------------------------------------------------------- model


def test_logits_are_lm_head_of_the_returned_hidden_states():
    """Are the hidden states NTHR scores exactly the ones the logits are computed from?"""
    torch.manual_seed(0)
    model = TinyModel(TinyConfig()).eval()
    idx = torch.randint(0, task.VOCAB_SIZE, (3, 11))
    logits, hidden = model(idx)
    assert logits.shape == (3, 11, task.VOCAB_SIZE) and hidden.shape == (3, 11, 64)
    assert torch.equal(logits, model.lm_head(hidden))
    # hidden is after the final norm: recompute it from the blocks
    x = model.wte(idx) + model.wpe(torch.arange(11))
    for block in model.blocks:
        x = block(x)
    assert torch.equal(hidden, model.ln_f(x))


def test_model_is_causal_so_later_tokens_do_not_leak():
    """Does a change at position 5 leave the outputs at positions < 5 untouched?"""
    torch.manual_seed(0)
    model = TinyModel(TinyConfig()).eval()
    idx = torch.randint(0, task.VOCAB_SIZE, (1, 10))
    idx2 = idx.clone()
    idx2[0, 5] = (idx[0, 5] + 1) % task.VOCAB_SIZE
    a, _ = model(idx)
    b, _ = model(idx2)
    assert torch.allclose(a[0, :5], b[0, :5]) and not torch.allclose(a[0, 5:], b[0, 5:])


def test_response_forward_aligns_positions_with_the_tokens_they_predict(fns):
    """Is entry t of response_forward the distribution of response token t (not t+1)?"""
    model = experiment.load_warm()
    problems = task.all_problems()
    target = task.correct_responses(problems).unsqueeze(1)  # (1000, 1, 5)
    logits, _ = grpo.response_forward(model, problems, target)
    # the same numbers as a plain forward pass read at positions 6..10
    seq = torch.cat([task.prompt_tokens(problems), target[:, 0]], dim=1)  # (1000, 12)
    full, _ = model(seq[:, :-1])
    torch.testing.assert_close(logits[:, 0], full[:, task.PROMPT_LEN - 1 :])
    # the warm model predicts most correct tokens greedily (93 %); shifted by one, almost none
    hits = (logits.argmax(-1) == target).float().mean()
    shifted = (logits[..., :-1, :].argmax(-1) == target[..., 1:]).float().mean()
    assert hits > 0.85 and shifted < 0.2, (hits, shifted)


# ------------------------------------------------------------------------------ task


def test_verifier_rejects_a_wrong_partial_sum_even_with_the_right_total():
    """Is a response right only when both scratchpad steps and the EOS are right?"""
    problems = torch.tensor([[3, 4, 8], [0, 0, 0], [9, 9, 9]])
    good = task.correct_responses(problems)
    assert [task.format_response(r) for r in good] == ["07 15.", "00 00.", "18 27."]
    assert task.rewards(problems, good).tolist() == [1.0, 1.0, 1.0]
    for pos in range(task.RESPONSE_LEN):
        bad = good.clone()
        bad[:, pos] = (bad[:, pos] + 1) % 10
        assert task.rewards(problems, bad).tolist() == [0.0, 0.0, 0.0], pos
    all_p = task.all_problems()
    assert all_p.shape == (1000, 3)
    totals = all_p.sum(1)
    resp = task.correct_responses(all_p)
    assert torch.equal(resp[:, 2] * 10 + resp[:, 3], totals)


def test_heldout_split_is_fixed_disjoint_and_covers_every_problem():
    """Are the 200 held-out problems the same every time, and never among the 800 trained on?"""
    tr, ho = task.train_problems(), task.heldout_problems()
    assert tr.shape == (800, 3) and ho.shape == (200, 3)
    keys = lambda p: set((p[:, 0] * 100 + p[:, 1] * 10 + p[:, 2]).tolist())  # noqa: E731
    assert not keys(tr) & keys(ho) and len(keys(tr) | keys(ho)) == 1000
    assert torch.equal(ho, task.heldout_problems())


def test_larger_task_writes_every_running_sum_with_carries():
    """Does the GPU task's scratchpad hold each running sum, zero-padded, and verify exactly?"""
    big = SumTask(terms=4, digits=2, n_train=50, n_heldout=10)
    p = torch.tensor([[47, 85, 13, 29], [0, 0, 0, 1]])
    good = big.correct_responses(p)
    assert [big.format_response(r) for r in good] == ["132 145 174.", "000 000 001."]
    assert big.format_prompt(p[0]) == "47+85+13+29=" and big.prompt_tokens(p).shape == (2, 13)
    assert big.response_len == 10 and big.block_size == 22
    assert big.rewards(p, good).tolist() == [1.0, 1.0]
    bad = good.clone()
    bad[0, 5] = 4  # 144 instead of 145: a carry slip
    assert big.rewards(p, bad).tolist() == [0.0, 1.0]
    tr, ho = big.split()
    assert tr.shape == (50, 4) and ho.shape == (10, 4)
    assert not {tuple(r) for r in tr.tolist()} & {tuple(r) for r in ho.tolist()}
    with pytest.raises(ValueError, match="too many"):
        SumTask(terms=4, digits=2)  # 10^8 problems cannot be listed: n_train is required


def test_response_mask_stops_after_the_first_eos():
    """Do tokens after an early EOS count as padding?"""
    r = torch.tensor([[0, task.EOS, 3, task.EOS, 5], [1, 2, 3, 4, task.EOS]])
    assert task.response_mask(r).tolist() == [
        [True, True, False, False, False],
        [True, True, True, True, True],
    ]


# --------------------------------------------------------------------------- methods


def _one_group(fns, seed=3):
    model = experiment.load_warm()
    gen = torch.Generator().manual_seed(seed)
    from tiny_model.probe import collect_mixed_groups

    groups, _ = collect_mixed_groups(model, 4, 8, gen, torch.Generator().manual_seed(seed))
    adv = fns.group_advantages(groups.rewards)
    with torch.no_grad():
        logits, hidden = grpo.response_forward(model, groups.problems, groups.responses)
    return groups, adv, logits, hidden


def test_pos_only_zeroes_every_negative_token_and_nothing_else(fns):
    """Does pos_only keep all positive tokens and drop every token of a negative response?"""
    groups, adv, logits, hidden = _one_group(fns)
    tw = grpo.token_weights("pos_only", fns, groups, adv)
    neg = groups.mask & (adv < 0).unsqueeze(-1)
    assert torch.all(tw.weights[neg] == 0) and torch.all(tw.weights[~neg] == 1)
    assert tw.modified_fraction == 1.0


def test_random_baseline_drops_as_many_negative_tokens_as_nthr_selects(fns):
    """Is the random control matched to NTHR's count in every group, and only on negative tokens?"""
    groups, adv, logits, hidden = _one_group(fns)
    nthr = grpo.token_weights("nthr", fns, groups, adv, logits, hidden)
    rnd = grpo.token_weights(
        "random", fns, groups, adv, logits, hidden, generator=torch.Generator().manual_seed(0)
    )
    assert torch.equal(nthr.modified.flatten(1).sum(1), rnd.modified.flatten(1).sum(1))
    assert int(nthr.modified.sum()) > 0
    assert not torch.any(rnd.modified & ~rnd.negative) and not torch.any(
        nthr.modified & ~nthr.negative
    )
    # NTHR selects exactly the negative tokens whose score exceeds tau
    sel = nthr.scores > nthr.tau.view(-1, 1, 1)
    assert torch.equal(sel & nthr.negative, nthr.modified)


def test_nthr_needs_the_06_functions():
    """Does an NTHR run without notebook-06 functions fail with a message naming them?"""
    ref = Functions.from_solutions(include_06=False)
    with pytest.raises(ValueError, match="prediction_errors"):
        run_probe(experiment.load_warm(), ref, methods=("grpo", "nthr"), groups=2)


def test_probe_uses_the_functions_passed_through_the_seam(fns):
    """Do the learner's functions, not a hidden copy, produce the reported numbers?"""
    calls = []

    def my_lld_rate(changes, eps=0.0):
        calls.append(len(changes))
        return 0.125

    res = run_probe(
        experiment.load_warm(), fns.replace(lld_rate=my_lld_rate), methods=("grpo",), groups=3
    )
    assert calls == [3] and res.summary()["grpo"]["lld_rate"] == 0.125


def test_aggregate_loss_modes_differ_when_valid_length_is_not_T():
    """Are sum-over-T, mean over valid tokens and Dr. GRPO's constant kept apart?"""
    per_tok = torch.tensor([[1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 2.0, 9.0, 9.0, 9.0]])
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0]], dtype=torch.bool)
    got = {m: float(reference.aggregate_loss(per_tok, mask, m)) for m in grpo.LOSS_AGG_MODES}
    assert got == pytest.approx(
        {
            "seq-mean-token-mean": (3.0 + 2.0) / 2,
            "token-mean": 19.0 / 7,
            "seq-mean-token-sum": (15.0 + 4.0) / 2,
            "seq-mean-token-sum-norm": 19.0 / (2 * 5),
        },
        rel=1e-6,
    )
    with pytest.raises(ValueError):
        reference.aggregate_loss(per_tok, mask, "token-sum")


def test_clipping_stops_the_gradient_of_tokens_outside_the_trust_region():
    """Does a positive-advantage token whose ratio is already above 1 + eps get no gradient?"""
    logp = torch.tensor([[0.0, 0.0]], requires_grad=True)
    logp_old = torch.tensor(
        [[-0.5, 0.0]]
    )  # ratio e^0.5 > 1.2 for the first token, 1 for the second
    adv = torch.ones(1, 2)
    mask = torch.ones(1, 2, dtype=torch.bool)
    loss, stats = reference.grpo_loss(logp, logp_old, adv, mask, clip_eps=0.2)
    loss.backward()
    assert logp.grad[0, 0] == 0 and logp.grad[0, 1] != 0 and stats["clip_frac"] == 0.5
    # the k3 KL term is zero at the reference and positive away from it
    assert float(reference.k3(torch.zeros(3), torch.zeros(3)).sum()) == 0.0
    assert torch.all(reference.k3(torch.tensor([-1.0, 1.0]), torch.zeros(2)) > 0)


# ----------------------------------------------------------------------------- warm-up


def test_warmup_repeats_bit_for_bit_on_this_machine():
    """Does the same recipe, run twice on this machine, give the same weights bit for bit?

    (Its first 15 steps: the full 310 repeat the same way, at twenty times the cost.)
    """
    short = experiment.WarmupConfig(steps=15)
    with experiment.deterministic(threads=1):
        a, history_a = experiment.warmup(short)
        b, history_b = experiment.warmup(short)
    assert history_a == history_b
    for (k, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(x, y), k


def test_shipped_warm_model_is_the_one_load_warm_uses_and_about_half_right():
    """Is warm.pt the default recipe's (so load_warm loads it on every machine instead of
    rebuilding), small, and about half right when sampled, as recorded when it was built?"""
    blob = torch.load(experiment.CHECKPOINT, map_location="cpu", weights_only=True)
    assert blob["recipe"] == experiment.WarmupConfig().to_dict()
    assert experiment.CHECKPOINT.stat().st_size < 1_000_000
    with experiment.deterministic(threads=1):
        acc = experiment.sampled_accuracy(experiment.load_warm())
    assert 0.3 < acc < 0.7, acc
    # the same weights on every CPU: only a draw or two of 1000 may land differently
    assert abs(acc - blob["info"]["sampled_accuracy"]) <= 0.005, (acc, blob["info"])


@pytest.mark.slow
def test_warmup_from_scratch_reaches_mid_competence_on_any_cpu():
    """Does the recipe reach about half right when sampled, around step 300, whatever the kernels?

    Its exact weights are not portable: at a constant lr of 3e-3 the path depends on the last
    float32 bit of every step, and at step 310 the sampled accuracy was 0.21 to 0.49 across the
    CPU kernels measured (benchmarks/cross_kernel_spread.py), while with a check every 20 steps
    the first at or above 0.45 came at step 260 to 360 under each. So the shipped warm.pt is
    loaded, never rebuilt, and this checks what holds on any CPU: the stopping rule reaches mid
    competence.
    """
    config = experiment.WarmupConfig(steps=600, target_accuracy=0.45, check_every=20)
    with experiment.deterministic(threads=1):
        model, history = experiment.warmup(config)
        acc = experiment.sampled_accuracy(model)
    assert history["check_accuracy"][-1] >= 0.45, history["check_accuracy"]
    assert 200 <= history["check_step"][-1] < 600, history["check_step"]
    assert 0.3 < acc < 0.7, acc
    assert history["loss"][-1] < history["loss"][0]


def test_shipped_warm_model_is_not_wrecked_by_a_fresh_adam_step():
    """Does one fresh Adam step of supervised training at lr 3e-4 raise (not wreck) ln π(correct)?

    The first warm-up recipe (cosine decay to 0) failed this by -0.6 nats, and
    RL from it could not learn; see the slow test below.
    """
    with experiment.deterministic(threads=1):
        assert experiment.first_step_damage(experiment.load_warm(), lr=3e-4) > 0


@pytest.mark.slow
def test_warmup_decayed_to_zero_leaves_a_model_a_fresh_adam_step_wrecks():
    """Does the damage check catch the first recipe (cosine to 0), which RL could not learn from?"""
    old = experiment.WarmupConfig(steps=225, lr=5e-3, schedule="cosine")
    with experiment.deterministic(threads=1):
        model, _ = experiment.warmup(old)
        assert experiment.first_step_damage(model, lr=3e-4) < -0.2


def test_probe_is_bit_for_bit_repeatable_and_seed_dependent(fns):
    """Same seed, same numbers exactly; another seed, other groups?"""
    model = experiment.load_warm()
    with experiment.deterministic(threads=1):
        a = run_probe(model, fns, groups=8, seed=5).to_dict()
        b = run_probe(model, fns, groups=8, seed=5).to_dict()
        c = run_probe(model, fns, groups=8, seed=6).to_dict()
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert a["per_group"]["problems"] != c["per_group"]["problems"]


# --------------------------------------------------------------------------------- CLI


def test_probe_cli_pools_seeds_and_prints_pooled_and_per_seed_intervals(tmp_path, capsys):
    """Does `probe --optimizer adam --seeds 0-1` print pooled and per-seed rows and write the files?"""
    argv = ["probe", "--device", "cpu", "--groups", "4", "--seeds", "0-1", "--out", str(tmp_path)]
    assert main([*argv, "--optimizer", "adam"]) == 0
    out = capsys.readouterr().out
    for word in ("adam", "pooled", "seed 0", "seed 1", "pos_only-grpo", "nthr-grpo", "nthr-random"):
        assert word in out, word
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["seeds"] == [0, 1] and metrics["n_groups"] == 8
    assert set(metrics["summary"]) == set(grpo.METHODS) and len(metrics["per_seed"]) == 2
    assert (tmp_path / "probe.png").stat().st_size > 1000


def test_cli_rejects_bad_seeds_and_methods_with_a_message(capsys):
    """Do a reversed seed range and an unknown method stop the CLI with a clear message?"""
    bad = [["probe", "--seeds", "4-0"], ["train", "--methods", "grpo,ppo"]]
    if not torch.cuda.is_available():
        bad.append(["probe", "--device", "cuda"])  # says so instead of a traceback
    for argv in bad:
        with pytest.raises(SystemExit):
            main(argv)
        assert "error" in capsys.readouterr().err


def test_train_cli_writes_identical_metrics_and_figures_for_the_same_seed(tmp_path):
    """Does `python -m tiny_model train` write metrics.json and a PNG, byte-identical on rerun?"""
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        argv = ["train", "--device", "cpu", "--seeds", "1", "--steps", "2", "--eval-every", "2"]
        assert main([*argv, "--methods", "grpo,nthr", "--out", str(out)]) == 0
        outs.append(out)
    metrics = json.loads((outs[0] / "metrics.json").read_text())
    for m in ("grpo", "nthr"):
        run = metrics["runs"][m]["1"]
        assert run["eval_step"] == [0.0, 2.0]
        assert all(0 <= a <= 1 for a in run["heldout_accuracy"])
    assert metrics["runs"]["nthr"]["1"]["selected_frac"][1] > 0
    for f in ("metrics.json", "train.png"):
        assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes(), f
