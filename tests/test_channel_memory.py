"""The grader's memory is bounded per submission, whatever learner code writes to its channel.

The parent keeps every case record it accepts (parsed: several times its size) until the
submission is scored. Learner code that finds the outcome channel's descriptor can write valid
records itself, ahead of the harness: the attack below writes 100 records of about 0.9 MB for
cases it has not reached (the parent accepts each: the right case, in order), which once took
a grading process from 46 MB to 1,559 MB. The attack runs in a separate Python process (the
grading parent), which reports its own peak resident memory before and after
(resource.getrusage); the channel's bytes per submission (Limits.max_stream) bound it now.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from autograder.engine import sandbox

pytestmark = pytest.mark.slow

CASES = 100

_ATTACK = textwrap.dedent(
    """
    import json, os, stat

    def _channel():
        for fd in range(3, 1024):
            try:
                with open(f"/proc/self/fdinfo/{fd}") as f:
                    flags = int(f.read().split("flags:")[1].split()[0], 8)
            except (OSError, IndexError, ValueError):
                continue
            if flags & 3 == 1 and stat.S_ISFIFO(os.fstat(fd).st_mode) and fd > 2:
                return fd

    _calls = [0]

    def f():
        fd = _channel()
        value = [0.5] * 220_000  # about 0.9 MB of JSON, under one record's limit
        for i in range(_calls[0], CASES):
            rec = {"t": "case", "name": "f", "i": i, "outcome": {"value": value}, "seconds": 0}
            data = (json.dumps(rec, separators=(",", ":")) + "\\n").encode()
            try:
                while data:
                    data = data[os.write(fd, data):]
            except OSError:
                break
        _calls[0] += 1
        return 0.0
    """
).replace("CASES", str(CASES))

_PARENT = textwrap.dedent(
    """
    import json, resource, sys
    from autograder.engine import sandbox

    iso = sandbox.detect([])
    limits = sandbox.Limits(timeout=20, memory_mb=1024)
    honest = "def f():\\n    return 0.0\\n"
    case = {"args": [], "kwargs": {"$dict": {}}}
    cases = {"f": [case] * int(sys.argv[2])}
    sandbox.execute([("c", honest)], [], cases, iso, limits)  # imports and buffers warmed up
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ex = sandbox.execute([("c", sys.argv[1])], [], cases, iso, limits)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    outcomes = ex.functions["f"].outcomes
    print(json.dumps({
        "before_mb": before / 1024, "after_mb": after / 1024, "mode": iso.mode,
        "values": sum("value" in o for o in outcomes),
        "raised": sorted({o.get("raised", "") for o in outcomes if "raised" in o}),
        "messages": sorted({o.get("message", "")[:80] for o in outcomes if "raised" in o}),
        "notes": ex.notes,
    }))
    """
)


def test_learner_records_written_ahead_on_the_channel_cannot_grow_the_graders_memory():
    """100 forged case records of 0.9 MB each: does the grading process's peak memory grow by
    less than 100 MB (it held about 8 times the bytes it accepted, so 700 MB here before the
    channel was bounded), and do the cases it could not hold fail saying why?"""
    p = subprocess.run(
        [sys.executable, "-c", _PARENT, _ATTACK, str(CASES)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout.splitlines()[-1])
    grew = got["after_mb"] - got["before_mb"]
    assert grew < 100, f"the grading process grew by {grew:.0f} MB: {got}"
    # what the channel held was accepted; the rest failed, saying the program wrote too much
    held = sandbox.Limits().max_stream // 900_000
    assert got["values"] <= held + 1, got
    assert any("too much" in m for m in got["messages"]), got
