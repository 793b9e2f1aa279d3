"""A nanoGPT-style decoder, small enough to train on a laptop CPU in seconds.

``TinyModel.forward(idx)`` returns ``(logits, hidden)``: the hidden states are
the last layer's, after the final LayerNorm, and the logits are exactly
``lm_head(hidden)`` (no bias, no tied weights), so the hidden states that NTHR
scores are the ones the logits are computed from.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass(frozen=True)
class TinyConfig:
    vocab_size: int = 14  # the task's vocabulary: task.VOCAB_SIZE
    block_size: int = 16  # longest sequence: prompt (7) + response (5) fits
    n_layer: int = 2
    n_head: int = 4
    d_model: int = 64
    bias: bool = True  # biases in Linear layers and LayerNorms (never in lm_head)

    def to_dict(self) -> dict:
        return asdict(self)


class CausalSelfAttention(nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        assert config.d_model % config.n_head == 0
        self.n_head = config.n_head
        self.c_attn = nn.Linear(config.d_model, 3 * config.d_model, bias=config.bias)
        self.c_proj = nn.Linear(config.d_model, config.d_model, bias=config.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape  # (B, T, C)
        nh, hs = self.n_head, C // self.n_head
        q, k, v = self.c_attn(x).split(C, dim=2)  # 3 x (B, T, C)
        q = q.view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)  # (B, nh, T, T)
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()  # (T, T)
        att = att.masked_fill(~causal, float("-inf")).softmax(dim=-1)  # (B, nh, T, T)
        y = att @ v  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.c_proj(y)  # (B, T, C)

    def forward_cached(
        self, x: torch.Tensor, past: tuple[torch.Tensor, torch.Tensor] | None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """``forward`` for T new positions after the S - T cached ones: x (B, T, C), past the
        keys and values (B, nh, S - T, hs) of the earlier positions (None: there are none)
        -> (y (B, T, C), the keys and values of all S positions)."""
        B, T, C = x.shape  # (B, T, C)
        nh, hs = self.n_head, C // self.n_head
        q, k, v = self.c_attn(x).split(C, dim=2)  # 3 x (B, T, C)
        q = q.view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
        if past is not None:
            k = torch.cat([past[0], k], dim=2)  # (B, nh, S, hs)
            v = torch.cat([past[1], v], dim=2)  # (B, nh, S, hs)
        S = k.shape[2]
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)  # (B, nh, T, S)
        causal = torch.ones(T, S, dtype=torch.bool, device=x.device).tril(S - T)  # (T, S)
        att = att.masked_fill(~causal, float("-inf")).softmax(dim=-1)  # (B, nh, T, S)
        y = att @ v  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.c_proj(y), (k, v)


class MLP(nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.c_fc = nn.Linear(config.d_model, 4 * config.d_model, bias=config.bias)
        self.c_proj = nn.Linear(4 * config.d_model, config.d_model, bias=config.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(F.gelu(self.c_fc(x)))  # (B, T, C) -> (B, T, 4C) -> (B, T, C)


class Block(nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.d_model, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.d_model, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))  # (B, T, C)
        return x + self.mlp(self.ln_2(x))  # (B, T, C)

    def forward_cached(
        self, x: torch.Tensor, past: tuple[torch.Tensor, torch.Tensor] | None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        a, kv = self.attn.forward_cached(self.ln_1(x), past)
        x = x + a  # (B, T, C)
        return x + self.mlp(self.ln_2(x)), kv  # (B, T, C)


class TinyModel(nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.d_model)
        self.wpe = nn.Embedding(config.block_size, config.d_model)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.d_model, bias=config.bias)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.apply(self._init_weights)
        for name, p in self.named_parameters():  # GPT-2's scaled init of residual projections
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """idx (B, T) token ids -> (logits (B, T, V), hidden (B, T, C)).

        Position t's logits predict token t + 1; ``hidden`` is the input of
        ``lm_head`` (after the final LayerNorm).
        """
        B, T = idx.shape  # (B, T)
        if T > self.config.block_size:
            raise ValueError(f"sequence of length {T} > block_size {self.config.block_size}")
        pos = torch.arange(T, device=idx.device)  # (T,)
        x = self.wte(idx) + self.wpe(pos)  # (B, T, C) + (T, C) -> (B, T, C)
        for block in self.blocks:
            x = block(x)  # (B, T, C)
        hidden = self.ln_f(x)  # (B, T, C)
        logits = self.lm_head(hidden)  # (B, T, V)
        return logits, hidden

    def forward_cached(
        self, idx: torch.Tensor, past: list[tuple[torch.Tensor, torch.Tensor]] | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, list[tuple[torch.Tensor, torch.Tensor]]]:
        """``forward`` for the tokens idx (B, T) that follow the positions in ``past`` (each
        block's keys and values (B, nh, S - T, hs); None: idx starts the sequence)
        -> (logits (B, T, V), hidden (B, T, C), each block's keys and values of all S positions).

        What sampling uses: the prompt's keys and values are computed once and each new token
        costs one position, not the whole sequence again. The same function as ``forward``;
        the products have other shapes, so a value may differ from ``forward``'s in the last
        float32 bit.
        """
        B, T = idx.shape  # (B, T)
        start = 0 if past is None else past[0][0].shape[2]
        if start + T > self.config.block_size:
            raise ValueError(
                f"sequence of length {start + T} > block_size {self.config.block_size}"
            )
        pos = torch.arange(start, start + T, device=idx.device)  # (T,)
        x = self.wte(idx) + self.wpe(pos)  # (B, T, C)
        kvs = []
        for i, block in enumerate(self.blocks):
            x, kv = block.forward_cached(x, None if past is None else past[i])  # (B, T, C)
            kvs.append(kv)
        hidden = self.ln_f(x)  # (B, T, C)
        return self.lm_head(hidden), hidden, kvs

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
