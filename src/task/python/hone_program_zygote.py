"""A warm process that runs candidate programs for evaluators (see hone_runtime.run_program).

Started by hone (under bubblewrap where it works, with a view of Python and nothing of the user's) with one JSON
argument: {"socket", "preload", "limits", "slots", "ahead", "sample", "parent"}. It listens on the Unix socket and
stays a keeper (one thread, no numpy) of the zygote proper, a fork that moves into a user and a PID namespace of its
own (hone_sandbox.CallHost), from where each call costs one fork, and only then imports numpy and numpy.random (or
the task's `program_preload`) and the seed's top-level modules (hone_preload.py) once for every call. It keeps
`slots` + 1 calls made ahead (one per evaluator process, and one more), and up to `ahead` while no call runs (a
round's rollouts at once): each is PID 1 of a PID namespace of its own that has entered the rest of its containment
(hone_sandbox.enter_call and seal_call: its own user, mount, network, IPC and UTS namespaces, a private /tmp,
limits, no capabilities), has rehearsed its own path on a program of the seed's size, and waits in accept() for one
connection.

The call that takes a connection reads one request and tells this process what it is over a channel of its own,
closed before anything of the request runs (for a program's call it hands over the connection too). It then serves
the request itself: a program runs in that process and its reply goes back on the connection, framed ("LENGTH\\n"
then the JSON text); a generated tool's call (kind "tool", from hone itself) runs in a child that it relays
(hone_tool_runner.py). This process enforces a program's timeout, kills a program whose evaluator went away, answers
for one that died without replying, and makes the next call: at once for a tool's call (it may wait on an
evaluation, which needs a call), when a program's call ends otherwise. A call's whole namespace dies with it, so no
fork or daemon of a program outlives its call. It never loads an evaluator.
"""
import gc
import json
import os
import select
import signal
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from hone_program_child import MAX_PROGRAM_BYTES, NO_RESULT, _error, program_reply, rehearse, timed_out  # noqa: E402
from hone_tool_runner import serve_tool, tool_job  # noqa: E402
import hone_preload  # noqa: E402
import hone_sandbox  # noqa: E402
from hone_sandbox import PR_SET_PDEATHSIG, Box, CallHost, prctl  # noqa: E402

MAX_REQUEST = MAX_PROGRAM_BYTES * 2 + (1 << 20)
REQUEST_WAIT = 30.0  # a connection that sends no whole request within this is dropped
SETUP_FAILED = 70  # a call's exit code when it could not be made (its containment failed)
MAX_SAMPLE = 256 << 10  # the most of the task's seed program a call compiles to rehearse
WITHOUT_SEED = 75  # the zygote proper's exit code when the seed's modules started a thread
MAX_AHEAD = 64  # the most calls made ahead (each holds a few MB of its own)
# A killed call is answered when it has ended (its namespace's processes with it); past this, at once regardless.
KILL_WAIT = 5.0


def read_request(conn):
    """One request line from the connection: (the parsed request, its JSON text)."""
    data = bytearray()
    while not data.endswith(b"\n"):
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_REQUEST:
            raise ValueError("the request is too large")
    return json.loads(data.decode()), bytes(data).strip()


def frame(text):
    """A program call's reply as it travels on the connection: its length in bytes, a newline, the JSON text."""
    data = text.encode()
    return b"%d\n" % len(data) + data


def await_close(conn, limit=5.0):
    """After a tool's final line: lets hone close the connection first (at most `limit` seconds), reading what it
    still sends, such as its answer to a ctx call that the tool's failure overtook. Closed from this side first,
    hone's write of that answer could fail, and the failed write would end its reading before the final line."""
    try:
        conn.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + limit
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([conn], [], [], left)[0] or not conn.recv(1 << 16):
                break
    except OSError:
        pass


def serve_call(conn, raw, request, limits, contained):
    """Serves the request this call took, in this process (a program) or in a child it relays (a tool)."""
    if request.get("kind") == "tool":
        box = Box(limits, lambda r: tool_job(r, limits), contained=contained)
        serve_tool(request, limits, conn.fileno(), conn.fileno(), box=box, raw=raw)
        return await_close(conn)
    reply = frame(program_reply(request, limits, contained))
    if contained:  # whatever the program started is gone before its reply is read
        hone_sandbox.kill_others(reap=True)
    conn.sendall(reply)


