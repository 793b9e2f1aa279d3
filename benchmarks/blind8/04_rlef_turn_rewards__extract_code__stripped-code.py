"""Slip: returns the block's code with .strip() applied, so leading indentation of the first line
and trailing blank lines are cut, instead of exactly the lines between the fences joined with
"\n".
"""

import ast


def extract_code(response: str) -> str | None:
    """The code of the first ```python block of a response, or None when it holds no valid code."""
    if not isinstance(response, str):
        raise ValueError(f"response must be a str, got {type(response).__name__}")
    lines = response.split("\n")
    for i, line in enumerate(lines):
        if line.rstrip() == "```python":
            for j in range(i + 1, len(lines)):
                if lines[j].rstrip() == "```":
                    code = "\n".join(lines[i + 1 : j]).strip()
                    if not code:
                        return None
                    try:
                        ast.parse(code)
                    except SyntaxError:
                        return None
                    return code
            return None  # the first Python block is never closed
    return None
