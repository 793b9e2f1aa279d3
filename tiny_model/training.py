"""GRPO training runs: one method, one seed, from the warm model, on the training split.

Each step draws ``prompts_per_step`` training problems, samples G responses
for each at temperature 1 (on-policy: ``grpo.sample_responses`` and
``grpo.token_logprobs`` use the same softmax), verifies them, computes the
advantages and log likelihoods through the seam, weights the advantages per
token by the method (grpo.py), and takes ``inner_steps`` Adam steps on the
clipped surrogate (plus k3 KL to the warm model when ``kl_coef`` > 0): the seam's
``clipped_surrogate`` (notebook 07) when ``fns`` has one, reference.grpo_loss otherwise.

At step 0, every ``eval_every`` steps and at the end, the held-out problems
(never trained on) are evaluated: sampled accuracy with ``eval_samples``
responses per problem, drawn with random numbers that depend only on the
seed (so at one seed every method is evaluated on the same draws: the
comparison is paired), and the mean ln π of their correct scratchpads.

Tuning (measured when training first failed to learn, recorded in ``TrainConfig``'s defaults): Adam
at lr 5e-4 after a 50-step linear ramp, cosine decay to 0 over 800 steps. A
fresh Adam step of 1e-3 wrecks even the flatter warm model (every coordinate
moves by lr at once; the batch reward falls to 0.02 within 40 steps), a
constant 3e-4 learns but the held-out accuracy swings by ±0.1 between
evaluations, and 600 steps stop short of 0.9.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import torch

from tiny_model import grpo
from tiny_model.grpo import ALL_METHODS, LOSS_AGG_MODES, token_logprobs
from tiny_model.model import TinyModel
from tiny_model.seam import Functions, has_reference, reference
from tiny_model.task import DEFAULT, SumTask, response_mask
from tiny_model.thr import REGULARISED, THR_METHODS
from tiny_model.warm import greedy_accuracy, sampled_accuracy

LR_SCHEDULES = ("cosine", "constant")
EVAL_SEED_OFFSET = 1_000_003  # held-out draws: their own stream, the same for every method
PASS_SEED_OFFSET = 2_000_003  # the Pass@K draws: another stream of their own
PASS_K = (1, 2, 4, 8)  # Pass@K reported at these K (unbiased estimator from pass_samples draws)
DIVERSITY = ("heldout_distinct_correct", "heldout_top_path_share", "heldout_path_entropy")
"""Multi-answer tasks only (``task.any_pair``), from the Pass@K draws: the mean number of
distinct correct responses among a problem's draws, the commonest correct response's share
of its correct draws (mean over the problems with at least one; 1 = collapsed onto one path),
and the entropy in nats of how the correct draws spread over the right paths (mean over the same
problems; 0 = collapsed, ln 3 = 1.099 at most). The last two are read among the correct draws
only, so they do not follow accuracy the way the count of distinct right answers does."""
THR_DOMINANCE = ("thr", "score")


def pass_ks(samples: int) -> tuple[int, ...]:
    """The K reported from ``samples`` draws per problem: the powers of 2 up to ``samples``."""
    return tuple(2**i for i in range(samples.bit_length()) if 2**i <= samples)


@dataclass
class TrainConfig:
    """A GRPO run from the warm model (one field, one knob)."""

    method: str = "grpo"
    """grpo, pos_only, nthr, random, thr_exploit, thr_explore, nll or smaug (see grpo.py)."""
    steps: int = 800
    """Optimizer iterations over fresh batches of training problems (the schedule's length)."""
    stop_after: int | None = None
    """Stop after this many steps, the schedule unchanged: the first part of a ``steps`` run."""
    prompts_per_step: int = 16
    """Groups per batch (problems drawn uniformly from the training split)."""
    group_size: int = 8
    """G: responses sampled per problem."""
    lr: float = 5e-4
    """Peak Adam learning rate."""
    lr_warmup: int = 50
    """Steps of linear ramp from 0 to lr (a fresh Adam's first steps move every coordinate by lr)."""
    lr_schedule: str = "cosine"
    """After the ramp: ``cosine`` decay to 0 at ``steps``, or ``constant``."""
    inner_steps: int = 1
    """mu: updates per batch; clipping binds only from the second one."""
    clip_eps: float | None = 0.2
    """PPO/GRPO ratio clipping; None disables it."""
    kl_coef: float = 0.0
    """Weight of the k3 KL to the frozen warm model (always logged)."""
    loss_agg: str = "seq-mean-token-mean"
    """One of LOSS_AGG_MODES (notebook 03)."""
    nthr_beta: float = 1.0
    """NTHR threshold tau = beta * min over correct responses of their mean score."""
    eta: float | None = None
    """Weight on selected negative tokens; None: eta_schedule(group success rate), as in the paper."""
    temperature: float = 1.0
    """Sampling temperature (1: on-policy for the loss's log likelihoods)."""
    eval_every: int = 50
    """Held-out evaluation every this many steps (and at step 0 and at the end)."""
    eval_samples: int = 4
    """Sampled responses per held-out problem at each evaluation."""
    seed: int = 0
    """Seeds problem draws, sampling, the random baseline and the held-out draws."""
    task: SumTask = field(default_factory=lambda: DEFAULT)
    """The task (its split gives the training and held-out problems)."""
    clip_eps_high: float | None = None
    """Clip-higher (DAPO): the ratio's upper bound is 1 + clip_eps_high; None: 1 + clip_eps."""
    thr_p: float = 0.5
    """|p| of the THR methods: weights 1 ± p on dominant tokens (thr_exploit +p, thr_explore -p)."""
    nll_coef: float = 0.1
    """Weight of the NLL on correct responses (method nll; VAPO's mu = 0.1)."""
    smaug_coef: float = 1.0
    """Weight of the SMAUG-style floor max(0, ln pi_ref(y+) - ln pi(y+)) (method smaug)."""
    pass_samples: int = 8
    """Samples per held-out problem for Pass@K (K: the powers of 2 up to this, ``pass_ks``)."""
    thr_dominance: str = "thr"
    """Which THR tokens are dominant: ``thr``, |A·s| > tau (the paper's "high absolute THR");
    ``score``, |s| > tau (this course's first reading, kept for the studies made with it)."""
    thr_mask: bool = False
    """thr_exploit / thr_explore also mask the tokens that are not dominant (weight 0): the "mask
    plus sign" reading of the THR paper's reviews (grpo.thr_token_weights); False: they keep 1."""

    def to_dict(self) -> dict:
        d = asdict(self)
        d["task"] = self.task.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> TrainConfig:
        d = dict(d)
        if isinstance(d.get("task"), dict):
            d["task"] = SumTask(**d["task"])
        d.setdefault("thr_dominance", "score")  # studies made before the choice was recorded
        return cls(**d)

    def evaluated(self) -> tuple[str, ...]:
        """The keys of each held-out evaluation of this config's runs."""
        keys = EVALUATED[:4] + tuple(f"heldout_pass@{k}" for k in pass_ks(self.pass_samples))
        return keys + (DIVERSITY if self.task.any_pair else ())

    def check(self) -> None:
        """Raise ValueError for settings that cannot run."""
        if self.method not in ALL_METHODS:
            raise ValueError(f"unknown method {self.method!r}; expected one of {ALL_METHODS}")
        if self.loss_agg not in LOSS_AGG_MODES:
            raise ValueError(f"unknown loss aggregation {self.loss_agg!r}")
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"unknown lr schedule {self.lr_schedule!r}; one of {LR_SCHEDULES}")
        if self.steps < 0 or self.eval_every < 1 or self.group_size < 2:
            raise ValueError("steps >= 0, eval_every >= 1 and group_size >= 2 are needed")
        if self.stop_after is not None and self.stop_after < 0:
            raise ValueError("stop_after must be >= 0 (or None)")
        if self.pass_samples < max(PASS_K):
            raise ValueError(f"pass_samples must be >= {max(PASS_K)} (Pass@{max(PASS_K)})")
        if self.thr_dominance not in THR_DOMINANCE:
            raise ValueError(f"thr_dominance must be one of {THR_DOMINANCE}")
        if not 0.0 <= self.thr_p <= 1.0:
            raise ValueError("thr_p must be in [0, 1]")
        if self.thr_mask and self.method not in ("thr_exploit", "thr_explore"):
            raise ValueError(
                "thr_mask goes with thr_exploit or thr_explore (thr_only masks anyway)"
            )
        if self.clip_eps_high is not None and (self.clip_eps is None or self.clip_eps_high < 0):
            raise ValueError("clip_eps_high needs clip_eps (the lower bound) and must be >= 0")

    def lr_factor(self, step: int) -> float:
        """The multiplier of lr at optimizer step ``step`` (0-based)."""
        ramp = min(1.0, (step + 1) / self.lr_warmup) if self.lr_warmup > 0 else 1.0
        if self.lr_schedule == "cosine" and self.steps > 0:
            return ramp * 0.5 * (1 + math.cos(math.pi * step / self.steps))
        return ramp


