"""notebook: 07_beyond_nthr
function: nll_on_correct
library: OpenRLHF/OpenRLHF@3c3be6234e0c openrlhf/models/loss.py (SFTLoss.forward, token_level_loss=True, via aggregate_loss and openrlhf/models/utils.py masked_mean)
slip: the library's token-level NLL is (-logp * mask).sum() / mask.sum() with no guard, so a batch with no correct response gives 0 / 0 = NaN instead of 0 (with the correct rows folded into the loss mask it otherwise agrees with the text)."""

import torch


def _require(x, name, ndim, kind):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")
    if kind == "bool" and x.dtype != torch.bool:
        raise ValueError(f"{name} must be a bool tensor, got {x.dtype}")
    if kind == "float":
        if not x.is_floating_point():
            raise ValueError(f"{name} must be a floating tensor, got {x.dtype}")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or inf")


def nll_on_correct(logp, mask, correct):
    """OpenRLHF's token-level SFT loss on the correct responses: masked mean of -logp."""
    _require(logp, "logp", 2, "float")
    _require(mask, "mask", 2, "bool")
    _require(correct, "correct", 1, "bool")
    if mask.shape != logp.shape:
        raise ValueError(f"mask {tuple(mask.shape)} and logp {tuple(logp.shape)} differ")
    if correct.shape[0] != logp.shape[0]:
        raise ValueError(f"correct has {correct.shape[0]} entries, logp has {logp.shape[0]} rows")
    # the course's `correct` selects rows: folded into the loss mask the library receives
    loss_mask = (mask & correct.unsqueeze(-1)).to(logp.dtype)
    per_token = -logp
    return (per_token * loss_mask).sum() / loss_mask.sum()
