"""The static gate on a generated Python tool (`custom_tools/<name>.py`), before anything runs it.

    python3 hone_tool_gate.py < {"code": "...", "name": "custom_tools/x.py"}   ->   [{"line", "col", "rule", "message"}]

As strict as HarnessTTT's gate on the same files, and a little stricter: one top-level `def run(ctx, args)`, at
most 6,000 characters, imports only from a whitelist, none of the builtins that reach the filesystem, the
interpreter or string-driven attribute access, no attribute whose name starts with an underscore (dunders and
private names), none of numpy's or pandas' file readers and writers, no `global`/`nonlocal`, no star imports and
no relative imports, and no attribute that turns a string into code or attribute access (`typing.get_type_hints`
evaluates strings, `DataFrame.eval`, functools.singledispatch's `register`, dataclasses over TypedDict's arbitrary
field names). A class pattern (`case C(name=x)`) reads attributes too: its names meet the same rules. `str.format`
walks attributes ("{0.__class__}"), so `.format`/`.format_map` are accepted only on a string literal whose fields
neither walk attributes nor index ("{} left", "{:.6f}").
A class may define the ordinary protocol methods (`__init__`, `__eq__`, `__getitem__`, arithmetic...) and no other
dunder: `__getattr__` answers any name the interpreter or numpy asks (`__array_interface__` is an array at any
address), and descriptors, `__init_subclass__` or `__reduce__` run code where the AST shows none. No raw memory:
numpy's `as_strided` and `byte_bounds`, and object arrays over a tool's own bytes (`np.ndarray(shape, "O", buffer)`:
ndarray and NDArray are named only in isinstance/issubclass, typing.cast, .view and annotations, a dataclass
field's `.type` never read; `recarray`, `numpy.rec`, `.mro()` up to ndarray). No road to `type` or to classes built from a dict
of any names: metaclasses such as `typing.ABCMeta`, `typing.get_origin`, `dataclasses.make_dataclass`. pandas' roads
from a string to a module or a class attribute (a plotting backend is imported by its name: `plot`, `hist`,
`boxplot`, `plotting`; `register_*_accessor`) and its file handles (`ExcelWriter`, `HDFStore`; `to_string` is called
bare, never given a path) are refused too. A dataclass field renamed after the fact is refused when the tool runs
(hone_tool_runner.py): dataclasses compiles field names into source text.
Modules reached as attributes are checked too (hone_tool_modules.py): a name bound to an imported module is used
only as the root of an attribute chain, and the chain may meet no module outside the allowed ones (`typing.sys`,
`dataclasses.builtins`, `np.testing` are refused); whatever the receiver, no attribute named after such a module,
`modules`, operator's attribute getters or a frame's links (`gi_frame`, `f_globals`, `f_back`). Every problem is
listed with its line and column; an empty list means accepted. The gate never runs the tool's code (it imports the
whitelisted modules the tool imports, to see what they hold); it is the first wall, not the only one: the tool then
runs contained like any evaluated program.
"""
import ast
import json
import re
import string
import sys

from hone_tool_modules import ALLOWED_MODULES, follow, metaclass_on, module_of

