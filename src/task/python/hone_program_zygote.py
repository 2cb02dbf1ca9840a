"""A warm process that runs candidate programs for evaluators (see hone_runtime.run_program).

Started by hone (under bubblewrap where it works, with a view of Python and nothing of the user's) with one JSON
argument: {"socket", "preload", "limits"}. It imports numpy (or the task's `program_preload`) once and listens on
the Unix socket; for each connection it forks a handler that reads one request and runs the program contained
(hone_program_child.serve: fresh namespaces, private /tmp, limits), so programs start warm but share nothing. The
handler watches the connection: when the evaluator goes away, the program is killed. It never loads an evaluator.
A request of kind "tool" (from hone itself) runs a generated Python tool the same way (hone_tool_runner.py).
"""
import gc
import json
import os
import signal
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from hone_program_child import MAX_PROGRAM_BYTES, serve  # noqa: E402
from hone_tool_runner import serve_tool  # noqa: E402
from hone_sandbox import PR_SET_PDEATHSIG, prctl, probe  # noqa: E402

MAX_REQUEST = MAX_PROGRAM_BYTES * 2 + (1 << 20)


def preload(names):
    for name in names:
        try:
            __import__(name)
        except Exception:
            pass


def read_request(conn):
    data = bytearray()
    while not data.endswith(b"\n"):
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_REQUEST:
            raise ValueError("the request is too large")
    return json.loads(data.decode())


def handle(conn, limits):
    try:
        request = read_request(conn)
        if request.get("kind") == "tool":  # a generated tool's call: a conversation over the connection
            return serve_tool(request, limits, conn.fileno(), conn.fileno())
        reply = serve(request, limits, cancel_fd=conn.fileno())
    except BaseException as exc:
        reply = json.dumps({"ok": False, "error": "zygote failure: %s" % exc})
    try:
        conn.sendall(reply.encode())
    except OSError:
        pass


def main():
    config = json.loads(sys.argv[1])
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # never outlive hone, sandbox or not
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
    gc.freeze()  # what is loaded now is never collected in a fork, so children do not copy its pages to scan them
    print(json.dumps({"ready": True, "isolation": isolation}), flush=True)
    while True:
        conn, _ = server.accept()
        pid = os.fork()
        if pid == 0:
            server.close()
            try:
                handle(conn, limits)
            finally:
                os._exit(0)
        conn.close()
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass


if __name__ == "__main__":
    main()
