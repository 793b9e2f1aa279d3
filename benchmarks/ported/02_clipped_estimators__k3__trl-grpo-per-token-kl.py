"""notebook: 02_clipped_estimators
function: k3
library: huggingface/trl@f2cd57710ae3 trl/trainer/grpo_trainer.py (GRPOTrainer._compute_loss, per_token_kl)
slip: none: agrees with the text (exp(ref - logp) - (ref - logp) - 1, no clamp, in the inputs' own precision)."""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    """Both inputs as float64 arrays, checked as the notebook's text asks."""
    a = np.asarray(logp, dtype=np.float64)
    b = np.asarray(ref_logp, dtype=np.float64)
    for name, x in (("logp", a), ("ref_logp", b)):
        if not np.isfinite(x).all():
            raise ValueError(f"{name} holds a non-finite entry (NaN or inf)")
        if (x > 0).any():
            raise ValueError(f"{name} holds an entry above 0: not a log probability")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError as exc:
        raise ValueError(f"shapes {a.shape} and {b.shape} do not broadcast") from exc
    return a, b


def k3(logp, ref_logp):
    """k3 as TRL's GRPO trainer computes its per-token KL term."""
    a, b = _log_prob_arrays(logp, ref_logp)
    gap = b - a  # ref log prob minus policy log prob, per token
    return np.exp(gap) - gap - 1.0