MAX_CODE_CHARS = 6000
ALLOWED_IMPORTS = frozenset(
    "math re json itertools functools collections heapq bisect random statistics string typing dataclasses numpy pandas".split()
)
FORBIDDEN_IMPORTS = frozenset(
    "os sys subprocess socket shutil pathlib importlib ctypes multiprocessing threading signal resource pickle requests "
    "urllib http ftplib telnetlib builtins io".split()
)
FORBIDDEN_NAMES = frozenset(
    "open exec eval compile __import__ input breakpoint globals locals vars memoryview exit quit getattr setattr delattr "
    "type object super help license credits copyright __builtins__ __loader__ __spec__".split()
)
IO_ATTRIBUTES = frozenset(
    "load loads save savez savez_compressed fromfile tofile memmap genfromtxt loadtxt savetxt fromregex DataSource "
    "read_csv read_json read_pickle read_parquet read_excel read_feather read_hdf read_sql read_table read_fwf read_html "
    "read_xml read_clipboard read_orc read_sas read_spss read_stata dump to_csv to_json to_pickle to_parquet to_excel "
    "to_feather to_hdf to_sql to_clipboard to_html to_xml to_latex to_markdown to_stata to_orc read_sql_query "
    "read_sql_table read_gbq to_gbq ExcelWriter ExcelFile HDFStore from_custom_template".split()
)
# Writers that return text when called bare and write a file when given a path (`df.to_string("/x")`).
BUFFER_WRITERS = frozenset(("to_string",))
# Routes from a string to code or to an attribute the AST never shows: format strings walk attributes
# ("{0.__class__}".format), annotation strings are evaluated (get_type_hints), pandas evaluates expressions,
# and numpy can load shared libraries. functools.singledispatch's `register` evaluates a function's annotation
# strings; dataclasses compiles source text from a class's annotation names, which TypedDict's functional form and
# functools.wraps / update_wrapper (copying __annotations__ from any object) make arbitrary strings.
STRING_CODE_ATTRIBUTES = frozenset(
    "format format_map Formatter get_type_hints ForwardRef eval query ctypeslib load_library f2py distutils io "
    "singledispatch singledispatchmethod register TypedDict wraps update_wrapper make_dataclass get_origin "
    # pandas: a plotting backend is a module imported by its name (`df.plot(backend="x")`, the plotting.backend option),
    # and an accessor is set on pandas' classes under any name (`register_dataframe_accessor("__array_interface__")`).
    "plot plotting hist boxplot register_dataframe_accessor register_series_accessor register_index_accessor".split()
)
# numpy's views of memory at any address or stride: as_strided builds an array over whatever its strides reach
# (reading and writing any object in the process, the gate's own rules included), byte_bounds tells the addresses;
# recarray(buf=...) and fromstring build object arrays over bytes the tool wrote (a pointer to any address is then an
# object), and .mro() hands out a base class (ndarray from np.ma.MaskedArray, object from int).
RAW_MEMORY_ATTRIBUTES = frozenset("as_strided byte_bounds recarray fromstring mro".split())
# A dataclass field's `type` is its annotation's value, a class (`x: np.ndarray`, then dataclasses.fields(C)[0].type
# is ndarray, callable with a buffer); annotations are free to name ndarray, so the field's type is never read.
FIELD_TYPE_ATTRIBUTES = frozenset(("type",))
# np.ndarray(shape, "O", buffer) (or its alias numpy.typing.NDArray) is an object array over the buffer's bytes: these
# classes are named only where they are not called: isinstance's or issubclass's class, typing.cast, .view, annotations.
CLASS_ONLY_NAMES = frozenset("ndarray NDArray".split())
# The dunder methods a tool's class may define: construction, representation, comparison, containers, arithmetic.
# Any other (__getattr__, __getattribute__, __get__/__set__, __set_name__, __init_subclass__, __class_getitem__,
# __reduce__, __array_interface__, __array_struct__, __fspath__, __del__...) is a hook the interpreter or a library
# calls by name, with names or values the AST never shows.
ALLOWED_DUNDER_METHODS = frozenset(
    """
    __init__ __post_init__ __repr__ __str__ __hash__ __bool__ __len__ __iter__ __next__ __reversed__ __contains__
    __getitem__ __setitem__ __delitem__ __missing__ __call__ __enter__ __exit__ __eq__ __ne__ __lt__ __le__ __gt__
    __ge__ __neg__ __pos__ __abs__ __invert__ __round__ __float__ __int__ __copy__ __deepcopy__ __new__ __format__
    __index__ __complex__ __trunc__ __floor__ __ceil__
    __add__ __sub__ __mul__ __matmul__ __truediv__ __floordiv__ __mod__ __divmod__ __pow__ __lshift__ __rshift__
    __and__ __or__ __xor__ __radd__ __rsub__ __rmul__ __rmatmul__ __rtruediv__ __rfloordiv__ __rmod__ __rdivmod__
    __rpow__ __rlshift__ __rrshift__ __rand__ __ror__ __rxor__ __iadd__ __isub__ __imul__ __imatmul__ __itruediv__
    __ifloordiv__ __imod__ __ipow__ __ilshift__ __irshift__ __iand__ __ior__ __ixor__
    """.split()
)
# Routes to a module or a frame through an attribute, whatever the receiver: the modules a whitelisted module
# imported for itself (typing.sys, dataclasses.builtins, statistics.sys; numpy's own alias `bltns`), sys.modules,
# operator's string-driven attribute getters, and a generator's or traceback's frame, whose f_globals hold
# __builtins__ and whose f_back walks into hone's own frames.
REACH_ATTRIBUTES = frozenset(
    "sys os posix nt builtins bltns inspect importlib subprocess socket shutil pathlib ctypes signal resource pickle "
    "marshal gc codecs operator traceback linecache tempfile threading multiprocessing platform sysconfig site runpy "
    "pkgutil zipimport cffi modules attrgetter methodcaller gi_frame gi_code cr_frame cr_code ag_frame ag_code f_back "
    "f_globals f_locals f_builtins f_code f_trace tb_frame tb_next".split()
)


