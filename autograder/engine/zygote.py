"""The warm worker inside the sandbox: imports numpy/torch once, forks one isolated child per job.

A standalone script, like child_harness.py: it imports nothing from
``autograder``. worker.py starts it as ``python zygote.py CONTROL_FD`` inside a
bubblewrap sandbox built by the same code as a cold child's (sandbox.start_in_box:
no network, read-only system, no view of the course, the secret or the grader,
the same seccomp filter) that keeps CAP_SYS_ADMIN and CAP_SETPCAP, valid only
inside the sandbox's own user namespace, for this process. (Unlike a cold child,
without bwrap's --disable-userns, whose nested user namespace would forbid a
job's /proc mount: the seccomp filter refuses user namespaces to every process.) The zygote never runs learner code and never reads a job: it passes
the job's file descriptors on. Per job, over the control socket (JSON messages,
file descriptors attached):

    parent -> zygote   {"t": "run", "limits": {...}}   + fds [job, records, stdout, stderr]
    zygote -> parent   {"t": "started"} ... {"t": "exit", "status": N, "tasks": n}
    parent -> zygote   {"t": "kill"}    (the watchdog: the job took too long)

Each job runs in three processes:

    C  (fork of the zygote) new mount, pid, ipc, network, uts and cgroup namespaces;
       waits for G
    G  pid 1 of the new pid namespace: its own /proc (read-only: this namespace's
       processes only, so /proc/1 is G and nothing of the worker's is reachable through
       it), a fresh tmpfs on /tmp and on /dev/shm, /dev read-only, every capability
       dropped (bounding set included); then forks H and, as init, reaps; when H ends G
       ends, and the kernel kills whatever H left behind
    H  the job: its own session, the rlimits a cold child sets (child_harness.limit_self:
       address space, CPU, file size, processes, files, no core); reads the job from its
       descriptor and runs child_harness.run, which writes the records

So one job cannot see or touch another's files (/tmp, /dev/shm are per job and
vanish with it; the rest is read-only; the worker's own are not reachable), processes (a pid namespace per job, all
killed when it ends; the zygote waits until every process of the job is gone
before it reports the exit: C says on a pipe of its own when G's wait has ended, which the
kernel allows only once the whole pid namespace is gone; C itself, which runs none of the
job's code, is reaped before the next job starts), memory (a fork: a patched module stays in its own
copy), System V IPC or abstract sockets (namespaces per job), or keyrings
(refused by the sandbox's seccomp filter). The zygote checks all of this on a
probe job at start and reports "unavailable" (the grader then uses cold
children) when any of it does not hold.
"""

import ctypes
import fcntl
import gc
import json
import os
import select
import signal
import socket
import sys
import types

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP = 0x20000000, 0x40000000, 0x02000000
JOB_NAMESPACES = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUTS
JOB_NAMESPACES |= CLONE_NEWCGROUP  # as a cold child's bwrap (--unshare-all) makes them
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_MOVE, MS_BIND, MS_REC = (
    1,
    2,
    4,
    32,
    8192,
    4096,
    16384,
)
MS_PRIVATE, MS_NOEXEC = 1 << 18, 8
CLONE_NEWUSER = 0x10000000
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_CHILD_SUBREAPER, PR_CAP_AMBIENT = 1, 24, 36, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAP_LAST = 63
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
JOB_FD, RECORD_FD = 4, 3  # where a job's descriptors sit in C, G and H
GONE_FD = 5  # in C only: where C tells the zygote that G has ended (G closes it first thing)
_MAX_FD = max(1 << 16, os.sysconf("SC_OPEN_MAX"))  # closerange uses close_range(2): one call

libc = ctypes.CDLL(None, use_errno=True)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source, target, fstype, flags, data=None):
    enc = lambda x: x.encode() if x is not None else None  # noqa: E731
    _check(
        libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
        f"mount {target}",
    )


