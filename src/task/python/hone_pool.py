"""A warm evaluator process for hone: imports the evaluator once, then forks a fresh child per evaluation.

Protocol (JSON lines): hone writes {"id", "program", "result", "memory_mb", "stdout", "stderr"} on stdin; this
process answers {"id", "pid"} when the child starts and {"id", "code", "signal"} when it ends. The child runs in
its own session (hone kills its whole process group on timeout), under a memory limit, with its output sent to
files, so no state leaks between programs and nothing corrupts the protocol.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hone_eval_runner as runner  # noqa: E402


def main():
    evaluator_path = sys.argv[1]
    cascade = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    control = os.fdopen(os.dup(1), "w", buffering=1)
    # Anything the evaluator prints at import goes to stderr, never into the protocol.
    os.dup2(2, 1)
    try:
        module = runner.load_evaluator(evaluator_path)
    except BaseException as exc:
        control.write(json.dumps({"ready": False, "error": "%s: %s" % (type(exc).__name__, exc)}) + "\n")
        return 1
    control.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                out = os.open(req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                err = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(out, 1)
                os.dup2(err, 2)
                sys.stdout = os.fdopen(1, "w", buffering=1)
                sys.stderr = os.fdopen(2, "w", buffering=1)
                runner.limit_memory(int(req.get("memory_mb", 0)))
                code = runner.evaluate_to_file(module, req["program"], req["result"], cascade)
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
            except BaseException:
                os._exit(70)
        control.write(json.dumps({"id": req["id"], "pid": pid}) + "\n")
        _, status = os.waitpid(pid, 0)
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        control.write(json.dumps({"id": req["id"], "code": code, "signal": sig}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