def module_bindings(tree):
    """The names an import binds to a module, with the module's dotted name: `import numpy.linalg` binds numpy,
    `import numpy.linalg as la` binds la to numpy.linalg, `from numpy import random` binds random to numpy.random."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                bound[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in ALLOWED_MODULES:
            for a in node.names:
                target = module_of(node.module, a.name) if a.name != "*" else None
                if target:
                    bound[a.asname or a.name] = target
    return bound


def attribute_chain(name_node, parents):
    """The outermost node of `name.a.b...` and its attribute names ["a", "b", ...]."""
    node, attrs = name_node, []
    while isinstance(parents.get(node), ast.Attribute) and parents[node].value is node:
        node = parents[node]
        attrs.append(node.attr)
    return node, attrs


PLAIN_FIELD = re.compile(r"\d*|[A-Za-z_]\w*")


def plain_template(text, depth=0):
    """True when no field of the format string `text` walks attributes or indexes ("{}", "{0:.3f}", "{name!r:>{w}}"
    are plain; "{0.__class__}", "{0[k]}" are not), nested format specs included."""
    try:
        fields = list(string.Formatter().parse(text))
    except (ValueError, TypeError):
        return False
    for _, field, spec, _ in fields:
        if field is not None and not PLAIN_FIELD.fullmatch(field):
            return False
        if spec and (depth > 2 or not plain_template(spec, depth + 1)):
            return False
    return True


def literal_format(node):
    """`"...".format` or `"...".format_map` on a string literal whose fields are plain: it formats, it walks nothing."""
    template = node.value
    return node.attr in ("format", "format_map") and isinstance(template, ast.Constant) and isinstance(template.value, str) and plain_template(template.value)


def variable_annotations(tree):
    """Every variable's annotation (`x: np.ndarray = ...`, a dataclass field's): never called there, and a dataclass
    field's `type`, where it would be readable, is refused (`.type`)."""
    return [node.annotation for node in ast.walk(tree) if isinstance(node, ast.AnnAssign)]


def called_name(call):
    """The name a call's function goes by (`cast` for typing.cast(...) and cast(...))."""
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def class_positions(tree):
    """The nodes where a class is named and not called: isinstance's and issubclass's class argument (a tuple's items
    too), typing.cast's type, an array's .view(type), the annotations of a def's parameters and return (never read
    back: __annotations__ is a dunder), and of variables."""
    roots = variable_annotations(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
            roots.extend(node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]])
        elif isinstance(node, ast.Call) and called_name(node) == "cast" and node.args:
            roots.append(node.args[0])  # typing.cast(np.ndarray, x) returns x
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "view":
            roots.extend(node.args + [k.value for k in node.keywords])  # x.view(np.ndarray): the same memory, as a class
        elif isinstance(node, ast.arg) and node.annotation is not None:
            roots.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            roots.append(node.returns)
    return {id(n) for root in roots for n in ast.walk(root)}


