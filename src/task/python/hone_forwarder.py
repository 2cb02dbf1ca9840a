"""Gives a sealed program one way out: a loopback TCP port that leads to hone's model proxy, nothing else.

    hone_forwarder.py HOST:PORT UNIX_SOCKET -- COMMAND ARGS...

Runs inside the program's own network namespace (which has only loopback), listens on HOST:PORT (port 0: any
free one), and carries every connection to the Unix socket that hone's model proxy listens on (bound into the
sandbox); then it runs COMMAND as its child with OPENAI_BASE_URL set to http://HOST:PORT/v1, and exits with its
status. The program thus reaches the OpenAI-compatible endpoint hone
gives it, and no other host, port or socket; it gets a session keyring of its own and no keyring calls
(hone_sandbox.seal_keyrings).
"""
import os
import select
import socket
import sys
import threading

from hone_sandbox import seal_keyrings  # beside this file


def pump(a, b):
    try:
        while True:
            ready, _, _ = select.select([a, b], [], [])
            for src in ready:
                data = src.recv(1 << 16)
                if not data:
                    return
                (b if src is a else a).sendall(data)
    except OSError:
        pass
    finally:
        a.close()
        b.close()


def serve(listener, target):
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(target)
        except OSError:
            conn.close()
            continue
        threading.Thread(target=pump, args=(conn, upstream), daemon=True).start()


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    target = sys.argv[2]
    command = sys.argv[sys.argv.index("--") + 1 :]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, int(port)))
    listener.listen(64)
    threading.Thread(target=serve, args=(listener, target), daemon=True).start()
    os.environ["OPENAI_BASE_URL"] = "http://%s:%d/v1" % (host, listener.getsockname()[1])
    pid = os.fork()
    if pid == 0:
        listener.close()
        try:
            seal_keyrings()  # the command reads and plants no key in the keyrings of hone's user
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


if __name__ == "__main__":
    main()
