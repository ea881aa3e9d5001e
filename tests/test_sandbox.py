"""Escapes out of the .tg sandbox are refused with clear errors, never a traceback."""

import io

import pytest

from autodiff.interpreter import MathNamespace, run_source

MODULES = {"torch": None, "math": MathNamespace()}


class Thing:
    _tg_public = frozenset({"value"})

    def __init__(self):
        self.value = 1


def refused(src, extra=None):
    modules = dict(MODULES)
    out = io.StringIO()
    result = run_source(src, "prog.tg", out=out, modules=modules)
    assert result.error is not None, f"not refused: {src!r}"
    text = result.error.render(src)
    assert "Traceback" not in text and 'File "' not in text
    return result.error


@pytest.mark.parametrize("src, cls, message", [
    ("x = [1]\nx.__class__.__base__\n", "AttributeError", "type object 'list' has no attribute '__base__'"),
    ("def f():\n    pass\nf.__globals__\n", "AttributeError", "'function' object has no attribute '__globals__'"),
    ("getattr(1, 'real')\n", "AttributeError", "'int' object attribute 'real' is not supported"),
    ("setattr(1, 'a', 2)\n", "AttributeError", "'int' object has no attribute 'a'"),
    ("open('x')\n", "FileNotFoundError", "No such file or directory: 'x'"),
    ("__import__('os')\n", "NameError", "name '__import__' is not defined"),
    ("eval('1')\n", "NotImplementedError", "eval() is not supported by autodiff"),
    ("exec('1')\n", "NotImplementedError", "exec() is not supported by autodiff"),
    ("type(1).__mro__\n", "AttributeError", "type object 'int' has no attribute '__mro__'"),
    ("globals()\n", "NotImplementedError", "globals() is not supported by autodiff"),
    ("vars()\n", "NotImplementedError", "vars() is not supported by autodiff"),
    ("x = 1\n'{0.__class__}'.format(x)\n", "ValueError", "attribute and index lookups"),
    ("x = [1]\n'{0[0]}'.format(x)\n", "ValueError", "attribute and index lookups"),
    ("x = 1\nf'{x.__class__.__mro__}'\n", "AttributeError", "type object 'int' has no attribute '__mro__'"),
    ('x = "ab"\nx.encode()\n', "AttributeError", "is not supported by autodiff"),
    ("import math\nmath.__dict__\n", "AttributeError", "attribute '__dict__' is not supported"),
    ("x = 'a'\nx.upper = 1\n", "AttributeError", "is not supported by autodiff"),
    ("(1).__class__.__subclasses__\n", "AttributeError", "type object 'int' has no attribute '__subclasses__'"),
])
def test_refused(src, cls, message):
    e = refused(src)
    assert e.error_class == cls and message in e.message


def test_import_subprocess_is_refused_before_running():
    out = io.StringIO()
    result = run_source("print(1)\nimport subprocess\n", "prog.tg", out=out, modules=MODULES)
    assert result.error.exit_code == 2 and "import of 'subprocess' is not supported" in result.error.message
    assert out.getvalue() == ""


def test_allowed_attributes_still_work():
    out = io.StringIO()
    result = run_source("print(thing.value)\n", out=out, modules=MODULES)
    assert result.error.error_class == "NameError"  # `thing` is not injectable: no host objects leak in
    assert Thing().value == 1
    # and the allow-list does let public names through: math's and a list's
    out = io.StringIO()
    ok = run_source("import math\nx = [1]\nx.append(2)\nprint(math.sqrt(4.0), x)\n",
                    out=out, modules=MODULES)
    assert ok.error is None and out.getvalue() == "2.0 [1, 2]\n"


# A program's own class may use names with one '_' as Python allows; CPython runs the same
# text (no torch in it) for the expected output
OWN_PRIVATE_NAMES = '''class Counter:
    _step = 1

    def __init__(self):
        self._count = 0
        self._seen = []

    def _bump(self, value):
        self._count += self._step
        self._seen.append(value)

    def add(self, value):
        self._bump(value)
        return self._count

class Twice(Counter):
    _step = 2

c = Counter()
t = Twice()
print(c.add(1), c.add(5), c._seen, c._count, t.add(3), t._count, Twice._step)
c._count = 10
print(c.add(0), __name__)
if __name__ == "__main__":
    print("main")
'''


def test_a_programs_own_single_underscore_names_run_as_in_python():
    out = io.StringIO()
    result = run_source(OWN_PRIVATE_NAMES, "prog.tg", out=out, modules=dict(MODULES))
    assert result.error is None, result.error
    python_out = io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(python_out):
        exec(compile(OWN_PRIVATE_NAMES, "prog.py", "exec"), {"__name__": "__main__"})
    assert out.getvalue() == python_out.getvalue() and "main" in out.getvalue()


@pytest.mark.parametrize("src, message", [
    ("class A:\n    pass\nA()._tg_public\n", "has no attribute '_tg_public'"),
    ("class A:\n    pass\nA().__dict__\n", "attribute '__dict__' is not supported by autodiff"),
    ("class A:\n    pass\na = A()\na.__class__ = int\n", "setting '__class__' is not supported by autodiff"),
    ("import torch.nn as nn\nclass N(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self._modules = {}\nN()\n", "setting '_modules' is not supported by autodiff"),
    ("import torch.nn as nn\nclass N(nn.Module):\n    pass\nN()._registered\n",
     "has no attribute '_registered'"),
    ("import torch.nn as nn\nclass N(nn.Module):\n    _forget = 1\n", "is not supported by autodiff"),
    ("x = [1]\nx._y = 1\n", "'list' object has no attribute '_y'"),
    ("import torch\nt = torch.ones(1)\nt._x = 1\n", "_x"),
])
def test_single_underscore_names_stay_off_the_engines_objects(src, message):
    result = run_source(src, "prog.tg", out=io.StringIO())  # with the engine's own torch
    assert result.error is not None and message in result.error.message
    assert "Traceback" not in result.error.render(src)
