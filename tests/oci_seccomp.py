"""Run a command under an OCI seccomp profile, as a container without CAP_SYS_ADMIN would.

    setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin \\
        python tests/oci_seccomp.py PROFILE.json CMD...

A stand-in for a runtime (runc, through containerd or Docker) applying a seccomp profile to a
pod, on this machine: the profile's rules are given to libseccomp (through ctypes), loaded
(libseccomp sets ``no_new_privs``), and CMD is exec'd. The ``setpriv`` in front drops
CAP_SYS_ADMIN, which a pod's processes lack. :func:`command` builds the whole line.

What is read, as runc does: ``defaultAction`` and ``defaultErrnoRet``; each rule's ``names``,
``action``, ``errnoRet`` (EPERM when absent) and ``args`` (``index``, ``value``,
``valueTwo``, ``op``: NE, LT, LE, EQ, GE, GT, MASKED_EQ; conditions on different arguments
make one rule, several on the same argument one rule each); a rule whose action is the
default is skipped, as is a name this machine's libseccomp does not know. Docker-format
conditions are evaluated here for a process holding no capability, on x86_64 (``arches``
"amd64"/"x86_64"), with ``minKernel`` checked against the running kernel: ``includes`` must
all hold, ``excludes`` none. Only the native ABI is filtered (``architectures``/``archMap``
are not read): a call through another ABI is refused by libseccomp's default for a foreign
architecture (the process is killed), where a runtime following moby's ``archMap`` would
apply the rules to 32-bit calls too.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import platform
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
LIBSECCOMP = "libseccomp.so.2"

_ACTIONS = {  # SCMP_ACT_* values (seccomp.h)
    "SCMP_ACT_KILL": 0x00000000,
    "SCMP_ACT_KILL_THREAD": 0x00000000,
    "SCMP_ACT_KILL_PROCESS": 0x80000000,
    "SCMP_ACT_TRAP": 0x00030000,
    "SCMP_ACT_ERRNO": 0x00050000,
    "SCMP_ACT_TRACE": 0x7FF00000,
    "SCMP_ACT_LOG": 0x7FFC0000,
    "SCMP_ACT_ALLOW": 0x7FFF0000,
}
_OPS = {  # enum scmp_compare
    "SCMP_CMP_NE": 1,
    "SCMP_CMP_LT": 2,
    "SCMP_CMP_LE": 3,
    "SCMP_CMP_EQ": 4,
    "SCMP_CMP_GE": 5,
    "SCMP_CMP_GT": 6,
    "SCMP_CMP_MASKED_EQ": 7,
}
_ARCH_NAMES = {"amd64", "x86_64"}
EPERM = 1


class ArgCmp(ctypes.Structure):
    """struct scmp_arg_cmp."""

    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


# A moby-like RuntimeDefault (tests/test_k8s_seccomp.py's docstring says what it is and is not),
# for the emulation here and for a real runtime (tests/podman_runtime.py)
NAMESPACE_FLAGS = 0x7E020000  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET

# moby's default allows these only to a process holding CAP_SYS_ADMIN
ADMIN_CALLS = [
    "bpf", "clone", "clone3", "fanotify_init", "fsconfig", "fsmount", "fsopen", "fspick",
    "lookup_dcookie", "mount", "mount_setattr", "move_mount", "open_tree", "perf_event_open",
    "quotactl", "quotactl_fd", "setdomainname", "sethostname", "setns", "syslog", "umount",
    "umount2", "unshare",
]  # fmt: skip
# ... and these only with another capability
CAP_CALLS = {
    "CAP_SYS_PTRACE": ["kcmp", "pidfd_getfd", "process_madvise"],
    "CAP_SYS_CHROOT": ["chroot"],
    "CAP_SYS_MODULE": ["init_module", "finit_module", "delete_module"],
    "CAP_SYS_TIME": ["settimeofday", "clock_settime"],
    "CAP_SYS_BOOT": ["reboot"],
    "CAP_SYS_RAWIO": ["iopl", "ioperm"],
    "CAP_SYS_NICE": ["get_mempolicy", "mbind", "set_mempolicy"],
}
TRACING = ["ptrace", "process_vm_readv", "process_vm_writev"]  # allowed from a kernel version
# and these not at all
UNLISTED = [
    "pivot_root", "kexec_load", "kexec_file_load", "swapon", "swapoff", "add_key", "keyctl",
    "request_key", "userfaultfd", "uselib", "acct", "vhangup", "nfsservctl", "_sysctl",
]  # fmt: skip


def runtime_default(names: list[str]) -> dict:
    """The moby-like "RuntimeDefault" of this file's docstring; ``names``: the system calls
    the machine has (the restricted ones are taken out of the plain allow rule)."""
    held_back = {*ADMIN_CALLS, *UNLISTED, *TRACING, "socket"}
    held_back.update(n for group in CAP_CALLS.values() for n in group)
    rules = [
        {"names": sorted(set(names) - held_back), "action": "SCMP_ACT_ALLOW"},
        {"names": TRACING, "action": "SCMP_ACT_ALLOW", "includes": {"minKernel": "4.8"}},
        {  # no AF_VSOCK
            "names": ["socket"],
            "action": "SCMP_ACT_ALLOW",
            "args": [{"index": 0, "value": 40, "op": "SCMP_CMP_NE"}],
        },
        {"names": ["arch_prctl"], "action": "SCMP_ACT_ALLOW", "includes": {"arches": ["amd64"]}},
        {"names": ADMIN_CALLS, "action": "SCMP_ACT_ALLOW", "includes": {"caps": ["CAP_SYS_ADMIN"]}},
        {
            "names": ["clone"],
            "action": "SCMP_ACT_ALLOW",
            "args": [{"index": 0, "value": NAMESPACE_FLAGS, "op": "SCMP_CMP_MASKED_EQ"}],
            "excludes": {"caps": ["CAP_SYS_ADMIN"]},
        },
        {
            "names": ["clone3"],
            "action": "SCMP_ACT_ERRNO",
            "errnoRet": 38,
            "excludes": {"caps": ["CAP_SYS_ADMIN"]},
        },
        *[
            {"names": group, "action": "SCMP_ACT_ALLOW", "includes": {"caps": [cap]}}
            for cap, group in CAP_CALLS.items()
        ],
    ]
    return {
        "defaultAction": "SCMP_ACT_ERRNO",
        "defaultErrnoRet": 1,
        "archMap": [
            {"architecture": "SCMP_ARCH_X86_64", "subArchitectures": ["SCMP_ARCH_X86"]},
            {"architecture": "SCMP_ARCH_AARCH64", "subArchitectures": ["SCMP_ARCH_ARM"]},
        ],
        "syscalls": rules,
    }


def command(profile: Path | str, argv: list[str]) -> list[str]:
    """``argv`` run under ``profile`` (as root: CAP_SYS_ADMIN dropped first)."""
    return [
        "setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin",
        sys.executable, str(HERE), str(profile), *argv,
    ]  # fmt: skip


def why_not() -> str | None:
    """Why this machine cannot apply a profile (None when it can)."""
    if platform.machine() != "x86_64":
        return f"the profiles are emulated for x86_64 only, not {platform.machine()}"
    if os.geteuid() != 0:
        return "dropping CAP_SYS_ADMIN from a process needs root"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    try:
        _lib()
    except OSError as e:
        return f"libseccomp cannot be loaded: {e}"
    return None


def _lib() -> ctypes.CDLL:
    lib = ctypes.CDLL(ctypes.util.find_library("seccomp") or LIBSECCOMP)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_syscall_resolve_num_arch.restype = ctypes.c_void_p  # char *, freed by caller
    lib.seccomp_syscall_resolve_num_arch.argtypes = [ctypes.c_uint32, ctypes.c_int]
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(ArgCmp),
    ]  # fmt: skip
    lib.seccomp_load.restype = ctypes.c_int
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def syscall_names() -> list[str]:
    """Every system call name libseccomp knows for this machine's native ABI."""
    lib = _lib()
    libc = ctypes.CDLL(None)
    libc.free.argtypes = [ctypes.c_void_p]
    names = []
    for nr in range(1024):
        ptr = lib.seccomp_syscall_resolve_num_arch(0, nr)  # 0: SCMP_ARCH_NATIVE
        if ptr:
            names.append(ctypes.string_at(ptr).decode())
            libc.free(ptr)
    return names