def rehearse_call(sample):
    """Takes a freshly forked call's first faults on its own path before a connection arrives: a connection
    accepted, a request read and parsed, the note handed over with a descriptor, a program of the task's size
    compiled (`sample`, the task's seed: compiled, never run), a tiny program run, a reply framed and sent. Each on
    sockets of its own; leaves nothing behind."""
    path = os.path.join(os.getcwd(), ".hone-rehearsal.sock")  # the call's own scratch folder
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener, socket.socket(socket.AF_UNIX) as peer:
            listener.bind(path)
            listener.listen(1)
            peer.connect(path)
            conn, _ = listener.accept()
            with conn:
                request = {"program": sample, "ext": ".py", "entry": "run", "args": [8], "timeout": 60.0, "memory_mb": 0}
                peer.sendall(json.dumps(request).encode() + b"\n")
                read_request(conn)
                socket.send_fds(peer, [json.dumps({"tool": False, "timeout": 60.0}).encode()], [conn.fileno()])
                for fd in socket.recv_fds(conn, 4096, 1)[1]:
                    os.close(fd)
                try:
                    compile(sample, "program.py", "exec")
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    pass  # the seed's first lines only, or a seed that is not Python: the parser ran all the same
                rehearse()
                conn.sendall(frame(json.dumps({"ok": True, "value": [[0.5, 0.25]] * 8})))
                peer.recv(1 << 16)
    except Exception:
        pass
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def fresh_randomness():
    """What a fresh interpreter's program would find: numpy's global generator seeded anew from the system (the
    zygote imported numpy.random once for every call; Python's own random is reseeded by the fork itself)."""
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        try:
            numpy_random.seed()
        except Exception:
            pass


def call_main(server, channel, limits, contained, sample="", zygote=0):
    """A call made ahead: enters its containment, rehearses, takes one connection, tells the zygote what it is (over
    `channel`, closed before anything of the request runs) and serves it. Never returns; exits 0 once it answered."""
    code = SETUP_FAILED
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # dies with the zygote (contained, its namespace dies with it too)
        if not contained and os.getppid() != zygote:
            return  # the zygote died before the line above: no signal will come
        if contained:
            hone_sandbox.enter_call(limits)
        limits = dict(limits, scratch=hone_sandbox.seal_call(limits, contained, keep=(server.fileno(), channel.fileno())))
        if not contained:
            os.setsid()
        rehearse_call(sample)
        fresh_randomness()
        conn, _ = server.accept()
        server.close()
        code = 0
        try:
            conn.settimeout(REQUEST_WAIT)
            request, raw = read_request(conn)
            conn.settimeout(None)
        except (OSError, ValueError, UnicodeDecodeError, RecursionError) as exc:
            channel.close()
            conn.sendall(frame(_error("zygote failure: %s" % exc)))
            return
        tool = request.get("kind") == "tool"
        note = json.dumps({"tool": tool, "timeout": float(request.get("timeout") or 60)}).encode()
        socket.send_fds(channel, [note], [] if tool else [conn.fileno()])
        channel.close()
        serve_call(conn, raw, request, limits, contained)
    except BaseException:
        pass
    finally:
        os._exit(code)


