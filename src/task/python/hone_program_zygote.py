"""A warm process that runs candidate programs for evaluators (see hone_runtime.run_program).

Started by hone (under bubblewrap where it works, with a view of Python and nothing of the user's) with one JSON
argument: {"socket", "preload", "limits", "slots"}. It imports numpy (or the task's `program_preload`) once and
listens on the Unix socket. It keeps `slots` + 1 handlers ready (one per evaluator process, and one more): each is
a fork that has already made the next call's containment (hone_sandbox.Box: fresh namespaces, private /tmp, limits,
its first process waiting for the request) and waits in accept() for one connection. The handler that takes a
connection reads one request, hands it to its first process and answers, and tells this process when to fork the
next handler: at once for a tool's call, after the answer for a program's call. So programs start warm but share
nothing, and making the namespaces is never on an evaluation's path nor beside it. The handler watches the
connection: when the evaluator goes away, the program is killed. It never loads an evaluator.
A request of kind "tool" (from hone itself) runs a generated Python tool the same way (hone_tool_runner.py).
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
from hone_program_child import MAX_PROGRAM_BYTES, program_job, rehearse, serve  # noqa: E402
from hone_tool_runner import serve_tool, tool_job  # noqa: E402
import hone_sandbox  # noqa: E402
from hone_sandbox import PR_SET_PDEATHSIG, Box, prctl, probe  # noqa: E402

MAX_REQUEST = MAX_PROGRAM_BYTES * 2 + (1 << 20)


def preload(names):
    for name in names:
        try:
            __import__(name)
        except Exception:
            pass


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


def job_for(limits):
    """The prepared first process's job: a tool call or a program call, by the request's kind."""
    return lambda request: (tool_job if request.get("kind") == "tool" else program_job)(request, limits)


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


def handle(conn, limits, box, release):
    """Serves one call; `release()` tells the zygote to make the next handler: at once for a tool's call (it may
    wait on an evaluation, which needs a handler), after the answer for a program's call, so that making the next
    handler does not take a core from the evaluation it would otherwise run beside."""
    try:
        request, raw = read_request(conn)
        if request.get("kind") == "tool":  # a generated tool's call: a conversation over the connection
            release()
            serve_tool(request, limits, conn.fileno(), conn.fileno(), box=box, raw=raw)
            return await_close(conn)
        reply = serve(request, limits, cancel_fd=conn.fileno(), box=box, raw=raw)
    except BaseException as exc:
        box.discard()
        reply = json.dumps({"ok": False, "error": "zygote failure: %s" % exc})
    try:
        conn.sendall(reply.encode())
    except OSError:
        pass
    conn.close()  # the evaluator reads to the end of the answer
    box.reap()  # after the answer: the call, which waits for it, is killed and its teardown waited for


def slot(server, taken, limits, zygote):
    """A handler made ahead of its call. Never returns."""

    def release():
        if not released:
            released.append(os.write(taken, b"x"))

    released = []
    try:
        box = Box(limits, job_for(limits), warm=rehearse)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # set again: changing to the unprivileged user cleared it
        if os.getppid() != zygote:
            os._exit(0)  # the zygote died while this handler was being made: no signal will come, no call either
        conn, _ = server.accept()
        server.close()
        try:
            handle(conn, limits, box, release)
        finally:
            conn.close()  # the evaluator reads to the end: it should not wait for this process's exit
            release()
    finally:
        os._exit(0)


def serve_slots(server, limits, count):
    """Keeps `count` handlers waiting for a connection; a handler that took one is replaced at once."""
    waiting = {}

    def fork_slot():
        r, w = os.pipe()
        zygote = os.getpid()
        pid = os.fork()
        if pid == 0:
            for fd in waiting:
                os.close(fd)
            os.close(r)
            slot(server, w, limits, zygote)
        os.close(w)
        waiting[r] = pid

    for _ in range(count):
        fork_slot()
    while True:
        for fd in select.select(list(waiting), [], [])[0]:
            took = os.read(fd, 1)
            os.close(fd)
            del waiting[fd]
            if not took:
                time.sleep(0.05)  # it died before any connection: do not spin if making a Box keeps failing
            fork_slot()
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass


def main():
    config = json.loads(sys.argv[1])
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # never outlive hone, sandbox or not
    if config.get("parent") and os.getppid() != config["parent"]:
        os._exit(0)  # hone died before the line above: no signal will ever come
    limits = config.get("limits") or {}
    preload(config.get("preload") or ["numpy"])
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    path = config["socket"]
    if os.path.lexists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    isolation = json.loads(probe(limits))
    hone_sandbox.python_open_to_others()  # asked once here, so no handler walks the folders again
    gc.freeze()  # what is loaded now is never collected in a fork, so children do not copy its pages to scan them
    print(json.dumps({"ready": True, "isolation": isolation}), flush=True)
    # One handler more than evaluators: the next call never waits for a handler that is made after a call ends.
    serve_slots(server, limits, max(1, int(config.get("slots") or 2)) + 1)


if __name__ == "__main__":
    main()