def _version(text: str) -> tuple[int, ...]:
    return tuple(int("".join(c for c in p if c.isdigit()) or 0) for p in text.split(".")[:2])


def applies(rule: dict, caps: frozenset[str] = frozenset()) -> bool:
    """Is a Docker-format rule in force for a process holding ``caps`` on x86_64?"""
    inc, exc = rule.get("includes") or {}, rule.get("excludes") or {}
    kernel = _version(platform.release().split("-")[0])
    return not (
        (inc.get("caps") and not set(inc["caps"]) <= caps)
        or (inc.get("arches") and not set(inc["arches"]) & _ARCH_NAMES)
        or (inc.get("minKernel") and kernel < _version(inc["minKernel"]))
        or (exc.get("caps") and set(exc["caps"]) & caps)
        or (exc.get("arches") and set(exc["arches"]) & _ARCH_NAMES)
        or (exc.get("minKernel") and kernel >= _version(exc["minKernel"]))
    )


def _action(name: str, errno: int | None) -> int:
    if name not in _ACTIONS:
        raise ValueError(f"unsupported seccomp action {name}")
    value = _ACTIONS[name]
    if name in ("SCMP_ACT_ERRNO", "SCMP_ACT_TRACE"):
        value |= (EPERM if errno is None else errno) & 0xFFFF
    return value