@dataclass
class TrainResult:
    config: TrainConfig
    history: dict[str, list[float]] = field(default_factory=dict)
    model: TinyModel | None = None

    def to_dict(self) -> dict:
        return {"config": self.config.to_dict(), "history": self.history}


LOGGED = (
    "reward_mean",  # mean reward of the sampled batch
    "zero_adv_frac",  # fraction of groups whose advantages are all 0 (all right / all wrong)
    "kl_ref",  # mean k3 KL(pi || ref) per sampled token, before the update (nan: no k3)
    "correct_logp_change",  # mean over mixed groups of the Eq. 2 change of this step's update
    "selected_frac",  # negative tokens whose weight the method changed / negative tokens
    "response_len",  # mean tokens up to and including EOS
    "clip_frac",  # fraction of tokens with |ratio - 1| > clip_eps (last inner step)
    "loss",
    "lr",  # the learning rate of this step
    "correct_logp",  # mean ln pi(y+|x) of this batch's sampled correct responses, before the step
) + grpo.REWEIGHTING  # what the method's weights did to the batch, by THR sign and by path
EVALUATED = (
    "eval_step",  # steps taken before the evaluation (0 = the warm model)
    "heldout_accuracy",  # sampled accuracy on the held-out problems
    "heldout_answer_logp",  # mean ln pi(correct scratchpad | x) on the held-out problems
    "heldout_greedy_accuracy",  # greedy decoding on the held-out problems
) + tuple(f"heldout_pass@{k}" for k in PASS_K)  # Pass@K, unbiased from pass_samples draws


