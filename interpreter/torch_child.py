"""The torch reference's child process: runs .tg program text as real Python with PyTorch.

This file is a script, run by whichever Python has torch (`--torch-python`), and imports
nothing of autodiff. The parent (reference.py) gives it the jobs, the language's surface
(reference_gate.language_surface) and a pipe for results. A program runs only inside three
walls, each of which would stop the escapes the others miss:

1. **The allow-list** (`refusal`), on the text as CPython parses it, before anything runs:
   only .tg constructs; names are the language's builtins, its modules or the program's own
   variables; every attribute name is one the language has, or one the program sets on its
   own objects (`self.fc`); `type` and `str.format` only in their harmless forms.
2. **Every attribute access checked at run time** (`Guard`): the text is compiled with each
   `a.b` turned into a call that looks at the object itself. A module answers only the
   names the language has for that module (`torch.ones`, never `torch.os`); a name the
   program chose (`self.os`) is read only from the program's own objects, never through a
   class that is not the program's; a value that is a module, a frame or a host function is
   never handed out. This is what a static gate cannot know: which object `self` is.
3. **The process itself**: an audit hook (`arm`) that ends the child at once on process
   creation, a file opened for writing or outside the Python installation, sockets,
   ctypes, or an import outside torch and NumPy; resource limits (address space, CPU time,
   file size 0, no core files); an empty working folder and a scrubbed environment (the
   parent's part).

Each program runs in a process forked for it (`run_apart`) from one that imported torch
once: the walls go up in that process only, and a stop ends it with `os._exit`, so no
`try` of the program can catch it and the next program starts afresh. Results: one JSON
line per job.
Python's `ast` positions are 1-based lines and 0-based UTF-8 byte columns.
"""

import ast
import builtins
import errno
import importlib.machinery
import importlib.util
import inspect
import io
import json
import linecache
import os
import re
import signal
import string
import sys
import traceback
import types
import unicodedata  # noqa: F401 - CPython's parser loads it for a non-ASCII name
import warnings

REFUSED_EXIT = 4  # a refusal or a stop, written to the result pipe before exiting
PROGRAM_NAMES = ("__tg_get__", "__tg_set__", "__tg_update__", "__tg_del__")

# the .tg constructs as CPython's ast names them
NODES = tuple(getattr(ast, n) for n in (
    "Module", "Expr", "Assign", "AnnAssign", "AugAssign", "If", "While", "For", "Break", "Continue", "Pass",
    "FunctionDef", "arguments", "arg", "Return", "Assert", "With", "withitem", "Import",
    "alias", "BinOp", "UnaryOp", "BoolOp", "Compare", "IfExp", "Call", "keyword", "Attribute",
    "Subscript", "Slice", "Name", "Constant", "List", "Tuple", "JoinedStr", "FormattedValue",
    "expr_context", "operator", "unaryop", "boolop", "cmpop", "ImportFrom", "ClassDef",
    "Lambda", "ListComp", "SetComp", "DictComp", "GeneratorExp", "comprehension", "Dict",
    "Set", "Starred", "Try", "ExceptHandler", "Raise", "Delete", "Global", "Nonlocal", "Yield",
    "YieldFrom"))

# What a program may never be handed, whatever the attribute's name: host modules' functions
# (the allow-list already keeps their modules out; this is the second look)
HOST_MODULES = frozenset({
    "os", "posix", "nt", "subprocess", "_posixsubprocess", "sys", "shutil", "socket", "_socket",
    "io", "_io", "pathlib", "ctypes", "_ctypes", "pty", "signal", "importlib", "_imp",
    "marshal", "pickle", "_pickle", "gc", "inspect", "code", "codeop", "runpy", "tempfile",
    "glob", "fcntl", "mmap", "multiprocessing", "_multiprocessing", "threading", "_thread",
    "webbrowser", "urllib", "http", "ftplib", "smtplib", "sqlite3", "shelve", "dbm", "zipfile",
    "tarfile", "resource", "select", "selectors", "asyncio", "pdb", "bdb", "trace", "pydoc",
    "builtins", "linecache", "tokenize", "zipimport", "faulthandler", "atexit", "site"})
FRAME_TYPES = (types.FrameType, types.CodeType, types.TracebackType)
# the functions of `sys` the language has (interpreter/stdlib/system.py): what they reach is
# the child's own process alone
SYS_FUNCTIONS = frozenset({"exit", "getrecursionlimit", "setrecursionlimit", "getdefaultencoding"})


# --- 1. the allow-list, on the text as CPython reads it ---------------------------------

def program_namedtuple_field(cls, name):
    """A field of a namedtuple class the program made (its module is the program's)."""
    fields = cls.__dict__.get("_fields")
    return cls.__module__ == "__main__" and issubclass(cls, tuple) and \
        isinstance(fields, tuple) and name in fields


