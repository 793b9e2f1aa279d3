"""Running a learner program in a sandboxed child and reading its outcomes back.

The trusted parent never imports learner code. It writes three things into a fresh temporary
folder: the harness (``child_harness.py``), the text of the trusted ``codec.py`` and a job
file (the program's cells, the encoded case inputs, the limits), then starts
``python harness.py job.json 3`` in one of three isolation modes (:func:`detect` picks one):

- "bwrap" (bubblewrap.py): new user, pid, network, ipc and uts namespaces (no network;
  signals reach only the sandbox), a read-only system (``/usr``, the interpreter, the library
  folders, ``/proc``; kernel keyrings refused by a seccomp filter), ``/tmp`` and the working
  directory bound to the child's own empty folder, and nothing else: not the course folder,
  the secret, the grader's package or the output folder (masked if they sit inside a library
  folder);
- "bwrap-noproc" (bubblewrap.py): where the kernel refuses bubblewrap a new /proc (a
  container's masked /proc) and only there, the same sandbox with a /proc holding only
  cpuinfo, cold children only;
- "reduced" (reduced.py), without bubblewrap: the same limits, a scrubbed environment and an
  empty working directory, and the result carries the warning that isolation is reduced; file
  modes keep a separate uid out of the course, or a course secret is refused.

Either way the harness first sets rlimits on itself (CPU seconds, address space, processes,
file size, core dumps), and when the grader runs as root the child runs as a separate
unprivileged uid per worker (so that the process limit holds and the child cannot signal or
write as the grader). A wall-clock watchdog kills the whole process group when one step
(loading a cell or one call) takes longer than the limit, or when the submission's time budget
(all its steps and restarts together) runs out. :func:`make_box` and :func:`start_in_box` are
the one place a sandbox is set up, for a cold child and a warm worker (worker.py) alike; the
rlimits are set by ``child_harness.limit_self`` in both. Outcomes come back as JSON lines on
file descriptor 3, are validated strictly (records.py: :func:`parse_line`,
:func:`validate_outcome`), and anything else is a failed case with a reason, never a crash of
the grader.

:func:`execute` runs a whole program: when the child dies, hangs or writes something invalid
in the middle of a function, that case fails with the reason, the function's remaining cases
are not run, and a fresh child continues with the next function (or skips a cell that killed
the program while loading).

The modules, those below using those above:

    common      Isolation (the mode), the errors, what the child may see, its environment and uid
    resources   Limits and the time budget, the limits a child sets on itself, the pids cgroup
    reduced     the reduced mode: what file modes must keep private, the shim, the uid's tasks
    folders     sandbox folders: made, removed without recursion, swept, removed on SIGTERM
    seccomp     the seccomp filter of every bubblewrap sandbox, cold and warm
    bubblewrap  "bwrap" and "bwrap-noproc": the command line and the probe of each
    modes       detect(): which mode this machine gets, and whether children drop to a uid
    launch      a sandbox's folder, job files and start: the one way for cold and warm alike
    child       one cold child: started, read (the watchdog, the budget), killed
    execution   a whole program in as many children as it takes; Execution, its result

This package re-exports the public names; the others (a leading underscore) are reached at
their module. Inside the package a function of another module is called through that module
(``common.library_dirs()``), never imported by name, so that a test that patches a function
where it is defined patches it for every caller. Patching the name here, on the package,
reaches only callers outside the package (``grade_cli`` calls ``sandbox.detect``).
"""

from __future__ import annotations

from autograder.engine.records import (
    CRASH,
    INVALID,
    NOT_RUN,
    TIMEOUT,
    ProtocolError,
    parse_line,
    validate_outcome,
    validate_value,
)
from autograder.engine.sandbox.bubblewrap import NOPROC_WARNING, PROC_REFUSED
from autograder.engine.sandbox.child import ChildHandle, ChildRun, run_child
from autograder.engine.sandbox.common import (
    BWRAP_MODES,
    SANDBOX_IN,
    Isolation,
    SandboxError,
    SecretExposed,
    grader_dir,
    library_dirs,
)
from autograder.engine.sandbox.execution import Execution, FunctionRun, execute
from autograder.engine.sandbox.folders import (
    end_on_sigterm,
    release_scratch,
    scratch_dir,
    sweep_scratch,
)
from autograder.engine.sandbox.launch import (
    HARNESS,
    Box,
    child_sys_path,
    codec_source,
    full_job,
    make_box,
    start_in_box,
)
from autograder.engine.sandbox.modes import detect
from autograder.engine.sandbox.reduced import answer_exposure, secret_exposure
from autograder.engine.sandbox.resources import BUDGET_EXHAUSTED, BUDGET_STEPS, Limits, child_limits
from autograder.engine.sandbox.seccomp import CLONE_NEWUSER, seccomp_fd, seccomp_filter

__all__ = [
    "BUDGET_EXHAUSTED",
    "BUDGET_STEPS",
    "BWRAP_MODES",
    "CLONE_NEWUSER",
    "CRASH",
    "HARNESS",
    "INVALID",
    "NOPROC_WARNING",
    "NOT_RUN",
    "PROC_REFUSED",
    "SANDBOX_IN",
    "TIMEOUT",
    "Box",
    "ChildHandle",
    "ChildRun",
    "Execution",
    "FunctionRun",
    "Isolation",
    "Limits",
    "ProtocolError",
    "SandboxError",
    "SecretExposed",
    "answer_exposure",
    "child_limits",
    "child_sys_path",
    "codec_source",
    "detect",
    "end_on_sigterm",
    "execute",
    "full_job",
    "grader_dir",
    "library_dirs",
    "make_box",
    "parse_line",
    "release_scratch",
    "run_child",
    "scratch_dir",
    "seccomp_fd",
    "seccomp_filter",
    "secret_exposure",
    "start_in_box",
    "sweep_scratch",
    "validate_outcome",
    "validate_value",
]
