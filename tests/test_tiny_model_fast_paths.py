"""The fast paths of tiny_model against the plain computations they replace.

The probe takes every method's gradient for a group in one batched backward pass and steps
all of them in one batched forward pass (probe.one_step_changes); the plain form, one
backward and one forward per method and per random draw, is kept (one_step_changes_loop) and
is the reference here. Sampling computes each prompt once and each new token at one position
(TinyModel.forward_cached); the full forward over the whole sequence is the reference.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tiny_model import experiment, grpo
from tiny_model.probe import (
    ProbeConfig,
    collect_mixed_groups,
    one_step_changes,
    one_step_changes_loop,
    run_probe,
)
from tiny_model.seam import Functions
from tiny_model.task import DEFAULT

# A few float32 ulps of a sequence log likelihood (|ln π| < 8 here: one ulp is 4.8e-7 or less):
# batched products sum in another order. Measured: at most 2.6e-6 over 12 groups and every
# method. A dropped or misweighted cotangent moves a change by more (nll's regulariser alone
# by 7e-5 to 1e-3 per group).
ATOL = 1e-5


@pytest.fixture(scope="module")
def fns() -> Functions:
    return Functions.from_solutions()


@pytest.fixture(scope="module")
def probed(fns):
    """Three mixed groups, every method, through the batched and the plain step."""
    model = experiment.load_warm().eval()
    config = ProbeConfig(methods=grpo.ALL_METHODS)
    groups, _ = collect_mixed_groups(
        model, 3, 8, torch.Generator().manual_seed(4), torch.Generator().manual_seed(4)
    )
    out = {"fast": [], "loop": []}
    with grpo.single_thread():
        for name, step in (("fast", one_step_changes), ("loop", one_step_changes_loop)):
            gen = torch.Generator().manual_seed(7)
            for i in range(3):
                group = groups.select(slice(i, i + 1))
                out[name].append(step(model, fns, group, grpo.ALL_METHODS, config, gen))
    return out


def test_batched_probe_step_drops_or_misweights_no_methods_gradient(probed):
    """Does the batched step give every method's change of the plain per-draw step (random's
    eight draws, the THR methods, and nll and smaug, whose losses are not linear in ln π)?"""
    for (fast, fw, fadv), (loop, lw, ladv) in zip(probed["fast"], probed["loop"]):
        assert torch.equal(fadv, ladv)
        for m in grpo.ALL_METHODS:
            assert fast[m] == pytest.approx(loop[m], abs=ATOL), (m, fast[m], loop[m])
            # the same tokens weighted, the random draws included (the generator consumed alike)
            assert torch.equal(fw[m].weights, lw[m].weights), m
        # the tolerance can fail: nll's regulariser moves the change by more than ATOL
        assert abs(loop["nll"] - loop["grpo"]) > 5 * ATOL


def test_batched_probe_step_keeps_a_zero_regulariser_bit_for_bit(probed):
    """At θ = π_ref the SMAUG floor's gradient is 0: is smaug's change GRPO's, bit for bit,
    in the batched step too (a slot of the batch that differs from its twin would not be)?"""
    for fast, _, _ in probed["fast"]:
        assert fast["smaug"] == fast["grpo"]


def test_random_draws_reuse_the_groups_nthr_scores_and_call_the_seam_once_per_group(fns):
    """Are the learner's scoring functions called once per probed group (not once per random
    draw, and not skipped when the probe runs random alone)?"""
    for methods in (("grpo", "nthr", "random"), ("random",)):
        calls = []

        def counted(logits, tokens, _calls=calls):
            _calls.append(tuple(logits.shape))
            return fns.prediction_errors(logits, tokens)

        run_probe(
            experiment.load_warm(),
            fns.replace(prediction_errors=counted),
            methods=methods,
            groups=3,
        )
        assert len(calls) == 3, (methods, calls)


def test_cached_forward_computes_what_the_full_forward_does():
    """Prompt first, then one token at a time: are the logits and hidden states the full
    forward's (up to float32 rounding), at the right positions?"""
    model = experiment.load_warm().eval()
    idx = torch.randint(
        0, model.config.vocab_size, (6, 12), generator=torch.Generator().manual_seed(0)
    )
    with torch.no_grad():
        logits, hidden = model(idx)
        got_l, got_h, past = model.forward_cached(idx[:, :7])
        pieces_l, pieces_h = [got_l], [got_h]
        for t in range(7, 12):
            step_l, step_h, past = model.forward_cached(idx[:, t : t + 1], past)
            pieces_l.append(step_l)
            pieces_h.append(step_h)
    torch.testing.assert_close(torch.cat(pieces_l, dim=1), logits, rtol=0, atol=1e-5)
    torch.testing.assert_close(torch.cat(pieces_h, dim=1), hidden, rtol=0, atol=1e-5)
    assert past[0][0].shape[2] == 12
    with pytest.raises(ValueError, match="block_size"):
        model.forward_cached(idx[:, :5], past)  # 17 positions > 16


def test_cached_sampling_draws_what_the_full_forward_draws():
    """Does sampling with the prompt's keys and values shared by its group draw the same
    responses as the full forward over the whole sequence at every token?"""
    model = experiment.load_warm().eval()
    prompts = DEFAULT.prompt_tokens(DEFAULT.split()[0][:64])  # (64, P)

    def full(idx):  # not a TinyModel: sample_responses takes the full forward
        return model(idx)

    fast = grpo.sample_responses(model, prompts, 8, torch.Generator().manual_seed(3))
    plain = grpo.sample_responses(full, prompts, 8, torch.Generator().manual_seed(3))
    assert fast.shape == (64, 8, DEFAULT.response_len)
    assert torch.equal(fast, plain)
    assert len(np.unique(fast.reshape(-1, fast.shape[-1]).numpy(), axis=0)) > 8  # not one path


def test_batched_steps_are_the_update_rule_bit_for_bit():
    """Does the probe's step of K gradients at once give p − update(g) for each, bit for bit,
    under both rules (tiny and large gradients, where Adam's ε matters and where it does not)?"""
    from tiny_model.probe import _stepped, update

    gen = torch.Generator().manual_seed(0)
    grads = torch.randn(4, 16, 32, generator=gen) * torch.logspace(-12, 0, 32)
    p = torch.randn(16, 32, generator=gen)
    for optimizer in ("adam", "sgd"):
        config = ProbeConfig(optimizer=optimizer)
        want = torch.stack([p - update(g, config) for g in grads])
        assert torch.equal(_stepped(p, grads, config), want), optimizer
    with pytest.raises(ValueError, match="optimizer"):
        _stepped(p, grads, ProbeConfig(optimizer="rmsprop"))
