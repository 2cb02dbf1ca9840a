"""What the program zygote imports once, so that no call imports it again (hone_program_zygote.py).

A module a program imports costs every call its import when the zygote has not loaded it: numpy.random alone is
~20 ms of CPU in a fresh process, scipy.optimize over 100 ms. The zygote loads the task's `program_preload` (numpy
and numpy.random unless the task says otherwise) and, besides, the installed modules the task's seed program imports
at its top level (found with Python's parser; the seed is never run). Those are only the seed's guess at what later
programs use: a module that fails to import is skipped, and a module that starts a thread when imported (a process
that forks must have one thread) makes the zygote start again without the seed's modules (`seeded_ok`).
"""
import ast
import os
import sys

MAX_SEED_MODULES = 32


def load(names):
    for name in names:
        try:
            __import__(name)
        except Exception:
            pass


def seed_modules(source):
    """The modules `source` imports at its top level (absolute imports, outside functions and classes), in order."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return [n for n in dict.fromkeys(names) if n not in sys.modules][:MAX_SEED_MODULES]


def threads():
    """How many threads this process has (1 where /proc cannot tell)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def seeded_ok(source):
    """Loads the seed's modules; False when that started a thread in this process."""
    before = threads()
    load(seed_modules(source))
    return threads() <= before