def _drop_capabilities():
    for cap in range(CAP_LAST + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the last cap: ignored
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(libc.capset(ctypes.byref(header), data), "capset")


# -- messages ----------------------------------------------------------------------------------


def _send(ctl, msg):
    ctl.send(json.dumps(msg).encode())


def _recv(ctl):
    """(message, fds) or (None, []) when the parent has gone."""
    data, fds, _flags, _addr = socket.recv_fds(ctl, 1 << 18, 8)  # the hello holds the codec
    if not data:
        for fd in fds:
            os.close(fd)
        return None, []
    return json.loads(data), fds


def _tasks(exclude=()):
    """Processes and threads in this sandbox (the parent sizes the process limit with it),
    those of the pids ``exclude`` left out."""
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) not in exclude:
            try:
                n += len(os.listdir(f"/proc/{d}/task"))
            except OSError:
                pass
    return n


def _my_children():
    me, out = os.getpid(), []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", "rb") as f:
                    stat = f.read()
                if int(stat[stat.rindex(b")") + 2 :].split()[1]) == me:
                    out.append(int(d))
            except (OSError, ValueError):
                pass
    return out


# -- one job: C, G, H --------------------------------------------------------------------------


def _place(fds, gone=None):
    """Put the job's descriptors at 4 (job), 3 (records), 1, 2, and ``gone`` (when given) at
    GONE_FD; stdin from /dev/null; close everything else (the control socket above all)."""
    job, records, out, err = (os.dup(fd) for fd in fds)  # copies first: targets may clash
    kept = None if gone is None else fcntl.fcntl(gone, fcntl.F_DUPFD, GONE_FD + 16)
    null = os.open("/dev/null", os.O_RDONLY)
    for src, dst in ((null, 0), (out, 1), (err, 2), (records, RECORD_FD), (job, JOB_FD)):
        os.dup2(src, dst)
    if kept is not None:
        os.dup2(kept, GONE_FD)
    os.closerange((JOB_FD if kept is None else GONE_FD) + 1, _MAX_FD)


def _child_c(msg, fds, harness, gone=None):
    """C: new namespaces, then G, then wait for G. With ``gone`` (a pipe's writing end), C
    writes there the exit status it will end with as soon as G has ended: G is the job's pid
    namespace's init, and the kernel ends its wait only once every process of that namespace
    is gone, so the zygote can report the job's end without waiting for C's own exit (tearing
    down C's copy of the zygote's memory, 6-8 ms with torch loaded)."""
    try:
        _place(fds, gone)
        _check(libc.unshare(JOB_NAMESPACES), "unshare")
        g = os.fork()
        if g == 0:
            _child_g(msg, harness)
        os.closerange(0, _MAX_FD if gone is None else GONE_FD)
        _, status = os.waitpid(g, 0)
        code = os.waitstatus_to_exitcode(status)
        code = code if code >= 0 else 128 - code
        if gone is not None:
            try:
                os.write(GONE_FD, str(code).encode())
            except OSError:
                pass
        os._exit(code)
    except BaseException:  # noqa: BLE001 (no traceback: stderr is the learner's stream)
        os._exit(125)


_MS_FLAGS = {"nosuid": 2, "nodev": 4, "noexec": 8, "noatime": 1024, "nodiratime": 2048}
_MS_FLAGS.update(relatime=1 << 21, strictatime=1 << 24)


def _remount_readonly(point):
    """Remount ``point`` read-only, keeping its other flags (the kernel refuses to drop a
    flag it locked, e.g. noexec on a host's /tmp)."""
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY
    for line in open("/proc/self/mountinfo"):
        fields = line.split()
        if fields[4] == point:  # the last one listed is the one on top
            options = fields[5].split(",")
            flags = MS_REMOUNT | MS_BIND | MS_RDONLY
            flags |= sum(v for k, v in _MS_FLAGS.items() if k in options)
    _mount(None, point, None, flags)


def _binds_below_tmp():
    """The outermost mount points below /tmp (none, unless libraries live under /tmp)."""
    points = []
    for line in open("/proc/self/mountinfo"):
        point = line.split()[4]
        if point.startswith("/tmp/"):
            points.append(point)
    return list(dict.fromkeys(p for p in points if not any(p.startswith(q + "/") for q in points)))