def pass_at_k(n_correct: torch.Tensor, n: int, k: int) -> float:
    """Mean over problems of 1 - C(n - c, k) / C(n, k): P(some of k of the n draws is right)."""
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")
    c = n_correct.to(torch.float64)  # (N,)
    # C(n - c, k) / C(n, k) = prod_{j=0}^{k-1} (n - c - j) / (n - j), 0 once n - c < k
    miss = torch.ones_like(c)
    for j in range(k):
        miss = miss * ((n - c - j).clamp(min=0) / (n - j))
    return float((1 - miss).mean())


@torch.no_grad()
def pass_at_ks(
    model: TinyModel, problems: torch.Tensor, samples: int, seed: int, task: SumTask
) -> dict[int, float]:
    """Pass@K for K in ``pass_ks(samples)`` on ``problems`` from ``samples`` draws each (T = 1)."""
    return pass_and_diversity(model, problems, samples, seed, task)[0]


@torch.no_grad()
def pass_and_diversity(
    model: TinyModel, problems: torch.Tensor, samples: int, seed: int, task: SumTask
) -> tuple[dict[int, float], dict[str, float]]:
    """Pass@K and, for a multi-answer task, DIVERSITY's two metrics, from the same draws."""
    device = next(model.parameters()).device
    gen = torch.Generator(device=device).manual_seed(seed)
    prompts = task.prompt_tokens(problems)  # (N, P)
    responses = grpo.sample_responses(model, prompts, samples, gen, 1.0, task.response_len)
    right = task.rewards(problems, responses) > 0.5  # (N, S)
    c = right.sum(dim=1)  # (N,) correct draws per problem
    passes = {k: pass_at_k(c, samples, k) for k in pass_ks(samples)}
    return passes, (diversity(problems, responses, task) if task.any_pair else {})