class Call:
    """The zygote's view of one call: made ahead, then serving one connection."""

    def __init__(self, pid, channel):
        self.pid, self.channel, self.pidfd = pid, channel, os.pidfd_open(pid)
        self.taken = False
        self.conn = None  # a program call's connection (its evaluator's), duplicated to this process
        self.deadline = None
        self.killed_at = None  # when it was killed at its deadline; it is answered for once it has ended
        self.answered = False  # its reply went (the call's own exit 0), or none is owed (its evaluator left), or sent
        self.timeout = 0.0

    def note(self):
        """Reads the call's note (what it took), if it sent one; True when it did."""
        try:
            msg, fds, _, _ = socket.recv_fds(self.channel, 4096, 1, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            msg, fds = b"", []
        self.channel.close()
        self.channel = None
        try:
            note = json.loads(msg.decode()) if msg else None
        except ValueError:
            note = None
        if not isinstance(note, dict):
            for fd in fds:
                os.close(fd)
            return False
        self.taken = True
        if note.get("tool"):
            for fd in fds:
                os.close(fd)
        elif not fds:  # a program's call whose connection did not come over: nothing here could bound it
            self.kill()
            self.answered = True
        else:
            self.conn, self.timeout = socket.socket(fileno=fds[0]), float(note.get("timeout") or 60)
            self.deadline = time.monotonic() + self.timeout
        return True

    def running_program(self):
        return self.taken and self.conn is not None

    def wake(self):
        """When the serving loop must next look at this call: its deadline, or the end of its wait once killed."""
        return self.deadline if self.killed_at is None else self.killed_at + KILL_WAIT

    def kill(self, group=False):
        """Kills the call's first process: PID 1 of its namespace, where everything of the call dies with it; without
        namespaces (`group`), its process group, what it left in its session being killed once it has ended."""
        try:
            (os.killpg if group else os.kill)(self.pid, signal.SIGKILL)
        except OSError:
            pass

    def gone(self):
        """Whether the evaluator closed its end (what it may still send is read and dropped). Never blocks: the
        connection is shared with the call, which has it blocking."""
        try:
            return self.conn.recv(1 << 16, socket.MSG_DONTWAIT) == b""
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True

    def answer(self, text):
        """Answers the evaluator for the call (a timeout, a death without reply); at most once, never blocking."""
        if self.conn is not None and not self.answered:
            try:
                self.conn.send(frame(text), socket.MSG_DONTWAIT)
            except OSError:
                pass
        self.answered = True


class Zygote:
    """Keeps `count` calls waiting for a connection or running a program (one per evaluator, and one more), `ahead`
    of them waiting while no call runs (as many as programs may be sent at once: a round's rollouts), and the calls
    that took one within their rules. A program's call is replaced when it ends, a tool's at once (it may wait on an
    evaluation, which needs a call), so making one does not take a core from the evaluation beside it; calls beyond
    `count` are made a few at a time and only while none runs: a burst of evaluations finds them made in the quiet
    before it. After a call could not be made, none is tried for a second."""

    def __init__(self, server, limits, host, count, sample, ahead=0):
        self.server, self.limits, self.host, self.count, self.sample = server, limits, host, count, sample
        self.ahead, self.calls, self.failing_until = max(count, ahead), [], 0.0

    def make(self):
        """Forks one call made ahead; False (and a second of rest) when the system refused a part of it."""
        try:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        except OSError:
            return self._failed()
        zygote = os.getpid()
        try:
            pid = self.host.fork_call()
        except OSError:
            ours.close()
            theirs.close()
            return self._failed()
        if pid == 0:
            ours.close()
            call_main(self.server, theirs, self.limits, self.host.contained, self.sample, zygote)
        theirs.close()
        try:
            self.calls.append(Call(pid, ours))
        except OSError:  # no pidfd for it: it cannot be watched, so it is not kept
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            ours.close()
            return self._failed()
        return True

    def _failed(self):
        self.failing_until = time.monotonic() + 1.0
        return False

    def waiting(self):
        return sum(1 for c in self.calls if not c.taken)

    def serve(self):
        poller = select.poll()
        while True:
            more = self._fill()
            watched = self._watch(poller)
            now = time.monotonic()
            wakes = [c.wake() for c in self.calls if c.deadline is not None and not c.answered]
            if now < self.failing_until:
                wakes.append(self.failing_until)
            wait = 0 if more else None if not wakes else max(0, int((min(wakes) - now) * 1000) + 1)
            ready = dict(poller.poll(wait))
            for fd in watched:
                poller.unregister(fd)
            self._handle(ready, watched)

    def _fill(self):
        """Makes the calls missing now; True when more are to be made as soon as nothing else happens."""
        if time.monotonic() < self.failing_until:
            return False
        missing = self.count - self.waiting() - sum(1 for c in self.calls if c.running_program())
        quiet = not any(c.taken for c in self.calls)
        for _ in range(max(missing, min(2, self.ahead - self.waiting()) if quiet else 0)):
            if not self.make():
                return False
        return quiet and self.waiting() < self.ahead

    def _watch(self, poller):
        """Registers every descriptor to watch, and returns what each one is: (its call, what it says)."""
        watched = {}
        for c in self.calls:
            watched[c.pidfd] = (c, "end")
            if c.channel is not None:
                watched[c.channel.fileno()] = (c, "note")
            if c.conn is not None and not c.answered:
                watched[c.conn.fileno()] = (c, "conn")
        for fd in watched:
            poller.register(fd, select.POLLIN | select.POLLRDHUP | select.POLLHUP)
        return watched

    def _handle(self, ready, watched):
        """Acts on what the poll found, each descriptor as what it was when registered (a number closed and given
        to a connection received in this pass is not taken for that connection)."""
        for fd in ready:
            c, what = watched[fd]
            if c not in self.calls:
                continue
            if what == "note" and c.channel is not None and c.channel.fileno() == fd:
                c.note()
            elif what == "conn" and c.conn is not None and c.conn.fileno() == fd and not c.answered and c.gone():
                c.kill()  # its evaluator went away
                c.answered = True
            elif what == "end" and c.pidfd == fd:
                self._end(c)
        now = time.monotonic()
        for c in self.calls:
            if c.deadline is None or c.answered or now < c.wake():
                continue
            if c.killed_at is None:
                c.kill(group=not self.host.contained)  # answered once it has ended (_end), not before its processes
                c.killed_at = now
            else:
                c.answer(timed_out(c.timeout))  # it has not ended within KILL_WAIT of its kill

    def _end(self, c):
        """The call's process ended: answers for it if it owed a reply, and reaps it."""
        was_taken = c.taken or (c.channel is not None and c.note())
        _, status = os.waitpid(c.pid, 0)
        if not self.host.contained:
            try:
                os.killpg(c.pid, signal.SIGKILL)  # what it left in its session
            except OSError:
                pass
        ok = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        if c.killed_at is not None and not ok:  # an exit 0 sent its reply just as its deadline passed
            c.answer(timed_out(c.timeout))
        if not ok:
            c.answer(_error(NO_RESULT))
        if c.conn is not None:
            c.conn.close()
        os.close(c.pidfd)
        if c.channel is not None:
            c.channel.close()
        self.calls.remove(c)
        if not was_taken and not ok:
            self._failed()  # it died before any connection: do not spin if making a call keeps failing


def serve(server, config, with_seed):
    """The zygote proper, in a fresh fork of the keeper (one thread, nothing heavy loaded): enters its namespaces,
    loads what calls share, and serves. Never returns; exits with WITHOUT_SEED when a seed module started a thread."""
    limits = config.get("limits") or {}
    host = CallHost(limits)  # from here on, the process that serves (in namespaces of its own where they work)
    hone_preload.load(config.get("preload") or ["numpy", "numpy.random"])
    sample = str(config.get("sample") or "")[:MAX_SAMPLE]
    if sample and with_seed and not hone_preload.seeded_ok(sample):
        os._exit(WITHOUT_SEED)  # a process that forks must have one thread
    gc.freeze()  # what is loaded now is never collected in a fork, so calls do not copy its pages to scan them
    print(json.dumps({"ready": True, "isolation": host.isolation}), flush=True)
    # One call more than evaluators: the next program never waits for a call made after one ends.
    count = max(1, int(config.get("slots") or 2)) + 1
    Zygote(server, limits, host, count, sample, min(int(config.get("ahead") or 0), MAX_AHEAD)).serve()


def main():
    config = json.loads(sys.argv[1])
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # never outlive hone, sandbox or not
    if config.get("parent") and os.getppid() != config["parent"]:
        os._exit(0)  # hone died before the line above: no signal will ever come
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    path = config["socket"]
    if os.path.lexists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    hone_sandbox.python_open_to_others()  # asked once here, so no call walks the folders again
    # This process stays as it is (one thread, no numpy) and keeps the zygote proper running: again without the
    # seed's modules if they started a thread, and otherwise ending as it ends.
    code = hone_sandbox.run_forked(lambda: serve(server, config, True))
    if code == WITHOUT_SEED:
        code = hone_sandbox.run_forked(lambda: serve(server, config, False))
    os._exit(code)


if __name__ == "__main__":
    main()
