"""The first-order identity behind the SGD probe: on average the negative gradient helps.

Take one prompt x. With an exact-match reward the correct set C holds one
response y⁺, so P(C) = π(y⁺|x) and ∇P(C) = P(C)·g⁺ with g⁺ = ∇ln π(y⁺|x).
For the wrong set W, Σ_{y∈W} π(y) = 1 − P(C), hence
Σ_{y∈W} π(y) ∇ln π(y) = Σ_{y∈W} ∇π(y) = −∇P(C), and a wrong response sampled
on-policy at temperature 1 has

    E[∇ln π(y) | y ∈ W] = −∇P(C) / P(W) = −P(C)·g⁺ / P(W).

A plain gradient step changes ln π(y⁺) by lr·⟨step direction, g⁺⟩ to first
order. GRPO's step minus positive-only's is the wrong responses' part,
(1/G) Σ_{j∈W} (A⁻/L) ∇ln π(y_j) with L = the length normaliser (constant for
Dr. GRPO's ``seq-mean-token-sum-norm``), so given k correct of G:

    E[Δ_GRPO − Δ_pos] = lr · |A⁻| · (G−k)/(G·L) · P(C)·‖g⁺‖² / P(W)
                      = lr · |A⁻| · (G−k)/(G·L) · ‖∇P(C)‖² / (P(C)·P(W))  ≥ 0.

For any model and any task. ``check_identity`` measures both sides on the
warm model: for each prompt it samples many groups, takes the directional
derivative D_j = ⟨∇ln π(y_j), g⁺⟩ of every sampled response (one forward-mode
pass), and compares the group averages of (1/G) Σ_{j∈W} (A_j/L)·D_j with the
formula at each group's k. Adam's step is not a gradient step (each
coordinate is divided by its own |g|), so the identity says nothing about it:
that is why the Adam probe can show what the SGD probe cannot.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import torch
from torch.func import functional_call, jvp

from tiny_model import grpo, task
from tiny_model.model import TinyModel
from tiny_model.seam import Functions


@dataclass
class IdentityResult:
    """Per prompt: both sides of the identity, per unit learning rate (Dr. GRPO's L = 5)."""

    problems: torch.Tensor  # (N, 3)
    p_correct: np.ndarray  # (N,) P(C) = π(y⁺|x)
    grad_sq: np.ndarray  # (N,) ‖∇ln π(y⁺|x)‖²
    wrong_mean: np.ndarray  # (N,) mean over sampled wrong responses of D = ⟨∇ln π(y), g⁺⟩
    wrong_predicted: np.ndarray  # (N,) −P(C)·‖g⁺‖²/P(W)
    measured: np.ndarray  # (N,) mean over mixed groups of Δ_GRPO − Δ_pos (first order, / lr)
    measured_se: np.ndarray  # (N,) its standard error over the groups
    predicted: np.ndarray  # (N,) mean over the same groups of the formula at their k
    mixed_groups: np.ndarray  # (N,) how many of the resampled groups were mixed
    group_size: int = 8
    length: int = task.RESPONSE_LEN

    def agreement(self, z: float = 4.0) -> float:
        """Fraction of prompts whose measured mean lies within z standard errors of the formula."""
        ok = np.abs(self.measured - self.predicted) <= z * np.maximum(self.measured_se, 1e-30)
        return float(np.mean(ok))

    def table(self) -> str:
        lines = [
            f"first-order identity, {len(self.problems)} prompts, G={self.group_size}, "
            f"L={self.length} (per unit lr; mean over each prompt's mixed groups)",
            f"{'prompt':<8}{'P(C)':>7}{'groups':>7}{'E[D|W] meas':>13}{'formula':>11}"
            f"{'Δgap meas':>12}{'± se':>10}{'formula':>11}",
        ]
        for i in range(len(self.problems)):
            lines.append(
                f"{task.format_prompt(self.problems[i]):<8}{self.p_correct[i]:>7.3f}"
                f"{int(self.mixed_groups[i]):>7d}{self.wrong_mean[i]:>13.3e}"
                f"{self.wrong_predicted[i]:>11.3e}{self.measured[i]:>12.3e}"
                f"{self.measured_se[i]:>10.1e}{self.predicted[i]:>11.3e}"
            )
        lines.append(
            f"mean over prompts: measured {self.measured.mean():+.3e}, formula "
            f"{self.predicted.mean():+.3e}; same sign on {np.mean(np.sign(self.measured) == np.sign(self.predicted)):.0%}"
            f" of prompts; within 4 se on {self.agreement():.0%}"
        )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _pick_prompts(
    model: TinyModel, n: int, generator: torch.Generator, lo: float, hi: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """The first ``n`` training problems of a seeded order with lo <= P(C) <= hi: (n, 3), (n,)."""
    device = next(model.parameters()).device
    pool = task.train_problems()  # (800, 3)
    problems = pool[torch.randperm(pool.shape[0], generator=generator)].to(device)  # (800, 3)
    target = task.correct_responses(problems).unsqueeze(1)  # (800, 1, 5)
    with torch.no_grad():
        logits, _ = grpo.response_forward(model, problems, target)
    p = grpo.token_logprobs(logits, target).sum(-1).squeeze(1).exp()  # (800,)
    keep = ((p >= lo) & (p <= hi)).nonzero().flatten()[:n]
    return problems[keep], p[keep]


def check_identity(
    model: TinyModel,
    fns: Functions,
    prompts: int = 12,
    resamples: int = 64,
    group_size: int = 8,
    seed: int = 0,
    p_range: tuple[float, float] = (0.1, 0.9),
) -> IdentityResult:
    """Measure both sides of the identity on ``prompts`` prompts, ``resamples`` groups each.

    Uses ``fns.group_advantages`` for A and ``fns.sequence_logprobs`` for ln π
    (the seam), on-policy samples at temperature 1, and the directional
    derivatives D_j from one forward-mode (jvp) pass per prompt. The model is
    not changed.
    """
    with grpo.single_thread():
        return _check_identity(model, fns, prompts, resamples, group_size, seed, p_range)


def _check_identity(model, fns, prompts, resamples, group_size, seed, p_range) -> IdentityResult:
    was_training = model.training
    model.eval()
    gen = torch.Generator(device=next(model.parameters()).device).manual_seed(seed)
    problems, p_c = _pick_prompts(model, prompts, torch.Generator().manual_seed(seed), *p_range)
    params = {k: p.detach() for k, p in model.named_parameters()}
    L = task.RESPONSE_LEN
    cols: dict[str, list[float]] = {
        k: []
        for k in ("grad_sq", "wrong_mean", "wrong_pred", "measured", "se", "predicted", "mixed")
    }
    for i in range(problems.shape[0]):
        x = problems[i : i + 1]  # (1, 3)
        target = task.correct_responses(x).unsqueeze(1)  # (1, 1, 5)
        mask_t = task.response_mask(target)

        def logp_correct(p: dict, x=x, target=target, mask_t=mask_t) -> torch.Tensor:
            logits, _ = grpo.response_forward(
                lambda idx: functional_call(model, p, (idx,)), x, target
            )
            return grpo.grouped_logprobs(fns, logits, target, mask_t)[0, 0]

        g_plus = torch.func.grad(logp_correct)(params)  # g⁺ = ∇ln π(y⁺|x), a dict like params
        grad_sq = float(sum((g**2).sum() for g in g_plus.values()))
        groups = grpo.sample_groups(model, x.expand(resamples, 3), group_size, gen)  # R groups

        def logp_sampled(p: dict, groups=groups) -> torch.Tensor:
            logits, _ = grpo.response_forward(
                lambda idx: functional_call(model, p, (idx,)), groups.problems, groups.responses
            )
            return grpo.grouped_logprobs(fns, logits, groups.responses, groups.mask)  # (R, G)

        with warnings.catch_warnings():  # torch's forward-AD set-up warns about torch.jit
            warnings.simplefilter("ignore", DeprecationWarning)
            _, D = jvp(logp_sampled, (params,), (g_plus,))  # (R, G) ⟨∇ln π(y_j), g⁺⟩
        D = D.double().cpu()
        adv = torch.as_tensor(fns.group_advantages(groups.rewards)).double().cpu()  # (R, G)
        wrong = ~groups.correct.cpu()  # (R, G)
        mixed = groups.mixed.cpu()  # (R,)
        p = float(p_c[i])
        k = groups.correct.sum(dim=1).cpu().double()  # (R,)
        gap = (adv * D * wrong).sum(dim=1) / (group_size * L)  # (R,) wrong responses' part
        a_neg = -(adv * wrong).sum(dim=1) / (group_size - k).clamp(min=1)  # (R,) |A⁻|
        pred = a_neg * (group_size - k) / (group_size * L) * p * grad_sq / (1 - p)  # (R,)
        g_m, p_m = gap[mixed], pred[mixed]
        n_m = int(mixed.sum())
        cols["grad_sq"].append(grad_sq)
        cols["wrong_mean"].append(float(D[wrong].mean()) if bool(wrong.any()) else float("nan"))
        cols["wrong_pred"].append(-p * grad_sq / (1 - p))
        cols["measured"].append(float(g_m.mean()) if n_m else float("nan"))
        cols["se"].append(float(g_m.std() / n_m**0.5) if n_m > 1 else float("nan"))
        cols["predicted"].append(float(p_m.mean()) if n_m else float("nan"))
        cols["mixed"].append(n_m)
    model.train(was_training)
    arr = {k: np.asarray(v, dtype=np.float64) for k, v in cols.items()}
    return IdentityResult(
        problems=problems.cpu(),
        p_correct=p_c.detach().cpu().double().numpy(),
        grad_sq=arr["grad_sq"],
        wrong_mean=arr["wrong_mean"],
        wrong_predicted=arr["wrong_pred"],
        measured=arr["measured"],
        measured_se=arr["se"],
        predicted=arr["predicted"],
        mixed_groups=arr["mixed"].astype(int),
        group_size=group_size,
        length=L,
    )