def _conditions(args: list[dict]) -> list[list[ArgCmp]]:
    """The rule's argument conditions, as runc groups them into libseccomp rules."""
    cmps = [
        ArgCmp(a["index"], _OPS[a["op"]], a.get("value", 0), a.get("valueTwo", 0)) for a in args
    ]
    indexes = [a["index"] for a in args]
    if len(set(indexes)) < len(indexes):  # several on one argument: one rule each (an OR)
        return [[c] for c in cmps]
    return [cmps]


def load(profile: dict) -> None:
    """Load ``profile``'s filter into this process (and what it execs)."""
    lib = _lib()
    default = _action(profile["defaultAction"], profile.get("defaultErrnoRet"))
    ctx = lib.seccomp_init(default)
    if not ctx:
        raise OSError("seccomp_init failed")
    try:
        for rule in profile.get("syscalls") or []:
            if not applies(rule):
                continue
            action = _action(rule["action"], rule.get("errnoRet"))
            if action == default:
                continue
            for name in rule["names"]:
                nr = lib.seccomp_syscall_resolve_name(name.encode())
                if nr < 0:  # not a system call on this machine
                    continue
                for group in _conditions(rule.get("args") or []) or [[]]:
                    arr = (ArgCmp * len(group))(*group) if group else None
                    rc = lib.seccomp_rule_add_array(ctx, action, nr, len(group), arr)
                    if rc < 0:
                        raise OSError(-rc, f"seccomp_rule_add {name} {rule['action']}")
        rc = lib.seccomp_load(ctx)
        if rc < 0:
            raise OSError(-rc, "seccomp_load")
    finally:
        lib.seccomp_release(ctx)


if __name__ == "__main__":
    load(json.loads(Path(sys.argv[1]).read_text()))
    os.execvp(sys.argv[2], sys.argv[2:])