class Program:
    """Facts about the whole program that single nodes are checked against."""

    def __init__(self, tree, surface):
        self.misspellings = False
        walk = list(ast.walk(tree))
        classes = [n for n in walk if isinstance(n, ast.ClassDef)]
        methods = [f for c in classes for f in c.body if isinstance(f, ast.FunctionDef)]
        self.class_names = {c.name for c in classes}
        # `class A(object):`, the one place the language names Python's `object`
        self.object_bases = {id(b) for c in classes for b in c.bases
                             if isinstance(b, ast.Name) and b.id == "object"}
        self.instances = {f.args.args[0].arg for f in methods if f.args.args}
        self.instances |= {t.id for n in walk if isinstance(n, ast.Assign)
                           and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name)
                           and n.value.func.id in self.class_names
                           for t in n.targets if isinstance(t, ast.Name)}
        # names the program gives its own objects: its classes' members, what it sets on them
        self.own_attributes = {f.name for f in methods}
        self.own_attributes |= {t.id for c in classes for n in c.body if isinstance(n, ast.Assign)
                                for t in n.targets if isinstance(t, ast.Name)}
        self.own_attributes |= {n.target.id for c in classes for n in c.body
                                if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        self.own_attributes |= {n.attr for n in walk if isinstance(n, ast.Attribute)
                                and not isinstance(n.ctx, ast.Load) and root(n) in self.instances}
        # names it may read from its objects: those, and any name it spells out
        # (`net._modules['fc'] = ...`, `OrderedDict([('fc1', ...)])`); the guard then looks
        # at the object itself
        self.chosen_names = self.own_attributes | {
            n.attr for n in walk if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load)}
        self.chosen_names |= {n.value for n in walk if isinstance(n, ast.Constant)
                              and isinstance(n.value, str) and n.value.isidentifier()}
        self.protocol_methods = {id(f) for f in methods if f.name in surface["protocol_methods"]}
        # .tg has yield statements only: a yield anywhere else is read otherwise by autodiff
        self.yield_statements = {id(n.value) for n in walk if isinstance(n, ast.Expr)
                                 and isinstance(n.value, (ast.Yield, ast.YieldFrom))}
        self.from_imports = {id(a): n.module for n in walk if isinstance(n, ast.ImportFrom)
                             for a in n.names}
        # `type(x)` is the one form of `type`: never a name to pass around or call otherwise
        self.type_calls = {id(n.func) for n in walk if isinstance(n, ast.Call)
                           and isinstance(n.func, ast.Name) and n.func.id == "type"}
        # `@staticmethod` on a method, its one use in the language
        self.method_decorators = {id(d) for f in methods for d in f.decorator_list}
        self.bound = {n.id for n in walk if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        self.bound |= {n.arg for n in walk if isinstance(n, ast.arg)}
        self.bound |= {n.name for n in walk if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        self.bound |= {n.name for n in walk if isinstance(n, ast.ExceptHandler) and n.name}
        self.bound |= {(a.asname or a.name).split(".")[0] for a in walk if isinstance(a, ast.alias)}

    def owns(self, node):
        """An attribute set on, or read from, what is syntactically the program's own object."""
        return node.attr in self.own_attributes and (root(node) in self.instances
                                                     or root(node) in self.class_names)


def root(node):
    """The name an attribute chain starts from (None: something else)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


class Located:
    """Diagnostics at a node of one program's text."""

    def __init__(self, source):
        self.lines = re.split(r"\r\n|\r|\n", source)  # Python's line ends, no others

    def at(self, node, message, name=None):
        """The diagnostic at `node` (at its last `name` characters: an attribute)."""
        line = getattr(node, "end_lineno" if name else "lineno", None) or 1
        text = self.lines[line - 1].encode() if line <= len(self.lines) else b""

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

    def line(self, line, message):
        """The diagnostic at a whole line (0: none known)."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        start = len(text) - len(text.lstrip())
        return {"line": line, "col": start + 1, "end_col": max(len(text), start + 1) + 1,
                "message": message}


def refusal(tree, located, surface, misspellings=False):
    """(The first thing of the program outside the language as a diagnostic, or None; the
    facts about the program). With `misspellings`, an attribute name outside the language is
    left to the guard, which lets it fail where nothing has it."""
    program = Program(tree, surface)
    program.misspellings = misspellings
    found = [problem for node in ast.walk(tree)
             for problem in [node_problem(node, located.at, surface, program)] if problem]
    return (min(found, key=lambda d: (d["line"], d["col"])) if found else None), program


def private(name, surface):
    return name.startswith("_") and name not in surface["readable_dunders"]


def saved_names(surface):
    """Every catalogued `_saved_*` name, of any grad_fn class."""
    found = surface.get("saved_set")
    if found is None:
        found = surface["saved_set"] = frozenset(
            name for names in surface["saved_names"].values() for name in names)
    return found


def saved_read(node, name, surface):
    """`a._saved_self` read (never set or deleted): the one '_' attribute the text may have;
    the guard lets it through only on a grad_fn node (Guard.saved)."""
    return isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) \
        and name in saved_names(surface)


def template_fields(template):
    for _, field, spec, _ in string.Formatter().parse(template):
        if field is not None:
            yield field
            yield from template_fields(spec or "")


def import_problem(node, at, surface, program):
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
    if node.name != "*" and node.name not in surface["module_names"].get(module, ()) \
            and f"{module}.{node.name}" not in surface["modules"]:
        return at(node, f"'{node.name}' is not part of the .tg language's '{module}'")
    return None


def node_names(node, program, at, surface):
    """(names the node introduces or reads, a problem found on the way)."""
    if isinstance(node, ast.Name):
        return [node.id], None
    if isinstance(node, ast.Attribute):
        is_super_init = (node.attr == "__init__" and isinstance(node.value, ast.Call)
                         and isinstance(node.value.func, ast.Name) and node.value.func.id == "super")
        return ([] if is_super_init else [node.attr]), None
    if isinstance(node, (ast.keyword, ast.arg)):
        return [getattr(node, "arg", None) or ""], None
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return ([] if id(node) in program.protocol_methods else [node.name]), None
    if isinstance(node, ast.ExceptHandler):
        return [node.name or ""], None
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names), None
    if isinstance(node, ast.alias):
        return node.name.split(".") + [node.asname or ""], import_problem(node, at, surface, program)
    return [], None


def node_problem(node, at, surface, program):
    """What is wrong with one node of the program as CPython reads it (None: nothing)."""
    if not isinstance(node, NODES) or (isinstance(node, (ast.Yield, ast.YieldFrom))
                                       and id(node) not in program.yield_statements):
        return at(node, f"Python reads this text as {type(node).__name__}, which is not a "
                        ".tg construct (autodiff's parser reads it otherwise)")
    if isinstance(node, ast.ClassDef) and (node.keywords or node.decorator_list):
        return at(node, "a class with keywords or decorators is not part of the .tg language")
    names, problem = node_names(node, program, at, surface)
    if problem:
        return problem
    variable = isinstance(node, (ast.Name, ast.arg, ast.FunctionDef, ast.ExceptHandler,
                                 ast.Global, ast.Nonlocal))
    for name in names:
        if private(name, surface) and not (variable and not name.startswith("__")) \
                and not saved_read(node, name, surface):
            return at(node, f"'{name}' starts with '_': no .tg name does",
                      name if isinstance(node, ast.Attribute) else None)
    if isinstance(node, ast.Name) and node.id not in program.bound:
        # any other name is a NameError: the program's builtins are the language's alone
        if hasattr(builtins, node.id) and node.id not in surface["builtins"] \
                and id(node) not in program.object_bases:
            return at(node, f"'{node.id}' is Python's own builtin, not part of the .tg language")
        if node.id == "type" and id(node) not in program.type_calls:
            return at(node, "type is part of the .tg language only as type(x)")
        if node.id == "staticmethod" and id(node) not in program.method_decorators:
            return at(node, "staticmethod is part of the .tg language only as a method's "
                            "decorator")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type" \
            and "type" not in program.bound and (len(node.args) != 1 or node.keywords
                                                 or isinstance(node.args[0], ast.Starred)):
        return at(node, "type() with other than one argument is not part of the .tg language")
    if not isinstance(node, ast.Attribute) or not names:
        return None
    attr = node.attr
    if not isinstance(node.ctx, ast.Load):
        if attr in surface["writable"] or (program.owns(node) and attr not in surface["readable_dunders"]):
            return None
        return at(node, f"setting attribute '{attr}' is not part of .tg programs", attr)
    if attr not in surface["readable"] and attr not in program.chosen_names \
            and not program.misspellings and not saved_read(node, attr, surface):
        return at(node, f"attribute '{attr}' is not part of the .tg language (autodiff run "
                        "says what PyTorch says of it)", attr)
    if attr == "format":
        template = node.value
        if not (isinstance(template, ast.Constant) and isinstance(template.value, str)):
            return at(node, "str.format is allowed only on a string literal here", attr)
        try:
            fields = list(template_fields(template.value))
        except ValueError:
            fields = []  # a malformed template fails as it does in autodiff
        for field in fields:
            if "." in field or "[" in field:
                return at(template, f"format field '{field}': attribute and index "
                                    "lookups are not part of .tg programs")
    return None


# --- 2. every attribute access, checked on the object at run time -----------------------

class Guarded(ast.NodeTransformer):
    """`a.b` becomes `__tg_get__(a, 'b', site)`; `a.b = v` sets through `__tg_set__(a, ...)`."""

    def __init__(self):
        self.sites = []

    def _site(self, node):
        self.sites.append(node)
        return ast.Constant(len(self.sites) - 1)

    def _checked(self, guard, node):
        return ast.copy_location(ast.Call(ast.Name(guard, ast.Load()),
                                          [node.value, ast.Constant(node.attr), self._site(node)],
                                          []), node.value)

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load):
            return ast.copy_location(self._checked("__tg_get__", node), node)
        node.value = self._checked("__tg_set__" if isinstance(node.ctx, ast.Store)
                                   else "__tg_del__", node)
        return node

    def visit_AugAssign(self, node):
        node.value = self.visit(node.value)
        if isinstance(node.target, ast.Attribute):
            target = node.target
            target.value = self.visit(target.value)
            target.value = self._checked("__tg_update__", target)
        else:
            node.target = self.visit(node.target)
        return node


class Guard:
    """The run-time half of the allow-list, for one program (see the module docstring)."""

    def __init__(self, surface, modules, classes, own_names, sites, located, stop):
        self.readable = frozenset(surface["readable"])
        self.type_names = classes  # real class -> the names the language has for it
        self.names_of_type = {}  # type(obj) -> the names its objects answer (a cache)
        self.names_of_class = {}  # a class -> the names the class object answers
        self.writable = frozenset(surface["writable"])
        self.fixed = frozenset(surface["readable_dunders"])  # readable, never assigned
        self.modules = modules  # id(real module) -> the names the language has for it
        self.own = frozenset(own_names)
        self.sites, self.located, self.stop = sites, located, stop
        self.classes = set()  # the classes the program made
        self.contexts = ()  # torch's ctx of a custom Function: holds the program's attributes
        self.torch_module = ()  # torch.nn.Module: its registries hold the program's names
        self.node = ()  # torch.autograd.graph.Node: grad_fn objects are its virtual subclasses
        # grad_fn class name -> its catalogued `_saved_*` names; any of them, on any node
        self.saved_of = {k: frozenset(v) for k, v in surface["saved_names"].items()}
        self.saved_any = saved_names(surface)
        self.misspellings = False  # let a name nothing has fail as in Python (trusted programs)
        self.stop_here = None  # a stop at the running line: for a name given as a string
        self.forbidden = {id(getattr(builtins, n)) for n in dir(builtins)
                          if n not in surface["builtins"] and callable(getattr(builtins, n))}
        self.forbidden.add(id(builtins.open))  # (the program's `open` is the run's files')

    def refuse(self, site, message, name):
        if site is None:  # getattr(obj, name): no attribute node to point at
            self.stop_here(message)
        self.stop(self.located.at(self.sites[site], message, name))

    def _program_object(self, obj):
        return isinstance(obj, self.contexts) or any(c in self.classes for c in type(obj).__mro__)

    def _own(self, obj, name):
        """A name the program chose, read from its own object: a member of one of its classes
        (never of a class that is not the program's: torch's `nn.Module` has many the
        language leaves out), or an instance's own attribute, or an `nn.Module`'s registered
        submodule, parameter or buffer (`seq.fc1`)."""
        if name not in self.own:
            return False
        if isinstance(obj, super):  # the classes after the one `super()` was called in
            mro = obj.__self_class__.__mro__
            return any(name in cls.__dict__ and cls in self.classes
                       for cls in mro[mro.index(obj.__thisclass__) + 1:])
        if isinstance(obj, type) and obj not in self.classes:
            return False
        for cls in (obj.__mro__ if isinstance(obj, type) else type(obj).__mro__):
            if name in cls.__dict__:
                return cls in self.classes or program_namedtuple_field(cls, name)
        if isinstance(obj, type) or self._program_object(obj):
            return True  # its own attribute, or an AttributeError as Python gives it
        if isinstance(obj, self.torch_module):
            held = vars(obj)
            return any(name in held.get(r, ()) for r in ("_modules", "_parameters", "_buffers"))
        return False

    def _handed_out(self, value, site, name):
        """The value an attribute gives, unless it is one no program may hold."""
        if isinstance(value, types.ModuleType):
            if id(value) not in self.modules:
                self.refuse(site, f"module '{value.__name__}' is not part of the .tg language", name)
        elif isinstance(value, FRAME_TYPES) or id(value) in self.forbidden:
            self.refuse(site, f"attribute '{name}' gives what .tg programs cannot hold", name)
        elif callable(value) and not isinstance(value, BuiltinFunction):  # (the child's own)
            owner = getattr(value, "__self__", None)
            module = owner.__name__ if isinstance(owner, types.ModuleType) else \
                getattr(value, "__module__", None)
            if isinstance(module, str) and module.split(".")[0] in HOST_MODULES:
                self.refuse(site, f"attribute '{name}' is a function of Python's '{module}', "
                                  "not part of the .tg language", name)
        return value

    def names(self, obj):
        """The names the language lets `obj` answer: those of the engine class its class
        stands for (all of them along its bases), else any name the language has."""
        if isinstance(obj, type):
            cache, kind, mro = self.names_of_class, obj, obj.__mro__
        else:
            cache, kind = self.names_of_type, type(obj)
            mro = kind.__mro__ + ((self.node,) if isinstance(obj, self.node) else ())
        names = cache.get(kind)
        if names is None:
            mapped = [self.type_names[c] for c in mro if c in self.type_names]
            names = cache[kind] = frozenset().union(*mapped) if mapped else self.readable
        return names

    def saved(self, obj, name):
        """A catalogued `_saved_*` name on a grad_fn node: one its class has (a tensor, a
        shape, a parameter), or one nothing of the node has (torch's AttributeError)."""
        return name in self.saved_any and isinstance(obj, self.node) \
            and not isinstance(obj, type) and (
                name in self.saved_of.get(type(obj).__name__, ()) or absent(obj, name))

    def get(self, obj, name, site):
        if name.startswith("_saved_"):
            if not self.saved(obj, name):
                self.refuse(site, f"attribute '{name}' of this object is not part of the .tg "
                                  "language", name)
            return self._handed_out(getattr(obj, name), site, name)
        if name == "__class__":  # what the program's `type(x)` gives
            kind = type(obj)
            if issubclass(kind, type) or isinstance(obj, super):  # (`super` makes no calls here)
                self.refuse(site, f"the class of {'super()' if isinstance(obj, super) else 'a class'} "
                                  "is not part of the .tg language", name)
            return kind
        if isinstance(obj, types.ModuleType):
            names = self.modules.get(id(obj))
            if names is None or (name not in names and name != "__name__"):
                self._outside(obj, name, site, f"attribute '{name}' of module '{obj.__name__}' "
                                                "is not part of the .tg language")
        elif name not in self.names(obj) and name not in self.fixed and not self._own(obj, name) \
                and not (name == "__init__" and isinstance(obj, super)
                         and obj.__thisclass__ in self.classes):
            self._outside(obj, name, site, f"attribute '{name}' of this object is not part of "
                                           "the .tg language")
        if obj is sys and name in SYS_FUNCTIONS:
            return getattr(obj, name)  # the language's own functions of `sys`
        return self._handed_out(getattr(obj, name), site, name)

    def _outside(self, obj, name, site, message):
        """A name outside the language: refused, but for a misspelling under `misspellings`
        (nothing has the name: Python's own AttributeError, and nothing is handed out)."""
        if (self.misspellings or site is None) and absent(obj, name):
            getattr(obj, name)  # Python's AttributeError, unless a `__getattr__` finds it
        self.refuse(site, message, name)

    def set(self, obj, name, site):
        """Writes: a tensor's `grad`, `data`, `requires_grad`, a flag of `torch.backends.cudnn`;
        a name the program chose, on an instance of its own (never a method, never on a
        class, never a registry)."""
        if isinstance(obj, types.ModuleType):  # a flag the language has there (cudnn's)
            if not (name in self.writable and name in self.modules.get(id(obj), ())):
                self.refuse(site, f"setting attribute '{name}' of module '{obj.__name__}' is "
                                  "not part of .tg programs", name)
            return obj
        if isinstance(obj, type) or name in self.fixed or not (
                name in self.writable and name in self.names(obj)
                or self._program_object(obj) and self._own(obj, name)
                and not any(callable(cls.__dict__.get(name)) for cls in type(obj).__mro__)):
            self.refuse(site, f"setting attribute '{name}' of this object is not part of .tg "
                              "programs", name)
        return obj

    def delete(self, obj, name, site):
        """`del obj.name`: a name the program set on an instance of its own."""
        if isinstance(obj, (types.ModuleType, type)) or name in self.fixed or not (
                self._program_object(obj) and self._own(obj, name)
                and not any(name in cls.__dict__ for cls in type(obj).__mro__)):
            self.refuse(site, f"deleting attribute '{name}' of this object is not part of .tg "
                              "programs", name)
        return obj

    def update(self, obj, name, site):
        self.get(obj, name, site)
        return self.set(obj, name, site)


def absent(obj, name):
    """Nothing has the name: not the object, not its class, without running any code of theirs."""
    if isinstance(obj, types.ModuleType):
        return name not in vars(obj)
    return inspect.getattr_static(obj, name, absent) is absent


# --- 3. the process: limits and the audit hook ------------------------------------------

def address_space_in_use():
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def set_limits(limits):
    """What the kernel enforces whatever Python does: the program's memory on top of what
    torch's own libraries map, CPU seconds, no file written (size 0), no core file."""
    try:
        import resource
    except ImportError:  # not a POSIX system: the audit hook is the only wall
        return
    tight = [(resource.RLIMIT_FSIZE, 0), (resource.RLIMIT_CORE, 0)]
    if limits.get("max_memory"):
        tight.append((resource.RLIMIT_AS, address_space_in_use() + limits["max_memory"]
                      + limits.get("slack", 0)))
    if limits.get("cpu_seconds"):
        tight.append((resource.RLIMIT_CPU, int(limits["cpu_seconds"]) + 1))
    for which, value in tight:
        hard = resource.getrlimit(which)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))


# every process-making, file-changing, network and foreign-code event the audit hook stops
STOPPED_EVENTS = frozenset({
    "os.system", "os.fork", "os.forkpty", "os.kill", "os.killpg", "os.remove", "os.rename",
    "os.rmdir", "os.chmod", "os.chown", "os.link", "os.symlink", "os.truncate",
    "os.utime", "os.chdir", "os.chflags", "os.lchflags",
    "os.setxattr", "os.removexattr", "os.startfile", "pty.spawn", "shutil.copyfile",
    "shutil.copymode", "shutil.copystat", "shutil.copytree", "shutil.move", "shutil.rmtree",
    "shutil.make_archive", "shutil.unpack_archive", "shutil.chown", "webbrowser.open",
    "urllib.Request", "sqlite3.connect", "mmap.__new__", "resource.setrlimit",
    "resource.prlimit", "sys.settrace", "sys.setprofile", "sys.remote_exec",
    "pickle.find_class", "code.__new__", "function.__new__",
    "cpython.run_command", "cpython.run_file", "cpython.run_module", "cpython.run_startup",
    "cpython.run_interactivehook"})
STOPPED_PREFIXES = ("os.exec", "os.spawn", "os.posix_spawn", "subprocess.", "socket.",
                    "ctypes.", "winreg.", "_winapi.", "msvcrt.", "os.add_dll_directory")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def installed(name, roots):
    """A module of the Python installation (or none at all), and not one of HOST_MODULES:
    torch and its libraries load hundreds of modules on first use (a first backward with a
    gradient loads sympy; which optional ones depends on the machine)."""
    if name in HOST_MODULES:
        return False
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin in ("built-in", "frozen"):
        return True
    where = spec.origin or next(iter(spec.submodule_search_locations or ()), "")
    real = os.path.realpath(where)
    return any(real.startswith(root + os.sep) for root in roots)


def within(path, root):
    real = os.path.realpath(os.fsdecode(path))
    return bool(root) and (real == root or real.startswith(root + os.sep))


def arm(stop, readable_roots, importable):
    """Install the audit hook: from now on the events above end the child (`stop(why)`)."""
    state = {"inside": False}
    scratch = os.path.realpath(os.environ.get("TMPDIR", "")) if os.environ.get("TMPDIR") else ""

    def hook(event, args):
        if state["inside"]:
            return
        state["inside"] = True
        try:
            why = stopped(event, args)
        finally:
            state["inside"] = False
        if why:
            stop(f"the program tried to {why} ({event}); the reference run ended there")

    def inside(path, default):
        """Is `path` in the Python installation (a folder listing's None: the current one)?"""
        return any(within(default if path is None else path, root) for root in readable_roots)

    def stopped(event, args):
        if event in STOPPED_EVENTS or event.startswith(STOPPED_PREFIXES):
            return "reach the host system"
        if event == "os.mkdir":  # torch's cache folders, in the child's own home (deleted after)
            return None if within(args[0], scratch) else "make a folder"
        if event in ("os.listdir", "os.scandir", "glob.glob", "glob.glob/2"):
            return None if inside(args[0], "") else "list a folder outside the Python installation"
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int):  # an already open descriptor: nothing new reached
                return None
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                (isinstance(flags, int) and flags & WRITE_FLAGS)
            if writing:
                return "write a file"
            if not inside(path, None):
                return "read a file outside the Python installation"
        elif event == "import":
            name = args[0]
            top = name.partition(".")[0]
            # torch's and NumPy's packages, a package already loaded, a module of the
            # installation that reaches nothing of the host, or one not there at all (an
            # optional one a library tries), which fails as in Python
            if not (top in importable or top in sys.modules or installed(top, readable_roots)):
                return f"import '{name}'"
        return None

    sys.addaudithook(hook)