def _fresh_tmp(options):
    """A new tmpfs on /tmp that still shows what the sandbox binds below /tmp (a library
    folder or the interpreter of a course cloned under /tmp), read-only as before."""
    tops = _binds_below_tmp()
    if not tops:
        _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, options)
        return
    stage = "/dev/shm"  # built here, then moved onto /tmp
    _mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, options)
    for point in tops:
        target = stage + point[len("/tmp") :]
        if os.path.isdir(point):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, "a").close()
        _mount(point, target, None, MS_BIND | MS_REC)
        _remount_readonly(target)
    _mount(stage, "/tmp", None, MS_MOVE)


def _child_g(msg, harness):
    try:
        try:
            os.close(GONE_FD)  # C's alone: H, the job, must never be able to write there
        except OSError:
            pass  # none (the probe job's C has none)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        limits = msg["limits"]
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
        # Its own /proc, as a cold child has: this pid namespace's processes only (/proc/1 is
        # G, which holds nothing of the worker's), none of the worker's roots, descriptors or
        # folders; read-only from the start: where bwrap ran as an ordinary user, the mount
        # namespace predates the sandbox's user namespace, so the sandbox's /proc is locked
        # read-only, and the kernel refuses (EPERM) a new proc mount less restricted than it.
        _mount("proc", "/proc", "proc", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
        _remount_readonly("/proc")
        tmp = f"size={int(limits['tmp_mb'])}m,nr_inodes=16384,mode=1777"
        _fresh_tmp(tmp)
        _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, tmp)
        _remount_readonly("/dev")
        os.chdir("/tmp")
        _drop_capabilities()
        for sig in signal.valid_signals():
            if sig not in (signal.SIGKILL, signal.SIGSTOP):
                try:
                    signal.signal(sig, signal.SIG_DFL)  # as init, ignored from inside
                except (OSError, ValueError):
                    pass
        h = os.fork()
        if h == 0:
            _child_h(limits, harness)
        os.closerange(0, _MAX_FD)
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == h:
                code = os.waitstatus_to_exitcode(status)
                os._exit(code if code >= 0 else 128 - code)
    except BaseException:  # noqa: BLE001
        os._exit(126)


def _job_limits(limits):
    """A job's limits with the process limit raised by the tasks this sandbox runs now (the
    uid's count holds them, and C, G and H), less two (a cold child's bwrap init and itself)."""
    return dict(limits, nproc=int(limits["nproc"]) + _tasks() + 3 - 2)


