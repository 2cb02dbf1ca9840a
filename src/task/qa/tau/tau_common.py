"""What τ-bench's two domains share: the database hash of its reward, its `calculate` tool, and tool naming."""
import ast
import operator
import warnings
from hashlib import sha256

ALLOWED = "0123456789+-*/(). "  # a str, as in τ-bench: `in` is a substring test and refuses what is not text
# The largest power `calculate` works out. τ-bench evaluates the expression with eval, so `9**9**9` would run for
# minutes there; here it is an error. Nothing below this size differs.
MAX_POWER_BITS = 1 << 16


def named(class_name):
    """Gives a tool τ-bench's qualified name, so a wrong argument fails with τ-bench's own TypeError text."""

    def mark(fn):
        fn.__qualname__ = "%s.invoke" % class_name
        return fn

    return mark


def to_hashable(item):
    """τ-bench's canonical form of the database: dicts as key-sorted pairs, lists as tuples, sets sorted."""
    if isinstance(item, dict):
        return tuple((key, to_hashable(value)) for key, value in sorted(item.items()))
    if isinstance(item, list):
        return tuple(to_hashable(element) for element in item)
    if isinstance(item, set):
        return tuple(sorted(to_hashable(element) for element in item))
    return item


def data_hash(data):
    """The reward's database hash: sha256 of the canonical form's str(), as τ-bench computes it."""
    return sha256(str(to_hashable(data)).encode("utf-8")).hexdigest()


def _power(base, exponent):
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0:
        if abs(base) > 1 and exponent * abs(base).bit_length() > MAX_POWER_BITS:
            raise OverflowError("the power is too large to compute here")
    return operator.pow(base, exponent)


class _GuardPowers(ast.NodeTransformer):
    """Every `a ** b` becomes `_hone_power(a, b)`: the same operands in the same order, the same errors, but a power
    too large to work out is refused. The name cannot appear in an expression (letters fail the character check)."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow):
            call = ast.Call(func=ast.Name(id="_hone_power", ctx=ast.Load()), args=[node.left, node.right], keywords=[])
            return ast.copy_location(call, node)
        return node


def calculate(expression):
    """τ-bench's `calculate`: the expression's value rounded to 2 places, as str(); its own errors word for word. As
    τ-bench, only numbers, + - * / ( ) . and spaces pass the character check and the rest is Python's own evaluation
    (a call such as `2(3)` fails as it does there), except that every power is guarded."""
    if not all(char in ALLOWED for char in expression):
        return "Error: invalid characters in expression"
    try:
        if not isinstance(expression, str):  # a list or dict of allowed characters: what eval says of it
            raise TypeError("eval() arg 1 must be a string, bytes or code object")
        # eval() drops leading spaces and tabs before it compiles; so does this
        tree = ast.fix_missing_locations(_GuardPowers().visit(ast.parse(expression.lstrip(" \t"), "<string>", "eval")))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # `2(3)` warns at compile time; the observation is the error at run time
            code = compile(tree, "<string>", "eval")
        return str(round(float(eval(code, {"__builtins__": None, "_hone_power": _power}, {})), 2))
    except Exception as e:
        return f"Error: {e}"
