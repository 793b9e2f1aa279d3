"""tiny_model: watch lazy likelihood displacement (LLD) and NTHR on a tiny transformer.

A nanoGPT-style decoder learns single-digit ``a+b+c`` with a scratchpad
(``3+4+8=`` -> ``07 15.``: the partial sum, the total, EOS). Warmed up to mid
competence, it answers about 45 % of its sampled responses right, and its
wrong answers share correct steps with the right ones: the setting in which
Deng et al. (arXiv 2505.18830) show GRPO's negative gradient dragging correct
responses down, and NTHR (negative token hidden reward) fixing it.

Public API (stable; notebooks 05 and 06 call it with the learner's functions)
-----------------------------------------------------------------------------
    from tiny_model import Functions, load_warm, run_probe, run_probe_seeds, train, task

    fns = Functions.from_solutions()               # reference functions (source notebooks)
    fns = Functions.from_namespace(globals())      # a notebook's own functions
    model = load_warm()                            # fresh copy of the warm model (CPU)
    res = run_probe(model, fns, methods=("grpo", "pos_only", "nthr", "random"),
                    groups=60, seed=0, lr=1e-5, optimizer="adam")  # or "sgd"; model unchanged
    print(res.table())                             # mean/median change, LLD rate, selected, paired CIs
    res.changes["grpo"]                            # (groups,) Eq. 2 change per group
    res.summary(), res.paired                      # dicts; res.to_dict() is JSON-able
    pooled = run_probe_seeds(model, fns, seeds=range(5), optimizer="adam")
    print(pooled.table())                          # pooled and per-seed rows, stratified paired CIs
    print(show_group(res, 0))                      # decoded responses, shared and selected tokens
    ident = check_identity(model, fns)             # the SGD first-order identity, measured per prompt
    run = train(fns, "nthr", seed=0)               # -> TrainResult: run.history per step and per eval
    study = load_shipped()                         # the 4 methods x 5 seeds study notebook 06 loads
    study07 = load_shipped(SHIPPED_07)             # the course task: 8 methods x 5 seeds, 50 steps
    print(study07.beyond_table())                  # greedy, Pass@K, online Eq. 2, paired with GRPO
    multi = load_shipped(SHIPPED_MULTI)            # notebook 07's: the multi-answer task
    print(multi_table(multi))                      # greedy, Pass@1..64, distinct answers, top path
    task.format_response(tokens)                   # '07 15.'

The graded maths comes through the seam (seam.py): the functions a Functions holds, and where
it leaves one unset tiny_model's own, all in reference.py, the one module that implements
graded functions. A graded class's installation (``drills release --course``) has no
reference.py: there every graded function a run needs is the learner's (seam.live_needs), and
a missing one is a ReferenceMissing error naming it.

Methods: ``grpo``; ``pos_only`` (negative advantages set to 0); ``nthr``
(selected negative tokens weighted by η: 0 in the probe, ``eta_schedule(p)``
in training); ``random`` (as many random negative tokens as NTHR selects).
Training only (thr.py): ``thr_exploit`` / ``thr_explore`` (THR weights 1 ± p
on dominant tokens), ``thr_only`` (the dominant tokens kept, the others masked),
``nll`` (VAPO's NLL on correct responses),
``smaug`` (the floor max(0, ln π_ref(y+) − ln π(y+))); every method takes
clip-higher (``clip_eps_high``: the ratio clipped to [1 − ε_low, 1 + ε_high]).
Logged per training step: reward_mean, zero_adv_frac, kl_ref,
correct_logp_change, selected_frac, response_len, clip_frac, loss, lr,
correct_logp; per held-out evaluation (step 0, every 50 steps, the end):
heldout_accuracy, heldout_answer_logp, heldout_greedy_accuracy,
heldout_pass@1/2/4/8 (8 draws per problem, the unbiased estimator; up to
Pass@64 from 64 draws with ``--config multi``, which also logs
heldout_distinct_correct and heldout_top_path_share).

Command line (``--help`` for all options):
``python -m tiny_model probe --optimizer adam|sgd --seeds 0-4``,
``python -m tiny_model train --methods all --seeds 0-4 [--write-shipped]``,
``python -m tiny_model warmup``; every command takes ``--config course|multi|large
--device auto|cpu|cuda --out DIR`` and writes metrics.json and a PNG figure.
``--config multi`` is the multi-answer task (``task.MULTI``: the partial sum may
be any pair's, so ``3+4+8=`` accepts ``07 15.``, ``11 15.`` and ``12 15.``; 2.71
distinct right answers per problem) with its own shipped warm model
(checkpoints/warm_multi.pt, ``warm.MULTI_WARMUP``), notebook 07's study.
``--config large`` is the GPU configuration (four 2-digit numbers with
carries, a 4-layer 256-wide decoder), run by ``benchmarks/tiny_model_table.py``.

How this departs from the papers' setting (every simplification)
----------------------------------------------------------------
1. Tiny task and model: 1000 arithmetic problems, 5-token responses, a
   2-layer, 64-wide decoder (~100k parameters). A fixed split holds 200
   problems out: warm-up, probes and RL use the other 800, the held-out 200
   only evaluate training. Rewards are exact match of the whole scratchpad,
   0/1, so every correct response of a group is the same sequence.
2. Warm-up is supervised (cross-entropy on correct scratchpads, 310 Adam
   steps at a constant lr 3e-3 after a 10-step ramp), stopped when about 45 %
   of the *sampled* (temperature 1) answers are right; greedy decoding is
   right on about 68 % (the shipped warm.pt: 0.46 and 0.68). (A cosine decay to
   0 left a model that one fresh Adam step at 3e-4 wrecks, and RL could not
   learn from it: see warm.py.) The recipe's path is not portable: on another
   CPU it reaches other weights (sampled accuracy 0.21 to 0.49 at step 310
   across the kernels measured), so warm.pt ships and every machine loads it.
3. The probe's update is one step from θ: ``adam``, Adam's first step
   -lr·g/(|g|+ε) (fresh moments; what training takes), the default and the
   rule under which the paper's observations show; or ``sgd``, -lr·g, the
   control, under which the first-order identity (identity.py) makes
   positive-only trail GRPO on average. lr 1e-5; no clipping and no KL (one
   on-policy step: the ratio is 1); loss aggregation seq-mean-token-mean as
   in GRPO. Results pool 5 seeds x 60 mixed groups; paired 95 % intervals
   bootstrap the groups within each seed.
4. Each probe group is updated alone from the same θ (the paper's Eq. 2);
   groups that are all right or all wrong are skipped and replaced by the
   next problem, so "N groups" means N mixed groups.
5. NTHR scores use the last-layer hidden states after the final norm and the
   prediction errors of the logits computed from them (lm_head has no bias);
   tau's mean score of a correct response is taken against all correct tokens
   including its own (the course's reading, see notebook 06). The random
   baseline's change is averaged over 8 draws per group (less noise, same mean).
6. Training: 16 prompts x 8 samples per step from the 800 training problems,
   one Adam step per batch (lr 5e-4 after a 50-step ramp, cosine decay to 0
   over 800 steps; clipping eps 0.2 binds only with inner_steps > 1), a frozen
   copy of the warm model as the KL reference (k3, coefficient 0 by default,
   always logged), η = 2|0.5 − p| per group for NTHR and random. The study
   compares the four methods over 5 seeds, paired by seed (same problems,
   same held-out evaluation draws); held-out accuracy samples 4 responses
   per problem at temperature 1.
7. Determinism is promised on one CPU for a seed (deterministic algorithms,
   fixed threads): the same command gives the same bits on the same machine.
   Another CPU's kernels (ATen's AVX2 / AVX-512 paths, oneDNN, MKL) round the
   last float32 bit differently. Measured: a pooled probe moves by at most
   2e-4 relative (an interval's end; 3e-5 for a mean), the first 50 training
   steps by at most 2e-5, and longer runs drift further,
   once a random draw near the edge of its bin goes the other way
   (benchmarks/cross_kernel_spread.py; the tests use these tolerances, with a
   margin). CUDA runs are seeded but not guaranteed bit-identical, and the
   large configuration's warm-up stops at a target accuracy (checked every
   50 steps) instead of a fixed step count.
8. THR (Deng et al., arXiv 2510.03669). Sources: the paper's abstract and
   its OpenReview reviews (ICLR 2026), the only parts read for this course.
   The abstract: THR is a token's influence on the likelihood of the correct
   responses under GRPO; training is dominated by a small subset of tokens
   with high absolute THR; amplifying positive-THR tokens and weakening
   negative ones favours greedy accuracy, the reverse Pass@K. The reviews:
   dominant tokens are those with large |THR| and a "THR-only" variant uses
   only their advantages; the threshold "follows a prior influence-based
   heuristic"; p > 0 exploits, p < 0 explores, the best p varies by model;
   about 40 training steps. Ours (reconstructions, not the paper's text): THR_{j,k} =
   A_j · s_{j,k}, s the token's score against every token of the group's
   correct responses (06's ``token_scores``, a correct response's own tokens
   included); a token is dominant when |THR| > τ, τ NTHR's threshold (β = 1;
   an earlier version of this course used |s| > τ: ``thr_dominance="score"``,
   which the course task's train_07.json was made with); dominant tokens'
   advantages are multiplied by 1 + p·sign(THR), the others keep 1; p = +0.5
   (``thr_exploit``) or −0.5 (``thr_explore``), chosen before the runs at
   |p| = 0.1 that notebook 07 shows; ``thr_only`` keeps the
   dominant tokens (weight 1) and masks the others (weight 0), our reading
   of the reviews' "THR-only". One review describes the method as masking
   the low-influence tokens and amplifying the rest by sign; read that way,
   the non-dominant tokens get 0 instead of 1 (``--thr-mask``, "mask plus
   sign", a reading of the review run beside ours in notebook 07's study).
   The paper's p, its normalisation of THR, its threshold, which of the two
   readings it uses, and its exact THR-only rule are not known to us; it
   tunes p per model, we do not.
9. NLL (VAPO's positive-example LM loss, μ = 0.1): token mean of −ln π over
   the batch's correct responses, added to the GRPO loss. SMAUG-style floor
   (DPO-Positive's term): mean over correct responses of
   max(0, ln π_ref(y+) − ln π(y+)), π_ref the frozen warm model, weight 1
   (our choice). Clip-higher binds only with inner_steps > 1 (one on-policy
   step has ratio 1), so the study's single-step runs cannot show it; a
   separate short study (notebook 07) takes 2 updates per batch.
10. Training departs from the papers' recipes in three ways, each a
   default that ``TrainConfig`` can change:
   - one update per batch (``inner_steps=1``) where NTHR's runs took 2-4:
     the ratio is 1 at every token, so clipping and clip-higher never act
     and the step is plain policy gradient; with 2 updates the second one
     sees ratios away from 1 and the clip binds on some tokens (clip_frac,
     measured in notebook 07's clip study);
   - no KL penalty (``kl_coef=0``) where NTHR's used 1e-4: nothing pulls
     the policy back to the warm model (kl_ref is logged; at 1e-4 the pull
     would be 1e-4 times it, small against advantages of order 1);
   - groups whose responses are all right or all wrong are kept (their
     advantages are 0) where DAPO-style dynamic sampling draws new prompts
     until every group is mixed: with seq-mean-token-mean they add nothing
     to the gradient but count in the mean, so the step shrinks by the
     fraction of such groups (zero_adv_frac, logged), which grows as
     training succeeds.
11. The multi-answer task (``--config multi``): its warm-up trains on one
   right path per problem drawn at random (any pair's partial sum), 490
   Adam steps to the first check (every 10 steps) with 30 % of sampled
   answers right (shipped: 0.325 sampled, 0.419 greedy); its held-out
   ln π(correct) is that of the set of right answers (logsumexp over the
   distinct ones). Its warm model's Pass@64 is already about 1, so large K
   has no room to rise; a harder variant was not built.

Measured on the shipped warm model (probe: lr 1e-5, 5 seeds x 60 groups; every
machine loads the same weights, and the printed digits held on every CPU
setting measured):
with Adam's step, positive-only beats GRPO (paired +6.5e-3 nats, 95 % CI
[+5.1e-3, +8.1e-3]), GRPO shows LLD on 7 % of groups and positive-only on
none, and NTHR beats GRPO (+1.8e-3 [+1.2e-3, +2.6e-3]) and random
(+1.5e-3 [+1.0e-3, +2.0e-3]). With SGD, positive-only trails GRPO
(-6.5e-3 [-7.7e-3, -5.5e-3]), as the identity says.
Training (the shipped tiny_model/results/train_seeds.json, built on one
machine; 5 seeds, 800 steps): held-out
sampled accuracy rises from 0.39 to 0.94 for GRPO (0.926-0.959 per seed),
0.94 for NTHR and random, 0.91 for positive-only; NTHR - GRPO is -0.005
[-0.010, +0.001] in final accuracy and +0.008 [-0.024, +0.040] nats in
held-out ln pi(correct) (paired t over seeds): the paper's training-level
claim does not show here. Positive-only ends less accurate (-0.027
[-0.039, -0.016]) while keeping the correct responses more likely during
the run.
The course task's 8-method study (docs/notebook-07-plan.md; train_07.json: the
first 50 steps of that schedule, 8 methods x 5 seeds, held-out sampled
accuracy 0.49-0.61 at the end): no fix beats GRPO significantly on greedy
accuracy, Pass@K or the online Eq. 2 (thr_exploit - GRPO greedy +0.018
[-0.019, +0.054] over 10 seeds); thr_explore trails (and collapses at
|p| = 1); SMAUG and NLL match GRPO; positive-only leads early (+0.059
[+0.001, +0.116] sampled accuracy). The one-step probe separates them:
thr_exploit +1.5e-3 [+1.0e-3, +2.2e-3], NLL +1.2e-3 [+0.9e-3, +1.6e-3],
thr_explore -9.3e-3 [-11.5e-3, -7.2e-3] nats against GRPO, SMAUG exactly 0
(that study and probe used dominance on |s|).
Notebook 07's study (tiny_model/results/train_multi.json: the multi-answer
task, 5 methods x 10 seeds, the first 40 steps of a 150-step schedule, 32
held-out draws per problem; docs/tiny-model.md has the table): GRPO's greedy
accuracy rises 0.410 -> 0.559 while its distinct right answers in 32 draws
fall 2.388 -> 2.270 and the commonest answer's share rises 0.632 -> 0.707.
Against GRPO: positive-only Pass@1 +0.009 [+0.000, +0.018], Pass@4 +0.015
[+0.001, +0.028]; thr_explore lower on greedy accuracy (-0.084 [-0.121,
-0.046]), every Pass@K and distinct answers (-0.152 [-0.256, -0.048]);
thr_only Pass@1 -0.011 [-0.018, -0.005]; thr_exploit every interval
includes 0. Rerun in full on the CPU that built it: bit for bit with its own
kernels, within the per-method bands of results/train_multi_bands.json under
others (study.compare_study; ``train --compare-shipped``); positive-only's
Pass@1 lower end (+0.00014) lies within its band, so it may flip elsewhere.
Notebook 07's main study is now the 300-step one (results/train_multi_300.json
and train_multi_300_arms.json: every method of 07 on the multi-answer task, a
whole 300-step schedule, 64 held-out draws, and arms with |p| = 0.1, the
reviews' mask-plus-sign reading and two updates per batch; docs/tiny-model.md
has its table and what it shows); the 40-step file stays as the reference of
07's live run and of the cross-kernel bands.
"""