def _child_h(limits, harness):
    try:
        os.setsid()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_IGN)  # as a fresh interpreter has them
        harness.limit_self(limits)  # as a cold child's harness does
        chunks = []
        while True:
            chunk = os.read(JOB_FD, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(JOB_FD)
        job = json.loads(b"".join(chunks))
        del chunks
        if job.get("probe"):
            _probe(RECORD_FD, limits)
        harness.run(job, RECORD_FD)
    except BaseException:  # noqa: BLE001
        pass
    os._exit(71)


# -- the probe: does every promise above hold here? --------------------------------------------


def _probe(fd, limits):
    """Write what fails among the isolation promises (an empty list: all hold), then end."""
    import resource

    problems = []

    def status(field):
        text = open("/proc/self/status").read()
        return text.split(field + ":")[1].split()[0]

    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        if int(status(cap), 16) != 0:
            problems.append(f"{cap} is {status(cap)}")
    if status("NoNewPrivs") != "1":
        problems.append("no_new_privs is not set")
    if status("Seccomp") != "2":
        problems.append("no seccomp filter")
    r = libc.syscall(248 if os.uname().machine == "x86_64" else 217, b"user", b"k", b"x", 1, -4)
    if r >= 0:
        problems.append("keyrings are reachable")
    if os.getpid() != 2 or os.getppid() != 1:
        problems.append(f"not in a pid namespace of its own (pid {os.getpid()})")
    if libc.unshare(CLONE_NEWUSER) == 0:
        problems.append("a user namespace could be made")
    if any(not line.rstrip().endswith(":/") for line in open("/proc/self/cgroup")):
        problems.append("not in a cgroup namespace of its own")
    # Its own /proc: this job's processes only, read-only, and pid 1 (G) shows nothing of the
    # worker: its root's /tmp and /dev/shm are the job's own, its descriptors are gone or pipes.
    pids = sorted(int(d) for d in os.listdir("/proc") if d.isdigit())
    if pids != [1, 2]:
        problems.append(f"/proc is not the job's own (it lists {pids[:8]})")
    procs = [line.split() for line in open("/proc/self/mountinfo") if line.split()[4] == "/proc"]
    if not procs or "ro" not in procs[-1][5].split(","):
        problems.append("/proc is not mounted read-only")
    for folder in ("/tmp", "/dev/shm"):
        try:
            if os.stat(f"/proc/1/root{folder}").st_dev != os.stat(folder).st_dev:
                problems.append(f"/proc/1/root{folder} is not the job's own {folder}")
        except OSError:
            pass  # not reachable at all: fine
    try:
        for entry in os.listdir("/proc/1/fd"):
            target = os.readlink(f"/proc/1/fd/{entry}")
            if target.startswith("/") and not target.startswith(("/dev/null", "/memfd:")):
                problems.append(f"/proc/1/fd/{entry} leads to {target}")
    except OSError:
        pass
    mb = 1024 * 1024
    for name, want in (
        ("RLIMIT_AS", int(limits["memory_mb"]) * mb),
        ("RLIMIT_FSIZE", int(limits["fsize_mb"]) * mb),
        ("RLIMIT_NPROC", int(limits["nproc"])),
        ("RLIMIT_CPU", int(limits["cpu_seconds"])),
    ):
        if resource.getrlimit(getattr(resource, name))[0] != want:
            problems.append(f"{name} is not the job's limit")
    binds = {p.split("/")[2] for p in _binds_below_tmp()}  # library folders bound under /tmp
    for folder, allowed in (("/tmp", binds), ("/dev/shm", set())):
        if set(os.listdir(folder)) - allowed:
            problems.append(f"{folder} is not empty")
        try:
            with open(f"{folder}/probe", "w") as f:
                f.write("x")
        except OSError as e:
            problems.append(f"{folder} is not writable ({e})")
    for target in ("/dev/probe", "/probe", "/usr/probe", "/proc/sys/kernel/hostname"):
        try:
            with open(target, "w"):
                pass
            problems.append(f"{target} could be written")
        except OSError:
            pass
    # Every writable mount is this job's own tmpfs, devpts, a device node, or the worker's /tmp
    # under this job's tmpfs.
    for line in open("/proc/self/mountinfo"):
        fields = line.split()
        point, options = fields[4], fields[5].split(",")
        if "rw" in options and point not in ("/tmp", "/dev/shm", "/dev/pts"):
            if not (point.startswith("/dev/") and point.count("/") == 2):
                problems.append(f"{point} is mounted writable")
    os.write(fd, (json.dumps(problems) + "\n").encode())
    os._exit(0)


# -- the zygote --------------------------------------------------------------------------------


_ENDING = []  # the C of a job reported ended (its G gone), not yet reaped


def _reap_ending():
    """Wait for the C of the last job to end, and reap whatever else has ended: before a job
    starts, nothing of the one before it is left (its process count included)."""
    while _ENDING:
        try:
            os.waitpid(_ENDING.pop(), 0)
        except ChildProcessError:
            pass
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def _run(ctl, msg, fds, harness):
    """Run one job; report its exit status once every process that ran any of it has ended
    (G, and with it the job's whole pid namespace; C, which ran only this file's code, may
    still be ending: it is reaped before the next job starts)."""
    _reap_ending()
    msg = dict(msg, limits=_job_limits(msg["limits"]))
    gone_r, gone_w = os.pipe()
    c = os.fork()
    if c == 0:
        ctl.close()
        os.close(gone_r)
        _child_c(msg, fds, harness, gone_w)
    os.close(gone_w)
    for fd in fds:
        os.close(fd)
    pidfd = os.pidfd_open(c)  # readable once C has ended
    _send(ctl, {"t": "started"})
    status, killing, gone = None, False, False
    while True:
        watch = ([] if gone else [ctl]) + ([pidfd, gone_r] if status is None else [])
        ready, _, _ = select.select(watch, [], [], 0.05 if killing or status is not None else 5.0)
        if gone_r in ready and not killing:
            said = os.read(gone_r, 16)
            if said:  # G has ended: the job is over, C is all that is left
                status = int(said)
                _ENDING.append(c)
                break
        if ctl in ready:
            m, extra = _recv(ctl)
            for fd in extra:
                os.close(fd)
            if m is None:
                killing = gone = True  # the parent has gone: end the job, then ourselves
            elif m.get("t") == "kill":
                killing = True
        if killing:
            for pid in _my_children():
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        try:
            while True:
                pid, st = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
                if pid == c:
                    status = os.waitstatus_to_exitcode(st)
        except ChildProcessError:
            break  # no child left: C, G, H and everything H started are gone
    os.close(pidfd)
    os.close(gone_r)
    if gone:
        os._exit(0)
    _send(ctl, {"t": "exit", "status": status, "tasks": _tasks(exclude=_ENDING)})


def _load_harness(path):
    module = types.ModuleType("drills_harness")
    module.__file__ = path
    with open(path, encoding="utf-8") as f:
        exec(compile(f.read(), path, "exec"), module.__dict__)  # noqa: S102 (trusted: the grader's harness)
    return module


def _self_test(ctl, harness, limits):
    """Run the probe job through the same path as a real job."""
    r, w = os.pipe()
    out_r, out_w = os.pipe()
    job = os.memfd_create("probe")
    os.write(job, json.dumps({"probe": True}).encode())
    os.lseek(job, 0, os.SEEK_SET)
    c = os.fork()
    if c == 0:
        ctl.close()
        _child_c({"limits": _job_limits(limits)}, [job, w, out_w, out_w], harness)
    for fd in (job, w, out_w):
        os.close(fd)
    with os.fdopen(r, "rb") as f:
        line = f.read(65536)
    os.close(out_r)
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    try:
        problems = json.loads(line)
    except ValueError:
        return "the probe job did not report (namespaces or mounts refused?)"
    return "; ".join(problems) or None


def main(argv):
    ctl = socket.socket(fileno=int(argv[1]))
    hello, _ = _recv(ctl)
    sys.path.extend(hello["sys_path"])
    harness = _load_harness(hello["harness"])
    failed = []
    for name in hello.get("preload", []):
        try:
            __import__(name)
        except BaseException:  # noqa: BLE001 (the job will import it, and fail there if it must)
            failed.append(name)
    try:
        harness.preload()
    except BaseException:  # noqa: BLE001 (each job then imports what it needs itself)
        pass
    if hello.get("codec"):
        try:
            harness.precompile(hello["codec"])
        except BaseException:  # noqa: BLE001 (each job then compiles its own, and fails there)
            pass
    # Everything loaded so far is kept for the zygote's life: frozen, the garbage collector of
    # a job never walks it, so a job does not write to (and copy) every page of the imported
    # modules' objects when it collects its own garbage.
    gc.freeze()
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    why = _self_test(ctl, harness, hello["probe_limits"])
    _send(ctl, {"t": "ready" if why is None else "unavailable", "why": why, "tasks": _tasks()})
    if why is not None:
        return
    while True:
        msg, fds = _recv(ctl)
        if msg is None:
            return
        if msg.get("t") == "run" and len(fds) == 4:
            _run(ctl, msg, fds, harness)
        else:
            for fd in fds:
                os.close(fd)  # a stray "kill" after a job ended, or nothing we know


if __name__ == "__main__":
    try:
        main(sys.argv)
    except BaseException:  # noqa: BLE001
        os._exit(72)