# --- the run's files: in memory, as autodiff's ------------------------------------------

VIRTUAL_MODULES = ("os", "os.path")
IMPORT_NAME = __import__("dis").opmap["IMPORT_NAME"]


def load_files_module(path):
    """autodiff's engine/core/files.py (standard library only), loaded before any wall is up."""
    spec = importlib.util.spec_from_file_location("tg_files", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def virtual_files(files, surface, torch):
    """A fresh in-memory file system for one program, as autodiff gives each run: the
    program's `open`, modules standing for `os` and `os.path` (the names the language has
    there, each on these files), and torch.save/torch.load reading and writing them through
    torch's own file-like path. Returns (open, {module path: module})."""
    fs = files.FileSystem()

    def named(name, method, builtin=False):  # printed as Python's own function of that name
        def call(*args, **kwargs):
            return method(*args, **kwargs)
        call.__name__ = call.__qualname__ = name
        return BuiltinFunction(call) if builtin else call

    def never(p):
        files.fspath(p)
        return False
    path = types.ModuleType("posixpath")
    path.__dict__.update(files.PURE_PATH, **files.PATH_CONSTANTS)
    for name in ("exists", "isfile", "isdir", "getsize", "abspath", "relpath"):
        setattr(path, name, named(name, getattr(fs, name)))
    path.lexists, path.realpath = named("lexists", fs.exists), named("realpath", fs.abspath)
    path.islink, path.ismount = named("islink", never), named("ismount", never)
    system = types.ModuleType("os")
    environ = files.Environ()
    system.__dict__.update({k: v for k, v in files.PATH_CONSTANTS.items()})
    system.path, system.environ, system.name, system.linesep = path, environ, "posix", "\n"
    system.getenv = named("getenv", lambda key, default=None: environ.get(key, default))
    system.fspath = named("fspath", os.fspath, builtin=True)
    for name in ("getcwd", "chdir", "listdir", "mkdir", "remove", "rmdir", "rename"):
        setattr(system, name, named(name, getattr(fs, name), builtin=True))
    system.makedirs, system.walk = named("makedirs", fs.makedirs), named("walk", fs.walk)
    system.unlink = named("unlink", fs.remove, builtin=True)
    system.replace = named("replace", fs.rename, builtin=True)
    modules = {"os": system, "os.path": path}
    for name, module in modules.items():  # only what autodiff's module has
        module.__spec__ = importlib.machinery.ModuleSpec(module.__name__, None, origin="frozen")
        allowed = set(surface["module_names"].get(name, ()))
        for member in [m for m in vars(module) if not m.startswith("__") and m not in allowed]:
            delattr(module, member)
    if torch is not None:
        real_save, real_load = torch.save, torch.load

        def save(obj, f, *args, **kwargs):
            if isinstance(f, (str, bytes)):
                where = os.fsdecode(f)
                folder = where.rpartition("/")[0]
                if folder and not fs.isdir(folder):
                    raise RuntimeError(f"Parent directory {folder} does not exist.")
                buffer = io.BytesIO()
                real_save(obj, buffer, *args, **kwargs)
                fs.write_bytes(where, buffer.getvalue())
                return None
            return real_save(obj, f, *args, **kwargs)

        def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
                 **kwargs):
            if isinstance(f, (str, bytes)):
                f = io.BytesIO(fs.read_bytes(os.fsdecode(f)))
            # torch's restricted unpickler whatever the program asks: what the language can
            # save loads the same way, and no file's bytes make a host object
            return real_load(f, map_location, weights_only=True, **kwargs)

        save.__name__, load.__name__ = "save", "load"
        torch.save, torch.load = save, load  # (in this program's own process only)
    def open(*args, **kwargs):  # noqa: A001 - the program's builtin
        return fs.open(*args, **kwargs)
    return BuiltinFunction(open), modules


