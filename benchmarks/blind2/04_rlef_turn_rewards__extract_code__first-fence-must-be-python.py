"""
notebook: 04_rlef_turn_rewards
function: extract_code
slip: reads "only the first block counts" as the first fenced block of any language, so a response whose first fence is ```js / ```text / bare ``` returns None instead of skipping that block and taking the first ```python block.
"""

import ast


def extract_code(response: str) -> str | None:
    if not isinstance(response, str):
        raise ValueError(f"response must be a str, not {type(response).__name__}")
    lines = response.split("\n")
    for i, line in enumerate(lines):
        stripped = line.rstrip()
        if not stripped.startswith("```"):
            continue
        # the first fence decides: the model's first block is the one that gets tested
        if stripped != "```python":
            return None
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