from tiny_model.experiment import train
from tiny_model.grpo import METHODS, Groups
from tiny_model.identity import IdentityResult, check_identity
from tiny_model.model import TinyConfig, TinyModel
from tiny_model.pooled import PooledProbe, run_probe_seeds
from tiny_model.probe import OPTIMIZERS, ProbeConfig, ProbeResult, run_probe, show_group
from tiny_model.seam import Functions
from tiny_model.study import (
    SHIPPED_07,
    SHIPPED_MULTI,
    TrainStudy,
    load_shipped,
    multi_table,
    run_study,
)
from tiny_model.task import SumTask
from tiny_model.training import TrainConfig, TrainResult
from tiny_model.warm import LARGE_WARMUP, WarmupConfig, load_warm

__all__ = [
    "LARGE_WARMUP",
    "METHODS",
    "OPTIMIZERS",
    "SHIPPED_07",
    "SHIPPED_MULTI",
    "Functions",
    "Groups",
    "IdentityResult",
    "PooledProbe",
    "ProbeConfig",
    "ProbeResult",
    "SumTask",
    "TinyConfig",
    "TinyModel",
    "TrainConfig",
    "TrainResult",
    "TrainStudy",
    "WarmupConfig",
    "check_identity",
    "load_shipped",
    "load_warm",
    "multi_table",
    "run_probe",
    "run_probe_seeds",
    "run_study",
    "show_group",
    "train",
]