def program_import(real_import, shown, modules):
    """The program's `__import__`: its own import statements of `os` get the run's
    stand-ins; every other import (torch's C code imports through the same builtins) is
    Python's."""
    def tg_import(name, globals=None, locals=None, fromlist=(), level=0):
        if name in modules and not level:
            frame = sys._getframe(1)
            if frame.f_code.co_filename == shown and \
                    frame.f_code.co_code[frame.f_lasti] == IMPORT_NAME:
                return modules[name] if fromlist else modules[name.partition(".")[0]]
        return real_import(name, globals, locals, fromlist, level)
    return tg_import


# --- running the jobs ----------------------------------------------------------------------

def error_line(exc):
    """Python's own last traceback line for the exception: `ErrorClass: message`."""
    cls = type(exc)
    name = cls.__qualname__
    if cls.__module__ not in ("builtins", "__main__"):
        name = cls.__module__ + "." + name
    lines = "".join(traceback.format_exception_only(cls, exc)).splitlines()
    return next((line for line in lines if line == name or line.startswith(name + ": ")),
                lines[-1] if lines else name)


def out_of_memory(exc):
    return isinstance(exc, MemoryError) or (
        isinstance(exc, RuntimeError) and "can't allocate memory" in str(exc))


def language_modules(surface):
    """The real module for each module path of the language: id -> its allowed names."""
    import importlib

    found = {}
    for path, names in surface["module_names"].items():
        if path in VIRTUAL_MODULES:  # the run's own (virtual_files), never the host's
            continue
        try:
            module = importlib.import_module(path)
        except ImportError:  # a Python or torch without it: no program reaches it then
            continue
        found[id(module)] = frozenset(names)
    return found


