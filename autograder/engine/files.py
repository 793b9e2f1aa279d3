"""Reading a file of a submission: never through a link, never more than a limit.

A submission is what is inside its own folder. A notebook (or ``timestamp.txt``) that is a
symbolic link could name the course's solution, the secret file or ``/dev/zero``; a FIFO would
block the grader; a device reports a size of 0 and then never ends. So every file of a
submission is read by :func:`read_regular`: opened with ``O_NOFOLLOW`` (a link is refused, not
followed) and ``O_NONBLOCK`` (opening a FIFO does not wait for a writer), checked with
``fstat`` on the open descriptor to be a regular file, and read to at most ``limit + 1`` bytes,
whatever the size it claims.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class Refused(Exception):
    """The file is not read: a link, not a regular file, over the limit, or unreadable.
    The message says which, in words an instructor or a learner can act on."""


def read_regular(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``), or Refused saying why not."""
    name = Path(path).name
    try:
        fd = os.open(
            path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        )
    except OSError as e:
        if e.errno == errno.ELOOP or (e.errno == errno.EMLINK and Path(path).is_symlink()):
            raise Refused(
                f"{name} is a symbolic link; links are not followed: a submission is what is "
                "inside its own folder (copy the file itself there)"
            ) from None
        raise Refused(f"cannot read {name}: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"{name} is not a regular file ({_kind(st.st_mode)}); it is not read")
        if st.st_size > limit:
            raise Refused(f"{name} is {st.st_size / 1e6:.1f} MB; the limit is {limit / 1e6:.0f} MB")
        chunks, got = [], 0
        while got <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > limit:
            raise Refused(f"{name} is larger than the limit of {limit / 1e6:.0f} MB")
        return b"".join(chunks)
    except OSError as e:
        raise Refused(f"cannot read {name}: {e.strerror or e}") from None
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    for test, word in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a pipe"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return word
    return "not a plain file"
