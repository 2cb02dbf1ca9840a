"""A warm evaluator process for hone: imports the evaluator once, then forks a fresh child per evaluation.

    hone_pool.py EVALUATOR_PATH CASCADE_JSON OPTIONS_JSON

Protocol (JSON lines): hone writes {"id", "program" (text), "ext", "memory_mb", "timeout"} on stdin; this process
answers {"id", "code", "signal", "timed_out", "result", "stdout", "stderr"} when the evaluation ends. The child
gets the program's text in a fresh scratch folder, runs the evaluator in its own session under a memory limit,
and hands its result back over a pipe this process holds (never a file); its output goes to pipes too, so
nothing it writes can corrupt the protocol. The timeout is enforced here, where the child's process group lives.

With OPTIONS {"own_pid_namespace": true} (hone passes it only under bubblewrap's PID namespace, where this
process is PID 2 under bubblewrap's init) everything left behind by an evaluation is killed after it, the
private /tmp and /dev/shm are emptied and the System V IPC objects it made are removed, so one evaluation cannot
reach the next. Without it, the evaluation's process
group is killed, and this process is the subreaper of what evaluations start. Either way the next request is read
once what was killed is gone (`reap`). This process is not dumpable, so code running in an evaluator's child cannot
trace it. With {"kept": true} as well (the task's hone.yaml `evaluator_state: kept`), evaluations run in this
process itself, without a fork each (hone_kept.py).
"""
import gc
import json
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hone_eval_runner as runner  # noqa: E402
import hone_kept  # noqa: E402
import hone_runtime  # noqa: E402,F401  (loaded once here, so an evaluator importing it per call finds it loaded)
from hone_sandbox import PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE, PR_SET_PDEATHSIG, _libc, prctl, seal_keyrings, wait_for_kill  # noqa: E402

KEEP_OUTPUT = 20_000
LEFTOVER_WAIT = 5.0  # seconds at most for what an evaluation left to be gone once killed (one stuck in the kernel)
REAP_EVERY = 0.25  # seconds at most between two reapings of orphans during an evaluation (`collect`)


class Tail:
    """Keeps the head and the tail of a stream that may flood."""

    def __init__(self, limit):
        self.half, self.head, self.tail, self.dropped = limit // 2, bytearray(), bytearray(), 0

    def push(self, chunk):
        take = max(0, self.half - len(self.head))
        self.head += chunk[:take]
        self.tail += chunk[take:]
        if len(self.tail) > self.half:
            self.dropped += len(self.tail) - self.half
            del self.tail[: len(self.tail) - self.half]

    def text(self):
        cut = "\n[... %d bytes cut ...]\n" % self.dropped if self.dropped else ""
        return self.head.decode(errors="replace") + cut + self.tail.decode(errors="replace")


def child(module, scratch, cascade, fds, go, pool):
    """The evaluation's own process, forked before its request by the process `pool`: it waits on `go` for
    {"path", "memory_mb"} (nothing, when the pool closes). Never returns."""
    code = 70
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # it waits to be killed once its result is whole: never orphaned
        if os.getppid() != pool:
            return
        os.setsid()
        for src, dst in ((go, 0), (fds["out"], 1), (fds["err"], 2), (fds["result"], 3)):
            os.dup2(src, dst)
        os.closerange(4, 1 << 20)
        sys.stdout = os.fdopen(1, "w", buffering=1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        os.chdir(scratch)
        rehearse()
        line = os.read(0, 1 << 16)
        if not line:
            code = 0
            return
        request = json.loads(line)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        runner.limit_memory(int(request["memory_mb"]))
        code, payload = runner.evaluate_payload(module, request["path"], cascade)
        sys.stdout.flush()
        sys.stderr.flush()
        data = payload.encode()
        runner.write_fd(3, "%d %d\n" % (code, len(data)))
        runner.write_bytes(3, data)
        for fd in (1, 2, 3):
            os.close(fd)
        # Its result is whole: the pool answers before it kills this process. Bounded, in case the evaluator wrote
        # on descriptor 3 itself and the pool, seeing no whole result, waits for this exit instead.
        wait_for_kill(10)
    finally:
        os._exit(code)


def rehearse():
    """Takes a forked interpreter's first copy-on-write faults on the common path (JSON both ways, a reply decoded,
    numpy on small arrays if the evaluator loaded it, a Unix socket made and closed, a file read) before the request arrives, so that they
    are not on the evaluation's path. Touches no state of the evaluator's module."""
    try:
        reply = json.dumps({"ok": True, "value": [[[0.5, 0.25]] * 4, [0.1] * 4, 1.5]})
        value = hone_runtime._decode(reply.encode())
        np = sys.modules.get("numpy")  # only when the evaluator loaded it: never an import of its own
        if np is not None:
            a = np.asarray(value[0], dtype=float)
            np.all(np.isfinite(a)) and float(np.sum(a[:, 0] - a[:, 1]))
        runner.clean({"combined_score": 1.0, "note": "x", "n": 3, "v": [1.0, float("nan")]})
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM):
            pass
        with open(os.devnull, "rb") as f:
            f.read(1)
    except Exception:
        pass


