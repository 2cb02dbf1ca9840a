"""Per-call containment for untrusted programs: each call gets its own set of Linux namespaces.

`run_contained(target, limits)` is called in a disposable process (a zygote's per-request fork, or a fresh
interpreter on the cold path). That process switches to an unprivileged user when it runs as root, enters new
user, mount, PID, network, IPC and UTS namespaces, gives the call a fresh private /tmp (size-capped), hides the
paths it is told to hide, then forks the call's first process (PID 1 of the new PID namespace). That process
mounts a /proc that shows only its own namespace, drops every capability, sets no_new_privs and the resource
limits (address space, processes, file size, core dumps), refuses the memory the address-space limit does not count
(memfds, attached SysV shared memory, a tmpfs of a nested user namespace, raised socket buffers: a seccomp filter,
`deny_unlimited_memory`, on x86-64 and arm64, which also refuses the keyrings, after the call has left hone's
session keyring), closes every inherited descriptor but its result pipe, and runs the target. When it ends or is killed, the kernel kills everything left in its PID namespace, so no
daemon, fork or detached child outlives the call. Nothing the call can reach leads to a socket outside it: its
network namespace is empty, and the filesystem it sees holds no socket.

The warm zygote makes its calls with one fork each (`CallHost`, `enter_call`): it lives in a user namespace and a
PID namespace of its own, so it may give each forked call a new PID namespace and return to its own, and the call,
PID 1 of that namespace, enters the rest of its containment itself. The cold path and one-off checks make a call
with `Box` (`run_contained`): a disposable process enters every namespace and forks the call's first process.

Where user namespaces are not available the call still runs in its own session with the same resource limits and
is killed as a process group; `probe()` says which guarantees hold.
"""
import ctypes
import json
import os
import resource
import select
import signal
import sys
import time

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 1, 4, 38, 36
SYS_MOUNT_SETATTR, AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = 442, -100, 0x8000, 1
NOBODY = 65534
CPU_EXIT = 152  # the exit code of a call stopped at its CPU limit
KEEP_ENV = ("PATH", "LANG", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_CORETYPE")
MAX_REQUEST_BYTES = 16 << 20  # a program of at most 4 MB, written twice over by JSON escapes, and its arguments
DEFAULTS = {"max_processes": 64, "tmp_mb": 256, "file_mb": 256, "open_files": 256, "output_mb": 64}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.syscall.restype = ctypes.c_long


class Unavailable(Exception):
    """The kernel refused to create the namespaces (user namespaces disabled, or a seccomp policy)."""


def _check(rc, what):
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, "%s: %s" % (what, os.strerror(err)))


def prctl(option, arg):
    _check(_libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), "prctl(%d)" % option)


def mount(source, target, fstype, flags, data=None):
    enc = lambda s: s.encode() if isinstance(s, str) else s  # noqa: E731
    _check(_libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), "mount %s" % target)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64), ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def drop_capabilities():
    """Empties the effective, permitted, inheritable (and so ambient) sets of this process. The bounding set is left:
    with no_new_privs no exec can raise capabilities, and a nested user namespace starts with a full set whatever
    the bounding set was (the kernel resets it), so dropping it would cost 40 system calls and close nothing."""
    header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


def _write(path, text):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


_OPEN_TO_OTHERS = []


def python_open_to_others():
    """Whether an unprivileged user can still reach this interpreter's files (not so under a 0700 /root).
    Asked once per process (the warm zygote's forks inherit the answer)."""
    if not _OPEN_TO_OTHERS:
        _OPEN_TO_OTHERS.append(_walk_open_to_others())
    return _OPEN_TO_OTHERS[0]


def _walk_open_to_others():
    for top in {sys.prefix, sys.base_prefix, os.path.dirname(os.path.abspath(__file__))}:
        path = os.path.abspath(top)
        while True:
            try:
                if not os.stat(path).st_mode & 0o001:
                    return False
            except OSError:
                return False
            if path == "/":
                break
            path = os.path.dirname(path)
    return True


