"""A verifiable task whose wrong answers share correct steps: a+b+c with a scratchpad.

A problem is three single digits. The prompt is ``^a+b+c=`` and the correct
response is the partial sum ``a+b`` as two digits, then the total as two
digits, then EOS (``.``). For 3+4+8 the response is ``07 15.`` (5 tokens; the
space is only for display). A response earns reward 1 when all five tokens are
right, 0 otherwise. A wrong answer usually still carries correct steps (the
leading ``0`` or ``1``, the whole partial sum, the EOS), so pushing it down
also pushes on tokens that correct answers share: what LLD needs.

    >>> format_response(correct_responses(torch.tensor([[3, 4, 8]]))[0])
    '07 15.'
"""

from __future__ import annotations

import torch

# Token ids: the ten digits are their own ids.
PLUS, EQUALS, BOS, EOS = 10, 11, 12, 13
VOCAB = "0123456789+=^."  # one display character per token id
VOCAB_SIZE = len(VOCAB)
PROMPT_LEN = 7  # ^ a + b + c =
RESPONSE_LEN = 5  # s1 s0 t1 t0 .   (partial sum, total, EOS)
N_PROBLEMS = 1000


def all_problems() -> torch.Tensor:
    """All 1000 problems (a, b, c), shape (1000, 3), in lexicographic order."""
    d = torch.arange(10)
    a, b, c = torch.meshgrid(d, d, d, indexing="ij")  # 3 x (10, 10, 10)
    return torch.stack([a, b, c], dim=-1).reshape(N_PROBLEMS, 3)  # (1000, 3)


def prompt_tokens(problems: torch.Tensor) -> torch.Tensor:
    """(N, 3) digits -> (N, 7) prompt tokens ``^ a + b + c =``."""
    n = problems.shape[0]
    out = torch.empty(n, PROMPT_LEN, dtype=torch.long, device=problems.device)  # (N, 7)
    out[:, 0] = BOS
    out[:, 1], out[:, 3], out[:, 5] = problems[:, 0], problems[:, 1], problems[:, 2]
    out[:, 2] = PLUS
    out[:, 4] = PLUS
    out[:, 6] = EQUALS
    return out


def correct_responses(problems: torch.Tensor) -> torch.Tensor:
    """(N, 3) digits -> (N, 5) correct responses: a+b as two digits, total as two digits, EOS."""
    partial = problems[:, 0] + problems[:, 1]  # (N,)
    total = partial + problems[:, 2]  # (N,)
    eos = torch.full_like(partial, EOS)  # (N,)
    return torch.stack([partial // 10, partial % 10, total // 10, total % 10, eos], dim=1)


def response_mask(responses: torch.Tensor) -> torch.Tensor:
    """(..., 5) responses -> (..., 5) bool: the tokens up to and including the first EOS."""
    is_eos = (responses == EOS).long()  # (..., 5)
    eos_before = torch.cumsum(is_eos, dim=-1) - is_eos  # (..., 5) EOS strictly before t
    return eos_before == 0


def rewards(problems: torch.Tensor, responses: torch.Tensor) -> torch.Tensor:
    """Verify: (N, 3) problems, (N, G, 5) or (N, 5) responses -> float rewards (N, G) or (N,).

    1.0 when the response is exactly the correct scratchpad (both steps and
    the EOS), else 0.0.
    """
    target = correct_responses(problems)  # (N, 5)
    if responses.ndim == 3:
        target = target.unsqueeze(1)  # (N, 1, 5) broadcasts over G
    return (responses == target).all(dim=-1).float()


def format_tokens(tokens: torch.Tensor | list[int]) -> str:
    """Token ids -> their display characters (``[12, 3, 10]`` -> ``'^3+'``)."""
    return "".join(VOCAB[int(t)] for t in tokens)


def format_prompt(problem: torch.Tensor | list[int]) -> str:
    """A problem (a, b, c) -> ``'a+b+c='``."""
    a, b, c = (int(x) for x in problem)
    return f"{a}+{b}+{c}="


def format_response(response: torch.Tensor | list[int]) -> str:
    """A 5-token response -> ``'07 15.'`` (a space after the partial sum; tokens after EOS dropped)."""
    ids = [int(t) for t in response]
    if EOS in ids:
        ids = ids[: ids.index(EOS) + 1]
    text = format_tokens(ids)
    return text[:2] + " " + text[2:] if len(text) > 2 else text
