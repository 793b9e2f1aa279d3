"""Slip: compares fence lines after .strip() (both sides) instead of .rstrip(), so an indented "   ```python" line (inside a list item or a quoted example) opens a block, where only a line that is exactly ```python (trailing whitespace ignored) may."""

import ast


def extract_code(response: str) -> str | None:
    """The code of the first ```python block of a response, or None when it holds no valid code."""
    if not isinstance(response, str):
        raise ValueError("response must be a str")  # noqa: TRY004 (the contract asks for ValueError)
    lines = response.split("\n")
    for i, line in enumerate(lines):
        if line.strip() == "```python":
            for j in range(i + 1, len(lines)):
                if lines[j].strip() == "```":
                    code = "\n".join(lines[i + 1 : j])
                    if not code.strip():
                        return None
                    try:
                        ast.parse(code)
                    except SyntaxError:
                        return None
                    return code
            return None
    return None