def _become_nobody():
    """As root (with CAP_SETUID), switch to an unprivileged user so process limits and file modes apply."""
    if os.geteuid() != 0 or not python_open_to_others():
        return False
    try:
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
    except PermissionError:
        return False
    return True


def _readonly_root():
    attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    rc = _libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, b"/", AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr))
    return rc == 0


def _hide(path):
    """Covers a folder (or a file) with an empty one. A path through a symbolic link (a task folder reached by a
    link) hides where it leads, which is what the program could otherwise read by its real name: mount itself
    follows the link, and a file bound over the folder it leads to would fail the call's set-up."""
    real = os.path.realpath(path)
    if os.path.isdir(real):
        mount("tmpfs", real, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555")
    elif os.path.exists(real):
        mount("/dev/null", real, None, MS_BIND)


def enter_namespaces(limits):
    """Moves this (disposable) process into fresh namespaces and prepares the call's filesystem view.
    Returns a dict of what holds; raises Unavailable when no namespace could be created."""
    nobody = _become_nobody() if limits.get("nobody", True) else False
    uid, gid = os.geteuid(), os.getegid()
    prctl(PR_SET_DUMPABLE, 1)  # a non-dumpable parent (or a changed uid) leaves /proc/self root-owned
    if _libc.unshare(NAMESPACES) != 0:
        raise Unavailable(os.strerror(ctypes.get_errno()))
    _map_ids(uid or NOBODY, uid, gid or NOBODY, gid)
    readonly = _private_mounts(limits)
    return {"namespaces": True, "unprivileged_user": uid != 0, "nobody": nobody, "readonly_root": readonly}


def _private_mounts(limits):
    """In a new mount namespace: nothing propagates back, the root read-only where asked, the hidden paths, a
    private size-capped /tmp and /dev/shm. Returns whether the root was made read-only (None: not asked)."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    readonly = _readonly_root() if limits.get("readonly_root") else None
    for path in limits.get("hide") or []:
        _hide(path)
    tmp_mb = int(limits.get("tmp_mb") or DEFAULTS["tmp_mb"])
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=%dm,mode=0700" % tmp_mb)
    if os.path.isdir("/dev/shm"):
        mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=%dm,mode=0700" % tmp_mb)
    return readonly


class CallHost:
    """The warm zygote's maker of calls, set up once. As root it first becomes the unprivileged user (so process
    limits and file modes apply to every call), then enters a user namespace and a PID namespace of its own: the
    process that made this waits there for the one that serves (PID 1 of the new PID namespace), which alone returns
    from the constructor. Having every right in that user namespace, it may give each call a PID namespace of its
    own (`fork_call`: unshare, fork, and back to its own with setns), so a call costs one fork. Where user
    namespaces are not available, `contained` is False and calls are plain forks (each in a session of its own)."""

    def __init__(self, limits):
        self.contained, self.own = False, None
        nobody = _become_nobody() if limits.get("nobody", True) else False
        uid, gid = os.geteuid(), os.getegid()
        prctl(PR_SET_DUMPABLE, 1)  # a changed uid leaves /proc/self root-owned
        if _libc.unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0:
            self.isolation = {"namespaces": False, "reason": os.strerror(ctypes.get_errno())}
            return
        _map_ids(uid or NOBODY, uid, gid or NOBODY, gid)
        code = run_forked(None)
        if code is not None:
            os._exit(code)
        self.own = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        self.contained = True
        self.isolation = {"namespaces": True, "unprivileged_user": uid != 0, "nobody": nobody}

    def fork_call(self):
        """Forks a call's process (returns as os.fork does): contained, PID 1 of a PID namespace of its own."""
        if not self.contained:
            return os.fork()
        _check(_libc.unshare(CLONE_NEWPID), "unshare(CLONE_NEWPID)")
        try:
            pid = os.fork()
        except BaseException:
            self._back()
            raise
        if pid:
            self._back()
        return pid

    def _back(self):
        _check(_libc.setns(self.own, CLONE_NEWPID), "setns(CLONE_NEWPID)")


