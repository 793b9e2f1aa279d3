"""Which isolation mode this machine gets (:func:`detect`): bubblewrap ("bwrap") where it
starts; "bwrap-noproc" only where the kernel refuses it its own ``/proc`` and that sandbox's
probe passes; else, or with ``DRILLS_SANDBOX=none``, the reduced mode, with a warning that says
why. Whether children run as their own uids (a root grader whose Python other users can read)
is decided here too, for every mode.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from autograder.engine.sandbox import bubblewrap, common, folders, reduced, resources
from autograder.engine.sandbox.bubblewrap import NOPROC_WARNING, PROC_REFUSED
from autograder.engine.sandbox.common import Isolation


def detect(hidden: list[Path], force_reduced: bool = False) -> Isolation:
    """How children will be isolated on this machine (probes bwrap once)."""
    hidden = [Path(os.path.realpath(h)) for h in hidden]
    folders.sweep_scratch()  # what killed graders left behind
    root = os.geteuid() == 0
    drop = root and all(reduced._others_can_reach(p) for p in common._bind_sources())
    if os.environ.get("DRILLS_SANDBOX_UID", "").lower() == "keep":
        drop = False  # tests: exercise the root-child path (held by a pids cgroup where possible)
    iso = Isolation(mode="reduced", drop_uid=drop, hidden=hidden)
    if root and not drop:
        probe = resources._pids_cgroup(8)
        resources._release_cgroup(probe)
        if probe is None:
            iso.warnings.append(
                "running as root, and the Python installation is not readable by other users: "
                "the child runs as root (capabilities dropped) and the process limit is not enforced"
            )
    bwrap = shutil.which("bwrap")
    if os.environ.get("DRILLS_SANDBOX", "").lower() in ("none", "reduced", "off"):
        force_reduced = True
    if bwrap and not force_reduced:
        failed = bubblewrap._probe(bwrap, iso, "bwrap")
        if failed is not None and PROC_REFUSED in failed:
            # A container's masked /proc (procMount Default): the kernel refuses any new proc
            # mount. The same sandbox without its own /proc keeps every promise (the child is
            # still in its own pid namespace; nothing of the grader's is in its view), so it
            # is used, after its own probe checks that.
            noproc = bubblewrap._probe(bwrap, iso, "bwrap-noproc")
            if noproc is None:
                iso.mode, iso.bwrap = "bwrap-noproc", bwrap
                iso.warnings.append(NOPROC_WARNING)
            else:
                iso.warnings.append(
                    f"bwrap is installed but failed to start a sandbox: {failed}; nor without "
                    f"its own /proc: {noproc}"
                )
        elif failed is None:
            iso.mode, iso.bwrap = "bwrap", bwrap
        else:
            iso.warnings.append(f"bwrap is installed but failed to start a sandbox: {failed}")
    elif not bwrap and not force_reduced:
        iso.warnings.append("bubblewrap (bwrap) is not installed")
    if iso.reduced:
        iso.warnings.append(
            "isolation is reduced: learner code runs without bubblewrap (no private filesystem, "
            "network or process namespace); only resource limits, a scrubbed environment and an "
            "empty working directory protect this machine. Install bubblewrap (Debian: apt-get "
            "install bubblewrap) to grade untrusted submissions."
        )
    return iso
