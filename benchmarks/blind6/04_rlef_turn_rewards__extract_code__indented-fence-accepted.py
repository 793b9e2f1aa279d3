"""notebook: 04_rlef_turn_rewards
function: extract_code
slip: strips both sides of each line before comparing with the fences, so an indented ```python line opens a block (and an indented ``` closes one), where only trailing spaces may be ignored."""

import ast


def extract_code(response: str) -> str | None:
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