class Standby:
    """The next evaluation's process and scratch folder, made before its request arrives (after the previous
    evaluation's leftovers were killed and its files removed), so forking is not on the evaluation's path."""

    def __init__(self, module, cascade):
        self.scratch = tempfile.mkdtemp(prefix="e-")
        self.pipes, ends = {}, {}
        for name in ("result", "out", "err"):
            self.pipes[name], ends[name] = os.pipe()
        go_r, self.go = os.pipe()
        pool = os.getpid()
        self.pid, self.unkilled = os.fork(), True
        if self.pid == 0:
            os.close(self.go)
            child(module, self.scratch, cascade, ends, go_r, pool)
        for fd in list(ends.values()) + [go_r]:
            os.close(fd)

    def start(self, req):
        """Writes the program into the scratch folder and lets the process run on it."""
        path = runner.write_program(self.scratch, req)
        runner.write_fd(self.go, json.dumps({"path": path, "memory_mb": int(req.get("memory_mb") or 0)}))
        os.close(self.go)
        self.go = None

    def kill(self, own_namespace):
        """Kills the evaluation's process and what it left (`kill_left`)."""
        kill_left(self.pid, own_namespace)
        self.unkilled = False

    def close(self):
        for fd in list(self.pipes.values()) + ([self.go] if self.go is not None else []):
            os.close(fd)
        self.pipes, self.go = {}, None


def _header(result):
    """(exit code, payload offset, payload length) from a result's header "CODE LENGTH\n", or None."""
    head, sep, _ = bytes(result[:64]).partition(b"\n")
    parts = head.split(b" ")
    if not sep or len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), len(head) + 1, int(parts[1])


def whole(result, h=None):
    """Whether the child wrote its result whole (its header `h`, then exactly the payload it announced)."""
    h = h or _header(result)
    return h is not None and len(result) - h[1] == h[2]


def framed(result):
    """(exit code, payload) of a whole result, else None."""
    h = _header(result)
    return (h[0], bytes(result[h[1]:])) if whole(result, h) else None


def collect(pid, pipes, deadline):
    """Reads the child's pipes until its result is whole (it then waits to be killed) or it has exited, and what it
    wrote before is drained; or until the deadline passes. Returns (buffers, timed out). What a leftover process
    keeps writing after that is cut off, and a pipe a leftover holds open is not waited for. Orphans the evaluation
    makes meanwhile are reaped as it goes (`_reap_ended`)."""
    bufs = {"result": bytearray(), "out": Tail(KEEP_OUTPUT), "err": Tail(KEEP_OUTPUT)}
    live = {fd: name for name, fd in pipes.items()}
    pidfd, exited, reads_after_end = os.pidfd_open(pid), False, 0
    try:
        while live and reads_after_end < 64:
            ended = exited or whole(bufs["result"])
            left = deadline - time.monotonic()
            if not ended and left <= 0:
                return bufs, True
            ready = select.select(list(live) + ([] if ended else [pidfd]), [], [], 0 if ended else min(left, REAP_EVERY))[0]
            _reap_ended(pid)
            if not ready and ended:
                break
            for fd in ready:
                if fd == pidfd:
                    exited = True
                    continue
                reads_after_end += ended
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    del live[fd]
                elif live[fd] == "result":
                    if len(bufs["result"]) <= runner.MAX_RESULT_BYTES:
                        bufs["result"] += chunk
                else:
                    bufs[live[fd]].push(chunk)
        return bufs, not (exited or whole(bufs["result"]) or _exits_by(pidfd, pid, deadline))
    finally:
        os.close(pidfd)


def _exits_by(pidfd, pid, deadline):
    """Whether process `pid` (its `pidfd`) exits before the deadline, orphans reaped meanwhile."""
    while True:
        left = deadline - time.monotonic()
        if select.select([pidfd], [], [], max(0, min(left, REAP_EVERY)))[0]:
            return True
        if left <= 0:
            return False
        _reap_ended(pid)


def _reap_ended(keep=None):
    """Reaps this process's ended children but `keep` (during an evaluation, its own process, whose status `evaluate`
    takes): without a namespace of its own this process is the subreaper of what evaluations start, so a process
    they leave whose parent ended becomes its child, and would stay a zombie until reaped here."""
    for _ in range(1000):  # bounded: the evaluator may make orphans as fast as they are reaped
        try:
            ended = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if ended is None or ended.si_pid == keep:
            return
        try:
            os.waitpid(ended.si_pid, 0)
        except ChildProcessError:
            return


