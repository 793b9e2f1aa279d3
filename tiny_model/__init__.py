"""tiny_model: watch lazy likelihood displacement (LLD) and NTHR on a tiny transformer.

A nanoGPT-style decoder learns single-digit ``a+b+c`` with a scratchpad
(``3+4+8=`` -> ``07 15.``: the partial sum, the total, EOS). Warmed up to mid
competence, it answers about half of its sampled responses right, and its
wrong answers share correct steps with the right ones: the setting in which
Deng et al. (arXiv 2505.18830) show GRPO's negative gradient dragging correct
responses down, and NTHR (negative token hidden reward) fixing it.

Public API (stable; notebooks 05 and 06 call it with the learner's functions)
-----------------------------------------------------------------------------
    from tiny_model import Functions, load_warm, run_probe, train, task

    fns = Functions.from_solutions()               # reference functions (source notebooks)
    fns = Functions.from_namespace(globals())      # a notebook's own functions
    model = load_warm()                            # fresh copy of the warm model (CPU)
    res = run_probe(model, fns, methods=("grpo", "pos_only", "nthr", "random"),
                    groups=60, seed=0, lr=1e-5)    # -> ProbeResult, model unchanged
    print(res.table())                             # mean/median change, LLD rate, selected, paired CIs
    res.changes["grpo"]                            # (groups,) Eq. 2 change per group
    res.summary(), res.paired                      # dicts; res.to_dict() is JSON-able
    print(show_group(res, 0))                      # decoded responses, shared and selected tokens
    run = train(fns, "nthr", steps=100, seed=0)    # -> TrainResult; run.history[metric] per step
    task.format_response(tokens)                   # '07 15.'

Methods: ``grpo``; ``pos_only`` (negative advantages set to 0); ``nthr``
(selected negative tokens weighted by η: 0 in the probe, ``eta_schedule(p)``
in training); ``random`` (as many random negative tokens as NTHR selects).
Logged per training step: reward_mean, zero_adv_frac, kl_ref,
correct_logp_change, selected_frac, response_len, answer_logp, clip_frac, loss.

Command line: ``python -m tiny_model warmup|probe|train --device auto|cpu|cuda
--seed N --out DIR`` writes metrics.json and PNG figures (see ``--help``).

How this departs from the papers' setting (every simplification)
----------------------------------------------------------------
1. Tiny task and model: 1000 arithmetic problems, 5-token responses, a
   2-layer, 64-wide decoder (~100k parameters); the same 1000 problems serve
   warm-up, probe and training (no held-out split). Rewards are exact match of
   the whole scratchpad, 0/1.
2. Warm-up is supervised (cross-entropy on correct scratchpads, 225 Adam
   steps with cosine decay), stopped when about half of the *sampled*
   (temperature 1) answers are right; greedy decoding is right far more often.
3. The probe's update is one plain SGD step (lr 1e-5, near gradient flow), not
   an Adam step; no clipping and no KL in the probe (on-policy, one step: the
   ratio is 1 anyway); loss aggregation seq-mean-token-mean as in GRPO.
4. Each probe group is updated alone from the same θ (the paper's Eq. 2);
   groups that are all right or all wrong are skipped and replaced by the
   next problem, so "N groups" means N mixed groups.
5. NTHR scores use the last-layer hidden states after the final norm and the
   prediction errors of the logits computed from them (lm_head has no bias);
   tau's mean score of a correct response is taken against all correct tokens
   including its own (the course's reading, see notebook 06). The random
   baseline's change is averaged over 8 draws per group (less noise, same mean).
6. Training: 16 prompts x 8 samples per step, one Adam step per batch
   (lr 3e-4, clipping eps 0.2 binds only with inner_steps > 1), a frozen copy of
   the warm model as the KL reference (k3, coefficient 0 by default, always
   logged), η = 2|0.5 − p| per group for NTHR and random; runs of ~100 steps.
7. Determinism is promised on CPU for a seed (deterministic algorithms, fixed
   threads); CUDA runs are seeded but not guaranteed bit-identical.

Measured on the shipped warm model (60 groups, seed 0, lr 1e-5): GRPO lowers
the correct responses' likelihood on some groups (LLD) and positive-only on
none; NTHR beats GRPO and random by paired margins whose 95% bootstrap
intervals exclude 0. Near gradient flow GRPO's *mean* change is higher than
positive-only's: on this task the negative gradient helps correct answers on
average (the wrong token competes with the right one) and hurts them only on
some groups, which is why NTHR removes only the tokens that hurt.
"""

from tiny_model.experiment import load_warm, train
from tiny_model.grpo import METHODS, Groups, TrainConfig, TrainResult
from tiny_model.model import TinyConfig, TinyModel
from tiny_model.probe import ProbeConfig, ProbeResult, run_probe, show_group
from tiny_model.seam import Functions

__all__ = [
    "METHODS",
    "Functions",
    "Groups",
    "ProbeConfig",
    "ProbeResult",
    "TinyConfig",
    "TinyModel",
    "TrainConfig",
    "TrainResult",
    "load_warm",
    "run_probe",
    "show_group",
    "train",
]
