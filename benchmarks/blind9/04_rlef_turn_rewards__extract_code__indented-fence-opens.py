"""Slip: strips leading as well as trailing whitespace from the opening line, so an indented "
```python" line opens a block; the text asks for a line that is exactly ```python (only trailing
spaces ignored)."""

import ast


def extract_code(response: str) -> str | None:
    """The code of the first ```python block of a response, or None when it holds no valid code."""
    if not isinstance(response, str):
        raise ValueError("response must be a str")
    lines = response.split("\n")
    for i, line in enumerate(lines):
        if line.strip() == "```python":
            for j in range(i + 1, len(lines)):
                if lines[j].rstrip() == "```":
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