def real_class(path):
    """The class at a dotted path (`torch.nn.modules.linear.Linear`), or None."""
    import importlib

    module, _, name = path.rpartition(".")
    while module:
        try:
            found = importlib.import_module(module)
            break
        except ImportError:
            module, _, outer = module.rpartition(".")
            name = f"{outer}.{name}"
    else:
        return None
    for part in name.split("."):
        found = getattr(found, part, None)
    if found is not None and not isinstance(found, type) and \
            type(found).__qualname__ == name.rpartition(".")[2]:
        return type(found)  # `sys.version_info`: the one instance of its class, named as it
    return found if isinstance(found, type) else None


def language_classes(surface):
    """The real class for each engine class that stands for one: class -> its names
    (`module.*` stands for every class of the module)."""
    import importlib

    found = {}
    for path, names in surface["type_names"].items():
        if path.endswith(".*"):
            try:
                module = importlib.import_module(path[:-2])
            except ImportError:
                continue
            classes = [c for c in vars(module).values() if isinstance(c, type)]
        else:
            classes = [real_class(path)]
        for cls in classes:
            if cls is not None:
                found[cls] = frozenset(names) | found.get(cls, frozenset())
    return found


def readable_roots():
    """Where the child may read files: the Python installation and its packages."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    roots |= {p for p in sys.path if p and os.path.isdir(p)} | {os.getcwd()}
    return sorted({os.path.realpath(r) for r in roots})


def last_line(tb, shown):
    """The innermost line of the program a traceback passed through (0: none)."""
    line = 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == shown:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def deep(work):
    """Run the rewriting of a program's tree with room for its nesting (the parser's limits
    bound it), then give the program Python's own recursion limit back."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        return work()
    finally:
        sys.setrecursionlimit(limit)