def kill_left(pid, own_namespace):
    """Kills what the evaluation left behind (nothing of it runs after this; `reap` waits for the teardown): its
    process group `pid` (none for a kept evaluator) and, in this sandbox's own namespace, every other process."""
    for target in ((-1,) if own_namespace else ()) + ((-pid,) if pid else ()):
        try:
            os.kill(target, signal.SIGKILL)
        except OSError:
            pass


def reap(leader, own_namespace):
    """Waits until what an evaluation left is gone, reaped and not only killed (the kernel tears a killed process
    down when it next runs: tens of ms for one that wrote to hundreds of MB), for at most LEFTOVER_WAIT. `leader` is
    the evaluation's own process, this process's child (None for a kept evaluator). In the sandbox's own namespace,
    until it holds nothing but its init, which reaps the orphans, and this process. Otherwise until the evaluation's
    process group is empty: this process is then the subreaper of what evaluations start and reaps those orphans.
    Another child (one the evaluator started when it was loaded, or a leftover that left the group, which nothing
    kills here) is reaped once it has ended, never waited for."""
    if leader:
        try:
            os.waitpid(leader, 0)
        except ChildProcessError:
            pass
    pending = _namespace_busy if own_namespace else (lambda: _group_dying(leader))
    deadline = time.monotonic() + LEFTOVER_WAIT
    while True:
        _reap_ended()
        if not pending() or time.monotonic() >= deadline:
            return
        time.sleep(0.001)


def _namespace_busy():
    """Whether this sandbox's PID namespace holds a process but its init and this one (a zombie included); never
    when /proc is not this namespace's (a folder bound over it; hone.yaml may not ask for one), where there is
    nothing to read."""
    me = str(os.getpid())
    if os.readlink("/proc/self") != me:
        return False
    return any(name.isdigit() and name not in ("1", me) for name in os.listdir("/proc"))


def _group_dying(group):
    """Whether process group `group` still has a member this process could kill, an unreaped one included (one it
    may not signal, a set-user-ID program's, was not killed and is not waited for)."""
    try:
        os.kill(-group, 0)
        return True
    except OSError:
        return False


def empty(folder):
    """Removes everything in `folder` but the folders mounted below it: the sandbox's read-only binds, which
    bubblewrap places inside the private /tmp when a task, hone or the interpreter lives under the host's /tmp. No
    evaluation can have written in them, and walking them cost every evaluation a pass over all their files (a
    call each, then a refused removal). The folders bubblewrap made to hold them are emptied like any other.
    Iterative, so a deep tree needs no recursion; what cannot be removed is left."""
    try:
        device = os.lstat(folder).st_dev
    except OSError:
        return
    pending, found = [folder], []
    while pending:
        try:
            with os.scandir(pending.pop()) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            try:
                if not entry.is_dir(follow_symlinks=False):
                    os.unlink(entry.path)
                elif entry.stat(follow_symlinks=False).st_dev == device:  # another device: a folder mounted here
                    pending.append(entry.path)
                    found.append(entry.path)
            except OSError:
                pass
    for path in reversed(found):  # each folder after everything found inside it
        try:
            os.rmdir(path)
        except OSError:
            pass


SYSV_KINDS = ("shm", "sem", "msg")
IPC_RMID = 0


def sysv_objects():
    """The System V IPC objects of this sandbox's IPC namespace, as {(kind, key, id)} from /proc/sysvipc (empty where
    it cannot be read)."""
    found = set()
    for kind in SYSV_KINDS:
        try:
            with open("/proc/sysvipc/" + kind) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 1 and fields[1].isdigit():
                found.add((kind, fields[0], int(fields[1])))
    return found


def remove_sysv(keep):
    """Removes the System V shared memory segments, semaphore sets and message queues an evaluation left in this
    sandbox's IPC namespace (all but `keep`, those there once the evaluator was loaded). They outlive the processes
    that made them: a program run in the evaluator's own process left a segment, a queue and a semaphore set that the
    next evaluation found (data passed between candidates, and memory that no process's limit counts any more)."""
    for kind, _, ident in sysv_objects() - keep:
        if kind == "shm":
            _libc.shmctl(ident, IPC_RMID, None)
        elif kind == "sem":
            _libc.semctl(ident, 0, IPC_RMID)
        else:
            _libc.msgctl(ident, IPC_RMID, None)


# What the evaluator itself made in the sandbox's IPC namespace while it loaded: kept (set in main).
SYSV_AT_LOAD = set()


def _clean(scratch, own_namespace):
    shutil.rmtree(scratch, ignore_errors=True)
    if own_namespace:
        for folder in (tempfile.gettempdir(), "/dev/shm"):
            if os.path.isdir(folder):
                empty(folder)
        remove_sysv(SYSV_AT_LOAD)