def _map_ids(inside_uid, uid, inside_gid, gid):
    _write("/proc/self/setgroups", "deny")
    # Never map the namespace's uid 0: that needs CAP_SETFCAP, and the program has no use for it.
    _write("/proc/self/uid_map", "%d %d 1" % (inside_uid, uid))
    _write("/proc/self/gid_map", "%d %d 1" % (inside_gid, gid))


def run_forked(child):
    """Forks a process that dies with this one (PDEATHSIG) and runs `child()` there, then exits; this process waits
    for it and returns its exit code (128 + signal when killed). With `child` None, returns None in the child."""
    alive, held = os.pipe()  # held open by the process that waits: its end of file means it died
    pid = os.fork()
    if pid:
        os.close(alive)
        status = os.waitpid(pid, 0)[1]
        os.close(held)
        code = os.waitstatus_to_exitcode(status)
        return code if code >= 0 else 128 - code
    try:
        os.close(held)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if select.select([alive], [], [], 0)[0]:
            os._exit(0)  # the waiting process died before the line above: no signal will come
        os.close(alive)
        if child is None:
            return None
        child()
    except BaseException:
        os._exit(70)
    os._exit(0)


_CALL_ENTERED = []


def enter_call(limits):
    """In a call's process made by a contained CallHost (PID 1 of its own PID namespace): enters a user namespace of
    its own (so its process limit and keyrings are its own), and mount, network, IPC and UTS namespaces owned by it;
    a private /tmp and /dev/shm; the hidden paths, and /proc hidden (its PID namespace belongs to the zygote's user
    namespace, in which this process has no rights to mount one). Returns what holds."""
    uid, gid = os.geteuid(), os.getegid()
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    _map_ids(uid, uid, gid, gid)
    readonly = _private_mounts(limits)
    _hide("/proc")
    _CALL_ENTERED.append(True)
    return {"namespaces": True, "readonly_root": readonly}


def seal_call(limits, contained, keep=()):
    """The rest of a call's containment, before anything of the request runs: descriptors (0-2 on /dev/null, all
    others closed but `keep`), its scratch folder as working directory, HOME and TMPDIR, an environment without
    secrets, the resource limits, no capabilities, no_new_privs, and not dumpable. Returns the scratch folder."""
    start = 3
    for fd in sorted(keep):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, 1 << 20)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    if null > 2:
        os.close(null)
    scratch = _settle(limits, contained)
    prctl(PR_SET_DUMPABLE, 0)  # nothing the call starts later may trace or read this process
    return scratch


