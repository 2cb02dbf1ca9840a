"""Python values as plain, typed JSON, for the calls that cross between a code benchmark's tests and a completion.

Data crosses as data: None, bool, int, float, complex, str, bytes, bytearray, list, tuple, dict, set, frozenset,
range, the standard library's value types (Fraction, Decimal, deque, Counter, OrderedDict), and an iterator's items
(a generator or map the completion returns arrives as an iterator over them, so `list(it)` works and `it == [...]` is
False, as it is for the original; an exception raised while it was read out comes after its items, where the tests'
reading meets it). Each value is one JSON array tagged with its exact type, so 1, True and 1.0 stay
what they are; ints travel in hexadecimal, which has no digit limit.

Anything else the completion returns (a regex match, an instance of its own class, a function) stays in the
completion's process: the tests get a handle (tag "H"), which the checker turns into a stand-in that forwards
truthiness, len, str, repr, iteration, attributes, calls and indexing to the completion, each answer again data or a
handle, and that is equal only to itself, so an object whose __eq__ says yes to everything proves nothing. A value
that is one of the call's own arguments comes back as that argument (tag "A"), so identity holds as in one process.

`decode` is what the trusted checker applies to whatever a completion sends: every node is checked, nesting and size
are capped, and the values it builds are the checker's own types.
"""
import collections
import decimal
import fractions
import json

MAX_DEPTH = 200
MAX_NODES = 1_000_000
MAX_LINE = 32 << 20


class NotData(TypeError):
    """A value that is not plain data."""


class Codec:
    """What an encoding or decoding may do beyond plain data: `reference(value)` gives the node of a value passed by
    reference (a call's own argument, a handle), looked up before anything else (None: not one); `handle(value)` a
    node for a value that is not data (None: refuse it); on decoding, `remote(id, type_name)` and
    `argument_at(index)` give the values those nodes stand for (None: not allowed)."""

    def handle(self, value):
        return None

    def reference(self, value):
        return None

    def remote(self, ident, type_name):
        return None

    def argument_at(self, index):
        return None

    def failure(self, exc):
        """The node of an exception an iterator raised while it was read out (None: let it propagate)."""
        return None

    def raised(self, node):
        """The exception a "G" node's failure stands for (None: not allowed)."""
        return None


PLAIN = Codec()


def encode(value, depth=0, budget=None, codec=PLAIN):
    budget = budget if budget is not None else [MAX_NODES]
    budget[0] -= 1
    if budget[0] < 0:
        raise NotData("the value has more than %d parts" % MAX_NODES)
    if depth > MAX_DEPTH:
        raise NotData("the value is nested more than %d deep" % MAX_DEPTH)
    t = type(value)
    if value is None:
        return ["N"]
    if t is bool:
        return ["B", value]
    if isinstance(value, int) and not isinstance(value, bool):
        return ["I", format(int.__index__(value), "x")]
    if isinstance(value, float):
        return ["F", float.__repr__(value)]
    if isinstance(value, complex):
        return ["C", float.__repr__(value.real), float.__repr__(value.imag)]
    if isinstance(value, str):
        return ["S", str.__str__(value)]
    if isinstance(value, bytes):
        return ["Y", bytes(value).hex()]
    same = codec.reference(value)
    if same is not None:
        return same
    sub = lambda items: [encode(v, depth + 1, budget, codec) for v in items]  # noqa: E731
    pairs = lambda d: [[encode(k, depth + 1, budget, codec), encode(v, depth + 1, budget, codec)] for k, v in dict.items(d)]  # noqa: E731
    if isinstance(value, bytearray):
        return ["Z", bytes(value).hex()]
    if t is collections.Counter:
        return ["CT", pairs(value)]
    if t is collections.OrderedDict:
        return ["OD", pairs(value)]
    if t is collections.deque:
        return ["DQ", sub(collections.deque.__iter__(value)), value.maxlen]
    if t is fractions.Fraction:
        return ["FR", format(value.numerator, "x"), format(value.denominator, "x")]
    if t is decimal.Decimal:
        return ["DE", decimal.Decimal.__str__(value)]
    if isinstance(value, list):
        return ["L", sub(list.__iter__(value))]
    if isinstance(value, tuple):
        return ["T", sub(tuple.__iter__(value))]
    if isinstance(value, dict):
        return ["D", pairs(value)]
    if isinstance(value, frozenset):
        return ["R", sub(frozenset.__iter__(value))]
    if isinstance(value, set):
        return ["E", sub(set.__iter__(value))]
    if t is range:
        return ["Q", format(value.start, "x"), format(value.stop, "x"), format(value.step, "x")]
    if _is_iterator(value):
        # Read out now, but an exception it raises on the way is the iterator's last "item": the tests meet it when
        # their reading gets there, as with the original, not at the call that returned it.
        items, failure = [], None
        try:
            for item in _bounded(value):
                items.append(item)
        except NotData:
            raise
        except BaseException as exc:
            failure = codec.failure(exc)
            if failure is None:
                raise
        return ["G", sub(items)] + ([failure] if failure is not None else [])
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if callable(tolist) and type(value).__module__ == "numpy":
        return encode(tolist(), depth + 1, budget, codec)
    node = codec.handle(value)
    if node is not None:
        return node
    raise NotData("a %s is not plain data (numbers, text, lists, tuples, dicts, sets)" % t.__name__)


