"""A verifiable task whose wrong answers share correct steps: sums with a scratchpad.

A problem is ``terms`` numbers of ``digits`` digits each. The prompt is
``^a+b+c=`` and the correct response is the running sums ``a+b``, ``a+b+c``,
... each written with the same number of digits, then EOS (``.``). The
course's task is three single digits (``SumTask()``): for 3+4+8 the response
is ``07 15.`` (5 tokens; the space is only for display). A response earns
reward 1 when every token is right, 0 otherwise. A wrong answer usually still
carries correct steps (the leading ``0`` or ``1``, the whole partial sum, the
EOS), so pushing it down also pushes on tokens that correct answers share:
what LLD needs.

A larger task for the GPU configuration, ``SumTask(terms=4, digits=2)``,
adds 2-digit numbers with carries: for 47+85+13+29 the response is
``132 145 174.`` (10 tokens).

The problems are split once (a fixed seeded shuffle, the same for every
experiment seed) into training problems (warm-up and RL) and held-out ones
(evaluation only): 800 / 200 for the course's task.

The module-level functions and constants are the course's task's:

    >>> format_response(correct_responses(torch.tensor([[3, 4, 8]]))[0])
    '07 15.'
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch

# Token ids: the ten digits are their own ids.
PLUS, EQUALS, BOS, EOS = 10, 11, 12, 13
VOCAB = "0123456789+=^."  # one display character per token id
VOCAB_SIZE = len(VOCAB)
MAX_ENUMERATED = 1_000_000  # tasks with at most this many problems list them all


@dataclass(frozen=True)
class SumTask:
    """``terms`` numbers of ``digits`` digits, answered with every running sum, then EOS."""

    terms: int = 3
    """How many numbers are added (at least 2)."""
    digits: int = 1
    """Digits per number (zero-padded in the prompt)."""
    n_heldout: int = 200
    """Problems held out for evaluation."""
    n_train: int | None = None
    """Training problems; None: all the others (only for tasks small enough to list)."""
    split_seed: int = 0
    """Seeds the split (fixed: every experiment seed sees the same split)."""
    any_pair: bool = False
    """The multi-answer task: the partial sum may be the sum of any pair of the three numbers,
    so ``3+4+8=`` accepts ``07 15.``, ``11 15.`` and ``12 15.`` (three terms only)."""

    def __post_init__(self) -> None:
        if self.terms < 2 or self.digits < 1:
            raise ValueError(f"a sum needs terms >= 2 and digits >= 1, got {self}")
        if self.any_pair and self.terms != 3:
            raise ValueError(f"any_pair needs exactly 3 terms, got {self.terms}")
        if self.n_train is None and self.n_problems > MAX_ENUMERATED:
            raise ValueError(f"{self.n_problems} problems are too many to list: set n_train")

    # ------------------------------------------------------------------ sizes
    @property
    def width(self) -> int:
        """Digits of each running sum (enough for the largest total)."""
        return len(str(self.terms * (10**self.digits - 1)))

    @property
    def prompt_len(self) -> int:
        """^ n1 + n2 + ... = : BOS, the digits, the pluses, EQUALS."""
        return 1 + self.terms * self.digits + (self.terms - 1) + 1

    @property
    def response_len(self) -> int:
        """(terms - 1) running sums of ``width`` digits, then EOS."""
        return (self.terms - 1) * self.width + 1

    @property
    def n_problems(self) -> int:
        return 10 ** (self.terms * self.digits)

    @property
    def block_size(self) -> int:
        """Longest sequence the model reads: the prompt and all response tokens but the last."""
        return self.prompt_len + self.response_len - 1

    def to_dict(self) -> dict:
        """The fields; ``any_pair`` only when set (older recipes and studies lack it)."""
        d = asdict(self)
        if not self.any_pair:
            del d["any_pair"]
        return d

    # --------------------------------------------------------------- problems
    def all_problems(self) -> torch.Tensor:
        """Every problem, (n_problems, terms), in lexicographic order (small tasks only)."""
        if self.n_problems > MAX_ENUMERATED:
            raise ValueError(f"{self.n_problems} problems are too many to list")
        n = self.n_problems
        flat = torch.arange(n)  # (n,)
        base = 10**self.digits
        cols = [(flat // base ** (self.terms - 1 - k)) % base for k in range(self.terms)]
        return torch.stack(cols, dim=1)  # (n, terms)

    def split(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(train (n_train, terms), held-out (n_heldout, terms)) problems, disjoint, fixed."""
        gen = torch.Generator().manual_seed(self.split_seed)
        if self.n_train is None:
            problems = self.all_problems()
            order = torch.randperm(self.n_problems, generator=gen)
            held = order[: self.n_heldout].sort().values
            train = order[self.n_heldout :].sort().values
            return problems[train], problems[held]
        base = 10**self.digits
        draw = self.n_heldout + 2 * self.n_train  # spare draws to replace collisions
        cand = torch.randint(0, base, (draw, self.terms), generator=gen)  # (draw, terms)
        keys = (cand * base ** torch.arange(self.terms - 1, -1, -1)).sum(dim=1).tolist()
        seen: set[int] = set()
        keep = []
        for i, k in enumerate(keys):  # first occurrence of each problem only
            if k not in seen:
                seen.add(k)
                keep.append(i)
        uniq = cand[torch.tensor(keep)]
        if uniq.shape[0] < self.n_heldout + self.n_train:
            raise ValueError("too few distinct problems for this split")
        return uniq[self.n_heldout : self.n_heldout + self.n_train], uniq[: self.n_heldout]

    # ------------------------------------------------------------------ tokens
    def _digits(self, values: torch.Tensor, width: int) -> torch.Tensor:
        """(N,) non-negative ints -> (N, width) their decimal digits, most significant first."""
        powers = 10 ** torch.arange(width - 1, -1, -1, device=values.device)  # (width,)
        return (values.unsqueeze(1) // powers) % 10  # (N, width)

    def prompt_tokens(self, problems: torch.Tensor) -> torch.Tensor:
        """(N, terms) numbers -> (N, prompt_len) tokens ``^ n1 + n2 + ... =``."""
        n = problems.shape[0]
        parts = [torch.full((n, 1), BOS, dtype=torch.long, device=problems.device)]
        for k in range(self.terms):
            if k:
                parts.append(torch.full((n, 1), PLUS, dtype=torch.long, device=problems.device))
            parts.append(self._digits(problems[:, k].long(), self.digits))
        parts.append(torch.full((n, 1), EQUALS, dtype=torch.long, device=problems.device))
        return torch.cat(parts, dim=1)  # (N, prompt_len)

    def correct_responses(self, problems: torch.Tensor) -> torch.Tensor:
        """(N, terms) -> (N, response_len): every running sum as ``width`` digits, then EOS."""
        running = problems.long().cumsum(dim=1)[:, 1:]  # (N, terms - 1)
        parts = [self._digits(running[:, k], self.width) for k in range(self.terms - 1)]
        eos = torch.full((problems.shape[0], 1), EOS, dtype=torch.long, device=problems.device)
        return torch.cat([*parts, eos], dim=1)  # (N, response_len)

    def correct_paths(self, problems: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Every correct response: (N, K, R) paths and (N, K) bool, True on each distinct one.

        K = 1 (the running sums) unless ``any_pair``; then K = 3, the partial sum a+b, a+c
        or b+c, then the total; a path equal to an earlier one (3+3+5: a+c = b+c) is marked
        False so that a set of paths counts it once.
        """
        if not self.any_pair:
            paths = self.correct_responses(problems).unsqueeze(1)  # (N, 1, R)
            return paths, torch.ones(paths.shape[:2], dtype=torch.bool, device=paths.device)
        p = problems.long()
        firsts = torch.stack([p[:, 0] + p[:, 1], p[:, 0] + p[:, 2], p[:, 1] + p[:, 2]], 1)  # (N, 3)
        total = p.sum(dim=1)  # (N,)
        n = p.shape[0]
        eos = torch.full((n, 1), EOS, dtype=torch.long, device=p.device)
        paths = torch.stack(
            [
                torch.cat(
                    [self._digits(firsts[:, k], self.width), self._digits(total, self.width), eos],
                    1,
                )
                for k in range(3)
            ],
            dim=1,
        )  # (N, 3, R)
        distinct = torch.ones(n, 3, dtype=torch.bool, device=p.device)
        distinct[:, 1] = firsts[:, 1] != firsts[:, 0]
        distinct[:, 2] = (firsts[:, 2] != firsts[:, 0]) & (firsts[:, 2] != firsts[:, 1])
        return paths, distinct

    def random_correct_responses(
        self, problems: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        """(N, terms) -> (N, R): one correct response per problem, a pair drawn uniformly at
        random when ``any_pair`` (the multi-answer task's warm-up targets), else the only one."""
        paths, _ = self.correct_paths(problems)  # (N, K, R)
        k = torch.randint(0, paths.shape[1], (paths.shape[0],), generator=generator)  # (N,)
        return paths[torch.arange(paths.shape[0]), k.to(paths.device)]  # (N, R)

    def rewards(self, problems: torch.Tensor, responses: torch.Tensor) -> torch.Tensor:
        """Verify: (N, terms) problems, (N, G, R) or (N, R) responses -> float (N, G) or (N,).

        1.0 when the response is exactly a correct scratchpad (every running sum and the
        EOS; with ``any_pair`` the partial sum may be any pair's), else 0.0.
        """
        paths, _ = self.correct_paths(problems)  # (N, K, R)
        if responses.ndim == 3:
            hit = (responses.unsqueeze(2) == paths.unsqueeze(1)).all(dim=-1)  # (N, G, K)
        else:
            hit = (responses.unsqueeze(1) == paths).all(dim=-1)  # (N, K)
        return hit.any(dim=-1).float()

    # ----------------------------------------------------------------- display
    def format_prompt(self, problem: torch.Tensor | list[int]) -> str:
        """A problem -> ``'3+4+8='`` (numbers zero-padded to ``digits``)."""
        return "+".join(f"{int(x):0{self.digits}d}" for x in problem) + "="

    def format_response(self, response: torch.Tensor | list[int]) -> str:
        """A response -> ``'07 15.'``: a space after each running sum; tokens after EOS dropped."""
        ids = [int(t) for t in response]
        if EOS in ids:
            ids = ids[: ids.index(EOS) + 1]
        text = format_tokens(ids)
        chunks = [text[i : i + self.width] for i in range(0, len(text), self.width)]
        out = ""
        for chunk in chunks:
            out += ("" if not out or out.endswith(".") or chunk.startswith(".") else " ") + chunk
        return out.replace(" .", ".")


DEFAULT = SumTask()
"""The course's task: three single digits, 800 training and 200 held-out problems."""
LARGE = SumTask(terms=4, digits=2, n_train=200_000, n_heldout=1000)
"""The GPU configuration's task: four 2-digit numbers (carries), 10-token responses."""
MULTI = SumTask(any_pair=True)
"""The multi-answer task: three single digits, the partial sum any pair's (about 2.7 correct
responses per problem), the course's 800 / 200 split."""

PROMPT_LEN = DEFAULT.prompt_len  # 7: ^ a + b + c =
RESPONSE_LEN = DEFAULT.response_len  # 5: s1 s0 t1 t0 .   (partial sum, total, EOS)
N_PROBLEMS = DEFAULT.n_problems  # 1000
N_HELDOUT = DEFAULT.n_heldout  # 200 problems held out from warm-up and RL
SPLIT_SEED = DEFAULT.split_seed


def all_problems() -> torch.Tensor:
    """All 1000 problems (a, b, c), shape (1000, 3), in lexicographic order."""
    return DEFAULT.all_problems()


def train_problems() -> torch.Tensor:
    """The 800 training problems (a, b, c), shape (800, 3)."""
    return DEFAULT.split()[0]


def heldout_problems() -> torch.Tensor:
    """The 200 held-out problems (a, b, c), shape (200, 3): never trained on."""
    return DEFAULT.split()[1]


def prompt_tokens(problems: torch.Tensor) -> torch.Tensor:
    """(N, 3) digits -> (N, 7) prompt tokens ``^ a + b + c =``."""
    return DEFAULT.prompt_tokens(problems)


def correct_responses(problems: torch.Tensor) -> torch.Tensor:
    """(N, 3) digits -> (N, 5) correct responses: a+b as two digits, total as two digits, EOS."""
    return DEFAULT.correct_responses(problems)


def response_mask(responses: torch.Tensor) -> torch.Tensor:
    """(..., R) responses -> (..., R) bool: the tokens up to and including the first EOS."""
    is_eos = (responses == EOS).long()  # (..., R)
    eos_before = torch.cumsum(is_eos, dim=-1) - is_eos  # (..., R) EOS strictly before t
    return eos_before == 0


def rewards(problems: torch.Tensor, responses: torch.Tensor) -> torch.Tensor:
    """Verify (the course's task): (N, 3), (N, G, 5) or (N, 5) -> (N, G) or (N,) 0/1 floats."""
    return DEFAULT.rewards(problems, responses)


def format_tokens(tokens: torch.Tensor | list[int]) -> str:
    """Token ids -> their display characters (``[12, 3, 10]`` -> ``'^3+'``)."""
    return "".join(VOCAB[int(t)] for t in tokens)


def format_prompt(problem: torch.Tensor | list[int]) -> str:
    """A problem (a, b, c) -> ``'a+b+c='``."""
    return DEFAULT.format_prompt(problem)


def format_response(response: torch.Tensor | list[int]) -> str:
    """A 5-token response -> ``'07 15.'`` (a space after the partial sum; tokens after EOS dropped)."""
    return DEFAULT.format_response(response)