# Memory that RLIMIT_AS does not count: a memfd's pages (written with write(), never mapped) and SysV shared memory
# (attached, filled and detached again) would let one process hold any amount of the host's memory for as long as
# its call runs; so would a tmpfs of its own, which a call could mount after entering a new user namespace (where
# /proc lets it map its ids, as on the cold path without bubblewrap: 1.4 GB held under a 256 MB limit), and socket
# buffers raised with SO_SNDBUF to the host's maximum (1.6 GB held in 200 Unix sockets under a 256 MB limit; at the
# default size its open-file limit keeps a process to about 80 MB). Python, numpy and the standard library use none
# of these; a call gets ENOSYS for them, as from a kernel without them: memfds, shmat, clone3 (whose flags a filter
# cannot read; glibc then makes its threads and processes with clone), clone or unshare asking for CLONE_NEWUSER.
# setsockopt of a socket's buffer sizes returns success and leaves the size as it was (the kernel may clamp a size
# anyway; trio sets SO_RCVBUF without a try, and an error would break it). Syscalls of another ABI (i386 through int 0x80, x32), which name these
# by other numbers, are refused whole. A SysV segment may still be made (its pages exist only once attached and
# touched), never attached.
# The same filter refuses the kernel's keyrings (add_key, request_key, keyctl): the session keyring is inherited
# through every fork, namespace and change of user, so a program read a secret key of hone's login session and
# planted one there that hone's other processes and later programs saw. A call also joins a keyring of its own
# first (`_own_keyring`), so not even the names of the session's keys show in /proc/keys.
# io_uring is refused too: its operations never pass through this filter (IORING_OP_URING_CMD set SO_SNDBUF to
# 8 MB in a call whose setsockopt was refused).
# Per architecture: AUDIT_ARCH, [memfd_create, memfd_secret, shmat, clone3, io_uring_setup, io_uring_enter,
# io_uring_register, add_key, request_key, keyctl] (the keyring calls last), the first number of another ABI (or
# None), [clone, unshare] (refused when their flags, the first argument, ask for CLONE_NEWUSER), setsockopt.
_SECCOMP_ARCH = {
    "x86_64": (0xC000003E, (319, 447, 30, 435, 425, 426, 427, 248, 249, 250), 0x40000000, (56, 272), 54),
    "aarch64": (0xC00000B7, (279, 447, 196, 435, 425, 426, 427, 217, 218, 219), None, (220, 97), 208),
}
KEYCTL_JOIN_SESSION_KEYRING = 1
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
BPF_LD_ABS, BPF_JEQ, BPF_JGE, BPF_JSET, BPF_RET = 0x20, 0x15, 0x35, 0x45, 0x06
SECCOMP_ARG = (16, 24, 32)  # offsets of the low 32 bits of the first three arguments in struct seccomp_data (LE)
SOL_SOCKET, BUFFER_OPTIONS = 1, (7, 8, 32, 33)  # SO_SNDBUF, SO_RCVBUF, SO_SNDBUFFORCE, SO_RCVBUFFORCE
ENOSYS = 38


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def _memory_filter(arch, denied, other_abi, flagged=(), setsockopt=None):
    """The BPF program: another architecture or ABI, a denied syscall, or a `flagged` one whose flags ask for a new
    user namespace gets ENOSYS; `setsockopt` of a buffer size succeeds without changing it (a size is a hint, and
    code such as trio's sets one without a try); everything else runs."""
    load = lambda offset: (None, BPF_LD_ABS, 0, 0, offset)  # noqa: E731
    checks = [(BPF_JGE, other_abi)] if other_abi is not None else []
    checks += [(BPF_JEQ, nr) for nr in denied]
    lines = [load(4), (None, BPF_JEQ, 0, "deny", arch), load(0)]
    lines += [(None, code, "deny", 0, k) for code, k in checks]
    lines += [(None, BPF_JEQ, "flags", 0, nr) for nr in flagged]
    if setsockopt is not None:
        lines.append((None, BPF_JEQ, "sockopt", 0, setsockopt))
    lines += [(None, BPF_RET, 0, 0, SECCOMP_RET_ALLOW), ("flags",) + load(SECCOMP_ARG[0])[1:]]
    lines += [(None, BPF_JSET, "deny", "allow", CLONE_NEWUSER), ("sockopt",) + load(SECCOMP_ARG[1])[1:]]
    lines += [(None, BPF_JEQ, 0, "allow", SOL_SOCKET), load(SECCOMP_ARG[2])]
    lines += [(None, BPF_JEQ, "ignore", 0, option) for option in BUFFER_OPTIONS]
    lines += [("allow", BPF_RET, 0, 0, SECCOMP_RET_ALLOW), ("deny", BPF_RET, 0, 0, SECCOMP_RET_ERRNO | ENOSYS)]
    lines += [("ignore", BPF_RET, 0, 0, SECCOMP_RET_ERRNO | 0)]
    return _assemble(lines)


def _assemble(lines):
    """(label, code, jt, jf, k) lines, jumps named by the label of a later line (0: the next line), to BPF tuples."""
    at = {line[0]: i for i, line in enumerate(lines) if line[0]}
    hop = lambda i, to: to if to == 0 else at[to] - i - 1  # noqa: E731
    return [(code, hop(i, jt), hop(i, jf), k) for i, (_, code, jt, jf, k) in enumerate(lines)]


def deny_unlimited_memory():
    """Installs the filter above in this process (and so in everything it starts); needs no_new_privs. Returns
    whether it holds (False on an architecture it does not know, or where the kernel refused it)."""
    known = _SECCOMP_ARCH.get(os.uname().machine)
    if known is None:
        return False
    return _install(_memory_filter(*known))