def _is_iterator(value):
    return callable(getattr(type(value), "__next__", None)) and callable(getattr(type(value), "__iter__", None))


def _bounded(iterator):
    for i, item in enumerate(iterator):
        if i >= MAX_NODES:
            raise NotData("the iterator yields more than %d items" % MAX_NODES)
        yield item


class BadValue(ValueError):
    """What a completion sent is not an encoded value."""


def _int(text):
    if not isinstance(text, str) or not text or len(text) > (MAX_LINE >> 1):
        raise BadValue("an int is hexadecimal text")
    return int(text, 16)


def _float(text):
    if not isinstance(text, str) or len(text) > 40:
        raise BadValue("a float is its repr")
    return float(text)


def decode(node, depth=0, budget=None, codec=PLAIN):
    """The value an encoded node stands for, built from the checker's own types; BadValue when it is not one."""
    budget = budget if budget is not None else [MAX_NODES]
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH:
        raise BadValue("the value is too large or too deep")
    if not isinstance(node, list) or not node or not isinstance(node[0], str):
        raise BadValue("a value is a tagged list")
    tag, rest = node[0], node[1:]
    one = rest[0] if len(rest) == 1 else None
    many = lambda items: [decode(v, depth + 1, budget, codec) for v in _items(items)]  # noqa: E731

    def pairs(items):
        items = _items(items)
        if not all(isinstance(p, list) and len(p) == 2 for p in items):
            raise BadValue("a dict is a list of pairs")
        return [(decode(k, depth + 1, budget, codec), decode(v, depth + 1, budget, codec)) for k, v in items]

    if tag == "N" and not rest:
        return None
    if tag == "B" and len(rest) == 1 and isinstance(one, bool):
        return one
    if tag == "I" and len(rest) == 1:
        return _int(one)
    if tag == "F" and len(rest) == 1:
        return _float(one)
    if tag == "C" and len(rest) == 2:
        return complex(_float(rest[0]), _float(rest[1]))
    if tag == "S" and len(rest) == 1 and isinstance(one, str):
        return one
    try:
        if tag == "Y" and len(rest) == 1 and isinstance(one, str):
            return bytes.fromhex(one)
        if tag == "Z" and len(rest) == 1 and isinstance(one, str):
            return bytearray.fromhex(one)
        if tag == "L" and len(rest) == 1:
            return many(one)
        if tag == "T" and len(rest) == 1:
            return tuple(many(one))
        if tag == "G" and len(rest) == 1:
            return iter(tuple(many(one)))
        if tag == "G" and len(rest) == 2:
            error = codec.raised(rest[1])
            if error is not None:
                return _replay(tuple(many(rest[0])), error)
        if tag == "E" and len(rest) == 1:
            return set(many(one))
        if tag == "R" and len(rest) == 1:
            return frozenset(many(one))
        if tag == "D" and len(rest) == 1:
            return dict(pairs(one))
        if tag == "CT" and len(rest) == 1:
            return collections.Counter(dict(pairs(one)))
        if tag == "OD" and len(rest) == 1:
            return collections.OrderedDict(pairs(one))
        if tag == "DQ" and len(rest) == 2 and (rest[1] is None or (type(rest[1]) is int and rest[1] >= 0)):
            return collections.deque(many(rest[0]), rest[1])
        if tag == "FR" and len(rest) == 2:
            return fractions.Fraction(_int(rest[0]), _int(rest[1]))
        if tag == "DE" and len(rest) == 1 and isinstance(one, str) and len(one) <= 10_000:
            return decimal.Decimal(one)
    except (TypeError, ValueError, ArithmeticError) as exc:  # an unhashable key, a zero denominator: no honest value
        raise BadValue(str(exc)[:200])
    if tag == "Q" and len(rest) == 3:
        return range(_int(rest[0]), _int(rest[1]), _int(rest[2]))
    if tag == "H" and len(rest) == 2 and isinstance(rest[0], str) and isinstance(rest[1], str):
        value = codec.remote(_int(rest[0]), rest[1][:100])
        if value is not None:
            return value
    if tag == "A" and len(rest) == 1 and type(one) is int:
        value = codec.argument_at(one)
        if value is not None:
            return value
    raise BadValue("unknown value tag %r" % tag[:20])


def _replay(items, error):
    yield from items
    raise error


def _items(v):
    if not isinstance(v, list):
        raise BadValue("expected a list of values")
    return v


def dumps(message):
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


def loads(line):
    """One message line, parsed; BadValue for anything that is not a JSON object of bounded size and depth."""
    if len(line) > MAX_LINE:
        raise BadValue("a message is larger than %d bytes" % MAX_LINE)
    try:
        msg = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BadValue("a message is not JSON: %s" % str(exc)[:200])
    if not isinstance(msg, dict):
        raise BadValue("a message is a JSON object")
    return msg
