"""
notebook: 04_rlef_turn_rewards
function: extract_code
slip: fence lines are compared after .strip() instead of ignoring trailing whitespace only, so an indented "   ```python" line (e.g. inside a list or quoted text) opens a block, and an indented "   ```" closes one, although neither line is exactly a fence.
"""

import ast


def extract_code(response: str) -> str | None:
    """The code of the first ```python block of a response, or None when it holds no valid code."""
    if not isinstance(response, str):
        raise ValueError(f"response must be a str, got {type(response).__name__}")
    lines = response.split("\n")
    start = None
    for i, line in enumerate(lines):
        if line.strip() == "```python":
            start = i
            break
    if start is None:
        return None
    end = None
    for j in range(start + 1, len(lines)):
        if lines[j].strip() == "```":
            end = j
            break
    if end is None:
        return None
    code = "\n".join(lines[start + 1 : end])
    if not code.strip():
        return None
    try:
        ast.parse(code)
    except SyntaxError:
        return None
    return code