def _install(prog):
    filters = (_SockFilter * len(prog))(*[_SockFilter(*ins) for ins in prog])
    fprog = _SockFprog(len(prog), filters)
    return _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0


def seal_keyrings():
    """For an evaluator's process (which may import the program it judges): a session keyring of its own instead of
    hone's, no_new_privs, and a filter refusing every keyring call (ENOSYS), so nothing it runs reads or plants a key
    in the keyrings of hone's user. Returns whether the filter holds."""
    _own_keyring()
    known = _SECCOMP_ARCH.get(os.uname().machine)
    if known is None:
        return False
    try:
        prctl(PR_SET_NO_NEW_PRIVS, 1)
    except OSError:
        return False
    return _install(_memory_filter(known[0], known[1][-3:], known[2]))


def _own_keyring():
    """Leaves the session keyring inherited from hone for a new, empty one (where the kernel has keyrings); the
    filter then refuses every keyring call, so this one stays empty too."""
    known = _SECCOMP_ARCH.get(os.uname().machine)
    if known is not None:
        _libc.syscall(ctypes.c_long(known[1][-1]), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING), None)


def _settle(limits, contained):
    """What every call's first process does before its request: its scratch folder as working directory, an
    environment without secrets, its limits, no capabilities, no_new_privs, a keyring of its own. Returns the scratch
    folder."""
    scratch = "/tmp" if contained else limits.get("scratch") or _scratch()
    os.chdir(scratch)
    _clean_env(scratch)
    set_limits(limits, contained)
    if contained:
        drop_capabilities()
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    _own_keyring()
    deny_unlimited_memory()
    sys.dont_write_bytecode = True  # the program is imported once: a .pyc would be written for nothing
    return scratch


def _scratch():
    import tempfile

    return tempfile.mkdtemp(prefix="hone-program-")


def _clean_env(scratch):
    for key in list(os.environ):
        if key not in KEEP_ENV:
            del os.environ[key]
    os.environ.update({"HOME": scratch, "TMPDIR": scratch})


