"""Layer 5, the sandboxed engine (`drills grade`, `drills check`): a learner's notebook run
apart from the grader.

    submission  reading a learner's notebook strictly; the program built from its cells
    sandbox/    the child process, one module per isolation mode (bubblewrap, reduced) and what
                they share: rlimits, pids cgroup, job files, timeouts, the outcome pipe
    child_harness  the code that runs inside the child (no import of this package)
    worker      warm workers for batches: one zygote per slot, a fresh isolated fork per job
    zygote      the zygote inside the sandbox: namespaces, private /tmp, no capabilities, per job

Imports from the layers below (notebooks, cases, assignments, scoring).
"""
