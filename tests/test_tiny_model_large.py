"""The larger (GPU) configuration's code, proven on CPU at a tiny size.

The GPU configuration (``LARGE_WARMUP``: four 2-digit numbers with carries,
10-token scratchpads, a 4-layer 256-wide model) runs the same code as the
course's model with another task and ``--device cuda``. Here a tiny model
memorises 16 such problems to mid competence on the CPU, and the pooled
probe, the identity-free parts of training, and the CLI's config switch run
on it: every shape that depends on the task is exercised. The device is
'cpu', which takes the same code path as 'cuda' (generators and tensors
follow the model's device).
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from tiny_model import experiment
from tiny_model.model import TinyConfig
from tiny_model.pooled import run_probe_seeds
from tiny_model.seam import Functions
from tiny_model.task import LARGE, SumTask
from tiny_model.warm import LARGE_WARMUP, WarmupConfig, warmup

SMALL = SumTask(terms=4, digits=2, n_train=16, n_heldout=8)


@pytest.fixture(scope="module")
def fns() -> Functions:
    return Functions.from_solutions()


@pytest.fixture(scope="module")
def small_model():
    config = WarmupConfig(
        steps=800,
        batch_size=16,
        lr=3e-3,
        target_accuracy=0.4,
        check_every=10,
        task=SMALL,
        model=TinyConfig(block_size=SMALL.block_size, n_layer=1, n_head=2, d_model=32),
    )
    with experiment.deterministic(threads=1):
        model, history = warmup(config, "cpu")
    return model, history


def test_large_config_fits_its_task_and_is_wider():
    """Can the GPU model read the 4x2-digit task's sequences, and is it much larger than the course's?"""
    assert LARGE_WARMUP.task == LARGE and LARGE.response_len == 10
    assert LARGE_WARMUP.model.block_size >= LARGE.block_size
    from tiny_model.model import TinyModel

    n_large = TinyModel(LARGE_WARMUP.model).num_parameters()
    n_course = TinyModel(TinyConfig()).num_parameters()
    assert n_large > 20 * n_course
    with pytest.raises(ValueError, match="cannot read"):
        warmup(dataclasses.replace(LARGE_WARMUP, model=TinyConfig()), "cpu")


def test_warmup_stops_at_the_target_accuracy_on_a_multi_digit_task(small_model):
    """Does the stopping rule end the warm-up at the first check at or above the target?"""
    _, history = small_model
    assert history["check_accuracy"][-1] >= 0.4
    assert all(a < 0.4 for a in history["check_accuracy"][:-1])
    assert len(history["loss"]) == history["check_step"][-1] < 800


def test_pooled_probe_runs_on_the_multi_digit_task(small_model, fns):
    """Do the probe's groups, updates, NTHR scores and pooled table work with 10-token responses?"""
    model, _ = small_model
    with experiment.deterministic(threads=1):
        pooled = run_probe_seeds(model, fns, (0, 1), groups=3, task=SMALL, random_draws=2)
    assert pooled.results[0].groups.responses.shape[-1] == 10
    assert len(pooled.changes["grpo"]) == 6
    assert pooled.results[0].nthr_scores.shape[-1] == 10
    text = pooled.table()
    assert "pos_only-grpo" in text and "seed 1:" in text
    from tiny_model.probe import show_group

    assert "+" in show_group(pooled.results[0], 0) and "correct:" in show_group(
        pooled.results[0], 0
    )


def test_training_runs_on_the_multi_digit_task(small_model, fns):
    """Does a short NTHR run on the multi-digit task log every metric and evaluate the held-out split?"""
    model, _ = small_model
    with experiment.deterministic(threads=1):
        result = experiment.train(
            fns, "nthr", steps=3, model=model, task=SMALL, eval_every=2, eval_samples=2
        )
    h = result.history
    assert h["eval_step"] == [0.0, 2.0, 3.0] and len(h["reward_mean"]) == 3
    assert all(0 <= a <= 1 for a in h["heldout_accuracy"])


def test_cuda_device_is_refused_with_a_message_when_absent():
    """Does asking for cuda without a GPU fail clearly (never silently run on the CPU)?"""
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(ValueError, match="no CUDA device"):
        experiment.resolve_device("cuda")
    assert experiment.resolve_device("auto").type == "cpu"


def test_large_config_on_a_cpu_says_what_its_warm_up_costs_and_does_not_start(
    monkeypatch, capsys, tmp_path
):
    """`--config large` without a GPU used to start a 20,000-step warm-up on the CPU with no
    output. Does it now measure a step, say the cost, and stop (exit 2) unless told to go on?"""
    import tiny_model.__main__ as cli

    monkeypatch.setattr(cli, "has_warm_model", lambda config: False)
    monkeypatch.setattr(cli, "seconds_per_step", lambda config: 1.8)
    started = []
    monkeypatch.setattr(cli, "load_warm", lambda *a, **k: started.append(a))
    rc = cli.main(["probe", "--config", "large", "--device", "cpu", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and not started, "it started the warm-up"
    assert "up to 20,000 steps" in err and "a step took 1.80 s" in err, err
    assert "about 10.0 h" in err and "--cpu-warmup" in err, err


def test_large_config_on_a_cpu_with_cpu_warmup_shows_progress(monkeypatch, capsys):
    """With --cpu-warmup it warms up, printing a line every 5 % (a log file shows it too, not
    only a terminal's bar)."""
    import tiny_model.__main__ as cli

    monkeypatch.setattr(cli, "has_warm_model", lambda config: False)
    monkeypatch.setattr(cli, "seconds_per_step", lambda config: 0.5)

    def fake_warm(device, config, progress=None):
        for _ in range(config.steps):
            progress(1)

    monkeypatch.setattr(cli, "load_warm", fake_warm)
    args = cli.build_parser().parse_args(["probe", "--config", "large", "--cpu-warmup"])
    assert cli._large_on_cpu(args, LARGE_WARMUP) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if "warm-up step" in line]
    assert len(lines) == 20 and lines[-1].strip() == "warm-up step 20,000 of at most 20,000"


def test_a_warm_up_step_is_measured_on_this_cpu():
    """The estimate is a measurement: seconds_per_step runs real steps (a small recipe here)."""
    from tiny_model.warm import seconds_per_step

    config = WarmupConfig(steps=800, batch_size=4, task=SMALL, model=TinyConfig(
        block_size=SMALL.block_size, n_layer=1, n_head=2, d_model=16))  # fmt: skip
    assert 0 < seconds_per_step(config, steps=2) < 60
