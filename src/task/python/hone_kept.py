"""The evaluator kept in the pool's process across evaluations (a task's hone.yaml `evaluator_state: kept`).

hone_pool.py forks a fresh copy of the loaded evaluator for every evaluation, so nothing one evaluation changes in
the evaluator's memory reaches the next. A task whose evaluator keeps no state between calls and runs programs only
through hone_runtime (in their own sandboxed processes) may declare `kept`: its evaluations then run in this process
itself, one after another, as OpenEvolve's workers run theirs, without a fork per evaluation.

Kept only inside the evaluator's own sandbox (hone_pool's own PID namespace), and with the same rules as a fresh
evaluation otherwise: the program's text in a scratch folder of its own, the evaluator's output captured per
evaluation, the memory limit, the timeout (hone kills this process when an evaluation overruns, which ends everything
it started, and starts another), and after each evaluation everything it left is killed and its files removed.

A tripwire (an audit hook) guards the declaration: an evaluator that executes the program in its own process (code
compiled from the program's text or its folder, or a library loaded from there) is stopped before the program's code
runs. The evaluation is then answered `kept_refused`, and this process exits: hone evaluates the program again in a
fresh evaluator and keeps to fresh evaluators for the rest of the pool's life.
"""
import fcntl
import json
import os
import re
import resource
import select
import sys
import termios
import threading
import time

import hone_eval_runner as runner

REFUSED = "hone: the task declares evaluator_state: kept, but its evaluator runs the program in its own process"
EVOLVE_BLOCK = re.compile(r"# EVOLVE-BLOCK-START[^\n]*\n(.*?)# EVOLVE-BLOCK-END", re.S)
MIN_TEXT = 16  # a text this short is no mark of the program (an empty EVOLVE block, a one-liner)
PIPE_BYTES = 1 << 20  # Linux's default most for a pipe an unprivileged process sizes


class Tripwire:
    """Raises inside the evaluator before code of the program runs in this process: code executed from a file in the
    program's scratch folder, or compiled from a text that holds the program (with or without its EVOLVE markers, or
    its EVOLVE block, the part that changes between candidates); an extension module or a library loaded from that
    folder. A guard against a wrong declaration by the task's own (trusted) evaluator, not against a hostile one: code
    the evaluator rewrites before running it passes unseen. Only in this process: a fork of it that runs the program
    is a process of its own."""

    def __init__(self):
        self.scratch, self.texts, self.suspects, self.tripped, self.pid = None, (), set(), None, 0
        sys.addaudithook(self._hook)

    def arm(self, scratch, program):
        self.scratch, self.suspects, self.tripped, self.pid = scratch + os.sep, set(), None, os.getpid()
        text = program.replace("\r\n", "\n")  # as a file read in text mode gives it
        unmarked = "".join(line for line in text.splitlines(True) if "EVOLVE-BLOCK-" not in line)
        block = EVOLVE_BLOCK.search(text)
        marks = (text, unmarked, block.group(1).strip("\n") if block else "")
        self.texts = tuple(dict.fromkeys(t for t in marks if len(t) >= MIN_TEXT))

    def disarm(self):
        self.scratch = None

    def _inside(self, path):
        """Whether an absolute path is in the scratch folder (a bare name, "<string>" and the like are not)."""
        try:
            name = os.fsdecode(path)
        except (TypeError, ValueError):
            return False
        return name.startswith("/") and os.path.realpath(name).startswith(self.scratch)

    def _hook(self, event, args):
        if self.scratch is None or os.getpid() != self.pid:
            return
        if event == "compile":  # parsing the program is not running it: its file name is remembered
            source, filename = args[0], args[1]
            text = source.decode(errors="replace") if isinstance(source, (bytes, bytearray)) else source
            if isinstance(text, str) and any(t in text.replace("\r\n", "\n") for t in self.texts):
                self.suspects.add(filename)
        elif event == "exec":
            name = getattr(args[0], "co_filename", None)
            if name is not None and (name in self.suspects or self._inside(name)):
                self._trip(event)
        elif event == "import" and len(args) > 1 and args[1] and self._inside(args[1]):  # an extension's file
            self._trip(event)
        elif event == "ctypes.dlopen" and args and isinstance(args[0], (str, bytes)):
            name = os.fsdecode(args[0])  # a bare name is the loader's to find; a path is the evaluator's
            if "/" in name and self._inside(os.path.join(os.getcwd(), name)):
                self._trip(event)

    def _trip(self, event):
        self.tripped = event
        raise RuntimeError(REFUSED)


class Capture:
    """The evaluator's stdout and stderr (descriptors 1 and 2, and what its subprocesses inherit), drained by a
    thread into the current evaluation's buffers: bounded, and never blocking a writer that lets the thread run. Native
    code that writes more than a pipe holds (1 MB) without releasing the GIL waits until hone's timeout ends the
    evaluation; a fresh evaluator (the default) has no such limit."""

    def __init__(self, keep):
        self.keep, self.lock, self.bufs = keep, threading.Lock(), None
        self.reads = {}
        for fd, name in ((1, "out"), (2, "err")):
            r, w = os.pipe()
            try:  # room for what native code writes while it holds the GIL the draining thread needs
                fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
            except OSError:
                pass
            os.dup2(w, fd)
            os.close(w)
            self.reads[r] = name
        sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
        sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
        threading.Thread(target=self._drain, daemon=True).start()

    def start(self, tail):
        with self.lock:
            self.bufs = {"out": tail(self.keep), "err": tail(self.keep)}

    def _drain(self):
        while True:
            for fd in select.select(list(self.reads), [], [])[0]:
                with self.lock:
                    chunk = os.read(fd, 1 << 16)
                    if self.bufs is not None and chunk:
                        self.bufs[self.reads[fd]].push(chunk)

    def finish(self):
        """What the evaluation wrote (every byte written before this call)."""
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except Exception:
                pass
        while True:
            with self.lock:
                if all(_pending(fd) == 0 for fd in self.reads):
                    bufs, self.bufs = self.bufs, None
                    return bufs["out"].text(), bufs["err"].text()
            time.sleep(0)


def _pending(fd):
    size = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, size)
    return int.from_bytes(size, sys.byteorder)


def limit_memory(mb):
    """The evaluation's memory limit, or none (`mb` 0): the soft limit only, so the next evaluation may set another."""
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    limit = hard if mb <= 0 else mb << 20 if hard == resource.RLIM_INFINITY else min(mb << 20, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def evaluate(module, cascade, req, scratch, tripwire):
    """(exit code, payload, refused): the evaluation in this process, its program written in `scratch`. A payload
    of runner.OUT_OF_MEMORY leaves this process to be replaced."""
    path = runner.write_program(scratch, req)
    limit_memory(int(req.get("memory_mb") or 0))
    tripwire.arm(scratch, req["program"])
    here = os.getcwd()
    try:
        os.chdir(scratch)
        code, payload = runner.evaluate_payload(module, path, cascade)
    finally:
        tripwire.disarm()
        os.chdir(here)
        limit_memory(0)
    return code, payload, tripwire.tripped is not None