class Gate(ast.NodeVisitor):
    def __init__(self, tree):
        self.problems = []
        self.modules = module_bindings(tree)
        self.parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
        self.class_positions = class_positions(tree)

    def refuse(self, node, rule, message):
        self.problems.append({"line": getattr(node, "lineno", 1), "col": getattr(node, "col_offset", 0) + 1, "rule": rule, "message": message})

    def check_module(self, name, node):
        root = (name or "").split(".")[0]
        if not root:
            self.refuse(node, "import", "relative imports are not allowed")
        elif root in FORBIDDEN_IMPORTS:
            self.refuse(node, "import", "forbidden import: %s" % root)
        elif root not in ALLOWED_IMPORTS:
            self.refuse(node, "import", "import not in whitelist: %s (allowed: %s)" % (root, ", ".join(sorted(ALLOWED_IMPORTS))))
        elif name not in ALLOWED_MODULES:
            self.refuse(node, "import", "module not allowed in a tool: %s" % name)

    def visit_Import(self, node):
        for alias in node.names:
            self.check_module(alias.name, node)
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        self.check_module(node.module if node.level == 0 else "", node)
        for alias in node.names:
            if alias.name in IO_ATTRIBUTES or alias.name in STRING_CODE_ATTRIBUTES or alias.name in FORBIDDEN_NAMES or alias.name in RAW_MEMORY_ATTRIBUTES:
                self.refuse(node, "import", "forbidden name imported: %s" % alias.name)
        self.check_imported_modules(node)
        if any(a.name == "*" for a in node.names):
            self.refuse(node, "import", "star imports are not allowed")
        for alias in node.names:
            if alias.name.startswith("_"):
                self.refuse(node, "private", "forbidden private name: %s" % alias.name)
        self.generic_visit(node)

    def check_imported_modules(self, node):
        if node.level != 0 or node.module not in ALLOWED_MODULES:
            return
        for alias in node.names:
            target = module_of(node.module, alias.name) if alias.name != "*" else None
            if target and target not in ALLOWED_MODULES:
                self.refuse(node, "module", "%s.%s is the module %s, which a tool may not reach" % (node.module, alias.name, target))
            if alias.name != "*" and metaclass_on(node.module, [alias.name])[0]:
                self.refuse(node, "metaclass", "%s.%s is a metaclass: it builds classes from a dict of any names" % (node.module, alias.name))

    def check_module_use(self, node):
        """A name bound to a module is only the root of an attribute chain, and the chain reaches no other module
        than an allowed one (typing.sys, dataclasses.builtins) and ends on something that is not a module."""
        outer, attrs = attribute_chain(node, self.parents)
        steps, meta = metaclass_on(self.modules[node.id], attrs)
        if meta:
            path = ".".join([node.id] + attrs[:steps])
            self.refuse(outer, "metaclass", "%s is a metaclass (%s): it builds classes from a dict of any names" % (path, meta))
        (steps, reached), ends_on_module = follow(self.modules[node.id], attrs)
        if reached:
            path = ".".join([node.id] + attrs[:steps])
            self.refuse(outer, "module", "%s is the module %s, which a tool may not reach" % (path, reached))
        elif not attrs or ends_on_module:
            what = ".".join([node.id] + attrs)
            self.refuse(outer, "module", "a module is used only through its attributes (np.random.rand), not as a value: %s" % what)

    def check_class_only(self, node, name):
        if name in CLASS_ONLY_NAMES and id(node) not in self.class_positions:
            self.refuse(node, "memory", "%s is named only as isinstance's or issubclass's class, typing.cast's type, .view's argument or in an annotation: called with a buffer it is an array over any bytes" % name)

    def visit_Name(self, node):
        self.check_class_only(node, node.id)
        if node.id in self.modules and isinstance(node.ctx, ast.Load):
            self.check_module_use(node)
        if node.id in FORBIDDEN_NAMES:
            self.refuse(node, "builtin", "forbidden builtin: %s" % node.id)
        elif node.id.startswith("__"):
            self.refuse(node, "private", "forbidden dunder name: %s" % node.id)
        self.generic_visit(node)

    def text_fromstring(self, node):
        """`np.fromstring(text, sep=" ")` parses numbers from text (an object dtype is refused by numpy there)."""
        call = self.parents.get(node)
        if node.attr != "fromstring" or not (isinstance(call, ast.Call) and call.func is node):
            return False
        sep = [k.value for k in call.keywords if k.arg == "sep"]
        return len(sep) == 1 and isinstance(sep[0], ast.Constant) and isinstance(sep[0].value, str) and sep[0].value != ""

    def check_attribute(self, node, attr):
        """The rules on an attribute name, read with `.attr` or by a class pattern (`case C(attr=x)`)."""
        if attr.startswith("_"):
            self.refuse(node, "private", "forbidden private attribute access: .%s" % attr)
        elif attr in IO_ATTRIBUTES:
            self.refuse(node, "io", "forbidden I/O-capable attribute: .%s" % attr)
        elif attr in RAW_MEMORY_ATTRIBUTES:
            self.refuse(node, "memory", "forbidden attribute that views raw memory: .%s" % attr)
        elif attr in FIELD_TYPE_ATTRIBUTES:
            self.refuse(node, "memory", "forbidden .%s: a dataclass field's type is the class it names (np.ndarray, callable over any bytes)" % attr)
        elif attr in REACH_ATTRIBUTES:
            self.refuse(node, "module", "forbidden attribute that reaches a module or a frame: .%s" % attr)
        elif attr in STRING_CODE_ATTRIBUTES and attr not in ("format", "format_map"):
            self.refuse(node, "string-code", "forbidden attribute that turns strings into code or attribute access: .%s" % attr)

    def visit_Attribute(self, node):
        if node.attr in ("format", "format_map") and not literal_format(node):
            self.refuse(node, "string-code", "forbidden .%s: allowed only on a string literal whose fields neither walk attributes nor index ('{}', '{0:.3f}', '{name!r}'; not '{0.attr}', '{0[k]}')" % node.attr)
        elif not self.text_fromstring(node):
            self.check_attribute(node, node.attr)
        self.check_class_only(node, node.attr)
        call = self.parents.get(node)
        if node.attr in BUFFER_WRITERS and not (isinstance(call, ast.Call) and call.func is node):
            self.refuse(node, "io", "forbidden .%s as a value: call it bare, it returns the text" % node.attr)
        self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in BUFFER_WRITERS and (node.args or any(k.arg in (None, "buf") for k in node.keywords)):
            self.refuse(node, "io", "forbidden .%s with a buffer or path: call it bare, it returns the text" % func.attr)
        self.generic_visit(node)

    def visit_MatchClass(self, node):
        """`case C(__globals__=g)` reads the attribute `__globals__` of the subject: the same rules as `.attr`;
        `format` too, since a class pattern hands out the bound method."""
        for attr in node.kwd_attrs:
            self.check_attribute(node, attr)
            if attr in ("format", "format_map") or attr in BUFFER_WRITERS:
                self.refuse(node, "string-code", "forbidden .%s read by a class pattern" % attr)
        self.generic_visit(node)

    def visit_FunctionDef(self, node):
        if node.name.startswith("__") and node.name not in ALLOWED_DUNDER_METHODS:
            self.refuse(node, "dunder", "a tool may not define %s: the interpreter or a library calls it by name (allowed: __init__, __repr__, comparisons, container and arithmetic methods)" % node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_arg(self, node):
        if node.arg in FORBIDDEN_NAMES or node.arg.startswith("__"):
            self.refuse(node, "builtin", "a parameter may not be named %s" % node.arg)
        self.generic_visit(node)

    def visit_Global(self, node):
        self.refuse(node, "scope", "global/nonlocal not allowed")

    visit_Nonlocal = visit_Global


def check(code):
    """Every problem of a generated tool's source; [] when it is accepted."""
    if not isinstance(code, str):
        return [{"line": 1, "col": 1, "rule": "size", "message": "the tool's code is not text"}]
    if len(code) > MAX_CODE_CHARS:
        return [{"line": 1, "col": 1, "rule": "size", "message": "code exceeds %d chars (%d)" % (MAX_CODE_CHARS, len(code))}]
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return [{"line": getattr(exc, "lineno", None) or 1, "col": getattr(exc, "offset", None) or 1, "rule": "syntax", "message": "syntax error: %s" % getattr(exc, "msg", exc)}]
    gate = Gate(tree)
    try:
        gate.visit(tree)
    except RecursionError:
        return [{"line": 1, "col": 1, "rule": "syntax", "message": "the code is nested too deeply"}]
    runs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run"]
    if len(runs) != 1 or any(isinstance(n, ast.AsyncFunctionDef) and n.name == "run" for n in tree.body):
        gate.refuse(tree.body[0] if tree.body else tree, "entry", "must define exactly one top-level `def run(ctx, args):`")
    else:
        params = [a.arg for a in runs[0].args.posonlyargs + runs[0].args.args]
        if params[:2] != ["ctx", "args"]:
            gate.refuse(runs[0], "entry", "run() signature must be (ctx, args)")
    unique = {(p["line"], p["col"], p["message"]): p for p in gate.problems}
    return sorted(unique.values(), key=lambda p: (p["line"], p["col"], p["message"]))


if __name__ == "__main__":
    request = json.loads(sys.stdin.read(1 << 20) or "{}")
    print(json.dumps(check(request.get("code"))))