class Child:
    def __init__(self, results, surface, files):
        self.results, self.surface, self.files = results, surface, files
        self.shown, self.located = "<program>", Located("")
        self.bases = set()  # the real classes a program's class may derive from
        self.real_out, self.real_err = sys.stdout, sys.stderr

    def write(self, row):
        self.results.write(json.dumps(row) + "\n")
        self.results.flush()

    def stop(self, diagnostic):
        """End the child now: no program code runs after this, no `except` sees it."""
        sys.stdout, sys.stderr = self.real_out, self.real_err
        self.write({"refused": dict(diagnostic, stopped=True)})
        os._exit(REFUSED_EXIT)

    def stop_here(self, message):
        """Stop at the program's line that is running (the audit hook's stop)."""
        frame, line = sys._getframe(1), 0
        while frame is not None and not line:
            if frame.f_code.co_filename == self.shown:
                line = frame.f_lineno
            frame = frame.f_back
        self.stop(self.located.line(line, message))

    def run(self, job, modules, classes, torch):
        source, shown = job["source"], job["shown"]
        self.shown, guard = shown, None
        located = self.located = Located(source)
        try:
            tree = ast.parse(source, shown)
        except (SyntaxError, ValueError):
            tree = None  # compiling fails the same way below: nothing runs
        if tree is not None:
            refused, program = refusal(tree, located, self.surface, job.get("misspellings"))
            if refused is not None:
                self.write({"refused": refused})
                return
            guarded = Guarded()
            tree = deep(lambda: ast.fix_missing_locations(guarded.visit(tree)))
            guard = Guard(self.surface, modules, classes, program.chosen_names, guarded.sites,
                          located, self.stop)
            if torch is not None:
                guard.contexts = (torch.autograd.function.FunctionCtx,)
                guard.torch_module, guard.node = torch.nn.Module, torch.autograd.graph.Node
            guard.misspellings = bool(job.get("misspellings"))
            guard.stop_here = self.stop_here
        self.open, virtual = virtual_files(self.files, self.surface, torch)
        self.imports = program_import(builtins.__import__, shown, virtual)
        if guard is not None:  # the stand-ins answer what autodiff's modules have
            guard.modules = {**modules, **{id(m): frozenset(self.surface["module_names"][p])
                                           for p, m in virtual.items()}}
        linecache.cache[shown] = (len(source), None, source.splitlines(True), shown)
        out, err = io.StringIO(), io.StringIO()
        code, error, limit = 0, None, None
        if torch is not None:
            torch.set_grad_enabled(True)
        sys.stdout, sys.stderr = out, err
        argv, sys.argv = sys.argv, [shown]  # a program's `sys.argv` names the program alone
        try:
            with warnings.catch_warnings():
                warnings.resetwarnings()  # a fresh process's filters, each program anew
                compiled = deep(lambda: compile(tree if tree is not None else source, shown,
                                                "exec"))
                namespace = self.namespace(guard)
                if job["prepend"]:
                    exec("import torch", namespace)
                exec(compiled, namespace)
        except SystemExit as exc:
            if not (exc.code is None or exc.code == 0):
                code = exc.code if isinstance(exc.code, int) else 1
        except BaseException as exc:
            code, error = 1, error_line(exc)
            if out_of_memory(exc):
                limit = "memory"
            tb = exc.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename != shown:
                tb = tb.tb_next
            if isinstance(exc, OSError) and exc.errno == errno.EFBIG:  # RLIMIT_FSIZE held
                self.stop(located.line(last_line(tb, shown), "the program tried to write a "
                                       "file (the file size limit held); the reference run "
                                       "ended there"))
            traceback.print_exception(type(exc), exc, tb, file=err)
        finally:
            sys.stdout, sys.stderr = self.real_out, self.real_err
            sys.argv = argv
            linecache.cache.pop(shown, None)
        self.write({"stdout": out.getvalue(), "stderr": err.getvalue(), "exit_code": code,
                    "error": error, "limit": limit})

    def namespace(self, guard):
        """A fresh `__main__` whose builtins are the language's own, `__import__` and
        `__build_class__` (the import and class statements need them, and torch's C code
        imports through the builtins of the frame it runs in), `object` (which the checks
        admit only as a class's base) and the guard's four functions: no program can name
        a dunder, so these are the interpreter's alone."""
        names = {n: getattr(builtins, n) for n in self.surface["builtins"] + ["__import__", "object"]}
        real_build_class, real_type = builtins.__build_class__, builtins.type

        def build_class(body, name, *bases, **keywords):
            if len(bases) > 1 or keywords or any(
                    base not in guard.classes and base not in self.bases for base in bases):
                self.stop_here(f"class {name}: its base is not one the .tg language has "
                               "(nn.Module, autograd.Function, Dataset, object, or a class "
                               "of the program)")
            made = real_build_class(body, name, *bases)
            guard.classes.add(made)
            return made

        def type(obj):  # the program's `type`, in its one-argument form
            kind = real_type(obj)
            if issubclass(kind, real_type):  # a metaclass makes classes: no program holds one
                self.stop_here("the type of a class is not part of the .tg language")
            return kind

        names["__build_class__"], names["type"] = build_class, type
        names["open"], names["__import__"] = self.open, self.imports  # (the run's files)
        names.update(self.attribute_builtins(guard))
        names.update(zip(PROGRAM_NAMES, (guard.get, guard.set, guard.update, guard.delete)))
        return {"__name__": "__main__", "__builtins__": names}


    def attribute_builtins(self, guard):
        """getattr, hasattr, setattr as the guard reads and writes `obj.name`: a name given
        as a string meets the checks the text's own attributes meet, and what starts with
        '_' stops the program as it would in the text (hasattr and getattr's default
        answer False and the default there, as autodiff answers)."""
        real_setattr, real_type_of, surface = builtins.setattr, builtins.type, self.surface

        def named(builtin, args, least, most, kwargs):
            if kwargs:
                raise TypeError(f"{builtin}() takes no keyword arguments")
            if not least <= len(args) <= most:
                bound = ("at least " if len(args) < least else "at most ") if least < most else ""
                raise TypeError(f"{builtin} expected {bound}{least if len(args) < least else most} "
                                f"arguments, got {len(args)}")
            name = args[1]
            if real_type_of(name) is not str:
                raise TypeError(f"attribute name must be string, not '{real_type_of(name).__name__}'")
            return name

        def getattr(*args, **kwargs):  # noqa: A001 - the program's builtin
            name = named("getattr", args, 2, 3, kwargs)
            if private(name, surface) and not guard.saved(args[0], name):
                if len(args) == 3:
                    return args[2]
                self.stop_here(f"'{name}' starts with '_': no .tg name does")
            try:
                return guard.get(args[0], name, None)
            except AttributeError:
                if len(args) == 2:
                    raise
                return args[2]

        def hasattr(*args, **kwargs):  # noqa: A001
            name = named("hasattr", args, 2, 2, kwargs)
            if private(name, surface) and not guard.saved(args[0], name):
                return False
            try:
                guard.get(args[0], name, None)
            except AttributeError:
                return False
            return True

        def setattr(*args, **kwargs):  # noqa: A001
            name = named("setattr", args, 3, 3, kwargs)
            if name.startswith("_"):
                self.stop_here(f"setting attribute '{name}' of this object is not part of .tg "
                               "programs")
            real_setattr(guard.set(args[0], name, None), name, args[2])

        return {f.__name__: BuiltinFunction(f) for f in (getattr, hasattr, setattr)}


