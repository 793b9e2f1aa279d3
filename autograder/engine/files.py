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


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def remove_tree(path: str | os.PathLike) -> None:
    """Remove the folder ``path`` and everything in it, as far as it can be removed; never
    raises, never follows a link.

    A learner's code writes into its sandbox folder, and can leave a chain of thousands of
    nested folders there: ``shutil.rmtree`` recurses once per level (RecursionError past about
    a thousand) and ``rm -r``-style path names grow past the 4,096 bytes the kernel takes. This
    walks down and up with one open folder at a time (each step relative to the last, by name
    or ``..``), so neither the depth nor the length of a path matters. What cannot be removed
    (a folder it may not read) is left, as ``rmtree(ignore_errors=True)`` leaves it. Each
    folder is read once, so a wide folder costs what a deep one does."""
    try:
        fd = os.open(path, _DIR_FLAGS)
    except OSError:
        try:
            os.unlink(path)  # a file or a link where the folder was: remove the entry itself
        except OSError:
            pass
        return
    # one entry per folder walked into, from ``path`` down: its name in its parent, and the
    # sub-folders of it still to remove (read once, when first entered)
    names: list[str] = []
    pending: list[list[str]] = [_empty_files(fd)]
    try:
        while True:
            if pending[-1]:
                child = pending[-1].pop()
                try:
                    nxt = os.open(child, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    continue  # not readable (or gone): left, as rmtree(ignore_errors) leaves it
                os.close(fd)
                fd = nxt
                names.append(child)
                pending.append(_empty_files(fd))
                continue
            if not names:
                break
            up = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = up
            pending.pop()
            try:
                os.rmdir(names.pop(), dir_fd=fd)
            except OSError:
                pass
    except OSError:
        pass
    finally:
        os.close(fd)
    try:
        os.rmdir(path)
    except OSError:
        pass


def _empty_files(fd: int) -> list[str]:
    """Unlink every entry of the open folder ``fd`` that is not a folder (links included, not
    followed); return the names of its sub-folders."""
    folders = []
    try:
        with os.scandir(fd) as it:
            for e in it:
                try:
                    if e.is_dir(follow_symlinks=False):
                        folders.append(e.name)
                    else:
                        os.unlink(e.name, dir_fd=fd)
                except OSError:
                    pass
    except OSError:
        pass
    return folders
