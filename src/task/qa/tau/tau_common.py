"""What τ-bench's two domains share: the database hash of its reward, its `calculate` tool, and tool naming."""
import ast
import operator
from hashlib import sha256

ALLOWED = set("0123456789+-*/(). ")
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


BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
}


def _power(base, exponent):
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0:
        if abs(base) > 1 and exponent * abs(base).bit_length() > MAX_POWER_BITS:
            raise OverflowError("the power is too large to compute here")
    return operator.pow(base, exponent)


def _value(node):
    if isinstance(node, ast.Expression):
        return _value(node.body)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple) and not node.elts:
        return ()
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        v = _value(node.operand)
        return +v if isinstance(node.op, ast.UAdd) else -v
    if isinstance(node, ast.BinOp):
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow):
            return _power(left, right)
        fn = BINARY.get(type(node.op))
        if fn:
            return fn(left, right)
    raise TypeError("unsupported expression")


def calculate(expression):
    """τ-bench's `calculate`: the expression's value rounded to 2 places, as str(); its own errors word for word. The
    expression is parsed, never run: only numbers and + - * / // ** in parentheses can appear in it."""
    if not all(char in ALLOWED for char in expression):
        return "Error: invalid characters in expression"
    try:
        # eval() drops leading spaces and tabs before it compiles; so does this
        tree = compile(expression.lstrip(" \t"), "<string>", "eval", ast.PyCF_ONLY_AST)
        return str(round(float(_value(tree)), 2))
    except Exception as e:
        return f"Error: {e}"
