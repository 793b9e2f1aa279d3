"""Slip: compares fence lines after .strip() instead of .rstrip(), so an indented '   ```python' line (e.g. inside a list item or a quoted example) opens a block, where only trailing whitespace may be ignored."""

import ast


def extract_code(response: str) -> str | None:
    """The code of the first ```python block of a response, or None when it holds no valid code."""
    if not isinstance(response, str):
        raise ValueError("response must be a str")
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
