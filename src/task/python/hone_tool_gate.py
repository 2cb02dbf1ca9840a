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

from hone_tool_modules import ALLOWED_MODULES, follow, module_of

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
    "to_feather to_hdf to_sql to_clipboard to_html to_xml to_latex to_markdown to_stata to_orc".split()
)
# Routes from a string to code or to an attribute the AST never shows: format strings walk attributes
# ("{0.__class__}".format), annotation strings are evaluated (get_type_hints), pandas evaluates expressions,
# and numpy can load shared libraries. functools.singledispatch's `register` evaluates a function's annotation
# strings; dataclasses compiles source text from a class's annotation names, which TypedDict's functional form and
# functools.wraps / update_wrapper (copying __annotations__ from any object) make arbitrary strings.
STRING_CODE_ATTRIBUTES = frozenset(
    "format format_map Formatter get_type_hints ForwardRef eval query ctypeslib load_library f2py distutils io "
    "singledispatch singledispatchmethod register TypedDict wraps update_wrapper".split()
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


class Gate(ast.NodeVisitor):
    def __init__(self, tree):
        self.problems = []
        self.modules = module_bindings(tree)
        self.parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}

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
            if alias.name in IO_ATTRIBUTES or alias.name in STRING_CODE_ATTRIBUTES or alias.name in FORBIDDEN_NAMES:
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

    def check_module_use(self, node):
        """A name bound to a module is only the root of an attribute chain, and the chain reaches no other module
        than an allowed one (typing.sys, dataclasses.builtins) and ends on something that is not a module."""
        outer, attrs = attribute_chain(node, self.parents)
        (steps, reached), ends_on_module = follow(self.modules[node.id], attrs)
        if reached:
            path = ".".join([node.id] + attrs[:steps])
            self.refuse(outer, "module", "%s is the module %s, which a tool may not reach" % (path, reached))
        elif not attrs or ends_on_module:
            what = ".".join([node.id] + attrs)
            self.refuse(outer, "module", "a module is used only through its attributes (np.random.rand), not as a value: %s" % what)

    def visit_Name(self, node):
        if node.id in self.modules and isinstance(node.ctx, ast.Load):
            self.check_module_use(node)
        if node.id in FORBIDDEN_NAMES:
            self.refuse(node, "builtin", "forbidden builtin: %s" % node.id)
        elif node.id.startswith("__"):
            self.refuse(node, "private", "forbidden dunder name: %s" % node.id)
        self.generic_visit(node)

    def check_attribute(self, node, attr):
        """The rules on an attribute name, read with `.attr` or by a class pattern (`case C(attr=x)`)."""
        if attr.startswith("_"):
            self.refuse(node, "private", "forbidden private attribute access: .%s" % attr)
        elif attr in IO_ATTRIBUTES:
            self.refuse(node, "io", "forbidden I/O-capable attribute: .%s" % attr)
        elif attr in REACH_ATTRIBUTES:
            self.refuse(node, "module", "forbidden attribute that reaches a module or a frame: .%s" % attr)
        elif attr in STRING_CODE_ATTRIBUTES and attr not in ("format", "format_map"):
            self.refuse(node, "string-code", "forbidden attribute that turns strings into code or attribute access: .%s" % attr)

    def visit_Attribute(self, node):
        if node.attr in ("format", "format_map") and not literal_format(node):
            self.refuse(node, "string-code", "forbidden .%s: allowed only on a string literal whose fields neither walk attributes nor index ('{}', '{0:.3f}', '{name!r}'; not '{0.attr}', '{0[k]}')" % node.attr)
        else:
            self.check_attribute(node, node.attr)
        self.generic_visit(node)

    def visit_MatchClass(self, node):
        """`case C(__globals__=g)` reads the attribute `__globals__` of the subject: the same rules as `.attr`;
        `format` too, since a class pattern hands out the bound method."""
        for attr in node.kwd_attrs:
            self.check_attribute(node, attr)
            if attr in ("format", "format_map"):
                self.refuse(node, "string-code", "forbidden .%s read by a class pattern" % attr)
        self.generic_visit(node)

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