def mapped_bytes():
    """This process's address space now (the warm zygote's numpy is already mapped), or 0 where unknown."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _limit(kind, soft, hard=None):
    """Sets a resource limit, never above the one inherited: a limit cannot be raised, and on the cold path the
    program's process is the evaluator's child, whose own (the task's memory_mb) may be lower than what
    run_program asks. Asking for more would fail the call before its program ran."""
    hard = soft if hard is None else hard
    inherited = resource.getrlimit(kind)[1]
    if inherited != resource.RLIM_INFINITY:
        soft, hard = min(soft, inherited), min(hard, inherited)
    resource.setrlimit(kind, (soft, hard))


def set_limits(limits, contained):
    memory_mb = int(limits.get("memory_mb") or 0)
    if memory_mb > 0:
        size = (memory_mb << 20) + int(limits.get("memory_base_bytes") or 0)
        _limit(resource.RLIMIT_AS, size)
    cpu = int(limits.get("cpu_seconds") or 0)
    if cpu > 0:  # at the soft limit the call exits with CPU_EXIT; a second later the kernel's SIGKILL, which even
        # a namespace's PID 1 cannot ignore, stops code that never returns to the interpreter
        signal.signal(signal.SIGXCPU, lambda *_: os._exit(CPU_EXIT))
        _limit(resource.RLIMIT_CPU, cpu, cpu + 1)
    procs = int(limits.get("max_processes") or DEFAULTS["max_processes"])
    _limit(resource.RLIMIT_NPROC, procs)
    file_bytes = int(limits.get("file_mb") or DEFAULTS["file_mb"]) << 20
    _limit(resource.RLIMIT_FSIZE, file_bytes)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    files = int(limits.get("open_files") or DEFAULTS["open_files"])
    _limit(resource.RLIMIT_NOFILE, files)
    if contained:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)


_PROC_REFUSED = []


def _own_proc():
    """A /proc that shows only the call's own PID namespace, or none: the kernel refuses a new proc mount where the
    one above it has covered parts (bubblewrap's), and then the host's is hidden. A refusal is remembered."""
    if not _PROC_REFUSED:
        try:
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            return
        except OSError:
            pass
    _hide("/proc")


def _receive(fd):
    """One request on descriptor `fd`: a 10-digit length, then that many bytes of JSON."""
    def exactly(n):
        data = bytearray()
        while len(data) < n:
            chunk = os.read(fd, min(n - len(data), 1 << 20))
            if not chunk:
                raise EOFError("the request was cut short")
            data += chunk
        return bytes(data)

    size = int(exactly(10))
    if size > MAX_REQUEST_BYTES:
        raise ValueError("the request is too large")
    return json.loads(exactly(size).decode())


def _first_process(job, result_fd, limits, contained, input_fd, warm=None):
    """Runs in the call's first process (PID 1 of its namespace when contained). Never returns.
    Everything up to reading the request happens before the call is known (see Box): the request only picks
    what runs (`job(request)` -> (target, limits of this call, whether descriptor 0 stays the conversation))."""
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if contained and not _CALL_ENTERED:
            _own_proc()
        elif not contained:
            os.setsid()
        os.dup2(result_fd, 3)
        os.dup2(input_fd, 0)
        os.closerange(4, 1 << 20)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (1, 2):
            os.dup2(null, fd)
        scratch = _settle(limits, contained)
        if warm:
            warm()
        target, call_limits, conversation = job(_receive(0))
        if call_limits is not limits:
            set_limits(call_limits, contained)
        if not conversation:
            os.dup2(null, 0)
        os.close(null)
        out = target(scratch)
        data = out if isinstance(out, bytes) else out.encode()
        view = memoryview(data)
        while view:
            view = view[os.write(3, view):]
        if contained:  # the reader's end of file as soon as the call's other processes are gone, not this one
            kill_others()
            os.close(3)
            wait_for_kill()
    finally:
        os._exit(0)


def kill_others(reap=False):
    """As the first process (PID 1 of the call's namespace): kills every other process of the call; with `reap`,
    waits until they are gone (every process of the namespace ends up a child of its PID 1)."""
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        return
    while reap:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def wait_for_kill(limit=None):
    """Waits for the SIGKILL of whoever reads this process's result (at most `limit` seconds). Its teardown
    (milliseconds for a forked, numpy-loaded interpreter) then starts after the answer is passed on, not beside its
    parent's reading, which it would slow: the two share pages and the locks that guard them."""
    if limit is not None:
        time.sleep(limit)
        return
    while True:
        signal.pause()


def _collect(read_fd, pid, deadline, cancel_fd, cap):
    """Reads the call's result until EOF, the deadline, a cancellation or the size cap; returns (bytes, why)."""
    chunks, size = [], 0
    watch = [read_fd] + ([cancel_fd] if cancel_fd is not None else [])
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return b"", "timeout"
        ready, _, _ = select.select(watch, [], [], left)
        if cancel_fd is not None and cancel_fd in ready:
            return b"", "cancelled"
        if read_fd in ready:
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                return b"".join(chunks), None
            size += len(chunk)
            if size > cap:
                return b"", "too_large"
            chunks.append(chunk)


class Box:
    """One call's containment, made before the call is known: this (disposable) process enters the fresh
    namespaces and forks the call's first process, which sets itself up (its /proc, descriptors, environment,
    limits, no capabilities, no_new_privs) and then waits for the request on descriptor 0; `run` hands the request
    over and reads the result. A Box serves one call only. Must be made in a disposable process: it changes this
    process's user and namespaces for good. In a warm zygote's call (CallHost), which has entered its namespaces
    already, `contained` says so and the first process is forked where it stands (a generated tool's process)."""

    def __init__(self, limits, job, warm=None, contained=None):
        if contained is not None:
            self.isolation, self.contained = {"namespaces": contained}, contained
        else:
            try:
                self.isolation, self.contained = enter_namespaces(limits), True
            except (Unavailable, OSError) as exc:
                self.isolation, self.contained = {"namespaces": False, "reason": str(exc)}, False
        if not self.contained and not limits.get("scratch"):
            limits = dict(limits, scratch=_scratch())
        self.limits = limits
        self.read_fd, write_fd = os.pipe()
        input_r, self.input_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self.read_fd)
            os.close(self.input_w)
            _first_process(job, write_fd, limits, self.contained, input_r, warm)
        os.close(write_fd)
        os.close(input_r)

    def run(self, request, timeout, cancel_fd=None, converse=None, limits=None):
        """Hands `request` (JSON text) to the first process; returns (output bytes, failure or None, isolation).
        `limits` are the call's own (its job's), for the output cap and telling a CPU limit from a crash.
        With `converse(read_fd, write_fd, pid)` the caller holds a conversation instead (the call keeps reading
        descriptor 0) and returns (output, failure) itself; an output cut short by the process's death is the
        failure "cpu" (its CPU limit) or "crashed"."""
        data = request.encode() if isinstance(request, str) else request
        limits = limits or self.limits
        cap = int(limits.get("output_mb") or DEFAULTS["output_mb"]) << 20
        out, failure = b"", None
        try:
            try:
                _write_all(self.input_w, b"%010d" % len(data) + data)
            except OSError:
                failure = "eof"  # the first process is gone
            if not converse:
                os.close(self.input_w)
                self.input_w = None
            if failure is None:
                if converse:
                    out, failure = converse(self.read_fd, self.input_w, self.pid)
                else:
                    out, failure = _collect(self.read_fd, self.pid, time.monotonic() + timeout, cancel_fd, cap)
        finally:
            status, cpu_used = self.discard()
        if failure == "eof":
            limit = float(limits.get("cpu_seconds") or 0)
            hit = os.WIFEXITED(status) and os.WEXITSTATUS(status) == CPU_EXIT
            failure = "cpu" if limit and (hit or cpu_used >= limit) else "crashed"
        return out, failure, self.isolation

    def discard(self):
        """Kills the first process (and with it its namespace); returns its wait status and CPU seconds."""
        for fd in (self.read_fd, self.input_w):
            if fd is not None:
                os.close(fd)
        self.read_fd, self.input_w = None, None
        return _kill(self.pid, self.contained)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def run_contained(target, limits, timeout, cancel_fd=None, converse=None):
    """Runs `target(scratch_dir) -> str|bytes` contained (a Box made now); returns (output bytes, failure or None,
    isolation dict). The call's result is what it writes on descriptor 3; `converse` as in Box.run.
    Must be called in a disposable process: it changes this process's user and namespaces for good."""
    box = Box(limits, lambda _request: (target, limits, converse is not None))
    return box.run("{}", timeout, cancel_fd, converse)


def _kill(pid, contained):
    """Kills the call's first process (and with it its namespace); returns its wait status and CPU seconds,
    the status its own when it had already ended."""
    status, cpu = 0, 0.0
    try:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if not done:
            os.kill(pid, signal.SIGKILL) if contained else os.killpg(pid, signal.SIGKILL)
            _, status, usage = os.wait4(pid, 0)
        cpu = usage.ru_utime + usage.ru_stime
    except (ChildProcessError, ProcessLookupError):
        pass
    if not contained:  # reap what is left of the group; a child that left the session is a stated gap
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    return status, cpu


def probe(limits=None):
    """What containment holds here, as JSON text: one tiny contained call in a forked child of this process."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            facts = lambda scratch: json.dumps({"uid": os.getuid(), "pid": os.getpid(), "proc": os.path.exists("/proc/self")})  # noqa: E731
            out, failure, isolation = run_contained(facts, dict(limits or {}), 10.0)
            facts = json.loads(out.decode() or "{}") if not failure else {}
            os.write(write_fd, json.dumps(dict(isolation, failure=failure, **facts)).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks = []
    while True:
        chunk = os.read(read_fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_fd)
    os.waitpid(pid, 0)
    text = b"".join(chunks).decode() or json.dumps({"namespaces": False, "reason": "the probe failed"})
    if json.loads(text).get("proc") is False:
        _PROC_REFUSED.append(True)  # later calls of this process (and its forks) skip the attempt
    return text


if __name__ == "__main__":
    print(probe())
