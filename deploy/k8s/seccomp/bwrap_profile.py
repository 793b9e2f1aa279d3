"""Write a Localhost seccomp profile for the grading pods: the runtime's default, plus bubblewrap.

    python deploy/k8s/seccomp/bwrap_profile.py DEFAULT.json -o drills-bwrap.json

DEFAULT.json is the seccomp profile your container runtime applies as ``RuntimeDefault``: for
Docker, moby's ``profiles/seccomp/default.json`` (Docker's format, with ``includes``/
``excludes``); containerd builds its default in Go (``contrib/seccomp``) with the same rules for
these calls, so moby's file serves there too, as does the ``linux.seccomp`` of the runtime
spec of a container it started under RuntimeDefault (a plain OCI profile). The output differs from
it only by what bubblewrap needs in a pod without CAP_SYS_ADMIN: ``clone`` (any flags),
``unshare``, ``mount``, ``umount2`` and ``pivot_root`` allowed unconditionally. Every rule the
input had for those names is taken out first (moby's default allows them only with
CAP_SYS_ADMIN, ``clone`` without namespace flags, and has no rule for ``pivot_root``), so no
two rules for one system call disagree. ``clone3`` keeps the input's rule (moby's: ENOSYS
without CAP_SYS_ADMIN, and the C library falls back to ``clone``).

Which calls: those `drills grade` made under bubblewrap (cold children and the warm zygote,
traced with strace on Debian 12, bubblewrap 0.8.0) that a capability-less pod's default
refuses. It called no ``setns``, ``sethostname``, ``umount`` or new mount API
(``open_tree``, ``move_mount``, ``fsopen``, ``mount_setattr``).

The output is a plain OCI runtime-spec profile (``defaultAction``, ``architectures``,
``syscalls`` with ``names``/``action``/``errnoRet``/``args``): containerd reads a Localhost
profile with ``json.Unmarshal`` into the runtime-spec's ``LinuxSeccomp``, which has no
``includes``/``excludes`` and drops them silently, so every conditional rule of a
Docker-format file would apply to everyone (moby's ``ptrace`` for CAP_SYS_PTRACE, its
``mount`` for CAP_SYS_ADMIN, ...). So the conditions are resolved here, as the runtime
resolves them for its own default: for a pod holding no capability (Pod Security
"restricted" drops ALL), on ``--arch`` (default: this machine's), with ``minKernel`` checked
against ``--kernel`` (default: this machine's kernel; give the nodes' oldest). A rule whose
condition fails is left out; the others lose their condition. ``archMap`` becomes
``architectures`` (the arch and its sub-architectures).

Printed on stderr: the conditional rules resolved, then every rule changed for bubblewrap.
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import sys
from pathlib import Path

BWRAP_SYSCALLS = ("clone", "mount", "pivot_root", "umount2", "unshare")

# machine name -> (the names an ``arches`` condition uses for it, its SCMP_ARCH_ token)
_ARCHES = {
    "x86_64": ({"amd64", "x86_64"}, "SCMP_ARCH_X86_64"),
    "aarch64": ({"arm64", "aarch64"}, "SCMP_ARCH_AARCH64"),
}
_RULE_KEYS = ("names", "action", "errnoRet", "args")  # a runtime-spec LinuxSyscall's fields
_PROFILE_KEYS = ("defaultAction", "defaultErrnoRet", "architectures", "flags")


def _version(text: str) -> tuple[int, ...]:
    """'6.1.0-18-amd64' -> (6, 1); '4.8' -> (4, 8)."""
    parts = []
    for piece in text.split("-")[0].split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def _holds(rule: dict, arch_names: set[str], caps: frozenset[str], kernel: tuple) -> bool:
    """Does a Docker-format rule's ``includes``/``excludes`` admit it here? includes: every
    listed capability held, the arch listed, the kernel at least minKernel; excludes: none of
    the listed capabilities held and the arch not listed."""
    inc, exc = rule.get("includes") or {}, rule.get("excludes") or {}
    if inc.get("caps") and not set(inc["caps"]) <= caps:
        return False
    if inc.get("arches") and not set(inc["arches"]) & arch_names:
        return False
    if inc.get("minKernel") and kernel < _version(inc["minKernel"]):
        return False
    if exc.get("caps") and set(exc["caps"]) & caps:
        return False
    if exc.get("arches") and set(exc["arches"]) & arch_names:
        return False
    if exc.get("minKernel") and kernel >= _version(exc["minKernel"]):
        return False
    return True


def resolve(
    profile: dict,
    machine: str = "x86_64",
    caps: frozenset[str] = frozenset(),
    kernel: str | None = None,
) -> tuple[dict, list[str]]:
    """The OCI runtime-spec profile a runtime would apply for a pod holding ``caps`` on
    ``machine``, and a line for each conditional rule resolved."""
    if machine not in _ARCHES:
        raise ValueError(f"unknown machine {machine!r}: one of {', '.join(_ARCHES)}")
    arch_names, token = _ARCHES[machine]
    kv = _version(kernel or platform.release())
    out = {k: copy.deepcopy(profile[k]) for k in _PROFILE_KEYS if k in profile}
    for entry in profile.get("archMap") or []:
        if entry.get("architecture") == token:
            out["architectures"] = [token, *(entry.get("subArchitectures") or [])]
    notes, rules = [], []
    for rule in profile.get("syscalls") or []:
        conditional = bool(rule.get("includes") or rule.get("excludes"))
        kept = _holds(rule, arch_names, caps, kv)
        if conditional:
            what = "kept" if kept else "left out"
            cond = {k: rule[k] for k in ("includes", "excludes") if rule.get(k)}
            notes.append(f"{what}: {rule['action']} {','.join(rule['names'])} {json.dumps(cond)}")
        if kept:
            rules.append({k: copy.deepcopy(rule[k]) for k in _RULE_KEYS if k in rule})
    out["syscalls"] = rules
    return out, notes


def with_bwrap(resolved: dict, names: tuple[str, ...] = BWRAP_SYSCALLS) -> tuple[dict, list[str]]:
    """``resolved`` with every rule for ``names`` taken out and one rule allowing them added;
    and a line for each rule changed."""
    out = dict(resolved, syscalls=[])
    changes = []
    for rule in resolved["syscalls"]:
        hit = [n for n in rule["names"] if n in names]
        if not hit:
            out["syscalls"].append(rule)
            continue
        desc = rule["action"] + (f" (args {json.dumps(rule['args'])})" if rule.get("args") else "")
        rest = [n for n in rule["names"] if n not in names]
        if rest:
            out["syscalls"].append(dict(rule, names=rest))
            changes.append(
                f"removed {','.join(hit)} from a rule {desc}; it keeps {len(rest)} other names"
            )
        else:
            changes.append(f"removed the rule {desc} for {','.join(hit)}")
    out["syscalls"].append({"names": list(names), "action": "SCMP_ACT_ALLOW"})
    changes.append(f"added SCMP_ACT_ALLOW for {','.join(names)}, unconditionally")
    return out, changes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("default", type=Path, help="the runtime's default seccomp profile (JSON)")
    ap.add_argument("-o", "--out", type=Path, help="where to write the profile (default: stdout)")
    ap.add_argument("--arch", default=platform.machine(), choices=sorted(_ARCHES))
    ap.add_argument(
        "--kernel", default=platform.release(), help="the nodes' oldest kernel, for minKernel"
    )
    args = ap.parse_args(argv)
    try:
        profile = json.loads(args.default.read_text())
        resolved, notes = resolve(profile, args.arch, frozenset(), args.kernel)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"bwrap_profile: {args.default}: {e}", file=sys.stderr)
        return 2
    out, changes = with_bwrap(resolved)
    print(
        f"resolved for a pod with no capabilities on {args.arch}, kernel {args.kernel}:",
        file=sys.stderr,
    )
    for line in notes:
        print(f"  {line}", file=sys.stderr)
    print("changed for bubblewrap:", file=sys.stderr)
    for line in changes:
        print(f"  {line}", file=sys.stderr)
    text = json.dumps(out, indent=2) + "\n"
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
