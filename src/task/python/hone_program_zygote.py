"""A warm, sandboxed process that runs candidate programs for evaluators (see hone_runtime.run_program).

Started by hone (under bubblewrap where it works) with a Unix socket path and a scratch root. It imports numpy
once, then for each request forks a handler, which forks the program's own process: new session, memory limit,
empty environment, a fresh scratch directory. It never loads an evaluator, so a program cannot reach one.
"""
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
from hone_program_child import limit_memory, run_entry  # noqa: E402

KEEP_ENV = ("PATH", "LANG", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_CORETYPE")


def preload(names):
    for name in names:
        try:
            __import__(name)
        except Exception:
            pass


def run_one(req, scratch_root):
    scratch = tempfile.mkdtemp(prefix="p-", dir=scratch_root)
    try:
        program = os.path.join(scratch, "program" + os.path.splitext(req["program"])[1])
        shutil.copyfile(req["program"], program)
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(read_fd)
                os.setsid()
                os.chdir(scratch)
                for k in list(os.environ):
                    if k not in KEEP_ENV:
                        del os.environ[k]
                os.environ["HOME"] = scratch
                null = os.open(os.devnull, os.O_RDWR)
                os.dup2(null, 0)
                os.dup2(null, 1)
                limit_memory(int(req.get("memory_mb", 0)))
                out = run_entry(program, req["entry"], req.get("args") or [], many=bool(req.get("many")))
                with os.fdopen(write_fd, "w") as f:
                    f.write(out)
            finally:
                os._exit(0)
        os.close(write_fd)
        deadline = time.monotonic() + float(req.get("timeout", 60))
        chunks = []
        timed_out = False
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_fd], [], [], left)
            if ready:
                chunk = os.read(read_fd, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        os.close(read_fd)
        if timed_out:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        os.waitpid(pid, 0)
        if timed_out:
            return json.dumps({"ok": False, "error": "the program did not return within %g s" % float(req.get("timeout", 60))})
        text = b"".join(chunks).decode()
        return text or json.dumps({"ok": False, "error": "the program's process ended without a result"})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    sock_path, scratch_root = sys.argv[1], sys.argv[2]
    preload((sys.argv[3] if len(sys.argv) > 3 else "numpy").split(","))
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(sock_path)
    server.listen(64)
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        pid = os.fork()
        if pid == 0:
            server.close()
            try:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(1 << 16)
                    if not chunk:
                        break
                    data += chunk
                reply = run_one(json.loads(data.decode()), scratch_root)
                conn.sendall(reply.encode())
            except BaseException as exc:
                try:
                    conn.sendall(json.dumps({"ok": False, "error": "zygote failure: %s" % exc}).encode())
                except OSError:
                    pass
            finally:
                conn.close()
                os._exit(0)
        conn.close()
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass


if __name__ == "__main__":
    main()