def diversity(problems: torch.Tensor, responses: torch.Tensor, task: SumTask) -> dict[str, float]:
    """DIVERSITY's two metrics of (N, S, R) draws for (N, terms) problems.

    ``heldout_distinct_correct``: mean over problems of how many distinct correct responses
    the draws hold; ``heldout_top_path_share``: mean, over the problems with a correct draw, of
    the commonest correct response's share of the correct draws (nan when none has one);
    ``heldout_path_entropy``: mean over the same problems of the entropy (nats) of the correct
    draws' shares over the paths."""
    paths, distinct = task.correct_paths(problems)  # (N, K, R), (N, K)
    hits = (responses.unsqueeze(2) == paths.unsqueeze(1)).all(dim=-1) & distinct.unsqueeze(1)
    per_path = hits.sum(dim=1)  # (N, K) draws of each distinct correct path
    c = per_path.sum(dim=1)  # (N,) correct draws
    n_distinct = (per_path > 0).sum(dim=1).double()  # (N,)
    has = c > 0
    share = per_path.max(dim=1).values[has].double() / c[has].double()
    q = per_path[has].double() / c[has].double().unsqueeze(1)  # (n_has, K) shares of the paths
    entropy = -(q * torch.log(q.clamp(min=1e-300))).sum(dim=1)  # (n_has,) 0 log 0 = 0
    some = bool(has.any())
    return {
        "heldout_distinct_correct": float(n_distinct.mean()),
        "heldout_top_path_share": float(share.mean()) if some else float("nan"),
        "heldout_path_entropy": float(entropy.mean()) if some else float("nan"),
    }


def answer_logprob(
    fns: Functions, model: TinyModel, problems: torch.Tensor, task: SumTask = DEFAULT
) -> float:
    """Mean sequence log likelihood of the correct scratchpads of ``problems`` (N, terms).

    On a multi-answer task, of the set of correct scratchpads: ln of the summed probability of
    a problem's distinct correct responses (logsumexp of their sequence log likelihoods)."""
    target, distinct = task.correct_paths(problems)  # (N, K, R), (N, K)
    with torch.no_grad():
        logits, _ = grpo.response_forward(model, problems, target, task=task)  # (N, K, R, V)
    mask = response_mask(target)  # (N, K, R)
    seq = grpo.grouped_logprobs(fns, logits, target, mask)  # (N, K)
    seq = seq.masked_fill(~distinct, float("-inf"))
    return float(torch.logsumexp(seq, dim=1).mean())


def regulariser(
    config: TrainConfig,
    logp: torch.Tensor,
    ref_logp: torch.Tensor,
    mask: torch.Tensor,
    correct: torch.Tensor,
    fns: Functions | None = None,
) -> torch.Tensor:
    """The extra loss of method nll or smaug: logp, ref_logp, mask (B, R), correct (B,).

    The seam's ``nll_on_correct`` / ``smaug_floor`` (notebook 07) when ``fns`` has them, else
    tiny_model's reference (reference.py)."""
    if config.method == "nll":
        nll = fns.nll_on_correct if fns is not None and fns.nll_on_correct else None
        return config.nll_coef * (nll or reference("nll_on_correct"))(logp, mask, correct)
    floor = fns.smaug_floor if fns is not None and fns.smaug_floor else reference("smaug_floor")
    m = mask.to(logp.dtype)
    seq, ref_seq = (logp * m).sum(dim=-1), (ref_logp * m).sum(dim=-1)  # (B,), (B,)
    return config.smaug_coef * floor(seq, ref_seq, correct)


