"""The harness: devices, determinism, atomic JSON files, progress bars, PNG figures."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import torch


def resolve_device(name: str = "auto") -> torch.device:
    """'auto' -> cuda when available, else cpu; 'cpu' / 'cuda' as given."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda, but torch sees no CUDA device")
    if name not in ("cpu", "cuda"):
        raise ValueError(f"unknown device {name!r}: auto, cpu or cuda")
    return torch.device(name)


@contextlib.contextmanager
def deterministic(threads: int | None = None) -> Iterator[None]:
    """Deterministic torch algorithms (and optionally a fixed CPU thread count) inside the block.

    Every op tiny_model uses has a deterministic CPU kernel, so CPU runs repeat
    bit for bit on one machine (another CPU's kernels round differently: see
    study.CROSS_CPU_RTOL). On CUDA an op without one warns instead of raising
    (``warn_only``): CUDA runs are seeded, not promised bit-identical.
    """
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    was = torch.are_deterministic_algorithms_enabled()
    was_warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    old_threads = torch.get_num_threads()
    torch.use_deterministic_algorithms(True, warn_only=True)
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was, warn_only=was_warn_only)
        if threads is not None:
            torch.set_num_threads(old_threads)


def json_text(obj: object) -> str:
    """The one JSON spelling of every file tiny_model writes (sorted keys: same data, same bytes)."""
    return json.dumps(obj, indent=1, sort_keys=True, allow_nan=True) + "\n"


def write_json(path: Path, obj: object) -> None:
    """Write atomically (temp file + rename): a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json_text(obj))
    tmp.replace(path)


def progress_bar(total: int, desc: str, enabled: bool | None = None):
    """A tqdm bar on a terminal, a silent stand-in elsewhere."""
    from tqdm.auto import tqdm

    if enabled is None:
        enabled = sys.stderr.isatty()
    return tqdm(total=total, desc=desc, disable=not enabled, leave=False)


def figure(width: float, height: float):
    """A matplotlib Figure that never touches pyplot's global state."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100)


def save_png(fig, path: Path) -> None:
    """Save without metadata that could change between runs (same data, same bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", metadata={"Software": None})
