"""Layers 2 and 3 of the reference gate (see reference_gate.py), as the text the child
Python runs before the program.

It defines `_refusal(source, shown)`, a diagnostic dict or None, and `_run_namespace()`,
the program's globals; it needs `_SURFACE` (language_surface()) defined first. Python's
`ast` positions are 1-based lines and 0-based UTF-8 byte columns.

The program's own classes (`class Net(nn.Module)`) carry attributes of its own choosing
(`self.fc = ...`, methods): such a name is allowed where the object is
the program's own: on a method's first parameter, on the class, or on a name bound to an
instance (`model = Net()`), and on attribute chains from those (`model.fc.weight` reads
`weight` under the usual rules, `fc` as the program's own).
"""

CHILD_GATE = r'''
import ast as _ast, builtins as _builtins, re as _re, string as _string


def _private(name):
    return name.startswith("_") and name not in _SURFACE["readable_dunders"]


_NODES = tuple(getattr(_ast, _n) for _n in (
    "Module", "Expr", "Assign", "AugAssign", "If", "While", "For", "Break", "Continue", "Pass",
    "FunctionDef", "arguments", "arg", "Return", "Assert", "With", "withitem", "Import",
    "alias", "BinOp", "UnaryOp", "BoolOp", "Compare", "IfExp", "Call", "keyword", "Attribute",
    "Subscript", "Slice", "Name", "Constant", "List", "Tuple", "JoinedStr", "FormattedValue",
    "expr_context", "operator", "unaryop", "boolop", "cmpop", "ImportFrom", "ClassDef",
    "Lambda", "ListComp", "SetComp", "DictComp", "GeneratorExp", "comprehension", "Dict",
    "Set", "Starred", "Try", "ExceptHandler", "Raise", "Delete", "Global", "Nonlocal", "Yield",
    "YieldFrom"))


def _existing_attributes():
    """Every attribute name of what a .tg program can reach in real PyTorch and Python."""
    if _EXISTING:
        return _EXISTING[0]
    import math, types
    reach = [math, list, tuple, str, bytes, int, float, complex, bool, type, range, enumerate,
             zip, type(None), type(len), type(_existing_attributes), type("".join), dict, set,
             frozenset, map, filter, reversed, type({}.items()), type({}.keys()),
             type({}.values()), type((i for i in ())), types.FrameType, types.CodeType,
             types.TracebackType, types.MethodType, BaseException, super, staticmethod,
             classmethod, property]
    try:
        import torch
    except ImportError:  # then no program can reach torch either
        torch = None
    if torch is not None:
        import torch.autograd.functional, torch.func, torch.nn.init, torch.optim
        with torch.enable_grad():  # a previous program of the batch may have turned it off
            node = torch.ones(1, requires_grad=True).sum().grad_fn
        reach += [torch, torch.nn, torch.nn.functional, torch.nn.init, torch.autograd,
                  torch.autograd.functional, torch.func, torch.optim, torch.optim.Optimizer,
                  torch.nn.Module, torch.nn.Parameter, torch.autograd.Function, torch.Tensor,
                  torch.Size, torch.dtype, torch.Generator, type(node),
                  type(node.next_functions[0][0]), type(torch.ones(2).max(0)), torch.no_grad,
                  torch.enable_grad, torch.set_grad_enabled, torch.inference_mode]
    try:
        import numpy
    except ImportError:
        numpy = None
    if numpy is not None:
        reach += [numpy, numpy.random, numpy.ndarray, numpy.generic, numpy.dtype,
                  numpy.float64, numpy.random.RandomState]
    _EXISTING.append(set().union(*(dir(o) for o in reach)))
    return _EXISTING[0]


_EXISTING = []


def _template_fields(template):
    for _, field, spec, _ in _string.Formatter().parse(template):
        if field is not None:
            yield field
            yield from _template_fields(spec or "")


def _root(node):
    """The name an attribute chain starts from (None: something else)."""
    while isinstance(node, _ast.Attribute):
        node = node.value
    return node.id if isinstance(node, _ast.Name) else None


class _Program:
    """Facts about the whole program that single nodes are checked against."""

    def __init__(self, tree):
        walk = list(_ast.walk(tree))
        classes = [n for n in walk if isinstance(n, _ast.ClassDef)]
        methods = [f for c in classes for f in c.body if isinstance(f, _ast.FunctionDef)]
        self.class_names = {c.name for c in classes}
        # `class A(object):`, the one place the language names Python's `object`
        self.object_bases = {id(b) for c in classes for b in c.bases
                             if isinstance(b, _ast.Name) and b.id == "object"}
        self.instances = {f.args.args[0].arg for f in methods if f.args.args}
        self.instances |= {t.id for n in walk if isinstance(n, _ast.Assign)
                           and isinstance(n.value, _ast.Call) and isinstance(n.value.func, _ast.Name)
                           and n.value.func.id in self.class_names
                           for t in n.targets if isinstance(t, _ast.Name)}
        self.own_attributes = {f.name for f in methods}
        self.own_attributes |= {n.attr for n in walk if isinstance(n, _ast.Attribute)
                                and isinstance(n.ctx, _ast.Store) and _root(n) in self.instances}
        self.init_methods = {id(f) for f in methods if f.name in _SURFACE["protocol_methods"]}
        # .tg has yield statements only: a yield anywhere else is read otherwise by autodiff
        self.yield_statements = {id(n.value) for n in walk if isinstance(n, _ast.Expr)
                                 and isinstance(n.value, (_ast.Yield, _ast.YieldFrom))}
        self.from_imports = {id(a): n.module for n in walk if isinstance(n, _ast.ImportFrom)
                             for a in n.names}
        self.bound = {n.id for n in walk if isinstance(n, _ast.Name) and not isinstance(n.ctx, _ast.Load)}
        self.bound |= {n.arg for n in walk if isinstance(n, _ast.arg)}
        self.bound |= {n.name for n in walk if isinstance(n, (_ast.FunctionDef, _ast.ClassDef))}
        self.bound |= {n.name for n in walk if isinstance(n, _ast.ExceptHandler) and n.name}
        self.bound |= {(a.asname or a.name).split(".")[0] for a in walk if isinstance(a, _ast.alias)}

    def owns(self, node):
        """An attribute of the program's own objects (see the module docstring)."""
        root = _root(node)
        return node.attr in self.own_attributes and (root in self.instances or root in self.class_names)


def _refusal(source, shown):
    try:
        tree = _ast.parse(source, shown)
    except (SyntaxError, ValueError):
        return None  # compiling fails the same way: nothing runs
    lines = _re.split(r"\r\n|\r|\n", source)  # Python's line ends, no others
    surface = {"readable": set(_SURFACE["readable"]), "writable": set(_SURFACE["writable"]),
               "outside": set(dir(_builtins)) - set(_SURFACE["builtins"]),
               "modules": set(_SURFACE["modules"])}
    program = _Program(tree)

    def at(node, message, name=None):
        """The diagnostic at `node` (at its last `name` characters: an attribute)."""
        line = getattr(node, "end_lineno" if name else "lineno", None) or 1
        text = lines[line - 1].encode() if line <= len(lines) else b""

        def column(offset):  # a UTF-8 byte offset, as a 0-based character column
            return len(text[:offset].decode(errors="replace"))

        if name:
            end = column(node.end_col_offset)
            start = end - len(name)
        else:
            start = column(getattr(node, "col_offset", 0))
            one_line = getattr(node, "end_lineno", None) == line
            end = column(node.end_col_offset) if one_line else len(text)
        return {"line": line, "col": start + 1, "end_col": max(end, start + 1) + 1,
                "message": message}

    found = [problem for node in _ast.walk(tree)
             for problem in [_problem(node, at, surface, program)] if problem]
    return min(found, key=lambda d: (d["line"], d["col"])) if found else None


def _import_problem(node, at, surface, program):
    """An import: of a module of the language, of names the language has."""
    module = program.from_imports.get(id(node))
    if module is None:
        if node.name not in surface["modules"]:
            return at(node, f"import of '{node.name}' is not part of .tg programs")
        return None
    if module not in surface["modules"]:
        return at(node, f"import of '{module}' is not part of .tg programs")
    if node.name == "*" and module != "math":
        return at(node, f"'from {module} import *' is not part of .tg programs")
    if node.name != "*" and node.name not in surface["readable"] \
            and f"{module}.{node.name}" not in surface["modules"]:
        return at(node, f"'{node.name}' is not part of the .tg language's '{module}'")
    return None


def _problem(node, at, surface, program):
    """What is wrong with one node of the program as CPython reads it (None: nothing)."""
    if not isinstance(node, _NODES) or (isinstance(node, (_ast.Yield, _ast.YieldFrom))
                                        and id(node) not in program.yield_statements):
        return at(node, f"Python reads this text as {type(node).__name__}, which is not a "
                        ".tg construct (autodiff's parser reads it otherwise)")
    if isinstance(node, _ast.Name):
        names = [node.id]
    elif isinstance(node, _ast.Attribute):
        is_super_init = (node.attr == "__init__" and isinstance(node.value, _ast.Call)
                         and isinstance(node.value.func, _ast.Name) and node.value.func.id == "super")
        names = [] if is_super_init else [node.attr]
    elif isinstance(node, (_ast.keyword, _ast.arg)):
        names = [getattr(node, "arg", None) or ""]
    elif isinstance(node, (_ast.FunctionDef, _ast.ClassDef)):
        names = [] if id(node) in program.init_methods else [node.name]
    elif isinstance(node, _ast.ExceptHandler):
        names = [node.name or ""]
    elif isinstance(node, (_ast.Global, _ast.Nonlocal)):
        names = list(node.names)
    elif isinstance(node, _ast.alias):
        problem = _import_problem(node, at, surface, program)
        if problem:
            return problem
        names = node.name.split(".") + [node.asname or ""]
    else:
        names = []
    variable = isinstance(node, (_ast.Name, _ast.arg, _ast.FunctionDef, _ast.ExceptHandler,
                                 _ast.Global, _ast.Nonlocal))
    for name in names:
        if _private(name) and not (variable and not name.startswith("__")):
            return at(node, f"'{name}' starts with '_': no .tg name does",
                      name if isinstance(node, _ast.Attribute) else None)
    if isinstance(node, _ast.Name) and node.id in surface["outside"] and node.id not in program.bound \
            and id(node) not in program.object_bases:
        return at(node, f"'{node.id}' is Python's own builtin, not part of the .tg language")
    if isinstance(node, _ast.Call) and isinstance(node.func, _ast.Name) and node.func.id == "type" \
            and len(node.args) + len(node.keywords) != 1:
        return at(node, "type() with other than one argument is not part of the .tg language")
    if not isinstance(node, _ast.Attribute) or not names:
        return None
    attr = node.attr
    if program.owns(node):
        return None
    if not isinstance(node.ctx, _ast.Load) and attr not in surface["writable"]:
        return at(node, f"setting attribute '{attr}' is not part of .tg programs", attr)
    if attr not in surface["readable"] and attr in _existing_attributes():
        return at(node, f"attribute '{attr}' is not part of the .tg language", attr)
    if attr == "format":
        template = node.value
        if not (isinstance(template, _ast.Constant) and isinstance(template.value, str)):
            return at(node, "str.format is allowed only on a string literal here", attr)
        try:
            fields = list(_template_fields(template.value))
        except ValueError:
            fields = []  # a malformed template fails as it does in autodiff
        for field in fields:
            if "." in field or "[" in field:
                return at(template, f"format field '{field}': attribute and index "
                                    "lookups are not part of .tg programs")
    return None


def _run_namespace():
    """A fresh `__main__` whose builtins are the language's own, `__import__` and
    `__build_class__`: the import and class statements need them (and torch's C code
    imports through the builtins of the frame it runs in); no program can name them, and
    the checks above limit the imports and classes. `object` too, which the checks admit
    only as a class's base (`class A(object):`)."""
    names = {n: getattr(_builtins, n) for n in _SURFACE["builtins"] + ["__import__", "__build_class__",
                                                                      "object"]}
    return {"__name__": "__main__", "__builtins__": names}
'''
