"""The seccomp filter every bubblewrap sandbox gets (bwrap's ``--seccomp``), cold children and
warm workers alike: kernel keyrings, a foreign ABI and new user namespaces refused.
"""

from __future__ import annotations

import os

# Kernel keyrings belong to a uid, not to a process: a key added by one child could be read by
# a later child with the same uid. No grading needs them, so every child is refused them.
# User namespaces are refused too: a process in a new one holds every capability there. A cold
# child also has bwrap's --disable-userns; a warm worker cannot (its zygote must mount each
# job's own /proc, which the nested user namespace of --disable-userns forbids), so for its
# jobs this filter is what refuses them.
_SYSCALLS = {  # machine: AUDIT_ARCH_*, (add_key, request_key, keyctl), unshare, clone, clone3
    "x86_64": (0xC000003E, (248, 249, 250), 272, 56, 435),
    "aarch64": (0xC00000B7, (217, 218, 219), 97, 220, 435),
}
CLONE_NEWUSER = 0x10000000


def seccomp_filter() -> bytes | None:
    """A classic-BPF seccomp program for bwrap's --seccomp: keyring calls, calls from a foreign
    ABI (e.g. 32-bit entry on x86_64) and unshare/clone with CLONE_NEWUSER fail with EPERM;
    clone3 (whose flags a filter cannot read) fails with ENOSYS, so that the C library falls
    back to clone. None on other machines."""
    import platform
    import struct

    arch = _SYSCALLS.get(platform.machine())
    if arch is None:
        return None
    audit, keyring, unshare, clone, clone3 = arch
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    nosys = 0x00050000 | 38  # SECCOMP_RET_ERRNO | ENOSYS
    # (code, jump-if-true label, jump-if-false label, k); labels are resolved below
    prog: list[tuple[int, str | int, str | int, int]] = [
        (ld, 0, 0, 4),  # seccomp_data.arch
        (jeq, 0, "deny", audit),  # native ABI: go on
        (ld, 0, 0, 0),  # seccomp_data.nr
        (jge, "deny", 0, 0x40000000),  # x32 system calls (bit 30)
        *[(jeq, "deny", 0, nr) for nr in keyring],
        (jeq, "nosys", 0, clone3),
        (jeq, "flags", 0, unshare),
        (jeq, "flags", "allow", clone),
        ("flags", 0, 0, 0),
        (ld, 0, 0, 16),  # seccomp_data.args[0], low 32 bits (little-endian machines only)
        (jset, "deny", "allow", CLONE_NEWUSER),
        ("allow", 0, 0, 0),
        (ret, 0, 0, allow),
        ("deny", 0, 0, 0),
        (ret, 0, 0, deny),
        ("nosys", 0, 0, 0),
        (ret, 0, 0, nosys),
    ]
    labels, code = {}, []
    for ins in prog:
        if isinstance(ins[0], str):
            labels[ins[0]] = len(code)
        else:
            code.append(ins)
    out = b""
    for i, (op, jt, jf, k) in enumerate(code):
        jt, jf = (labels[j] - i - 1 if isinstance(j, str) else j for j in (jt, jf))
        out += struct.pack("=HBBI", op, jt, jf, k)
    return out


def seccomp_fd() -> int | None:
    """A file descriptor holding :func:`seccomp_filter` (bwrap reads it), or None."""
    prog = seccomp_filter()
    if prog is None:
        return None
    fd = os.memfd_create("drills-seccomp")
    os.write(fd, prog)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