def evaluate(standby, req, own_namespace):
    """One evaluation in the standby process; the reply hone reads. A child that handed back a whole result waits to
    be killed: it is answered for with the exit code it wrote, and it and whatever it left running are killed after
    the answer (its teardown then does not slow this process's reading and answering). Otherwise all of it is
    killed before the answer. Everything is reaped and its files removed before the next request is read."""
    done = None
    try:
        standby.start(req)
        bufs, timed_out = collect(standby.pid, standby.pipes, time.monotonic() + float(req.get("timeout") or 60))
        done = None if timed_out else framed(bufs["result"])
        if not done:  # killed before its status is taken: until then its process group's id cannot be reused
            standby.kill(own_namespace)
            status = os.waitpid(standby.pid, 0)[1]
    finally:
        standby.close()
        if not done and standby.unkilled:
            standby.kill(own_namespace)
    if done:
        code, signum, result = done[0], None, done[1]
    else:
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        signum = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        result = (framed(bufs["result"]) or (None, b""))[1]
    return {
        "id": req["id"],
        "code": code,
        "signal": signum,
        "timed_out": timed_out,
        "result": result.decode(errors="replace") if len(result) <= runner.MAX_RESULT_BYTES else None,
        "stdout": bufs["out"].text(),
        "stderr": bufs["err"].text(),
    }


def answer(standby, line, own_namespace):
    req = json.loads(line)
    try:
        return evaluate(standby, req, own_namespace)
    except Exception as exc:
        return {"id": req.get("id"), "code": None, "signal": None, "timed_out": False, "result": None, "stdout": "", "stderr": "hone_pool: %s" % exc}


def serve_kept(module, cascade, requests, control):
    """Evaluations in this process, one after another (hone_kept.py); returns when it must be replaced."""
    tripwire, capture = hone_kept.Tripwire(), hone_kept.Capture(KEEP_OUTPUT)
    for line in requests:
        req = json.loads(line)
        reply = {"id": req["id"], "code": None, "signal": None, "timed_out": False, "result": None, "stdout": "", "stderr": ""}
        scratch = tempfile.mkdtemp(prefix="e-")
        capture.start(Tail)
        try:
            code, payload, refused = hone_kept.evaluate(module, cascade, req, scratch, tripwire)
        except Exception as exc:
            code, payload, refused = 1, json.dumps({"error": "hone_pool: %s" % exc}), False
        kill_left(None, True)  # what the evaluation started, before its output is read: nothing writes after
        reap(None, True)
        reply["stdout"], reply["stderr"] = capture.finish()
        reply.update(code=code, result=payload if len(payload) <= runner.MAX_RESULT_BYTES else None)
        reply.update(kept_refused=refused, exiting=refused or payload == runner.OUT_OF_MEMORY)
        control.write(json.dumps(reply) + "\n")
        _clean(scratch, True)
        if reply["exiting"]:
            return 0
    return 0


def main():
    evaluator_path = sys.argv[1]
    cascade = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    options = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    own_namespace = bool(options.get("own_pid_namespace")) and os.getpid() == 2 and os.getppid() == 1
    kept = bool(options.get("kept")) and own_namespace
    if not own_namespace:
        prctl(PR_SET_CHILD_SUBREAPER, 1)  # what an evaluation leaves is this process's to reap (`reap`)
    prctl(PR_SET_DUMPABLE, 0)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # never outlive hone, sandbox or not
    if options.get("parent") and os.getppid() != options["parent"]:
        os._exit(0)  # hone died before the line above: no signal will ever come
    control = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything the evaluator prints at import goes to stderr, never into the protocol
    seal_keyrings()  # before anything of the task's runs
    try:
        module = runner.load_evaluator(evaluator_path)
    except BaseException as exc:
        control.write(json.dumps({"ready": False, "error": "%s: %s" % (type(exc).__name__, exc)}) + "\n")
        return 1
    if own_namespace:
        SYSV_AT_LOAD.update(sysv_objects())
    gc.freeze()  # what is loaded now is never collected in a fork, so children do not copy its pages to scan them
    control.write(json.dumps({"ready": True, "own_pid_namespace": own_namespace, "kept": kept}) + "\n")
    if kept:  # the request channel moves off descriptor 0, which the evaluator and what it starts may read
        requests = os.fdopen(os.dup(0), "r")
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        return serve_kept(module, cascade, requests, control)
    standby = Standby(module, cascade)
    for line in sys.stdin:
        control.write(json.dumps(answer(standby, line, own_namespace)) + "\n")
        if standby.unkilled:
            standby.kill(own_namespace)
        reap(standby.pid, own_namespace)
        _clean(standby.scratch, own_namespace)
        standby = Standby(module, cascade)
    return 0


if __name__ == "__main__":
    sys.exit(main())