class BuiltinFunction:
    """A builtin of the child's own, printing as CPython's builtin does."""

    __slots__ = ("function", "__name__")
    __module__ = "builtins"

    def __init__(self, function):
        self.function, self.__name__ = function, function.__name__

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)

    def __repr__(self):
        return f"<built-in function {self.__name__}>"


BuiltinFunction.__name__ = BuiltinFunction.__qualname__ = "builtin_function_or_method"


def run_apart(child, job, limits, run):
    """Run one job in a process forked for it, behind the walls: its result row, or what
    ended the process. This process imported torch once and never arms the walls itself,
    so each program starts from the same fresh state (torch's generator, its warnings, the
    default dtype) and a stop or a crash ends that program alone."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the program's process: it never returns from here
        try:
            os.close(read_end)
            child.results = os.fdopen(write_end, "w", encoding="utf-8")
            set_limits(limits)
            arm(child.stop_here, readable_roots(), frozenset(limits.get("importable", ())))
            run()
            child.results.flush()
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, encoding="utf-8", errors="replace") as pipe:
        text = pipe.read()
    _, status = os.waitpid(pid, 0)
    if text.endswith("\n"):
        return json.loads(text)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL):
        return {"limit": "cpu", "error": f"the program ran longer than "
                f"{limits.get('cpu_seconds')} s of CPU time"}
    how = (f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
           else f"exit status {os.WEXITSTATUS(status)}")
    return {"crashed": f"the process that ran {job['shown']} ended by {how}"}


def main(argv):
    jobs_path, surface_path, result_fd = argv[1], argv[2], int(argv[3])
    limits = json.loads(argv[4])
    with open(jobs_path, encoding="utf-8") as f:
        jobs = json.load(f)
    with open(surface_path, encoding="utf-8") as f:
        surface = json.load(f)
    results = os.fdopen(result_fd, "w", encoding="utf-8")
    try:
        import torch
    except ImportError:
        torch = None
    modules = language_modules(surface)
    for warm in limits.get("preload", ()):  # what torch loads on first use, loaded now
        try:
            __import__(warm)
        except ImportError:
            pass
    import tempfile

    tempfile.gettempdir()  # torch asks for it on first use; finding it writes a probe file
    classes = language_classes(surface)
    files = load_files_module(limits["files_module"])
    bases = {cls for cls in map(real_class, surface["bases"]) if cls is not None}
    for job in jobs:
        child = Child(None, surface, files)
        child.bases = bases
        row = run_apart(child, job, limits, lambda: child.run(job, modules, classes, torch))
        results.write(json.dumps(row) + "\n")
        results.flush()
    results.close()


if __name__ == "__main__":
    main(sys.argv)
