"""What a generated Python tool may reach through the modules it imports (used by hone_tool_gate.py).

A whitelisted module also carries the modules it imported itself as plain attributes (`typing.sys`,
`dataclasses.builtins`, `dataclasses.inspect`, `statistics.sys`, `json.codecs`, `numpy.testing`), and `sys.modules`
hands out every module loaded. So the gate checks each attribute chain rooted at an imported module against what that
module really holds: it imports the whitelisted module here (library code only, never the tool's) and follows the
chain; every module met on the way must be one of ALLOWED_MODULES. A module a tool cannot import here (pandas not
installed) is not followed; the gate's static rules on attribute names still apply to it.
"""
import importlib
import types
import warnings

ALLOWED_MODULES = frozenset(
    """
    math re json itertools functools collections collections.abc heapq bisect random statistics string typing dataclasses
    numpy numpy.linalg numpy.fft numpy.random numpy.polynomial numpy.polynomial.polynomial numpy.polynomial.chebyshev
    numpy.polynomial.legendre numpy.polynomial.laguerre numpy.polynomial.hermite numpy.polynomial.hermite_e
    numpy.polynomial.polyutils numpy.ma numpy.char numpy.strings numpy.dtypes numpy.exceptions numpy.typing
    numpy.lib numpy.lib.scimath numpy.lib.stride_tricks numpy.lib.mixins numpy.lib.array_utils
    pandas pandas.api pandas.api.types pandas.api.extensions pandas.api.indexers pandas.errors pandas.arrays
    pandas.tseries pandas.tseries.offsets pandas.tseries.frequencies pandas.testing
    """.split()
)
_NOT_LOADED = object()
_loaded = {}


def load(name):
    """The module `name` as this Python has it, or None when it cannot be imported or is not one of ALLOWED_MODULES:
    the gate runs on the host, before any sandbox, so it never imports a module the tool names that is not allowed
    (`import antigravity as a` would run it here)."""
    if name not in ALLOWED_MODULES:
        return None
    if name not in _loaded:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _loaded[name] = importlib.import_module(name)
        except Exception:
            _loaded[name] = None
    return _loaded[name]


def step(value, attr):
    """`value.attr` as the module holds it, or _NOT_LOADED when it has no such attribute (or reading it fails)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return getattr(value, attr)
    except Exception:
        return _NOT_LOADED


def follow(module_name, attrs):
    """Follows `module_name.attrs[0].attrs[1]...`. Returns (how many attributes lead to a module a tool may not
    reach, and that module's name; or None, None) and whether the chain ends on a module."""
    value = load(module_name)
    if value is None:
        return (None, None), False
    for i, attr in enumerate(attrs):
        value = step(value, attr)
        if value is _NOT_LOADED:
            return (None, None), False
        if isinstance(value, types.ModuleType) and value.__name__ not in ALLOWED_MODULES:
            return (i + 1, value.__name__), True
    return (None, None), isinstance(value, types.ModuleType)


def metaclass_on(module_name, attrs):
    """How many attributes of `module_name.attrs[0]...` lead to a metaclass (`typing.ABCMeta`: a class of classes,
    which builds a class from a dict of any names, dunder hooks included), and its name; or (None, None)."""
    value = load(module_name)
    for i, attr in enumerate(attrs if value is not None else []):
        value = step(value, attr)
        if value is _NOT_LOADED:
            break
        if isinstance(value, type) and issubclass(value, type):
            return i + 1, value.__name__
    return None, None


def module_of(module_name, attr):
    """The dotted name of `module_name.attr` when it is a module (`from numpy import random`), else None."""
    value = load(module_name)
    value = _NOT_LOADED if value is None else step(value, attr)
    return value.__name__ if isinstance(value, types.ModuleType) else None