def train(
    fns: Functions,
    model: TinyModel,
    config: TrainConfig,
    *,
    progress: Callable[[int], object] | None = None,
    step0: dict[str, float] | None = None,
) -> TrainResult:
    """Run ``config.steps`` GRPO steps on ``model`` in place (a frozen copy is the KL reference).

    ``step0``: the held-out evaluation at step 0 (:func:`step0_evaluation` of another run's
    history) to log instead of evaluating again. It depends on the model, ``fns`` and the
    config's seed, task, eval_samples and pass_samples, never on the method: study.run_study
    evaluates each seed's warm model once and passes it to that seed's other methods.
    """
    with grpo.single_thread():
        return _train(fns, model, config, progress, step0)


def step0_evaluation(history: dict[str, list[float]]) -> dict[str, float]:
    """The held-out evaluation at step 0 of a run's history (EVALUATED's first entries)."""
    if not history.get("eval_step") or history["eval_step"][0] != 0:
        raise ValueError("this history has no evaluation at step 0")
    return {k: v[0] for k, v in history.items() if k in EVALUATED or k.startswith("heldout_")}


def _train(
    fns: Functions,
    model: TinyModel,
    config: TrainConfig,
    progress: Callable[[int], object] | None,
    step0: dict[str, float] | None = None,
) -> TrainResult:
    config.check()
    if config.method in THR_METHODS:
        fns.require("prediction_errors", "token_scores")
    if config.method in ("nthr", "random"):
        fns.require("prediction_errors", "token_scores", "nthr_weights")
        if config.eta is None:
            fns.require("eta_schedule")
    task = config.task
    device = next(model.parameters()).device
    ref = copy.deepcopy(model).eval().requires_grad_(False)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, config.lr_factor)
    gen = torch.Generator(device=device).manual_seed(config.seed)
    cpu_gen = torch.Generator().manual_seed(config.seed + 1)
    train_problems, held = (p.to(device) for p in task.split())  # (n_train, terms), (n_held, terms)
    evaluated = config.evaluated()
    history: dict[str, list[float]] = {k: [] for k in LOGGED + evaluated}

    def evaluate(step: int) -> None:
        was = model.training
        model.eval()
        history["eval_step"].append(float(step))
        history["heldout_accuracy"].append(
            sampled_accuracy(
                model,
                seed=config.seed + EVAL_SEED_OFFSET,
                samples=config.eval_samples,
                problems=held,
                task=task,
            )
        )
        history["heldout_answer_logp"].append(answer_logprob(fns, model, held, task))
        history["heldout_greedy_accuracy"].append(greedy_accuracy(model, problems=held, task=task))
        passes, spread = pass_and_diversity(
            model, held, config.pass_samples, config.seed + PASS_SEED_OFFSET, task
        )
        for k, v in passes.items():
            history[f"heldout_pass@{k}"].append(v)
        for k, v in spread.items():
            history[k].append(v)
        model.train(was)

    if step0 is None:
        evaluate(0)
    else:
        if set(step0) != set(evaluated) or step0["eval_step"] != 0:
            raise ValueError(f"step0 must hold {', '.join(evaluated)} at eval_step 0")
        for k in evaluated:
            history[k].append(float(step0[k]))
    # the k3 KL to the warm model, logged every step: tiny_model's reference, or where the
    # installation has none (the course form) nan, unless the loss needs it (kl_coef > 0)
    k3 = reference("k3") if has_reference() or config.kl_coef else None
    last = config.steps if config.stop_after is None else min(config.stop_after, config.steps)
    for step in range(last):
        idx = torch.randint(
            0, train_problems.shape[0], (config.prompts_per_step,), generator=cpu_gen
        )
        batch = train_problems[idx.to(device)]  # (N, terms)
        groups = grpo.sample_groups(
            model, batch, config.group_size, gen, config.temperature, task=task
        )
        adv = torch.as_tensor(fns.group_advantages(groups.rewards)).to(device)  # (N, G)
        # one forward at θ gives the old log likelihoods and the first inner step's loss (the
        # same numbers as a separate no-grad forward, bit for bit); the seam's functions get
        # copies, so that one writing into its input cannot touch the graph
        logits, hidden = grpo.response_forward(model, groups.problems, groups.responses, task=task)
        logits_old, hidden_old = logits.detach().clone(), hidden.detach().clone()
        with torch.no_grad():
            logp_old = token_logprobs(logits_old, groups.responses)  # (N, G, R)
            ref_logits, _ = grpo.response_forward(ref, groups.problems, groups.responses, task=task)
            ref_logp = token_logprobs(ref_logits, groups.responses)  # (N, G, R)
            seq_before = grpo.grouped_logprobs(fns, logits_old, groups.responses, groups.mask)
        if config.method in ("nthr", "random") and config.eta is None:
            eta = torch.tensor(
                [float(fns.eta_schedule(float(p))) for p in groups.rewards.mean(dim=1)]
            )  # (N,) per-group eta = 2|0.5 - p|
        else:
            eta = 0.0 if config.eta is None else config.eta
        tw = grpo.token_weights(
            config.method,
            fns,
            groups,
            adv,
            logits_old,
            hidden_old,
            beta=config.nthr_beta,
            eta=eta,
            generator=cpu_gen,
            thr_p=config.thr_p,
            thr_dominance=config.thr_dominance,
            thr_mask=config.thr_mask,
        )
        shares = grpo.reweighting_stats(
            groups, tw.weights, tw.scores if config.method in THR_METHODS else None
        )
        tok_adv = (adv.unsqueeze(-1) * tw.weights).flatten(0, 1)  # (N*G, R)
        mask = groups.mask.flatten(0, 1)  # (N*G, R)
        correct = groups.correct.flatten()  # (N*G,)
        lr_now = opt.param_groups[0]["lr"]
        for inner in range(config.inner_steps):
            if inner:  # θ moved: forward again
                logits, _ = grpo.response_forward(
                    model, groups.problems, groups.responses, task=task
                )
            logp = token_logprobs(logits, groups.responses).flatten(0, 1)  # (N*G, R)
            loss, stats = grpo.surrogate_loss(
                fns,
                logp,
                logp_old.flatten(0, 1),
                tok_adv,
                mask,
                clip_eps=config.clip_eps,
                kl_coef=config.kl_coef,
                ref_logp=ref_logp.flatten(0, 1),
                loss_agg=config.loss_agg,
                clip_eps_high=config.clip_eps_high,
            )
            if config.method in REGULARISED:
                loss = loss + regulariser(config, logp, ref_logp.flatten(0, 1), mask, correct, fns)
                stats["loss"] = float(loss.detach())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        sched.step()
        with torch.no_grad():
            logits_new, _ = grpo.response_forward(
                model, groups.problems, groups.responses, task=task
            )
            seq_after = grpo.grouped_logprobs(fns, logits_new, groups.responses, groups.mask)
        mixed = groups.mixed.nonzero().flatten().tolist()
        changes = [
            float(fns.likelihood_change(seq_before[i], seq_after[i], groups.correct[i]))
            for i in mixed
        ]
        m = groups.mask.float()
        kl = float((k3(logp_old, ref_logp) * m).sum() / m.sum()) if k3 else float("nan")
        history["reward_mean"].append(float(groups.rewards.mean()))
        history["zero_adv_frac"].append(float((adv == 0).all(dim=1).float().mean()))
        history["kl_ref"].append(kl)
        history["correct_logp_change"].append(
            math.fsum(changes) / len(changes) if changes else float("nan")
        )
        history["selected_frac"].append(tw.modified_fraction)
        history["response_len"].append(float(m.sum(dim=-1).mean()))
        history["clip_frac"].append(stats["clip_frac"])
        history["loss"].append(stats["loss"])
        history["lr"].append(lr_now)
        right = seq_before[groups.correct]  # (n_correct,) ln pi of the sampled correct responses
        history["correct_logp"].append(float(right.mean()) if right.numel() else float("nan"))
        for k, v in shares.items():
            history[k].append(v)
        if (step + 1) % config.eval_every == 0 or step + 1 == last:
            evaluate(step + 1)
        if progress is not None:
            progress(1)
    return TrainResult(config=config, history=history, model=model)
